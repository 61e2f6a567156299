"""submission.toml parsing, placeholder substitution and submission staging."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from taxi_rsp.grading.manifest import ManifestError, parse_manifest, substitute
from taxi_rsp.grading.submission import stage_submission

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


def test_tarball_escaping_its_directory_is_refused(tmp_path: Path) -> None:
    _tar(tmp_path / "evil.tgz", {"submission.toml": GOOD.encode(), "../escape.txt": b"x"})
    with pytest.raises(ManifestError, match="cannot unpack"):
        stage_submission(tmp_path / "evil.tgz", tmp_path / "staged")
    assert not (tmp_path / "escape.txt").exists()


def test_directory_without_manifest_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(ManifestError, match="no submission.toml"):
        stage_submission(tmp_path / "sub", tmp_path / "staged")
