"""HTML to Markdown for ragloom-loaders: our converter (over selectolax) vs trafilatura,
markdownify and html2text.

Run on demand (not in tests), on real HTML pages found on this machine:

    pip install -e core -e plugins/loaders trafilatura lxml_html_clean markdownify html2text
    python benchmarks/bench_loaders.py [--repeat 5] [--per-site 12] [--pdf]
        [--deep 500,2000,8000,32000] [--deep-cap 20] [--no-pages]

markdownify and html2text convert what they are given, the whole page: the rows "(our main)"
give them the element our converter takes as the main content, so that only the conversion
differs. ``--deep`` times one conversion of pages nested that deep (``div``, ``span`` inside a
``p``, ``section`` with a ``p`` at every level), with the share of the levels' words kept;
``--bounded`` times lists, quotes and tables nested 99 deep (the converter refuses more than
100) around 20,000 paragraphs or rows, against the same body not nested.

Pages come from documentation generators that ship HTML in packages: Python's own Sphinx docs
(``idlelib/help.html`` in every CPython), mdBook (the Rust book and guides under
``~/.rustup``), rustdoc (the Rust standard library docs), the Node.js API docs, npm's docs,
DocBook (the Valgrind manual), gtk-doc (libtasn1) and Debian's Python policy. Sites that are
absent are skipped and listed.

Quality is measured against each page's *gold* main content: the element that generator puts
the page's text in (``div[role=main]`` for Sphinx, ``main`` for mdBook, ``#main-content`` for
rustdoc, ``#apicontent`` for Node.js, ``#_content`` for npm, the chapter ``div`` for DocBook),
known per site, not guessed. Columns (means over pages, in %):

- recall: share of the gold text's words (as a multiset) present in the output;
- precision: share of the output's words that are gold words (the rest is boilerplate);
- F1 of the two;
- headings: gold ``h1``-``h6`` that appear as Markdown headings (``#`` lines) in the output;
- lists: gold ``li`` items whose first words start a Markdown list item (``-``/``1.``);
- MB/s: HTML megabytes converted per CPU second over the whole corpus, contenders interleaved
  round-robin, best of ``--repeat`` rounds (the machine may be shared);
- import: seconds to import the extractor in a fresh interpreter (median of 3).

``--pdf`` also times text extraction of the PDFs under ``/usr/share/doc`` with pypdfium2 against
pypdf (if installed), as pages per second, best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "plugins" / "loaders" / "src"))

RUST = os.path.expanduser("~/.rustup/toolchains/*/share/doc/rust/html")
STDLIB = os.path.dirname(os.__file__)

#: site -> (glob patterns, gold selector)
SITES: dict[str, tuple[list[str], str]] = {
    "sphinx (CPython idlelib)": ([f"{STDLIB}/idlelib/help.html"], "div[role=main]"),
    "sphinx (Debian python3)": (["/usr/share/doc/python3/python-policy.html"], "div.body"),
    "mdbook (Rust books)": (
        [f"{RUST}/book/ch*.html", f"{RUST}/cargo/guide/*.html", f"{RUST}/edition-guide/*/*.html"],
        "main",
    ),
    "rustdoc (Rust std)": (
        [f"{RUST}/std/*/struct.*.html", f"{RUST}/std/*/fn.*.html"],
        "#main-content",
    ),
    "node.js API": (["/usr/share/doc/nodejs/api/*.html"], "#apicontent"),
    "npm docs": (["/usr/lib/node_modules/npm/docs/output/*/*.html"], "#_content"),
    "docbook (Valgrind)": (
        ["/usr/share/doc/valgrind/html/*-manual.html", "/usr/share/doc/valgrind/html/manual-*.html"],
        "div.chapter, div.sect1, div.book",
    ),
    "gtk-doc (libtasn1)": (["/usr/share/gtk-doc/html/libtasn1/*.html"], "div.refentry, div.chapter, div.index, div.book"),
}

WORD = re.compile(r"\w+")
ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
HEADING_LINE = re.compile(r"^#{1,6} +(.*)$", re.M)
LIST_LINE = re.compile(r"^ *(?:[-*+]|\d+[.)]) +(.*)$", re.M)


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


@dataclass
class Page:
    site: str
    path: str
    html: str
    gold_words: Counter[str]
    gold_headings: list[str]
    gold_items: list[str]
    marked: bool  # the page marks its main content (<main>, role="main", one <article>)


def gold_of(html: str, selector: str) -> tuple[Counter[str], list[str], list[str]] | None:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    node = tree.css_first(selector)
    if node is None:
        return None
    for junk in node.css("script, style, noscript, template, svg, a.headerlink, button"):
        junk.decompose()
    text = node.text(deep=True, separator=" ")
    headings = [" ".join(words(h.text(deep=True))) for h in node.css("h1, h2, h3, h4, h5, h6")]
    items: list[str] = []
    for li in node.css("li"):
        parts: list[str] = []
        for child in li.iter(include_text=True):
            if child.tag in ("ul", "ol", "dl", "pre", "table"):
                break
            parts.append(child.text(deep=True, separator=" "))
        lead = words(" ".join(parts))
        if lead:
            items.append(" ".join(lead[:5]))
    return Counter(words(text)), [h for h in headings if h], items


def has_main_marker(html: str) -> bool:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    return bool(
        len(tree.css("main")) == 1 or len(tree.css("[role=main]")) == 1
        or len(tree.css("article")) == 1
    )


def collect(per_site: int) -> tuple[list[Page], list[str]]:
    pages: list[Page] = []
    missing: list[str] = []
    for site, (patterns, selector) in SITES.items():
        paths = sorted({p for pattern in patterns for p in glob.glob(pattern)})
        if not paths:
            missing.append(site)
            continue
        step = max(1, len(paths) // per_site)
        chosen = paths[::step][:per_site]
        for path in chosen:
            html = Path(path).read_text(encoding="utf-8", errors="replace")
            gold = gold_of(html, selector)
            if gold is None or sum(gold[0].values()) < 20:
                continue
            pages.append(Page(site, path, html, *gold, marked=has_main_marker(html)))
    return pages, missing


@dataclass
class Score:
    recall: list[float] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    headings: list[float] = field(default_factory=list)
    lists: list[float] = field(default_factory=list)

    def add(self, page: Page, markdown: str) -> None:
        markdown = ESCAPE.sub(r"\1", markdown)  # Markdown escapes (clone\_from) are not words
        out = Counter(words(markdown))
        common = sum((out & page.gold_words).values())
        self.recall.append(common / max(1, sum(page.gold_words.values())))
        self.precision.append(common / max(1, sum(out.values())) if out else 0.0)
        if page.gold_headings:
            found = {" ".join(words(h)) for h in HEADING_LINE.findall(markdown)}
            self.headings.append(sum(h in found for h in page.gold_headings) / len(page.gold_headings))
        if page.gold_items:
            items = [" ".join(words(i)) for i in LIST_LINE.findall(markdown)]
            hits = sum(any(i.startswith(g) for i in items) for g in page.gold_items)
            self.lists.append(hits / len(page.gold_items))

    def row(self) -> tuple[float, float, float, float, float]:
        r = statistics.fmean(self.recall) if self.recall else 0.0
        p = statistics.fmean(self.precision) if self.precision else 0.0
        f1 = 2 * r * p / (r + p) if r + p else 0.0
        h = statistics.fmean(self.headings) if self.headings else float("nan")
        li = statistics.fmean(self.lists) if self.lists else float("nan")
        return 100 * r, 100 * p, 100 * f1, 100 * h, 100 * li


def selectolax_md(html: str) -> str:
    from ragloom_loaders._html import html_to_markdown

    return html_to_markdown(html).markdown


def trafilatura_md(html: str, *, recall: bool = False) -> str:
    import trafilatura

    out = trafilatura.extract(
        html,
        output_format="markdown",
        include_formatting=True,
        include_tables=True,
        include_links=False,
        include_images=False,
        include_comments=False,
        favor_recall=recall,
        with_metadata=False,
        deduplicate=False,
    )
    return out or ""


def main_html(html: str) -> str:
    """The HTML of the element ragloom's converter takes as the page's main content (its
    ``<main>``, ``role=main``, only ``<article>``, else the body): what a general converter
    is given in the "(our main)" rows, so that they differ from ours only in the conversion."""
    from ragloom_loaders._html import _main_root
    from selectolax.lexbor import LexborHTMLParser

    root, _ = _main_root(LexborHTMLParser(html))
    return root.html or ""


def markdownify_md(html: str) -> str:
    from markdownify import markdownify

    # ATX headings ("# x", as ours); no images, links as their text (as ours)
    return markdownify(html, heading_style="ATX", strip=["a", "img"])  # type: ignore[no-any-return]


def html2text_md(html: str) -> str:
    import html2text

    converter = html2text.HTML2Text()
    converter.body_width = 0  # no rewrapping
    converter.ignore_links = True
    converter.ignore_images = True
    return converter.handle(html)  # type: ignore[no-any-return]


CONTENDERS: dict[str, tuple[Callable[[str], str], str]] = {
    "selectolax (ragloom_loaders)": (selectolax_md, "import selectolax.lexbor"),
    "trafilatura": (trafilatura_md, "import trafilatura"),
    "trafilatura favor_recall": (
        lambda html: trafilatura_md(html, recall=True),
        "import trafilatura",
    ),
    "markdownify": (markdownify_md, "import markdownify"),
    "markdownify (our main)": (lambda html: markdownify_md(main_html(html)), "import markdownify"),
    "html2text": (html2text_md, "import html2text"),
    "html2text (our main)": (lambda html: html2text_md(main_html(html)), "import html2text"),
}


def import_seconds(statement: str) -> float:
    times = []
    for _ in range(3):
        code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip()))
    return statistics.median(times)


def pkg_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def bench_html(args: argparse.Namespace) -> None:
    pages, missing = collect(args.per_site)
    total_mb = sum(len(p.html.encode("utf-8")) for p in pages) / 1e6
    print(f"python {sys.version.split()[0]}; selectolax {pkg_version('selectolax')}, "
          f"trafilatura {pkg_version('trafilatura')}, lxml {pkg_version('lxml')}, "
          f"markdownify {pkg_version('markdownify')}, beautifulsoup4 "
          f"{pkg_version('beautifulsoup4')}, html2text {pkg_version('html2text')}")
    print(f"{len(pages)} pages, {total_mb:.2f} MB of HTML, {len(set(p.site for p in pages))} sites"
          + (f"; absent here: {', '.join(missing)}" if missing else ""))
    for site in dict.fromkeys(p.site for p in pages):
        n = sum(p.site == site for p in pages)
        print(f"  {site}: {n} pages")

    names = list(CONTENDERS)
    outputs: dict[str, list[str]] = {}
    best: dict[str, float] = {name: float("inf") for name in names}
    for name in names:  # warm-up: imports and first-call costs are not timed
        CONTENDERS[name][0](pages[0].html)
    for _ in range(args.repeat):
        for name in names:
            fn = CONTENDERS[name][0]
            start = time.process_time()
            outs = [fn(p.html) for p in pages]
            best[name] = min(best[name], time.process_time() - start)
            outputs[name] = outs

    print()
    header = f"{'extractor':30} {'recall':>7} {'prec':>7} {'F1':>7} {'heads':>7} {'lists':>7} {'MB/s':>7} {'import s':>9}"
    print(header)
    print("-" * len(header))
    base = best[names[0]]
    for name in names:
        score = Score()
        for page, md in zip(pages, outputs[name], strict=True):
            score.add(page, md)
        r, p, f1, h, li = score.row()
        imp = import_seconds(CONTENDERS[name][1])
        print(f"{name:30} {r:7.1f} {p:7.1f} {f1:7.1f} {h:7.1f} {li:7.1f} "
              f"{total_mb / best[name]:7.2f} {imp:9.3f}")
    print()
    for name in names[1:]:
        print(f"speed: {names[0]} is {best[name] / base:.1f}x {name}")

    print("\nper site F1 / headings (%):")
    for site in dict.fromkeys(p.site for p in pages):
        cells = []
        for name in names:
            score = Score()
            for page, md in zip(pages, outputs[name], strict=True):
                if page.site == site:
                    score.add(page, md)
            _, _, f1, h, _ = score.row()
            cells.append(f"{f1:5.1f}/{h:5.1f}")
        print(f"  {site:28} " + "  ".join(f"{n.split()[0][:11]:>11} {c}" for n, c in zip(names, cells, strict=True)))
    for marked, label in ((True, "marked"), (False, "unmarked")):
        subset = [i for i, p in enumerate(pages) if p.marked == marked]
        if not subset:
            continue
        cells = []
        for name in names:
            score = Score()
            for i in subset:
                score.add(pages[i], outputs[name][i])
            r, p, f1, h, li = score.row()
            cells.append(f"{name.split()[0][:11]:>11} R{r:5.1f} P{p:5.1f} F{f1:5.1f}")
        how = "has a <main>, role=main or one <article>" if marked else "has none: body"
        print(f"\n{label} pages ({len(subset)}; each {how}):")
        print("  " + "  ".join(cells))
    empty = {name: sum(1 for md in outputs[name] if not md.strip()) for name in names}
    print("\npages with no output:", ", ".join(f"{k}: {v}" for k, v in empty.items()))


#: Deeply nested pages, by depth: the text of every level must come out.
DEEP_SHAPES: dict[str, Callable[[int], str]] = {
    "div": lambda n: "<html><body>" + "".join(f"<div>w{i} " for i in range(n)) + "</div>" * n,
    "span in a p": lambda n: "<p>" + "".join(f"<span>w{i} " for i in range(n)) + "</span>" * n,
    "section>p": lambda n: "<body>"
    + "".join(f"<section><p>w{i}</p>" for i in range(n))
    + "</section>" * n,
}


def bench_deep(args: argparse.Namespace) -> None:
    """One conversion per contender, shape and depth (CPU seconds); a contender slower than
    ``--deep-cap`` seconds at one depth is not run deeper. "words" is the share of the levels'
    words (``w0`` ... ``w<n-1>``) in the output."""
    names = ["selectolax (ragloom_loaders)", "markdownify", "html2text", "trafilatura"]
    depths = [int(d) for d in args.deep.split(",")]
    print(f"\ndeeply nested pages (depths {', '.join(map(str, depths))}): CPU seconds, words kept")
    print(f"{'shape':12} {'extractor':30} " + " ".join(f"{d:>16}" for d in depths))
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    for shape, make in DEEP_SHAPES.items():
        for name in names:
            fn = CONTENDERS[name][0]
            cells = []
            slow = False
            for depth in depths:
                if slow:
                    cells.append(f"{'(not run)':>16}")
                    continue
                html = make(depth)
                start = time.process_time()
                try:
                    out = fn(html)
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    took = time.process_time() - start
                    cells.append(f"{type(exc).__name__[:11]:>11} {took:4.1f}s")
                    slow = took > args.deep_cap
                    continue
                took = time.process_time() - start
                found = set(re.findall(r"\bw(\d+)\b", out))
                cells.append(f"{took:8.3f}s {100 * len(found) / depth:5.1f}%")
                slow = took > args.deep_cap
            print(f"{shape:12} {name:30} " + " ".join(cells))


#: Lists, quotes and tables nested up to the converter's limit (MAX_DEPTH = 100) around a
#: large body: depth 1 against depth 99 shows what each level costs.
BOUNDED_SHAPES: dict[str, Callable[[int, int], str]] = {
    "ul": lambda depth, n: "<body>" + "<ul><li>item " * depth
    + "".join(f"<p>para w{i}</p>" for i in range(n)) + "</li></ul>" * depth,
    "blockquote": lambda depth, n: "<body>" + "<blockquote>" * depth
    + "".join(f"<p>para w{i}</p>" for i in range(n)) + "</blockquote>" * depth,
    "table in a cell": lambda depth, n: "<body>" + "<table><tr><td>" * depth
    + "<table>" + "".join(f"<tr><td>w{i}</td><td>v</td></tr>" for i in range(n)) + "</table>"
    + "</td></tr></table>" * depth,
}


def bench_bounded(args: argparse.Namespace) -> None:
    """One conversion per contender and shape at depth 1 and 99 around ``--bounded`` rows or
    paragraphs: CPU seconds, and the output's size (nested Markdown repeats its indentation or
    ``>`` on every line, so its size grows with the depth)."""
    names = ["selectolax (ragloom_loaders)", "markdownify", "html2text"]
    n = args.bounded
    print(f"\nnested lists, quotes and tables around {n} paragraphs or rows: CPU s (output MB)")
    print(f"{'shape':16} {'extractor':30} {'depth 1':>16} {'depth 99':>16}")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    for shape, make in BOUNDED_SHAPES.items():
        for name in names:
            cells = []
            for depth in (1, 99):
                html = make(depth, n)
                start = time.process_time()
                try:
                    out = CONTENDERS[name][0](html)
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    cells.append(f"{type(exc).__name__[:16]:>16}")
                    continue
                took = time.process_time() - start
                cells.append(f"{took:6.2f}s ({len(out) / 1e6:5.2f})")
            print(f"{shape:16} {name:30} " + " ".join(cells))


def bench_pdf(args: argparse.Namespace) -> None:
    pdfs = sorted(glob.glob("/usr/share/doc/**/*.pdf", recursive=True))
    if not pdfs:
        print("\nno PDF under /usr/share/doc: PDF timing skipped")
        return
    import pypdfium2 as pdfium

    def with_pdfium(data: bytes) -> int:
        doc = pdfium.PdfDocument(data)
        n = 0
        try:
            for i in range(len(doc)):
                page = doc[i]
                textpage = page.get_textpage()
                n += len(textpage.get_text_bounded())
                textpage.close()
                page.close()
        finally:
            doc.close()
        return n

    contenders: dict[str, Callable[[bytes], int]] = {"pypdfium2": with_pdfium}
    try:
        import io

        import pypdf

        def with_pypdf(data: bytes) -> int:
            reader = pypdf.PdfReader(io.BytesIO(data))
            return sum(len(page.extract_text() or "") for page in reader.pages)

        contenders["pypdf"] = with_pypdf
    except ImportError:
        pass
    blobs = [Path(p).read_bytes() for p in pdfs]
    pages = sum(len(pdfium.PdfDocument(b)) for b in blobs)
    print(f"\nPDF: {len(pdfs)} files, {pages} pages; pypdfium2 {pkg_version('pypdfium2')}, "
          f"pypdf {pkg_version('pypdf')}")
    best = {name: float("inf") for name in contenders}
    chars: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, fn in contenders.items():
            start = time.process_time()
            chars[name] = sum(fn(b) for b in blobs)
            best[name] = min(best[name], time.process_time() - start)
    for name in contenders:
        print(f"  {name:10} {pages / best[name]:8.1f} pages/s  {chars[name]} characters")
    if "pypdf" in best:
        print(f"  pypdfium2 is {best['pypdf'] / best['pypdfium2']:.1f}x pypdf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-site", type=int, default=12)
    parser.add_argument("--pdf", action="store_true", help="also time PDF text extraction")
    parser.add_argument(
        "--deep", default="500,2000,8000,32000", help="depths of the nested pages ('' skips)"
    )
    parser.add_argument("--deep-cap", type=float, default=20.0)
    parser.add_argument(
        "--bounded", type=int, default=20000, help="rows or paragraphs inside nested lists, "
        "quotes and tables (0 skips)"
    )
    parser.add_argument("--no-pages", action="store_true", help="only the nested pages")
    args = parser.parse_args()
    if not args.no_pages:
        bench_html(args)
    if args.deep:
        bench_deep(args)
    if args.bounded:
        bench_bounded(args)
    if args.pdf:
        bench_pdf(args)


if __name__ == "__main__":
    main()
