"""Apache Hudi tables for tests: hudi-rs's own test tables (../shared/data/engine-files/hudi, unzipped into
a temporary directory), and bucket-index tables laid out as Hudi's writer lays them out.

No Hudi-written bucket-index table is available here, so :func:`bucket_index_table` builds one from a real
Hudi table written by Spark + Hudi (v8_nonpartitioned, copy-on-write): its ``.hoodie/`` timeline and its
base file's schema are kept, its rows are replaced by generated ones, each placed in the file group of
bucket ``(List<String>.hashCode() & Integer.MAX_VALUE) % n`` of its record key, the hash computed by Java's
own ``java.util.List.hashCode`` through the JVM (never by bucketkit), in files named as Hudi's bucket index
names them (``00000005-<uuid>-0_<token>_<instant>.parquet``).
"""

from __future__ import annotations

import os

import pytest

from benchmarks.hudi_data import bucket_index_table as build
from benchmarks.hudi_data import unzip as unzip_table
from tests.support.engine import ENGINE

HUDI = os.path.join(ENGINE, "hudi")
needs_hudi = pytest.mark.skipif(not os.path.isdir(HUDI), reason="../shared/data/engine-files/hudi is absent "
                                "(hudi-rs's test tables live outside the repository)")
try:
    import hudi  # noqa: F401
    HAVE_HUDI = True
except ImportError:
    HAVE_HUDI = False
needs_hudi_rs = pytest.mark.skipif(not HAVE_HUDI, reason="the optional hudi package (bucketkit[hudi]) is absent")


def unzip(rel: str, into: str) -> str:
    """Unzip ``<hudi>/<rel>.zip`` into ``into`` (once) and return the table's base path."""
    return unzip_table(HUDI, rel, into)


def java_list_hash(jvm, gateway, strings) -> int:
    """``List<String>.hashCode()`` of a ``java.util.ArrayList`` of ``strings``, by Java itself."""
    values = jvm.java.util.ArrayList()
    for s in strings:
        values.add(s)
    return values.hashCode()


def hudi_bucket_by_java(jvm, gateway, key: str, n: int) -> int:
    """Hudi's ``BucketIdentifier.getBucketId``: ``(List.of(key).hashCode() & Integer.MAX_VALUE) % n``, hashed by Java."""
    return (java_list_hash(jvm, gateway, [key]) & 0x7FFFFFFF) % n


def bucket_index_table(spark, template: str, target: str, ids, n: int) -> str:
    """A copy-on-write bucket-index table of ``n`` buckets on record key ``id`` at ``target``, one row per id,
    each placed by Java's own hash (:func:`hudi_bucket_by_java`), built from the unzipped Hudi table ``template``."""
    jvm, gateway = spark.sparkContext._jvm, spark.sparkContext._gateway
    return build(template, target, ids, lambda k: hudi_bucket_by_java(jvm, gateway, str(k), n))
