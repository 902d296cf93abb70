"""Creating and configuring SparkSessions for bucketkit.

Every session bucketkit creates (demo, CLI, tests, benchmarks) comes from :func:`get_session`, so
the settings that matter are in one place: workers run the driver's Python, Python filter
push-down is on (bucket pruning in ``spark.read.format("bucketkit")``), the ``bucketkit`` data
sources are registered, and a Hive-enabled session keeps its Derby metastore out of the working
directory.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bucketkit.errors import JvmBuildError
from bucketkit.javacheck import require_java
from bucketkit.jvmbuild import jar_path
from bucketkit.spark.sqlstatus import CATALOG_CLASS, COMPATIBLE_TRANSFORMS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["get_session", "configure", "configure_builder", "server_conf", "BUCKETKIT_CONF", "CATALOG_CONF", "EXTENSIONS_CONF"]

# Runtime settings bucketkit relies on; applied to user sessions too by configure().
BUCKETKIT_CONF = {
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


# The SQL catalog (docs/sql.md): Spark's session catalog wrapped so that Hive bucketed tables report
# their bucketing to the planner, and the storage-partitioned-join settings it relies on.
CATALOG_CONF = {
    "spark.sql.catalog.spark_catalog": CATALOG_CLASS,
    "spark.sql.sources.v2.bucketing.enabled": "true",
    "spark.sql.sources.v2.bucketing.pushPartValues.enabled": "true",
    COMPATIBLE_TRANSFORMS: "true",
    # a join or GROUP BY on keys that include the bucket key ((k, d), (k, v)) uses the bucketing, as
    # Iceberg's storage-partitioned joins do
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    # a join of a bucketed table with a plain one (or one bucketed otherwise) shuffles only the other side,
    # into the bucketed side's buckets
    "spark.sql.sources.v2.bucketing.shuffle.enabled": "true",
    # buckets read by one task (several per task for small tables; N vs kN joins) keep their files' sort
    # order: Spark merges them sorted instead of concatenating them
    "spark.sql.sources.v2.bucketing.preserveOrderingOnCoalesce.enabled": "true",
}

# Static settings bucketkit adds to any already set (comma-separated lists): its planner rules
# (io.bucketkit.spark.BucketkitExtensions: bucketed scans only where a query uses the bucketing).
EXTENSIONS_CONF = {"spark.sql.extensions": "io.bucketkit.spark.BucketkitExtensions"}


# SQL INSERTs through the catalog commit with this Python's bucketkit (python -m bucketkit.writing.sqlcommit).
PYTHON_CONF = "spark.bucketkit.python"


def configure_builder(builder: Any, *, catalog: bool = True) -> Any:
    """Add bucketkit's jar and SQL catalog to a ``SparkSession.builder`` (as deltalake's
    ``configure_spark_with_delta_pip`` does); returns the builder.

    The jar joins any ``spark.jars`` already set on the builder. With ``catalog=False`` only the
    jar is added (the catalog class can then be configured later, or not at all).

    Raises:
        JvmBuildError: the jar is missing and cannot be built (no Java sources, or javac failed).
    """
    return _with_jar(builder, _required_jar(), catalog)


def _required_jar(hint: str = "") -> Any:
    """The jar (built first if its sources changed), or the one error for an install without it."""
    jar = jar_path()
    if jar is None:
        raise JvmBuildError("bucketkit's Spark catalog is missing: this install has neither the jar "
                            "(bucketkit/jars/bucketkit-spark-<x.y>.jar, one per Spark release, which every wheel "
                            "carries) nor jvm/src to build it; reinstall bucketkit from a wheel or a checkout" + hint)
    return jar


def _append(builder: Any, key: str, value: str, sep: str = ",") -> Any:
    """``key`` set to its current value (if any) plus ``value``, ``sep``-separated, once."""
    current = builder._options.get(key) if hasattr(builder, "_options") else None
    items = [v for v in (current or "").split(sep) if v.strip()]
    return builder.config(key, sep.join(items if value in items else [*items, value]))


#: Settings whose value is a list bucketkit adds its item to (and the list's separator).
_LISTS = {"spark.jars": ",", "spark.driver.extraClassPath": os.pathsep, **{k: "," for k in EXTENSIONS_CONF}}


def server_conf(jar: Any = None, *, catalog: bool = True) -> dict[str, str]:
    """Every setting a Spark application needs for bucketkit, as a server is started with them
    (``spark-submit``, ``spark-sql``, ``start-connect-server.sh``, ``start-thriftserver.sh``: ``bucketkit
    spark-conf`` prints them as flags): the jar, on the driver's class path too (threads that swap their
    context class loader — the Thrift server's Hive sessions — must still find the catalog and rules), the
    catalog, the extensions, the commit's Python (this one), the Python workers run (this one: bucketkit's
    scans, joins and writes run there; on a cluster, a Python with bucketkit on every node) and bucketkit's
    runtime settings."""
    jar = str(jar if jar is not None else _required_jar())
    conf = {"spark.jars": jar, "spark.driver.extraClassPath": jar}
    if catalog:
        conf.update({**CATALOG_CONF, **EXTENSIONS_CONF, PYTHON_CONF: sys.executable, **_SERVER_ONLY})
    return conf


#: What only a server started from the command line needs: a session built in Python has its workers' Python
#: from PYSPARK_PYTHON (get_session sets it) and its runtime settings from configure().
_SERVER_ONLY = {"spark.pyspark.python": sys.executable, **BUCKETKIT_CONF}


def _with_jar(builder: Any, jar: Any, catalog: bool) -> Any:
    for key, value in server_conf(jar, catalog=catalog).items():
        if key in _SERVER_ONLY:
            continue
        builder = _append(builder, key, value, _LISTS[key]) if key in _LISTS else builder.config(key, value)
    return builder


def configure(spark: Any) -> Any:
    """Apply bucketkit's runtime settings to an existing session and register its data sources."""
    for key, value in BUCKETKIT_CONF.items():
        spark.conf.set(key, value)
    from bucketkit.spark.datasource import register_data_sources

    register_data_sources(spark)
    return spark


def get_session(
    app_name: str = "bucketkit",
    *,
    master: str = "local[2]",
    hive: bool = True,
    warehouse: str | None = None,
    shuffle_partitions: int = 8,
    log_level: str = "ERROR",
    conf: dict[str, str] | None = None,
    catalog: bool = True,
) -> SparkSession:
    """Get (or create) a SparkSession configured for bucketkit.

    Args:
        app_name: Spark application name.
        master: Spark master; ``local[2]`` by default.
        hive: enable Hive support (catalog tables, Spark's Hive-bucketed writer). The embedded
            Derby metastore lives in ``warehouse``'s parent unless Spark is configured for a remote
            metastore (``hive.metastore.uris`` in ``conf``).
        warehouse: ``spark.sql.warehouse.dir``; a fresh temporary directory by default.
        shuffle_partitions: ``spark.sql.shuffle.partitions``.
        log_level: Spark's log level once started.
        conf: extra Spark settings (they win over bucketkit's).
        catalog: wrap the session catalog with bucketkit's (``CATALOG_CONF``; docs/sql.md), so
            Spark SQL plans Hive bucketing; the jar is on the classpath either way.

    Raises:
        JavaNotFoundError: no Java 17+ runtime (one clear line instead of a Py4J trace).
        JvmBuildError: ``catalog=True`` and no catalog can be had: the jar is missing (and no
            ``jvm/src`` to build it), targets another Spark, or ``getOrCreate`` returned a running
            session started without it. Never a session silently without the catalog.
    """
    require_java()
    # Workers must run this very interpreter (the virtualenv's, with pyarrow and bucketkit).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    made = None
    if warehouse is None:
        made = tempfile.mkdtemp(prefix="bucketkit-spark-")
        warehouse = os.path.join(made, "warehouse")
    derby_home = os.path.dirname(os.path.abspath(warehouse))
    log_config = Path(__file__).with_name("log4j2.properties")
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.warehouse.dir", os.path.abspath(warehouse))
        .config("spark.driver.extraJavaOptions",
                f"-Dderby.system.home={derby_home} -Dlog4j2.configurationFile={log_config.as_uri()}")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
    )
    settings = {**BUCKETKIT_CONF, **(conf or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    # once: it digests jvm/src (and compiles when a source changed)
    jar = _required_jar(", or pass catalog=False for a session without Spark SQL support") if catalog else jar_path()
    if jar is not None:  # bucketkit's JVM part, beside any jars the caller adds
        builder = _with_jar(builder, jar, catalog)
        for key in (CATALOG_CONF.keys() | {PYTHON_CONF}) & (conf or {}).keys():  # the caller's settings win
            builder = builder.config(key, conf[key])
    if hive:
        builder = builder.enableHiveSupport()
    spark = builder.getOrCreate()
    used = str(spark.conf.get("spark.sql.warehouse.dir", "")).removeprefix("file://").removeprefix("file:")
    if made is not None and os.path.normpath(used) != os.path.abspath(warehouse):
        shutil.rmtree(made, ignore_errors=True)  # getOrCreate returned a running session, with a warehouse of its own
    spark.sparkContext.setLogLevel(log_level)
    if catalog:
        _require_catalog(spark)
    return configure(spark)


def _require_catalog(spark: Any) -> None:
    """Refuse a session that should have bucketkit's catalog and planner rules and has not
    (``getOrCreate`` returned a session started without them: it copies the builder's settings onto
    the running session, but its planner rules, ``spark.sql.extensions``, were fixed at start)."""
    state = spark._jsparkSession.sessionState()
    catalog = state.catalogManager().v2SessionCatalog().getClass().getName()
    rules = [state.columnarRules().apply(i).getClass().getName() for i in range(state.columnarRules().size())]
    extensions = EXTENSIONS_CONF["spark.sql.extensions"]
    if catalog != CATALOG_CONF["spark.sql.catalog.spark_catalog"] or not any(r.startswith(extensions) for r in rules):
        raise JvmBuildError(f"this SparkSession was started without bucketkit's catalog and planner rules (session "
                            f"catalog {catalog}; spark.sql.extensions without {extensions}): "
                            f"SparkSession.builder.getOrCreate() returned a session already running, whose "
                            f"static settings cannot change. Stop it first (spark.stop()), start it with "
                            f"bucketkit.configure_builder(SparkSession.builder), or pass catalog=False")
