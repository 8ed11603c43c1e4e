"""ragloom's chunker conformance kit run on ``DoclingChunker``.

A Docling chunk is not a slice of its parent (the parent is JSON), so the kit runs with
``slices = False`` (lineage, sizes, metadata, ``span_kind``), and the Docling contract
(``check`` fixture) adds that every chunk maps back through resolvable ``doc_items``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from docling_core.types.doc import DocItemLabel, DoclingDocument
from ragloom import Chunker, Document
from ragloom.testing import ChunkerContract, run_step
from ragloom_docling import DoclingChunker


class TestDoclingChunkerContract(ChunkerContract):
    lossless = False
    slices = False
    generated_examples = 25

    @pytest.fixture
    def chunker(self) -> Chunker:
        return DoclingChunker()

    @pytest.fixture(autouse=True)
    def _documents(self, report: DoclingDocument, docling_file: Callable[[str], Path]) -> None:
        docs = [Document(id="report", content=report.model_dump_json(), content_format="docling")]
        try:
            raw = docling_file("ddoc_0.json").read_text(encoding="utf-8")
            docs.append(Document(id="ddoc_0", content=raw, content_format="docling"))
        except pytest.skip.Exception:
            pass  # the built document alone still runs the kit
        self.documents = docs

    def make_documents(self, chunker: Chunker) -> list[Document]:
        return list(self.documents)

    @pytest.fixture
    def document_strategy(self) -> Any:
        """Docling documents of generated headings and paragraphs (the kit's hook for formats
        of one's own): the lineage, size and ``span_kind`` checks run on them."""
        from hypothesis import strategies as st
        from ragloom.testing import texts

        words = texts("abcXYZ 019.,;:!?-()", max_tokens=30).filter(str.strip)
        # Any mix of headings and paragraphs, ending with a paragraph (a document of headings
        # alone has no body text: the chunker refuses it, by design).
        blocks = st.builds(
            lambda parts, last: [*parts, (False, last)],
            st.lists(st.tuples(st.booleans(), words), max_size=11),
            words,
        )

        def build(parts: list[tuple[bool, str]]) -> Document:
            doc = DoclingDocument(name="generated")
            for heading, text in parts:
                if heading:
                    doc.add_heading(text, level=1)
                else:
                    doc.add_text(DocItemLabel.TEXT, text)
            return Document(id="generated", content=doc.model_dump_json(),
                            content_format="docling")

        return blocks.map(build)

    def test_docling_items_map_back(
        self, chunker: Chunker, check: Callable[..., None]
    ) -> None:
        import anyio

        docs = self.make_documents(chunker)
        result: Any = anyio.run(run_step, chunker, docs)
        assert not result.failed, [f.reason for f in result.failed]
        for doc in docs:
            chunks = [c for c in result if c.parent_id == doc.id]
            assert [c.id for c in chunks] == [f"{doc.id}#{i}" for i in range(len(chunks))]
            assert all(c.start is None and c.end is None for c in chunks)
            options = getattr(chunker, "options", None)
            check(
                DoclingDocument.model_validate_json(doc.content),
                [(c.content, c.metadata) for c in chunks],
                contextualize=options.contextualize if options else True,
                hybrid=bool(options and options.hybrid),
            )


class TestTokenLimitedDoclingChunkerContract(TestDoclingChunkerContract):
    @pytest.fixture
    def chunker(self, tokenizer_path: str) -> Chunker:
        return DoclingChunker(max_tokens=64, tokenizer_path=tokenizer_path, contextualize=False)
