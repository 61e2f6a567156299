"""Host side of a grading run without booting: job staging, QEMU and build commands,
the exchange disk round trip, and the CLI's one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from taxi_rsp.cli import main
from taxi_rsp.errors import UserError
from taxi_rsp.grading import iodisk
from taxi_rsp.grading.grader import guest_paths, stage_job
from taxi_rsp.grading.image import ImageFiles, mmdebstrap_command
from taxi_rsp.grading.manifest import parse_manifest
from taxi_rsp.grading.qemu import VmConfig, qemu_command

needs_e2fs = pytest.mark.skipif(
    shutil.which("mke2fs") is None or shutil.which("debugfs") is None,
    reason="needs e2fsprogs (mke2fs, debugfs)")


def test_stage_job_fills_placeholders_with_guest_paths(tmp_path: Path, sample_20d: Path) -> None:
    manifest = parse_manifest(
        'name = "e"\ncommand = "taxi-rsp run {input} --out {output} --query q1"\nqueries = ["q1"]\n')
    stage_job(tmp_path, manifest, sample_20d, 42.0)
    job = json.loads((tmp_path / "job.json").read_text())
    assert job["argv"] == ["taxi-rsp", "run", f"/grade/input/{sample_20d.name}", "--out",
                           "/grade/output", "--query", "q1"]
    assert job["timeout_seconds"] == 42.0 and job["user"] == "nobody"
    assert (tmp_path / "input" / sample_20d.name).read_bytes() == sample_20d.read_bytes()
    assert guest_paths("d.csv")["submission"] == "/grade/submission"


def test_qemu_command_isolates_the_guest(tmp_path: Path) -> None:
    command = qemu_command(ImageFiles(tmp_path), tmp_path / "io.img", VmConfig(), "tcg",
                           tmp_path / "console.log")
    text = " ".join(command)
    assert "-smp 4 -m 8192" in text  # the challenge's machine by default
    assert "-nic none" in text and "-no-reboot" in text
    assert f"file={tmp_path / 'rootfs.img'},format=raw,if=virtio,snapshot=on" in text
    assert f"file={tmp_path / 'io.img'},format=raw,if=virtio" in text
    assert "init=/opt/grader/init.sh" in text and "tcg,thread=multi" in text
    # No AVX under TCG: QEMU 7.2 emulates AVX2 wrongly (issue 20).
    assert command[command.index("-cpu") + 1] == "Nehalem-v1"
    small = qemu_command(ImageFiles(tmp_path), tmp_path / "io.img", VmConfig(cpus=2, memory_mb=2048),
                         "kvm", tmp_path / "c.log")
    assert "-smp 2 -m 2048" in " ".join(small) and "kvm" in small
    assert small[small.index("-cpu") + 1] == "host"


def test_mmdebstrap_installs_wheels_offline(tmp_path: Path) -> None:
    command = mmdebstrap_command(tmp_path / "root", tmp_path / "wheelhouse", tmp_path / "queries")
    include = next(a for a in command if a.startswith("--include="))
    for package in ("linux-image-amd64", "python3", "openjdk-17-jre-headless"):
        assert package in include
    pip = next(a for a in command if "pip install" in a)
    assert "--no-index" in pip and "--find-links /opt/wheelhouse" in pip
    assert pip.endswith("'taxi-rsp[vm]'")  # the Spark stack and polars: submissions may use them
    assert f"copy-in {tmp_path / 'queries'} /opt/taxi-rsp/lib/python3.11/site-packages" in command[
        command.index(pip) + 1:][1]
    assert command[-2:] == ["bookworm", str(tmp_path / "root")]


@needs_e2fs
def test_exchange_disk_round_trip_copies_only_regular_files(tmp_path: Path) -> None:
    stage = tmp_path / "stage"
    (stage / "output").mkdir(parents=True)
    (stage / "output" / "q1.csv").write_text("a,b\n")
    (stage / "output" / "q2.csv").symlink_to("/etc/hostname")
    disk = tmp_path / "io.img"
    iodisk.make_disk(stage, disk, iodisk.disk_size(stage, 1 << 20))
    assert iodisk.read_file(disk, "/output/q1.csv", tmp_path / "back" / "q1.csv")
    assert (tmp_path / "back" / "q1.csv").read_text() == "a,b\n"
    assert iodisk.file_type(disk, "/output/q2.csv") == "symlink"
    assert not iodisk.read_file(disk, "/output/q2.csv", tmp_path / "back" / "q2.csv")
    assert not iodisk.read_file(disk, "/output/none.csv", tmp_path / "back" / "none.csv")
    assert not (tmp_path / "back" / "q2.csv").exists()


def test_exchange_disk_size_is_capped(tmp_path: Path) -> None:
    stage = tmp_path / "stage"
    (stage / "input").mkdir(parents=True)
    with (stage / "input" / "data.csv").open("wb") as handle:  # 5 GiB apparent, sparse
        handle.truncate(5 << 30)
    with pytest.raises(UserError, match="over its 4,096 MiB cap") as caught:
        iodisk.disk_size(stage, 1 << 20)
    assert "\n" not in str(caught.value)
    (stage / "input" / "data.csv").unlink()
    (stage / "input" / "data.csv").symlink_to("/dev/zero")  # links are not followed
    assert iodisk.disk_size(stage, 1 << 20) == iodisk.MIN_BYTES


def test_grade_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       sample_20d: Path) -> None:
    assert main(["grade", "x", "--data", str(tmp_path / "none.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["grade", "x", "--data", str(sample_20d), "--image", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "taxi-rsp vm build" in err and "Traceback" not in err
