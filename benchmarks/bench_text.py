"""ragloom-text chunkers against peer splitters, on the same real corpus, in one run.

Peers are installed for the benchmark only:

    pip install -e core -e plugins/text
    pip install langchain-text-splitters chonkie semchunk semantic-text-splitter
    python benchmarks/bench_text.py [--min-bytes 20000000] [--repeat 3] [--size 512]

The corpus is ``tests/support/corpus.py``: real text nobody here wrote (descriptions of the
installed distributions, documentation files under site-packages, standard-library sources).
Every splitter counts characters, at 512 with overlap 0 and 64 where it supports overlap. Each
timing is the best of ``--repeat`` runs and includes materialising the chunk strings (ragloom's
spans are sliced, like the peers' output). Times are CPU seconds of this process, contenders
interleaved round-robin, best round kept (the machine may be shared). Columns:

- MB/s: UTF-8 megabytes of input per second; chunks; p50/p95/max chunk length in characters;
- offsets: "exact" when the splitter reports offsets and ``text[start:end]`` is the chunk
  ("none" when it reports none; "N bad" otherwise);
- lossless: the chunks tile the document (overlap 0: they concatenate back to it; overlap > 0:
  offsets leave no gap); "n/a" without offsets and with overlap;
- limit: chunks longer than the limit;
- ratio columns: throughput relative to the named peer in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "plugins" / "text" / "src"))

from support.corpus import build_corpus, corpus_bytes  # noqa: E402

Output = tuple[list[str], list[tuple[int, int]] | None]
Splitter = Callable[[str], Output]


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

    @property
    def mbps(self) -> float:
        return self.mb / self.seconds if self.seconds else float("inf")


def percentile(sorted_values: Sequence[int], q: float) -> float:
    if not sorted_values:
        return 0.0
    return float(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))])


def evaluate(
    name: str, overlap: int, docs: list[str], outputs: list[Output], seconds: float, size: int
) -> Result:
    lengths: list[int] = []
    bad_offsets = 0
    has_offsets = True
    not_lossless = 0
    for text, (chunks, offsets) in zip(docs, outputs, strict=True):
        lengths.extend(len(c) for c in chunks)
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


def timed(splitter: Splitter, docs: list[str]) -> tuple[float, list[Output]]:
    start = time.process_time()
    outputs = [splitter(text) for text in docs]
    return time.process_time() - start, outputs


# -- contenders --------------------------------------------------------------------------------


def ragloom_recursive(size: int, overlap: int) -> Splitter:
    from ragloom_text import RecursiveCharacterTextSplitter

    spans = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).spans

    def split(text: str) -> Output:
        found = spans(text)
        return [text[a:b] for a, b, _ in found], [(a, b) for a, b, _ in found]

    return split


def ragloom_documents(size: int, overlap: int) -> Splitter:
    from ragloom import Document
    from ragloom_text import RecursiveCharacterTextSplitter

    chunker = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)

    def split(text: str) -> Output:
        doc = Document.model_construct(
            id="d", content=text, content_format="text", metadata={}, parent_id=None
        )
        chunks = chunker.build_chunks(doc, chunker.split(doc))
        return [c.content for c in chunks], [(c.start or 0, c.end or 0) for c in chunks]

    return split


def ragloom_markdown(size: int, overlap: int) -> Splitter:
    from ragloom_text import MarkdownChunker

    spans = MarkdownChunker(chunk_size=size, chunk_overlap=overlap).markdown_spans

    def split(text: str) -> Output:
        found = spans(text)
        return [text[a:b] for a, b, _ in found], [(a, b) for a, b, _ in found]

    return split


def langchain_recursive(size: int, overlap: int) -> Splitter:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    return lambda text: (splitter.split_text(text), None)


def langchain_markdown(size: int, overlap: int) -> Splitter:
    from langchain_text_splitters import MarkdownTextSplitter

    splitter = MarkdownTextSplitter(chunk_size=size, chunk_overlap=overlap)
    return lambda text: (splitter.split_text(text), None)


def langchain_markdown_headers(size: int, overlap: int) -> Splitter:
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = [("#" * i, f"h{i}") for i in range(1, 7)]
    by_header = MarkdownHeaderTextSplitter(headers_to_split_on=headers)
    recursive = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)

    def split(text: str) -> Output:
        sections = by_header.split_text(text)
        return [d.page_content for d in recursive.split_documents(sections)], None

    return split


def chonkie_recursive(size: int, overlap: int) -> Splitter:
    from chonkie import RecursiveChunker

    chunker = RecursiveChunker(chunk_size=size)

    def split(text: str) -> Output:
        chunks = chunker.chunk(text)
        return [c.text for c in chunks], [(c.start_index, c.end_index) for c in chunks]

    return split


def semchunk_chunker(size: int, overlap: int) -> Splitter:
    import semchunk

    chunker = semchunk.chunkerify(len, chunk_size=size)

    def split(text: str) -> Output:
        chunks, offsets = chunker(text, offsets=True, overlap=overlap or None)
        return list(chunks), [tuple(o) for o in offsets]  # type: ignore[misc]

    return split


def text_splitter(size: int, overlap: int, markdown: bool = False) -> Splitter:
    from semantic_text_splitter import MarkdownSplitter, TextSplitter

    cls = MarkdownSplitter if markdown else TextSplitter
    splitter = cls(size, overlap=overlap) if overlap else cls(size)

    def split(text: str) -> Output:
        found = splitter.chunk_indices(text)
        return [c for _, c in found], [(a, a + len(c)) for a, c in found]

    return split


# -- report ------------------------------------------------------------------------------------


def table(title: str, results: list[Result], baselines: dict[str, str]) -> str:
    head = (
        f"| splitter | overlap | MB/s | chunks | p50 | p95 | max | offsets | lossless | "
        f"> limit | {' | '.join(f'x {b}' for b in baselines)} |"
    )
    lines = [f"\n### {title}\n", head, "|" + " --- |" * (10 + len(baselines))]
    for r in results:
        ratios = []
        for base in baselines.values():
            ref = next((x for x in results if x.name == base and x.overlap == r.overlap), None)
            ratios.append(f"{r.mbps / ref.mbps:.2f}" if ref and ref.mbps else "-")
        lines.append(
            f"| {r.name} | {r.overlap} | {r.mbps:.1f} | {r.chunks} | {r.p50:.0f} | "
            f"{r.p95:.0f} | {r.longest} | {r.offsets} | {r.lossless} | {r.over_limit} | "
            + " | ".join(ratios)
            + " |"
        )
    return "\n".join(lines)


def run(
    contenders: list[tuple[str, int, Callable[[], Splitter]]],
    docs: list[str],
    repeat: int,
    size: int,
) -> list[Result]:
    """Time every contender ``repeat`` times, interleaved (round-robin), keeping the best.

    Interleaving spreads any load from other processes over all contenders alike; CPU time
    (``time.process_time``) leaves out the time the process spends waiting for a core.
    """
    ready: list[tuple[str, int, Splitter]] = []
    for name, overlap, make in contenders:
        try:
            ready.append((name, overlap, make()))
        except ImportError as exc:
            print(f"  skipped {name}: {exc}", flush=True)
    results: dict[int, Result] = {}
    for round_ in range(repeat):
        for k, (name, overlap, splitter) in enumerate(ready):
            seconds, outputs = timed(splitter, docs)
            if round_ == 0:
                results[k] = evaluate(name, overlap, docs, outputs, seconds, size)
            else:
                results[k].seconds = min(results[k].seconds, seconds)
            del outputs
        print(f"  round {round_ + 1}/{repeat} done", flush=True)
    return [results[k] for k in range(len(ready))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-bytes", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", type=int, default=512)
    args = parser.parse_args()
    size: int = args.size

    corpus = build_corpus(args.min_bytes)
    docs = [text for _, _, text in corpus]
    markdown_docs = [text for _, fmt, text in corpus if fmt == "markdown"]
    mix: dict[str, int] = {}
    for _, fmt, text in corpus:
        mix[fmt] = mix.get(fmt, 0) + len(text.encode("utf-8"))
    print(
        f"corpus: {len(docs)} documents, {corpus_bytes(corpus) / 1e6:.1f} MB "
        f"({', '.join(f'{k} {v / 1e6:.1f} MB' for k, v in sorted(mix.items()))}); "
        f"chunk size {size} characters; best of {args.repeat}",
        flush=True,
    )

    recursive: list[tuple[str, int, Callable[[], Splitter]]] = []
    for overlap in (0, 64):
        recursive += [
            ("ragloom recursive", overlap, lambda o=overlap: ragloom_recursive(size, o)),
            ("ragloom recursive +Documents", overlap,
             lambda o=overlap: ragloom_documents(size, o)),
            ("langchain RecursiveCharacterTextSplitter", overlap,
             lambda o=overlap: langchain_recursive(size, o)),
            ("semchunk", overlap, lambda o=overlap: semchunk_chunker(size, o)),
            ("semantic-text-splitter TextSplitter", overlap,
             lambda o=overlap: text_splitter(size, o)),
        ]  # fmt: skip
        if overlap == 0:  # chonkie's RecursiveChunker has no overlap
            recursive.append(("chonkie RecursiveChunker", 0, lambda: chonkie_recursive(size, 0)))
    markdown: list[tuple[str, int, Callable[[], Splitter]]] = []
    for overlap in (0, 64):
        markdown += [
            ("ragloom markdown", overlap, lambda o=overlap: ragloom_markdown(size, o)),
            ("semantic-text-splitter MarkdownSplitter", overlap,
             lambda o=overlap: text_splitter(size, o, markdown=True)),
            ("langchain MarkdownTextSplitter", overlap,
             lambda o=overlap: langchain_markdown(size, o)),
            ("langchain MarkdownHeaderTextSplitter+recursive", overlap,
             lambda o=overlap: langchain_markdown_headers(size, o)),
        ]  # fmt: skip

    print("recursive splitting, whole corpus:", flush=True)
    rec = run(recursive, docs, args.repeat, size)
    print("markdown splitting, markdown part:", flush=True)
    md = run(markdown, markdown_docs, args.repeat, size)
    print(table(
        f"Recursive splitting: {len(docs)} documents, {corpus_bytes(corpus) / 1e6:.1f} MB",
        rec, {"langchain": "langchain RecursiveCharacterTextSplitter"},
    ))  # fmt: skip
    md_mb = sum(len(t.encode("utf-8")) for t in markdown_docs) / 1e6
    print(table(
        f"Markdown splitting: {len(markdown_docs)} documents, {md_mb:.1f} MB",
        md, {"langchain": "langchain MarkdownTextSplitter",
             "semantic-text-splitter": "semantic-text-splitter MarkdownSplitter"},
    ))  # fmt: skip


if __name__ == "__main__":
    main()
