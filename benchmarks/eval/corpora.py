"""Build the evaluation corpora from Debian documentation packages (the documents are not
shipped; the questions are).

    apt-get install -y git-doc sqlite3-doc debian-handbook apache2-doc libssl-doc openssl groff
    python benchmarks/eval/corpora.py --out /tmp/ragloom-eval        # every corpus
    python benchmarks/eval/corpora.py --out /tmp/ragloom-eval git     # one

Each corpus is a folder of the package's HTML pages, copied with their paths relative to the
package's documentation folder (so a question's ``expected`` documents name the same paths on
every machine). A corpus of manual pages (``openssl``) is rendered to HTML with groff
(``groff -man -Thtml``), one page per file the packages ship (the names that only point at
another page, symbolic links and ``.so`` stubs, left out), named ``manN/NAME.html``. The recipe
below names the packages, the version the questions were written against, and the file filter.
A different installed version is reported, not refused: pages may have moved, and
``ragloom eval`` then lists expected documents the index lacks.
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Recipe:
    package: str
    version: str
    root: str
    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    #: ``"man"``: manual pages (gzipped troff), rendered to HTML; else the files are copied.
    render: str | None = None
    #: Further packages the pages come from (checked installed, versions not compared).
    also: tuple[str, ...] = ()


RECIPES = {
    # git's manual pages, guides and technical notes (about 240 pages).
    "git": Recipe("git-doc", "1:2.39.5-0+deb12u3", "/usr/share/doc/git-doc", ("*.html",)),
    # SQLite's documentation without its 225 release notes (about 540 pages: SQL syntax,
    # the C API reference, file format, extensions).
    "sqlite": Recipe(
        "sqlite3-doc", "3.40.1-2+deb12u2", "/usr/share/doc/sqlite3", ("*.html",),
        ("releaselog/*",),
    ),
    # The Apache HTTP Server 2.4 manual, English only (about 240 pages: modules and their
    # directives, how-tos, guides; the other languages left out).
    "apache": Recipe(
        "apache2-doc", "2.4.71-1~deb12u1", "/usr/share/doc/apache2-doc/manual/en", ("*.html",),
    ),
    # The Debian Administrator's Handbook, English (about 125 long chapter sections).
    "debian-handbook": Recipe(
        "debian-handbook", "11.20220922", "/usr/share/doc/debian-handbook/html/en-US",
        ("*.html",), ("Common_Content/*",),
    ),
    # OpenSSL 3.0's manual pages (about 800: the openssl commands and the concepts from the
    # openssl package, sections 1 and 7; the C library's functions from libssl-doc, section 3),
    # rendered to HTML. Added in December 2026 for a two-collection set nobody tuned on.
    "openssl": Recipe(
        "libssl-doc", "3.0.22-1~deb12u2", "/usr/share/man",
        ("man1/*.1ssl.gz", "man7/*.7ssl.gz", "man3/*.3ssl.gz"), render="man",
        also=("openssl", "groff"),
    ),
}


def installed_version(package: str) -> str | None:
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
        check=False,
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def build(name: str, out: Path) -> int:
    recipe = RECIPES[name]
    version = installed_version(recipe.package)
    if version is None:
        sys.exit(f"{recipe.package} is not installed: apt-get install -y {recipe.package}")
    if version != recipe.version:
        print(f"note: {recipe.package} {version} installed; the questions were written "
              f"against {recipe.version}", file=sys.stderr)
    for package in recipe.also:
        if installed_version(package) is None:
            sys.exit(f"{package} is not installed: apt-get install -y {package}")
    root = Path(recipe.root)
    target = out / name
    if target.exists():
        shutil.rmtree(target)
    count = 0
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or not any(fnmatch.fnmatch(rel, p) for p in recipe.include):
            continue
        if any(fnmatch.fnmatch(rel, p) for p in recipe.exclude):
            continue
        if path.is_symlink():
            continue  # another name of a page copied under its own
        if recipe.render == "man":
            count += _render_man(path, target / _man_name(rel))
            continue
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        count += 1
    print(f"{name}: {count} pages from {recipe.package} {version} -> {target}")
    return count


def _man_name(rel: str) -> str:
    """``man1/openssl-req.1ssl.gz`` -> ``man1/openssl-req.html``."""
    folder, _, file = rel.rpartition("/")
    stem = file.removesuffix(".gz").rsplit(".", 1)[0]
    return f"{folder}/{stem}.html"


def _render_man(path: Path, dest: Path) -> int:
    """Render one gzipped manual page to HTML at ``dest`` (1), or nothing for a page that
    only points at another one (``.so``: 0)."""
    source = gzip.decompress(path.read_bytes())
    if source.lstrip().startswith(b".so "):
        return 0
    done = subprocess.run(
        ["groff", "-man", "-Thtml", "-P", "-l"], input=source, capture_output=True, check=False
    )
    if done.returncode != 0 or not done.stdout:
        sys.exit(f"groff could not render {path}: {done.stderr.decode(errors='replace')}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(done.stdout)
    return 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"corpora: {', '.join(RECIPES)}")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(RECIPES))
    if unknown:
        parser.error(f"unknown corpus {unknown[0]!r}: choose from {', '.join(RECIPES)}")
    for name in args.names or list(RECIPES):
        build(name, args.out)


if __name__ == "__main__":
    main()
