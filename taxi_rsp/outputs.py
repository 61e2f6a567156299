"""Small helpers for the files commands write."""

from __future__ import annotations

from pathlib import Path

from taxi_rsp.errors import UserError


def make_parent(target: Path) -> None:
    """Create the folder ``target`` goes into (as ``run --out`` does), or say in one line why not."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot write {target}: cannot create folder {target.parent}: {exc.strerror or exc}") from None
    if not target.parent.is_dir():
        raise UserError(f"cannot write {target}: {target.parent} is not a folder")
