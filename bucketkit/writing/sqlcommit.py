"""The commit half of a Spark SQL ``INSERT`` through bucketkit's catalog: a process the JVM drives.

``INSERT INTO`` / ``INSERT OVERWRITE`` a Hive bucketed table through ``io.bucketkit.spark.BucketkitCatalog``
writes its files with Spark's own ORC/Parquet writers in the tasks (Java, ``BucketWrite``), and
commits them exactly as :func:`bucketkit.write` does: :class:`bucketkit.writing.commit.Transaction` and
:func:`bucketkit.writing.steps.finalize`, so SQL and Python writes share one commit protocol, one naming
and one recovery. The Spark driver starts ``python -m bucketkit.writing.sqlcommit`` and talks to it in JSON
lines over stdin/stdout:

1. request (JVM -> here): ``{"table", "location", "spec": TableSpec.to_dict() fields, "mode":
   "append"|"overwrite", "overwrite_scope": "table"|"partitions", "static_partitions": [relpath],
   "s3a_endpoint": Spark's S3A endpoint for an S3 location (:func:`bucketkit.io.check_s3_endpoint`)}``;
   reply: ``{"staging": <Hadoop URI where the tasks write>, "write_id", "recovered": [...]}``
   after recovering dead writers and beginning the transaction (the journal names this
   process as the owner);
2. ``{"commit": true}`` -> finalize; reply ``{"partitions": [values], "rows", "files", "replaced",
   "write_id"}`` once the new version is live; ``{"abort": true}`` or end of input (the JVM
   died) -> the staged files are discarded.

Any failure replies ``{"error": <bucketkit exception class>, "message": ...}`` and exits 1. The JVM
starts the process early (while Spark runs the query) and may keep one waiting for the next
write; end of input before a request ends it quietly.
Nothing here imports pyspark.
"""

from __future__ import annotations

import json
import posixpath
import sys
from typing import IO, Any

from bucketkit.writing.commit import Transaction, layout_setting
from bucketkit.writing.recovery import recover
from bucketkit.errors import BucketkitError, InvalidArgumentError, SpecMismatchError
from bucketkit.io import check_s3_endpoint, hadoop_to_uri, resolve_filesystem, spark_uri
from bucketkit.layout.metadata import TableSpec, read_spec
from bucketkit.layout.partitions import DEFAULT_PARTITION, parse_partition_path
from bucketkit.writing.steps import STAGED_DATA, WriteOptions, WriteTarget, aborting, finalize, recovered_partitions

__all__ = ["main", "serve"]


def _confined(request: dict[str, Any], root: str, spec: TableSpec) -> None:
    """Refuse a request that would reach outside the table's own directory: a location that is a
    filesystem root (the commit switches the directory whole, its journal and next version beside it),
    or static partition paths that are not ``key=value`` directories of the table's partition columns.

    Raises:
        InvalidArgumentError: naming the table and the path.
    """
    table = request["table"]
    name = posixpath.basename(root.rstrip("/"))
    if not name or name in (".", "..") or posixpath.normpath(root) != root.rstrip("/"):
        raise InvalidArgumentError(f"table {table}: location {request['location']!r} is not a directory of its own "
                                   f"(a filesystem root, or a path with '.'/'..'): bucketkit's commit replaces the "
                                   f"table's directory whole and keeps its journal beside it; give the table a "
                                   f"LOCATION of its own")
    for rel in request.get("static_partitions", ()):
        try:
            keys = list(parse_partition_path(rel)) if rel and not rel.startswith("/") else None
        except InvalidArgumentError:
            keys = None
        if keys != list(spec.partitioned_by):
            raise InvalidArgumentError(f"table {table}: static partition path {rel!r}: expected one key=value "
                                       f"directory per partition column {list(spec.partitioned_by)}, inside the table")


def _target(request: dict[str, Any]) -> tuple[WriteTarget, TableSpec]:
    """The table written and the spec to write with: the catalog's, checked against bucketkit's metadata."""
    location, table = hadoop_to_uri(request["location"]), request["table"]
    check_s3_endpoint(location, request.get("s3a_endpoint"))  # the store Spark's tasks wrote to is the one committed
    fs, root = resolve_filesystem(location)
    spec = TableSpec.from_dict(request["spec"])
    _confined(request, root, spec)
    try:
        known = read_spec(root, fs)
    except BucketkitError:  # no metadata yet: a table Hive, Trino or Spark DDL made
        known = None
    if known is not None:
        spec = spec.with_(naming=known.naming, properties=known.properties)
        # The metastore is the truth for the columns (ALTER TABLE ADD/REPLACE COLUMNS): the record follows it
        # at this commit. How rows are placed must not change under files already written.
        diffs = known.with_(columns=spec.columns).differences(spec)
        if diffs:
            raise SpecMismatchError(
                f"table {table}: the catalog and bucketkit's record in {location} disagree on how rows are placed "
                f"({'; '.join(diffs)}): the files already there were written as the record says. Set the table "
                "back as recorded (ALTER TABLE ... SET TBLPROPERTIES, CLUSTERED BY), or rewrite it whole in the new "
                "layout (bucketkit.write(spark.table(...), ..., mode='overwrite') into a new table, then swap names)")
    return WriteTarget(location, fs, root, spec, table), spec


def _partition_values(values: dict[str, str]) -> dict[str, str | None]:
    return {k: None if v == DEFAULT_PARTITION else v for k, v in values.items()}


def serve(stdin: IO[str], stdout: IO[str]) -> int:
    """Run one write's conversation (see the module docstring); returns the exit status."""
    def reply(message: dict[str, Any]) -> None:
        stdout.write(json.dumps(message) + "\n")
        stdout.flush()

    first = stdin.readline()
    if not first:  # a warm process whose driver ended before any write needed it
        return 0
    try:
        request = json.loads(first)
        target, spec = _target(request)
        options = WriteOptions(request["mode"], request.get("overwrite_scope", "table"))
        layout = layout_setting(request.get("layout"))
        recovered = recover(target.root, filesystem=target.filesystem)
        readd = recovered_partitions(recovered, target.table)
        tx = Transaction(target.root, spec, mode=options.commit_mode, filesystem=target.filesystem,
                         extra={"catalog": target.table, "sql": True}, layout=layout)
        staging = tx.begin()
        with aborting(tx):
            reply({"staging": spark_uri(target.filesystem, f"{staging}/{STAGED_DATA}", location=target.location),
                   "write_id": tx.write_id, "recovered": [str(a) for a in recovered],
                   "recovered_partitions": [_partition_values(p) for p in readd]})
            answer = stdin.readline()
            if not answer or not json.loads(answer).get("commit"):
                tx.abort()
                reply({"aborted": True})
                return 0
        result = finalize(tx, options, target, also_replace=tuple(request.get("static_partitions", ())))
        reply({"write_id": result.write_id, "rows": result.rows, "files": len(result.files),
               "replaced": result.replaced_files,
               "partitions": [_partition_values(p) for p in tx.extra["partitions"]],
               # committed inside the table: the JVM moves the metastore there (io.bucketkit.write.MetastorePublish)
               "published": spark_uri(target.filesystem, tx.published, location=target.location) if tx.inside else None})
        return 0
    except Exception as exc:  # reported to the JVM, which raises it in the INSERT
        kind = type(exc).__name__ if isinstance(exc, BucketkitError) else f"{type(exc).__name__} (unexpected)"
        reply({"error": kind, "message": str(exc)})
        return 1


def main() -> int:
    return serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
