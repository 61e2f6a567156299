"""The submission manifest, ``submission.toml``, and its command placeholders.

A submission is a directory (or a tarball of one) holding ``submission.toml``::

    name = "taxi-rsp engine"
    command = "taxi-rsp run {input} --out {output} --query q1 --query q2"
    queries = ["q1", "q2"]

``command`` is split like a POSIX shell would split it (:func:`shlex.split`) but is
never run through a shell; placeholders are substituted inside each word, so a path
with spaces stays one argument. ``{{`` and ``}}`` stand for literal braces.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

MANIFEST_NAME = "submission.toml"
QUERIES: tuple[str, ...] = ("q1", "q2")
# {input}: the data file; {output}: the directory for q1.csv/q2.csv; {submission}:
# the submission's own directory (also the working directory).
PLACEHOLDERS: tuple[str, ...] = ("input", "output", "submission")
_REQUIRED_PLACEHOLDERS = ("input", "output")
_KNOWN_KEYS = {"name", "command", "queries", "description"}
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class ManifestError(ValueError):
    """A ``submission.toml`` that cannot be used; the message says why."""


@dataclass(frozen=True)
class SubmissionManifest:
    """The parsed, validated content of ``submission.toml``."""

    name: str
    command: str
    queries: tuple[str, ...]
    description: str = ""

    def argv(self, values: Mapping[str, str]) -> list[str]:
        """The command as an argument vector with every placeholder filled in."""
        return [substitute(word, values) for word in shlex.split(self.command)]


def substitute(word: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` placeholders in one word; ``{{``/``}}`` are literal braces.

    >>> substitute("--out={output}/x{{1}}", {"output": "/o"})
    '--out=/o/x{1}'
    """

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        if text in ("{{", "}}"):
            return text[0]
        name = match.group(1)
        if name is None:
            raise ManifestError(f"unbalanced brace in {word!r} (write {{{{ or }}}} for a literal one)")
        if name not in values:
            raise ManifestError(f"unknown placeholder {{{name}}} in {word!r}")
        return values[name]

    return _TOKEN.sub(replace, word)


def placeholders_in(command: str) -> set[str]:
    """The placeholder names a command uses (validating its syntax on the way)."""
    found: set[str] = set()
    probe = {name: "" for name in PLACEHOLDERS}
    for word in shlex.split(command):
        substitute(word, probe)  # raises on unknown names and stray braces
        found.update(m.group(1) for m in _TOKEN.finditer(word) if m.group(1) is not None)
    return found


def parse_manifest(text: str, source: str = MANIFEST_NAME) -> SubmissionManifest:
    """Parse and validate the text of a ``submission.toml``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{source}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise ManifestError(f"{source}: unknown key(s) {', '.join(unknown)}")
    name = _string(data, "name", source)
    command = _string(data, "command", source)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ManifestError(f"{source}: 'description' must be a string")
    try:
        used = placeholders_in(command)
    except ValueError as exc:  # shlex's "No closing quotation" or a ManifestError
        raise ManifestError(f"{source}: command: {exc}") from None
    missing = [p for p in _REQUIRED_PLACEHOLDERS if p not in used]
    if missing:
        raise ManifestError(
            f"{source}: command must use {', '.join('{' + p + '}' for p in missing)}"
        )
    return SubmissionManifest(name, command, _queries(data, source), description)


def load_manifest(directory: Path) -> SubmissionManifest:
    """Read ``submission.toml`` from a submission directory."""
    path = directory / MANIFEST_NAME
    if not path.is_file():
        raise ManifestError(f"no {MANIFEST_NAME} in {directory}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"{path}: not UTF-8 text") from None
    return parse_manifest(text, str(path))


def _string(data: Mapping[str, object], key: str, source: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{source}: '{key}' must be a non-empty string")
    return value.strip()


def _queries(data: Mapping[str, object], source: str) -> tuple[str, ...]:
    value = data.get("queries")
    if not isinstance(value, list) or not value or not all(isinstance(q, str) for q in value):
        raise ManifestError(f"{source}: 'queries' must be a non-empty list of query names")
    bad = [q for q in value if q not in QUERIES]
    if bad:
        raise ManifestError(f"{source}: unknown query {bad[0]!r} (known: {', '.join(QUERIES)})")
    if len(set(value)) != len(value):
        raise ManifestError(f"{source}: 'queries' lists a query twice")
    return tuple(q for q in QUERIES if q in value)  # canonical order
