"""One ingestion run: documents fed to an engine, its outputs collected in input order, files
and documents finished, outputs written to the JSONL file and (in batches, by one background
thread) to the index; the index's parts an engine wrote where it ran are committed the same
way, and a run that fails leaves the index as it was."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ._files import load_file
from ._jsonl import AtomicJsonlWriter, chunk_record
from ._memo import FileMemo
from ._progress import ProgressCallback
from ._report import IngestProgress, IngestReport, Problem, doc_of
from ._states import FileStates
from ._walk import WalkResult

if TYPE_CHECKING:
    from ..events import ItemFailed
    from ..models import Document
    from ..stores import PartWriter, StorePart
    from ._seam import BatchMapper, BatchStats, Indexed, PipelineWork

__all__ = ["SEGMENT_CHARS", "STORE_BATCH_CHUNKS", "Run"]

#: Characters of input per pipeline run segment (bounds every in-flight window).
SEGMENT_CHARS = 16 * 1000 * 1000
#: Chunks gathered before they are written to a store in one batch (a batch goes on gathering
#: until the document that crosses this count is complete). One batch is written while the next
#: is gathered, never more.
STORE_BATCH_CHUNKS = 4096
#: Chunks of parts an engine wrote (:class:`~ragloom.engines.IndexPart`) gathered before they
#: are committed in one batch (a commit costs the same whatever it adds). Committing as parts
#: come keeps the commits and folds beside the engine's work: committing every part at the end
#: of the run (nothing to undo on failure) left them after the workers were done, alone: 4-5 s
#: of a 32 MB ingest into an index with 2 Ray workers on 2 cores (measured).
PART_COMMIT_CHUNKS = 16384


class Run:
    """One ingestion run: feeding documents, collecting outputs, tracking progress."""

    def __init__(
        self,
        store: Any,
        limits: tuple[int, Mapping[str, str]],
        report: IngestReport,
        writer: AtomicJsonlWriter | None,
        on_progress: ProgressCallback | None,
        fingerprint: Callable[[Document], str] | None,
        walked: WalkResult,
    ) -> None:
        #: The index the outputs go to (``None``: none).
        self.store = store
        #: The size limit of a file, and the formats skipped with a note.
        self.max_file_size, self.skip_formats = limits
        self.report = report
        self.writer = writer
        self.on_progress = on_progress
        self.fingerprint = fingerprint
        self.total = len(walked.files)
        self.done_files = 0
        self.bytes_done = 0
        self.warnings: list[str] = []
        #: Documents fed and not known finished, in order: (doc id, file index, size).
        self.pending: deque[tuple[str, int, int]] = deque()
        self.open_docs: dict[int, int] = {}  # file index -> documents not finished
        self.failed_docs: set[str] = set()
        #: Chunker name -> non-empty documents it returned no chunk for.
        self.no_chunks: dict[str, list[str]] = {}
        self.by_doc: dict[str, list[Any]] = {}
        self.fingerprints: dict[str, str] = {}
        self.batch: list[Any] = []
        self.batch_chunks = 0
        #: The store write under way in the background thread: (its future, its documents,
        #: the parts it commits).
        self.writing: tuple[Any, int, list[StorePart]] | None = None
        self.writer_pool: Any = None
        self.files = walked.files
        #: File contents -> the fingerprints of their documents, in the cache (see FileMemo).
        self.memo: FileMemo | None = None
        #: What each file was when last read, kept with the index (see FileStates).
        self.states: FileStates | None = None
        #: Documents unchanged in the index but processed anyway (for a JSONL output): their
        #: chunks are not written to the index again.
        self.kept: set[str] = set()
        #: Documents the index holds for files that no longer give them (removed at the end).
        self.stale: list[str] = []
        #: Reads a file for :func:`load_file` (``None``: a local file, read as usual).
        self.read: Callable[..., Any] | None = None
        #: The index's part writer when the engine writes the index where it runs
        #: (:attr:`PipelineWork.index_writer`): the parts it wrote are committed in batches,
        #: and a run that fails returns the index to where it stood (``None``: no parts).
        self.part_writer: PartWriter | None = None
        #: Parts the engine wrote, not yet handed to a commit, and the chunks they hold.
        self.parts: list[StorePart] = []
        self.part_chunks = 0
        #: Finished documents whose chunks are in parts, with their fingerprints, not yet
        #: handed to a commit (in input order).
        self.committed: dict[str, str] = {}
        #: Documents whose outputs the engine wrote to parts, not finished yet.
        self.in_parts: set[str] = set()

    # -- reading ---------------------------------------------------------------------------

    def documents(
        self, loaders: Any, known: dict[str, str] | None, skip: bool = True
    ) -> Iterator[Document]:
        """Read files one at a time; unusable ones become failures, empty ones are skipped.

        With ``known`` (the index's fingerprints), a document unchanged since it was indexed
        is left alone in the index: not processed at all when ``skip``, else (a JSONL output
        wants its chunks) processed but not written to the index again. Documents the index
        holds for a file that no longer gives them (an emptied file) become :attr:`stale`.
        """
        report = self.report
        memo = self.memo if known is not None and skip else None
        states = self.states if known is not None and skip else None
        held = known if known is not None else {}
        by_file: dict[str, list[str]] = {}
        for doc_id in held:
            by_file.setdefault(doc_id.split("#", 1)[0], []).append(doc_id)
        for index, file in enumerate(self.files):
            read, key = self.read, None
            found = None
            if states is not None:
                found = states.stat(file)
                if found is not None:
                    mine = [
                        (d, held[d]) for d in by_file.get(file.doc_id, ())
                        if d == file.doc_id or d.startswith(file.doc_id + "#")
                    ]
                    if states.unchanged(file, found[0], mine):
                        # The same size and times as when it gave these documents, which the
                        # index holds as they were: not even opened.
                        report.unchanged += len(mine)
                        report.bytes_read += found[0].st_size
                        self._file_done(index, found[0].st_size)
                        continue
            if memo is not None:
                source = memo.read(file, self.max_file_size)
                if source is not None:
                    key = memo.key(file, source, loaders)
                    listed = memo.get(key)
                    if listed and all(held.get(d) == p for d, p in listed):
                        # The same bytes, read by the same loader, gave these documents, and
                        # the index holds them as they were: nothing to load or process.
                        report.unchanged += len(listed)
                        report.bytes_read += len(source.data)
                        if states is not None:
                            states.record(file, found, listed)
                        self._file_done(index, len(source.data))
                        continue
                    read = _already_read(source)
            loaded = load_file(
                file, loaders, max_file_size=self.max_file_size,
                skip_formats=self.skip_formats, read=read,
            )
            report.skipped.extend(loaded.skipped)
            report.failures.extend(loaded.failures)
            report.bytes_read += loaded.bytes_read
            if known is not None and not loaded.failures:
                given = {d.id for d in loaded.documents} | {
                    p.item for p in loaded.skipped if p.kind != "empty"
                }
                self.stale.extend(
                    d for d in by_file.get(file.doc_id, ())
                    if d not in given and (d == file.doc_id or d.startswith(file.doc_id + "#"))
                )
            fed = 0
            printed: list[tuple[str, str]] = []
            for document in loaded.documents:
                if self.fingerprint is not None:
                    print_ = self.fingerprint(document)
                    printed.append((document.id, print_))
                    if known is not None and known.get(document.id) == print_:
                        report.unchanged += 1
                        if skip:
                            continue
                        self.kept.add(document.id)
                    else:
                        self.fingerprints[document.id] = print_
                report.documents += 1
                self.pending.append((document.id, index, loaded.size))
                self.open_docs[index] = self.open_docs.get(index, 0) + 1
                fed += 1
                yield document
            whole = not (loaded.skipped or loaded.failures)
            if memo is not None and key is not None and printed and whole:
                memo.put(key, file.doc_id, printed)
            if states is not None:
                states.record(file, found, printed if whole else None)
            if not fed:
                self._file_done(index, loaded.size)

    # -- running ---------------------------------------------------------------------------

    async def drive(
        self, mapper: BatchMapper, work: PipelineWork, documents: Iterator[Document]
    ) -> None:
        """Feed ``documents`` to ``mapper`` in batches; take its outputs, failures and
        statistics as they come."""
        from ..events import ItemFailed
        from ._seam import BatchStats, Indexed, IndexPart, Output

        events = mapper.map_batches(work, _segments(documents, SEGMENT_CHARS))
        try:
            async for event in events:
                if isinstance(event, Output):
                    self._output(event.item)
                elif isinstance(event, ItemFailed):
                    self._failed(event)
                elif isinstance(event, BatchStats):
                    self._stats(event)
                elif isinstance(event, Indexed):
                    self._indexed(event)
                elif isinstance(event, IndexPart):
                    self._part(event.part)
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:  # an async generator: its own finally runs here, in this task
                await close()
        self._no_chunks_reported()
        self._finish_through(None)
        self._flush_store()
        self._commit_parts()
        self._wait_store()

    def _failed(self, event: ItemFailed) -> None:
        doc_id = doc_of(event.item) or event.item_id
        self.report.failures.append(Problem.of_failure(event))
        self.failed_docs.add(doc_id)
        if getattr(event.item, "parent_id", None) is None:
            # A whole document failed: nothing more will come out of it.
            self._finish_through(doc_id)

    def _stats(self, stats: BatchStats) -> None:
        self.report.cache_hits += stats.cache_hits
        self.report.cache_misses += stats.cache_misses
        for line in stats.warnings:
            if line not in self.warnings:
                self.warnings.append(line)
        for name, ids in stats.no_chunks.items():
            self.no_chunks.setdefault(name, []).extend(ids)

    def _no_chunks_reported(self) -> None:
        """One warning per chunker that returned no chunk for non-empty documents (with the
        count), and each such document listed with the skipped ones."""
        from ..context import warn_no_chunks

        if not self.no_chunks:
            return
        for line in warn_no_chunks(self.no_chunks):
            if line not in self.warnings:
                self.warnings.append(line)
        shown = {f.doc_id: f.shown for f in self.files}
        for name, ids in self.no_chunks.items():
            for doc_id in ids:
                self.report.skipped.append(Problem(
                    doc_id, shown.get(doc_id, doc_id), name, "no-chunks",
                    f"{name} returned no chunks for this non-empty document",
                ))

    def _output(self, out: Any) -> None:
        doc_id = doc_of(out)
        if doc_id is not None:
            self._finish_before(doc_id)
        if self.writer is not None:
            try:
                self.writer.write(chunk_record(out))
            except ValueError as exc:
                source = getattr(out, "metadata", {}).get("source") or doc_id
                self.report.failures.append(Problem(
                    str(getattr(out, "id", "?")), str(source), "write", "ValueError",
                    f"not written: its JSON would not be standard ({exc}); metadata must hold "
                    "finite numbers",
                ))
                if doc_id is not None:
                    self.failed_docs.add(doc_id)
                return
        self.report.chunks += 1
        if self.store is not None and doc_id is not None:
            self.by_doc.setdefault(doc_id, []).append(out)

    def _indexed(self, event: Indexed) -> None:
        """A document's outputs, written to the index's part where the engine ran them."""
        if self.part_writer is None:
            raise TypeError(
                f"the engine wrote the outputs of {event.document_id!r} to the index without "
                "being given an index writer"
            )
        self._finish_before(event.document_id)
        self.in_parts.add(event.document_id)
        self.report.chunks += event.count

    def _part(self, part: StorePart) -> None:
        """A part the engine wrote: every document it holds is finished (a batch's events all
        come before its part), and the parts are committed once they hold enough chunks."""
        if part.documents:
            self._finish_through(part.documents[-1][0])
        self.parts.append(part)
        self.part_chunks += sum(count for _, count in part.documents)
        if self.part_chunks >= PART_COMMIT_CHUNKS:
            self._commit_parts()

    # -- completion, progress and the store --------------------------------------------------

    def _finish_before(self, doc_id: str) -> None:
        """Outputs follow input order: every document fed before ``doc_id`` is finished."""
        while self.pending and self.pending[0][0] != doc_id:
            self._complete(self.pending.popleft())

    def _finish_through(self, doc_id: str | None) -> None:
        """Finish every pending document up to ``doc_id`` included (``None``: all)."""
        if doc_id is not None and all(d != doc_id for d, _i, _s in self.pending):
            return
        while self.pending:
            entry = self.pending.popleft()
            self._complete(entry)
            if entry[0] == doc_id:
                return

    def _complete(self, entry: tuple[str, int, int]) -> None:
        doc_id, index, size = entry
        if (
            self.store is not None
            and doc_id not in self.failed_docs
            and doc_id not in self.kept
        ):
            from ..stores import IndexedDocument

            chunks = self.by_doc.pop(doc_id, [])
            fingerprint = self.fingerprints.pop(doc_id, "")
            if doc_id in self.in_parts:  # its chunks are in a part: recorded with it
                self.in_parts.discard(doc_id)
                self.committed[doc_id] = fingerprint
                chunks = []
            else:
                self.batch.append(IndexedDocument(doc_id, fingerprint, chunks))
            self.batch_chunks += len(chunks)
            if self.batch_chunks >= STORE_BATCH_CHUNKS:
                self._flush_store()
        else:
            self.by_doc.pop(doc_id, None)
            self.fingerprints.pop(doc_id, None)
        left = self.open_docs.get(index, 1) - 1
        if left <= 0:
            self.open_docs.pop(index, None)
            self._file_done(index, size)
        else:
            self.open_docs[index] = left

    def _file_done(self, index: int, size: int) -> None:
        self.done_files += 1
        self.bytes_done += size
        if self.on_progress is not None:
            self.on_progress(IngestProgress(self.done_files, self.total, self.bytes_done))

    def _flush_store(self) -> None:
        """Hand the gathered batch to the writer thread, once the previous write is done."""
        store = self.store
        if store is None or not self.batch:
            return
        batch, self.batch, self.batch_chunks = self.batch, [], 0
        self._submit(store.write, (batch,), len(batch))

    def _commit_parts(self) -> None:
        """Hand the parts gathered, with their documents' fingerprints, to the writer thread
        to commit, once the previous write is done."""
        if self.store is None or not (self.parts or self.committed):
            return
        parts, self.parts, self.part_chunks = self.parts, [], 0
        fingerprints, self.committed = self.committed, {}
        self._submit(self.store.commit_parts, (fingerprints, parts), len(fingerprints), parts)

    def _submit(
        self, write: Callable[..., Any], args: tuple[Any, ...], count: int,
        parts: list[StorePart] | None = None,
    ) -> None:
        self._wait_store()
        if self.writer_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self.writer_pool = ThreadPoolExecutor(1, thread_name_prefix="ragloom-ingest-store")
        self.writing = (self.writer_pool.submit(write, *args), count, parts or [])

    def _wait_store(self) -> None:
        """Wait for the write under way; its error, if any, is raised here."""
        if self.writing is None:
            return
        future, count, parts = self.writing
        self.writing = None
        try:
            future.result()
        except BaseException:
            self.parts += parts  # never committed: removed with the others
            raise
        self.report.indexed += count

    def close_store(self, failed: bool = False) -> None:
        """Wait for the write under way (its error is raised unless the run ``failed``
        already: then that error goes on its way) and stop the writer thread. When the run
        failed and the engine wrote parts, the index returns to where it stood before the run
        and the parts never committed are removed (:meth:`~ragloom.stores.Store.discard_parts`)."""
        lost: list[StorePart] = []
        try:
            if not failed:
                try:
                    self._wait_store()
                except BaseException:
                    failed = True
                    raise
            elif self.writing is not None:
                future, _count, parts = self.writing
                self.writing = None
                if future.exception() is not None:  # waits; the error in flight goes on
                    lost += parts
        finally:
            if self.writer_pool is not None:
                self.writer_pool.shutdown(wait=True)
                self.writer_pool = None
            if failed and self.part_writer is not None and self.store is not None:
                lost += self.parts
                self.parts = []
                self.store.discard_parts(lost)


def _already_read(source: Any) -> Callable[..., Any]:
    """A reader for :func:`load_file` that hands over a file already read."""

    def read(*_args: Any, **_kwargs: Any) -> Any:
        return source

    return read


def _segments(items: Iterator[Document], budget: int) -> Iterator[Iterator[Document]]:
    """Split a stream of documents into consecutive runs of about ``budget`` characters."""
    pending: list[Document] = []

    def segment(head: Document) -> Iterator[Document]:
        used = len(head.content)
        yield head
        for item in items:
            if used + len(item.content) > budget:
                pending.append(item)
                return
            used += len(item.content)
            yield item

    while True:
        head = pending.pop() if pending else next(items, None)
        if head is None:
            return
        yield segment(head)
