"""ragloom's chunker behind LangChain's interface against LangChain's own splitter, in one run.

    pip install -e core -e plugins/text -e "plugins/interop[langchain]"
    python benchmarks/bench_interop.py [--min-bytes 20000000] [--repeat 5] [--size 512]

Both sides split the same real corpus (``tests/support/corpus.py``) at the same chunk size in
characters, with overlap 0 and 64:

- ``split_text``: ``RagloomTextSplitter("recursive").split_text`` and ragloom-text's own
  ``RecursiveCharacterTextSplitter.split_text`` (the string API LangChain users call, which
  slices the chunker's spans) against LangChain's ``RecursiveCharacterTextSplitter.split_text``;
  for reference, the same chunker through the core's inherited ``Chunker.split_text``
  (a ``Document`` with a hashed id, then a chunk document per chunk, read back as text);
- ``create_documents``: LangChain documents with ``add_start_index=True``; the "bad starts"
  column counts chunks whose ``start_index`` does not locate their text in the source.

Times are CPU seconds of this process (``time.process_time``), contenders interleaved
round-robin, best round kept (the machine may be shared); the median round is printed too.
MB/s is UTF-8 megabytes of input per second; "x langchain" is the throughput ratio to
LangChain's splitter at the same overlap, in the same run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.corpus import build_corpus, corpus_bytes  # noqa: E402

Run = Callable[[list[str]], tuple[int, list[int], int]]  # -> chunks, lengths, bad starts


@dataclass
class Contender:
    group: str
    name: str
    overlap: int
    run: Run
    rounds: list[float] = field(default_factory=list)
    chunks: int = 0
    lengths: list[int] = field(default_factory=list)
    bad: int = 0


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def split_text_runner(split: Callable[[str], list[str]]) -> Run:
    def run(texts: list[str]) -> tuple[int, list[int], int]:
        lengths = [len(c) for text in texts for c in split(text)]
        return len(lengths), lengths, 0

    return run


def documents_runner(splitter: object) -> Run:
    create = splitter.create_documents  # type: ignore[attr-defined]

    def run(texts: list[str]) -> tuple[int, list[int], int]:
        bad = 0
        lengths = []
        for text in texts:
            for doc in create([text]):
                start, content = doc.metadata["start_index"], doc.page_content
                lengths.append(len(content))
                if start < 0 or text[start : start + len(content)] != content:
                    bad += 1
        return len(lengths), lengths, bad

    return run


def contenders(size: int) -> list[Contender]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter as LangChainSplitter
    from ragloom import Chunker
    from ragloom_interop.langchain import RagloomTextSplitter
    from ragloom_text import RecursiveCharacterTextSplitter

    out: list[Contender] = []
    for overlap in (0, 64):
        ours = RagloomTextSplitter("recursive", chunk_size=size, chunk_overlap=overlap)
        theirs = LangChainSplitter(chunk_size=size, chunk_overlap=overlap)
        core = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
        out += [
            Contender("split_text", "RagloomTextSplitter.split_text", overlap,
                      split_text_runner(ours.split_text)),
            Contender("split_text", "langchain RecursiveCharacterTextSplitter.split_text",
                      overlap, split_text_runner(theirs.split_text)),
            Contender("split_text", "ragloom-text RecursiveCharacterTextSplitter.split_text",
                      overlap, split_text_runner(core.split_text)),
            Contender("split_text", "same, through the inherited Chunker.split_text", overlap,
                      split_text_runner(partial(Chunker.split_text, core))),
        ]  # fmt: skip
        ours_docs = RagloomTextSplitter(
            "recursive", chunk_size=size, chunk_overlap=overlap, add_start_index=True
        )
        theirs_docs = LangChainSplitter(
            chunk_size=size, chunk_overlap=overlap, add_start_index=True
        )
        out += [
            Contender("create_documents", "RagloomTextSplitter.create_documents", overlap,
                      documents_runner(ours_docs)),
            Contender("create_documents",
                      "langchain RecursiveCharacterTextSplitter.create_documents", overlap,
                      documents_runner(theirs_docs)),
        ]  # fmt: skip
    return out


def percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-bytes", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=512)
    args = parser.parse_args()

    corpus = build_corpus(args.min_bytes)
    texts = [text for _, _, text in corpus]
    mb = corpus_bytes(corpus) / 1e6
    print(
        f"python {platform.python_version()}; "
        + ", ".join(
            f"{d} {version(d)}"
            for d in ("langchain-text-splitters", "langchain-core", "ragloom", "ragloom-text",
                      "ragloom-interop")
        )  # fmt: skip
    )
    print(
        f"corpus: {len(texts)} documents, {mb:.1f} MB; chunk size {args.size} characters; "
        f"best and median of {args.repeat} rounds (CPU time)",
        flush=True,
    )
    runs = contenders(args.size)
    for round_ in range(args.repeat):
        for c in runs:
            start = time.process_time()
            chunks, lengths, bad = c.run(texts)
            c.rounds.append(time.process_time() - start)
            if round_ == 0:
                c.chunks, c.lengths, c.bad = chunks, lengths, bad
            del lengths
        print(f"  round {round_ + 1}/{args.repeat} done", flush=True)

    for group in ("split_text", "create_documents"):
        print(f"\n### {group}, {len(texts)} documents, {mb:.1f} MB\n")
        print("| splitter | overlap | MB/s best | MB/s median | chunks | p50 | max | bad starts "
              "| x langchain (best) |")  # fmt: skip
        print("|" + " --- |" * 9)
        mine = [c for c in runs if c.group == group]
        for c in mine:
            ref = next(
                x for x in mine if x.overlap == c.overlap and x.name.startswith("langchain")
            )
            best, median = mb / min(c.rounds), mb / statistics.median(c.rounds)
            bad = str(c.bad) if group == "create_documents" else "-"
            print(
                f"| {c.name} | {c.overlap} | {best:.1f} | {median:.1f} | {c.chunks} | "
                f"{percentile(c.lengths, 0.5)} | {max(c.lengths, default=0)} | {bad} | "
                f"{min(ref.rounds) / min(c.rounds):.2f} |"
            )


if __name__ == "__main__":
    main()
