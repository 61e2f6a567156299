"""Grade one submission: stage it, boot the VM, read the results back, grade.

The submission sees, inside the VM, ``/grade/submission`` (its files, its working
directory), ``/grade/input/<data file>`` and ``/grade/output``; the reference never
enters the VM. Whatever the submission does, :func:`grade_submission` returns a
:class:`SubmissionGrade` — only the grader's own environment (no image, no QEMU)
raises.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from taxi_rsp.grading import iodisk
from taxi_rsp.grading.compare import QueryGrade, compare_query
from taxi_rsp.grading.image import ImageFiles
from taxi_rsp.grading.manifest import ManifestError, SubmissionManifest
from taxi_rsp.grading.outputs import read_output
from taxi_rsp.grading.qemu import VmConfig, VmRun, boot
from taxi_rsp.grading.reference import Reference
from taxi_rsp.grading.submission import stage_submission
from taxi_rsp.grading.verdict import RunRecord, SubmissionGrade, decide

GUEST_ROOT = "/grade"
RUNNER_USER = "nobody"


@dataclass(frozen=True)
class GradeConfig:
    """Limits of one grading run."""

    vm: VmConfig = VmConfig()
    time_limit_s: float = 600.0  # the submission's own limit, enforced inside the VM
    output_allowance_bytes: int = 256 << 20


def guest_paths(data_name: str) -> dict[str, str]:
    """Placeholder values as the submission sees them inside the VM."""
    return {
        "input": f"{GUEST_ROOT}/input/{data_name}",
        "output": f"{GUEST_ROOT}/output",
        "submission": f"{GUEST_ROOT}/submission",
    }


def stage_job(stage: Path, manifest: SubmissionManifest, data: Path, limit_s: float) -> None:
    """Lay out the exchange disk's content next to an already staged submission."""
    for name in ("input", "output", "result"):
        (stage / name).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(data, stage / "input" / data.name)
    job = {"argv": manifest.argv(guest_paths(data.name)), "timeout_seconds": limit_s,
           "user": RUNNER_USER, "queries": list(manifest.queries)}
    (stage / "job.json").write_text(json.dumps(job, indent=2))


def grade_submission(
    source: Path, data: Path, reference: Reference, image: ImageFiles,
    config: GradeConfig, workdir: Path,
) -> SubmissionGrade:
    """Run ``source`` in the VM on ``data`` and grade it; artefacts go to ``workdir``."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    stage = workdir / "stage"
    try:
        manifest = stage_submission(source, stage / "submission")
        stage_job(stage, manifest, data, config.time_limit_s)
    except ManifestError as exc:
        return SubmissionGrade(source.name, str(source), "invalid", str(exc))
    disk = workdir / "io.img"
    iodisk.make_disk(stage, disk, iodisk.disk_size(stage, config.output_allowance_bytes))
    shutil.rmtree(stage)  # its content lives in the disk now
    vm = boot(image, disk, config.vm, config.time_limit_s + config.vm.boot_allowance_s,
              workdir / "console.log")
    run = collect_run(disk, workdir, vm)
    grades = grade_outputs(disk, workdir / "output", manifest.queries, reference)
    disk.unlink()  # up to hundreds of MB; the outputs were copied out
    verdict, message = decide(run, grades)
    return SubmissionGrade(manifest.name, str(source), verdict, message, manifest.queries,
                           run, grades)


def collect_run(disk: Path, workdir: Path, vm: VmRun) -> RunRecord | None:
    """The runner's record plus host timings; None when the guest wrote none."""
    host = {"vm_wall_seconds": round(vm.wall_seconds, 2), "boot_seconds": vm.boot_seconds,
            "vm_killed": vm.killed, "accel": vm.accel}
    for name in ("stdout.txt", "stderr.txt"):
        iodisk.read_file(disk, f"/result/{name}", workdir / name)
    record_path = workdir / "run.json"
    if not iodisk.read_file(disk, "/result/run.json", record_path):
        # Killed by the host before the guest recorded anything: still a timeout.
        return RunRecord(**host) if vm.killed else None
    try:
        data = json.loads(record_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    stderr = workdir / "stderr.txt"
    tail = stderr.read_text(errors="replace")[-2000:] if stderr.exists() else ""
    return RunRecord.from_guest(data, stderr_tail=tail, **host)


def grade_outputs(
    disk: Path, outdir: Path, queries: tuple[str, ...], reference: Reference
) -> dict[str, QueryGrade]:
    """Copy each claimed query's file out of the disk and compare it with the reference."""
    grades = {}
    for query in queries:
        if query not in reference.lines:
            continue  # nothing to grade against; reported as not graded by the caller
        path = outdir / f"{query}.csv"
        found = iodisk.read_file(disk, f"/output/{query}.csv", path)
        grades[query] = compare_query(query, reference.lines[query],
                                      read_output(path) if found else None)
    return grades


def smoke_boot(image: ImageFiles, config: VmConfig, workdir: Path | None = None) -> dict:
    """Boot once with a trivial job (``true``) and report boot and wall times."""
    with tempfile.TemporaryDirectory(prefix="taxi-rsp-boot-") as tmp:
        base = workdir or Path(tmp)
        stage = base / "stage"
        (stage / "submission").mkdir(parents=True)
        for name in ("input", "output", "result"):
            (stage / name).mkdir()
        (stage / "job.json").write_text(json.dumps(
            {"argv": ["true"], "timeout_seconds": 60, "user": RUNNER_USER}))
        disk = base / "io.img"
        iodisk.make_disk(stage, disk, iodisk.MIN_BYTES)
        vm = boot(image, disk, config, 60 + config.boot_allowance_s, base / "console.log")
        ok = iodisk.read_file(disk, "/result/run.json", base / "run.json")
        record = json.loads((base / "run.json").read_text()) if ok else None
        return {"accel": vm.accel, "boot_seconds": vm.boot_seconds,
                "wall_seconds": round(vm.wall_seconds, 1), "killed": vm.killed,
                "exit_code": vm.exit_code, "guest": record, "markers": vm.markers,
                "console_tail": None if ok else vm.console_tail}
