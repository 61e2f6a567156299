"""The package list, which pyproject.toml cannot express: every package found under
``taxi_rsp/``, plus the ``feeder/`` and ``listener/`` folders installed as
``taxi_rsp.feeder`` and ``taxi_rsp.listener`` (pyproject's package-dir). Everything
else about the distribution is in pyproject.toml."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["taxi_rsp", "taxi_rsp.*"]), "taxi_rsp.feeder", "taxi_rsp.listener"])
