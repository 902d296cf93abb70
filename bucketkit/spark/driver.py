"""What bucketkit's Python API asks of the driver, from a classic session or a Spark Connect one.

A classic session reaches the driver's JVM over py4j. A Spark Connect client has no JVM of its own: it
asks through SQL, the one channel Connect offers, and bucketkit's extensions
(``io.bucketkit.spark.DriverCalls``) answer as table functions evaluated on the server's driver in the
client's own session, e.g. ``SELECT * FROM bucketkit_describe('db.t')``. The table functions call the
same JVM code the classic path calls (or, where the classic path runs its rule in Python, tests hold
the two equal: tests/test_connect.py), so a table gets one verdict whichever client asks.

A Connect server without bucketkit's jar and extensions cannot answer: the error says how to start one
(docs/sql.md, Spark Connect).
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator

from bucketkit.errors import BucketkitError, InvalidArgumentError

__all__ = ["is_connect", "jar_class", "load_jar", "has_extensions", "call", "table_function", "default_parallelism", "master", "session_key",
           "refusal", "ServerError"]

SERVER_SETUP = ("start the Spark Connect server with bucketkit's jar and settings (`bucketkit spark-conf` prints "
                "them; docs/sql.md, Spark Connect)")


#: Tasks a scan is packed for from a Connect server without bucketkit's extensions (its parallelism unknown).
FALLBACK_PARALLELISM = 8


class ServerError(BucketkitError):
    """The driver refused a call: its message, as the server gave it (callers re-raise it as what it means)."""


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (no py4j: ``sparkContext``, ``_jvm`` are not there)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


# Per session: bucketkit's JVM classes by name, None for one it cannot reach. Weak keys: a stopped session
# must not be kept alive by the cache.
_JAR_CLASSES: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
# Per Spark context: the class loader bucketkit's jar was added to at first use, and java.lang.Thread (absent: it was
# on the class path from the start, or could not be added; _UNLOADABLE says why not).
_ADDED: dict[str, Any] = {}
_UNLOADABLE: dict[str, str] = {}

#: Set to false (before bucketkit's first use in a session) to keep bucketkit's jar out of a session started without it.
ADD_JAR = "spark.bucketkit.addJar"
#: What a session without bucketkit's JVM part costs, measured (benchmarks/RESULTS.md, "plain session").
WITHOUT_JAR = ("a pruned scan re-hashes its rows in Spark SQL (2-4x the one-bucket floor) and bucketkit.write uses "
               "Spark's own partitioned writer (about 1.2x Spark's INSERT)")


def jar_class(spark: Any, name: str) -> Any | None:
    """bucketkit's JVM class ``io.bucketkit.<name>`` in a classic session's driver (a py4j class), or None: no
    session, a Spark Connect session (no py4j), or bucketkit's jar could not be added. ``name`` is the class's
    name in its Java package under ``io.bucketkit`` (``"read.FileBucketCheck"``, ``"spark.DriverCalls"``;
    docs/architecture.md lists the packages).

    A session started without the jar (``SparkSession.builder.getOrCreate()`` in a notebook, a platform's own
    session) gets it at first use, as Spark's ``ADD JAR`` adds one: on the executors' class path and the
    driver's session class loader (:func:`load_jar`), so ``write``, ``scan`` and ``join`` run as in
    :func:`~bucketkit.spark.session.get_session`'s session. Where it cannot be added, one warning says
    why and what that costs. Looked up once per session."""
    if spark is None or is_connect(spark):
        return None
    classes = _JAR_CLASSES.setdefault(spark, {})
    if name not in classes:
        classes[name] = _lookup(spark, name)
        if classes[name] is None and load_jar(spark):
            classes[name] = _lookup(spark, name)
    elif classes[name] is not None:
        _use_loader(spark)
    return classes[name]


def _lookup(spark: Any, name: str) -> Any | None:
    from py4j.java_gateway import JavaClass

    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return None
    _use_loader(spark)
    found = jvm.io.bucketkit
    for part in name.split("."):
        found = getattr(found, part)
    return found if isinstance(found, JavaClass) else None  # a missing class is a JavaPackage


def _use_loader(spark: Any) -> None:
    """Where the jar was added at run time, py4j's calls from this thread resolve classes through the
    session's class loader that has it (py4j asks the calling JVM thread's context class loader; Spark's
    ``ADD JAR`` sets it on the thread that ran it only)."""
    added = _ADDED.get(session_key(spark))
    if added is not None:
        loader, thread = added  # java.lang.Thread looked up once: a py4j name lookup is a round trip a part
        thread.currentThread().setContextClassLoader(loader)


def load_jar(spark: Any) -> bool:
    """Add bucketkit's jar to a running classic session that lacks it (once per Spark context), as Spark's
    ``ADD JAR`` does: the executors fetch it, the session's class loader (the driver's planning, data source
    look-ups, generated code) loads from it. False, with one warning naming the reason, the setting that
    avoids it and the measured cost, where it cannot be added or ``spark.bucketkit.addJar`` is false."""
    key = session_key(spark)
    if key in _ADDED:
        return True
    if key in _UNLOADABLE:
        return False
    try:
        if spark.conf.get(ADD_JAR, "true").strip().lower() == "false":
            raise BucketkitError(f"{ADD_JAR}=false")
        from bucketkit.jvmbuild import jar_path

        jar = jar_path()
        if jar is None:
            raise BucketkitError("this install has no jar (bucketkit/jars) nor jvm/src to build one")
        # What Spark's SessionResourceLoader.addJar does (executors fetch it; the session's class loader has it),
        # not the session's own resourceLoader(): a Hive session's also adds the jar to the Hive client, and
        # starting that client (its metastore connection) was 3 s of a path table's first scan, for no class
        # bucketkit needs there
        jsession = spark._jsparkSession
        jsession.sparkContext().addJar(str(jar))
        loader = jsession.sharedState().jarClassLoader()
        loader.addURL(spark._jvm.java.io.File(str(jar)).toURI().toURL())
        _ADDED[key] = (loader, spark._jvm.java.lang.Thread)
        _use_loader(spark)
        return True
    except Exception as exc:  # noqa: BLE001 - any failure leaves the session as it was: warn, run without
        import warnings

        reason = _first_line(str(exc)) or type(exc).__name__
        _UNLOADABLE[key] = reason
        warnings.warn(f"bucketkit: could not add its jar to this Spark session ({reason}); without it {WITHOUT_JAR}. "
                      "Start the session with bucketkit.spark.session.configure_builder(SparkSession.builder) (or the settings "
                      "`bucketkit spark-conf` prints) to avoid this", stacklevel=3)
        return False


def table_function(spark: Any, function: str, *args: Any) -> Any:
    """The DataFrame of bucketkit's table function ``function`` for ``args`` (constants, passed as SQL
    parameters: a name or a predicate is never spliced into the statement), analyzed: the function has
    run on the driver.

    Raises:
        InvalidArgumentError: the session's server has no bucketkit extensions (the message says how to start one).
        ServerError: the function refused (its message).
    """
    names = {f"bucketkit_arg{i}": a for i, a in enumerate(args)}
    statement = f"SELECT * FROM {function}({', '.join(':' + n for n in names)})"
    with _refusals(function):
        df = spark.sql(statement, args=names)
        df.schema  # noqa: B018  (analysis runs the function)
    return df


def call(spark: Any, function: str, *args: Any) -> Any:
    """The one row :func:`table_function` ``function`` answers for ``args``."""
    df = table_function(spark, function, *args)
    with _refusals(function):
        return df.collect()[0]


@contextlib.contextmanager
def _refusals(function: str) -> Iterator[None]:
    from pyspark.errors import PySparkException

    try:
        yield
    except PySparkException as exc:
        message = str(exc)
        if "UNRESOLVABLE_TABLE_VALUED_FUNCTION" in message or "UNRESOLVED_ROUTINE" in message:
            raise InvalidArgumentError(f"this Spark session's server does not have bucketkit's extensions "
                                       f"({function} is unknown there): {SERVER_SETUP}") from None
        raise ServerError(_first_line(message)) from None


def _first_line(message: str) -> str:
    """The server's message without the JVM stack trace Connect appends."""
    lines = [ln for ln in message.strip().splitlines() if ln.strip() and not ln.lstrip().startswith("at ")]
    text = lines[0] if lines else message
    return text.split("bucketkit: ", 1)[-1] if "bucketkit: " in text else text


def default_parallelism(spark: Any) -> int:
    """The session's default parallelism (Spark's ``sparkContext.defaultParallelism``)."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    answer = _session(spark)
    if answer is None:  # only packs tasks: Spark's setting if the server has one, else a few per core
        return int(spark.conf.get("spark.default.parallelism", None) or FALLBACK_PARALLELISM)
    return int(answer[0])


def master(spark: Any) -> str:
    """The session's master URL (``local[2]``, ``yarn``, ...)."""
    if not is_connect(spark):
        return str(spark.sparkContext.master)
    answer = _session(spark)
    return str(answer[1]) if answer is not None else ""  # unknown: not taken for a local one


def session_key(spark: Any) -> str:
    """A key for what is asked once per session: its Spark context (classic), its session id (Connect)."""
    return f"connect:{spark.session_id}" if is_connect(spark) else f"classic:{id(spark.sparkContext)}"


_SESSIONS: dict[str, tuple[str, str] | None] = {}


def has_extensions(spark: Any) -> bool:
    """Whether the session has bucketkit's extensions: a classic session's ``spark.sql.extensions`` names them;
    a Connect session's server is asked (once per session)."""
    if not is_connect(spark):
        return "io.bucketkit.spark.BucketkitExtensions" in (spark.conf.get("spark.sql.extensions", "") or "")
    return _session(spark) is not None


def _session(spark: Any) -> tuple[str, str] | None:
    """``bucketkit_session()``'s answer (default parallelism, master), asked once per Connect session;
    None when the server has no bucketkit extensions."""
    key = session_key(spark)
    if key not in _SESSIONS:
        try:
            row = call(spark, "bucketkit_session")
            _SESSIONS[key] = (row[0], row[1])
        except InvalidArgumentError:  # call's error for a server without the extensions
            _SESSIONS[key] = None
    return _SESSIONS[key]


def refusal(exc: Exception) -> str:
    """What the driver said when it refused: a py4j error's Java message (classic), a :class:`ServerError`'s
    text (Connect)."""
    java = getattr(exc, "java_exception", None)
    return str(java.getMessage()) if java is not None else str(exc)


def hadoop_setting(spark: Any, key: str) -> str | None:
    """A Hadoop setting as the session's Spark jobs see it: set in the session (``spark.conf.set(key, ...)``), else
    in its Spark context's Hadoop configuration (``spark.hadoop.<key>`` at start, ``core-site.xml``). None on Spark
    Connect, whose client does not see the server's."""
    if is_connect(spark):
        return None
    value = spark.conf.get(key, None)
    return value if value else spark.sparkContext._jsc.hadoopConfiguration().get(key)


def check_s3_endpoint(spark: Any, uri: str) -> None:
    """:func:`bucketkit.io.check_s3_endpoint` with the session's S3A endpoint for the URI's bucket (a Connect client
    does not see the server's settings: not checked)."""
    from bucketkit.io import check_s3_endpoint as check, s3_bucket

    bucket = s3_bucket(uri)
    if bucket is None or is_connect(spark):
        return
    check(uri, hadoop_setting(spark, f"fs.s3a.bucket.{bucket}.endpoint") or hadoop_setting(spark, "fs.s3a.endpoint"))
