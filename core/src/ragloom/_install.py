"""How to install ragloom's own distributions: the one wording of every install hint.

ragloom and its plugins are not published on a package index, so ``pip install ragloom-text``
finds nothing (or something else). Every message that tells a user to install one of them says
the same two ways, both with plain pip:

- from the root of a checkout of ragloom's repository: ``pip install ./plugins/text`` (the core
  is ``./core``);
- from the repository itself, with pip's VCS form:
  ``pip install "ragloom-text @ git+URL#subdirectory=plugins/text"``.

The repository's URL is read, the first time a hint is made, from how the installed ``ragloom``
got here: a VCS install records its URL and commit (the hint then pins that commit, so the
plugin matches the core), else the ``Repository`` (or ``Source``) URL of its project metadata;
without either the hint shows :data:`UNKNOWN_REPOSITORY` (a placeholder) in its place: add the
URL to ``[project.urls]`` of ``core/pyproject.toml`` and every hint names it.

This module imports nothing of ragloom, and reads metadata only when a hint is asked for.
"""

from __future__ import annotations

import functools

__all__ = ["UNKNOWN_REPOSITORY", "install_command", "install_hint", "repository_url"]

#: What a hint shows where the repository's URL goes when no installed metadata names it.
UNKNOWN_REPOSITORY = "git+<ragloom repository URL>"

#: Project URL labels that name the repository, in order of preference.
_URL_LABELS = ("repository", "source", "source code", "code", "homepage")


def _folder(dist: str) -> str:
    """The folder of a first-party distribution in the repository (``core``, ``plugins/text``)."""
    if dist == "ragloom":
        return "core"
    return "plugins/" + dist.removeprefix("ragloom-")


@functools.cache
def repository_url() -> str | None:
    """``git+`` URL of ragloom's repository (``git+https://host/owner/ragloom@COMMIT`` after a
    VCS install), or ``None`` when no installed metadata names one."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("ragloom")
    except PackageNotFoundError:
        return None
    try:
        record = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        record = {}
    vcs = record.get("vcs_info") if isinstance(record, dict) else None
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and record.get("url"):
        commit = vcs.get("commit_id") or vcs.get("requested_revision")
        return f"git+{record['url']}" + (f"@{commit}" if commit else "")
    urls: dict[str, str] = {}
    for entry in dist.metadata.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        urls.setdefault(label.strip().lower(), url.strip())
    for label in _URL_LABELS:
        if urls.get(label):
            return "git+" + urls[label].removeprefix("git+")
    return None


def install_command(dist: str, extra: str | None = None, *, checkout: bool = True) -> str:
    """The pip command installing ``dist`` (``ragloom``, ``ragloom-text``...) with ``extra``:
    from a checkout's root (``checkout=True``), else from the repository's URL."""
    folder = _folder(dist)
    extras = f"[{extra}]" if extra else ""
    if checkout:
        target = f"./{folder}{extras}"
        return f'pip install "{target}"' if extras else f"pip install {target}"
    url = repository_url() or UNKNOWN_REPOSITORY
    return f'pip install "{dist}{extras} @ {url}#subdirectory={folder}"'


def install_hint(dist: str, extra: str | None = None) -> str:
    """``install DIST[EXTRA] (...)``: both ways to install one of ragloom's own distributions,
    worded the same in every message (it starts in lower case, to sit inside a sentence)."""
    extras = f"[{extra}]" if extra else ""
    return (
        f"install {dist}{extras} (ragloom is not on a package index: "
        f"{install_command(dist, extra)} from the root of a ragloom checkout, or "
        f"{install_command(dist, extra, checkout=False)})"
    )
