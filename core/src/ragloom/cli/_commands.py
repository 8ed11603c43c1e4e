"""The built-in commands by name, without importing click or any command's module (the plugin
listing reads it to report a plugin command that clashes with a built-in one)."""

from __future__ import annotations

__all__ = ["BUILTIN_COMMANDS"]

#: name -> (module, attribute, one-line help). Modules are imported only when the command runs.
BUILTIN_COMMANDS: dict[str, tuple[str, str, str]] = {
    "ask": (
        "ragloom.cli._ask", "ask",
        "Answer a question from the index, citing the passages' exact spans.",
    ),
    "ingest": (
        "ragloom.cli._ingest", "ingest",
        "Load, chunk (and embed) files into a JSONL file and/or an index.",
    ),
    "plan": ("ragloom.cli._plan", "plan", "Decompose questions and route each sub-query."),
    "run": ("ragloom.cli._run", "run", "Run a pipeline file on paths or questions."),
    "plugins": ("ragloom.cli._plugins", "plugins", "List installed plugins and their status."),
    "cache": ("ragloom.cli._cache", "cache", "Show or clear the step cache."),
    "search": (
        "ragloom.cli._search", "search",
        "Answer questions from the index: plan, retrieve per sub-query, fuse.",
    ),
    "index": ("ragloom.cli._index", "index", "Show or clear the index."),
    "serve": (
        "ragloom.cli._serve", "serve",
        "Answer searches over HTTP (API and a search page; needs ragloom[serve]).",
    ),
    "eval": (
        "ragloom.cli._eval", "eval_command",
        "Score search on labelled questions; compare set-ups and indexes.",
    ),
    "new-plugin": (
        "ragloom.cli.new_plugin",
        "main",
        "Create a new plugin project from the template.",
    ),
}
