"""The exchange disk: an ext4 image carrying the job in and the results out.

Made with ``mke2fs -d`` from a staging directory and read back with ``debugfs``, so
the host never mounts a file system written by untrusted code. Only named regular
files are copied out (``dump``), never whole trees: a symlink planted by the
submission cannot make the host read its own files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from taxi_rsp.errors import UserError

MIN_BYTES = 64 << 20
# The largest exchange disk made: a submission is at most 512 MiB (submission.py) and
# outputs get a fixed allowance, so only the data file can push a disk past this.
MAX_BYTES = 4 << 30


def disk_size(stage: Path, output_allowance: int) -> int:
    """Bytes for the disk: what is staged, room for outputs, ext4 overhead; at most MAX_BYTES."""
    staged = sum(p.lstat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink())
    size = max(MIN_BYTES, int(staged * 1.2) + output_allowance + (16 << 20))
    size = (size + (1 << 20) - 1) >> 20 << 20
    if size > MAX_BYTES:
        raise UserError(f"the exchange disk would need {size >> 20:,} MiB, over its "
                        f"{MAX_BYTES >> 20:,} MiB cap: grade on a smaller --data file")
    return size


def make_disk(stage: Path, image: Path, size_bytes: int) -> None:
    """Write ``stage`` into a fresh ext4 image of ``size_bytes``."""
    image.unlink(missing_ok=True)
    done = subprocess.run(
        ["mke2fs", "-q", "-t", "ext4", "-L", "grade", "-m", "0", "-d", str(stage),
         str(image), f"{size_bytes >> 10}k"],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise UserError(f"mke2fs of the exchange disk failed: {done.stderr.strip()}")


def file_type(image: Path, guest_path: str) -> str | None:
    """'regular', 'directory', 'symlink', ... for a path in the image, None if absent."""
    done = _debugfs(image, f'stat "{guest_path}"')
    for line in done.stdout.splitlines():
        if "Type:" in line:
            return line.split("Type:", 1)[1].split()[0]
    return None


def read_file(image: Path, guest_path: str, dest: Path) -> bool:
    """Copy one regular file out of the image; False when it is absent or not a file."""
    if file_type(image, guest_path) != "regular":
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.unlink(missing_ok=True)
    done = _debugfs(image, f'dump "{guest_path}" "{dest}"')
    if not dest.is_file():
        raise UserError(f"debugfs could not dump {guest_path}: {done.stderr.strip()}")
    return True


def _debugfs(image: Path, request: str) -> subprocess.CompletedProcess[str]:
    # debugfs exits 0 even when a request fails; callers check what it produced.
    return subprocess.run(["debugfs", "-R", request, str(image)],
                          capture_output=True, text=True)
