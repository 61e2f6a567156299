"""Syntax errors that name the likely mistake, not the grammar's tokens.

The LALR parser knows only which tokens it expected where it stopped. Where that
points at a common mistake, the message says so (issue 52):

* a ``{`` never closed: the ``{`` that opened it, by line and column (when the braces
  of the text do not balance; indentation tells which block lost its ``}``);
* a ``}`` with no ``{`` open;
* a ``.`` missing between two triple patterns;
* a parameter ``${name}`` where no term, duration or count may stand, or inside an IRI;
* a keyword of a feature the engine does not evaluate (SERVICE, SPARQL Update);
* a construct of another RSP query language (C-SPARQL's ``REGISTER`` and ``FROM
  STREAM``, RSP-QL's named windows, ISO 8601 durations and R2S keywords): the dialect
  named and the CQELS-QL way to write it.

Otherwise the message lists what was expected (at most 12 names). Every error carries
the offending line and a caret under the column (:func:`excerpt`), which the command
line prints below the message.

>>> print(excerpt("SELECT ?a\\nWHERE { ?a ?b ?c", 2, 7))
    WHERE { ?a ?b ?c
          ^
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from lark import Token
from lark.exceptions import UnexpectedEOF, UnexpectedInput, UnexpectedToken

from taxi_rsp.errors import QuerySyntaxError

# Friendlier names for terminals in "expected ..." messages.
TERMINAL_NAMES = {
    "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "DOT": "'.'", "SEMICOLON": "';'", "COMMA": "','", "VAR": "a variable", "IRIREF": "an IRI",
    "PNAME_LN": "a prefixed name", "PNAME_NS": "a prefix", "STRING": "a string",
    "INTEGER": "an integer", "DECIMAL": "a decimal", "DOUBLE": "a double", "DURATION": "a duration (e.g. 30m)",
    "PARAM": "a parameter ${name}", "$END": "end of query", "STAR": "'*'", "A": "'a'",
}

# SPARQL 1.1 keywords of features this engine does not evaluate: a syntax error at one of
# them says so instead of listing the tokens that were expected.
UNSUPPORTED_KEYWORDS = {
    "SERVICE": "SERVICE (federated query) is not supported",
    **{word: f"SPARQL Update ({word}) is not supported"
       for word in ("LOAD", "CLEAR", "DROP", "CREATE", "INSERT", "DELETE", "WITH", "ADD", "MOVE", "COPY")},
}

# Constructs of the other RSP query languages (C-SPARQL, RSP-QL, YASPER, SPARQLStream): a
# syntax error at one of them names the dialect and says how CQELS-QL writes it.
_CQELS_WINDOW = "write the window in the WHERE clause: STREAM <stream-iri> [RANGE 10s SLIDE 1s] { … }"
DIALECT_HINTS: dict[str, str] = {
    "REGISTER": ("REGISTER (C-SPARQL, RSP-QL, YASPER) is not CQELS-QL: give the SELECT or CONSTRUCT "
                 "itself; each query file is registered under its name"),
    "FROM STREAM": f"FROM STREAM (C-SPARQL, SPARQLStream) is not CQELS-QL: {_CQELS_WINDOW}",
    "WINDOW": f"named windows (RSP-QL's FROM NAMED WINDOW … ON and WINDOW <w> {{ … }}) are not CQELS-QL: {_CQELS_WINDOW}",
    "STEP": "STEP (C-SPARQL) is written SLIDE in CQELS-QL: [RANGE 10s SLIDE 1s]",
    **{word: (f"{word} (stream output of RSP-QL, C-SPARQL or YASPER) is not CQELS-QL: taxi-rsp chooses it by the "
              "query's form (docs/semantics.md, \"Report policy\")")
       for word in ("EMIT", "ISTREAM", "RSTREAM", "DSTREAM")},
}
_ISO_DURATION = re.compile(r"P(?:\d+D)?T?\d+(?:\.\d+)?[HMS]", re.IGNORECASE)


def _dialect_hint(text: str, position: int, word: str | None) -> str | None:
    """The hint for another RSP language's construct at ``position`` (``word``: the
    keyword there, upper case), or None.

    >>> _dialect_hint("SELECT * FROM STREAM <s>", 14, "STREAM").split(":")[0]
    'FROM STREAM (C-SPARQL, SPARQLStream) is not CQELS-QL'
    >>> _dialect_hint("[RANGE PT10S]", 7, "PT").split(":")[0]
    'PT10S is an ISO 8601 duration (RSP-QL)'
    """
    if word == "STREAM" and re.search(r"\bFROM\s+(NAMED\s+)?$", text[:position], re.IGNORECASE):
        return DIALECT_HINTS["FROM STREAM"]
    if word in DIALECT_HINTS:
        return DIALECT_HINTS[word]
    iso = _ISO_DURATION.match(text[position:])
    if iso is not None:
        return (f"{iso.group(0)} is an ISO 8601 duration (RSP-QL): CQELS-QL writes durations as a number "
                "and a unit, e.g. 10s, 5m, 1h 30m")
    return None


# Tokens that can start a triple pattern (a subject): after a complete triple, one of them
# means a '.' is missing.
_SUBJECT_STARTS = {"VAR", "IRIREF", "PNAME_LN", "PNAME_NS", "BLANK_NODE_LABEL", "ANON", "PARAM", "LSQB"}

_PARAM_PLACES = ("a parameter stands where a term (an IRI, a literal, a number), a STREAM or GRAPH IRI, a "
                 "window duration, a TRIPLES count or a LIMIT/OFFSET may")

Lex = Callable[[str], Iterable[Token]]


def excerpt(text: str, line: int, column: int) -> str:
    """The ``line``-th line of ``text`` and a caret under ``column`` (1-based), indented
    by four spaces; tabs before the column are kept so the caret lines up.

    >>> excerpt("ab\\tcd", 1, 4).splitlines()[1]
    '      \\t^'
    """
    lines = text.splitlines() or [""]
    source = lines[min(max(line, 1), len(lines)) - 1]
    pad = "".join(ch if ch == "\t" else " " for ch in source[:max(column - 1, 0)])
    return f"    {source}\n    {pad}^"


def syntax_error(exc: UnexpectedInput, text: str, source: str, lex: Lex) -> QuerySyntaxError:
    """The :class:`QuerySyntaxError` for a lark error at ``exc`` in ``text``; ``lex``
    tokenises the text (braces, strings and IRIs told apart) for the hints."""
    line, column = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    at_end = isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END")
    if at_end:
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        position = len(text)
    elif isinstance(exc, UnexpectedToken):
        position = exc.token.start_pos if exc.token.start_pos is not None else len(text)
    else:
        position = exc.pos_in_stream
    expected = set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    tokens = _tokens_before(text, position, lex)
    found = "end of query" if at_end else _shown(exc, text, position)
    hint = _hint(exc, text, position, tokens, expected, found, lex)
    if hint is None:
        names = sorted({TERMINAL_NAMES.get(t, _literal_name(t)) for t in expected})
        hint = f"unexpected {found}" + (f", expected {_join(names)}" if names else "")
    return QuerySyntaxError(hint, line, column, source)


def _shown(exc: UnexpectedInput, text: str, position: int) -> str:
    if isinstance(exc, UnexpectedToken):
        return repr(str(exc.token.value))
    return f"character {text[position]!r}" if position < len(text) else "end of query"


def _hint(exc: UnexpectedInput, text: str, position: int, tokens: Sequence[Token], expected: set[str],
          found: str, lex: Lex) -> str | None:
    word = re.match(r"[A-Za-z]+", text[position:])
    keyword = word.group(0).upper() if word is not None else None
    if keyword in UNSUPPORTED_KEYWORDS:
        return UNSUPPORTED_KEYWORDS[keyword]
    dialect = _dialect_hint(text, position, keyword)
    if dialect is not None:
        return dialect
    param = re.match(r"\$\{[^}\s]*\}?", text[position:])
    if param is not None:
        return f"a parameter cannot stand here ({param.group(0)}): {_PARAM_PLACES}"
    inside_iri = re.match(r"<[^<>\s]*\$\{", text[position:])
    if inside_iri is not None:
        return ("a parameter cannot stand inside an IRI <…>: bind the whole IRI instead, e.g. ${sensor} with "
                "--param sensor=<http://…>")
    unclosed = _unclosed_brace(text, lex)
    if unclosed is not None and ("RBRACE" in expected or isinstance(exc, UnexpectedEOF) or found == "end of query"):
        where = f"{unclosed.line}:{unclosed.column}"
        return f"unexpected {found}: the '{{' at {where} is never closed (a '}}' is missing)"
    if isinstance(exc, UnexpectedToken) and exc.token.type == "RBRACE" and _depth(tokens) <= 0:
        return "unexpected '}': no '{' is open here (one '}' too many?)"
    if (isinstance(exc, UnexpectedToken) and exc.token.type in _SUBJECT_STARTS and "DOT" in expected
            and tokens):
        last = tokens[-1]
        end = f"{last.end_line}:{last.end_column}"
        return (f"unexpected {found}: a '.' is missing between two triple patterns (after {str(last.value)!r}, "
                f"which ends at {end})")
    return None


def _tokens_before(text: str, position: int, lex: Lex) -> list[Token]:
    """The tokens of ``text`` that end at or before ``position`` (none if the text does
    not lex: the hints that need them are then not given)."""
    found: list[Token] = []
    try:
        for token in lex(text):
            if token.end_pos is None or token.end_pos > position:
                break
            found.append(token)
    except UnexpectedInput:
        pass
    return found


def _depth(tokens: Iterable[Token]) -> int:
    depth = 0
    for token in tokens:
        depth += {"LBRACE": 1, "RBRACE": -1}.get(token.type, 0)
    return depth


def _unclosed_brace(text: str, lex: Lex) -> Token | None:
    """The ``{`` most likely left unclosed, when the text has more ``{`` than ``}``.

    Braces are matched as written; a ``}`` alone on its line that is indented less than
    the line of the ``{`` it closes, while an outer ``{`` opened on a line indented as it
    is, most likely closes that outer one: the inner ``{`` lost its ``}``. Without such a
    sign, the innermost ``{`` left open at the end is named.
    """
    try:
        tokens = list(lex(text))
    except UnexpectedInput:
        return None
    lines = text.splitlines()

    def indent(line: int) -> int:
        source = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(source) - len(source.lstrip())

    stack: list[Token] = []
    suspect: Token | None = None
    for token in tokens:
        if token.type == "LBRACE":
            stack.append(token)
        elif token.type == "RBRACE" and stack:
            opened = stack.pop()
            alone = lines[token.line - 1][:token.column - 1].strip() == "" if token.line <= len(lines) else False
            if (suspect is None and alone and indent(opened.line) > indent(token.line)
                    and any(indent(outer.line) == indent(token.line) for outer in stack)):
                suspect = opened
    if not stack:
        return None
    return suspect if suspect is not None else stack[-1]


def _literal_name(terminal: str) -> str:
    # Anonymous keyword terminals are named like SELECT, WHERE, __ANON_3 ...
    return terminal if not terminal.startswith("__") else "a token"


def _join(names: list[str], limit: int = 12) -> str:
    shown = names[:limit]
    more = f" (or {len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(shown) + more


__all__ = ["DIALECT_HINTS", "TERMINAL_NAMES", "UNSUPPORTED_KEYWORDS", "excerpt", "syntax_error"]
