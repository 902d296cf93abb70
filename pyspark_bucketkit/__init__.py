"""``spark.read.format("bucketkit")`` in every Spark session where bucketkit is installed.

Spark 4 looks for Python data sources in the importable top-level modules whose names start with
``pyspark_`` and registers their ``DefaultSource`` (a ``pyspark.sql.datasource.DataSource``) in
every session (pyspark's ``sql/worker/lookup_data_sources.py``, run on the first data source
lookup), so no ``bucketkit.configure(spark)`` is needed for the format.

That source reads every bucket: Spark refuses a reader that implements ``pushFilters`` in a session
where ``spark.sql.python.filterPushdown.enabled`` is false (the default), and a data source cannot
see the session's settings. Spark still applies every filter, so the rows are the same; bucket
pruning comes with ``bucketkit.configure(spark)`` (or ``get_session()``), which turns push-down on
and registers the pruning source under the same name (a session's own registration wins).
"""

from pyspark.sql.datasource import DataSourceReader

from bucketkit.spark.datasource import BucketkitDataSource, BucketkitReader

__all__ = ["DefaultSource"]


class WholeTableReader(BucketkitReader):
    """``BucketkitReader`` without filter push-down: plans every bucket of the selected table."""

    pushFilters = DataSourceReader.pushFilters  # Spark's own default: no filter is pushed

    @classmethod
    def like(cls, reader: BucketkitReader) -> "WholeTableReader":
        """The same reader (table, schema, options), minus push-down."""
        whole = cls.__new__(cls)
        whole.__dict__.update(reader.__dict__)
        return whole


class DefaultSource(BucketkitDataSource):
    """The ``bucketkit`` format as Spark registers it by itself (see the module docstring)."""

    def reader(self, schema):
        reader = super().reader(schema)
        if {k.lower(): v for k, v in self.options.items()}.get("push_filters", "").lower() == "true":
            return reader  # the JVM catalog's ACID reads say so where the session has push-down on
        return WholeTableReader.like(reader)
