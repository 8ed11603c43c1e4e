"""What a chunk is searched by (title and heading path, then its text) and what holds nothing
to read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ragloom.models import Document
from ragloom.search_text import is_boilerplate, search_text


def chunk(content: str, **metadata) -> Document:
    return Document(id="d#0", content=content, metadata=metadata)


def test_title_and_heading_path_go_first_once() -> None:
    found = search_text(chunk(
        "Use --keep to leave the files in place.",
        title="git-stash(1) Manual Page", headings=["git-stash(1) Manual Page", "OPTIONS"],
    ))
    assert found == "git-stash(1) Manual Page > OPTIONS\n\nUse --keep to leave the files in place."


def test_a_heading_already_at_the_start_is_not_repeated() -> None:
    text = "## Looking inside\n\nRun `ragloom cache info` to see the entries."
    found = search_text(chunk(text, title="Caching", headings=["Caching", "Looking inside"]))
    assert found == "Caching\n\n" + text
    assert search_text(chunk(text)) == text  # no metadata: the text alone
    assert search_text(chunk(text, title=7, headings="not a list")) == text


@given(st.text(), st.text(), st.lists(st.text(), max_size=4))
def test_the_text_is_always_kept_whole_at_the_end(content, title, headings) -> None:
    assert search_text(chunk(content, title=title, headings=headings)).endswith(content)


@pytest.mark.parametrize(
    "content",
    [
        "# My First Contribution to the Git Project\n\n",
        "### Prerequisite: Setting Up `git send-email`\n",
        "Previous: Closure Example, Up: Using libffi   [Index]",
        "Next: Types, Previous: Introduction, Up: Top",
        "--\n2.21.0.392.gf8f6787159e-goog\n```\n",
        "Title\n=====\n",
        "",
    ],
)
def test_headings_navigation_and_separators_are_boilerplate(content: str) -> None:
    assert is_boilerplate(content)


@pytest.mark.parametrize(
    "content",
    [
        "## Stashing\n\nUse git stash push to record the current state of the working tree.",
        "```console\n$ ragloom cache clear --step ragloom-text/recursive\nremoved 372 entries\n```",
        "The next release adds a sync option; up to now every ingest rewrote the whole index.",
    ],
)
def test_passages_are_not(content: str) -> None:
    assert not is_boilerplate(content)
