"""Run one untrusted submission inside the grading VM and record what happened.

Called by ``init.sh`` with the mount point of the exchange disk, which holds::

    job.json      argv (placeholders already filled in), time limit, user
    submission/   the submission's files (its working directory)
    input/        the data file
    output/       where the submission writes q1.csv / q2.csv
    result/       written here only: run.json, stdout.txt, stderr.txt

The submission runs as an unprivileged user in its own session and is killed, with
everything else that user runs, at the time limit. Execution time is measured here,
inside the VM, around the submission's process. Standard library only: this runs
with the image's system Python, whatever the submission breaks.
"""

from __future__ import annotations

import json
import os
import platform
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

TAIL_BYTES = 64 * 1024  # how much of stdout/stderr is kept for the report


def log(message: str) -> None:
    print(f"taxi-rsp-grader: {message}", flush=True)


def chown_tree(root: Path, uid: int, gid: int) -> None:
    for path in [root, *root.rglob("*")]:
        os.lchown(path, uid, gid)


def kill_user_processes(uid: int) -> int:
    """SIGKILL every process of ``uid`` (a submission may leave its session)."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            continue
    return killed


def tail(path: Path) -> str:
    if not path.exists():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - TAIL_BYTES))
        return handle.read().decode("utf-8", errors="replace")


def cpu_info() -> tuple[str, list[str]]:
    """The CPU model name and which of the SIMD extensions programs may pick it offers."""
    model, flags = "", set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and not model:
            model = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return model, [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f") if f in flags]


def guest_facts() -> dict[str, object]:
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem_kb = next((int(line.split()[1]) for line in meminfo if line.startswith("MemTotal:")), 0)
    model, simd = cpu_info()
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "simd": simd,
        "mem_total_kb": mem_kb,
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def run(grade: Path) -> dict[str, object]:
    job = json.loads((grade / "job.json").read_text())
    argv = [str(a) for a in job["argv"]]
    limit = float(job["timeout_seconds"])
    user = pwd.getpwnam(job.get("user", "nobody"))
    home = Path("/tmp/home")
    home.mkdir(exist_ok=True)
    for path in (grade / "submission", grade / "output", home):
        chown_tree(path, user.pw_uid, user.pw_gid)
    os.chmod(grade / "result", 0o700)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "SPARK_LOCAL_IP": "127.0.0.1",
        "JAVA_HOME": job.get("java_home", "/usr/lib/jvm/java-17-openjdk-amd64"),
    }
    stdout_path, stderr_path = Path("/tmp/stdout.txt"), Path("/tmp/stderr.txt")
    record: dict[str, object] = {"argv": argv, "timeout_seconds": limit, "guest": guest_facts()}
    log(f"running {argv!r} with a limit of {limit:g} s")
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=grade / "submission",
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                user=user.pw_uid,
                group=user.pw_gid,
                extra_groups=[],
                start_new_session=True,
            )
        except OSError as exc:  # command not found, not executable, ...
            record.update(exit_code=None, timed_out=False, exec_seconds=0.0, error=str(exc))
            return record
        timed_out = False
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_user_processes(user.pw_uid)
            code = proc.wait()
        elapsed = time.perf_counter() - start
    # Children that outlived the main process must not write after we read.
    record["stray_processes_killed"] = kill_user_processes(user.pw_uid)
    record.update(exit_code=code, timed_out=timed_out, exec_seconds=elapsed)
    if code is not None and code < 0:
        record["signal"] = signal.Signals(-code).name
    (grade / "result" / "stdout.txt").write_text(tail(stdout_path))
    (grade / "result" / "stderr.txt").write_text(tail(stderr_path))
    return record


def main() -> int:
    grade = Path(sys.argv[1])
    (grade / "result").mkdir(exist_ok=True)
    try:
        record = run(grade)
    except Exception as exc:  # the runner must always leave a result behind
        record = {"exit_code": None, "timed_out": False, "error": f"grader runner: {exc!r}"}
    (grade / "result" / "run.json").write_text(json.dumps(record, indent=2))
    os.sync()
    log(f"done: exit={record.get('exit_code')} timed_out={record.get('timed_out')} "
        f"seconds={record.get('exec_seconds')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
