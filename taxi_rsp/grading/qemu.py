"""Boot the grading image under QEMU with a hard wall-clock limit.

Direct kernel boot with a serial console; the root disk is attached with
``snapshot=on`` so a run never changes the image, the exchange disk is the second
virtio disk (``/dev/vdb``), and ``-nic none`` leaves the guest without any network.
The guest prints ``taxi-rsp-grader: ...`` markers on the console; the time to the
``booted`` marker is the boot time.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from taxi_rsp.errors import UserError
from taxi_rsp.grading.image import GUEST_INIT, ImageFiles

BOOTED_MARKER = "taxi-rsp-grader: booted"
CONSOLE_LIMIT = 1 << 20  # bytes of console output kept; a chatty guest cannot fill the disk
_KVM_GET_API_VERSION, _KVM_CREATE_VM = 0xAE00, 0xAE01
# Not `-cpu max`: it offers AVX2, which QEMU 7.2's TCG (Debian 12) emulates wrongly —
# numpy's AVX2 argsort and argpartition gave wrong answers in the guest (20-238 of 300
# random trials per dtype), so the Spark baseline lost routes from its top-10s (issue
# 20, docs/grading.md). Nehalem is x86-64-v2 (SSE4.2, POPCNT) without AVX: programs
# take their SSE code paths, and the guest's CPU is the same whatever QEMU runs it.
TCG_CPU = "Nehalem-v1"


@dataclass(frozen=True)
class VmConfig:
    """The VM's shape; the defaults are the DEBS 2015 challenge's machine."""

    cpus: int = 4
    memory_mb: int = 8192
    accel: str = "auto"  # "auto", "kvm" or "tcg"
    auto_accel: str = "tcg"  # what "auto" means: "kvm" when TAXI_RSP_VM_ACCEL=kvm (and KVM works)
    tcg_cpu: str = TCG_CPU  # the guest's CPU model under TCG (KVM passes the host's)
    qemu: str = "qemu-system-x86_64"
    # Kernel + initramfs + mounts before the submission starts: TCG needs ~30 s on a
    # quiet host, but took over 490 s on one with load 25 on 2 cores.
    boot_allowance_s: float = 600.0


@dataclass
class VmRun:
    """What happened to one VM: exit, whether we had to kill it, timings."""

    command: list[str]
    exit_code: int | None
    killed: bool
    wall_seconds: float
    boot_seconds: float | None
    accel: str
    console_tail: str = ""
    markers: list[str] = field(default_factory=list)


def kvm_usable() -> bool:
    """True when /dev/kvm opens and creates a VM (necessary, not sufficient)."""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if fcntl.ioctl(fd, _KVM_GET_API_VERSION) != 12:
            return False
        os.close(fcntl.ioctl(fd, _KVM_CREATE_VM, 0))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def resolve_accel(accel: str, auto_accel: str = "tcg") -> str:
    """``auto`` picks TCG unless ``auto_accel`` is kvm (TAXI_RSP_VM_ACCEL=kvm): on hosts
    where /dev/kvm opens but guests hang (nested virtualisation), a silent KVM choice
    would cost the whole time limit, while TCG is always correct."""
    if accel == "auto":
        return "kvm" if auto_accel == "kvm" and kvm_usable() else "tcg"
    if accel == "kvm" and not kvm_usable():
        raise UserError("--accel kvm: /dev/kvm is not usable on this host")
    return accel


def qemu_command(
    image: ImageFiles, io_disk: Path, config: VmConfig, accel: str, console: Path
) -> list[str]:
    """The full QEMU command line for one grading run."""
    accel_args = ["-accel", "kvm", "-cpu", "host"] if accel == "kvm" else [
        "-accel", "tcg,thread=multi", "-cpu", config.tcg_cpu]
    # No rootdelay=: Debian's initramfs sleeps that long unconditionally before
    # looking for the root disk.
    append = f"root=/dev/vda rw console=ttyS0 init={GUEST_INIT} quiet loglevel=3 panic=1"
    return [
        config.qemu, *accel_args,
        "-smp", str(config.cpus), "-m", str(config.memory_mb),
        "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
        "-nic", "none", "-monitor", "none",
        "-serial", f"file:{console}",
        "-kernel", str(image.kernel), "-initrd", str(image.initrd), "-append", append,
        "-drive", f"file={image.rootfs},format=raw,if=virtio,snapshot=on",
        "-drive", f"file={io_disk},format=raw,if=virtio",
    ]


def boot(image: ImageFiles, io_disk: Path, config: VmConfig, time_limit_s: float,
         console: Path) -> VmRun:
    """Boot, wait for the guest to power off, kill QEMU at ``time_limit_s``."""
    image.check()
    if shutil.which(config.qemu) is None:
        raise UserError(f"{config.qemu} not found; install with: apt-get install -y qemu-system-x86")
    accel = resolve_accel(config.accel, config.auto_accel)
    command = qemu_command(image, io_disk, config, accel, console)
    console.write_bytes(b"")
    started = time.monotonic()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    watcher = _ConsoleWatcher(console, started)
    watcher.start()
    killed = False
    try:
        proc.wait(timeout=time_limit_s)
    except subprocess.TimeoutExpired:
        killed = True
        proc.kill()
        proc.wait()
    wall = time.monotonic() - started
    watcher.stop()
    stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    _truncate(console)
    tail = console.read_bytes()[-4000:].decode("utf-8", "replace") + stderr[-2000:]
    return VmRun(command, None if killed else proc.returncode, killed, wall,
                 watcher.booted_at, accel, tail, watcher.markers)


class _ConsoleWatcher(threading.Thread):
    """Follows the serial log and notes when each grader marker appears."""

    def __init__(self, console: Path, started: float) -> None:
        super().__init__(daemon=True)
        self.console, self.started = console, started
        self.booted_at: float | None = None
        self.markers: list[str] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self._scan()
            self._halt.wait(0.1)
        self._scan()

    def _scan(self) -> None:
        with self.console.open("rb") as handle:
            data = handle.read(CONSOLE_LIMIT)
        text = data[: data.rfind(b"\n") + 1].decode("utf-8", "replace")  # whole lines only
        found = [line.strip() for line in text.splitlines() if line.startswith("taxi-rsp-grader:")]
        now = time.monotonic() - self.started
        for line in found[len(self.markers):]:
            self.markers.append(f"{now:8.1f}s {line}")
            if line.startswith(BOOTED_MARKER) and self.booted_at is None:
                self.booted_at = round(now, 1)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def _truncate(path: Path) -> None:
    if path.stat().st_size > CONSOLE_LIMIT:
        with path.open("r+b") as handle:
            handle.truncate(CONSOLE_LIMIT)
