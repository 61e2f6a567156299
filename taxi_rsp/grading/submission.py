"""Staging a submission: a directory or a tarball, copied into the exchange disk.

The submission is untrusted: a tarball is unpacked with the ``data`` extraction
filter (no absolute paths, no ``..``, no links pointing outside, no device files),
and a directory is copied without following symlinks.
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

from taxi_rsp.grading.manifest import MANIFEST_NAME, ManifestError, SubmissionManifest, load_manifest


def stage_submission(source: Path, dest: Path) -> SubmissionManifest:
    """Copy or unpack ``source`` into ``dest`` (which must not exist) and load its manifest."""
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True)
    elif source.is_file() and tarfile.is_tarfile(source):
        _unpack(source, dest)
    elif source.exists():
        raise ManifestError(f"{source}: neither a directory nor a tarball")
    else:
        raise ManifestError(f"{source}: no such file or directory")
    return load_manifest(dest)


def _unpack(tarball: Path, dest: Path) -> None:
    dest.mkdir(parents=True)
    try:
        with tarfile.open(tarball) as archive:
            archive.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ManifestError(f"{tarball}: cannot unpack: {exc}") from None
    # A tarball of one top-level directory (the usual `tar czf x.tgz x/`): use that.
    entries = list(dest.iterdir())
    if not (dest / MANIFEST_NAME).exists() and len(entries) == 1 and entries[0].is_dir():
        inner = entries[0].rename(dest / ".unpacking")  # a child may share its name
        for child in list(inner.iterdir()):
            child.rename(dest / child.name)
        inner.rmdir()
