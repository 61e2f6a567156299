"""What pyproject.toml cannot express: the package list - every package found under
``taxi_rsp/``, plus the ``feeder/`` and ``listener/`` folders installed as
``taxi_rsp.feeder`` and ``taxi_rsp.listener`` (pyproject's package-dir) - and the
Feeder's native loop, ``taxi_rsp.feeder._native`` (Cython, issue 15 §4).

The extension is optional: without Cython (a build without build isolation) or a C
compiler the install still succeeds and the Feeder runs its pure-Python loop, which is
the reference anyway; ``tests/test_feeder_native.py`` fails in such a dev install so a
broken build does not go unnoticed. Everything else about the distribution is in
pyproject.toml.
"""

from setuptools import Extension, find_packages, setup


def native_extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:  # no Cython: the pure-Python Feeder only
        return []
    extensions = cythonize([Extension("taxi_rsp.feeder._native", ["feeder/_native.pyx"])],
                           language_level=3, quiet=True)
    for extension in extensions:  # (cythonize drops the flag when given it)
        extension.optional = True  # a failed compile warns; the install goes on
    return extensions


setup(
    packages=[*find_packages(include=["taxi_rsp", "taxi_rsp.*"]), "taxi_rsp.feeder", "taxi_rsp.listener"],
    ext_modules=native_extensions(),
)
