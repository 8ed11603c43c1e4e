"""A word-count step: adds each document's number of words to its metadata."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ragloom import Document, ExecutionContext, PipelineStep
from ragloom.errors import InvalidInputError

_WORD = re.compile(r"\w+")


class WordCountStep(PipelineStep[Document]):
    """Adds ``metadata[key]``: the number of words of each document (or chunk). The content
    is unchanged; outputs are cached like any step's."""

    step_id = "__DIST__/word-count"
    input_type = Document

    def __init__(self, key: str = "words", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        self.key = key

    def config(self) -> Mapping[str, Any]:
        return {"key": self.key}

    def validate_input(self, item: Document) -> None:
        if not isinstance(item, Document):
            raise InvalidInputError(f"{self.name} takes documents, got {type(item).__name__}")

    def transform(self, item: Document, context: ExecutionContext) -> Document:
        words = len(_WORD.findall(item.content))
        return item.model_copy(update={"metadata": {**item.metadata, self.key: words}})
