"""An index in object storage: ``--index s3://bucket/path`` against an S3-compatible server.

The server is moto's, in server mode on loopback (a real HTTP server speaking the S3 API,
started here on a free port): Lance, LanceDB and pyarrow talk to it as to any S3 endpoint,
with the credentials and the endpoint from the usual environment variables. The commands run
in process (``ragloom.cli.main``): what is tested is the store, not the entry point.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ragloom_text")
pytest.importorskip("ragloom_semantic")
pytest.importorskip("ragloom_lancedb")
pytest.importorskip("moto.server")

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample-docs"
BUCKET = "ragloom-index"

pytestmark = pytest.mark.xdist_group("lancedb-s3")


#: Every request the server answered: (method, key or listed prefix, query string).
REQUESTS: list[tuple[str, str, str]] = []


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """moto's S3 server on loopback (its own WSGI app, as ``moto_server`` runs it), noting
    each request in :data:`REQUESTS`."""
    import logging
    import threading
    from urllib.parse import parse_qs

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    app = DomainDispatcherApplication(create_backend_app)

    def noted(environ: dict[str, object], start_response: object) -> object:
        query = str(environ.get("QUERY_STRING", ""))
        key = str(environ.get("PATH_INFO", "")).lstrip("/").partition("/")[2]
        if environ["REQUEST_METHOD"] == "GET" and "list-type" in query:
            key = parse_qs(query).get("prefix", [""])[0]
        REQUESTS.append((str(environ["REQUEST_METHOD"]), key, query))
        return app(environ, start_response)

    server = make_server("127.0.0.1", 0, noted, True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture
def s3(endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> object:
    """A fresh bucket on the server, and the environment that points clients at it."""
    import boto3

    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield client
    listed = client.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    for item in listed:
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


def _keys(client: object) -> list[str]:
    listed = client.list_objects_v2(Bucket=BUCKET).get("Contents", [])  # type: ignore[attr-defined]
    return sorted(item["Key"] for item in listed)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from ragloom.cli import main

    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_ingest_sync_search_and_info_round_trip_through_an_s3_bucket(
    s3: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragloom_lancedb import LanceDBStore

    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE, docs)
    index = f"s3://{BUCKET}/teams/wiki"

    status, out, err = _run(capsys, "index", "info", "--index", index, "--json")
    assert status == 0, err
    assert json.loads(out)["exists"] is False

    status, out, err = _run(capsys, "ingest", str(docs), "--index", index, "--no-cache", "--json")
    assert status == 0, err
    first = json.loads(out)
    assert first["documents"] >= 6 and first["chunks"] > 0
    keys = _keys(s3)
    # the tables and the root record are objects in the bucket, nothing is in the local folder
    assert "teams/wiki/ragloom-index.json" in keys
    assert any(k.startswith("teams/wiki/chunks.lance/_versions/") for k in keys)
    assert any(k.startswith("teams/wiki/chunks_documents.lance/") for k in keys)
    assert not (tmp_path / "s3:").exists()
    record = json.loads(s3.get_object(  # type: ignore[attr-defined]
        Bucket=BUCKET, Key="teams/wiki/ragloom-index.json"
    )["Body"].read())
    assert record["root"] == str(docs)  # absolute: a bucket is no folder beside the files
    assert record["embedder"]["name"]

    # one file edited, one removed: --sync writes the one and deletes the other
    (docs / "wordcount.py").unlink()
    guide = docs / "guides" / "caching.md"
    guide.write_text(
        guide.read_text(encoding="utf-8")
        + "\n\n## Buckets\n\nThe zanzibar quokka index lives in object storage.\n",
        encoding="utf-8",
    )
    status, out, err = _run(
        capsys, "ingest", str(docs), "--index", index, "--sync", "--no-cache", "--json"
    )
    assert status == 0, err
    second = json.loads(out)
    assert second["deleted"] == 1 and second["indexed"] == 1, second

    with LanceDBStore(index) as store:
        prints = store.fingerprints()
        assert "wordcount.py" not in prints and "guides/caching.md" in prints
        assert store.location == index and store.path is None
        found = store.search(text="zanzibar quokka", top_k=1)
        assert found and found[0].chunk.parent_id == "guides/caching.md"
        text = (docs / "guides" / "caching.md").read_text(encoding="utf-8")
        chunk = found[0].chunk
        assert text[chunk.start : chunk.end] == chunk.content

    status, out, err = _run(
        capsys, "search", "Where does the zanzibar quokka index live?", "--index", index,
        "--json",
    )
    assert status == 0, err
    passages = json.loads(out)["passages"]
    assert passages[0]["document_id"] == "guides/caching.md"

    status, out, err = _run(capsys, "index", "info", "--index", index, "--json")
    assert status == 0, err
    info = json.loads(out)
    assert info["exists"] is True and info["location"] == index
    assert info["documents"] == first["documents"] - 1
    assert info["root"] == str(docs)
    assert info["check"]["ok"] is True

    status, out, err = _run(capsys, "index", "optimize", "--index", index)
    assert status == 0, err
    status, out, err = _run(capsys, "index", "check", "--index", index)
    assert status == 0, err + out


def test_a_missing_bucket_or_a_bad_uri_is_a_clear_error(
    s3: object, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _run(capsys, "search", "cache", "--index", f"s3://{BUCKET}/nothing-here")
    assert status == 2, err
    assert "no index at s3://" in err and "Traceback" not in err
    status, _, err = _run(capsys, "index", "info", "--index", "ftp://host/index")
    assert status == 2, err
    assert "object storage" in err and "Traceback" not in err
    status, _, err = _run(
        capsys, "ingest", str(SAMPLE / "faq.html"), "--index", "s3://no-such-bucket/ix",
        "--no-cache",
    )
    assert status != 0 and "Traceback" not in err
    assert "s3://no-such-bucket/ix" in err


def test_parts_written_elsewhere_are_committed_or_removed_in_a_bucket(s3: object) -> None:
    """Parts (Lance fragments written where a pipeline runs) in object storage: a part
    discarded before the table's first commit leaves no object; a committed one is read back."""
    from ragloom.models import Document
    from ragloom_lancedb import LanceDBStore

    def part(store: LanceDBStore, doc: str) -> object:
        writer = store.part_writer()
        assert writer.machine_local is False  # any machine can write a bucket
        chunk = Document(
            id=f"{doc}#0", content=f"{doc} text", parent_id=doc, index=0, start=0, end=6,
            embedding=[1.0, 0.0, 0.0],
        )
        return writer.write([(doc, [chunk])])

    index = f"s3://{BUCKET}/parts"
    with LanceDBStore(index) as store:
        store.discard_parts([part(store, "a")])
        assert not any(k.startswith("parts/chunks.lance/") for k in _keys(s3))
        store.commit_parts({"b": "b1"}, [part(store, "b")])
        assert store.fingerprints() == {"b": "b1"}
        assert [c.id for c in store.chunks(["b"])["b"]] == ["b#0"]


def _doc(n: int, words: str = "text") -> object:
    from ragloom.models import Document
    from ragloom.stores import IndexedDocument

    content = f"{words} {n}"
    chunk = Document(
        id=f"d{n}#0", content=content, parent_id=f"d{n}", index=0, start=0, end=len(content),
        embedding=[1.0, float(n), 0.5],
    )
    return IndexedDocument(f"d{n}", f"f{n}", [chunk])


def _listings(since: int, table: str) -> int:
    """Listings of ``table``'s versions among the requests since ``since``."""
    return sum(
        1 for method, key, query in REQUESTS[since:]
        if method == "GET" and "list-type" in query and key.endswith(f"/{table}.lance/_versions/")
    )


def test_a_writer_of_a_bucket_index_lists_versions_only_to_commit_and_folds_lightly(
    s3: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In object storage a check for newer versions lists every version of the table: the
    handle that writes (holding the writer lock) lists them only where Lance commits, joins
    the documents table's small files every few commits instead of reading them all at each
    write, and folds without looking for old versions to remove (which reads every version's
    manifest: LanceDB's optimize() of the documents table did, at every fold)."""
    import lance
    from ragloom_lancedb import LanceDBStore
    from ragloom_lancedb import store as store_module
    from ragloom_lancedb._place import storage_options

    monkeypatch.setattr(store_module, "_OPTIMIZE_ROWS", 1 << 30)  # no fold until asked
    index = f"s3://{BUCKET}/lists"
    options = storage_options(index)

    def dataset(table: str) -> object:
        return lance.dataset(f"{index}/{table}.lance", storage_options=options)

    tables = ("chunks", "chunks_documents")
    with LanceDBStore(index) as store:
        store.write([_doc(0)])
        before = {t: dataset(t).version for t in tables}
        since = len(REQUESTS)
        for n in range(1, 6):
            store.write([_doc(n)])
        listed = {t: _listings(since, t) for t in tables}
        commits = {t: dataset(t).version - before[t] for t in tables}
        assert commits["chunks"] == 5 and commits["chunks_documents"] >= 10
        # Lance lists them to commit (and to join files: once here), nothing checks before
        # each read (before: 13 listings of the documents table and 7 of the chunks table
        # per write)
        for table in tables:
            assert 0 < listed[table] <= commits[table] + 1, (table, listed, commits)
        assert len(dataset("chunks_documents").get_fragments()) <= 4  # 6 before

        monkeypatch.setattr(store_module, "_OPTIMIZE_ROWS", 1)  # the next write folds
        since = len(REQUESTS)
        store.write([_doc(6)])
        manifests = [
            key for method, key, _ in REQUESTS[since:]
            if method == "GET" and key.endswith(".manifest")
        ]
        assert len(manifests) <= 6, manifests  # 19 before (every version of both tables)
        assert store.fingerprints() == {f"d{n}": f"f{n}" for n in range(7)}
        assert [h.chunk.id for h in store.search(text="text 6", top_k=7)][:1] == ["d6#0"]
        assert store.check(full=True).ok


def test_a_store_in_a_bucket_has_lance_upload_its_files_in_one_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Lance reads the size from which it uploads a file in parts from the environment only:
    a store in object storage sets it (a batch's data file is then one PUT, not a multipart
    upload of four requests or more), unless the user did; a local one leaves it alone."""
    from ragloom_lancedb import LanceDBStore
    from ragloom_lancedb._place import UPLOAD_SIZE

    monkeypatch.delenv("LANCE_INITIAL_UPLOAD_SIZE", raising=False)
    LanceDBStore(tmp_path / "local")
    assert "LANCE_INITIAL_UPLOAD_SIZE" not in os.environ
    LanceDBStore(f"s3://{BUCKET}/uploads")
    assert os.environ["LANCE_INITIAL_UPLOAD_SIZE"] == str(UPLOAD_SIZE)
    monkeypatch.setenv("LANCE_INITIAL_UPLOAD_SIZE", str(8 << 20))
    LanceDBStore(f"s3://{BUCKET}/uploads")
    assert os.environ["LANCE_INITIAL_UPLOAD_SIZE"] == str(8 << 20)


def test_a_failed_write_to_a_bucket_is_rolled_back(
    s3: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's tables, reopened without version checks, still return to their versions
    before a write that fails: the index is as it was, for this handle and for a reader."""
    from ragloom.models import Document
    from ragloom.stores import IndexedDocument, StoreError
    from ragloom_lancedb import LanceDBStore

    index = f"s3://{BUCKET}/rollback"
    with LanceDBStore(index) as store:
        store.write([_doc(0, "first"), _doc(1, "first")])

        def crash(*_args: object, **_kwargs: object) -> None:
            raise OSError("disk quota exceeded")

        monkeypatch.setattr(store._chunks, "add", crash)  # after the old chunks were deleted
        content = "second 0"
        chunk = Document(
            id="d0#0", content=content, parent_id="d0", index=0, start=0, end=len(content),
            embedding=[0.0, 1.0, 0.0],
        )
        with pytest.raises(StoreError, match="rolled back"):
            store.write([IndexedDocument("d0", "g0", [chunk])])
        assert store.fingerprints() == {"d0": "f0", "d1": "f1"}
        assert [c.content for c in store.chunks(["d0"])["d0"]] == ["first 0"]
    with LanceDBStore(index) as reader:
        assert reader.fingerprints() == {"d0": "f0", "d1": "f1"}
        assert reader.check().ok
