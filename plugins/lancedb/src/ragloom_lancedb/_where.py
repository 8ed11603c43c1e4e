"""Metadata conditions as exact set membership over one list column.

Every chunk gets a list of *tokens*, one per (key, value) of its metadata where a value is a
scalar or an element of a list value. A ``where`` condition ``{key: options}`` holds when the
chunk's tokens share at least one token with the options' tokens; all keys must hold. The
tokens spell values so that two tokens are equal exactly when :func:`ragloom.stores.matches_where`
calls the values equal: numbers equal across ``int`` and ``float`` (``1 == 1.0``), booleans
apart from numbers at the compared level, ``NaN`` equal to nothing, nested lists and mappings
by Python equality of their JSON form (where ``True == 1`` again, as in Python).

Metadata is stored as JSON, so conditions are evaluated against the metadata as JSON gives it
back: a tuple in stored metadata is a list, and a nested tuple or set in a condition (never
equal to a JSON list) matches nothing.

Pure module: no LanceDB, no ragloom imports.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["condition_sql", "metadata_tokens", "sql_string"]


class _NoToken(Exception):
    """The value equals no value JSON metadata can hold (NaN inside, a set, a tuple, ...)."""


def _number(value: int | float) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            raise _NoToken
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value.is_integer():
            return str(int(value))
        return repr(value)
    return str(value)


def _nested(value: Any, stored: bool) -> Any:
    """``value`` as canonical JSON data, compared by Python equality below the top level."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return int(value)  # nested, Python says True == 1
    if isinstance(value, float):
        _number(value)  # NaN equals nothing
        return int(value) if value.is_integer() else value  # 1.0 == 1
    if isinstance(value, int):
        return value
    if isinstance(value, list) or (stored and isinstance(value, tuple)):
        return [_nested(v, stored) for v in value]
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            if not stored:
                raise _NoToken  # JSON keys are strings: such a mapping equals no stored one
            return {_json_key(k): _nested(v, stored) for k, v in value.items()}
        return {k: _nested(v, stored) for k, v in value.items()}
    raise _NoToken


def _json_key(key: Any) -> str:
    # What json.dumps makes of a non-string key.
    return key if isinstance(key, str) else json.dumps(key)


def _value_token(key: str, value: Any, stored: bool) -> str:
    if value is None:
        spelled = "z"
    elif isinstance(value, bool):
        spelled = "b1" if value else "b0"
    elif isinstance(value, int | float):
        spelled = "n" + _number(value)
    elif isinstance(value, str):
        spelled = "s" + value
    else:
        nested = _nested(value, stored)
        spelled = "j" + json.dumps(
            nested, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
    return f"{len(key)}:{key}={spelled}"


def metadata_tokens(metadata: Mapping[str, Any]) -> list[str]:
    """The tokens of stored chunk metadata (its JSON form: tuples are lists)."""
    tokens: list[str] = []
    for key, value in metadata.items():
        values = value if isinstance(value, list | tuple) else (value,)
        for item in values:
            try:
                tokens.append(_value_token(key, item, stored=True))
            except _NoToken:
                continue
    return tokens


def condition_tokens(key: str, wanted: Any) -> list[str]:
    """The tokens any one of which satisfies ``{key: wanted}``."""
    options = list(wanted) if isinstance(wanted, list | tuple | set | frozenset) else [wanted]
    tokens: list[str] = []
    for option in options:
        try:
            tokens.append(_value_token(key, option, stored=False))
        except _NoToken:
            continue
    return tokens


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def condition_sql(where: Mapping[str, Any] | None, column: str) -> str | None:
    """A SQL filter over the token ``column`` meaning ``where`` (``None``: no condition)."""
    if not where:
        return None
    clauses: list[str] = []
    for key, wanted in where.items():
        if not isinstance(key, str):
            return "FALSE"  # metadata keys are strings
        tokens = condition_tokens(key, wanted)
        if not tokens:
            return "FALSE"
        listed = ", ".join(sql_string(t) for t in dict.fromkeys(tokens))
        clauses.append(f"array_has_any({column}, [{listed}])")
    return " AND ".join(clauses)
