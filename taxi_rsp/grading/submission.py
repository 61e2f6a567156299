"""Staging a submission: a directory or a tarball, copied into the exchange disk.

The submission is untrusted. Before anything is written, its size and entry count
are checked against :data:`MAX_BYTES` and :data:`MAX_ENTRIES` from the tarball's
headers or a walk of the directory (symlinks not followed), so a small archive that
unpacks to gigabytes is refused without unpacking it. A tarball member with an
absolute path or a ``..`` component is refused by name (Python's ``data`` filter
would silently make ``/tmp/x`` relative); the filter still guards the rest (links
pointing outside, device files). A directory is copied without following symlinks.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from taxi_rsp.grading.manifest import MANIFEST_NAME, ManifestError, SubmissionManifest, load_manifest

MAX_BYTES = 512 << 20  # unpacked content of one submission
MAX_ENTRIES = 20_000  # files, directories and links of one submission


def stage_submission(source: Path, dest: Path) -> SubmissionManifest:
    """Copy or unpack ``source`` into ``dest`` (which must not exist) and load its manifest."""
    if source.is_dir():
        _check_directory(source)
        shutil.copytree(source, dest, symlinks=True)
    elif source.is_file() and tarfile.is_tarfile(source):
        _unpack(source, dest)
    elif source.exists():
        raise ManifestError(f"{source}: neither a directory nor a tarball")
    else:
        raise ManifestError(f"{source}: no such file or directory")
    return load_manifest(dest)


class _Budget:
    """Running totals of a submission's content against the limits."""

    def __init__(self, source: Path) -> None:
        self.source, self.bytes, self.entries = source, 0, 0

    def add(self, size: int) -> None:
        self.entries += 1
        self.bytes += max(0, size)
        if self.entries > MAX_ENTRIES:
            raise ManifestError(f"{self.source}: more than {MAX_ENTRIES:,} files and directories "
                                "(the limit of a submission)")
        if self.bytes > MAX_BYTES:
            raise ManifestError(f"{self.source}: more than {MAX_BYTES >> 20} MiB unpacked "
                                "(the limit of a submission)")


def _check_directory(source: Path) -> None:
    budget = _Budget(source)
    for root, dirs, files in os.walk(source):  # does not descend into linked directories
        for name in dirs + files:
            budget.add(os.lstat(os.path.join(root, name)).st_size)


def _check_members(tarball: Path, archive: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """Every member, read from the headers only; refused at the first one over a limit."""
    budget = _Budget(tarball)
    members = []
    for member in archive:  # lazily: a bomb is refused before it is all decompressed
        path = PurePosixPath(member.name)
        if path.is_absolute() or member.name.startswith("\\"):
            raise ManifestError(f"{tarball}: member {member.name!r} has an absolute path")
        if ".." in path.parts:
            raise ManifestError(f"{tarball}: member {member.name!r} points outside the submission (..)")
        budget.add(member.size if member.isreg() else 0)
        members.append(member)
    return members


def _unpack(tarball: Path, dest: Path) -> None:
    try:
        with tarfile.open(tarball) as archive:
            members = _check_members(tarball, archive)
            dest.mkdir(parents=True)
            archive.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ManifestError(f"{tarball}: cannot unpack: {exc}") from None
    # A tarball of one top-level directory (the usual `tar czf x.tgz x/`): use that.
    entries = list(dest.iterdir())
    if not (dest / MANIFEST_NAME).exists() and len(entries) == 1 and entries[0].is_dir():
        inner = entries[0].rename(dest / ".unpacking")  # a child may share its name
        for child in list(inner.iterdir()):
            child.rename(dest / child.name)
        inner.rmdir()
