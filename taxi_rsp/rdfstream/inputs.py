"""Which file feeds which stream: the ``--stream`` values of ``taxi-rsp run``.

Each value is ``FILE``, ``IRI=FILE`` or ``<IRI>=FILE`` (the brackets let an IRI or a
file name hold ``=``; without them the value is split at its last ``=``, and the part
before it must be an absolute IRI). A bare ``FILE`` feeds the ``--stream-iri`` stream,
else the one stream the queries read that no other ``--stream`` names.

>>> parse_stream_arg("http://ex.org/s/weather=weather.tnt")
StreamSpec(path=PosixPath('weather.tnt'), iri='http://ex.org/s/weather')
>>> parse_stream_arg("<http://ex.org/q?a=b>=in.nq"), parse_stream_arg("events.nq")
(StreamSpec(path=PosixPath('in.nq'), iri='http://ex.org/q?a=b'), StreamSpec(path=PosixPath('events.nq'), iri=None))
>>> [(s.iri, s.path.name) for s in assign_iris([StreamSpec(Path("a.tnt"), "http://s/a"), StreamSpec(Path("b.tnt"))],
...                                            None, ["http://s/a", "http://s/b"])]
[('http://s/a', 'a.tnt'), ('http://s/b', 'b.tnt')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from taxi_rsp.errors import UserError

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class StreamSpec:
    """One ``--stream`` value: the file, and the stream IRI it feeds (None: not named)."""

    path: Path
    iri: str | None = None


def parse_stream_arg(text: str) -> StreamSpec:
    """``FILE``, ``IRI=FILE`` or ``<IRI>=FILE``; a value whose part before its last ``=``
    is not an absolute IRI is a file name.

    >>> parse_stream_arg("<urn:x>=")
    Traceback (most recent call last):
    ...
    taxi_rsp.errors.UserError: --stream '<urn:x>=': no file after the '=' (use IRI=FILE)
    """
    if text.startswith("<"):
        iri, close, rest = text[1:].partition(">")
        if not close or not rest.startswith("="):
            raise UserError(f"--stream {text!r}: write <IRI>=FILE")
        return _spec(text, iri, rest[1:])
    head, sep, tail = text.rpartition("=")
    if sep and _SCHEME.match(head) and not re.fullmatch(r"[A-Za-z]:[\\/].*", head):  # not a C:\ path
        return _spec(text, head, tail)
    return StreamSpec(Path(text))


def _spec(text: str, iri: str, file: str) -> StreamSpec:
    if not file:
        raise UserError(f"--stream {text!r}: no file after the '=' (use IRI=FILE)")
    if not _SCHEME.match(iri):
        raise UserError(f"--stream {text!r}: {iri!r} is not an absolute IRI (it needs a scheme such as http:)")
    return StreamSpec(Path(file), iri)


def assign_iris(specs: Sequence[StreamSpec], stream_iri: str | None, read: Sequence[str]) -> list[StreamSpec]:
    """Every spec with its stream IRI: named ones as given; a bare file gets
    ``stream_iri`` (``--stream-iri``), else the one stream of ``read`` (the queries'
    streams) no other spec names. Raises :class:`UserError` naming the file otherwise,
    and for a file given twice.

    >>> assign_iris([StreamSpec(Path("a.tnt"))], None, ["http://s/a", "http://s/b"])
    Traceback (most recent call last):
    ...
    taxi_rsp.errors.UserError: a.tnt: the queries read <http://s/a>, <http://s/b>: name the stream of each file with --stream IRI=FILE
    """
    seen: set[Path] = set()
    for spec in specs:
        key = spec.path.resolve()
        if key in seen:
            raise UserError(f"{spec.path}: the same stream file is given twice")
        seen.add(key)
    bare = [spec for spec in specs if spec.iri is None]
    if stream_iri is not None:
        if len(bare) != 1:
            raise UserError("--stream-iri names the stream of one --stream FILE given without an IRI; with several "
                            "files, write each as --stream IRI=FILE")
        return [replace(spec, iri=stream_iri) if spec.iri is None else spec for spec in specs]
    if not bare:
        return list(specs)
    named = {spec.iri for spec in specs if spec.iri is not None}
    left = [iri for iri in read if iri not in named]
    if len(bare) > 1 or len(left) != 1:
        listed = ", ".join(f"<{iri}>" for iri in read) or "no stream"
        raise UserError(f"{bare[0].path}: the queries read {listed}: name the stream of each file with "
                        "--stream IRI=FILE")
    return [replace(spec, iri=left[0]) if spec.iri is None else spec for spec in specs]
