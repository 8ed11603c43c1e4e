"""Files of a new plugin package (``ragloom new-plugin NAME --kind KIND ...``).

One working component per kind asked for, each with its entry point (the group comes from the
table of kinds, :mod:`ragloom.kinds`) and its tests: the conformance kit's contract for the
kind when the kit has one, plus tests of its own behaviour, registration included.

The files are package data under ``templates/plugin/`` (the layout of the plugin written, the
package folder named ``__PACKAGE__``), read with :mod:`importlib.resources`. Being ``.py``
files, its sources and tests are linted (``ruff check core``) and type-checked (``mypy``,
strict: the root ``pyproject.toml`` lists the folder) as code, as they run in a new plugin.

Placeholders in the texts: ``__DIST__`` (distribution name), ``__PACKAGE__`` (import
package), ``__PREFIX__`` (the prefix of registered names), ``__CORE__`` (the requirement on
ragloom), ``__RAGLOOM_FROM_URL__`` (the pip command installing ragloom from its repository's URL,
for the README: the README ships in the wheel's metadata, so it names no path of the machine
the project was made on); in ``__init__.py`` the comments ``# __NAMES__`` and ``# __MODULES__``
become the package's names and their modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

__all__ = ["DEFAULT_KINDS", "TEMPLATES", "KindTemplate", "render"]


@dataclass(frozen=True)
class KindTemplate:
    """What ``new-plugin`` writes for one kind."""

    #: Module of the component in the package (``chunker`` -> ``src/pkg/chunker.py``).
    module: str
    #: The component's class.
    cls: str
    #: The registered name after the prefix (``paragraphs`` -> ``acme-paragraphs``).
    entry: str
    #: One line for the README.
    summary: str
    source: str
    tests: str


def _read(path: str) -> str:
    """The text of ``templates/plugin/<path>`` (package data of ``ragloom.cli``)."""
    folder = resources.files("ragloom.cli") / "templates" / "plugin"
    return (folder / path).read_text(encoding="utf-8")


# -- chunker ------------------------------------------------------------------------------------

CHUNKER = _read("src/__PACKAGE__/chunker.py")

CHUNKER_TESTS = _read("tests/test_chunker.py")

# -- router -------------------------------------------------------------------------------------

ROUTER = _read("src/__PACKAGE__/router.py")

ROUTER_TESTS = _read("tests/test_router.py")

# -- decomposer ---------------------------------------------------------------------------------

DECOMPOSER = _read("src/__PACKAGE__/decomposer.py")

DECOMPOSER_TESTS = _read("tests/test_decomposer.py")

# -- filter -------------------------------------------------------------------------------------

FILTER = _read("src/__PACKAGE__/filter.py")

FILTER_TESTS = _read("tests/test_filter.py")

# -- step ---------------------------------------------------------------------------------------

STEP = _read("src/__PACKAGE__/step.py")

STEP_TESTS = _read("tests/test_step.py")

# -- cache store --------------------------------------------------------------------------------

CACHE_STORE = _read("src/__PACKAGE__/cache_store.py")

CACHE_STORE_TESTS = _read("tests/test_cache_store.py")

# -- loader -------------------------------------------------------------------------------------

LOADER = _read("src/__PACKAGE__/loader.py")

LOADER_TESTS = _read("tests/test_loader.py")

# -- command ------------------------------------------------------------------------------------

COMMAND = _read("src/__PACKAGE__/command.py")

COMMAND_TESTS = _read("tests/test_command.py")

# -- embedder -----------------------------------------------------------------------------------

EMBEDDER = _read("src/__PACKAGE__/embedder.py")

EMBEDDER_TESTS = _read("tests/test_embedder.py")

# -- store --------------------------------------------------------------------------------------

STORE = _read("src/__PACKAGE__/store.py")

STORE_TESTS = _read("tests/test_store.py")

# -- retriever ----------------------------------------------------------------------------------

RETRIEVER = _read("src/__PACKAGE__/retriever.py")

RETRIEVER_TESTS = _read("tests/test_retriever.py")


TEMPLATES: dict[str, KindTemplate] = {
    "chunker": KindTemplate(
        "chunker", "ParagraphChunker", "paragraphs",
        "packs paragraphs into chunks with exact spans", CHUNKER, CHUNKER_TESTS,
    ),
    "router": KindTemplate(
        "router", "WordRouter", "words",
        "routes a query to the route whose words it contains", ROUTER, ROUTER_TESTS,
    ),
    "decomposer": KindTemplate(
        "decomposer", "ClauseSplitter", "clauses",
        "splits a compound question into one sub-query per clause", DECOMPOSER,
        DECOMPOSER_TESTS,
    ),
    "filter": KindTemplate(
        "filter", "TagFilter", "tags", "matches items by the tags in their metadata", FILTER,
        FILTER_TESTS,
    ),
    "step": KindTemplate(
        "step", "WordCountStep", "word-count", "adds each document's word count to its metadata",
        STEP, STEP_TESTS,
    ),
    "cache_store": KindTemplate(
        "cache_store", "JsonlCacheStore", "jsonl", "keeps step outputs in one JSON Lines file",
        CACHE_STORE, CACHE_STORE_TESTS,
    ),
    "loader": KindTemplate(
        "loader", "CsvLoader", "csv", "reads CSV and TSV files into Markdown tables", LOADER,
        LOADER_TESTS,
    ),
    "embedder": KindTemplate(
        "embedder", "HashingEmbedder", "hashing",
        "embeds texts by feature hashing (no model to download)", EMBEDDER, EMBEDDER_TESTS,
    ),
    "store": KindTemplate(
        "store", "JsonStore", "json", "keeps chunks and vectors in one JSON file", STORE,
        STORE_TESTS,
    ),
    "retriever": KindTemplate(
        "retriever", "ChunksFileRetriever", "chunks-file",
        "finds passages in a chunks file by BM25", RETRIEVER, RETRIEVER_TESTS,
    ),
    "command": KindTemplate(
        "command", "chunk_stats", "stats",
        "a `ragloom` subcommand: counts the chunks of a chunks file", COMMAND, COMMAND_TESTS,
    ),
}

#: What ``new-plugin`` writes when no ``--kind`` is given.
DEFAULT_KINDS = ("chunker", "router")


PYPROJECT = _read("pyproject.toml.tmpl")

README = _read("README.md.tmpl")

INIT = _read("src/__PACKAGE__/__init__.py")


def _entry_points(kinds: Sequence[str], prefix: str, package: str) -> str:
    from ..kinds import KINDS

    out = []
    for name in kinds:
        template = TEMPLATES[name]
        group = KINDS[name].group
        out.append(
            f'\n[project.entry-points."{group}"]\n'
            f'{prefix}-{template.entry} = "{package}.{template.module}:{template.cls}"\n'
        )
    return "".join(out)


def _cls(kind: str) -> str:
    return TEMPLATES[kind].cls


def render(
    kinds: Sequence[str], *, dist: str, package: str, prefix: str, core: str
) -> dict[str, str]:
    """The files of a plugin with one component of each of ``kinds``: path -> text."""
    from .._install import install_command
    from ..kinds import KINDS

    def fill(text: str) -> str:
        return (
            text.replace("__DIST__", dist)
            .replace("__PACKAGE__", package)
            .replace("__PREFIX__", prefix)
            .replace("__CORE__", core)
            .replace("__RAGLOOM_FROM_URL__", install_command("ragloom", "cli", checkout=False))
        )

    components = "\n".join(
        f"- {KINDS[k].name.replace('_', ' ')} `{prefix}-{TEMPLATES[k].entry}` "
        f"(`{TEMPLATES[k].cls}`): {TEMPLATES[k].summary}"
        for k in kinds
    )
    names = "".join(f'    "{TEMPLATES[k].cls}",\n' for k in sorted(kinds, key=_cls)).rstrip()
    modules = "".join(
        f'    "{TEMPLATES[k].cls}": "{TEMPLATES[k].module}",\n' for k in sorted(kinds, key=_cls)
    ).rstrip()
    # a command is a click command: the plugin needs ragloom's command line (its cli extra)
    requirement = core.replace("ragloom", "ragloom[cli]", 1) if "command" in kinds else core
    files = {
        "pyproject.toml": fill(
            PYPROJECT.replace("__ENTRY_POINTS__", _entry_points(kinds, prefix, package))
            .replace("__CORE__", requirement)
        ),
        "README.md": fill(README.replace("__COMPONENTS__", components)),
        f"src/{package}/__init__.py": fill(
            INIT.replace("    # __NAMES__", names).replace("    # __MODULES__", modules)
        ),
        f"src/{package}/py.typed": "",
    }
    for kind in kinds:
        template = TEMPLATES[kind]
        files[f"src/{package}/{template.module}.py"] = fill(template.source)
        files[f"tests/test_{template.module}.py"] = fill(template.tests)
    return files
