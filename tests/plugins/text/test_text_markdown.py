"""MarkdownChunker: heading structure, protected code blocks and tables, heading paths."""

from __future__ import annotations

import pytest
from ragloom import Document, InvalidInputError
from ragloom_text import MarkdownChunker
from ragloom_text.lengths import count_words
from text_checks import check_spans

README = """\
# Project

Intro paragraph. It explains things.

## Install

Run this:

```bash
pip install project
# a comment, not a heading
```

## Usage

| option | meaning |
|--------|---------|
| -v     | verbose |
| -q     | quiet   |

### Advanced

More text about advanced usage goes here.

# Appendix

The end.
"""


def chunks(chunker: MarkdownChunker, text: str, fmt: str = "markdown") -> list[Document]:
    doc = Document(id="doc", content=text, content_format=fmt)
    chunker.validate_input(doc)
    return chunker.build_chunks(doc, chunker.split(doc))


def test_each_section_becomes_a_chunk_with_its_heading_path() -> None:
    got = chunks(MarkdownChunker(chunk_size=90), README)
    assert [(c.content.split("\n")[0], c.metadata["headings"]) for c in got] == [
        ("# Project", ["Project"]),
        ("## Install", ["Project", "Install"]),
        ("## Usage", ["Project", "Usage"]),
        ("| option | meaning |", ["Project", "Usage"]),
        # the rest fits: the end of the text is the best cut, so two sections share a chunk
        ("### Advanced", []),
    ]
    assert got[1].content.endswith("```\n\n")
    assert "".join(c.content for c in got) == README
    got = chunks(MarkdownChunker(chunk_size=60), README)
    assert got[-2].content.startswith("### Advanced")
    assert got[-2].metadata["headings"] == ["Project", "Usage", "Advanced"]
    assert got[-1].content == "# Appendix\n\nThe end.\n"
    assert got[-1].metadata["headings"] == ["Appendix"]


def test_a_chunk_spanning_sections_gets_their_common_path() -> None:
    text = "# A\n\n## B\n\nb text\n\n## C\n\nc text\n\n# D\n\n" + "d " * 20
    got = chunks(MarkdownChunker(chunk_size=40), text)
    assert got[0].content == "# A\n\n## B\n\nb text\n\n## C\n\nc text\n\n"
    assert got[0].metadata["headings"] == ["A"]  # inside A, in neither B nor C
    assert got[1].metadata["headings"] == ["D"]
    same_title = "# A\n\n## X\n\none\n\n## X\n\ntwo\n\n# B\n\n" + "b " * 20
    got = chunks(MarkdownChunker(chunk_size=40), same_title)
    assert got[0].metadata["headings"] == ["A"]  # two different sections titled X


def test_headings_prefer_the_outermost_level() -> None:
    text = "# One\n\n" + "word " * 10 + "\n\n## Two\n\nshort\n\n# Three\n\n" + "x " * 10
    got = chunks(MarkdownChunker(chunk_size=100), text)
    # the window holds "## Two" and "# Three": the cut is at "# Three"
    assert got[1].content.startswith("# Three")
    assert got[0].metadata["headings"] == ["One"]


@pytest.mark.parametrize("size", [41, 50, 60, 70, 80])
def test_fenced_code_is_never_cut_when_it_fits(size: int) -> None:
    fence = "```python\ndef f(x):\n    return x + 1\n```\n"
    text = "Some words before the code block here.\n" + fence + "And words after it, quite a few.\n"
    got = chunks(MarkdownChunker(chunk_size=size), text)
    assert any(fence in c.content for c in got), [c.content for c in got]
    check_spans(text, [(c.start, c.end, c.metadata) for c in got], size, 0)


@pytest.mark.parametrize("size", [40, 60, 90])
def test_tables_are_never_cut_when_they_fit(size: int) -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    text = "Intro line one.\nIntro line two.\n" + table + "\nOutro text here and more.\n"
    got = chunks(MarkdownChunker(chunk_size=size), text)
    assert any(table in c.content for c in got), [c.content for c in got]


def test_a_pipe_table_without_delimiter_row_is_kept_whole() -> None:
    table = "| a | b |\n| 1 | 2 |\n| 3 | 4 |\n"
    text = "Before.\n" + table + "After.\n"
    got = chunks(MarkdownChunker(chunk_size=len(table) + 2), text)
    assert any(table in c.content for c in got)


def test_an_oversized_code_block_is_cut_at_line_ends_only() -> None:
    body = "".join(f"line_{i} = {i} * {i}\n" for i in range(20))
    text = "# Code\n\n```python\n" + body + "```\n"
    got = chunks(MarkdownChunker(chunk_size=60), text)
    inside = [c for c in got if c.start >= text.index("```")]
    assert len(inside) > 2
    for c in inside:
        assert c.content.endswith("\n") or c.end == len(text)
        assert len(c.content) <= 60
    assert all(c.metadata["headings"] == ["Code"] for c in got)


def test_a_line_longer_than_the_limit_inside_code_is_cut_at_spaces_not_sentences() -> None:
    long_line = "x = 'done. " + "y " * 40 + "'\n"
    text = "```\nshort\n" + long_line + "short\n```\n"
    got = chunks(MarkdownChunker(chunk_size=30), text)
    check_spans(text, [(c.start, c.end, c.metadata) for c in got], 30, 0)
    assert not any(c.metadata.get("oversized") for c in got)
    first_part = next(c for c in got if c.content.startswith("x = "))
    assert first_part.content == "x = 'done. y y y y y y y y y "  # farthest space, not ". "
    assert "".join(c.content for c in got) == text


def test_headings_inside_code_and_front_matter_are_ignored() -> None:
    text = "---\ntitle: x\n# not: heading\n---\n\n# Real\n\n```\n# fake\n```\n"
    got = chunks(MarkdownChunker(chunk_size=1000), text)
    assert got[0].metadata["headings"] == []  # one chunk: front matter lies before "# Real"
    got = chunks(MarkdownChunker(chunk_size=20), text)
    assert {tuple(c.metadata["headings"]) for c in got} <= {(), ("Real",)}


def test_setext_headings_and_closing_hashes() -> None:
    text = "Title\n=====\n\nbody one\n\nPart\n----\n\nbody two\n\n## Closed ##\n\nbody three\n"
    got = chunks(MarkdownChunker(chunk_size=25), text)
    assert [(c.content, c.metadata["headings"]) for c in got] == [
        ("Title\n=====\n\nbody one\n\n", ["Title"]),
        ("Part\n----\n\nbody two\n\n", ["Title", "Part"]),
        ("## Closed ##\n\nbody three\n", ["Title", "Closed"]),
    ]


def test_a_thematic_break_after_a_paragraph_line_is_not_a_heading_without_blank_line() -> None:
    text = "para line one\npara line two\n---\n\nnext\n"
    got = chunks(MarkdownChunker(chunk_size=1000), text)
    assert got[0].metadata["headings"] == []


def test_overlap_keeps_the_limit_and_the_paths() -> None:
    got = chunks(MarkdownChunker(chunk_size=70, chunk_overlap=20), README)
    spans = [(c.start, c.end, c.metadata) for c in got]
    check_spans(README, spans, 70, 20)
    assert any(c.start < p.end for p, c in zip(got, got[1:], strict=False))


def test_word_counting_length_function() -> None:
    got = chunks(MarkdownChunker(chunk_size=12, length_function="words"), README)
    check_spans(README, [(c.start, c.end, c.metadata) for c in got], 12, 0, count_words)


def test_accepts_markdown_and_text_only() -> None:
    chunker = MarkdownChunker()
    assert chunker.accepted_content_formats == frozenset({"markdown", "text"})
    assert chunks(chunker, "plain text", fmt="text")[0].content == "plain text"
    with pytest.raises(InvalidInputError):
        chunker.validate_input(Document(id="c", content="# x", content_format="code"))


def test_empty_document_gives_no_chunks() -> None:
    assert chunks(MarkdownChunker(), "") == []
