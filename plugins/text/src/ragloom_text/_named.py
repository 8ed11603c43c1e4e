"""The base of named length functions (see :mod:`ragloom_text.lengths`)."""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["NamedLength"]


class NamedLength:
    """A length function registered by name under the entry-point group ``ragloom.lengths``.

    Instances are callables ``str -> int``. :meth:`config` returns the parameters that rebuild
    an equal instance (``type(x)(**x.config())``): with the registered name, that is what a
    chunker writes for it in its own ``config()``.
    """

    #: The name it is registered under (what pipeline files write).
    name: ClassVar[str] = ""

    def __call__(self, text: str, /) -> int:
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        """The parameters that rebuild this length function (plain JSON-able data)."""
        return {}

    def fingerprint(self) -> str | None:
        """What else shapes the counts and is not in :meth:`config` (e.g. a digest of the
        tokenizer file it loaded), for cache identities; ``None`` when nothing does."""
        return None

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, NamedLength)
        return self.config() == other.config() and self.fingerprint() == other.fingerprint()

    def __hash__(self) -> int:
        return hash((type(self), self.fingerprint()))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({params})"
