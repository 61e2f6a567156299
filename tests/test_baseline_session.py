"""Finding Java for Spark, and the one-line error when it cannot be found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taxi_rsp.baseline.session import find_java_home
from taxi_rsp.errors import UserError


def test_java_home_wins_when_valid(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "java").write_text("")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert find_java_home() == tmp_path


def test_invalid_java_home_names_the_fix(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(UserError, match="JAVA_HOME=.*openjdk-17-jre-headless"):
        find_java_home()


def test_no_java_at_all_names_the_fix(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError, match="no `java` is on PATH.*apt-get install"):
        find_java_home()


@pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH")
def test_java_on_path_is_resolved_through_symlinks(monkeypatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    home = find_java_home()
    assert (home / "bin" / "java").exists() and not (home / "bin" / "java").is_symlink()
