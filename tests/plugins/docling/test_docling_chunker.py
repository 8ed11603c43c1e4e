"""``DoclingChunker`` as a ragloom chunker: chunk building, errors, config, cache, entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from docling_core.types.doc import DoclingDocument
from ragloom import (
    ConfigurationError,
    ContentFormat,
    Document,
    InvalidInputError,
    MemoryCacheStore,
    Pipeline,
)
from ragloom_docling import SPAN_KIND, DoclingChunker

pytestmark = pytest.mark.anyio


def docling_doc(document: DoclingDocument, doc_id: str = "report", **metadata: Any) -> Document:
    return Document(
        id=doc_id,
        content=document.model_dump_json(),
        content_format="docling",
        metadata=dict(metadata),
    )


async def chunk(chunker: DoclingChunker, *docs: Document) -> Any:
    return await Pipeline(chunker).run(list(docs))


# -- chunks ------------------------------------------------------------------------------------


async def test_chunks_are_markdown_documents_that_map_back_by_items(
    report: DoclingDocument, check: Callable[..., None]
) -> None:
    parent = docling_doc(report, source="report.pdf")
    result = await chunk(DoclingChunker(), parent)
    assert not result.failed
    chunks = list(result)
    assert [c.id for c in chunks] == [f"report#{i}" for i in range(len(chunks))]
    for index, c in enumerate(chunks):
        assert c.parent_id == "report" and c.index == index
        assert c.start is None and c.end is None  # not a slice of the JSON
        assert c.content_format == ContentFormat.MARKDOWN
        assert c.metadata["source"] == "report.pdf"  # inherited from the parent
        assert c.metadata["span_kind"] == SPAN_KIND == "docling-items"
    check(report, [(c.content, c.metadata) for c in chunks], contextualize=True)
    # the doc_items resolve in the document parsed back from the parent's content
    parsed = DoclingDocument.model_validate_json(parent.content)
    table = next(c for c in chunks if "#/tables/0" in c.metadata["doc_items"])
    assert table.metadata["captions"] == [parsed.tables[0].caption_text(parsed)]
    assert "| alpha | 0.91 |" in table.content


async def test_chunks_round_trip_through_json(report: DoclingDocument) -> None:
    chunks = list(await chunk(DoclingChunker(), docling_doc(report)))
    for c in chunks:
        assert Document.model_validate_json(c.model_dump_json()) == c


async def test_contextualize_false_gives_plain_element_text(report: DoclingDocument) -> None:
    chunks = list(await chunk(DoclingChunker(contextualize=False), docling_doc(report)))
    assert chunks[0].content == "This report covers the year."
    assert chunks[0].metadata["headings"] == ["Annual Report"]


async def test_token_limited_chunks(
    tokenizer_path: str, docling_file: Callable[[str], Path], check: Callable[..., None]
) -> None:
    raw = docling_file("2106.09680v1.json").read_text(encoding="utf-8")
    chunker = DoclingChunker(max_tokens=128, tokenizer_path=tokenizer_path)
    result = await chunk(chunker, Document(id="paper", content=raw, content_format="docling"))
    assert not result.failed
    assert all(c.metadata["tokens"] <= 128 for c in result)
    document = DoclingDocument.model_validate_json(raw)
    check(document, [(c.content, c.metadata) for c in result], contextualize=True, hybrid=True)
    # fewer, larger chunks than one per element
    per_element = await chunk(
        DoclingChunker(), Document(id="p", content=raw, content_format="docling")
    )
    assert len(result) < len(per_element) / 3


async def test_empty_content_yields_no_chunks() -> None:
    result = await chunk(DoclingChunker(), Document(id="e", content="", content_format="docling"))
    assert list(result) == [] and not result.failed


# -- bad input: InvalidInputError, an ItemFailed in a pipeline ---------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "content is not valid JSON"),
        ('{"title": "a web page"}', "content is not a serialized DoclingDocument"),
        ('{"name": "scan"}', "DoclingDocument 'scan' has no body text to chunk"),
    ],
)
async def test_bad_content_fails_the_item_with_the_reason(content: str, reason: str) -> None:
    chunker = DoclingChunker()
    bad = Document(id="bad", content=content, content_format="docling")
    with pytest.raises(InvalidInputError, match=reason):
        chunker.build_chunks(bad, chunker.split(bad))
    result = await chunk(chunker, bad)
    assert list(result) == []
    [failure] = result.failed
    assert failure.item_id == "bad"
    assert failure.error_type == "InvalidInputError"
    assert "document 'bad'" in failure.message and reason in failure.message
    assert failure.attempts == 1  # never retried


async def test_other_formats_are_refused_before_parsing(report: DoclingDocument) -> None:
    chunker = DoclingChunker()
    text = Document(id="t", content=report.model_dump_json(), content_format="text")
    with pytest.raises(InvalidInputError, match="accepts content formats \\['docling'\\]"):
        chunker.validate_input(text)
    result = await chunk(chunker, text)
    assert not list(result) and result.failed[0].item_id == "t"


# -- parameters, config, identity --------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_tokens": 0, "tokenizer_path": "x"}, "max_tokens must be a positive int"),
        ({"max_tokens": 64}, "tokenizer_path is required"),
        ({"contextualize": "yes"}, "contextualize must be a bool"),
        ({"merge_peers": None}, "merge_peers must be a bool"),
    ],
)
def test_bad_parameters_raise_configuration_error(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        DoclingChunker(**kwargs)


def test_tokenizer_path_is_checked_when_built(tmp_path: Path, tokenizer_path: str) -> None:
    with pytest.raises(ConfigurationError, match="max_tokens is required"):
        DoclingChunker(tokenizer_path=tokenizer_path)
    with pytest.raises(ConfigurationError, match="tokenizer_path: no tokenizer file"):
        DoclingChunker(max_tokens=64, tokenizer_path=str(tmp_path / "missing.json"))
    garbage = tmp_path / "tokenizer.json"
    garbage.write_text(json.dumps({"not": "a tokenizer"}))
    with pytest.raises(ConfigurationError, match="is not a HuggingFace tokenizer file"):
        DoclingChunker(max_tokens=64, tokenizer_path=str(tmp_path))  # a folder holding one
    assert ValueError in ConfigurationError.__mro__


def test_config_rebuilds_the_chunker_and_keys_the_cache(tokenizer_path: str) -> None:
    plain = DoclingChunker()
    assert plain.config() == {"contextualize": True}
    assert type(plain)(**plain.config()).config_hash == plain.config_hash
    assert DoclingChunker(contextualize=False).config_hash != plain.config_hash
    hybrid = DoclingChunker(max_tokens=64, tokenizer_path=tokenizer_path, merge_peers=False)
    rebuilt = DoclingChunker(**hybrid.config())
    assert rebuilt.config() == hybrid.config()
    assert rebuilt.config_hash == hybrid.config_hash != plain.config_hash
    assert DoclingChunker(max_tokens=65, tokenizer_path=tokenizer_path).config_hash != (
        DoclingChunker(max_tokens=64, tokenizer_path=tokenizer_path).config_hash
    )
    assert DoclingChunker.identity() == "ragloom-docling/docling"


async def test_second_run_replays_from_the_cache(report: DoclingDocument) -> None:
    calls = 0

    class Counting(DoclingChunker):
        def split(self, document: Document) -> Any:
            nonlocal calls
            calls += 1
            return super().split(document)

    cache = MemoryCacheStore()
    docs = [docling_doc(report, "a"), docling_doc(report, "b")]
    first = await Pipeline(Counting(), cache=cache).run(docs)
    second = await Pipeline(Counting(), cache=cache).run(docs)
    assert calls == 2
    assert list(second) == list(first)
    assert second.cache_hits == 2


# -- plugin metadata and import cost -----------------------------------------------------------


def test_registered_as_the_docling_chunker() -> None:
    [entry] = [e for e in entry_points(group="ragloom.chunkers") if e.name == "docling"]
    assert entry.value == "ragloom_docling:DoclingChunker"
    assert entry.load() is DoclingChunker


def test_docling_core_is_imported_only_when_chunking() -> None:
    script = (
        "import sys, ragloom_docling\n"
        "assert 'docling_core' not in sys.modules and 'ragloom' not in sys.modules\n"
        "from ragloom_docling import DoclingChunker\n"
        "chunker = DoclingChunker()\n"
        "assert 'docling_core' not in sys.modules\n"
        "from ragloom import Document\n"
        "doc = Document(id='d', content='{\"name\": \"x\"}', content_format='docling')\n"
        "try:\n"
        "    list(chunker.split(doc))\n"
        "except ValueError:\n"
        "    pass\n"
        "assert 'docling_core' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
