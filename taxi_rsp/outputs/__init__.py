"""The files a run writes, in one place that knows nothing of the engine, the Feeder or
the listeners, so the engine's runs, the Spark baseline, `verify`, the report and the
grader share them:

* :mod:`.atomic` - the output folder written under temporary names and renamed on
  success (``summary.json`` last), with :mod:`.stale` for an earlier run's files;
* :mod:`.delays` - SPEC §5 delay statistics, one percentile rule;
* :mod:`.lines` - comparing output lines on every field but the delay;
* :mod:`.summary` - the data warnings every ``summary.json`` carries;
* :func:`make_parent` - the folder an output file goes into.
"""

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
