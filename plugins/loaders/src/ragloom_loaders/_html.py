"""HTML to Markdown over selectolax (the Lexbor HTML5 parser), without ragloom.

:func:`html_to_markdown` keeps a page's main text and its structure: headings become ``#``
headings, lists ``-``/``1.`` items (nested lists indented), ``<pre>`` fenced code blocks (with
the language from ``language-x``/``highlight-x`` classes), tables Markdown tables (layout tables
become ordinary blocks), quotes ``>`` blocks, inline code backticks. It drops what is never
text of the page (scripts, styles, forms, images, hidden elements) and the permalink marks that
documentation generators put after headings (``¶``, ``§``, ``#``).

With ``main_only`` (the default) it also drops page furniture: the content is the page's
``<main>`` (or ``role="main"``, or its only ``<article>``), else the body without its
``<header>``/``<footer>``; navigation, asides and ARIA banner/navigation/search/complementary/
contentinfo regions are left out.

Nesting of containers (``div``, ``section``...) and of inline elements is walked with explicit
stacks, so a page nested thousands of levels deep converts like any other. Lists, quotes and
tables recurse; their nesting is bounded by :data:`MAX_DEPTH` (:class:`TooDeepError`).

An HTML5 parser does work proportional to the depth of the open elements for each tag it
reads (scope checks walk the stack), so a page of nested elements takes time quadratic in its
depth: 2 MB of nested ``div`` took minutes. Browsers bound that depth (Chromium at 512); so
does this module: before parsing, one linear scan of the tags finds how deep they nest, and
the tags of elements nested deeper than :data:`MAX_TREE_DEPTH` are dropped, their text kept
(it joins the text of the element they are in). Pages under that depth, every real page, are
parsed as they are.

Why by hand and not a converter library (``benchmarks/bench_loaders.py``, 64 pages of 8
documentation generators found on the machine, 3.8 MB; markdownify 1.2.3, html2text 2025.4.15,
trafilatura 2.3.1): given the same main element, markdownify and html2text keep as many of the
page's words (F1 98.4 and 98.1 against 98.7 here) but fewer of its headings as ``#`` lines (89%
and 87%, on rustdoc's pages 41% and 34%; 100% here), keep the permalink marks (``## §Layout``),
and run at 1.0-1.4 and 3.1-3.7 MB/s against 9.9-10.8 here (selectolax's parser in C, one walk in
Python); trafilatura finds the main text itself but keeps 90% of its words and 57% of its
headings at 1.0-1.2 MB/s (two runs). On nested pages (one conversion each, 32,000 levels of
``div``, ``span`` in a ``p``, or ``section`` with a ``p`` at each level) this module keeps every
level's words in 0.15-0.4 s, html2text too in 0.4-0.7 s, markdownify fails at every depth
measured, 500 levels and more (``RecursionError``) and trafilatura keeps under 1% of them. A
library would cost headings, speed and a dependency, and gain nothing measured: the code stays.
Lists, quotes and tables nested in one another (at most :data:`MAX_DEPTH`) cost what they write:
99 levels of lists or quotes around 20,000 paragraphs convert in 0.19-0.27 s (4-8 MB of
Markdown, the indentation or ``>`` repeated on each line; 1.5-1.8 s before :class:`_Nested`)
against 0.11-0.22 s not nested, where markdownify takes 4.1-5.6 s and html2text 0.3-0.5 s
(without indenting the paragraphs of nested items); 99 tables nested in cells around 20,000 rows
in 0.6 s (2.3 s before :func:`_rows`), markdownify 37 s (the same ranges over three runs).

selectolax is imported by :func:`html_to_markdown`, not by importing this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_TREE_DEPTH", "Page", "TooDeepError", "html_to_markdown"]

#: Deepest nesting of lists, quotes and tables inside one another that is converted.
MAX_DEPTH = 100
#: Deepest nesting of elements given to the parser; deeper tags are dropped, their text kept.
MAX_TREE_DEPTH = 512

_WS = re.compile(r"[ \t\n\r\f\v\u00a0]+")
# Stands for a <br> in gathered inline text, where source newlines are only whitespace.
_BR = "\ue000"
# Elements whose content is never text of the page.
_NEVER_TEXT = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
        "canvas", "video", "audio", "map", "form", "button", "select", "input", "textarea",
        "head", "title", "meta", "link", "base", "dialog", "img", "picture", "source", "track",
        "wbr", "-comment", "!doctype",
    }
)
_FURNITURE = frozenset({"nav", "aside"})
# Roles of page furniture (WAI-ARIA landmarks that are not the content).
_FURNITURE_ROLES = frozenset({"navigation", "search", "complementary", "banner", "contentinfo"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Blocks whose children are simply more blocks: walked in place, without recursion.
_CONTAINERS = frozenset(
    {
        "address", "article", "body", "center", "dd", "details", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "html", "li", "main",
        "p", "section", "summary", "caption", "tbody", "thead", "tfoot", "tr", "td", "th",
        "legend", "nav", "aside", "search",
    }
)
_SPECIAL_BLOCKS = frozenset(
    {"blockquote", "hr", "ol", "ul", "menu", "pre", "table", "h1", "h2", "h3", "h4", "h5", "h6"}
)
_CODE_INLINE = frozenset({"code", "kbd", "samp", "tt", "var"})
_PERMALINKS = frozenset({"¶", "§", "#", "🔗", "\u2693"})
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight|sourceCode)-([\w+#.-]+)$")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_BLANKS = re.compile(r"\n{3,}")
_LIST_START = re.compile(r"(?:[-*+]|\d+\.) ")


class TooDeepError(ValueError):
    """Lists, quotes or tables nested deeper than :data:`MAX_DEPTH`."""


@dataclass(slots=True)
class Page:
    """A converted page: Markdown, the ``<title>`` (else the first ``<h1>``), the ``lang``."""

    markdown: str
    title: str | None = None
    lang: str | None = None
    headings: int = 0
    tables: int = 0


def _attrs(node: Any) -> dict[str, str | None]:
    attrs = node.attributes
    return attrs if isinstance(attrs, dict) else dict(attrs)


def _is_hidden(attrs: dict[str, str | None]) -> bool:
    if "hidden" in attrs:
        return True
    if (attrs.get("aria-hidden") or "").lower() == "true":
        return True
    style = attrs.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def _code_span(text: str) -> str:
    text = _WS.sub(" ", text).strip()
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


class _Writer:
    """Walks a tree once, writing Markdown blocks; inline text is gathered into paragraphs."""

    def __init__(self, *, main_only: bool, root_is_main: bool) -> None:
        self.main_only = main_only
        self.drop_header_footer = main_only and not root_is_main
        self.headings = 0
        self.tables = 0
        self.first_h1: str | None = None
        self.depth = 0

    def skip(self, tag: str, child: Any) -> bool:
        """Whether an element is left out with everything in it."""
        if tag in _NEVER_TEXT:
            return True
        attrs = _attrs(child)
        if _is_hidden(attrs):
            return True
        if self.main_only:
            if tag in _FURNITURE or (attrs.get("role") or "") in _FURNITURE_ROLES:
                return True
            if self.drop_header_footer and tag in ("header", "footer"):
                return True
        return False

    # -- inline ---------------------------------------------------------------------------

    def inline(self, node: Any, parts: list[str]) -> None:
        """Append the inline text of ``node``'s descendants to ``parts`` (no recursion)."""
        stack: list[Iterator[Any]] = [iter(node.iter(include_text=True))]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                continue
            tag = child.tag
            if tag == "-text":
                parts.append(child.text_content or "")
            elif self.skip(tag, child):
                continue
            elif tag == "br":
                parts.append(_BR)
            elif tag in _CODE_INLINE:
                parts.append(_code_span(child.text(deep=True)))
            elif tag == "a" and _WS.sub("", child.text(deep=True)) in _PERMALINKS:
                continue
            else:
                stack.append(iter(child.iter(include_text=True)))

    @staticmethod
    def join_inline(parts: list[str]) -> str:
        lines = [line.strip() for line in _WS.sub(" ", "".join(parts)).split(_BR)]
        return "\n".join(line for line in lines if line)

    def inline_text(self, node: Any) -> str:
        """``node``'s inline text on one line."""
        parts: list[str] = []
        self.inline(node, parts)
        return _WS.sub(" ", "".join(parts).replace(_BR, " ")).strip()

    # -- blocks ---------------------------------------------------------------------------

    def blocks(self, node: Any) -> list[Block]:
        """The Markdown blocks of ``node``'s descendants."""
        out: list[Block] = []
        pending: list[str] = []

        def flush() -> None:
            if pending:
                text = self.join_inline(pending)
                if text:
                    out.append(text)
                pending.clear()

        stack: list[Iterator[Any]] = [iter(node.iter(include_text=True))]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                flush()  # the end of a container ends its paragraph
                continue
            tag = child.tag
            if tag == "-text":
                pending.append(child.text_content or "")
                continue
            if self.skip(tag, child):
                continue
            if tag in _CONTAINERS:
                flush()
                stack.append(iter(child.iter(include_text=True)))
            elif tag in _SPECIAL_BLOCKS:
                flush()
                out.extend(self.block(child, tag))
            elif tag == "br":
                pending.append(_BR)
            elif tag in _CODE_INLINE:
                pending.append(_code_span(child.text(deep=True)))
            elif tag == "a" and _WS.sub("", child.text(deep=True)) in _PERMALINKS:
                continue
            else:  # an inline element: its text joins the paragraph
                self.inline(child, pending)
        return out

    def block(self, node: Any, tag: str) -> list[Block]:
        level = _HEADINGS.get(tag)
        if level is not None:
            text = self.inline_text(node)
            if not text:
                return []
            self.headings += 1
            if level == 1 and self.first_h1 is None:
                self.first_h1 = text
            return [f"{'#' * level} {text}"]
        if tag == "pre":
            return self.pre(node)
        if tag == "hr":
            return []
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise TooDeepError(f"lists, quotes or tables nested over {MAX_DEPTH} levels deep")
            if tag == "table":
                return self.table(node)
            if tag == "blockquote":
                inner = self.blocks(node)
                if not inner:
                    return []
                body: list[Block | None] = [inner[0]]
                for block in inner[1:]:  # a blank line between blocks
                    body += [None, block]
                return [_Nested(body, "> ", "> ", ">")]
            return self.list_(node, ordered=tag == "ol")
        finally:
            self.depth -= 1

    def pre(self, node: Any) -> list[Block]:
        text = node.text(deep=True).replace("\r\n", "\n").strip("\n").rstrip()
        if not text.strip():
            return []
        fence = "```"
        while fence in text:
            fence += "`"
        return [f"{fence}{_language(node)}\n{text}\n{fence}"]

    def list_(self, node: Any, *, ordered: bool) -> list[Block]:
        number = 1
        if ordered:
            try:
                number = int((_attrs(node).get("start") or "1").strip())
            except ValueError:
                number = 1
        items: list[Block | None] = []
        loose: list[str] = []  # text directly inside the list, outside any <li>
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                loose.append(child.text_content or "")
                continue
            if self.skip(tag, child):
                continue
            if tag != "li":  # invalid nesting (a <ul> right inside a <ul>): render it too
                items.extend(self.blocks_of(child, tag))
                continue
            inner = self.blocks(child)
            marker = f"{number}. " if ordered else "- "
            number += 1
            if not inner:
                continue
            body: list[Block | None] = [inner[0]]
            for block in inner[1:]:  # a nested list hugs the item's text
                body += [block] if _starts_list(block) else [None, block]
            items.append(_Nested(body, marker, " " * len(marker)))
        text = self.join_inline(loose)
        if text:
            items.insert(0, text)
        return [_Nested(items)] if items else []

    def blocks_of(self, node: Any, tag: str) -> list[Block]:
        if tag in _SPECIAL_BLOCKS:
            return self.block(node, tag)
        if tag in _CONTAINERS:
            return self.blocks(node)
        text = self.inline_text(node)
        return [text] if text else []

    def table(self, node: Any) -> list[Block]:
        rows: list[tuple[list[Any], bool]] = []
        layout = False
        for row in _rows(node):
            cells = [c for c in row.iter() if c.tag in ("td", "th")]
            if not cells:
                continue
            in_head = row.parent is not None and row.parent.tag == "thead"
            rows.append((cells, in_head or all(c.tag == "th" for c in cells)))
            if not layout:
                layout = any(
                    c.css_first("table, pre, ul, ol, p, div, h1, h2, h3, h4, h5, h6, dl")
                    is not None
                    for c in cells
                )
        if not rows:
            return []
        width = max(len(cells) for cells, _ in rows)
        if layout or width == 1 or _mostly_empty(rows):
            # a layout table (blocks in cells, one column, mostly empty cells): plain blocks
            out: list[Block] = []
            for cells, _ in rows:
                for cell in cells:
                    out.extend(self.blocks(cell))
            return out
        texts = [
            [self.inline_text(c).replace("|", "\\|") for c in cells]
            + [""] * (width - len(cells))
            for cells, _ in rows
        ]
        self.tables += 1
        head, body = (texts[0], texts[1:]) if rows[0][1] else ([""] * width, texts)
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * width]
        lines.extend("| " + " | ".join(line) + " |" for line in body)
        return ["\n".join(lines)]


@dataclass(slots=True)
class _Nested:
    """A list, a list item or a quote: its blocks (``None``: a blank line between two), each
    line of which is written once, at the end, behind the prefixes of everything it is in
    (``first`` before its first line, ``rest`` before the others; ``empty`` is what a blank
    line becomes, ``None`` leaving it blank). Prefixing the text of a nested list or quote as
    a string at each level went over all of it once per level: 99 levels around 20,000
    paragraphs took 1.5-1.8 s against 0.1-0.2 s not nested."""

    body: list[Block | None]
    first: str = ""
    rest: str = ""
    empty: str | None = None


Block = str | _Nested


def _starts_list(block: Block) -> bool:
    """Whether ``block``'s Markdown starts with a list item's marker."""
    while isinstance(block, _Nested):
        if block.first:
            return _LIST_START.match(block.first) is not None
        head = block.body[0]
        assert head is not None  # a body starts with a block
        block = head
    return _LIST_START.match(block) is not None


def _write(block: Block, first: str, rest: str, empty: str, out: list[str]) -> None:
    """Append the lines of ``block`` to ``out``: ``first`` before its first line, ``rest``
    before the others, ``empty`` for a blank one (the prefixes of what it is in)."""
    if isinstance(block, str):
        lines = block.split("\n")
        out.append(first + lines[0])
        out.extend(rest + line if line else empty for line in lines[1:])
        return
    inner_rest = rest + block.rest
    inner_empty = empty if block.empty is None else rest + block.empty
    lead = first + block.first
    for part in block.body:
        if part is None:
            out.append(inner_empty)
        else:
            _write(part, lead, inner_rest, inner_empty, out)
            lead = inner_rest


def _text(block: Block) -> str:
    """The Markdown of ``block``."""
    if isinstance(block, str):
        return block
    out: list[str] = []
    _write(block, "", "", "", out)
    return "\n".join(out)


def _rows(table: Any) -> Iterator[Any]:
    """The rows of ``table`` itself, in order, not those of a table nested in one of its
    cells: an HTML5 parser puts a row only right inside a table or its ``thead``, ``tbody``
    or ``tfoot``. (Searching all the rows below it and keeping the table's own made tables
    nested in cells cost their depth times their rows: 99 nested around 20,000 rows took 2.3 s
    against 0.6 s for the table alone.)"""
    for child in table.iter():
        if child.tag == "tr":
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in child.iter() if row.tag == "tr")


def _mostly_empty(rows: list[tuple[list[Any], bool]]) -> bool:
    """Whether most cells have no text (a table used for layout). Asked only of a table none
    of whose cells holds a block: a cell's text is then its own, not a nested table's."""
    total = sum(len(cells) for cells, _ in rows)
    filled = sum(1 for cells, _ in rows for c in cells if c.text(deep=True).strip())
    return filled * 2 < total


def _language(node: Any) -> str:
    candidates = [_attrs(node).get("class") or "", _attrs(node).get("data-lang") or ""]
    code = node.css_first("code")
    if code is not None:
        candidates.append(_attrs(code).get("class") or "")
    parent = node.parent
    for _ in range(2):
        if parent is None:
            break
        candidates.append(_attrs(parent).get("class") or "")
        parent = parent.parent
    for value in candidates:
        for token in value.split():
            match = _LANG_CLASS.match(token)
            if match:
                lang = match.group(1).lower()
                if lang not in ("default", "none", "text", "plaintext"):
                    return lang
    return ""


def _main_root(tree: Any) -> tuple[Any, bool]:
    for selector in ("main", "[role=main]"):
        found = [n for n in tree.css(selector) if not _is_hidden(_attrs(n))]
        if len(found) == 1:
            return found[0], True
    articles = tree.css("article")
    if len(articles) == 1:
        return articles[0], True
    return (tree.body if tree.body is not None else tree.root), False


# A comment, a raw-text element with its content (its "<" are text), or a start/end tag.
_MARKUP = re.compile(
    r"<!--.*?(?:-->|\Z)"
    r"|<(script|style|textarea|title|xmp|iframe|noembed|noframes|noscript)\b[^>]*>.*?(?:</\1\s*>|\Z)"
    r"|<(/?)([A-Za-z][^\s/>]*)[^>]*>",
    re.S | re.I,
)
# Elements that never have content (no end tag).
_VOID = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
        "param", "source", "track", "wbr", "frame", "image",
    }
)
# Elements whose start tag ends an open element of the same group (an unclosed <li>, <p>...).
_SIBLINGS = {
    "li": ("li",), "dt": ("dt", "dd"), "dd": ("dt", "dd"), "option": ("option",),
    "optgroup": ("optgroup", "option"), "tr": ("tr", "td", "th"), "td": ("td", "th"),
    "th": ("td", "th"), "rb": ("rb", "rt", "rp"), "rt": ("rb", "rt", "rp"),
    "rp": ("rb", "rt", "rp"), "tbody": ("tbody", "thead", "tr", "td", "th"),
    "thead": ("tbody", "thead", "tr", "td", "th"), "tfoot": ("tbody", "thead", "tr", "td", "th"),
}
# Elements whose end tag may be left out (HTML's "generate implied end tags" set).
_IMPLIED_END = frozenset({"dd", "dt", "li", "optgroup", "option", "p", "rb", "rp", "rt", "rtc"})
# Start tags that end an open <p> (HTML's "close a p element" rule).
_CLOSES_P = frozenset(
    {
        "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir",
        "div", "dl", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hgroup", "hr", "li", "main", "menu", "nav", "ol", "p",
        "pre", "search", "section", "summary", "table", "ul",
    }
)


class _Depth:
    """The open elements while scanning tags, as a browser would nest them (closely enough to
    measure depth): void elements never open, an unclosed ``<li>``/``<p>``... is ended by its
    next sibling, an end tag closes the innermost open element of its name (and all inside
    it), an end tag with nothing open of its name is ignored. Every operation is amortised
    constant time, so a scan is linear in the number of tags."""

    __slots__ = ("counts", "stack")

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.counts: dict[str, int] = {}

    def _pop(self) -> str:
        name = self.stack.pop()
        self.counts[name] -= 1
        return name

    def open(self, name: str) -> None:
        stack = self.stack
        if name in _CLOSES_P and stack and stack[-1] == "p":
            self._pop()
        ends = _SIBLINGS.get(name)
        if ends is not None:  # an unclosed sibling ends, with what it leaves implied open
            while stack and (stack[-1] in ends or stack[-1] in _IMPLIED_END):
                self._pop()
        stack.append(name)
        self.counts[name] = self.counts.get(name, 0) + 1

    def close(self, name: str) -> int:
        """Close ``name``; the number of elements closed (0: none of that name was open)."""
        if not self.counts.get(name):
            return 0
        closed = 0
        while True:
            closed += 1
            if self._pop() == name:
                return closed


def _deepest(html: str) -> int:
    """How deep the elements of ``html`` nest (as :class:`_Depth` counts): one pass over the
    tags found by one regular-expression call."""
    depth = _Depth()
    stack, counts = depth.stack, depth.counts
    deepest = 0
    void, siblings = _VOID, _SIBLINGS
    for _raw, slash, name in _MARKUP.findall(html):
        if not name:
            continue
        name = name.lower()
        if name in void:
            continue
        if slash:
            if counts.get(name):
                depth.close(name)
            continue
        if name in siblings or name in _CLOSES_P:
            depth.open(name)
        else:
            stack.append(name)
            counts[name] = counts.get(name, 0) + 1
        if len(stack) > deepest:
            deepest = len(stack)
    return deepest


def _capped(html: str, limit: int = MAX_TREE_DEPTH) -> str:
    """``html`` with the tags of elements nested deeper than ``limit`` dropped (their text
    kept); ``html`` itself when nothing is that deep. One pass over the tags: linear."""
    if html.count("<") <= limit:  # fewer tags than the limit cannot nest deeper
        return html
    if _deepest(html) <= limit:  # every real page: measured without building anything
        return html
    depth = _Depth()
    drop: list[tuple[int, int]] = []
    for match in _MARKUP.finditer(html):
        if match.group(3) is None:
            continue  # a comment or a raw-text element: no nesting inside
        name = match.group(3).lower()
        if name in _VOID:
            continue
        if match.group(2):  # an end tag
            too_deep = len(depth.stack) > limit
            if depth.close(name) and too_deep:
                drop.append(match.span())
            continue
        depth.open(name)
        if len(depth.stack) > limit:
            drop.append(match.span())
    if not drop:
        return html
    parts: list[str] = []
    start = 0
    for begin, end in drop:
        parts.append(html[start:begin])
        parts.append(" ")  # the tag's place: words on either side stay apart
        start = end
    parts.append(html[start:])
    return "".join(parts)


def html_to_markdown(html: str, *, main_only: bool = True) -> Page:
    """Convert ``html`` (a page or a fragment) to a :class:`Page` of Markdown.

    Raises:
        TooDeepError: lists, quotes or tables are nested over :data:`MAX_DEPTH` levels.
    """
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(_capped(html.replace(_BR, "")))
    title_node = tree.css_first("title")
    title = _WS.sub(" ", title_node.text(deep=True)).strip() if title_node is not None else ""
    html_node = tree.css_first("html")
    lang = (_attrs(html_node).get("lang") or "").strip() if html_node is not None else ""
    if main_only:
        root, is_main = _main_root(tree)
    else:
        root, is_main = (tree.body if tree.body is not None else tree.root), False
    if root is None:
        return Page("", title or None, lang or None)
    writer = _Writer(main_only=main_only, root_is_main=is_main)
    blocks = [_text(b) for b in writer.blocks(root)]
    text = _BLANKS.sub("\n\n", "\n\n".join(b.strip("\n") for b in blocks if b.strip()))
    return Page(
        text.strip(),
        title or writer.first_h1,
        lang or None,
        headings=writer.headings,
        tables=writer.tables,
    )
