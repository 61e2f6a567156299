"""`pip install taxi-rsp` claims the import name ``taxi_rsp`` only: installed next to
PyPI's unrelated ``feeder`` and ``listener`` distributions, it leaves both importable
and unchanged, and runs from its own ``taxi_rsp.feeder`` / ``taxi_rsp.listener``.

Real pip installs into a fresh venv. PyPI's ``feeder`` 0.4.3 (2014) declares
``docopt==.0.6.1``, which today's packaging refuses, so it is built without isolation
against the older setuptools tooling of its time (packaging < 22, wheel < 0.38), with
no dependencies; that is enough to import it. taxi-rsp goes in without dependencies
too: a path entry to this interpreter's site-packages lends it numpy, lark and the
rest, so the installed copy can run the real sample.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "taxi_rsp" / "samples" / "debs2015" / "full2013_first100.csv"


def _pip(venv: Path, *args: str) -> None:
    result = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


def _digest(folder: Path) -> str:
    sha = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        sha.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("collide") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    _pip(venv, "packaging<22", "wheel<0.38")
    _pip(venv, "--no-build-isolation", "--no-deps", "feeder==0.4.3")
    _pip(venv, "--no-deps", "listener==2.0.0a1")
    return venv


def _site(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python3.*/site-packages")
    return site


def _python(venv: Path, code: str) -> str:
    result = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd="/")
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_pypi_feeder_and_listener_survive_installing_taxi_rsp(venv: Path, tmp_path: Path) -> None:
    site = _site(venv)
    before = {name: _digest(site / name) for name in ("feeder", "listener")}
    _pip(venv, "--no-deps", str(ROOT))
    assert {name: _digest(site / name) for name in ("feeder", "listener")} == before
    top_level = next(site.glob("taxi_rsp-*.dist-info")) / "top_level.txt"
    assert top_level.read_text().split() == ["taxi_rsp"]
    (site / "zz_lend_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    found = _python(venv, "import feeder, listener, taxi_rsp.feeder, taxi_rsp.listener\n"
                          "print(feeder.__file__); print(listener.__file__)\n"
                          "print(taxi_rsp.feeder.__file__); print(taxi_rsp.listener.__file__)\n"
                          "print(hasattr(feeder, 'Feeder'), hasattr(listener, 'DebsTopKWriter'))").split()
    assert found == [str(site / "feeder" / "__init__.py"), str(site / "listener" / "__init__.py"),
                     str(site / "taxi_rsp" / "feeder" / "__init__.py"),
                     str(site / "taxi_rsp" / "listener" / "__init__.py"), "False", "False"]
    # the installed copy runs, and answers as the checkout does
    for label, command in (("installed", [str(venv / "bin" / "taxi-rsp")]),
                           ("checkout", [sys.executable, "-m", "taxi_rsp"])):
        result = subprocess.run([*command, "run", str(SAMPLE), "--out", str(tmp_path / label), "--no-progress"],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    for name in ("q1.csv", "q2.csv", "rejects.csv"):
        strip = [line.rpartition(",")[0] for line in (tmp_path / "installed" / name).read_text().splitlines()]
        assert strip == [line.rpartition(",")[0] for line in (tmp_path / "checkout" / name).read_text().splitlines()]
