"""A commit where only the table's own location may be written (issue 48): on a shared warehouse, permissions are
often granted per table location (HDFS ACLs, Ranger or Lake Formation policies), so the directory beside a table
may not be written. On a store that renames directories (a local disk, HDFS), a commit switches the table's
directory with one beside it; where that is refused, it keeps the table's versions inside it, published by a
pointer, and writes nothing outside the table's location. The store here is the local disk, through a filesystem
that refuses every write outside one directory with the error the local disk gives (EACCES), as a user who is
not root meets it (the tests run as root, whom the disk's own permissions do not stop)."""

from __future__ import annotations

import os
import warnings

import pyarrow.fs as pafs
import pytest

from bucketkit.errors import CommitError
from bucketkit.layout.versions import TablePaths, history, live_pointer
from bucketkit.writing.commit import Transaction, recover, settle, vacuum
from support.commit import FLAT, as_counter, read_bucketkit, stage_rows
from support.localfs import LocalHandler

ONE = {"": [(k, "one") for k in range(8)]}
TWO = {"": [(k, "two") for k in range(20, 26)]}


class ConfinedHandler(LocalHandler):
    """The local disk, refusing every write outside ``writable`` (a directory) with ``PermissionError``."""

    type_name = "confined+local"  # renames directories, as the local disk does

    def __init__(self, writable: str) -> None:
        super().__init__()
        self.writable = writable.rstrip("/") + "/"

    def writing(self, path: str) -> None:
        if not (path + "/").startswith(self.writable):
            raise PermissionError(f"[Errno 13] Permission denied: '{path}'")


def confined(root) -> pafs.FileSystem:
    return pafs.PyFileSystem(ConfinedHandler(str(root)))


def commit(root, rows, *, mode="append", fs=None, catalog=None):
    tx = Transaction(str(root), FLAT, mode=mode, filesystem=fs or confined(root), extra={"catalog": catalog})
    tx.begin()
    summary = tx.commit(stage_rows(tx, rows))
    settle()
    return tx, summary


def test_a_table_whose_parent_may_not_be_written_commits_inside_it_and_reads_whole(tmp_path):
    root = tmp_path / "db" / "t"
    root.mkdir(parents=True)
    before = sorted(os.listdir(tmp_path / "db"))
    with pytest.warns(UserWarning, match=r"parent directory may not be written .*Permission denied.*an engine "
                                         r"reading the directory itself .* sees none of its files"):
        tx, _ = commit(root, ONE)
    assert tx.inside and live_pointer(pafs.LocalFileSystem(), str(root))["write_id"] == tx.write_id
    assert read_bucketkit(root) == as_counter(ONE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the table now keeps its versions inside: no second warning
        tx2, _ = commit(root, TWO)
        tx3, _ = commit(root, TWO, mode="overwrite")
    assert tx2.inside and tx3.inside
    assert read_bucketkit(root) == as_counter(TWO)
    assert sorted(os.listdir(tmp_path / "db")) == before == ["t"]  # nothing beside the table, ever
    fs = confined(root)
    paths = TablePaths.at(fs, str(root))
    assert paths.inside and [v.write_id for v in history(fs, paths)] == [tx.write_id, tx2.write_id, tx3.write_id]
    assert recover(str(root), filesystem=fs) == []
    removed = vacuum(str(root), retain=0, filesystem=fs).removed  # every version but the live one
    assert [v.write_id for v in removed] == [tx.write_id, tx2.write_id]
    assert not os.path.exists(paths.version(tx.write_id)) and os.path.isdir(paths.version(tx3.write_id))
    assert read_bucketkit(root) == as_counter(TWO)


def test_a_metastore_tables_commit_goes_inside_without_a_warning(tmp_path):
    root = tmp_path / "db" / "t"
    root.mkdir(parents=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the caller publishes the version in the metastore: nothing to warn of
        tx, _ = commit(root, ONE, catalog="db.t")
    assert tx.inside and tx.published == TablePaths(str(root), True).version(tx.write_id)
    assert sorted(os.listdir(tmp_path / "db")) == ["t"]


def test_a_table_that_keeps_versions_beside_it_fails_clearly_and_changes_nothing(tmp_path):
    root = tmp_path / "db" / "t"
    commit(root, ONE, fs=pafs.LocalFileSystem())  # committed while the parent could be written: beside it
    store = TablePaths(str(root)).store
    assert os.path.isdir(store)
    with pytest.raises(CommitError, match=r"journal .* may not be written .*keeps its versions beside it, in "
                                          + store.replace(".", r"\.")):
        commit(root, TWO, mode="overwrite")
    assert read_bucketkit(root) == as_counter(ONE)
    assert not os.path.exists(os.path.join(root, ".bucketkit.live"))


def test_the_layout_follows_what_the_store_holds(tmp_path):
    """TablePaths.at decides by evidence: a first commit inside that died before its pointer leaves a store
    inside and no pointer; the table is still read and recovered in that layout."""
    fs = pafs.LocalFileSystem()
    root = tmp_path / "t"
    root.mkdir()
    assert not TablePaths.at(fs, str(root)).inside  # a local disk: beside, by default
    (root / ".bucketkit.versions").mkdir()
    assert TablePaths.at(fs, str(root)).inside
