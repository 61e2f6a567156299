"""IRI reference resolution (RFC 3986 §5.2): a relative IRI against a base, for the
query language's ``BASE`` and the ``IRI()`` function alike.
"""

from __future__ import annotations

import re

_IRI_PARTS = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$")


def resolve_iri(base: str, reference: str) -> str:
    """RFC 3986 §5.2 reference resolution (keeps an empty fragment, unlike urljoin).

    >>> resolve_iri("http://a/b/c/d;p?q", "../g#"), resolve_iri("http://debs2015.org/", "taxi#")
    ('http://a/b/g#', 'http://debs2015.org/taxi#')
    """
    ref = _IRI_PARTS.match(reference)
    b = _IRI_PARTS.match(base)
    assert ref is not None and b is not None
    r_scheme, r_auth, r_path, r_query, r_frag = ref.groups()
    b_scheme, b_auth, b_path, b_query, _ = b.groups()
    if r_scheme is not None:
        scheme, auth, path, query = r_scheme, r_auth, _remove_dots(r_path), r_query
    elif r_auth is not None:
        scheme, auth, path, query = b_scheme, r_auth, _remove_dots(r_path), r_query
    elif r_path == "":
        scheme, auth, path, query = b_scheme, b_auth, b_path, (r_query if r_query is not None else b_query)
    else:
        if r_path.startswith("/"):
            path = _remove_dots(r_path)
        elif b_auth is not None and b_path == "":
            path = _remove_dots("/" + r_path)
        else:
            path = _remove_dots(b_path[: b_path.rfind("/") + 1] + r_path)
        scheme, auth, query = b_scheme, b_auth, r_query
    text = (f"{scheme}:" if scheme is not None else "") + (f"//{auth}" if auth is not None else "") + path
    text += f"?{query}" if query is not None else ""
    return text + (f"#{r_frag}" if r_frag is not None else "")


def _remove_dots(path: str) -> str:
    output: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1 or (output and output[0] != ""):
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/".join(output)
