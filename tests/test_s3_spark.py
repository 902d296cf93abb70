"""A table on an S3 store that Spark reaches through Hadoop's S3A settings and bucketkit through pyarrow's: the two
must name one store. A MinIO or Ceph endpoint set in Spark's configuration alone (``fs.s3a.endpoint``) would have
had bucketkit plan, commit and vacuum against AWS's S3 while Spark's jobs read and wrote the store Spark named.

Spark's JVM has no S3A here (no ``hadoop-aws`` in any registry this project reaches), so only what bucketkit does
before a Spark job runs is exercised: the plan of a table on moto's S3 server, and the refusal of a write."""

from __future__ import annotations

import pytest
from support.commit import FLAT, commit_rows
from support.s3 import REGION, s3, s3_server  # noqa: F401

import bucketkit
from bucketkit import io
from bucketkit.errors import InvalidArgumentError

pytestmark = pytest.mark.spark


@pytest.fixture
def minio(spark, s3, tmp_path, monkeypatch):  # noqa: F811
    """A bucketkit table on the S3 server, which the session's S3A settings name as Spark's store."""
    commit_rows(tmp_path / "t", {"": [(k, "x") for k in range(40)]}, spec=FLAT)
    s3.upload(str(tmp_path / "t"), "t")
    for name in io.S3_ENDPOINT_ENV:
        monkeypatch.delenv(name, raising=False)
    spark.conf.set("fs.s3a.endpoint", f"http://{s3.endpoint}")
    yield s3
    spark.conf.unset("fs.s3a.endpoint")


def test_a_store_named_to_spark_alone_is_refused_naming_both_endpoints(spark, minio):
    uri = f"s3a://{minio.path('t')}"
    expected = (rf"Spark reaches bucket {minio.root.split('/')[0]} at http://{minio.endpoint} \(fs.s3a.endpoint\), "
                r"bucketkit's S3 requests \(pyarrow\) go to AWS S3.*Set AWS_ENDPOINT_URL=http://")
    with pytest.raises(InvalidArgumentError, match=expected):
        bucketkit.plan_scan(uri, [("k", "=", 7)], spark=spark)
    df = spark.createDataFrame([(1, "a")], "k long, tag string")
    with pytest.raises(InvalidArgumentError, match=expected):  # before any Spark job or commit
        bucketkit.write(df, "k", 4, path=f"s3a://{minio.path('new')}")
    assert minio.files("new") == {}


def test_with_the_same_store_named_to_both_the_plan_lists_it(spark, minio, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://{minio.endpoint}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    plan = bucketkit.plan_scan(f"s3a://{minio.path('t')}", [("k", "=", 7)], spark=spark)
    uploaded = {rel for rel in minio.files("t") if not rel.startswith((".", "_"))}
    assert len(uploaded) == 4 and len(plan.files) == 1
    assert plan.files[0].rsplit("/", 1)[-1] in {rel.rsplit("/", 1)[-1] for rel in uploaded}
