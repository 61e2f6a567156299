"""The ``feeder_loop`` fixture: a Feeder test module that imports it runs every test
once on the native loop and once on the pure-Python one (issue 15 §4).

    from feeder_loops import feeder_loop  # noqa: F401  (autouse)

Every ``Feeder`` built without ``native=`` follows ``TAXI_RSP_PURE_PYTHON``, which
the fixture sets or clears. A missing native module fails the native runs instead of
quietly testing the pure loop twice (CI must notice a broken build).
"""

from __future__ import annotations

import pytest

from taxi_rsp.feeder.reader import NATIVE_ERROR, PURE_PYTHON_ENV, native_available


@pytest.fixture(autouse=True, params=["native", "pure"])
def feeder_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "pure":
        monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    else:
        if not native_available():
            pytest.fail(f"the Feeder's native loop is not built ({NATIVE_ERROR}): pip install -e .")
        monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    return request.param
