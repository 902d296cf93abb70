"""bucketkit.writing.sqlcommit, the commit process of SQL INSERTs, driven as the JVM drives it (no Spark)."""

from __future__ import annotations

import io
import json
import os
import threading

import pyarrow as pa
import pyarrow.orc as orc

from bucketkit.layout.metadata import TableSpec, write_spec
from bucketkit.writing.sqlcommit import serve

SPEC = TableSpec(("k",), ("int",), 4, bucketing_version=2, columns=(("k", "int"), ("v", "string")))


def talk(lines):
    out = io.StringIO()
    status = serve(io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out)
    return status, [json.loads(x) for x in out.getvalue().splitlines()]


def request(root, spec=SPEC, mode="append"):
    return {"table": "db.t", "location": f"file:{root}", "spec": spec.to_dict(), "mode": mode}


def test_end_of_input_rolls_the_write_back(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    status, replies = talk([request(root)])
    assert status == 0 and replies[-1] == {"aborted": True}
    assert [x for x in os.listdir(tmp_path) if not x.endswith(".lock")] == ["t"]  # no journal, no next version
    assert os.listdir(root) == []


def test_a_catalog_spec_disagreeing_with_bucketkit_metadata_is_an_error(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    write_spec(str(root), SPEC.with_(bucket_count=8))
    status, replies = talk([request(root), {"commit": True}])
    assert status == 1 and replies[0]["error"] == "SpecMismatchError"
    assert "db.t" in replies[0]["message"] and "bucket_count" in replies[0]["message"]


def test_staged_files_are_committed_with_hive_names(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    stdin, to_proc = os.fdopen(r_in, "r"), os.fdopen(w_in, "w")
    from_proc, stdout = os.fdopen(r_out, "r"), os.fdopen(w_out, "w")
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("status", serve(stdin, stdout)))
    worker.start()
    to_proc.write(json.dumps(request(root)) + "\n")
    to_proc.flush()
    staging = json.loads(from_proc.readline())["staging"][len("file://"):]
    os.makedirs(f"{staging}/bucketkit_bucket=2")
    orc.write_table(pa.table({"k": pa.array([7], pa.int32()), "v": ["x"]}), f"{staging}/bucketkit_bucket=2/part-0.orc")
    to_proc.write(json.dumps({"commit": True}) + "\n")
    to_proc.flush()
    done = json.loads(from_proc.readline())
    worker.join(10)
    assert result["status"] == 0 and done["rows"] == 1 and done["files"] == 1 and done["partitions"] == []
    files = [f for f in os.listdir(root) if not f.startswith((".", "_"))]
    assert files == [f"000002_0_{done['write_id']}.orc"]


def test_a_warm_process_whose_driver_ends_exits_quietly():
    assert talk([]) == (0, [])


def test_requests_reaching_outside_the_table_are_refused(tmp_path):
    """Issue 28: whatever the catalog says, the commit touches only the table's directory (and its
    journal beside it). A filesystem root as location, or a static partition path that is not the
    table's own key=value directories, is refused before anything is created."""
    parted = SPEC.with_(partitioned_by=("p",), partition_types=("string",))
    root = tmp_path / "t"
    root.mkdir()
    cases = [({**request(root), "location": "file:/"}, "not a directory of its own"),
             ({**request(root), "location": "file:///"}, "not a directory of its own")]
    for rel in ("../x", "/etc", "p=a/../../x", "q=a", "p=a/q=b", "", "..", "p=a/.."):
        cases.append(({**request(root, parted), "static_partitions": [rel]}, "static partition path"))
    for req, expected in cases:
        before = sorted(os.listdir(tmp_path))
        status, replies = talk([req, {"commit": True}])
        assert status == 1 and replies[0]["error"] == "InvalidArgumentError", (req, replies)
        assert expected in replies[0]["message"] and "db.t" in replies[0]["message"]
        assert sorted(os.listdir(tmp_path)) == before and os.listdir(root) == []
    status, replies = talk([{**request(root, parted), "static_partitions": ["p=a%2F..%2F.."]}])  # escaped: one dir
    assert status == 0 and replies[-1] == {"aborted": True}


def test_an_s3_table_the_jvm_reaches_at_another_store_is_refused_before_anything_is_listed(monkeypatch):
    """The JVM names the S3A endpoint its tasks wrote to (``fs.s3a.endpoint``); the commit, through pyarrow, would go
    to the environment's (here none: AWS's). Refused before a request leaves this process: the bucket is not reached
    (a request to AWS from here would fail with a network error, not this one)."""
    from bucketkit.io import S3_ENDPOINT_ENV

    for name in S3_ENDPOINT_ENV:
        monkeypatch.delenv(name, raising=False)
    req = {**request("/unused"), "location": "s3a://lake/warehouse/t", "s3a_endpoint": "http://minio.lake:9000"}
    status, replies = talk([req, {"commit": True}])
    assert status == 1 and replies[0]["error"] == "InvalidArgumentError"
    assert ("Spark reaches bucket lake at http://minio.lake:9000 (fs.s3a.endpoint), bucketkit's S3 requests (pyarrow) "
            "go to AWS S3") in replies[0]["message"]
