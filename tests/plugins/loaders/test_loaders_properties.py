"""Property tests: whatever the bytes, a loader gives documents or a LoadError naming the file."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragloom.loaders_builtin import LoaderSet, NoLoaderError
from ragloom.loading import Loader, LoadError, SourceFile
from ragloom_loaders import DocxLoader, HtmlLoader, PdfLoader

TAGS = ["p", "div", "h1", "h3", "ul", "ol", "li", "table", "tr", "td", "th", "pre", "code",
        "blockquote", "nav", "main", "article", "a", "b", "br", "script", "span", "dl", "dt"]

html_fragments = st.recursive(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20),
    lambda inner: st.builds(
        lambda tag, attrs, body: f"<{tag}{attrs}>{''.join(body)}</{tag}>",
        st.sampled_from(TAGS),
        st.sampled_from(["", " hidden", " class='language-py'", " role='main'", " start='x'"]),
        st.lists(inner, max_size=4),
    ),
    max_leaves=25,
)

SETTINGS = settings(
    deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow]
)


def outcome(loader: Loader, source: SourceFile) -> list | LoadError:
    try:
        docs = loader.load(source)
    except LoadError as exc:
        assert str(exc).startswith(f"{source.path}: "), str(exc)
        return exc
    assert docs and all(d.content.strip() for d in docs)
    return docs


@SETTINGS
@given(html_fragments, st.booleans())
def test_any_html_converts_or_is_refused(html: str, main_only: bool) -> None:
    outcome(HtmlLoader(main_only=main_only), SourceFile("gen.html", html.encode(), "g"))


@SETTINGS
@given(st.binary(max_size=3000))
def test_any_bytes_named_html_pdf_or_docx(data: bytes) -> None:
    for loader, suffix in ((HtmlLoader(), ".html"), (PdfLoader(), ".pdf"), (DocxLoader(), ".docx")):
        outcome(loader, SourceFile(f"any{suffix}", data, "any"))


@pytest.mark.parametrize("kind", ["pdf", "docx"])
def test_damaged_real_documents(
    kind: str, typeset_pdf: SourceFile, written_docx: SourceFile
) -> None:
    sample, loader = (typeset_pdf, PdfLoader()) if kind == "pdf" else (written_docx, DocxLoader())

    @SETTINGS
    @given(st.lists(st.tuples(st.integers(0, len(sample.data) - 1), st.integers(0, 255)),
                    min_size=1, max_size=12))
    def damaged(edits: list[tuple[int, int]]) -> None:
        data = bytearray(sample.data)
        for position, value in edits:
            data[position] = value
        outcome(loader, SourceFile(f"damaged.{kind}", bytes(data), "damaged"))

    damaged()


LOADERS = LoaderSet.from_registry()


@SETTINGS
@given(
    st.sampled_from(["x", "x.html", "x.pdf", "x.docx", "x.md", "x.txt", "x.bin", ".hidden", "x."]),
    st.binary(max_size=600),
)
def test_the_set_picks_or_says_why(name: str, data: bytes) -> None:
    loaders = LOADERS
    source = SourceFile(name, data, "x")
    try:
        loader = loaders.pick(source)
    except NoLoaderError as exc:
        assert str(exc).startswith(f"{name}: ")
        return
    assert isinstance(loader, Loader)
    try:
        loaders.load(source)
    except LoadError as exc:
        assert str(exc).startswith(f"{name}: ")
