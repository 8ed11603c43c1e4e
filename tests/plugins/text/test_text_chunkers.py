"""The chunker classes of ragloom-text: behaviour, parameters, configs, entry points, routing."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest
from ragloom import (
    Chunker,
    ChunkerRouter,
    ConfigurationError,
    Document,
    InvalidInputError,
    Pipeline,
)
from ragloom_text import (
    DEFAULT_SEPARATORS,
    LENGTH_FUNCTIONS,
    CodeChunker,
    MarkdownChunker,
    RecursiveCharacterTextSplitter,
    SentenceChunker,
    count_words,
    default_chunker_router,
)
from text_checks import check_spans

ALL = [RecursiveCharacterTextSplitter, MarkdownChunker, SentenceChunker, CodeChunker]


def chunk(chunker: Chunker, text: str, fmt: str = "text") -> list[Document]:
    doc = Document(id="d", content=text, content_format=fmt, metadata={"source": "t"})
    return chunker.build_chunks(doc, chunker.split(doc))


# -- recursive ---------------------------------------------------------------------------


def test_recursive_prefers_paragraphs_then_sentences_then_words() -> None:
    text = "First paragraph here.\n\nSecond one. It has two sentences.\n\nThird."
    got = [c.content for c in chunk(RecursiveCharacterTextSplitter(chunk_size=40), text)]
    assert got == ["First paragraph here.\n\n", "Second one. It has two sentences.\n\n", "Third."]
    got = [c.content for c in chunk(RecursiveCharacterTextSplitter(chunk_size=20), text)]
    assert got == [
        "First paragraph ",
        "here.\n\n",
        "Second one. ",
        "It has two ",
        "sentences.\n\nThird.",  # the rest fits: the end of the text is the best cut
    ]


def test_chunks_are_exact_slices_with_lineage_and_inherited_metadata() -> None:
    text = "repeat me. " * 30
    got = chunk(RecursiveCharacterTextSplitter(chunk_size=50, chunk_overlap=15), text)
    for i, c in enumerate(got):
        assert c.content == text[c.start : c.end]
        assert (c.id, c.index, c.parent_id) == (f"d#{i}", i, "d")
        assert c.metadata == {"source": "t"}
    check_spans(text, [(c.start, c.end, False) for c in got], 50, 15)


def test_split_text_follows_a_subclass_that_changes_its_pieces() -> None:
    # split_text slices the spans directly only when nothing between them and the chunk
    # documents was overridden; a subclass's own split or input check still decides.
    class FirstOnly(RecursiveCharacterTextSplitter):
        def split(self, document: Document) -> Any:
            return list(super().split(document))[:1]

    class MarkdownOnly(RecursiveCharacterTextSplitter):
        accepted_content_formats = frozenset({"markdown"})

    text = "one two. three four. five six."
    assert FirstOnly(chunk_size=10).split_text(text) == ["one two. "]
    assert RecursiveCharacterTextSplitter(chunk_size=10).split_text(text)[1:] == [
        "three ", "four. ", "five six."
    ]  # fmt: skip
    with pytest.raises(InvalidInputError, match="accepts content formats"):
        MarkdownOnly(chunk_size=10).split_text(text)
    with pytest.raises(TypeError, match="expected a str"):
        RecursiveCharacterTextSplitter().split_text(b"bytes")  # type: ignore[arg-type]


def test_recursive_without_character_separator_flags_oversized_atoms() -> None:
    text = "a b " + "x" * 30 + " c"
    got = chunk(RecursiveCharacterTextSplitter(chunk_size=10, separators=[" "]), text)
    assert [(c.content, c.metadata.get("oversized", False)) for c in got] == [
        ("a b ", False),
        ("x" * 30 + " ", True),
        ("c", False),
    ]
    assert got[1].metadata["source"] == "t"


def test_recursive_regex_separators() -> None:
    text = "one1two22three333four"
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=8, separators=[r"\d+", ""], is_separator_regex=True
    )
    assert [c.content for c in chunk(splitter, text)] == ["one1", "two22", "three333", "four"]
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=6, separators=[r"\d+", ""], is_separator_regex=True
    )
    assert [c.content for c in chunk(splitter, text)] == ["one1", "two22", "three3", "33four"]


@pytest.mark.parametrize("length", ["words", "whitespace", count_words])
def test_word_length_counts_words(length: Any) -> None:
    text = " ".join(f"w{i}" for i in range(50))
    got = chunk(RecursiveCharacterTextSplitter(chunk_size=7, length_function=length), text)
    assert [len(c.content.split()) for c in got] == [7] * 7 + [1]


def test_a_callable_token_counter_is_honoured() -> None:
    def tokens(text: str) -> int:
        return (len(text) + 3) // 4

    text = "lorem ipsum dolor sit amet " * 20
    got = chunk(RecursiveCharacterTextSplitter(chunk_size=10, length_function=tokens), text)
    assert all(tokens(c.content) <= 10 for c in got)
    assert max(tokens(c.content) for c in got) >= 9  # chunks are packed, not tiny
    assert "".join(c.content for c in got) == text


# -- sentence and code ---------------------------------------------------------------------


def test_sentence_chunker_packs_whole_sentences() -> None:
    text = "Dr. Smith arrived. He said hi! Was it e.g. late? No. It was fine. The end."
    got = [c.content for c in chunk(SentenceChunker(chunk_size=35), text)]
    assert got == [
        "Dr. Smith arrived. He said hi! ",
        "Was it e.g. late? No. It was fine. ",
        "The end.",
    ]


def test_sentence_chunker_cuts_an_overlong_sentence_at_words() -> None:
    text = "This sentence is far too long to fit. Short one."
    got = [c.content for c in chunk(SentenceChunker(chunk_size=20), text)]
    assert got == ["This sentence is ", "far too long to ", "fit. Short one."]


def test_sentence_chunker_handles_cjk_and_quotes() -> None:
    text = "他来了。她走了！“Really?” he asked. Yes."
    got = [c.content for c in chunk(SentenceChunker(chunk_size=8), text)]
    assert got[0] == "他来了。她走了！"
    got = [c.content for c in chunk(SentenceChunker(chunk_size=12), text)]
    assert got == ["他来了。她走了！", "“Really?” ", "he asked. ", "Yes."]
    got = [c.content for c in chunk(SentenceChunker(chunk_size=5), text)]
    assert got[:2] == ["他来了。", "她走了！"]


CODE = '''import os


def first(a, b):
    """Add."""
    return a + b


@decorator
def second(x):
    y = x * 2

    return y


class Third:
    def method(self):
        return 1

    def other(self):
        return 2
'''


def test_code_chunker_cuts_between_top_level_definitions() -> None:
    got = [c.content for c in chunk(CodeChunker(chunk_size=80), CODE, fmt="code")]
    assert got == [
        'import os\n\n\ndef first(a, b):\n    """Add."""\n    return a + b\n\n\n',
        "@decorator\ndef second(x):\n    y = x * 2\n\n    return y\n\n\n",
        "class Third:\n    def method(self):\n        return 1\n\n",
        "    def other(self):\n        return 2\n",
    ]


def test_code_chunker_falls_back_to_nested_definitions_then_blank_lines() -> None:
    got = [c.content for c in chunk(CodeChunker(chunk_size=45), CODE, fmt="code")]
    assert "    def other(self):\n        return 2\n" in got
    assert "@decorator\ndef second(x):\n    y = x * 2\n\n" in got


def test_code_chunker_supports_other_languages() -> None:
    rust = "use std::io;\n\nfn main() {\n    run();\n}\n\npub struct S {\n    a: u8,\n}\n"
    got = [c.content for c in chunk(CodeChunker(chunk_size=30), rust, fmt="code")]
    assert got == [
        "use std::io;\n\n",
        "fn main() {\n    run();\n}\n\n",
        "pub struct S {\n    a: u8,\n}\n",
    ]


# -- parameters ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": -5}, "chunk_size"),
        ({"chunk_size": 2.5}, "chunk_size"),
        ({"chunk_size": True}, "chunk_size"),
        ({"chunk_overlap": -1}, "chunk_overlap"),
        ({"chunk_size": 10, "chunk_overlap": 10}, "chunk_overlap"),
        ({"chunk_size": 10, "chunk_overlap": 11}, "chunk_overlap"),
        ({"length_function": "syllables"}, "length_function"),
        ({"length_function": {"name": "tokens", "params": {"vocab": "x"}}}, "length_function"),
        ({"length_function": {"params": {}}}, "length_function"),
        ({"length_function": 42}, "length_function"),
        ({"length_function": "pkg.mod:fn"}, "length_function"),
    ],
)
def test_bad_parameters_raise_configuration_errors_naming_them(
    cls: type[Chunker], kwargs: dict[str, Any], names: str
) -> None:
    with pytest.raises(ConfigurationError, match=names) as info:
        cls(**kwargs)
    assert isinstance(info.value, ValueError)


def test_unknown_length_name_lists_the_known_names() -> None:
    with pytest.raises(ValueError, match="'chars', 'words', 'whitespace', 'tokens', 'tiktoken'"):
        RecursiveCharacterTextSplitter(length_function="syllables")
    with pytest.raises(ValueError, match="did you mean 'tokens'"):
        RecursiveCharacterTextSplitter(length_function="token")


@pytest.mark.parametrize(
    ("separators", "message"),
    [
        ([], "separators must not be empty"),
        ("\n\n", "separators must be a list"),
        (["\n", 3], r"separators\[1\] must be a string"),
    ],
)
def test_bad_separators(separators: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        RecursiveCharacterTextSplitter(separators=separators)


def test_bad_regex_separator() -> None:
    with pytest.raises(ConfigurationError, match=r"separators\[0\].*regular expression"):
        RecursiveCharacterTextSplitter(separators=["("], is_separator_regex=True)


# -- identity and configs -----------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
def test_config_rebuilds_an_equal_chunker(cls: type[Any]) -> None:
    chunker = cls(chunk_size=64, chunk_overlap=8, length_function="words")
    clone = cls(**chunker.config())
    assert clone.config() == chunker.config()
    assert cls(**clone.config()).config_hash == clone.config_hash  # a file rebuilt keeps its cache
    assert cls(chunk_size=65).config_hash != cls(chunk_size=64).config_hash
    assert chunker.identity() == cls.step_id
    assert cls.step_id.startswith("ragloom-text/")
    assert chunker.event_name == "Chunking"


def test_recursive_config_lists_separators_and_defaults() -> None:
    config = RecursiveCharacterTextSplitter().config()
    assert config == {
        "chunk_size": 500,
        "chunk_overlap": 0,
        "length_function": "chars",
        "separators": list(DEFAULT_SEPARATORS),
        "is_separator_regex": False,
    }


def my_counter(text: str) -> int:
    return len(text.split(","))


def test_length_function_names_in_configs() -> None:
    assert RecursiveCharacterTextSplitter(length_function=len).config()["length_function"] == (
        "chars"
    )
    assert SentenceChunker(length_function=count_words).config()["length_function"] == "words"
    name = CodeChunker(length_function=my_counter).config()["length_function"]
    assert name == f"{__name__}:my_counter"
    assert set(LENGTH_FUNCTIONS) >= {"chars", "words", "whitespace"}


# -- entry points and the router ----------------------------------------------------------


def test_entry_points_name_every_chunker() -> None:
    eps = {
        ep.name: ep
        for ep in importlib.metadata.entry_points(group="ragloom.chunkers")
        if ep.dist is not None and ep.dist.name == "ragloom-text"
    }
    if not eps:
        pytest.skip("ragloom-text is not installed (pip install -e plugins/text)")
    assert {name: ep.load() for name, ep in eps.items()} == {
        "recursive": RecursiveCharacterTextSplitter,
        "markdown": MarkdownChunker,
        "sentence": SentenceChunker,
        "code": CodeChunker,
        "auto": default_chunker_router,
    }


def test_the_registry_builds_every_chunker_by_name() -> None:
    from ragloom.plugins import Registry

    registry = Registry(allow=["ragloom-text"])
    if "auto" not in registry.names("chunker"):
        pytest.skip("ragloom-text is not installed (pip install -e plugins/text)")
    auto = registry.create("chunker", "auto", {"chunk_size": 300, "chunk_overlap": 30})
    assert isinstance(auto, ChunkerRouter)
    built = registry.create("chunker", "markdown", {"chunk_size": 50, "length_function": "words"})
    assert isinstance(built, MarkdownChunker) and built.config()["length_function"] == "words"
    with pytest.raises(ConfigurationError, match="chunk_overlap"):
        registry.create("chunker", "recursive", {"chunk_size": 10, "chunk_overlap": 10})


def test_default_router_sends_each_format_to_its_chunker() -> None:
    router = default_chunker_router(chunk_size=100, chunk_overlap=10)
    assert isinstance(router, ChunkerRouter) and isinstance(router, Chunker)
    names = {
        fmt: router.route_name(Document(id=fmt, content="x", content_format=fmt))
        for fmt in ["markdown", "code", "text", "rst", "html"]
    }
    assert names == {
        "markdown": "MarkdownChunker",
        "code": "CodeChunker",
        "text": "RecursiveCharacterTextSplitter",
        "rst": "RecursiveCharacterTextSplitter",
        "html": "RecursiveCharacterTextSplitter",
    }
    assert all(child.config()["chunk_size"] == 100 for child in router.children)
    assert all(child.config()["chunk_overlap"] == 10 for child in router.children)


def test_default_router_runs_in_a_pipeline() -> None:
    docs = [
        Document(id="md", content="# T\n\n" + "word " * 40, content_format="markdown"),
        Document(
            id="py", content="def f():\n    pass\n\n\ndef g():\n    pass\n", content_format="code"
        ),
        Document(id="txt", content="plain " * 30, content_format="text"),
    ]
    result = Pipeline(default_chunker_router(chunk_size=25)).run_sync(docs)
    assert not result.failed
    by_parent: dict[str, list[Document]] = {}
    for c in result:
        by_parent.setdefault(c.parent_id or "", []).append(c)
    assert set(by_parent) == {"md", "py", "txt"}
    assert all(c.metadata["headings"] == ["T"] for c in by_parent["md"])
    assert [c.content for c in by_parent["py"]] == [
        "def f():\n    pass\n\n\n",
        "def g():\n    pass\n",
    ]
    for doc in docs:
        assert "".join(c.content for c in by_parent[doc.id]) == doc.content
