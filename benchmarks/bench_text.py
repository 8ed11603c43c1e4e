"""ragloom-text chunkers against peer splitters, on the same real text, in one run.

Peers are installed for the benchmark only (in a fresh virtual environment, to measure what a
new user gets):

    pip install -e core -e "plugins/text[tokens]" -e plugins/semantic
    pip install "langchain-text-splitters==1.1.3" chonkie semchunk semantic-text-splitter \\
        tokenizers transformers
    python benchmarks/bench_text.py [--repeat 3] [--size 512] [--min-bytes 20000000]
        [--format-bytes 4000000] [--token-bytes 4000000] [--sections recursive,markdown,...]

Sections (all by default):

- ``recursive``: the 20 MB corpus of ``tests/support/corpus.py`` (descriptions of the
  installed distributions, documentation files under site-packages, standard-library
  sources): recursive splitting at 512 characters, overlap 0 and 64.
- ``markdown``: its Markdown part, Markdown-aware splitters.
- ``formats``: a second corpus of ordinary files found on this machine
  (``build_format_corpus``: Python sources, Markdown, reStructuredText, plain text, up to
  ``--format-bytes`` each), one table per format.
- ``tokens``: token budgets (``--token-size`` tokens, overlap 0 and 64) with one tokenizer for
  every contender: the bundled model's ``tokenizer.json`` (ragloom ``length_function=
  "tokens"``, LangChain ``from_huggingface_tokenizer`` over a transformers fast tokenizer
  loaded from that file, chonkie ``TokenChunker`` over the ``tokenizers`` object), on up to
  ``--token-bytes`` taken evenly from the ordinary-files corpus.

What is timed is what a user calls. Rows marked ``+Documents`` build the library's chunk
objects from parent documents made beforehand (ragloom: ``chunker.chunk(document)`` returns
``Document`` chunks; LangChain: ``split_documents`` returns ``Document`` chunks), one document
at a time, each document's chunks dropped once made, as a pipeline that writes them out does;
``+Documents kept`` keeps every chunk object of the corpus alive until the end, as
``chunks = chunker.chunk(docs)`` in a notebook does (the garbage collector then scans them
again and again: in CPython that costs about as much as building them). Rows without either
return strings (ragloom: the spans of ``chunker.spans`` sliced into strings), all kept.
chonkie always builds its ``Chunk`` objects (kept). Converting outputs for the checks happens
after the clock stops.
A token-counting chunker is built anew for each round and ragloom's tokenizer memo is emptied
first, so every round starts cold.

Times are CPU seconds of this process (``time.process_time``; threads of a tokenizer count
too), contenders interleaved round-robin and the best of ``--repeat`` rounds kept (the machine
may be shared); the garbage collector is left on, as users have it. Columns:

- MB/s: UTF-8 megabytes of input per second; chunks; p50/p95/max chunk length (characters, or
  tokens in the token section);
- offsets: "exact" when the splitter reports offsets and ``text[start:end]`` is the chunk
  ("none" when it reports none; "N bad" otherwise);
- lossless: the chunks tile the document (overlap 0: they concatenate back to it; overlap > 0:
  offsets leave no gap); "n/a" without offsets and with overlap;
- > limit: chunks longer than the limit (tokens counted by tokenizing each chunk alone);
- ratio columns: throughput relative to the named peer at the same overlap, same run.

The closing note quotes the ratios of this run.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.corpus import build_corpus, build_format_corpus, corpus_bytes  # noqa: E402

Output = tuple[list[str], list[tuple[int, int]] | None]
Raw = Any  # what a contender returns for one document, converted to Output after timing


@dataclass
class Contender:
    name: str
    overlap: int
    make: Callable[[], Callable[[Any], Raw]]  # built once per round
    extract: Callable[[Raw], Output]
    inputs: str = "text"  # "text", "ragloom" (ragloom Documents) or "langchain" (Documents)
    fresh: bool = False  # build anew every round (token chunkers: cold memos)
    keep: bool = True  # keep every output until the round ends (False: drop each at once)


@dataclass
class Result:
    name: str
    overlap: int
    seconds: float
    mb: float
    chunks: int
    p50: float
    p95: float
    longest: int
    offsets: str
    lossless: str
    over_limit: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def mbps(self) -> float:
        return self.mb / self.seconds if self.seconds else float("inf")


def percentile(sorted_values: Sequence[int], q: float) -> float:
    if not sorted_values:
        return 0.0
    return float(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))])


def evaluate(
    name: str,
    overlap: int,
    docs: list[str],
    outputs: list[Output],
    seconds: float,
    size: int,
    length: Callable[[str], int] = len,
) -> Result:
    lengths: list[int] = []
    bad_offsets = 0
    has_offsets = True
    not_lossless = 0
    for text, (chunks, offsets) in zip(docs, outputs, strict=True):
        lengths.extend(map(length, chunks))
        if offsets is None:
            has_offsets = False
            if overlap == 0 and "".join(chunks) != text:
                not_lossless += 1
            continue
        bad_offsets += sum(text[a:b] != c for c, (a, b) in zip(chunks, offsets, strict=True))
        pos = 0
        tiles = True
        for a, b in offsets:
            if a > pos or (overlap == 0 and a != pos):
                tiles = False
                break
            pos = max(pos, b)
        if not tiles or pos != len(text):
            not_lossless += 1
    lengths.sort()
    if has_offsets:
        offsets_note = "exact" if bad_offsets == 0 else f"{bad_offsets} bad"
        lossless = "yes" if not_lossless == 0 else f"no ({not_lossless} docs)"
    else:
        offsets_note = "none"
        lossless = (
            "n/a" if overlap else ("yes" if not_lossless == 0 else f"no ({not_lossless} docs)")
        )
    mb = sum(len(t.encode("utf-8")) for t in docs) / 1e6
    return Result(
        name=name,
        overlap=overlap,
        seconds=seconds,
        mb=mb,
        chunks=len(lengths),
        p50=percentile(lengths, 0.5),
        p95=percentile(lengths, 0.95),
        longest=lengths[-1] if lengths else 0,
        offsets=offsets_note,
        lossless=lossless,
        over_limit=sum(1 for n in lengths if n > size),
    )


# -- extracting outputs (after the clock) ---------------------------------------------------------


def strings(raw: list[str]) -> Output:
    return list(raw), None


def with_offsets(raw: tuple[list[str], list[tuple[int, int]]]) -> Output:
    return raw


def ragloom_docs(raw: list[Any]) -> Output:
    return [c.content for c in raw], [(c.start, c.end) for c in raw]


def langchain_docs(raw: list[Any]) -> Output:
    return [d.page_content for d in raw], None


def chonkie_chunks(raw: list[Any]) -> Output:
    return [c.text for c in raw], [(c.start_index, c.end_index) for c in raw]


# -- contenders -----------------------------------------------------------------------------------


def ragloom_spans(cls_name: str, size: int, overlap: int, **kw: Any) -> Callable[[str], Raw]:
    import ragloom_text

    spans = getattr(ragloom_text, cls_name)(chunk_size=size, chunk_overlap=overlap, **kw).spans

    def split(text: str) -> Raw:
        found = spans(text)
        return [text[a:b] for a, b, _ in found], [(a, b) for a, b, _ in found]

    return split


def ragloom_chunks(cls_name: str, size: int, overlap: int, **kw: Any) -> Callable[[Any], Raw]:
    import ragloom_text

    if kw.get("length_function") == "tokens":
        from ragloom_text.tokens import forget_tokenizers

        forget_tokenizers()  # a cold memo: this round tokenizes every distinct unit again
    return getattr(ragloom_text, cls_name)(chunk_size=size, chunk_overlap=overlap, **kw).chunk


def langchain_recursive(size: int, overlap: int) -> Callable[[str], Raw]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text


def langchain_recursive_docs(size: int, overlap: int) -> Callable[[Any], Raw]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    split = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_documents
    return lambda doc: split([doc])


def langchain_markdown(size: int, overlap: int) -> Callable[[str], Raw]:
    from langchain_text_splitters import MarkdownTextSplitter

    return MarkdownTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text


def langchain_markdown_headers(size: int, overlap: int) -> Callable[[str], Raw]:
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = [("#" * i, f"h{i}") for i in range(1, 7)]
    by_header = MarkdownHeaderTextSplitter(headers_to_split_on=headers)
    recursive = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)

    def split(text: str) -> Raw:
        return recursive.split_documents(by_header.split_text(text))

    return split


def chonkie_recursive(size: int, overlap: int) -> Callable[[str], Raw]:
    from chonkie import RecursiveChunker

    return RecursiveChunker(chunk_size=size).chunk


def semchunk_chunker(size: int, overlap: int) -> Callable[[str], Raw]:
    import semchunk

    chunker = semchunk.chunkerify(len, chunk_size=size)

    def split(text: str) -> Raw:
        chunks, offsets = chunker(text, offsets=True, overlap=overlap or None)
        return list(chunks), [tuple(o) for o in offsets]

    return split


def text_splitter(size: int, overlap: int, markdown: bool = False) -> Callable[[str], Raw]:
    from semantic_text_splitter import MarkdownSplitter, TextSplitter

    cls = MarkdownSplitter if markdown else TextSplitter
    splitter = cls(size, overlap=overlap) if overlap else cls(size)

    def split(text: str) -> Raw:
        found = splitter.chunk_indices(text)
        return [c for _, c in found], [(a, a + len(c)) for a, c in found]

    return split


def bundled_tokenizer() -> Path:
    from ragloom_text.tokens import default_tokenizer_path

    path = default_tokenizer_path()
    if path is None:
        raise ImportError("ragloom-semantic (the bundled model's tokenizer) is not installed")
    return path


def langchain_tokens(size: int, overlap: int) -> Callable[[str], Raw]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(bundled_tokenizer()))
    return RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
        tokenizer, chunk_size=size, chunk_overlap=overlap
    ).split_text


def chonkie_tokens(size: int, overlap: int) -> Callable[[str], Raw]:
    from chonkie import TokenChunker
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(bundled_tokenizer()))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return TokenChunker(tokenizer=tokenizer, chunk_size=size, chunk_overlap=overlap).chunk


# -- running --------------------------------------------------------------------------------------


def run(
    contenders: list[Contender],
    docs: list[tuple[str, str]],
    repeat: int,
    size: int,
    length: Callable[[str], int] = len,
) -> list[Result]:
    """Time every contender ``repeat`` times, interleaved (round-robin), keeping the best.

    ``docs`` are ``(text, content_format)``. Interleaving spreads the load of other processes
    over all contenders alike; CPU time leaves out the time the process waits for a core.
    """
    texts = [text for text, _ in docs]
    inputs: dict[str, list[Any]] = {"text": texts}
    if any(c.inputs == "ragloom" for c in contenders):
        from ragloom import Document

        inputs["ragloom"] = [
            Document(id=f"doc-{i}", content=text, content_format=fmt)
            for i, (text, fmt) in enumerate(docs)
        ]
    if any(c.inputs == "langchain" for c in contenders):
        from langchain_core.documents import Document as LangChainDocument

        inputs["langchain"] = [LangChainDocument(page_content=text) for text in texts]
    ready: list[tuple[Contender, Callable[[Any], Raw]]] = []
    for contender in contenders:
        try:
            ready.append((contender, contender.make()))
        except ImportError as exc:
            print(f"  skipped {contender.name}: {exc}", flush=True)
    results: dict[int, Result] = {}
    for round_ in range(repeat):
        for k, (contender, split) in enumerate(ready):
            if contender.fresh and round_:
                split = contender.make()
            items = inputs[contender.inputs]
            gc.collect()  # the previous contender's garbage is not this one's to collect
            if contender.keep:
                start = time.process_time()
                raw = [split(item) for item in items]
                seconds = time.process_time() - start
            else:  # streamed: each document's chunks are dropped once made, as a pipeline does
                start = time.process_time()
                for item in items:
                    split(item)
                seconds = time.process_time() - start
                raw = [split(item) for item in items] if round_ == 0 else []
            if round_ == 0:
                outputs = [contender.extract(r) for r in raw]
                results[k] = evaluate(
                    contender.name, contender.overlap, texts, outputs, seconds, size, length
                )
                del outputs
            else:
                results[k].seconds = min(results[k].seconds, seconds)
            del raw
        print(f"  round {round_ + 1}/{repeat} done", flush=True)
    return [results[k] for k in range(len(ready))]


def table(title: str, results: list[Result], baselines: dict[str, str], unit: str) -> str:
    head = (
        f"| splitter | overlap | MB/s | chunks | p50 | p95 | max ({unit}) | offsets | lossless | "
        f"> limit | {' | '.join(f'x {b}' for b in baselines)} |"
    )
    lines = [f"\n### {title}\n", head, "|" + " --- |" * (10 + len(baselines))]
    for r in results:
        ratios = []
        for base in baselines.values():
            ref = find(results, base, r.overlap)
            ratios.append(f"{r.mbps / ref.mbps:.2f}" if ref and ref.mbps else "-")
        lines.append(
            f"| {r.name} | {r.overlap} | {r.mbps:.1f} | {r.chunks} | {r.p50:.0f} | "
            f"{r.p95:.0f} | {r.longest} | {r.offsets} | {r.lossless} | {r.over_limit} | "
            + " | ".join(ratios)
            + " |"
        )
    return "\n".join(lines)


def find(results: list[Result], name: str, overlap: int) -> Result | None:
    return next((x for x in results if x.name == name and x.overlap == overlap), None)


def ratio(results: list[Result], name: str, base: str, overlap: int) -> float | None:
    mine, ref = find(results, name, overlap), find(results, base, overlap)
    return mine.mbps / ref.mbps if mine and ref and ref.mbps else None


def versions() -> str:
    names = [
        "ragloom", "ragloom-text", "langchain-text-splitters", "langchain-core", "chonkie",
        "semchunk", "semantic-text-splitter", "tokenizers", "transformers", "pydantic",
    ]  # fmt: skip
    found = []
    for name in names:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return f"Python {platform.python_version()} ({sys.executable}); " + ", ".join(found)


# -- sections -------------------------------------------------------------------------------------

LC = "langchain RecursiveCharacterTextSplitter"
LC_DOCS = LC + " +Documents"
LC_KEPT = LC + " +Documents kept"
RL = "ragloom recursive"
RL_DOCS = RL + " +Documents"
RL_KEPT = RL + " +Documents kept"


def recursive_contenders(size: int, chonkie: bool = True, peers: bool = True) -> list[Contender]:
    out: list[Contender] = []
    for o in (0, 64):
        out += [
            Contender(RL, o, lambda o=o: ragloom_spans("RecursiveCharacterTextSplitter", size, o),
                      with_offsets),
            Contender(RL_DOCS, o,
                      lambda o=o: ragloom_chunks("RecursiveCharacterTextSplitter", size, o),
                      ragloom_docs, inputs="ragloom", keep=False),
            Contender(RL_KEPT, o,
                      lambda o=o: ragloom_chunks("RecursiveCharacterTextSplitter", size, o),
                      ragloom_docs, inputs="ragloom"),
            Contender(LC, o, lambda o=o: langchain_recursive(size, o), strings),
            Contender(LC_DOCS, o, lambda o=o: langchain_recursive_docs(size, o), langchain_docs,
                      inputs="langchain", keep=False),
            Contender(LC_KEPT, o, lambda o=o: langchain_recursive_docs(size, o), langchain_docs,
                      inputs="langchain"),
        ]  # fmt: skip
        if peers:
            out += [
                Contender("semchunk", o, lambda o=o: semchunk_chunker(size, o), with_offsets),
                Contender("semantic-text-splitter TextSplitter", o,
                          lambda o=o: text_splitter(size, o), with_offsets),
            ]  # fmt: skip
        if chonkie and o == 0:  # chonkie's RecursiveChunker has no overlap
            out.append(Contender("chonkie RecursiveChunker (Chunk objects)", 0,
                                 lambda: chonkie_recursive(size, 0), chonkie_chunks))  # fmt: skip
    return out


def markdown_contenders(size: int) -> list[Contender]:
    out: list[Contender] = []
    for o in (0, 64):
        out += [
            Contender("ragloom markdown", o,
                      lambda o=o: ragloom_spans("MarkdownChunker", size, o), with_offsets),
            Contender("ragloom markdown +Documents", o,
                      lambda o=o: ragloom_chunks("MarkdownChunker", size, o), ragloom_docs,
                      inputs="ragloom", keep=False),
            Contender("semantic-text-splitter MarkdownSplitter", o,
                      lambda o=o: text_splitter(size, o, markdown=True), with_offsets),
            Contender("langchain MarkdownTextSplitter", o,
                      lambda o=o: langchain_markdown(size, o), strings),
            Contender("langchain MarkdownHeaderTextSplitter+recursive +Documents", o,
                      lambda o=o: langchain_markdown_headers(size, o), langchain_docs,
                      keep=False),
        ]  # fmt: skip
    return out


def token_contenders(size: int) -> list[Contender]:
    out: list[Contender] = []
    for o in (0, 64):
        out += [
            Contender("ragloom recursive tokens +Documents", o,
                      lambda o=o: ragloom_chunks("RecursiveCharacterTextSplitter", size, o,
                                                 length_function="tokens"),
                      ragloom_docs, inputs="ragloom", fresh=True),
            Contender("ragloom markdown/code/recursive (auto) tokens +Documents", o,
                      lambda o=o: auto_tokens(size, o), ragloom_docs, inputs="ragloom",
                      fresh=True),
            Contender("chonkie TokenChunker (Chunk objects)", o,
                      lambda o=o: chonkie_tokens(size, o), chonkie_chunks),
            Contender("langchain from_huggingface_tokenizer", o,
                      lambda o=o: langchain_tokens(size, o), strings),
        ]  # fmt: skip
    return out


def auto_tokens(size: int, overlap: int) -> Callable[[Any], Raw]:
    from ragloom_text import default_chunker_router
    from ragloom_text.tokens import forget_tokenizers

    forget_tokenizers()
    return default_chunker_router(size, overlap, length_function="tokens").chunk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-bytes", type=int, default=20_000_000)
    parser.add_argument("--format-bytes", type=int, default=4_000_000)
    parser.add_argument("--token-bytes", type=int, default=4_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--token-size", type=int, default=512)
    parser.add_argument("--sections", default="recursive,markdown,formats,tokens")
    args = parser.parse_args()
    size: int = args.size
    sections = set(args.sections.split(","))
    print(versions(), flush=True)
    notes: list[str] = []
    tables: list[str] = []

    if sections & {"recursive", "markdown"}:
        corpus = build_corpus(args.min_bytes)
        mix: dict[str, int] = {}
        for _, fmt, text in corpus:
            mix[fmt] = mix.get(fmt, 0) + len(text.encode("utf-8"))
        print(
            f"corpus: {len(corpus)} documents, {corpus_bytes(corpus) / 1e6:.1f} MB "
            f"({', '.join(f'{k} {v / 1e6:.1f} MB' for k, v in sorted(mix.items()))}); "
            f"chunk size {size} characters; best of {args.repeat}",
            flush=True,
        )
    if "recursive" in sections:
        print("recursive splitting, whole corpus:", flush=True)
        docs = [(text, fmt) for _, fmt, text in corpus]
        rec = run(recursive_contenders(size), docs, args.repeat, size)
        tables.append(table(
            f"Recursive splitting: {len(docs)} documents, {corpus_bytes(corpus) / 1e6:.1f} MB",
            rec, {"langchain": LC, "langchain +Documents": LC_DOCS, "kept": LC_KEPT}, "chars",
        ))  # fmt: skip
        for o in (0, 64):
            notes.append(
                f"whole corpus, overlap {o}: LangChain's split_text ran at "
                f"{find(rec, LC, o).mbps:.0f} MB/s; against it, ragloom recursive "  # type: ignore[union-attr]
                f"{ratio(rec, RL, LC, o):.2f}x (strings), {ratio(rec, RL_DOCS, LC, o):.2f}x "
                f"(+Documents), {ratio(rec, RL_KEPT, LC, o):.2f}x (+Documents kept); against "
                f"LangChain's split_documents, {ratio(rec, RL_DOCS, LC_DOCS, o):.2f}x "
                f"(+Documents) and {ratio(rec, RL_KEPT, LC_KEPT, o):.2f}x (kept)"
            )
    if "markdown" in sections:
        print("markdown splitting, markdown part:", flush=True)
        md = [(text, fmt) for _, fmt, text in corpus if fmt == "markdown"]
        md_results = run(markdown_contenders(size), md, args.repeat, size)
        md_mb = sum(len(t.encode("utf-8")) for t, _ in md) / 1e6
        tables.append(table(
            f"Markdown splitting: {len(md)} documents, {md_mb:.1f} MB", md_results,
            {"langchain": "langchain MarkdownTextSplitter",
             "semantic-text-splitter": "semantic-text-splitter MarkdownSplitter"}, "chars",
        ))  # fmt: skip
    if sections & {"formats", "tokens"}:
        by_format = build_format_corpus(args.format_bytes)
    if "formats" in sections:
        for fmt, entries in by_format.items():
            if not entries:
                print(f"no {fmt} files on this machine", flush=True)
                continue
            print(f"{fmt} files:", flush=True)
            docs = [(text, cf) for _, cf, text in entries]
            res = run(recursive_contenders(size, chonkie=False, peers=False), docs,
                      args.repeat, size)  # fmt: skip
            mb = corpus_bytes(entries) / 1e6
            tables.append(table(
                f"Ordinary files, {fmt}: {len(entries)} files, {mb:.1f} MB", res,
                {"langchain": LC, "langchain +Documents": LC_DOCS, "kept": LC_KEPT}, "chars",
            ))  # fmt: skip
            notes.append(
                f"{fmt} files, against LangChain's split_text: "
                + "; ".join(
                    f"overlap {o}: {ratio(res, RL, LC, o):.2f}x (strings), "
                    f"{ratio(res, RL_DOCS, LC, o):.2f}x (+Documents), "
                    f"{ratio(res, RL_KEPT, LC, o):.2f}x (+Documents kept)"
                    for o in (0, 64)
                )
                + "; against its split_documents: "
                + ", ".join(
                    f"{ratio(res, RL_DOCS, LC_DOCS, o):.2f}x / {ratio(res, RL_KEPT, LC_KEPT, o):.2f}x"
                    f" kept (overlap {o})"
                    for o in (0, 64)
                )
            )
    if "tokens" in sections:
        token_docs = spread(by_format, args.token_bytes)
        from ragloom_text.tokens import TokenCount

        count = TokenCount()
        tsize: int = args.token_size
        mb = sum(len(t.encode("utf-8")) for t, _ in token_docs) / 1e6
        print(f"token budgets ({tsize} tokens), {mb:.1f} MB of ordinary files:", flush=True)
        tok = run(token_contenders(tsize), token_docs, args.repeat, tsize, length=count)
        tables.append(table(
            f"Token budgets of {tsize} tokens (bundled tokenizer.json): {len(token_docs)} "
            f"documents, {mb:.1f} MB", tok,
            {"chonkie": "chonkie TokenChunker (Chunk objects)",
             "langchain": "langchain from_huggingface_tokenizer"}, "tokens",
        ))  # fmt: skip
        mine = "ragloom recursive tokens +Documents"
        for o in (0, 64):
            vs_chonkie = ratio(tok, mine, "chonkie TokenChunker (Chunk objects)", o) or 0.0
            vs_langchain = ratio(tok, mine, "langchain from_huggingface_tokenizer", o) or 0.0
            notes.append(
                f"token budgets, overlap {o}: ragloom {vs_chonkie:.2f}x chonkie's TokenChunker "
                f"and {vs_langchain:.2f}x LangChain's from_huggingface_tokenizer"
            )
    for text in tables:
        print(text)
    print("\nIn this run:\n" + "\n".join(f"- {n}" for n in notes))


def spread(by_format: dict[str, list[Any]], total: int) -> list[tuple[str, str]]:
    """About ``total`` bytes taken evenly from every format, round-robin."""
    queues = [list(entries) for entries in by_format.values() if entries]
    out: list[tuple[str, str]] = []
    size = 0
    while size < total and any(queues):
        for queue in queues:
            if queue and size < total:
                _, fmt, text = queue.pop(0)
                out.append((text, fmt))
                size += len(text.encode("utf-8"))
    return out


if __name__ == "__main__":
    main()
