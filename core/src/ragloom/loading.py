"""The loader family: a file's bytes in, documents out.

A :class:`Loader` reads one file (its path and bytes, a :class:`SourceFile`) into zero or more
:class:`~ragloom.models.Document` objects with a ``content_format`` and metadata. Loaders are
chosen per file by suffix, then by sniffing the first bytes; a file no loader accepts is
reported, never chunked as raw bytes or markup.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .component import Component
from .errors import InvalidInputError

__all__ = ["LoadError", "Loader", "SourceFile"]


class LoadError(InvalidInputError):
    """A file is not what its loader reads (a corrupt PDF, HTML that is not HTML, ...).

    Raised by :meth:`Loader.load`; the file is reported as failed with this message and the
    run goes on.
    """


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One input file as a loader receives it.

    - ``path``: the file's path as recorded in ``metadata["source"]`` (relative to the folder
      being ingested, ``/``-separated), also used in messages;
    - ``data``: the file's bytes;
    - ``doc_id``: the id the loader gives the document it reads (a loader that reads several
      documents from one file derives theirs from it, e.g. ``f"{doc_id}#{n}"``);
    - ``metadata``: what the caller already knows (size, modification time...), to be copied
      into every document.
    """

    path: str
    data: bytes
    doc_id: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def suffix(self) -> str:
        """The lower-cased suffix with its dot (``".html"``), or ``""``."""
        name = self.path.rsplit("/", 1)[-1]
        dot = name.rfind(".")
        return name[dot:].lower() if dot > 0 else ""


class Loader(Component, ABC):
    """Reads files of some formats into documents.

    Subclasses set :attr:`suffixes` (and may override :meth:`sniff` for files whose suffix says
    nothing) and implement :meth:`load`. A loader is a component: its identity (class and
    constructor arguments) is part of the cache identity of what it reads.
    """

    #: Lower-cased suffixes, with the dot, this loader reads (``{".html", ".htm"}``).
    suffixes: ClassVar[frozenset[str]] = frozenset()
    #: Content formats of the documents it produces (for listings and routing set-ups).
    produces: ClassVar[frozenset[str]] = frozenset()

    def accepts(self, source: SourceFile) -> bool:
        """Whether this loader reads ``source``: by suffix, else by :meth:`sniff`."""
        return source.suffix in self.suffixes or self.sniff(source.data[:4096])

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` (a file's first bytes) is in a format this loader reads.

        Used only for files whose suffix no loader claims. Default: ``False``.
        """
        return False

    @abstractmethod
    def load(self, source: SourceFile) -> Sequence[Any]:
        """The documents in ``source`` (a list of :class:`~ragloom.models.Document`).

        Raises:
            LoadError: the bytes are not in a format this loader reads, or are damaged.
        """
