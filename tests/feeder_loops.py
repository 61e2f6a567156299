"""The ``feeder_loop`` fixture: a Feeder test module that imports it runs every test
once on the native loop and once on the pure-Python one (issue 15 §4).

    from feeder_loops import feeder_loop  # noqa: F401  (autouse)

Every ``Feeder`` built without ``native=`` follows the process's pure-Python setting
(``taxi_rsp.native.pure_python_requested``), which the fixture sets or clears. A missing native module fails the native runs instead of
quietly testing the pure loop twice (CI must notice a broken build).
"""

from __future__ import annotations

import pytest

from taxi_rsp import native
from taxi_rsp.feeder.reader import NATIVE_ERROR, native_available


@pytest.fixture(autouse=True, params=["native", "pure"])
def feeder_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "pure":
        monkeypatch.setattr(native, "_pure", True)
    else:
        if not native_available():
            pytest.fail(f"the Feeder's native loop is not built ({NATIVE_ERROR}): pip install -e .")
        monkeypatch.setattr(native, "_pure", False)
    return request.param
