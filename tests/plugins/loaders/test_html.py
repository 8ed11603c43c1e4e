"""HtmlLoader and its HTML-to-Markdown converter, on real pages and on bad input."""

from __future__ import annotations

import re

import pytest
from loader_files import SAMPLE_DOCS, pydoc_page, source
from ragloom.loaders_builtin import LoaderSet
from ragloom.loading import LoadError, SourceFile
from ragloom_loaders import HtmlLoader
from ragloom_loaders._html import MAX_DEPTH, html_to_markdown
from support.real_files import installed_files

HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)


def load(data: bytes, path: str = "page.html", **kwargs: bool) -> tuple[str, dict]:
    [doc] = HtmlLoader(**kwargs).load(SourceFile(path, data, "page"))
    assert doc.content_format == "markdown"
    return doc.content, doc.metadata


def test_python_docs_page_keeps_headings_lists_and_code(idle_help: SourceFile) -> None:
    [doc] = HtmlLoader().load(idle_help)
    text = doc.content
    headings = HEADING.findall(text)
    assert headings[0] == ("#", "IDLE")
    assert ("##", "Menus") in headings and ("###", "Command line usage") in headings
    assert len(headings) > 30
    assert "- cross-platform: works mostly the same on Windows, Unix, and macOS" in text
    usage = "idle.py [-c command] [-d] [-e] [-h] [-i] [-r file] [-s] [-t title] [-] [arg] ..."
    assert f"```\n{usage}\n" in text
    assert "¶" not in text  # Sphinx's permalinks
    assert doc.metadata["title"].startswith("IDLE") and doc.metadata["lang"] == "en"
    # page furniture is left out: the sidebar's table of contents, the footer, the nav bar
    assert "### Table of Contents" not in text and "Created using Sphinx" not in text
    assert "previous |" not in text


def test_whole_body_keeps_what_main_only_leaves_out(idle_help: SourceFile) -> None:
    main, _ = load(idle_help.data)
    whole, _ = load(idle_help.data, main_only=False)
    assert "Created using Sphinx" in whole and "### Table of Contents" in whole
    assert len(whole) > len(main)
    for heading in HEADING.findall(main):  # the main text is all there too
        assert f"{heading[0]} {heading[1]}" in whole


def test_sample_faq_headings_with_inline_code() -> None:
    text, meta = load((SAMPLE_DOCS / "faq.html").read_bytes())
    assert text.startswith(
        "# Frequently asked questions\n\n## Does `import ragloom` load every plugin?"
    )
    assert meta["title"] == "ragloom FAQ"


def test_pydoc_pages_of_real_modules() -> None:
    text, meta = load(pydoc_page("textwrap"))
    assert "class TextWrapper(builtins.object)" in text
    assert "Object for wrapping/filling text." in text
    assert meta["title"] == "Python: module textwrap"


def test_converter_structures() -> None:
    page = html_to_markdown(
        "<main><h2>T <a class='headerlink' href='#t'>¶</a></h2>"
        "<p>a<br>b <code>x`y</code></p>"
        "<ul><li>one<ul><li>two</li></ul></li><li><p>three</p><p>more</p></li></ul>"
        "<ol start='3'><li>c</li><li>d</li></ol>"
        "<table><thead><tr><th>k</th><th>v|w</th></tr></thead><tr><td>1</td><td>2</td></tr></table>"
        "<blockquote><p>q1</p><p>q2</p></blockquote>"
        "<pre class='language-python'>def f():\n    return 1\n</pre>"
        "<div hidden>secret</div><p style='display: none'>gone</p><nav>menu</nav>"
        "<script>var x;</script><img alt='pic'></main>"
    )
    assert page.markdown == (
        "## T\n\n"
        "a\nb ``x`y``\n\n"
        "- one\n  - two\n- three\n\n  more\n\n"
        "3. c\n4. d\n\n"
        "| k | v\\|w |\n|---|---|\n| 1 | 2 |\n\n"
        "> q1\n>\n> q2\n\n"
        "```python\ndef f():\n    return 1\n```"
    )
    assert page.headings == 1 and page.tables == 1


def test_layout_tables_become_blocks() -> None:
    page = html_to_markdown(
        "<body><table><tr><td><h1>Title</h1><p>Body text.</p></td><td></td></tr></table>"
        "<table><tr><td></td><td></td><td>Next</td></tr></table></body>"
    )
    assert page.markdown == "# Title\n\nBody text.\n\nNext"


def test_lists_and_quotes_inside_one_another() -> None:
    # every line behind the prefixes of all it is in: indentation, "> ", ">" for a blank line
    page = html_to_markdown(
        "<main><ul><li>item<blockquote><p>q1</p><pre>a\n\nb</pre>"
        "<ol><li>x</li><li><p>y</p><p>z</p></li></ol></blockquote></li><li>two</li></ul>"
        "<blockquote><ul><li>in</li></ul><blockquote><p>deep</p><p>er</p></blockquote>"
        "</blockquote></main>"
    )
    assert page.markdown.split("\n") == [
        "- item", "", "  > q1", "  >", "  > ```", "  > a", "  >", "  > b", "  > ```", "  >",
        "  > 1. x", "  > 2. y", "  >", "  >    z", "- two", "", "> - in", ">", "> > deep",
        "> >", "> > er",
    ]  # fmt: skip


def test_a_table_in_a_layout_cell_keeps_its_own_rows() -> None:
    # The outer table is layout (a table in a cell); the inner one's rows are its own, in
    # document order (a tfoot written before the tbody stays before it), none counted twice.
    page = html_to_markdown(
        "<body><table><tr><td>"
        "<table><thead><tr><th>k</th><th>v</th></tr></thead>"
        "<tfoot><tr><td>sum</td><td>3</td></tr></tfoot>"
        "<tbody><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></tbody></table>"
        "</td></tr><tr><td>after</td></tr></table></body>"
    )
    assert page.markdown == (
        "| k | v |\n|---|---|\n| sum | 3 |\n| a | 1 |\n| b | 2 |\n\nafter"
    )
    assert page.tables == 1


def test_main_selection() -> None:
    html = "<body><header>Site</header><main><p>Main text</p></main><footer>Foot</footer></body>"
    assert html_to_markdown(html).markdown == "Main text"
    assert html_to_markdown(html, main_only=False).markdown == "Site\n\nMain text\n\nFoot"
    no_main = "<body><header>Site</header><p>Body text</p><footer>Foot</footer></body>"
    assert html_to_markdown(no_main).markdown == "Body text"
    article = "<body><p>Around</p><article><header><h1>News</h1></header><p>Story</p></article>"
    assert html_to_markdown(article).markdown == "# News\n\nStory"


def test_deep_nesting_converts_or_is_refused_clearly() -> None:
    deep = "<div>" * 5000 + "deep <b>" * 3000 + "text" + "</b>" * 3000 + "</div>" * 5000
    text, _ = load(deep.encode())
    assert text.startswith("deep deep") and text.endswith("text")
    lists = ("<ul><li>" * (MAX_DEPTH + 1) + "x").encode()
    with pytest.raises(LoadError, match=r"^lists\.html: cannot convert this HTML: .*nested over"):
        load(lists, "lists.html")


def test_encodings_are_read_as_a_browser_would(idle_help: SourceFile) -> None:
    expected, _ = load(idle_help.data)
    page = idle_help.data.decode("utf-8")
    legacy = page.replace('charset="utf-8"', 'charset="windows-1252"').replace(
        "charset=utf-8", "charset=windows-1252"
    )
    assert "windows-1252" in legacy
    cp1252, _ = load(legacy.encode("cp1252", "xmlcharrefreplace"))
    assert cp1252 == expected
    assert load(b"\xff\xfe" + page.encode("utf-16-le"))[0] == expected
    assert load(b"\xef\xbb\xbf" + idle_help.data)[0] == expected
    # no declaration, not UTF-8: windows-1252, the web's legacy default
    undeclared = "<p>Caf\u00e9 \u201cquoted\u201d</p>".encode("cp1252")
    assert load(undeclared)[0] == "Caf\u00e9 \u201cquoted\u201d"
    latin1 = '<meta charset="ISO-8859-1"><p>\u2019</p>'.encode("cp1252")
    assert load(latin1)[0] == "\u2019"  # labelled latin-1, decoded as windows-1252
    unknown = b'<meta charset="x-no-such-charset"><p>caf\xc3\xa9</p>'
    assert load(unknown)[0] == "caf\u00e9"


def test_html_that_is_not_html() -> None:
    loader = HtmlLoader()
    cases = {
        "junk.html": (bytes(range(256)) * 4, r"not HTML: binary data \(NUL byte at offset 0\)"),
        "notes.html": (b"Meeting notes: a < b, c > d.\n" * 4, r"not HTML: no markup found"),
        "empty.html": (b"", r"empty file"),
        "furniture.html": (
            b"<html><body><nav><a href='/'>Home</a></nav><script>x()</script></body></html>",
            r"no text in the page",
        ),
    }
    for path, (data, problem) in cases.items():
        with pytest.raises(LoadError, match=rf"^{re.escape(path)}: {problem}"):
            loader.load(SourceFile(path, data, path))


def test_unsuffixed_html_is_sniffed_and_picked() -> None:
    loaders = LoaderSet.from_registry()
    page = (SAMPLE_DOCS / "faq.html").read_bytes()
    [doc] = loaders.load(SourceFile("exported/faq", page, "faq"))
    assert doc.content_format == "markdown" and doc.content.startswith("# Frequently")


def test_every_installed_html_file_loads_or_is_refused_clearly() -> None:
    found = installed_files(".html", limit=8, min_bytes=1, max_bytes=300_000)
    if not found:
        pytest.skip("no installed distribution ships an .html file here")
    loader = HtmlLoader()
    for path in found:
        shown = str(path)
        try:
            docs = loader.load(source(path, shown))
        except LoadError as exc:
            assert str(exc).startswith(f"{shown}: ")
        else:
            assert docs[0].content.strip()


def _dom_depth(node) -> int:
    """How deep the elements under ``node`` nest (iterative: child and sibling links)."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        child = current.child
        while child is not None:
            if child.tag != "-text":
                stack.append((child, depth + 1))
            child = child.next
    return deepest


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """``(html, depth of the tree built)`` of every page given to the HTML parser."""
    import selectolax.lexbor as lexbor

    real = lexbor.LexborHTMLParser
    seen: list[tuple[str, int]] = []

    def spy(html: str):
        tree = real(html)
        seen.append((html, _dom_depth(tree.root)))
        return tree

    monkeypatch.setattr(lexbor, "LexborHTMLParser", spy)
    return seen


@pytest.mark.parametrize("levels", [5_000, 50_000])
def test_deeply_nested_html_is_parsed_to_a_bounded_depth(parsed, levels: int) -> None:
    """An HTML5 parser's work per tag grows with the depth of the open elements (its scope
    checks walk them): the page given to it nests at most MAX_TREE_DEPTH deep, so its work
    is linear in the number of tags (2.2 MB of nested divs took 106 s before). Every word is
    kept, in order."""
    from ragloom_loaders._html import MAX_TREE_DEPTH

    html = (
        "<html><body>" + "".join(f"<div>w{i} " for i in range(levels)) + "<b>bold</b>"
        + "</div>" * levels + "<p>after</p></body></html>"
    )
    text, _ = load(html.encode())
    ((given, depth),) = parsed
    assert depth <= MAX_TREE_DEPTH + 3  # #document, html, body above the capped elements
    assert given.count("<div>") == MAX_TREE_DEPTH - 2
    words = text.split()
    assert words[:3] == ["w0", "w1", "w2"] and words[-2:] == ["bold", "after"]
    assert words[:levels] == [f"w{i}" for i in range(levels)]


def test_real_and_shallow_pages_reach_the_parser_unchanged(parsed, idle_help) -> None:
    """Only pages nested deeper than MAX_TREE_DEPTH are touched: a real page, and a page of
    many unclosed list items and paragraphs (which close one another), are parsed as is."""
    page = idle_help.data.decode("utf-8")
    loose = "<html><body><ul>" + "<li>item <p>para " * 2000 + "</ul><p>end</body></html>"
    for html in (page, loose):
        html_to_markdown(html)
        assert parsed[-1][0] == html
