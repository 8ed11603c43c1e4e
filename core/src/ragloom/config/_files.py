"""Reading data files (TOML, YAML, JSON) chosen by suffix, with errors that name the file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError

__all__ = ["read_data_file"]

_FORMATS = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".json": "json"}


def read_data_file(
    path: str | os.PathLike[str], *, what: str, default_format: str | None = None
) -> Any:
    """The data in a ``.toml``, ``.yaml``/``.yml`` or ``.json`` file.

    ``what`` names the file's role in messages (``"pipeline"``, ``"routes"``). A file with
    another suffix is read as ``default_format`` (``"json"``, ``"yaml"`` or ``"toml"``), or
    refused when that is ``None``. Every failure is a ``ConfigurationError`` naming the file.
    """
    file = Path(path)
    fmt = _FORMATS.get(file.suffix.lower(), default_format)
    if fmt is None:
        raise ConfigurationError(
            f"{file}: unknown {what} file type {file.suffix!r}; use .toml, .yaml, .yml or .json"
        )
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read {what} file {file}: {exc.strerror or exc}"
        ) from None
    try:
        if fmt == "toml":
            import tomllib

            return tomllib.loads(text)
        if fmt == "yaml":
            import yaml

            return yaml.safe_load(text)
        return json.loads(text)
    except Exception as exc:  # noqa: BLE001 - three parsers, one message
        raise ConfigurationError(
            f"{file}: cannot parse {what}: not valid {fmt.upper()}: {exc}"
        ) from None
