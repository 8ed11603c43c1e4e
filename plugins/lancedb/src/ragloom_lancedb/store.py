"""``LanceDBStore``: chunks and their vectors in an embedded LanceDB directory, no server."""

from __future__ import annotations

import json
import math
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from ragloom.errors import InvalidInputError
from ragloom.models import Document
from ragloom.stores import (
    IndexedDocument,
    ScoredChunk,
    SearchMode,
    Store,
    StoreBusyError,
    StoreCheck,
    StoreError,
    StoreInfo,
    StorePart,
)

from ._imports import import_lancedb
from ._parts import Fragments, FragmentWriter
from ._place import (
    ObjectFolder,
    remote_uri,
    single_uploads,
    storage_options,
    writer_lock_path,
)
from ._rows import CHUNK_COLUMNS, FORMAT, FORMAT_KEY, FORMAT_PREFIX, chunk_rows, chunk_schema
from ._threads import use_every_cpu
from ._where import condition_sql, sql_string

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["LanceDBStore"]

_FORMAT_KEY = FORMAT_KEY
_FORMAT = FORMAT
_FORMAT_PREFIX = FORMAT_PREFIX
_CHUNK_COLUMNS = CHUNK_COLUMNS
#: The column of the full-text index.
_TEXT_COLUMN = "search_text"
_RESULT_COLUMNS: list[str] = [
    c for c in _CHUNK_COLUMNS if c not in ("where_tokens", "vector", "search_text")
]

class _Snapshot(NamedTuple):
    """What searches read through Lance (see ``LanceDBStore._snapshot``)."""

    #: The documents table's version (-1: read mid-write, to be replaced at the next search).
    version: int
    documents: Any
    chunks: Any
    #: The approximate vector index (``None``: none).
    vector_index: _VectorIndex | None
    #: Whether the full-text index exists.
    has_text_index: bool
    #: The vector dimension (``None``: no vector column of fixed size).
    dimension: int | None


class _VectorIndex(NamedTuple):
    """The approximate vector index, as its name tells: its partitions, and the bits per
    dimension of its quantized vectors (RaBitQ), whose candidates a search ranks again by
    exact distance; 0: an index of exact vectors (IVF_FLAT), as older versions built."""

    partitions: int
    bits: int

    @property
    def quantized(self) -> bool:
        return self.bits > 0


_QUANTIZED_NAME = re.compile(r"(?:(\d+)b)?(\d+)")


def _vector_index_of(name: str) -> _VectorIndex | None:
    """The vector index that ``name`` names (``vector_ivfrq<B>b<N>``; ``vector_ivfrq<N>``,
    one bit, or ``vector_ivf<N>``, exact, as older versions built), else ``None``."""
    rest = name.removeprefix(_VECTOR_INDEX_PREFIX)
    if rest == name:
        return None
    if not rest.startswith(_QUANTIZED):
        return _VectorIndex(int(rest), 0) if rest.isdigit() else None
    parsed = _QUANTIZED_NAME.fullmatch(rest.removeprefix(_QUANTIZED))
    if parsed is None:
        return None
    bits, partitions = parsed.groups()
    return _VectorIndex(int(partitions), int(bits) if bits else 1)


#: A found chunk: a key naming its row (the Lance row id, or its document's and its own id
#: where LanceDB reads), the chunk (``None`` until its row is read), its score.
_Found = tuple[object, Document | None, float]
_DOCUMENT_COLUMNS = ("document_id", "fingerprint", "chunks")

#: A document whose write or delete began and did not finish reports this fingerprint, which
#: equals no real one (those must not be empty): the next ingest writes it again.
UNFINISHED = ""

_IN_LIST = 2000  # document ids per ``IN (...)`` predicate
_READ_BATCH = 16_384  # rows per batch where a whole column is read
# Folding joins the small files of recent writes into files of at most _FRAGMENT_ROWS rows and
# adds their rows to the indexes; text search reads rows that are not in the full-text index one
# by one (about 10 ms per 1,000 rows). A write folds once the writes since the last fold add up
# (rows, plus _COMMIT_ROWS per commit) to _OPTIMIZE_ROWS. What a fold does is bounded by what
# was written since the last one, never by the table: files already _FRAGMENT_ROWS long are not
# rewritten (Lance's compaction holds a whole output file: one of 80k rows of 256 dimensions
# peaked 80 MB above one of 20k, one of 10k rows stayed flat), and the new rows go into new
# segments of the indexes instead of being merged into the old ones (merging rewrites the whole
# full-text index: +180 MB to add 20k rows to 160k, +100 MB as a new segment). Merging the
# segments and the approximate vector index (which reads every vector) are left to optimize(),
# which ingest never calls. Close folds when the index misses more than _FOLD_TAIL rows, so that
# re-ingesting a few files does not fold.
_OPTIMIZE_ROWS = 100_000
_OPTIMIZE_COMMITS = 200
_COMMIT_ROWS = _OPTIMIZE_ROWS // _OPTIMIZE_COMMITS
_FRAGMENT_ROWS = 10_000
#: The files ``optimize()`` joins the table into (folds leave files of about _FRAGMENT_ROWS
#: rows). A search reads its rows by id, and reading rows spread over many files costs about
#: 0.1 ms per file touched (a quantized vector search reads its candidates' vectors): on a
#: million chunks, 10k-row files made a vector search 11.3 ms, 131k-row ones 7.5 ms. Larger
#: files gained no more (one file of a million rows: 7.9 ms) and made the join's peak memory
#: grow (968 MB against 1,121 MB for the million rows).
_OPTIMIZED_FRAGMENT_ROWS = 1 << 17
_FOLD_CACHE = 16 << 20
_FOLD_TAIL = 2_000
#: Rows of committed parts added by one ``Append`` at the most (a fold may follow each).
_PART_GROUP_ROWS = _OPTIMIZE_ROWS // 2
#: Chunk rows from which a fold builds an approximate vector index (IVF, exact distances inside
#: the partitions it probes): an exact search reads every vector, ~40 ms per 100k of 256
#: dimensions; the index reads about a quarter of them, with ~0.98 recall@10 of the exact one.
_VECTOR_INDEX_ROWS = 50_000
#: Commits to the documents table after which a store in object storage joins its small
#: files between folds (see ``_fold_documents``; a request per file read at each write).
_DOCUMENTS_FOLD_COMMITS = 8
_VECTOR_INDEX_PREFIX = "vector_ivf"
#: What follows the prefix in the name of a quantized index (IVF_RQ: RaBitQ); an index named
#: without it (older versions) holds exact vectors (IVF_FLAT).
_QUANTIZED = "rq"
#: Bits per dimension of the quantized vectors. On a million chunks, with the asks of
#: bench_scale's questions as queries, one bit (as older versions built) found 0.846 of the
#: exact top 10 among the 100 candidates ranked again (0.956 among 500, at +45 % CPU): the
#: candidates, not the partitions read, were what it missed. Four bits found 0.983 among 100,
#: at the same cost (128 bytes a vector of 256 dimensions, against 32).
_VECTOR_BITS = 4
#: Candidates of a search of the quantized index that are ranked again by their exact
#: distance: at least twice the results the search shows, at least the length of the list it
#: asks for, and at least this many. The results and their scores are then those of exact
#: vectors, among the candidates the quantized ones found. On a million chunks with the asks
#: of bench_scale's questions, four bits found 0.977 of the exact top 10 among 30, 50 or 100
#: candidates alike; a hybrid search's list of 50 (of which it shows 10 or fewer) found the
#: same top 10 from 50 candidates as from 100, at 40 % less CPU.
_REFINE_CANDIDATES = 50
#: The same for an index of one bit per dimension (older versions), which ranks its
#: candidates more loosely (0.846 of the exact top 10 among 100).
_REFINE_CANDIDATES_ONE_BIT = 100
#: Found rows kept read, by row id, while searches read the same version of the table: a
#: question's searches find many of the same chunks (its asks', the whole question's, the
#: routing probes': 40 % of the rows read on the benchmark's questions), and reading a row by
#: its id costs about 0.15 ms.
_ROWS_KEPT = 4096


#: The file in the store's directory that a writer holds locked (``flock``) while it writes.
LOCK_FILE = "ragloom-writer.lock"
#: The file in the store's directory holding :meth:`LanceDBStore.properties` (JSON).
PROPERTIES_FILE = "ragloom-index.json"
#: The file (or object) beside the tables holding :meth:`LanceDBStore.file_states` (JSON).
FILE_STATES_FILE = "ragloom-files.json"
_FILE_STATES_FORMAT = "ragloom/file-states"
#: Seconds a writer waits for another one by default.
LOCK_TIMEOUT = 60.0


#: A source location LanceDB appends to its errors (``, /path/to/file.rs:224:20``).
_RUST_LOCATION = re.compile(r",\s*/\S+\.rs:\d+:\d+\s*$")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    message = _RUST_LOCATION.sub("", text[0]) if text else type(exc).__name__
    return message if len(message) <= 300 else message[:297] + "..."


def _release_memory() -> None:
    """Hand the C heap's free pages back to the OS (glibc's ``malloc_trim``; nothing elsewhere).

    LanceDB's worker threads allocate from glibc arenas of their own; what a fold frees there
    stays in the process (counted in its RSS) and is not reused by other threads' arenas, so
    without this the process grows by a few hundred MB over a large ingest."""
    global _TRIM
    if _TRIM is None:
        _TRIM = False
        try:
            import ctypes
            import ctypes.util

            name = ctypes.util.find_library("c")
            if name is not None:
                _TRIM = getattr(ctypes.CDLL(name), "malloc_trim", False)
        except (OSError, AttributeError):
            pass
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None


def _mode_allows_writes(path: Path) -> bool:
    """Whether ``path`` may be written: the OS says so and, for root (whom the OS lets write
    anywhere), its permission bits leave some write bit on."""
    if not os.access(path, os.W_OK):
        return False
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return bool(stat.S_IMODE(path.stat().st_mode) & 0o222)
    return True


class LanceDBStore(Store):
    """A :class:`~ragloom.stores.Store` in a LanceDB directory (embedded, no server): a local
    folder, or a prefix in object storage (``s3://bucket/path``; see **Object storage**).

    Two tables live in ``path``: ``table`` holds one row per chunk (its id, document id,
    lineage, content, content format, metadata as JSON, the metadata's ``where`` tokens and
    its vector as a fixed-size list of float32), ``<table>_documents`` one row per document
    (id, fingerprint, chunk count). The vector dimension is fixed by the first write that has
    chunks and recorded in the table's schema.

    **Writes.** :meth:`write` replaces the chunks of every given document in four LanceDB
    commits whatever the number of documents: it marks the documents unfinished (their
    fingerprint reads ``""``), deletes their old chunks, adds the new ones, and records the
    fingerprints. Each commit is atomic; a crash between two leaves those documents
    unfinished, and since ``""`` never equals a real fingerprint the next ingest writes them
    again, which deletes whatever half of them was there. :meth:`delete` marks, deletes the
    chunks, then the document rows, with the same guarantee. Batches of a few thousand chunks
    per call are the efficient unit: every call makes new small files, which the store folds
    once the writes since the last fold reach 100k rows (a commit counting as 500), and on
    :meth:`close` when the full-text index misses more than 2,000 rows (text search reads
    rows the index misses one by one, about 10 ms per 1,000). A fold touches only what was
    written since the last one: the new small files are joined into files of at most about
    10k rows (files already that long are never rewritten), and the new rows go into new
    segments of the full-text and metadata indexes. So neither its time nor its memory grows
    with the table. Merging those segments and the approximate vector index (see below) are
    :meth:`optimize`'s, which ingest never calls (:meth:`optimize_due` says when it is
    worth running). A pipeline running elsewhere (another process or machine) may write its
    chunks itself with :meth:`part_writer` (Lance fragments no version lists) and this handle
    commit them with :meth:`commit_parts`, by the same commits.

    **Search.** ``"vector"``: cosine search, score = cosine similarity; chunks with a zero
    vector (a text with no tokens) are never found by vector. The search is exact until the
    table holds ``vector_index_rows`` chunks (50,000 by default) and :meth:`optimize` has
    run; from then on an approximate index exists: IVF_RQ, ``round(sqrt(rows) / 4)``
    partitions of vectors quantized to four bits per dimension (RaBitQ), retrained when the
    table has grown enough to want twice as many partitions. A search then reads the
    ``vector_nprobes`` partitions nearest to the query (default: a quarter of them, at least
    20; a search that would read them all is exact instead) and ranks the best of what it
    finds (at least 50, twice ``top_k`` and as many as it asks for) again by their exact
    vectors: scores stay exact cosines, but a chunk in a partition not read, or placed too
    low by its quantized vector, can be missed (on a million chunks of real text, 0.98 of the
    exact top 10 of stored vectors are found, 0.97 of the exact top 10 of compound
    questions' asks). An index that an older version built of exact vectors (IVF_FLAT) or of
    one bit per dimension is still read, and :meth:`optimize` rebuilds it. Rows added since
    the last fold are searched exactly. A search with ``where`` that finds fewer than
    ``top_k`` chunks this way is repeated exactly, so a selective condition never loses
    matches to the index.
    ``"text"``: LanceDB's full-text index over each chunk's search text (its document's title
    and heading path, then its content: :func:`ragloom.search_text.search_text`; BM25, English
    stemming and stop words; created at the first write, kept up to date: rows added since
    the last fold are searched without it), score = BM25. The query is a bag of words (quotes
    and operators are ordinary characters). ``"hybrid"``: both, each taking its best
    ``hybrid_candidates`` (at least ``top_k``), fused. By default (``hybrid_fusion=
    "relative"``) each list's scores are scaled to [0, 1] (best 1, the last candidate 0) and
    a chunk's score is ``(text + vector_weight * vector) / (1 + vector_weight)``, in [0, 1]
    (a list that did not find the chunk gives it 0); ``vector_weight`` = 0.2 was chosen on
    the development halves of ragloom's evaluation sets, where the full text is the stronger
    signal and vectors add what its words miss. (LanceDB's own hybrid query is not used: on
    the same sets it found fewer facets, 272 of 358 against 278 with its default reranker,
    and it needs the ``lancedb`` client, which this read path never imports; see
    ``benchmarks/bench_native_hybrid.py`` and the evaluation guide.)
    ``hybrid_fusion="rrf"`` fuses by reciprocal rank instead: score = sum over the two lists
    of ``weight / (hybrid_k + rank)``. Ties go to the chunk ranked better by vector.
    ``where`` is applied before ranking in every mode and means exactly
    :func:`ragloom.stores.matches_where` over the metadata as stored (JSON).
    Found chunks come back without their vectors. Through Lance, a search ranks row ids and
    scores and reads the rows of the chunks it returns only (a hybrid search ranks
    ``2 * hybrid_candidates`` and returns ``top_k``).

    **Errors.** Another vector dimension (a write or a query) raises
    :class:`~ragloom.stores.StoreError` naming both and the path, and changes nothing. A
    directory that cannot be written (permissions, or permission bits without any write bit
    even for root) is read-only: searches, :meth:`fingerprints` and :meth:`info` work, and
    :meth:`write`, :meth:`delete` and :meth:`clear` raise ``StoreError`` before changing
    anything. A damaged directory (not a directory, unreadable manifests or data, tables of
    another schema) raises ``StoreError`` naming the path and what failed; nothing is
    repaired or removed behind your back. Bad input (a chunk without an embedding, metadata
    that is not JSON, an empty fingerprint, one document twice in a call) raises
    :class:`~ragloom.errors.InvalidInputError` before anything is written.

    **Memory.** A write holds its batch's rows, a fold what was written since the last one;
    after every write and fold the C heap's free pages go back to the OS. Only
    :meth:`optimize` works on the whole table: merging the index segments, and building the
    IVF index, which reads every vector (the IVF_FLAT index of older versions held them all
    with lancedb 0.40, about 1.7 KB per chunk of 256 dimensions).

    **Reading without LanceDB.** Where Lance's package is installed (the ``lance`` extra), a
    store that has not written reads through Lance and never imports lancedb (seconds of
    start-up): searches, :meth:`chunks`, :meth:`fingerprints` and the dimension. Its searches
    read the newest whole version: while another process's write is half done, they keep
    the version before it (see :meth:`read_version`).

    **Object storage.** ``path`` may be a URI (``s3://``, also ``gs://``, ``az://``, passed to
    Lance as they are; only S3 is tested). Credentials and region come from the usual
    environment variables, read by Lance itself (``AWS_ACCESS_KEY_ID``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``...); an S3-compatible
    server's endpoint from ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` (plain HTTP is
    allowed when that URL says ``http://``). :meth:`properties` is an object beside the
    tables. The writer lock is a local file named after the URI (in
    ``~/.cache/ragloom/locks``): it keeps writers on one machine apart, not writers on two
    machines: run one ingest of a bucket's index at a time. A handle that writes there and
    holds the lock does not look for other processes' versions before each operation (a
    listing of every version of the table, in a bucket), joins the documents table's small
    files every 8 commits besides at folds, and has Lance upload files of up to 32 MB in one
    request (``LANCE_INITIAL_UPLOAD_SIZE``, unless set): an ingest's cost there is its
    number of requests. :attr:`path` is ``None`` and :attr:`uri` the URI.

    **Writers and readers.** A handle that writes (or calls :meth:`lock`) first takes the
    store's writer lock (an OS file lock on ``ragloom-writer.lock`` in the directory, released
    by :meth:`close` or when the process ends, however it ends): a second writer waits up to
    ``lock_timeout`` seconds, then raises :class:`~ragloom.stores.StoreBusyError`. Readers take
    no lock and see every finished commit (reads check for a newer version). A write that
    fails (a full disk, a file-size limit) is rolled back: both tables return to their versions
    before it. Closing a handle that wrote removes the tables' old versions and any file a
    crashed writer left (safe: it holds the writer lock), so the directory stays the size of
    what it holds.

    **Checks.** :meth:`check` compares the documents table with the chunks table (every
    finished document has exactly the chunks it recorded, no chunk belongs to no document, the
    data files can be read; ``full=True`` also reads every row and queries the indexes);
    :meth:`repair` removes what is damaged, so that ingesting the files again gives the index
    a fresh build gives. :meth:`properties` is a small JSON record kept beside the tables
    (``ragloom ingest`` records the root its ids are relative to and its embedder there);
    :meth:`file_states` another (``ragloom-files.json``: each input file's size and times as
    an ingest last read it, so that the next one skips it unread).

    Args:
        path: the store's directory (created by the first write).
        table: the chunk table's name (the documents table is ``<table>_documents``).
        hybrid_fusion: ``"relative"`` (scaled scores, weighted) or ``"rrf"`` (reciprocal
            rank fusion) for hybrid search.
        vector_weight: the weight of the vector list against the full text's (1.0) in hybrid
            search.
        hybrid_k: the constant ``k`` of reciprocal rank fusion in hybrid search.
        hybrid_candidates: how many results of each kind hybrid search fuses.
        vector_index_rows: chunk rows from which folds build the approximate vector index
            (``None``: always search exactly).
        vector_nprobes: partitions a search reads once that index exists (``None``: a
            quarter of them, at least 20).
        lock_timeout: seconds a writer waits for another process's writer lock before it
            raises :class:`~ragloom.stores.StoreBusyError` (0: do not wait).
    """

    step_id: ClassVar[str] = "ragloom-lancedb/store"

    def __init__(
        self,
        path: str | os.PathLike[str] = ".ragloom/index",
        table: str = "chunks",
        *,
        hybrid_fusion: str = "relative",
        vector_weight: float = 0.2,
        hybrid_k: int = 60,
        hybrid_candidates: int = 50,
        vector_index_rows: int | None = _VECTOR_INDEX_ROWS,
        vector_nprobes: int | None = None,
        lock_timeout: float = LOCK_TIMEOUT,
    ) -> None:
        use_every_cpu()
        if not isinstance(table, str) or not table or not table.replace("_", "").isalnum():
            raise ValueError(f"table must be a name of letters, digits and _, got {table!r}")
        for name, value in (
            ("hybrid_k", hybrid_k),
            ("hybrid_candidates", hybrid_candidates),
            ("vector_index_rows", vector_index_rows),
            ("vector_nprobes", vector_nprobes),
        ):
            if value is None and name.startswith("vector_"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if (
            isinstance(lock_timeout, bool)
            or not isinstance(lock_timeout, int | float)
            or not math.isfinite(lock_timeout)
            or lock_timeout < 0
        ):
            raise ValueError(f"lock_timeout must be a number of seconds >= 0, got {lock_timeout!r}")
        if hybrid_fusion not in ("relative", "rrf"):
            raise ValueError(f"hybrid_fusion must be 'relative' or 'rrf', got {hybrid_fusion!r}")
        if (
            isinstance(vector_weight, bool)
            or not isinstance(vector_weight, int | float)
            or not math.isfinite(vector_weight)
            or vector_weight < 0
        ):
            raise ValueError(f"vector_weight must be a number >= 0, got {vector_weight!r}")
        self.hybrid_fusion = hybrid_fusion
        self.vector_weight = float(vector_weight)
        self.vector_index_rows = vector_index_rows
        self.vector_nprobes = vector_nprobes
        try:
            remote = remote_uri(os.fspath(path))
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None
        #: The store's local folder (``None``: the store is in object storage, see ``uri``).
        local = os.fspath(path)
        if local.startswith("file://"):
            local = local.removeprefix("file://")
        self.path: Path | None = None if remote is not None else Path(local).expanduser()
        #: Where the store is: its local folder, or the URI of its prefix in object storage.
        self.uri = remote if remote is not None else str(self.path)
        self._folder = ObjectFolder(remote) if remote is not None else None
        self._options = storage_options(remote) if remote is not None else {}
        if remote is not None:
            single_uploads()
        self.table = table
        self.hybrid_k = hybrid_k
        self.hybrid_candidates = hybrid_candidates
        self._documents_table = f"{table}_documents"
        self._lock = threading.RLock()
        self._db: Any = None
        self._chunks: Any = None
        self._documents: Any = None
        self._closed = False
        self._pending_rows = 0
        self._pending_commits = 0
        self._text_indexed = False
        self._dimension: int | None = None  # read from the schema once the table is open
        self._pool: ThreadPoolExecutor | None = None  # hybrid search's text half
        #: Rows read (by row id) from the table version ``_rows_of`` (a Lance dataset).
        self._rows_kept: OrderedDict[object, Document] = OrderedDict()
        self._rows_of: Any = None
        #: The connection checks for other processes' versions before every read (see _settle).
        self._checks_versions = True
        #: Both indexes of the chunks table are known to exist (see _ensure_indexes).
        self._indexed = False
        #: Commits to the documents table since its files were last joined.
        self._documents_commits = 0
        #: Partitions of the table's approximate vector index (``None``: none; read on open).
        self._vector_index: _VectorIndex | None = None
        self.lock_timeout = float(lock_timeout)
        self._writer: Any = None  # the writer lock (a filelock.FileLock) while this handle holds it
        self._wrote = False  # this handle committed something (old versions to clean at close)
        #: This handle writes (a write, delete, clear or optimize was asked of it): its reads
        #: then go through LanceDB, which sees its own writes (holding the writer lock alone
        #: changes nothing: no other process writes meanwhile). A
        #: handle that only opened LanceDB to read (``info()``, fitting routes) keeps reading
        #: through Lance's package, and :meth:`read_version` keeps answering.
        self._writes = False
        self._failed = False  # a write of this handle failed (then nothing is cleaned)
        #: The (documents, chunks) table versions when :meth:`part_writer` was called.
        self._parts_from: tuple[int | None, int | None] | None = None
        #: What searches read when Lance's package is installed and this handle has not
        #: written: (documents table version, chunks dataset at a consistent version, its
        #: vector index, whether it has the full-text index); see :meth:`_snapshot`.
        self._pinned: _Snapshot | None = None
        #: The last answer of :meth:`_values`, under (key, table, version).
        self._values_memo: tuple[Any, tuple[pa.Table, pa.Table]] | None = None

    # -- identity ---------------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self.uri

    def config(self) -> Mapping[str, Any]:
        return {
            "path": self.uri,
            "table": self.table,
            "hybrid_fusion": self.hybrid_fusion,
            "vector_weight": self.vector_weight,
            "hybrid_k": self.hybrid_k,
            "hybrid_candidates": self.hybrid_candidates,
            "vector_index_rows": self.vector_index_rows,
            "vector_nprobes": self.vector_nprobes,
            "lock_timeout": self.lock_timeout,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self.uri!r}, table={self.table!r})"

    # -- opening ----------------------------------------------------------------------------

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """LanceDB, Arrow and OS errors as a ``StoreError`` naming the store and the step."""
        try:
            yield
        except (StoreError, InvalidInputError):
            raise
        except Exception as exc:  # noqa: BLE001 - every backend failure becomes a StoreError
            raise StoreError(
                f"LanceDB store at {self.location}: cannot {doing}: {_first_line(exc)}"
            ) from None

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"LanceDB store at {self.location} is closed")

    def _table_dir(self, name: str) -> Path:
        assert self.path is not None, "a local store's folder"
        return self.path / f"{name}.lance"

    def _table_uri(self, name: str) -> str:
        return f"{self.uri}/{name}.lance"

    def _table_exists(self, name: str) -> bool:
        """Whether the table has versions: a folder without (data files part writers wrote
        before the table's first commit) is no table yet."""
        if self._folder is not None:
            with self._guard(f"look for table {name!r}"):
                return self._folder.exists(f"{name}.lance/_versions")
        return (self._table_dir(name) / "_versions").exists()

    def exists(self) -> bool:
        """Whether the store exists (its folder, or objects under its URI)."""
        if self._folder is not None:
            with self._guard("look for the store"):
                return self._folder.exists()
        assert self.path is not None
        return self.path.exists()

    def _check_folder(self) -> None:
        """A local store's path must be a folder where it exists."""
        if self.path is not None and self.path.exists() and not self.path.is_dir():
            raise StoreError(f"LanceDB store at {self.location}: the path is not a directory")

    def _connect(self, create: bool) -> Any:
        """The LanceDB connection, or ``None`` when the store does not exist and ``create``
        is false (nothing is created by reading)."""
        self._check_open()
        if self._db is not None:
            return self._db
        self._check_folder()
        if not self.exists():
            if not create:
                return None
            self._check_writable()
            if self.path is not None:
                with self._guard("create the store directory"):
                    self.path.mkdir(parents=True, exist_ok=True)
        lancedb = import_lancedb()

        # Reads check for versions committed by other processes, except in a handle that
        # writes an index in object storage (see _settle).
        unchecked = self._folder is not None and self._writer is not None and self._writes
        with self._guard("open the store"):
            self._db = lancedb.connect(
                self.uri, read_consistency_interval=None if unchecked else timedelta(0),
                storage_options=self._options or None,
            )
        self._checks_versions = not unchecked
        return self._db

    def _settle(self) -> None:
        """A handle that writes an index in object storage and holds its writer lock reopens
        its tables without checking for other processes' versions before each operation.

        In object storage that check is a listing of the table's versions (all of them, until
        close removes the old ones), and LanceDB makes several per write: most of the
        requests of an ingest into a bucket, and most of its time on a loopback server. No
        other process commits while the lock is held (writers take it; on one machine, see
        **Object storage**), and this handle sees its own commits without looking (Lance's
        own commits, by folds and parts, are followed by ``checkout_latest``). A local
        folder keeps the check: it costs a directory listing."""
        if self._folder is None or self._writer is None or self._db is None:
            return
        if self._checks_versions:
            self._db = self._chunks = self._documents = None

    def _check_writable(self) -> None:
        if self.path is None:
            return  # object storage: a write refused by the server raises a StoreError
        target = self.path
        while not target.exists():
            if target.parent == target:
                break
            target = target.parent
        blocked = [target]
        if self.path.is_dir():
            for name in (self.table, self._documents_table):
                root = self._table_dir(name)
                blocked += [root] + [
                    root / name
                    for name in ("data", "_versions", "_transactions", "_indices", "_deletions")
                ]
        for candidate in blocked:
            if candidate.exists() and not _mode_allows_writes(candidate):
                raise StoreError(
                    f"LanceDB store at {self.location} is read-only ({candidate} cannot be "
                    "written): nothing was changed"
                )

    def _open(self, name: str) -> Any:
        db = self._db
        if db is None or not self._table_exists(name):
            return None
        with self._guard(f"open table {name!r}"):
            table = db.open_table(name)
            schema = table.schema
        self._check_schema(name, schema)
        return table

    def _check_schema(self, name: str, schema: pa.Schema) -> None:
        wanted = _CHUNK_COLUMNS if name == self.table else _DOCUMENT_COLUMNS
        missing = [c for c in wanted if c not in schema.names]
        mark = (schema.metadata or {}).get(_FORMAT_KEY)
        if mark != _FORMAT and isinstance(mark, bytes) and mark.startswith(_FORMAT_PREFIX):
            raise StoreError(
                f"LanceDB store at {self.location} was written by another version of "
                f"ragloom-lancedb (format {mark.decode(errors='replace')}, this one reads "
                f"{_FORMAT.decode()}): rebuild it with `ragloom index clear --index "
                f"{self.location}` and the same `ragloom ingest`"
            )
        if missing or mark != _FORMAT:
            raise StoreError(
                f"LanceDB store at {self.location}: table {name!r} was not written by "
                f"ragloom-lancedb (missing {', '.join(missing) or 'its format mark'})"
            )

    def _peek(self, name: str) -> Any:
        """The table as a Lance dataset, read without a LanceDB connection (``None`` when it
        does not exist). A re-ingest whose files are all unchanged only reads the documents
        table and the vector dimension, and importing lancedb (its client for remote
        namespaces included) costs about a second of start-up that Lance alone does not.
        Only used when Lance's own package (``pylance``) is installed; lancedb does not
        require it, and without it the tables are opened through LanceDB."""
        self._check_open()
        self._check_folder()
        if not self._table_exists(name):
            return None
        import lance

        with self._guard(f"open table {name!r}"):
            dataset = lance.dataset(
                self._table_uri(name), storage_options=self._options or None
            )
            schema = dataset.schema
        self._check_schema(name, schema)
        return dataset

    def _tables(self, create: bool = False) -> tuple[Any, Any]:
        """The (chunks, documents) tables, each ``None`` while it does not exist."""
        with self._lock:
            if self._connect(create) is None:
                return None, None
            if self._chunks is None:
                self._chunks = self._open(self.table)
                if self._chunks is not None and self.vector_index_rows is not None:
                    self._vector_index = self._find_vector_index(self._chunks)
            if self._documents is None:
                self._documents = self._open(self._documents_table)
            return self._chunks, self._documents

    @property
    def dimension(self) -> int | None:
        """The vector dimension of the chunks table (``None`` before the first chunk)."""
        with self._lock:
            snapshot = self._snapshot()
            if snapshot is not None:
                return snapshot.dimension
            chunks = self._tables()[0] if self._writes or not _has_lance() else (
                self._peek(self.table)
            )
        if chunks is None:
            return None
        if self._dimension is None:
            with self._guard("read the schema"):
                self._dimension = _vector_size(chunks.schema)
        return self._dimension

    def _snapshot(self) -> _Snapshot | None:
        """The chunks table as a Lance dataset at the newest whole version, for reading
        without a LanceDB connection (``None``: read through LanceDB instead: Lance's package
        is not installed, or this handle has written, or the store has no chunks).

        A write commits to the documents table first (its documents marked unfinished) and
        last (their fingerprints recorded), and changes the chunks in between; a delete
        likewise. So a version of the chunks table read while the documents table stays at a
        version with no unfinished document is a whole one: searches never see a write half
        done. While the newest versions are mid-write, searches keep reading the version they
        had (before any, the newest). Looking for a newer version costs microseconds, so
        each search sees every write finished before it.
        """
        if self._writes or not _has_lance():
            return None
        with self._lock:
            pinned = self._pinned
            if pinned is not None:
                with self._guard("read the documents"):
                    if pinned.documents.latest_version == pinned.version:
                        return pinned
            documents = self._peek(self._documents_table)
            if documents is None:
                self._pinned = None
                return None
            with self._guard("read the documents"):
                version = documents.version
                unfinished = documents.count_rows(
                    filter=f"fingerprint = {sql_string(UNFINISHED)}"
                )
            if unfinished and pinned is not None:
                return pinned  # a write is under way: keep the whole version
            chunks = self._peek(self.table)
            if chunks is None:
                self._pinned = None
                return None
            with self._guard("read the documents"):
                moved = documents.latest_version != version
            if moved and pinned is not None:
                return pinned  # a write began meanwhile: look again at the next search
            with self._guard("list the indexes"):
                indexes = [(i.name, i.field_names) for i in chunks.describe_indices()]
            vector_index = None
            for name, fields in indexes:
                if (
                    self.vector_index_rows is not None  # None: the index is never read
                    and "vector" in fields
                    and (named := _vector_index_of(name)) is not None
                ):
                    vector_index = named
            found = _Snapshot(
                version if not (moved or unfinished) else -1,
                documents,
                chunks,
                vector_index,
                any(_TEXT_COLUMN in fields for _, fields in indexes),
                _vector_size(chunks.schema),
            )
            self._pinned = found
            return found

    def read_version(self) -> tuple[int, int] | None:
        """What searches read now: (documents table version, chunks table version). Two equal
        values mean the same chunks, so a search's results may be reused while it stays the
        same (``ragloom serve`` does). ``None`` when it cannot be told cheaply: Lance's package
        is not installed, this handle has written, or a write is under way."""
        snapshot = self._snapshot()
        if snapshot is None or snapshot.version < 0:
            return None
        return snapshot.version, int(snapshot.chunks.version)

    # -- schemas ----------------------------------------------------------------------------

    @staticmethod
    def _chunk_schema(dimension: int) -> pa.Schema:
        return chunk_schema(dimension)

    @staticmethod
    def _document_schema() -> pa.Schema:
        import pyarrow as pa

        return pa.schema(
            [
                pa.field("document_id", pa.string(), nullable=False),
                pa.field("fingerprint", pa.string(), nullable=False),
                pa.field("chunks", pa.int64(), nullable=False),
            ],
            metadata={_FORMAT_KEY: _FORMAT},
        )

    # -- writing ----------------------------------------------------------------------------

    def _prepare(
        self, documents: Sequence[IndexedDocument], dimension: int | None
    ) -> tuple[list[str], list[str], list[int], pa.Table | None, int | None]:
        """Validate ``documents`` and build their rows before anything is written."""
        fingerprints: list[str] = []
        for position, doc in enumerate(documents):
            if not isinstance(doc, IndexedDocument):
                raise InvalidInputError(
                    f"write takes IndexedDocument items, got a {type(doc).__name__} at "
                    f"position {position}"
                )
            if not isinstance(doc.fingerprint, str) or not doc.fingerprint:
                raise InvalidInputError(
                    f"document {doc.document_id!r} has an empty fingerprint"
                )
            fingerprints.append(doc.fingerprint)
        ids, counts, rows, dimension = chunk_rows(
            ((d.document_id, d.chunks) for d in documents), dimension, self.location
        )
        return ids, fingerprints, counts, rows, dimension

    def _document_rows(self, ids: list[str], fingerprints: list[str], counts: list[int]) -> Any:
        import pyarrow as pa

        return pa.table(
            {"document_id": ids, "fingerprint": fingerprints, "chunks": counts},
            schema=self._document_schema(),
        )

    def _upsert_documents(self, rows: Any) -> int:
        """Insert or update document rows; return how many were already there."""
        result = (
            self._documents.merge_insert("document_id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(rows)
        )
        return int(getattr(result, "num_updated_rows", len(rows)))

    @staticmethod
    def _in(column: str, ids: Sequence[str]) -> Iterator[str]:
        for lo in range(0, len(ids), _IN_LIST):
            listed = ", ".join(sql_string(i) for i in ids[lo : lo + _IN_LIST])
            yield f"{column} IN ({listed})"

    def write(self, documents: Sequence[IndexedDocument]) -> None:
        """Replace each document's chunks and fingerprint (see the class notes on crashes).

        Raises:
            StoreError: another vector dimension, a read-only or damaged store.
            InvalidInputError: a chunk without an embedding, metadata that is not JSON, an
                empty fingerprint, or one document twice; nothing is written.
        """
        docs = list(documents)
        if not docs:
            self._check_open()
            return
        self._writes = True
        with self._lock:
            known = self._written_dimension()
            ids, fingerprints, counts, rows, dimension = self._prepare(docs, known)

            def add() -> None:
                self._chunks.add(rows)
                self._pending_rows += rows.num_rows
                self._pending_commits += 1

            self._commit(ids, fingerprints, counts, dimension, add if rows is not None else None)

    def _written_dimension(self) -> int | None:
        """The vector dimension of the chunks table, ``None`` while it does not exist (the
        first write sets it). Called under the lock, by the writes."""
        chunks, _ = self._tables()
        return self.dimension if chunks is not None else None

    def part_writer(self) -> FragmentWriter:
        """A writer of uncommitted parts of the chunks table (Lance fragments, see
        :class:`ragloom.stores.PartWriter`), for a pipeline that runs in other processes or
        on other machines: each writes its chunks' data files itself, and
        :meth:`commit_parts` makes them visible. Takes the writer lock (parts are committed
        by the handle that gave the writer), and remembers the tables' versions:
        :meth:`discard_parts` returns the store to them.

        Raises:
            StoreError: a read-only or damaged store, or another writer holds the lock.
        """
        with self._lock:
            self._check_writable()
            self.take_writer_lock()
            # read as a reader would (through Lance alone when it can: a run whose documents
            # are all unchanged commits nothing and never needs LanceDB)
            exists = self._table_exists(self.table)
            self._parts_from = self._versions()
            return FragmentWriter(
                self._table_uri(self.table), self.location,
                self.dimension if exists else None, exists,
                machine_local=self._folder is None, storage_options=self._options or None,
            )

    def commit_parts(self, fingerprints: Mapping[str, str], parts: Sequence[StorePart]) -> None:
        """Make the fragments of ``parts`` visible and record the documents of
        ``fingerprints``, replacing their old chunks: the commits of :meth:`write` (the
        documents marked unfinished, their old chunks deleted, the new ones added, the
        fingerprints recorded), the new chunks added by one ``Append`` per group of parts of
        up to 50,000 rows, folded as writes fold. A commit that fails is rolled back (see
        :meth:`write`); the parts' files are then left for :meth:`discard_parts`.

        Raises:
            InvalidInputError: a part of another store or table, a document of a part that is
                not among ``fingerprints`` or is in two parts, an empty fingerprint; nothing
                is changed.
            StoreError: another vector dimension, a read-only or damaged store.
        """
        wanted = dict(fingerprints)
        counts = dict.fromkeys(wanted, 0)
        placed: set[str] = set()
        dimensions: set[int] = set()
        for doc_id, fingerprint in wanted.items():
            if not isinstance(fingerprint, str) or not fingerprint:
                raise InvalidInputError(f"document {doc_id!r} has an empty fingerprint")
        for part in parts:
            data = part.data if isinstance(part, StorePart) else None
            if not isinstance(data, Fragments) or data.table_uri != self._table_uri(self.table):
                raise InvalidInputError(
                    f"LanceDB store at {self.location}: a part that this store's part writer "
                    "did not write cannot be committed to it"
                )
            for doc_id, count in part.documents:
                if doc_id not in wanted:
                    raise InvalidInputError(
                        f"a part holds chunks of document {doc_id!r}, which the commit does "
                        "not record"
                    )
                if doc_id in placed:
                    raise InvalidInputError(f"document {doc_id!r} is in two parts")
                placed.add(doc_id)
                counts[doc_id] = count
            if data.dimension is not None and data.rows:
                dimensions.add(data.dimension)
        if not wanted:
            self._check_open()
            return
        self._writes = True
        with self._lock:
            known = self._written_dimension()
            if len(dimensions) > 1 or (known is not None and dimensions - {known}):
                held = f"holds vectors of dimension {known}" if known is not None else (
                    "was given parts of several dimensions"
                )
                raise StoreError(
                    f"LanceDB store at {self.location} {held}; the parts have dimension "
                    f"{', '.join(map(str, sorted(dimensions)))}: nothing was written"
                )
            groups: list[list[Any]] = [[]]
            rows = 0
            for part in parts:
                if rows >= _PART_GROUP_ROWS:
                    groups.append([])
                    rows = 0
                groups[-1].extend(part.data.fragments)
                rows += part.data.rows
            add = None
            if any(groups):

                def add() -> None:
                    self._append(groups)

            ids = list(wanted)
            self._commit(
                ids, [wanted[i] for i in ids], [counts[i] for i in ids],
                next(iter(dimensions), None), add,
            )

    def _append(self, groups: list[list[Any]]) -> None:
        """Add the chunks of fragments written by part writers: one ``Append`` commit per
        group, each followed by the indexes and, when due, a fold."""
        import lance

        for fragments in groups:
            if not fragments:
                continue
            dataset = self._chunks.to_lance()
            lance.LanceDataset.commit(
                dataset, lance.LanceOperation.Append(fragments), read_version=dataset.version,
                storage_options=self._options or None,
            )
            del dataset
            self._chunks.checkout_latest()
            self._pending_rows += sum(f.physical_rows for f in fragments)
            self._pending_commits += 1
            self._ensure_indexes()
            if self._pending_rows + _COMMIT_ROWS * self._pending_commits >= _OPTIMIZE_ROWS:
                self._optimize(vectors=False)

    def discard_parts(self, parts: Sequence[StorePart]) -> None:
        """The run that wrote ``parts`` failed: return both tables to their versions when
        :meth:`part_writer` was called (undoing every commit since, a table created since
        dropped), and remove every data file of the chunks table that no version lists: the
        files of ``parts`` (never committed), and those of parts a writer wrote and could not
        hand back (a worker killed after writing, before its result reached the run). The
        files of the undone commits go when this handle closes, as old versions do. Never
        raises: what cannot be undone stays consistent (each commit is whole)."""
        start, self._parts_from = self._parts_from, None
        try:
            with self._lock:
                if start is not None and start != self._versions():
                    self._restore(*start)
                if not self._table_exists(self.table):
                    # only part writers wrote there: no version lists anything
                    if self._folder is not None:
                        self._folder.remove(f"{self.table}.lance")
                    else:
                        import shutil

                        shutil.rmtree(self._table_dir(self.table), ignore_errors=True)
                    return
                self._remove_unlisted_files()
        except Exception:  # noqa: BLE001 - see the docstring
            pass

    def _remove_unlisted_files(self) -> None:
        """Remove the chunks table's files that no version lists, keeping every version
        (Lance's cleanup of versions older than a century, with the files of no version
        however new they are): called holding the writer lock, once the run's writers have
        stopped, so no write is under way."""
        import lance

        dataset = lance.dataset(
            self._table_uri(self.table), storage_options=self._options or None
        )
        with self._guard("remove the files of parts never committed"):
            dataset.cleanup_old_versions(
                older_than=timedelta(days=36500), delete_unverified=True
            )

    def _versions(self) -> tuple[int | None, int | None]:
        """The (documents, chunks) tables' versions now (``None``: no such table)."""
        found: list[int | None] = []
        for name, handle in ((self._documents_table, self._documents), (self.table, self._chunks)):
            if not self._table_exists(name):
                found.append(None)
                continue
            with self._guard("read the tables' versions"):
                if handle is None:
                    handle = self._peek(name) if _has_lance() else self._tables()[
                        0 if name == self.table else 1
                    ]
                found.append(int(handle.version))
        return found[0], found[1]

    def _restore(self, documents_version: int | None, chunks_version: int | None) -> None:
        """Return both tables to these versions (``None``: the table did not exist: it is
        dropped)."""
        self._writes = True
        chunks, documents = self._tables()
        self._wrote = True  # close removes the undone versions and their files
        with self._guard("return to the version before the run"):
            if chunks is not None and chunks.version != chunks_version:
                if chunks_version is None:
                    self._db.drop_table(self.table)
                    self._forget_chunks()
                else:
                    chunks.restore(chunks_version)
                    self._indexed = False  # that version may predate them
            if documents is not None and documents.version != documents_version:
                if documents_version is None:
                    self._db.drop_table(self._documents_table)
                    self._documents = None
                else:
                    documents.restore(documents_version)

    def _commit(
        self, ids: list[str], fingerprints: list[str], counts: list[int],
        dimension: int | None, add: Any,
    ) -> None:
        """Replace these documents' chunks (``add()`` adds the new ones; ``None``: none) and
        record their fingerprints, rolled back if it fails; then the indexes, and a fold when
        the writes since the last one are due."""
        self._check_writable()
        self.take_writer_lock()
        self._settle()
        self._tables(create=True)
        with self._guard("create the documents table"):
            if self._documents is None:
                self._documents = self._db.create_table(
                    self._documents_table, schema=self._document_schema()
                )
        self._wrote = True
        before = (
            self._documents.version,
            None if self._chunks is None else self._chunks.version,
        )
        try:
            self._replace(ids, fingerprints, counts, dimension, add)
        except StoreError as exc:
            self._failed = True  # old versions are kept: they may be all that is readable
            if self._roll_back(*before):
                raise StoreError(
                    f"{exc}; the write was rolled back: the index is as it was before it"
                ) from None
            raise
        except BaseException:
            self._failed = True
            self._roll_back(*before)
            raise
        self._pending_commits += 3 if add is not None else 4  # add() counts its own
        self._documents_commits += 2
        if self._chunks is not None:
            self._ensure_indexes()
            due = self._pending_rows + _COMMIT_ROWS * self._pending_commits
            if due >= _OPTIMIZE_ROWS:
                self._optimize(vectors=False)
                return
        if self._folder is not None and self._documents_commits >= _DOCUMENTS_FOLD_COMMITS:
            with self._guard("optimize the documents table"):
                self._fold_documents()
        _release_memory()

    def _roll_back(self, documents_version: int, chunks_version: int | None) -> bool:
        """Return both tables to their versions before a write that failed (a table the
        write created is dropped); if even that fails, the documents stay marked unfinished
        and the next ingest writes them again."""
        try:
            if self._chunks is not None and self._chunks.version != chunks_version:
                if chunks_version is None:
                    self._db.drop_table(self.table)
                    self._forget_chunks()
                else:
                    self._chunks.restore(chunks_version)
                    self._indexed = False  # that version may predate them
            if self._documents is not None and self._documents.version != documents_version:
                self._documents.restore(documents_version)
        except Exception:  # noqa: BLE001 - the write's own error is the one to report
            return False
        return True

    def _replace(
        self, ids: list[str], fingerprints: list[str], counts: list[int], dimension: int | None,
        add: Any,
    ) -> None:
        """The commits of a write (see the class): ``add()`` adds the new chunks."""
        with self._guard("mark the documents as being written"):
            known_before = self._upsert_documents(
                self._document_rows(ids, [UNFINISHED] * len(ids), [-1] * len(ids))
            )
        # Chunks only exist for documents that have a row (rows go last on delete).
        if self._chunks is not None and known_before:
            with self._guard("delete the documents' old chunks"):
                for predicate in self._in("document_id", ids):
                    self._chunks.delete(predicate)
        if add is not None:
            with self._guard("add the chunks"):
                if self._chunks is None:
                    assert dimension is not None
                    self._chunks = self._db.create_table(
                        self.table, schema=self._chunk_schema(dimension)
                    )
                add()
        with self._guard("record the documents' fingerprints"):
            self._upsert_documents(self._document_rows(ids, fingerprints, counts))

    def _index_names(self, chunks: Any) -> set[str]:
        with self._guard("list the indexes"):
            return {column for i in chunks.list_indices() for column in i.columns}

    def _ensure_indexes(self) -> None:
        """The full-text index on the content and the label index on the where tokens (looked
        for once per handle: only this handle, holding the writer lock, can remove them)."""
        if self._indexed:
            return
        indexed = self._index_names(self._chunks)
        if _TEXT_COLUMN not in indexed:
            from lancedb.index import FTS

            with self._guard("build the full-text index"):
                self._chunks.create_index(_TEXT_COLUMN, config=FTS(with_position=False))
        if "where_tokens" not in indexed:
            from lancedb.index import LabelList

            with self._guard("build the metadata index"):
                self._chunks.create_index("where_tokens", config=LabelList())
        self._indexed = True

    def _forget_indexes(self) -> None:
        """Forget what this handle knows of the chunks table's indexes (looked for again)."""
        self._text_indexed = False
        self._indexed = False
        self._vector_index = None

    def _forget_chunks(self) -> None:
        """Forget the chunks table (dropped, or to be opened again) and all that this handle
        knows of it."""
        self._chunks = None
        self._dimension = None
        self._forget_indexes()

    def _ensure_text_index(self, chunks: Any) -> None:
        """Build the full-text index if a crash left the table without it."""
        if self._text_indexed:
            return
        with self._lock:
            if _TEXT_COLUMN not in self._index_names(chunks):
                try:
                    self._check_writable()
                except StoreError:
                    raise StoreError(
                        f"LanceDB store at {self.location} has no full-text index and is "
                        "read-only, so none can be built: search by vector"
                    ) from None
                self._ensure_indexes()
            self._text_indexed = True

    def _optimize(self, vectors: bool = True) -> None:
        """Fold small files together and new rows into the indexes. Without ``vectors`` (a
        fold during ingest) files are joined into files of at most ``_FRAGMENT_ROWS`` rows and
        the new rows become new index segments, so the fold's memory is bounded by what was
        written since the last one; with ``vectors`` (:meth:`optimize`) files are joined into
        files of ``_OPTIMIZED_FRAGMENT_ROWS``, the segments are merged and the approximate
        vector index is built or retrained when the table has grown enough."""
        with self._guard("optimize the tables"):
            if self._chunks is not None:
                # one dataset, with small caches: what it reads is read once
                dataset = self._chunks.to_lance(
                    index_cache_size_bytes=_FOLD_CACHE, metadata_cache_size_bytes=_FOLD_CACHE
                )
                dataset.optimize.compact_files(
                    target_rows_per_fragment=_FRAGMENT_ROWS, num_threads=1
                )
                # 0: the new rows as a segment of their own; else every segment merged
                dataset.optimize.optimize_indices(num_indices_to_merge=1 << 20 if vectors else 0)
                if vectors:
                    # Lance joins only files that the same index segments hold: merged now
                    dataset.optimize.compact_files(
                        target_rows_per_fragment=_OPTIMIZED_FRAGMENT_ROWS, num_threads=1
                    )
                del dataset
                self._chunks.checkout_latest()
            self._fold_documents()
        self._pending_rows = 0
        self._pending_commits = 0
        if self._chunks is not None and vectors:
            self._ensure_vector_index(self._chunks)
        _release_memory()

    def _fold_documents(self) -> None:
        """Join the documents table's small files (each write adds two, and a file with a
        deletion file per rewritten row range): every write reads the whole table
        (``merge_insert``), one request per file in object storage. Lance's compaction only:
        LanceDB's ``optimize()`` also looks for versions more than a week old to remove, which
        reads every version's manifest (in object storage, a request each; close removes the
        old versions anyway)."""
        self._documents_commits = 0
        if self._documents is None:
            return
        dataset = self._documents.to_lance()
        dataset.optimize.compact_files(num_threads=1)
        del dataset
        self._documents.checkout_latest()

    def _find_vector_index(self, chunks: Any) -> _VectorIndex | None:
        """The approximate vector index (named after its partitions), if any."""
        with self._guard("list the indexes"):
            names = [i.name for i in chunks.list_indices() if "vector" in i.columns]
        for name in names:
            found = _vector_index_of(name)
            if found is not None:
                return found
        return None

    def _vector_index_due(
        self, chunks: Any, current: _VectorIndex | None = None
    ) -> tuple[int, _VectorIndex | None, int] | None:
        """(rows, the index now, partitions wanted) when the approximate vector index should
        be built or retrained, else ``None`` (``current``: the index, when known). An index
        of exact vectors (older versions) is rebuilt quantized."""
        if self.vector_index_rows is None:
            return None
        with self._guard("count the rows"):
            rows = chunks.count_rows()
        if rows < self.vector_index_rows:
            return None
        wanted = max(2, round(math.sqrt(rows) / 4))
        if current is None and not _is_dataset(chunks):
            current = self._find_vector_index(chunks)
        if (
            current is not None and current.bits == _VECTOR_BITS
            and wanted < 2 * current.partitions
        ):
            return None  # folds add new rows to the index's partitions
        return rows, current, wanted

    def optimize_due(self) -> str | None:
        """Why :meth:`optimize` is worth running now (``ragloom ingest`` recommends it), or
        ``None``: the table has reached ``vector_index_rows`` chunks without an approximate
        vector index, or has grown enough since it was built to want twice its partitions.
        Ingest never builds that index itself (building it reads every vector)."""
        with self._lock:
            snapshot = self._snapshot()  # through Lance alone when this handle has not written
            if snapshot is not None:
                due = self._vector_index_due(snapshot.chunks, snapshot.vector_index)
            else:
                chunks = self._tables()[0]
                due = None if chunks is None else self._vector_index_due(chunks)
        if due is None:
            return None
        rows, current, _ = due
        if current is None:
            return (
                f"{rows:,} chunks are searched exactly by vector: an approximate vector index "
                f"pays off from {self.vector_index_rows:,}"
            )
        if not current.quantized:
            return (
                "the approximate vector index holds exact vectors (an older version built "
                "it): a quantized one searches several times faster"
            )
        if current.bits != _VECTOR_BITS:
            return (
                f"the approximate vector index quantizes vectors to {current.bits} bit"
                f"{'s' if current.bits > 1 else ''} per dimension (an older version built it): "
                f"{_VECTOR_BITS} bits find more of the nearest chunks at about the same speed"
            )
        return (
            f"the approximate vector index was trained on far fewer than the {rows:,} chunks "
            "held now: retrain it"
        )

    def _ensure_vector_index(self, chunks: Any) -> None:
        """Build (or retrain) the approximate vector index when the table is large enough."""
        due = self._vector_index_due(chunks)
        if due is None:
            return
        _, _, wanted = due
        from lancedb.index import IvfRq

        name = f"{_VECTOR_INDEX_PREFIX}{_QUANTIZED}{_VECTOR_BITS}b{wanted}"
        with self._guard("build the vector index"):
            chunks.create_index(
                "vector",
                config=IvfRq(
                    distance_type="cosine", num_partitions=wanted, num_bits=_VECTOR_BITS
                ),
                replace=True,
                name=name,
            )
            for index in chunks.list_indices():
                if "vector" in index.columns and index.name != name:
                    chunks.drop_index(index.name)
        self._vector_index = _VectorIndex(wanted, _VECTOR_BITS)

    def delete(self, document_ids: Iterable[str]) -> int:
        """Remove these documents and their chunks; return how many documents were stored."""
        if isinstance(document_ids, str):
            raise InvalidInputError("delete takes document ids, not one string")
        ids = list(dict.fromkeys(document_ids))
        self._writes = True
        for i in ids:
            if not isinstance(i, str):
                raise InvalidInputError(f"document ids are strings, got {type(i).__name__}")
        with self._lock:
            chunks, documents = self._tables()
            if not ids or documents is None:
                return 0
            stored = self.fingerprints()
            present = [i for i in ids if i in stored]
            if not present:
                return 0
            self._check_writable()
            self.take_writer_lock()
            self._wrote = True
            with self._guard("mark the documents as being deleted"):
                for predicate in self._in("document_id", present):
                    documents.update(where=predicate, values={"fingerprint": UNFINISHED})
            if chunks is not None:
                with self._guard("delete the chunks"):
                    for predicate in self._in("document_id", present):
                        chunks.delete(predicate)
            with self._guard("delete the documents"):
                for predicate in self._in("document_id", present):
                    documents.delete(predicate)
            self._pending_commits += 3
            return len(present)

    def clear(self) -> int:
        """Remove every document (both tables are dropped; the dimension is forgotten)."""
        self._writes = True
        with self._lock:
            chunks, documents = self._tables()
            if documents is None and chunks is None:
                return 0
            count = len(self.fingerprints())
            self._check_writable()
            self.take_writer_lock()
            self._wrote = True
            if documents is not None:
                with self._guard("mark the documents as being deleted"):
                    documents.update(where="TRUE", values={"fingerprint": UNFINISHED})
            with self._guard("drop the tables"):
                if chunks is not None:
                    self._db.drop_table(self.table)
                    self._forget_chunks()
                if documents is not None:
                    self._db.drop_table(self._documents_table)
                    self._documents = None
            self._pending_rows = self._pending_commits = 0
            return count


    # -- the writer lock, properties, checks ------------------------------------------------

    def take_writer_lock(self, on_wait: Any = None) -> None:
        """Take the writer lock (held until :meth:`close`); ``on_wait()`` is called once if
        another process holds it and this one waits.

        Raises:
            StoreBusyError: another process held it for ``lock_timeout`` seconds.
            StoreError: the directory cannot be written (read-only).
        """
        with self._lock:
            self._check_open()
            if self._writer is not None:
                return
            self._check_folder()
            self._check_writable()
            lock = self._lock_path()
            with self._guard("create the store directory"):
                lock.parent.mkdir(parents=True, exist_ok=True)
            from filelock import FileLock, Timeout

            writer = FileLock(str(lock), is_singleton=False)
            try:
                writer.acquire(timeout=0)
            except Timeout:
                if self.lock_timeout <= 0:
                    raise StoreBusyError(self._busy(0.0)) from None
                if on_wait is not None:
                    on_wait()
                try:
                    writer.acquire(timeout=self.lock_timeout)
                except Timeout:
                    raise StoreBusyError(self._busy(self.lock_timeout)) from None
            except OSError as exc:
                raise StoreError(
                    f"LanceDB store at {self.location}: cannot take the writer lock: {exc}"
                ) from None
            self._writer = writer

    def _busy(self, waited: float) -> str:
        return (
            f"the index at {self.location} is busy: another process is writing it"
            + (f" (waited {waited:g} s)" if waited else "")
            + "; try again when it has finished (or let this one wait longer: --wait SECONDS)"
        )

    def _lock_path(self) -> Path:
        """The file writers lock: in the store's folder, or for a store in object storage a
        local file named after its URI (see :func:`ragloom_lancedb._place.writer_lock_path`)."""
        if self.path is None:
            return writer_lock_path(self.uri)
        return self.path / LOCK_FILE

    def _held_elsewhere(self) -> bool:
        """Whether another process holds the writer lock now (never waits)."""
        lock = self._lock_path()
        if self._writer is not None or not lock.exists():
            return False
        from filelock import FileLock, Timeout

        probe = FileLock(str(lock), is_singleton=False)
        try:
            probe.acquire(timeout=0)
        except Timeout:
            return True
        except OSError:
            return False  # a read-only directory: no writer can be at work in it either
        probe.release()
        return False

    def _unlock(self) -> None:
        if self._writer is not None:
            self._writer.release()
            self._writer = None

    def properties(self) -> dict[str, Any]:
        """The JSON record kept beside the tables (empty when there is none): a file in the
        store's folder, or an object under its URI."""
        path: Path | str
        try:
            if self._folder is not None:
                path = f"{self.uri}/{PROPERTIES_FILE}"
                data = self._folder.read(PROPERTIES_FILE)
                if data is None:
                    return {}
                text = data.decode("utf-8", errors="replace")
            else:
                assert self.path is not None
                path = self.path / PROPERTIES_FILE
                text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise StoreError(
                f"LanceDB store at {self.location}: cannot read {PROPERTIES_FILE}: {exc}"
            ) from None
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise StoreError(
                f"LanceDB store at {self.location}: {path} is damaged (not a JSON object); "
                "delete it and ingest again"
            )
        return data

    def set_properties(self, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into :meth:`properties` (written atomically; takes the writer
        lock)."""
        with self._lock:
            self.take_writer_lock()
            merged = {**self.properties(), **dict(values)}
            text = json.dumps(merged, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
            self._write_beside(PROPERTIES_FILE, text, "record the index's properties")

    def file_states(self) -> dict[str, str]:
        """The states of the input files an ingest recorded (see
        :meth:`ragloom.stores.Store.set_file_states`): a JSON file beside the tables
        (``ragloom-files.json``). Empty when there is none, or it cannot be read (they are
        only a shortcut: every file is then read)."""
        try:
            if self._folder is not None:
                data = self._folder.read(FILE_STATES_FILE)
            else:
                assert self.path is not None
                data = (self.path / FILE_STATES_FILE).read_bytes()
            loaded = json.loads(data) if data is not None else None
        except Exception:  # noqa: BLE001 - unreadable (disk, object storage, JSON): only a
            return {}  # shortcut is lost
        if not isinstance(loaded, dict) or loaded.get("format") != _FILE_STATES_FORMAT:
            return {}
        files = loaded.get("files")
        if not isinstance(files, dict):
            return {}
        return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}

    def set_file_states(self, states: Mapping[str, str]) -> None:
        """Replace the recorded file states (written atomically; takes the writer lock)."""
        text = json.dumps(
            {"format": _FILE_STATES_FORMAT, "version": 1, "files": dict(states)},
            ensure_ascii=False, separators=(",", ":"),
        )
        with self._lock:
            self.take_writer_lock()
            self._write_beside(FILE_STATES_FILE, text, "record the input files' states")

    def _write_beside(self, name: str, text: str, doing: str) -> None:
        """Write the file ``name`` beside the tables whole (an object, or a local file
        replaced atomically)."""
        if self._folder is not None:
            with self._guard(doing):
                self._folder.write(name, text.encode("utf-8"))
            return
        assert self.path is not None
        path = self.path / name
        temporary = path.with_name(f".{name}.{os.getpid()}.tmp")
        with self._guard(doing):
            try:
                self.path.mkdir(parents=True, exist_ok=True)
                temporary.write_text(text, encoding="utf-8")
                os.replace(temporary, path)
            finally:
                temporary.unlink(missing_ok=True)

    def _readers(self) -> tuple[Any, Any]:
        """``read(table, columns) -> pyarrow.Table`` over (chunks, documents), each ``None``
        when the table does not exist: through Lance alone when it is installed and this
        handle does not write (a check then costs no lancedb import)."""
        if not self._writes and _has_lance():
            found = []
            for name in (self.table, self._documents_table):
                dataset = self._peek(name)
                found.append(
                    None if dataset is None
                    else (lambda columns, d=dataset: d.to_table(columns=columns))
                )
            return found[0], found[1]
        chunks, documents = self._tables()

        def reader(table: Any) -> Any:
            if table is None:
                return None
            return lambda columns: (
                table.search().select(columns).limit(None).to_arrow() if columns
                else table.to_arrow()
            )

        return reader(chunks), reader(documents)

    def check(self, full: bool = False) -> StoreCheck:
        """Whether the documents table and the chunks table agree and their data can be read
        (``full``: every row read whole, and the indexes queried). Never raises for damage:
        what is wrong comes back as problems."""
        import pyarrow.compute as pc

        problems: list[str] = []
        damaged: set[str] = set()
        unreadable = False
        with self._lock:
            busy = self._held_elsewhere()
            if not self.exists():
                return StoreCheck(self.location, busy=busy, full=full)
            try:
                self.properties()
            except StoreError as exc:
                problems.append(str(exc))
            try:
                read_chunks, read_documents = self._readers()
            except StoreError as exc:
                return StoreCheck(
                    self.location, (*problems, str(exc)), unreadable=True, busy=busy, full=full
                )
            recorded: dict[str, tuple[str, int]] = {}
            if read_documents is not None:
                try:
                    with self._guard("read the documents table"):
                        rows = read_documents(["document_id", "fingerprint", "chunks"])
                    recorded = {
                        d: (f, int(c)) for d, f, c in zip(
                            rows.column("document_id").to_pylist(),
                            rows.column("fingerprint").to_pylist(),
                            rows.column("chunks").to_pylist(),
                            strict=True,
                        )
                    }
                except StoreError as exc:
                    problems.append(str(exc))
                    unreadable = True
            held: dict[str, int] = {}
            if read_chunks is not None:
                try:
                    with self._guard("read the chunks table"):
                        table = read_chunks(None if full else ["document_id"])
                        if full:
                            self._check_rows(table, problems)
                        counted = pc.value_counts(table.column("document_id")).to_pylist()
                    held = {str(v["values"]): int(v["counts"]) for v in counted}
                except StoreError as exc:
                    problems.append(str(exc))
                    unreadable = True
            elif any(count > 0 for _, count in recorded.values()):
                problems.append(
                    f"LanceDB store at {self.location}: the chunks table is missing "
                    f"({self._table_uri(self.table)})"
                )
            if not unreadable:
                unfinished = sorted(d for d, (f, _c) in recorded.items() if f == UNFINISHED)
                if unfinished:
                    problems.append(
                        f"{len(unfinished)} document(s) whose write did not finish, e.g. "
                        f"{unfinished[0]!r}"
                    )
                wrong = sorted(
                    d for d, (f, c) in recorded.items()
                    if f != UNFINISHED and held.get(d, 0) != c
                )
                if wrong:
                    d = wrong[0]
                    problems.append(
                        f"{len(wrong)} document(s) without the chunks recorded for them, e.g. "
                        f"{d!r} ({held.get(d, 0)} of {recorded[d][1]})"
                    )
                orphans = sorted(d for d in held if d not in recorded)
                if orphans:
                    problems.append(
                        f"{sum(held[d] for d in orphans)} chunk(s) of no recorded document, e.g. "
                        f"of {orphans[0]!r}"
                    )
                damaged.update(unfinished, wrong, orphans)
                if full and held and not problems:
                    self._check_indexes(problems)
        return StoreCheck(
            self.location, tuple(problems), tuple(sorted(damaged)), unreadable, busy, full
        )

    def _check_rows(self, table: Any, problems: list[str]) -> None:
        """Every chunk has a vector of the table's dimension and a unique id in its document."""
        vectors = table.column("vector")
        if vectors.null_count:
            problems.append(f"{vectors.null_count} chunk(s) without a vector")
        pairs = set(zip(
            table.column("document_id").to_pylist(), table.column("id").to_pylist(), strict=True
        ))
        if len(pairs) != table.num_rows:
            problems.append(f"{table.num_rows - len(pairs)} chunk(s) stored twice")

    def _check_indexes(self, problems: list[str]) -> None:
        """Query the full-text and vector indexes once each."""
        chunks = self._tables()[0]
        if chunks is None:
            return
        try:
            with self._guard("read the indexes"):
                names = self._index_names(chunks)
            if _TEXT_COLUMN in names:
                self._text(chunks, "the", 1, None)
            dimension = self.dimension
            if dimension:
                self._vector(chunks, [1.0] * dimension, 1, 1, None, self._vector_index)
        except StoreError as exc:
            problems.append(str(exc))

    def repair(self) -> tuple[StoreCheck, list[str]]:
        """Remove what :meth:`check` (full) finds damaged; return that check and the ids of
        the documents removed (``["*"]`` when data that could not be read was dropped, and
        with it every document that had chunks there). Takes the writer lock.

        What stays is consistent; ingesting the files again writes the removed documents, and
        the index is then what a fresh build gives.
        """
        with self._lock:
            self.take_writer_lock()
            found = self.check(full=True)
            if found.ok:
                return found, []
            removed: list[str] = []
            if found.unreadable:
                removed = self._drop_unreadable()
            else:
                chunks, documents = self._tables()
                ids = list(found.damaged)
                if ids:
                    if chunks is not None:
                        with self._guard("delete the damaged documents' chunks"):
                            for predicate in self._in("document_id", ids):
                                chunks.delete(predicate)
                    if documents is not None:
                        with self._guard("delete the damaged documents"):
                            for predicate in self._in("document_id", ids):
                                documents.delete(predicate)
                    removed = ids
                chunks = self._tables()[0]
                if chunks is not None and not self.check(full=True).ok:
                    # The data agree but an index cannot be read: build the indexes again.
                    with self._guard("rebuild the indexes"):
                        for index in chunks.list_indices():
                            chunks.drop_index(index.name)
                    self._forget_indexes()
                    self._ensure_indexes()
                    self._ensure_vector_index(chunks)
            self._wrote = True
            self._cleanup()
            return found, removed

    def _drop_unreadable(self) -> list[str]:
        """Drop the tables whose data cannot be read, and the documents that lose their
        chunks with them."""
        lost_chunks = lost_documents = False
        options = self._options or None
        for name in (self.table, self._documents_table):
            if not self._table_exists(name):
                lost_chunks |= name == self.table
                continue
            try:
                with self._guard(f"read table {name!r}"):
                    if _has_lance():
                        import lance

                        lance.dataset(self._table_uri(name), storage_options=options).to_table()
                    else:
                        lancedb = import_lancedb()
                        lancedb.connect(self.uri, storage_options=options).open_table(
                            name
                        ).to_arrow()
            except StoreError:
                with self._guard(f"remove the damaged table {name!r}"):
                    self._remove_table(name)
                lost_chunks |= name == self.table
                lost_documents |= name == self._documents_table
        self._documents = self._db = None
        self._forget_chunks()
        if lost_documents and self._table_exists(self.table):
            with self._guard("remove the chunks of unknown documents"):
                self._remove_table(self.table)
        if lost_chunks and not lost_documents:
            documents = self._tables()[1]
            if documents is not None:
                with self._guard("delete the documents whose chunks were lost"):
                    documents.delete("chunks > 0 OR fingerprint = ''")
        return ["*"]

    def _remove_table(self, name: str) -> None:
        if self._folder is not None:
            self._folder.remove(f"{name}.lance")
        else:
            import shutil

            shutil.rmtree(self._table_dir(name))

    def _cleanup(self) -> None:
        """Remove old versions and files no version uses (a crashed writer's): only with the
        writer lock held, so no write of another process can be under way."""
        if self._writer is None or not self._wrote or self._failed or self._db is None:
            return
        import warnings
        from datetime import timedelta

        for table in (self._chunks, self._documents):
            if table is None:
                continue
            try:
                with self._guard("remove old versions"), warnings.catch_warnings():
                    # lancedb 0.40 deprecates it for optimize(), which also rewrites files
                    warnings.simplefilter("ignore", DeprecationWarning)
                    table.cleanup_old_versions(timedelta(0), delete_unverified=True)
            except StoreError:
                pass  # only space: the next writer tries again

    # -- reading ----------------------------------------------------------------------------

    def chunks(
        self, document_ids: Iterable[str] | None = None, *, vectors: bool = True
    ) -> dict[str, list[Document]]:
        """The stored chunks of these documents (``None``: of every document), by document
        id, each document's in chunk order, every chunk with its vector as ``embedding``
        (``vectors=False``: without, reading no vector).

        What an index holds, read back whole (to inspect or export it, or to check it against
        a fresh ingest); a document with no chunks, or not stored, has no entry. Reads every
        matching row into memory.
        """
        ids = None
        if document_ids is not None:
            if isinstance(document_ids, str):
                raise InvalidInputError("chunks takes document ids, not one string")
            ids = list(dict.fromkeys(document_ids))
            if not ids:
                return {}
        snapshot = self._snapshot()
        chunks = snapshot.chunks if snapshot is not None else self._tables()[0]
        if chunks is None:
            return {}
        columns = list(_CHUNK_COLUMNS) if vectors else _RESULT_COLUMNS
        with self._guard("read the chunks"):
            if _is_dataset(chunks):
                tables = [chunks.to_table(columns=list(columns))] if ids is None else [
                    chunks.to_table(columns=list(columns), filter=predicate)
                    for predicate in self._in("document_id", ids)
                ]
            elif ids is None:
                tables = [
                    chunks.to_arrow() if vectors
                    else chunks.search().select(columns).limit(None).to_arrow()
                ]
            else:
                tables = [
                    chunks.search().where(predicate).select(columns).limit(None).to_arrow()
                    for predicate in self._in("document_id", ids)
                ]
        found: dict[str, list[Document]] = {}
        for table in tables:
            listed_vectors = (
                table.column("vector").to_pylist() if vectors else [None] * table.num_rows
            )
            for row, vector in zip(
                table.select(_RESULT_COLUMNS).to_pylist(), listed_vectors, strict=True
            ):
                found.setdefault(row["document_id"], []).append(_chunk_of(row, vector))
        for listed in found.values():
            listed.sort(key=lambda c: (c.index is None, c.index or 0, c.id))
        return dict(sorted(found.items()))

    def count_values(self, key: str) -> dict[str | None, tuple[int, int]]:
        """Every string value of the metadata key ``key`` among the stored chunks, with how
        many documents and chunks hold it; ``None`` counts the chunks without one (a chunk
        whose value is a list counts for each of its strings). Reads two light columns
        (document ids and the metadata's ``where`` tokens), no text and no vector."""
        import pyarrow.compute as pc

        pairs, documents = self._values(key)
        counts: dict[str | None, tuple[int, int]] = {}
        if pairs.num_rows:
            by_value = pairs.group_by("value", use_threads=False).aggregate(
                [("document_id", "count"), ("chunks", "sum")]
            )
            for value, docs, chunks in zip(
                by_value.column("value").to_pylist(),
                by_value.column("document_id_count").to_pylist(),
                by_value.column("chunks_sum").to_pylist(),
                strict=True,
            ):
                counts[value] = (int(docs), int(chunks))
        bare = documents.filter(pc.greater(documents.column("bare"), 0))
        if bare.num_rows:
            counts[None] = (bare.num_rows, int(pc.sum(bare.column("bare")).as_py()))
        return {
            value: counts[value]
            for value in sorted(counts, key=lambda v: (v is None, v or ""))
        }

    def document_values(self, key: str) -> dict[str, list[str]]:
        """The string values of the metadata key ``key`` of each stored document (the union
        over its chunks, in the order first met; a document whose chunks hold none has an
        empty list). Reads the same two light columns as :meth:`count_values`."""
        pairs, documents = self._values(key)
        found: dict[str, list[str]] = {
            document: [] for document in documents.column("document_id").to_pylist()
        }
        ordered = pairs.sort_by([("document_id", "ascending"), ("first", "ascending")])
        for document, value in zip(
            ordered.column("document_id").to_pylist(), ordered.column("value").to_pylist(),
            strict=True,
        ):
            found[document].append(value)
        return dict(sorted(found.items()))

    def _values(self, key: str) -> tuple[pa.Table, pa.Table]:
        """The values of the metadata key ``key``, read in batches and counted with Arrow
        (what is kept grows with the documents and values, not the chunks; ``ragloom
        ingest`` reads them after every run to fit its routes): (``document_id``, ``value``,
        ``chunks`` holding it, ``first`` row holding it) for each document and value, and
        (``document_id``, ``bare``: its chunks holding no value) for each document. The
        last answer is kept while the table's version stays the same (:meth:`count_values`
        and :meth:`document_values` are asked one after the other)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not isinstance(key, str) or not key:
            raise InvalidInputError(f"key must be a metadata key, got {key!r}")
        # Read as searches read (the whole version they see, through Lance alone) unless this
        # handle writes: `ragloom eval` and the routes' probe then never import lancedb.
        snapshot = self._snapshot()
        chunks = snapshot.chunks if snapshot is not None else self._tables()[0]
        empty = (
            pa.table({"document_id": pa.array([], pa.string()), "value": pa.array([], pa.string()),
                      "chunks": pa.array([], pa.int64()), "first": pa.array([], pa.int64())}),
            pa.table({"document_id": pa.array([], pa.string()),
                      "bare": pa.array([], pa.int64())}),
        )
        if chunks is None:
            return empty
        prefix = f"{len(key)}:{key}=s"
        with self._guard("read the metadata"):
            dataset = chunks if _is_dataset(chunks) else chunks.to_lance()
            version = (key, dataset.uri, dataset.version)
            if self._values_memo is not None and self._values_memo[0] == version:
                return self._values_memo[1]
            pairs: list[pa.Table] = []
            bare: list[pa.Table] = []
            offset = 0
            for batch in dataset.to_batches(
                columns=["document_id", "where_tokens"], batch_size=_READ_BATCH
            ):
                documents, tokens = batch.column(0), batch.column(1)
                flat = pc.list_flatten(tokens)
                rows = pc.list_parent_indices(tokens)
                keep = pc.starts_with(flat, prefix)
                rows = pc.filter(rows, keep)
                values = pc.utf8_slice_codeunits(pc.filter(flat, keep), len(prefix))
                # each chunk counts once for each of its values
                held = pa.table({"row": rows, "value": values}).group_by(
                    ["row", "value"], use_threads=False
                ).aggregate([])
                rows = held.column("row")
                # summed per batch: what is kept grows with the documents, not the chunks
                pairs.append(pa.table({
                    "document_id": pc.take(documents, rows),
                    "value": held.column("value"),
                    "first": pc.add(pc.cast(rows, pa.int64()), offset),
                }).group_by(["document_id", "value"], use_threads=False).aggregate(
                    [("first", "count"), ("first", "min")]
                ).rename_columns({"first_count": "chunks", "first_min": "first"}))
                valued = pc.is_in(
                    pa.array(range(batch.num_rows), pa.int64()),
                    value_set=pc.cast(pc.unique(rows), pa.int64()),
                )
                bare.append(pa.table({
                    "document_id": documents,
                    "bare": pc.cast(pc.invert(valued), pa.int64()),
                }).group_by("document_id", use_threads=False).aggregate([("bare", "sum")])
                    .rename_columns({"bare_sum": "bare"}))
                offset += batch.num_rows
            if not bare:
                return empty
            summed = pa.concat_tables(pairs).group_by(
                ["document_id", "value"], use_threads=False
            ).aggregate([("chunks", "sum"), ("first", "min")])
            merged_pairs = pa.table({
                "document_id": summed.column("document_id"), "value": summed.column("value"),
                "chunks": summed.column("chunks_sum"), "first": summed.column("first_min"),
            })
            counted = pa.concat_tables(bare).group_by("document_id", use_threads=False).aggregate(
                [("bare", "sum")]
            )
            merged_bare = pa.table({
                "document_id": counted.column("document_id"), "bare": counted.column("bare_sum"),
            })
        found = (merged_pairs, merged_bare)
        self._values_memo = (version, found)
        return found

    def fingerprints(self) -> dict[str, str]:
        with self._lock:
            if self._writes or not _has_lance():
                documents = self._tables()[1]
                if documents is None:
                    return {}
                with self._guard("read the documents"):
                    rows = documents.to_arrow()
            else:
                dataset = self._peek(self._documents_table)
                if dataset is None:
                    return {}
                with self._guard("read the documents"):
                    rows = dataset.to_table(columns=["document_id", "fingerprint"])
        return dict(
            zip(
                rows.column("document_id").to_pylist(),
                rows.column("fingerprint").to_pylist(),
                strict=True,
            )
        )

    def info(self) -> StoreInfo:
        snapshot = self._snapshot()
        if snapshot is not None:  # the version searches read, through Lance alone
            chunks, documents = snapshot.chunks, snapshot.documents
        else:
            chunks, documents = self._tables()
        with self._guard("count the rows"):
            n_docs = documents.count_rows() if documents is not None else 0
            n_chunks = chunks.count_rows() if chunks is not None else 0
            details: dict[str, Any] = {
                "table": self.table,
                "path": self.uri if self.path is None else str(self.path.resolve()),
            }
            if chunks is not None:
                details["version"] = chunks.version
                text_index = f"{_TEXT_COLUMN}_idx"
                if _is_dataset(chunks):
                    details["indexes"] = sorted(i.name for i in chunks.describe_indices())
                    if text_index in details["indexes"]:
                        stats = chunks.stats.index_stats(text_index)
                        details["rows_not_in_text_index"] = int(stats["num_unindexed_rows"])
                else:
                    details["indexes"] = sorted(i.name for i in chunks.list_indices())
                    if text_index in details["indexes"]:
                        stats = chunks.index_stats(text_index)
                        details["rows_not_in_text_index"] = int(stats.num_unindexed_rows)
        return StoreInfo(
            location=self.location,
            documents=n_docs,
            chunks=n_chunks,
            dimension=self.dimension,
            details=details,
        )

    def search(
        self,
        *,
        vector: Sequence[float] | None = None,
        text: str | None = None,
        top_k: int = 10,
        where: Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
    ) -> list[ScoredChunk]:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
        if mode is None:
            if vector is not None and text is not None:
                mode = "hybrid"
            elif vector is not None:
                mode = "vector"
            elif text is not None:
                mode = "text"
            else:
                raise StoreError("search needs a vector, a text or both")
        if mode not in ("vector", "text", "hybrid"):
            raise StoreError(f"unknown search mode {mode!r}: use 'vector', 'text' or 'hybrid'")
        if mode in ("vector", "hybrid") and vector is None:
            raise StoreError(f"a {mode} search needs a vector")
        if mode in ("text", "hybrid") and text is None:
            raise StoreError(f"a {mode} search needs a text")
        if text is not None and not isinstance(text, str):
            raise StoreError(f"the search text must be a string, got {type(text).__name__}")
        if where is not None and not isinstance(where, Mapping):
            raise StoreError(f"where must be a mapping, got {type(where).__name__}")
        snapshot = self._snapshot()
        try:
            return self._search(snapshot, vector, text, top_k, where, mode)
        except StoreError:
            if snapshot is None or not _superseded(snapshot):
                raise
        # The version this search began on was replaced meanwhile, and its files removed (an
        # optimize or a writer's close keeps no old version): search the newest one instead.
        with self._lock:
            if self._pinned is snapshot:
                self._pinned = None
        return self._search(self._snapshot(), vector, text, top_k, where, mode)

    def _search(
        self,
        snapshot: _Snapshot | None,
        vector: Sequence[float] | None,
        text: str | None,
        top_k: int,
        where: Mapping[str, Any] | None,
        mode: SearchMode,
    ) -> list[ScoredChunk]:
        if snapshot is not None and (snapshot.has_text_index or mode == "vector"):
            chunks, index = snapshot.chunks, snapshot.vector_index
            query = None if vector is None else self._query_vector(vector, snapshot.dimension)
        else:  # through LanceDB (which builds a full-text index that a crash left unbuilt)
            query = None if vector is None else self._query_vector(vector, self.dimension)
            chunks, _ = self._tables()
            index = self._vector_index
            if chunks is not None and mode != "vector":
                self._ensure_text_index(chunks)
        if chunks is None:
            return []
        predicate = condition_sql(where, "where_tokens")
        if predicate == "FALSE":
            return []
        if mode == "vector":
            assert query is not None
            found = self._vector(chunks, query, top_k, top_k, predicate, index)
        elif mode == "text":
            assert text is not None
            found = self._text(chunks, text, top_k, predicate)
        else:
            assert query is not None and text is not None
            depth = max(top_k, self.hybrid_candidates)
            # The two searches run at once (Lance works outside the GIL).
            by_text = self._helper().submit(self._text, chunks, text, depth, predicate)
            by_vector = self._vector(chunks, query, depth, top_k, predicate, index)
            found = self._fuse(by_vector, by_text.result(), top_k)
        return self._read_found(chunks, found)

    def _read_found(self, chunks: Any, found: list[_Found]) -> list[ScoredChunk]:
        """The found chunks, reading the rows of those only named by their row id (through
        Lance, searches read row ids and scores, and only the rows kept are read: a hybrid
        search ranks twice ``hybrid_candidates`` rows and keeps ``top_k``)."""
        wanted = [key for key, chunk, _ in found if chunk is None]
        read: dict[object, Document] = {}
        if wanted:
            with self._lock:
                if self._rows_of is not chunks:  # another version: its row ids name others
                    self._rows_of = chunks
                    self._rows_kept.clear()
                for key in wanted:
                    kept = self._rows_kept.get(key)
                    if kept is not None:
                        self._rows_kept.move_to_end(key)
                        read[key] = kept
            missing = [key for key in wanted if key not in read]
            if missing:
                with self._guard("read the found chunks"):
                    # Lance's take by row id (row ids a search of this same version returned)
                    rows = chunks._take_rows(missing, columns=[*_RESULT_COLUMNS, "_rowid"])
                fresh = {row["_rowid"]: _chunk_of(row) for row in rows.to_pylist()}
                read.update(fresh)
                with self._lock:
                    if self._rows_of is chunks:
                        self._rows_kept.update(fresh)
                    while len(self._rows_kept) > _ROWS_KEPT:
                        self._rows_kept.popitem(last=False)
        out = []
        for key, chunk, score in found:
            chunk = chunk if chunk is not None else read.get(key)
            if chunk is None:
                raise StoreError(
                    f"LanceDB store at {self.location}: a found row could not be read back"
                )
            out.append(ScoredChunk(chunk, score))
        return out

    def _helper(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(2, thread_name_prefix="ragloom-lancedb")
            return self._pool

    def _query_vector(self, vector: Sequence[float], dimension: int | None) -> list[float]:
        try:
            values = [float(v) for v in vector]
        except (TypeError, ValueError):
            raise StoreError("the search vector must be a sequence of numbers") from None
        if not all(math.isfinite(v) for v in values):
            raise StoreError("the search vector holds NaN or infinity")
        if dimension is not None and len(values) != dimension:
            raise StoreError(
                f"LanceDB store at {self.location} holds vectors of dimension {dimension}; "
                f"the search vector has dimension {len(values)}"
            )
        return values

    @staticmethod
    def _rows(table: Any, score: str, transform: Any) -> list[_Found]:
        """The rows of a search's result: read whole (where LanceDB reads), or only their row
        ids and scores (through Lance: :meth:`_read_found` reads the rows kept)."""
        out: list[_Found] = []
        if "_rowid" in table.column_names:
            ids = table.column("_rowid").to_pylist()
            for key, value in zip(ids, table.column(score).to_pylist(), strict=True):
                if value is not None and math.isfinite(value):  # a zero vector has no cosine
                    out.append((key, None, float(transform(value))))
            return out
        for row in table.to_pylist():
            value = row[score]
            if value is None or not math.isfinite(value):
                continue  # a zero vector has no cosine
            chunk = _chunk_of(row)
            out.append(((row["document_id"], chunk.id), chunk, float(transform(value))))
        return out

    def _vector(
        self,
        chunks: Any,
        query: list[float],
        limit: int,
        shown: int,
        predicate: str | None,
        index: _VectorIndex | None,
    ) -> list[_Found]:
        """The ``limit`` chunks nearest to ``query``, of which the search shows ``shown``."""
        probes = None if index is None else (
            self.vector_nprobes or max(20, math.ceil(index.partitions / 4))
        )
        # every partition read: as cheap, and exact, without the index
        exact = index is None or probes is None or probes >= index.partitions
        columns = [*_RESULT_COLUMNS, "_distance"]
        # a quantized index's candidates ranked again by exact distance
        refine = None
        if index is not None and index.quantized:
            least = _REFINE_CANDIDATES if index.bits > 1 else _REFINE_CANDIDATES_ONE_BIT
            refine = math.ceil(max(2 * shown, limit, least) / limit)
        while True:
            nprobes = None if exact else probes
            with self._guard("search by vector"):
                if _is_dataset(chunks):
                    import numpy as np

                    nearest: dict[str, Any] = {
                        # an array, not a list: Lance converts and copies a list of Python
                        # floats at every search (0.4-0.9 ms of a search's 2-8 ms CPU)
                        "column": "vector", "q": np.asarray(query, dtype=np.float32),
                        "k": limit, "metric": "cosine",
                    }
                    if nprobes is None:
                        nearest["use_index"] = False
                    else:
                        nearest["nprobes"] = nprobes
                        if refine is not None:
                            nearest["refine_factor"] = refine
                    found = chunks.to_table(
                        columns=["_distance"], with_row_id=True, nearest=nearest,
                        filter=predicate, prefilter=predicate is not None,
                    )
                else:
                    builder = (
                        chunks.search(query, vector_column_name="vector", query_type="vector")
                        .distance_type("cosine")
                        .select(columns)
                        .limit(limit)
                    )
                    if nprobes is None:
                        builder = builder.bypass_vector_index()
                    else:
                        builder = builder.nprobes(nprobes)
                        if refine is not None:
                            builder = builder.refine_factor(refine)
                    if predicate is not None:
                        builder = builder.where(predicate, prefilter=True)
                    found = builder.to_arrow()
            if exact or predicate is None or found.num_rows >= limit:
                break
            exact = True  # a selective condition: the probed partitions held too few matches
        return self._rows(found, "_distance", lambda d: 1.0 - d)

    def _text(
        self, chunks: Any, text: str, limit: int, predicate: str | None
    ) -> list[_Found]:
        if not text.strip():
            return []
        columns = [*_RESULT_COLUMNS, "_score"]
        with self._guard("search the full text"):
            if _is_dataset(chunks):
                from lance.query import MatchQuery as LanceMatch

                found = chunks.to_table(
                    columns=["_score"], with_row_id=True,
                    full_text_query=LanceMatch(text, _TEXT_COLUMN),
                    limit=limit, filter=predicate, prefilter=predicate is not None,
                )
            else:
                from lancedb.query import MatchQuery

                builder = (
                    chunks.search(MatchQuery(text, _TEXT_COLUMN), query_type="fts")
                    .select(columns)
                    .limit(limit)
                )
                if predicate is not None:
                    builder = builder.where(predicate, prefilter=True)
                found = builder.to_arrow()
        return self._rows(found, "_score", float)

    def _fuse(
        self,
        by_vector: list[_Found],
        by_text: list[_Found],
        top_k: int,
    ) -> list[_Found]:
        """The two rankings fused (chunks keyed by their row): relative scores, or
        reciprocal ranks (see the class)."""
        relative = self.hybrid_fusion == "relative"
        weights = (self.vector_weight, 1.0)
        scores: dict[object, float] = {}
        chunks: dict[object, Document | None] = {}
        order: dict[object, tuple[int, int]] = {}
        for which, ranking in enumerate((by_vector, by_text)):
            values = [score for _, _, score in ranking]
            low, high = (min(values), max(values)) if values else (0.0, 0.0)
            for rank, (key, chunk, score) in enumerate(ranking, start=1):
                if relative:
                    gain = (score - low) / (high - low) if high > low else 1.0
                else:
                    gain = 1.0 / (self.hybrid_k + rank)
                scores[key] = scores.get(key, 0.0) + weights[which] * gain
                chunks.setdefault(key, chunk)
                order.setdefault(key, (which, rank))
        total = sum(weights) if relative else 1.0
        best = sorted(scores, key=lambda key: (-scores[key], order[key]))
        return [(key, chunks[key], scores[key] / total) for key in best[:top_k]]

    # -- lifetime ---------------------------------------------------------------------------

    def optimize(self) -> None:
        """Fold every write so far, merge the index segments folds made, join the table into
        files of ``_OPTIMIZED_FRAGMENT_ROWS`` rows, build (or retrain) the approximate vector
        index once the table has ``vector_index_rows`` chunks, and remove old versions. The
        one operation that works on the whole table (its memory grows with it); readers keep
        searching meanwhile and see the result at their next search."""
        self._writes = True
        with self._lock:
            chunks, documents = self._tables()
            if chunks is None and documents is None:
                return
            self._check_writable()
            self.take_writer_lock()
            self._wrote = True
            self._optimize()
            self._cleanup()

    def _unindexed(self) -> int:
        """Chunk rows the full-text index does not hold yet."""
        if self._chunks is None:
            return 0
        with self._guard("read the index statistics"):
            stats = self._chunks.index_stats(f"{_TEXT_COLUMN}_idx")
        return int(stats.num_unindexed_rows) if stats is not None else self._chunks.count_rows()

    def close(self) -> None:
        """Fold this handle's writes when the full-text index misses more than a few
        thousand rows (see :meth:`optimize`), and release the tables. Idempotent."""
        with self._lock:
            if self._closed:
                return
            try:
                if self._pending_commits and self._db is not None:
                    try:
                        self._check_writable()
                    except StoreError:
                        pass
                    else:
                        if (
                            self._pending_commits >= _OPTIMIZE_COMMITS
                            or self._unindexed() > _FOLD_TAIL
                        ):
                            # the vector index is left to optimize(): see the class
                            self._optimize(vectors=False)
                self._cleanup()
            finally:
                self._unlock()
                self._closed = True
                self._chunks = self._documents = self._db = None
                self._rows_kept.clear()
                self._rows_of = None
                if self._pool is not None:
                    self._pool.shutdown(wait=True)
                    self._pool = None


def _chunk_of(row: Mapping[str, Any], embedding: list[float] | None = None) -> Document:
    """The chunk a row of the chunks table holds (the vector only when given)."""
    return Document(
        id=row["id"],
        content=row["content"],
        content_format=row["content_format"],
        metadata=json.loads(row["metadata"]),
        parent_id=row["parent_id"],
        index=row["chunk_index"],
        start=row["span_start"],
        end=row["span_end"],
        embedding=embedding,
    )


_HAS_LANCE: bool | None = None


def _superseded(snapshot: _Snapshot) -> bool:
    """Whether a newer version of the documents or the chunks table was committed after
    ``snapshot`` was taken."""
    try:
        return bool(
            snapshot.documents.latest_version != snapshot.version
            or snapshot.chunks.latest_version != snapshot.chunks.version
        )
    except Exception:  # noqa: BLE001 - the table itself is unreadable: not a stale version
        return False


def _vector_size(schema: pa.Schema) -> int | None:
    """The fixed size of the schema's vector column (``None``: not a fixed size)."""
    size = getattr(schema.field("vector").type, "list_size", None)
    return int(size) if size is not None else None


def _is_dataset(table: Any) -> bool:
    """Whether ``table`` is a Lance dataset (read through Lance), not a LanceDB table."""
    return hasattr(table, "scanner")


def _has_lance() -> bool:
    """Whether Lance's Python package (``pylance``, import ``lance``) is installed (looked up
    once, without importing it)."""
    global _HAS_LANCE
    if _HAS_LANCE is None:
        import importlib.util

        _HAS_LANCE = importlib.util.find_spec("lance") is not None
    return _HAS_LANCE
