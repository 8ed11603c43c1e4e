"""The built-in loaders (text, Markdown, reStructuredText, code, JSON/Docling), the picker
(``LoaderSet``) and ``read_source_file``, on real files from the standard library, the
installed distributions, the shared data and the repository's sample documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from ragloom.errors import ConfigurationError
from ragloom.loaders_builtin import (
    CodeLoader,
    JsonLoader,
    LoaderSet,
    MarkdownLoader,
    NoLoaderError,
    RstLoader,
    TextLoader,
    builtin_loaders,
    decode_text,
    read_source_file,
    sniff_format,
)
from ragloom.loading import Loader, LoadError, SourceFile
from ragloom.models import Document
from ragloom.plugins import install_hint
from ragloom.testing import LoaderContract

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.real_files import TEST_DATA, installed_files, stdlib, stdlib_file  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

SAMPLE_DOCS = REPO / "examples" / "sample-docs"


def source_of(path: Path, name: str | None = None) -> SourceFile:
    shown = name or path.name
    return SourceFile(shown, path.read_bytes(), shown)


def readable_text(path: Path) -> bool:
    data = path.read_bytes()
    if b"\0" in data:
        return False
    try:
        return bool(data.decode("utf-8").strip())
    except UnicodeDecodeError:
        return False


def refused_as_text(suffix: str) -> list[SourceFile]:
    """Real bytes every UTF-8 text loader refuses, named with ``suffix``."""
    icon = stdlib_file("idlelib/Icons/idle_48.png") or stdlib_file("idlelib/Icons/idle.ico")
    prose = (SAMPLE_DOCS / "release-notes.txt").read_text(encoding="utf-8")
    bad = [
        SourceFile(f"latin1{suffix}", "Café crème, déjà vu.\n".encode("latin-1"), "latin1"),
        SourceFile(f"blank{suffix}", b" \n\t\r\n", "blank"),
        SourceFile(f"utf16{suffix}", prose.encode("utf-16"), "utf16"),
    ]
    if icon is not None:
        bad.append(SourceFile(f"icon{suffix}", icon.read_bytes(), "icon"))
    return bad


def real_sources(paths: Sequence[Path], *also: Path) -> list[SourceFile]:
    """Sources of readable real files (distinct names: a sample's path names it in messages)."""
    out = []
    for n, path in enumerate([*paths, *also]):
        if readable_text(path):
            out.append(source_of(path, f"{n}-{path.parent.name}/{path.name}"))
    return out


# -- the contract over every built-in loader ---------------------------------------------------


class TestTextLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return TextLoader()

    @pytest.fixture
    def samples(self) -> list[SourceFile]:
        return real_sources(installed_files(".txt", limit=5), SAMPLE_DOCS / "release-notes.txt")

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        return refused_as_text(".txt")


class TestMarkdownLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return MarkdownLoader()

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        return refused_as_text(".md")

    @pytest.fixture
    def samples(self) -> list[SourceFile]:
        return real_sources(
            installed_files(".md", limit=5),
            SAMPLE_DOCS / "guides" / "caching.md",
            REPO / "README.md",
        )


class TestRstLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return RstLoader()

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        return refused_as_text(".rst")

    @pytest.fixture
    def samples(self) -> list[SourceFile]:
        return real_sources(installed_files(".rst", limit=4), SAMPLE_DOCS / "plugins.rst")


class TestCodeLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return CodeLoader()

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        return refused_as_text(".py")

    @pytest.fixture
    def samples(self) -> list[SourceFile]:
        std = [stdlib() / name for name in ("json/__init__.py", "textwrap.py", "shlex.py")]
        return real_sources(
            [p for p in std if p.is_file()],
            *installed_files(".h", limit=2),
            *installed_files(".js", limit=2),
            SAMPLE_DOCS / "wordcount.py",
        )


class TestJsonLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> Loader:
        return JsonLoader()

    @pytest.fixture
    def samples(self) -> list[SourceFile]:
        return real_sources(
            installed_files(".json", limit=3),
            *sorted((TEST_DATA / "docling").glob("*.json"))[:2],
            SAMPLE_DOCS / "architecture-overview.json",
        )

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        real = (SAMPLE_DOCS / "architecture-overview.json").read_bytes()
        return [
            *refused_as_text(".json"),
            SourceFile("cut.json", real[: len(real) // 2], "cut"),
            SourceFile("prose.json", b"this is not JSON\n", "prose"),
            SourceFile("nan.json", b'{"a": 1,}', "nan"),
        ]


# -- formats, metadata and refusals ------------------------------------------------------------


def test_each_builtin_reads_its_format_and_records_metadata() -> None:
    loaders = LoaderSet.builtin()
    cases = {
        SAMPLE_DOCS / "release-notes.txt": ("text", None),
        SAMPLE_DOCS / "guides" / "caching.md": ("markdown", None),
        SAMPLE_DOCS / "plugins.rst": ("rst", None),
        SAMPLE_DOCS / "wordcount.py": ("code", "python"),
        SAMPLE_DOCS / "architecture-overview.json": ("docling", None),
    }
    for path, (fmt, language) in cases.items():
        source = SourceFile(path.name, path.read_bytes(), path.name, {"size": 1})
        [doc] = loaders.load(source)
        assert doc.content_format == fmt, path
        assert doc.id == path.name
        assert doc.metadata["source"] == path.name and doc.metadata["size"] == 1
        assert doc.metadata.get("language") == language
        assert doc.content == path.read_text(encoding="utf-8")


def test_docling_is_recognised_by_content_and_plain_json_is_json() -> None:
    real = (SAMPLE_DOCS / "architecture-overview.json").read_bytes()
    [doc] = JsonLoader().load(SourceFile("renamed.json", real, "d"))
    assert doc.content_format == "docling"
    assert doc.metadata["title"] == json.loads(real)["name"]
    plain = json.dumps({"schema_name": "Something", "name": "x"}).encode()
    [other] = JsonLoader().load(SourceFile("plain.json", plain, "p"))
    assert other.content_format == "json" and "title" not in other.metadata
    listing = json.dumps([{"schema_name": "DoclingDocument"}]).encode()  # not at the top level
    assert JsonLoader().load(SourceFile("list.json", listing, "l"))[0].content_format == "json"


def test_invalid_json_names_line_and_column() -> None:
    with pytest.raises(LoadError, match=r"bad\.json: not valid JSON: .*\(line 2, column 8\)"):
        JsonLoader().load(SourceFile("bad.json", b'{\n  "a": ,\n}', "b"))


def test_decode_text_rules() -> None:
    prose = (SAMPLE_DOCS / "release-notes.txt").read_text(encoding="utf-8")
    with_bom = SourceFile("bom.txt", b"\xef\xbb\xbf" + prose.encode(), "bom")
    assert decode_text(with_bom) == prose
    with pytest.raises(LoadError, match=r"^e\.txt: empty file$"):
        decode_text(SourceFile("e.txt", b"", "e"))
    with pytest.raises(LoadError, match=r"^w\.txt: file holds only whitespace$"):
        decode_text(SourceFile("w.txt", b"\n \t\n", "w"))
    with pytest.raises(LoadError, match=r"^n\.txt: binary file \(NUL byte at offset 5\)$"):
        decode_text(SourceFile("n.txt", b"hello\0world", "n"))
    with pytest.raises(LoadError, match=r"^l\.txt: not valid UTF-8: invalid .* at byte 3$"):
        decode_text(SourceFile("l.txt", "Caf\xe9 au lait".encode("latin-1"), "l"))
    late_nul = (prose * 10).encode() + b"\0"  # past the probe: text with a control character
    assert len(late_nul) > 8192
    assert decode_text(SourceFile("x.txt", late_nul, "x")) == prose * 10 + "\0"


def test_code_language_from_suffix_and_shebang() -> None:
    loader = CodeLoader()
    [doc] = loader.load(SourceFile("lib/x.RS", b"fn main() {}\n", "x"))
    assert doc.metadata["language"] == "rust"
    for line, language in [
        (b"#!/usr/bin/env python3\n", "python"),
        (b"#!/bin/sh\n", "bash"),
        (b"#!/usr/bin/env -S node --no-warnings\n", "javascript"),
        (b"#!/usr/bin/python3.11\n", "python"),
    ]:
        assert loader.sniff(line + b"x = 1\n"), line
        [doc] = loader.load(SourceFile("script", line + b"x = 1\n", "s"))
        assert doc.metadata["language"] == language, line
    assert not loader.sniff(b"#!/usr/bin/make -f\n")
    assert not loader.sniff(b"# a heading\n")


# -- the picker ------------------------------------------------------------------------------


def picked(loaders: LoaderSet, path: str, data: bytes) -> str:
    return loaders.name_of(loaders.pick(SourceFile(path, data, path)))


def test_pick_by_suffix_then_sniffing() -> None:
    loaders = LoaderSet.builtin()
    assert picked(loaders, "a/b.MD", b"") == "markdown"
    assert picked(loaders, "notes.txt", b"\x00binary") == "text"  # the suffix decides
    assert picked(loaders, "data.csv", b"a,b\n1,2\n") == "text"
    assert picked(loaders, "Makefile", b"all:\n\techo hi\n") == "text"
    assert picked(loaders, "run", b"#!/usr/bin/env bash\necho\n") == "code"
    assert picked(loaders, ".bashrc", b"export A=1\n") == "text"
    assert picked(loaders, "empty.cfg", b"") == "text"  # then reported: empty file
    with pytest.raises(LoadError, match="empty file"):
        loaders.load(SourceFile("empty.cfg", b"", "e"))


@pytest.mark.parametrize(
    ("path", "data", "what"),
    [
        ("manual.pdf", b"%PDF-1.7\n", "PDF"),
        ("letter.docx", b"PK\x03\x04", "DOCX"),
        ("faq.html", b"<!DOCTYPE html><html><body><p>Hi</p></body></html>", "HTML"),
        ("page.htm", b"<p>hi</p>", "HTML"),
        ("page.XHTML", b"<html/>", "HTML"),
    ],
)
def test_plugin_formats_are_reported_with_the_install_hint(
    path: str, data: bytes, what: str
) -> None:
    loaders = LoaderSet.builtin()
    with pytest.raises(NoLoaderError) as caught:
        loaders.load(SourceFile(path, data, path))
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert f"to read {what}, install ragloom-loaders" in message
    assert caught.value.hint == install_hint("ragloom-loaders")


def test_html_without_a_suffix_is_not_read_as_text() -> None:
    page = (SAMPLE_DOCS / "faq.html").read_bytes()
    assert sniff_format(page) == "HTML"
    loaders = LoaderSet.builtin()
    with pytest.raises(NoLoaderError, match="looks like HTML.*to read HTML, install ragloom-"):
        loaders.pick(SourceFile("faq", page, "faq"))
    xhtml = b'\xef\xbb\xbf<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE html>\n<html/>'
    assert sniff_format(xhtml) == "HTML"
    with pytest.raises(NoLoaderError, match="looks like PDF"):
        loaders.pick(SourceFile("scan", b"%PDF-1.4\n%%EOF\n", "scan"))


def test_unreadable_files_say_why() -> None:
    loaders = LoaderSet.builtin()
    icon = stdlib_file("idlelib/Icons/idle_48.png")
    png = icon.read_bytes() if icon is not None else b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"
    binary = r"^icon\.png: binary file \(NUL byte at offset \d+\); no installed loader reads \.png"
    with pytest.raises(NoLoaderError, match=binary):
        loaders.pick(SourceFile("icon.png", png, "icon"))
    legacy = r"^legacy: not UTF-8 text; no installed loader reads files without a suffix$"
    with pytest.raises(NoLoaderError, match=legacy):
        loaders.pick(SourceFile("legacy", "déjà".encode("latin-1") * 10, "legacy"))


class _FakeLoader(Loader):
    def __init__(self, tag: str = "fake") -> None:
        self.tag = tag

    def config(self) -> dict[str, str]:
        return {"tag": self.tag}

    def load(self, source: SourceFile) -> list[Document]:
        return [Document(id=source.doc_id, content=self.tag, content_format="text")]


class _TxtPlugin(_FakeLoader):
    suffixes = frozenset({".txt", ".xyz"})


class _XyzPlugin(_FakeLoader):
    suffixes = frozenset({".xyz"})

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"XYZ")


class _Crashes(_FakeLoader):
    suffixes = frozenset({".boom"})

    def load(self, source: SourceFile) -> list[Document]:
        raise KeyError("word/document.xml")


def test_a_plugin_takes_a_suffix_over_a_builtin() -> None:
    loaders = LoaderSet({**builtin_loaders(), "txtplug": _TxtPlugin()})
    assert picked(loaders, "a.txt", b"x") == "txtplug"
    assert picked(loaders, "a.md", b"x") == "markdown"


def test_two_plugins_on_one_suffix_need_a_choice() -> None:
    both = {**builtin_loaders(), "one": _TxtPlugin(), "two": _XyzPlugin()}
    clash = r"'one', 'two' all read \.xyz files; choose one with prefer="
    with pytest.raises(ConfigurationError, match=clash):
        LoaderSet(both)
    loaders = LoaderSet(both, prefer={".XYZ": "two"})
    assert picked(loaders, "a.xyz", b"") == "two"
    assert picked(loaders, "a.txt", b"") == "one"
    direct = LoaderSet(builtin_loaders(), prefer={".log": "text", ".MD": "text"})
    assert picked(direct, "x.log", b"\x00") == "text" and picked(direct, "x.md", b"") == "text"
    with pytest.raises(ConfigurationError, match="no loader 'three'"):
        LoaderSet(both, prefer={".xyz": "three"})


def test_plugin_sniffers_come_before_plain_text() -> None:
    loaders = LoaderSet({**builtin_loaders(), "xyz": _XyzPlugin()})
    assert picked(loaders, "unsuffixed", b"XYZ and then text") == "xyz"
    assert picked(loaders, "unsuffixed", b"plain text") == "text"


def test_load_reports_a_crashing_loader_as_a_load_error() -> None:
    loaders = LoaderSet({"boom": _Crashes()})
    failed = r"^x\.boom: the 'boom' loader failed: KeyError: 'word/document\.xml'$"
    with pytest.raises(LoadError, match=failed) as caught:
        loaders.load(SourceFile("x.boom", b"data", "x"))
    assert isinstance(caught.value.__cause__, KeyError)


def test_loader_set_rejects_what_is_not_a_loader_and_names_from_iterables() -> None:
    with pytest.raises(ConfigurationError, match="'x' is a str, not a Loader"):
        LoaderSet({"x": "nope"})  # type: ignore[dict-item]
    named = LoaderSet([TextLoader(), MarkdownLoader()])
    assert sorted(named.loaders) == ["MarkdownLoader", "TextLoader"]
    with pytest.raises(ConfigurationError, match="both named"):
        LoaderSet([TextLoader(), TextLoader()])


def test_from_registry_finds_the_builtin_entry_points() -> None:
    loaders = LoaderSet.from_registry()
    assert {"text", "markdown", "rst", "code", "json"} <= set(loaders.loaders)
    assert isinstance(loaders.loaders["code"], CodeLoader)
    assert loaders.suffixes[".py"] == "code"
    assert picked(loaders, "x.py", b"") == "code"


def test_loader_set_and_picking_import_no_pydantic() -> None:
    code = (
        "import sys\n"
        "from ragloom.loaders_builtin import LoaderSet\n"
        "from ragloom.loading import SourceFile\n"
        "s = LoaderSet.builtin()\n"
        "s.pick(SourceFile('a.md', b'# x', 'a'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'anyio')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- reading files ---------------------------------------------------------------------------


def test_read_source_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes((SAMPLE_DOCS / "guides" / "caching.md").read_bytes())
    source = read_source_file(path, doc_id="notes.md", name="docs/notes.md", max_bytes=1 << 20)
    assert source.path == "docs/notes.md" and source.doc_id == "notes.md"
    assert source.data == path.read_bytes()
    assert source.metadata == {"size": len(source.data)}
    assert source.suffix == ".md"
    with pytest.raises(LoadError, match=r"^docs/notes\.md: file too large: \d+ bytes, limit 10$"):
        read_source_file(path, doc_id="n", name="docs/notes.md", max_bytes=10)
    with pytest.raises(LoadError, match="no such file"):
        read_source_file(tmp_path / "missing.txt", doc_id="m", max_bytes=10)
    with pytest.raises(LoadError, match=r"not a regular file \(a folder\)"):
        read_source_file(tmp_path, doc_id="d", max_bytes=10)
    extra = read_source_file(path, doc_id="n", max_bytes=1 << 20, metadata={"tenant": "acme"})
    assert extra.metadata == {"tenant": "acme", "size": len(extra.data)}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(LoadError, match=r"not a regular file \(a FIFO\)"):
        read_source_file(fifo, doc_id="pipe", max_bytes=10)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files without permission"
)
def test_permission_denied(tmp_path: Path) -> None:
    locked = tmp_path / "secret.txt"
    locked.write_text("secret\n", encoding="utf-8")
    locked.chmod(0)
    try:
        with pytest.raises(LoadError, match="permission denied"):
            read_source_file(locked, doc_id="s", max_bytes=100)
    finally:
        locked.chmod(0o600)


def test_the_ingest_failure_reasons_survive_the_move(tmp_path: Path) -> None:
    """Each file ``ragloom ingest`` refuses today is refused through read_source_file and
    LoaderSet.load with the same words in its reason, and the file named first."""
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "good.md").write_text("# Fine\n\nThis one is fine.\n", encoding="utf-8")
    (root / "binary.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    (root / "empty.txt").write_bytes(b"")
    (root / "blank.md").write_text("  \n\n\t\n", encoding="utf-8")
    (root / "big.txt").write_text("word " * 400, encoding="utf-8")
    (root / "dangling.md").symlink_to(root / "missing-target.md")
    expected = {
        "binary.bin": "binary file",
        "latin1.txt": "not valid UTF-8",
        "empty.txt": "empty file",
        "blank.md": "only whitespace",
        "big.txt": "too large",
        "dangling.md": "no such file",
    }
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe.txt")
        expected["pipe.txt"] = "FIFO"
    loaders = LoaderSet.builtin()
    reasons: dict[str, str] = {}
    loaded = []
    for path in sorted(root.iterdir()):
        try:
            source = read_source_file(path, doc_id=path.name, name=path.name, max_bytes=1000)
            loaded.extend(loaders.load(source))
        except LoadError as exc:
            reasons[path.name] = str(exc)
    assert [d.id for d in loaded] == ["good.md"]
    assert set(reasons) == set(expected)
    for name, words in expected.items():
        assert reasons[name].startswith(f"{name}: ") and words in reasons[name], reasons[name]
