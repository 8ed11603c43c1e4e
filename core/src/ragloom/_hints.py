"""The hint of every "unknown name" message: one measure of closeness, one wording."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["did_you_mean"]


def did_you_mean(
    word: str, choices: Iterable[str] | Mapping[str, str], *, n: int = 1, form: str = " ({})"
) -> str:
    """The hint an error message gives for a misspelt name: ``form`` around ``did you mean
    'x'?`` (``'x' or 'y'`` with ``n`` > 1), or ``""`` when no choice is close.

    Closeness is :func:`difflib.get_close_matches`' (ratio at least 0.6), the one measure of
    every such message of ragloom. With a mapping, the suggestions are the values of the keys
    that are close (each once): aliases suggest the name they stand for.

    Example: ``f"unknown key {key!r}{did_you_mean(key, KEYS)}"`` gives ``unknown key 'nmae'
    (did you mean 'name'?)``; ``form="; {}"`` gives ``...; did you mean 'name'?``.
    """
    import difflib

    names = [str(c) for c in choices]
    close = difflib.get_close_matches(str(word), names, n=n)
    if isinstance(choices, Mapping):
        close = [choices[c] for c in close]
    close = list(dict.fromkeys(close))
    if not close:
        return ""
    return form.format(f"did you mean {' or '.join(map(repr, close))}?")
