"""Building the SparkSession the baseline runs on.

One place decides how Spark is started: the driver bound to the loopback address,
UTC, quiet logs, few shuffle partitions (the inputs of a run are small tables), and
the Python workers running this interpreter. On a cluster (``--master spark://…``) the
executors get this package as a zip; the input path must be readable by them too
(shared storage) and their Python needs numpy, pandas and pyarrow. Java is found here too, because a fresh
machine often has ``java`` on PATH but no ``JAVA_HOME``.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from taxi_rsp.errors import UserError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
JAVA_OPTIONS = f"-Duser.timezone=UTC -Dlog4j2.configurationFile={LOG4J_CONFIG}"
# Lines the JVM prints on every start that say nothing about this run.
JVM_NOISE = ("WARNING: Using incubator modules", "Using Spark's default log4j profile",
             "Setting default log level to", "To adjust logging level use")
PROJECT_PACKAGES = ("taxi_rsp", "taxi_rsp.feeder", "taxi_rsp.listener")
_SKIPPED_IN_ZIP = {"__pycache__", "samples"}  # bytecode; the bundled example data (MBs)
JAVA_FIX = ("install a Java 17 runtime (Debian: `apt-get install -y openjdk-17-jre-headless`) "
            "or set JAVA_HOME to its folder")


def find_java_home() -> Path:
    """The Java installation to use: JAVA_HOME if valid, else the one of `java` on PATH."""
    configured = os.environ.get("JAVA_HOME")
    if configured:
        home = Path(configured)
        if (home / "bin" / "java").exists():
            return home
        raise UserError(f"JAVA_HOME={configured} has no bin/java; {JAVA_FIX}")
    java = shutil.which("java")
    if java is None:
        raise UserError(f"Spark needs Java but no `java` is on PATH and JAVA_HOME is unset; {JAVA_FIX}")
    # /usr/bin/java is usually a chain of symlinks into <home>/bin/java.
    return Path(java).resolve().parent.parent


def spark_session(master: str = DEFAULT_MASTER, app_name: str = "taxi-rsp-baseline",
                  shuffle_partitions: int | None = None, driver_memory: str = "2g") -> SparkSession:
    """Return a (possibly already running) SparkSession configured for the baseline;
    ``driver_memory``: of a local master (``TAXI_RSP_SPARK_MEMORY`` at the command line)."""
    os.environ["JAVA_HOME"] = str(find_java_home())
    # Workers must run the interpreter that has this project's dependencies.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):  # else Spark warns that the host name resolves to loopback
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    cores = os.cpu_count() or 2
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions or max(2, 2 * cores)))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.extraJavaOptions", JAVA_OPTIONS)
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
    )
    if master.startswith("local"):
        # A local run keeps its driver on the loopback interface only.
        builder = builder.config("spark.driver.memory", driver_memory)
    try:
        start_quiet_jvm(builder)
        session = builder.getOrCreate()
    except Exception as exc:  # the JVM failed to start: report why in one line
        raise UserError(f"could not start Spark ({master}): {str(exc).splitlines()[0]}; {JAVA_FIX}") from exc
    session.sparkContext.setLogLevel("ERROR")
    _plain_interrupts()
    if not master.startswith("local"):
        # Cluster executors run the checks and recomputes: ship them this package.
        session.sparkContext.addPyFile(str(_package_zip()))
    return session


def _plain_interrupts() -> None:
    """Ctrl-C as a plain KeyboardInterrupt (the CLI prints one line and exits 130).

    PySpark's own SIGINT handler calls into the JVM from inside a py4j call that is
    waiting for it (a reentrant read: two tracebacks), and py4j then logs the interrupt
    with a traceback on the root logger; both are replaced or filtered here. Leaving a
    job running does no harm: the JVM exits with this process."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    root = logging.getLogger()
    if not any(isinstance(f, _Py4jInterruptFilter) for f in root.filters):
        root.addFilter(_Py4jInterruptFilter())
    # py4j's own loggers report the torn-down connections of an interrupted run as ERRORs
    # with tracebacks ("... while shutting down connection"); a real py4j failure still
    # surfaces as the Py4JError the failing call raises.
    logging.getLogger("py4j").setLevel(logging.CRITICAL)


class _Py4jInterruptFilter(logging.Filter):
    """Drops py4j's records about an interrupted call or connection (logged on the root
    logger): "... while sending command." and "... while shutting down connection"."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("py4j" in record.pathname
                    and ("while sending command" in message or "while shutting down connection" in message))


def start_quiet_jvm(builder) -> None:  # noqa: ANN001 - SparkSession.Builder
    """Start Spark's JVM (unless one runs) with its stderr filtered: the JDK's notice about
    incubator modules and log4j's start-up banner are dropped, anything else passes.
    ``launch_gateway(popen_kwargs=…)`` is PySpark's hook for exactly this."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:  # noqa: SLF001 - PySpark's own singleton
        return
    conf = SparkConf(loadDefaults=False).setAll(builder._options.items())  # noqa: SLF001
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    threading.Thread(target=_forward_stderr, args=(gateway.proc.stderr,), daemon=True,
                     name="spark-stderr").start()
    SparkContext._gateway = gateway  # noqa: SLF001
    SparkContext._jvm = gateway.jvm  # noqa: SLF001


def _forward_stderr(stream) -> None:  # noqa: ANN001 - a binary pipe
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        if not any(line.startswith(noise) for noise in JVM_NOISE):
            sys.stderr.write(line)
            sys.stderr.flush()


def _package_zip() -> Path:
    """A zip of the project's packages (``taxi_rsp`` with the ``taxi_rsp.feeder`` and
    ``taxi_rsp.listener`` the engine imports, for `run --spark`), for executors of a
    remote cluster. Data files go in too: the query grammar is read with
    importlib.resources. The two subpackages live in the checkout's ``feeder/`` and
    ``listener/`` folders (pyproject's package-dir), so each goes in under its dotted
    name; in an installed copy they are inside ``taxi_rsp/`` and go in once."""
    import importlib.util
    import tempfile
    import zipfile

    target = Path(tempfile.mkdtemp(prefix="taxi-rsp-")) / "taxi_rsp.zip"
    written: set[str] = set()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in PROJECT_PACKAGES:
            spec = importlib.util.find_spec(name)  # located, not imported (the baseline imports no engine part)
            package = Path(next(iter(spec.submodule_search_locations))).resolve()
            for path in package.rglob("*"):
                inside = path.relative_to(package)
                arcname = Path(*name.split("."), inside).as_posix()
                if path.is_file() and arcname not in written and not _SKIPPED_IN_ZIP.intersection(inside.parts):
                    archive.write(path, arcname)
                    written.add(arcname)
    return target
