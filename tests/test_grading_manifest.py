"""submission.toml parsing, placeholder substitution and submission staging."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from taxi_rsp.grading.grader import GradeConfig, grade_submission
from taxi_rsp.grading.image import ImageFiles
from taxi_rsp.grading.manifest import ManifestError, parse_manifest, substitute
from taxi_rsp.grading.reference import load_reference
from taxi_rsp.grading.submission import MAX_BYTES, MAX_ENTRIES, stage_submission

ROOT = Path(__file__).resolve().parents[1]
GOOD = 'name = "x"\ncommand = "run {input} --out {output}"\nqueries = ["q2", "q1"]\n'
VALUES = {"input": "/grade/input/data.csv", "output": "/grade/output", "submission": "/s"}


def test_parse_valid_manifest_orders_queries_canonically() -> None:
    manifest = parse_manifest(GOOD)
    assert manifest.name == "x"
    assert manifest.queries == ("q1", "q2")
    assert manifest.argv(VALUES) == ["run", "/grade/input/data.csv", "--out", "/grade/output"]


def test_quoted_words_stay_one_argument_and_placeholders_fill_inside_words() -> None:
    manifest = parse_manifest(
        'name = "x"\ncommand = "sh -c \'cat \\"$0\\"\' {input} --out={output}/res"\nqueries = ["q1"]\n'
    )
    assert manifest.argv({**VALUES, "input": "/a b.csv"}) == [
        "sh", "-c", 'cat "$0"', "/a b.csv", "--out=/grade/output/res"]


def test_double_braces_are_literal() -> None:
    assert substitute("{{x}}{output}", VALUES) == "{x}/grade/output"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\ncommand = "run {input}"\nqueries = ["q1"]\n', "{output}"),
        ('name = "x"\ncommand = "run {output}"\nqueries = ["q1"]\n', "{input}"),
        ('name = "x"\ncommand = "run {input} {output} {secret}"\nqueries = ["q1"]\n', "unknown placeholder"),
        ('name = "x"\ncommand = "run {input} {output} {"\nqueries = ["q1"]\n', "unbalanced brace"),
        ('name = "x"\ncommand = "run \'{input} {output}"\nqueries = ["q1"]\n', "quotation"),
        ('name = "x"\ncommand = "run {input} {output}"\nqueries = ["q3"]\n', "unknown query"),
        ('name = "x"\ncommand = "run {input} {output}"\nqueries = ["q1", "q1"]\n', "twice"),
        ('name = "x"\ncommand = "run {input} {output}"\nqueries = []\n', "non-empty list"),
        ('name = ""\ncommand = "run {input} {output}"\nqueries = ["q1"]\n', "'name'"),
        ('name = "x"\ncommand = 3\nqueries = ["q1"]\n', "'command'"),
        (GOOD + 'timeout = 5\n', "unknown key"),
        ("name = ", "not valid TOML"),
    ],
)
def test_bad_manifests_are_rejected_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message.replace("{", r"\{").replace("}", r"\}")):
        parse_manifest(text)


@pytest.mark.parametrize("name", ["engine", "baseline", "ascending", "sleeper"])
def test_example_submissions_parse(name: str) -> None:
    manifest = parse_manifest((ROOT / "vm" / "submissions" / name / "submission.toml").read_text())
    assert manifest.argv(VALUES)[-1] != ""


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_tarball_with_one_top_directory_is_unwrapped(tmp_path: Path) -> None:
    _tar(tmp_path / "s.tgz", {"s/submission.toml": GOOD.encode(), "s/s/inner.txt": b"1"})
    manifest = stage_submission(tmp_path / "s.tgz", tmp_path / "staged")
    assert manifest.name == "x"
    assert (tmp_path / "staged" / "s" / "inner.txt").read_text() == "1"


def _refused(source: Path, dest: Path, match: str) -> str:
    """Staging ``source`` fails with one line matching ``match`` and writes nothing."""
    with pytest.raises(ManifestError, match=match) as caught:
        stage_submission(source, dest)
    assert "\n" not in str(caught.value)
    assert not dest.exists()
    return str(caught.value)


def test_tarball_escaping_its_directory_is_refused(tmp_path: Path) -> None:
    _tar(tmp_path / "evil.tgz", {"submission.toml": GOOD.encode(), "../escape.txt": b"x"})
    _refused(tmp_path / "evil.tgz", tmp_path / "work" / "staged", r"'\.\./escape.txt' points outside")
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "work").exists()


def test_tarball_with_an_absolute_member_is_refused_not_made_relative(tmp_path: Path) -> None:
    target = tmp_path / "outside" / "x"  # an absolute path that would be writable
    _tar(tmp_path / "abs.tgz", {"submission.toml": GOOD.encode(), str(target): b"x"})
    message = _refused(tmp_path / "abs.tgz", tmp_path / "staged", "has an absolute path")
    assert str(target) in message
    assert not target.exists() and not (tmp_path / "outside").exists()


def test_decompression_bomb_is_refused_from_its_headers(tmp_path: Path) -> None:
    # A real bomb: 600 MiB of zeros in a gzip of well under 1 MiB.
    bomb = tmp_path / "bomb.tgz"
    with tarfile.open(bomb, "w:gz", compresslevel=1) as archive:
        info = tarfile.TarInfo("submission.toml")
        info.size = len(GOOD)
        archive.addfile(info, io.BytesIO(GOOD.encode()))
        info = tarfile.TarInfo("zeros.bin")
        info.size = 600 << 20
        archive.addfile(info, _Zeros(info.size))
    assert bomb.stat().st_size < 4 << 20
    _refused(bomb, tmp_path / "staged", f"more than {MAX_BYTES >> 20} MiB unpacked")


def test_too_many_files_are_refused(tmp_path: Path) -> None:
    members = {"submission.toml": GOOD.encode(),
               **{f"d/f{i}": b"" for i in range(MAX_ENTRIES)}}
    _tar(tmp_path / "many.tgz", members)
    _refused(tmp_path / "many.tgz", tmp_path / "staged", f"more than {MAX_ENTRIES:,} files")


def test_directory_over_the_limits_is_refused_before_copying(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    (big / "submission.toml").write_text(GOOD)
    with (big / "sparse.bin").open("wb") as handle:  # 600 MiB apparent, nothing on disk
        handle.truncate(600 << 20)
    _refused(big, tmp_path / "staged", "MiB unpacked")
    many = tmp_path / "many"
    (many / "d").mkdir(parents=True)
    (many / "submission.toml").write_text(GOOD)
    for i in range(MAX_ENTRIES):
        (many / "d" / f"f{i}").touch()
    _refused(many, tmp_path / "staged", "files and directories")


def test_a_refused_submission_is_graded_invalid_without_a_boot(tmp_path: Path) -> None:
    _tar(tmp_path / "abs.tgz", {"submission.toml": GOOD.encode(), "/etc/taxi-rsp-x": b"x"})
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "q1.csv").write_text("")
    data = tmp_path / "data.csv"
    data.write_text("")
    grade = grade_submission(tmp_path / "abs.tgz", data, load_reference(tmp_path / "ref"),
                             ImageFiles(tmp_path / "no-image"), GradeConfig(), tmp_path / "work")
    assert grade.verdict == "invalid" and "has an absolute path" in grade.message
    assert "\n" not in grade.message and not Path("/etc/taxi-rsp-x").exists()
    assert list((tmp_path / "work").rglob("*")) == []  # nothing unpacked, no disk made


class _Zeros(io.RawIOBase):
    """A readable stream of ``size`` zero bytes (the bomb's content, never in memory)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def test_directory_without_manifest_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(ManifestError, match="no submission.toml"):
        stage_submission(tmp_path / "sub", tmp_path / "staged")
