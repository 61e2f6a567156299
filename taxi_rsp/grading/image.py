"""Build the grading image: a Debian 12 root file system on an ext4 disk image.

Steps, each timed and recorded in ``manifest.json``:

1. **wheelhouse** — ``pip wheel`` of a clean copy of the project (tracked and
   untracked-but-not-ignored files), pinned by the host venv's ``pip freeze``.
2. **rootfs** — ``mmdebstrap`` (bookworm, minbase, kernel, Python 3.11, Java 17);
   customize hooks install the wheelhouse into ``/opt/taxi-rsp`` with ``--no-index``
   and copy the guest entry point from ``vm/guest/``.
3. **ext4** — ``mke2fs -d`` of that directory (no loop mount), with a UUID, hash seed
   and superblock times derived from ``SOURCE_DATE_EPOCH``; mtimes are clamped to it.

Only the Debian and PyPI registries are contacted.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from taxi_rsp.errors import UserError

REPO_ROOT = Path(__file__).resolve().parents[2]
GUEST_DIR = REPO_ROOT / "vm" / "guest"
DEFAULT_OUT = REPO_ROOT / "vm" / "build" / "image"
SUITE = "bookworm"
DEBIAN_PACKAGES: tuple[str, ...] = (
    "linux-image-amd64",
    "python3",
    "python3-venv",
    "openjdk-17-jre-headless",
    "systemd-sysv",  # poweroff
    "udev",  # the initramfs finds the root disk with it
    "procps",  # ps, used by Spark's launcher scripts
    "iproute2",  # bring up loopback for Spark/py4j
)
VENV = "/opt/taxi-rsp"
SITE_PACKAGES = f"{VENV}/lib/python3.11/site-packages"  # the image's Python is 3.11
GUEST_INIT = "/opt/grader/init.sh"
IMAGE_NAME, KERNEL_NAME, INITRD_NAME = "rootfs.img", "vmlinuz", "initrd.img"
MANIFEST_NAME = "manifest.json"
HOST_TOOLS = ("mmdebstrap", "mke2fs", "debugfs", "qemu-system-x86_64")


@dataclass(frozen=True)
class ImageFiles:
    """The three files QEMU needs, found in an image directory."""

    directory: Path

    @property
    def rootfs(self) -> Path:
        return self.directory / IMAGE_NAME

    @property
    def kernel(self) -> Path:
        return self.directory / KERNEL_NAME

    @property
    def initrd(self) -> Path:
        return self.directory / INITRD_NAME

    @property
    def manifest(self) -> Path:
        return self.directory / MANIFEST_NAME

    def check(self) -> None:
        missing = [p.name for p in (self.rootfs, self.kernel, self.initrd) if not p.is_file()]
        if missing:
            raise UserError(
                f"no grading image in {self.directory} (missing {', '.join(missing)}); "
                "build it with: taxi-rsp vm build"
            )


@dataclass
class BuildReport:
    """What a build did and how long each step took."""

    seconds: dict[str, float] = field(default_factory=dict)

    def step(self, name: str, started: float) -> None:
        self.seconds[name] = round(time.monotonic() - started, 1)


def require_tools(tools: tuple[str, ...] = HOST_TOOLS) -> None:
    """Fail with the install command when a host tool is missing."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise UserError(
            f"missing host tool(s): {', '.join(missing)}; install with: apt-get install -y "
            "qemu-system-x86 qemu-utils mmdebstrap e2fsprogs"
        )


def source_date_epoch(git_ref: str | None = None) -> int:
    """SOURCE_DATE_EPOCH from the environment, else the time of the (last) commit."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    out = _run(["git", "-C", str(REPO_ROOT), "log", "-1", "--format=%ct", git_ref or "HEAD"],
               capture=True)
    return int(out.strip())


def build_image(
    out: Path = DEFAULT_OUT, epoch: int | None = None, git_ref: str | None = None, log=print
) -> dict:
    """Build the image into ``out`` and return its manifest.

    ``git_ref`` builds the project as committed at that ref (reproducible); by default
    the working tree is used, uncommitted changes included (what you are testing).
    """
    require_tools(("mmdebstrap", "mke2fs"))
    if os.geteuid() != 0:
        raise UserError("the image build runs mmdebstrap in root mode: run it as root")
    epoch = source_date_epoch(git_ref) if epoch is None else epoch
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    report = BuildReport()
    total = time.monotonic()

    started = time.monotonic()
    log("wheelhouse: pip wheel of the project and its dependencies")
    wheelhouse = work / "wheelhouse"
    copy_project(work / "src", git_ref)
    constraints = make_wheelhouse(work / "src", wheelhouse, env)
    report.step("wheelhouse", started)

    started = time.monotonic()
    log(f"rootfs: mmdebstrap {SUITE} minbase (a few minutes)")
    rootdir = work / "rootfs"
    # The host's pip settings (PIP_FIND_LINKS, ...) must not leak into the chroot.
    guest_env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
    _run(mmdebstrap_command(rootdir, wheelhouse, work / "src" / "queries"), env=guest_env)
    clamp_mtimes(rootdir, epoch)
    report.step("rootfs", started)

    started = time.monotonic()
    log("ext4: mke2fs -d")
    files = ImageFiles(out)
    for name, link in ((KERNEL_NAME, "vmlinuz"), (INITRD_NAME, "initrd.img")):
        shutil.copyfile(rootdir / link, out / name)  # follows the /vmlinuz symlink
    make_ext4(rootdir, files.rootfs, epoch, env)
    report.step("ext4", started)

    started = time.monotonic()
    manifest = image_manifest(rootdir, wheelhouse, files, epoch, constraints)
    manifest["project"]["built_from"] = git_ref or "working tree"
    shutil.rmtree(work)
    report.step("manifest", started)
    report.seconds["total"] = round(time.monotonic() - total, 1)
    manifest["build_seconds"] = report.seconds
    files.manifest.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def copy_project(src: Path, git_ref: str | None) -> None:
    """The project's files as of ``git_ref``, or the working tree without ignored files."""
    src.mkdir(parents=True)
    if git_ref is not None:
        archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", "--format=tar", git_ref],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            raise UserError(f"git archive {git_ref}: {archive.stderr.decode().strip()}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(src, filter="data")
        return
    listed = _run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture=True,
    )
    for rel in filter(None, listed.split("\0")):
        source = REPO_ROOT / rel
        if source.is_file():  # deleted-but-tracked files are skipped
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, src / rel)


VM_EXTRA = "vm"  # pyproject.toml: what a submission may use in the image (Spark stack, polars)


def make_wheelhouse(src: Path, wheelhouse: Path, env: dict[str, str]) -> str:
    """Wheels of the project and every dependency; returns the pins used."""
    freeze = _run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"], capture=True)
    pins = "".join(line + "\n" for line in freeze.splitlines() if "==" in line)
    constraints = src.parent / "constraints.txt"
    constraints.write_text(pins)
    _run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(wheelhouse),
         "--constraint", str(constraints), f"{src}[{VM_EXTRA}]"],
        env=env,
    )
    return pins


def mmdebstrap_command(rootdir: Path, wheelhouse: Path, queries: Path) -> list[str]:
    """The mmdebstrap invocation; hooks run on the host with $1 = the new root."""
    hooks = [
        'mkdir -p "$1/opt/grader"',
        f"copy-in {wheelhouse} /opt",  # becomes /opt/wheelhouse
        f'copy-in {GUEST_DIR / "init.sh"} {GUEST_DIR / "run_submission.py"} /opt/grader',
        f'chmod 0755 "$1{GUEST_INIT}"',
        f'chroot "$1" python3 -m venv {VENV}',
        f'chroot "$1" {VENV}/bin/pip install --quiet --no-index --no-cache-dir '
        f"--disable-pip-version-check --find-links /opt/wheelhouse 'taxi-rsp[{VM_EXTRA}]'",
        'rm -rf "$1/opt/wheelhouse"',
        # taxi_rsp.runner looks for queries/ next to the installed package, and the
        # wheel does not carry that top-level directory: install it where it looks.
        f"copy-in {queries} {SITE_PACKAGES}",
        # Fixed identity: nothing of the build host leaks into the image.
        'echo grader > "$1/etc/hostname"',
        'printf "127.0.0.1\\tlocalhost grader\\n::1\\tlocalhost ip6-localhost\\n" > "$1/etc/hosts"',
        "chroot \"$1\" dpkg-query -W -f '${Package}\\t${Version}\\n' > \"$1/opt/grader/debian-packages.tsv\"",
        f'chroot "$1" {VENV}/bin/pip freeze --all > "$1/opt/grader/python-packages.txt"',
    ]
    command = [
        "mmdebstrap",
        "--mode=root",
        "--variant=minbase",
        f"--include={','.join(DEBIAN_PACKAGES)}",
        "--aptopt=Acquire::Retries \"3\"",
    ]
    command += [f"--customize-hook={hook}" for hook in hooks]
    return [*command, SUITE, str(rootdir)]


def clamp_mtimes(root: Path, epoch: int) -> None:
    """Files written during the build get SOURCE_DATE_EPOCH as their newest mtime."""
    for path in [root, *root.rglob("*")]:
        st = path.lstat()
        if st.st_mtime > epoch:
            os.utime(path, (epoch, epoch), follow_symlinks=False)


def make_ext4(rootdir: Path, image: Path, epoch: int, env: dict[str, str]) -> None:
    """An ext4 image of ``rootdir`` sized to its content plus a quarter."""
    used = int(_run(["du", "-s", "--block-size=1M", str(rootdir)], capture=True).split()[0])
    size_mb = (int(used * 1.25) + 256 + 63) // 64 * 64
    fixed = str(uuid.uuid5(uuid.NAMESPACE_URL, f"taxi-rsp-grader:{epoch}"))
    image.unlink(missing_ok=True)
    _run(
        ["mke2fs", "-q", "-t", "ext4", "-L", "taxi-rsp-root", "-m", "0", "-U", fixed,
         "-E", f"hash_seed={fixed}", "-d", str(rootdir), str(image), f"{size_mb}M"],
        env={**env, "E2FSPROGS_FAKE_TIME": str(epoch)},
    )


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def image_manifest(
    rootdir: Path, wheelhouse: Path, files: ImageFiles, epoch: int, constraints: str
) -> dict:
    """Versions and hashes of everything that went into the image."""
    debs = dict(
        line.split("\t", 1)
        for line in (rootdir / "opt/grader/debian-packages.tsv").read_text().splitlines()
        if "\t" in line
    )
    return {
        "schema": "taxi-rsp-grading-image/1",
        "source_date_epoch": epoch,
        "suite": SUITE,
        "variant": "minbase",
        "included": list(DEBIAN_PACKAGES),
        "debian_packages": debs,
        "python_packages": (rootdir / "opt/grader/python-packages.txt").read_text().split(),
        "wheels": {w.name: sha256(w) for w in sorted(wheelhouse.glob("*.whl"))},
        "constraints": constraints.split(),
        "project": project_revision(),
        "guest_entry": GUEST_INIT,
        "venv": VENV,
        "files": {
            p.name: {"bytes": p.stat().st_size, "sha256": sha256(p)}
            for p in (files.rootfs, files.kernel, files.initrd)
        },
        "tools": tool_versions(),
    }


def project_revision() -> dict[str, object]:
    commit = _run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture=True).strip()
    status = _run(["git", "-C", str(REPO_ROOT), "status", "--porcelain"], capture=True)
    return {"git_commit": commit, "dirty": bool(status.strip())}


def tool_versions() -> dict[str, str]:
    versions = {}
    for tool, flag in (("mmdebstrap", "--version"), ("qemu-system-x86_64", "--version")):
        if shutil.which(tool):
            versions[tool] = _run([tool, flag], capture=True).splitlines()[0].strip()
    mke2fs = subprocess.run(["mke2fs", "-V"], capture_output=True, text=True)
    versions["mke2fs"] = (mke2fs.stderr or mke2fs.stdout).splitlines()[0].strip()
    versions["host_python"] = sys.version.split()[0]
    return versions


def _run(command: list[str], env: dict[str, str] | None = None, capture: bool = False) -> str:
    """Run a build step; a failure becomes a UserError naming the command."""
    try:
        done = subprocess.run(
            command, env=env, check=True, text=True,
            stdout=subprocess.PIPE if capture else None,
        )
    except FileNotFoundError:
        raise UserError(f"{command[0]}: not found") from None
    except subprocess.CalledProcessError as exc:
        raise UserError(f"{' '.join(command[:3])} ... failed with exit code {exc.returncode}") from None
    return done.stdout or ""
