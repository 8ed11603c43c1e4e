"""Labelled question files: what each question asks and which passages answer each facet.

A file is JSON Lines (one question a line), or a JSON or YAML list of the same objects::

    {"id": "q1", "question": "How do I clear the cache and write a plugin?",
     "kind": "compound",
     "expected": [{"facet": 1, "document": "guides/caching.md", "contains": "cache clear"},
                  {"facet": 2, "document": "plugins.rst"},
                  {"facet": 2, "document": "faq.html"}]}

An ``expected`` entry names a document as the index stores it (its path relative to the
folder ingested) and may narrow the judgement to a passage: ``contains`` (a string, or a list
of strings that must all be in the passage; case and spacing are ignored) or ``span``
(``[start, end)`` character offsets in the document that the passage must overlap). Entries
sharing a ``facet`` value are alternatives for one ask; an entry without ``facet`` is an ask
of its own. A bare string is a document. ``evidence`` (terms the writer checked on the page)
is kept for people and not used to judge. ``kind`` defaults to ``compound`` for several facets
and ``simple`` for one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .._hints import did_you_mean
from ..errors import ConfigurationError

__all__ = ["Expectation", "Facet", "LabelledQuestion", "QuestionSet", "load_questions"]


class Expectation(BaseModel):
    """A passage that answers one facet: its document, and optionally what it must hold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    document: str = Field(min_length=1)
    facet: int | str | None = None
    contains: list[str] = Field(default_factory=list)
    span: tuple[int, int] | None = None
    evidence: list[str] = Field(default_factory=list)

    @field_validator("contains", "evidence", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("contains")
    @classmethod
    def _not_blank(cls, value: list[str]) -> list[str]:
        if any(not text.strip() for text in value):
            raise ValueError("a 'contains' string is blank")
        return value

    @field_validator("span")
    @classmethod
    def _ordered(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and not 0 <= value[0] < value[1]:
            raise ValueError(f"span must be [start, end) with 0 <= start < end, got {value}")
        return value

    @field_validator("document")
    @classmethod
    def _posix(cls, value: str) -> str:
        return value.replace("\\", "/").removeprefix("./")

    def describe(self) -> str:
        narrowed = ""
        if self.contains:
            narrowed = " containing " + " + ".join(repr(text) for text in self.contains)
        elif self.span is not None:
            narrowed = f" [{self.span[0]}:{self.span[1]}]"
        return self.document + narrowed


class Facet(BaseModel):
    """One ask of a question: the passages that answer it (any one is enough)."""

    model_config = ConfigDict(frozen=True)

    label: str
    alternatives: list[Expectation]


class LabelledQuestion(BaseModel):
    """A question, its kind, and the expected passages of each of its facets."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ""
    question: str = Field(min_length=1)
    kind: str | None = None
    expected: list[Expectation] = Field(min_length=1)
    #: Where the question was read (``file:line``), for messages.
    source: str = ""

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is blank")
        return value.strip()

    @field_validator("expected", mode="before")
    @classmethod
    def _documents(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"document": e} if isinstance(e, str) else e for e in value]
        return value

    @property
    def facets(self) -> list[Facet]:
        """The facets in order of first mention; entries sharing a ``facet`` are
        alternatives."""
        groups: dict[str, list[Expectation]] = {}
        for n, entry in enumerate(self.expected, 1):
            label = str(entry.facet) if entry.facet is not None else f"#{n}"
            groups.setdefault(label, []).append(entry)
        return [Facet(label=label, alternatives=found) for label, found in groups.items()]

    @property
    def question_kind(self) -> str:
        """The kind given, else ``compound`` (several facets) or ``simple`` (one)."""
        if self.kind:
            return self.kind
        return "compound" if len(self.facets) > 1 else "simple"


class QuestionSet(BaseModel):
    """The questions of one file, in order."""

    model_config = ConfigDict(frozen=True)

    questions: list[LabelledQuestion]
    source: str = ""

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[LabelledQuestion]:  # type: ignore[override]
        return iter(self.questions)

    @classmethod
    def of(cls, questions: Sequence[LabelledQuestion | dict[str, Any]]) -> QuestionSet:
        """A set from objects or mappings (ids default to ``q1``, ``q2``...)."""
        return _checked(
            [(f"item {n}", q) for n, q in enumerate(questions, 1)], source="<questions>"
        )


def load_questions(path: str | Path) -> QuestionSet:
    """Read a question file (``.jsonl``; ``.json`` and ``.yaml``/``.yml`` lists accepted).

    Raises:
        ConfigurationError: the file is missing or malformed; the message names the file, the
            line (or list item) and the field at fault.
    """
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix in (".json", ".yaml", ".yml"):
        from ..config import read_data_file

        data = read_data_file(file, what="questions")
        if isinstance(data, dict) and isinstance(data.get("questions"), list):
            data = data["questions"]
        if not isinstance(data, list):
            raise ConfigurationError(
                f"{file}: a question file is a list of questions (or JSON Lines), not a "
                f"{type(data).__name__}"
            )
        items = [(f"{file}: item {n}", entry) for n, entry in enumerate(data, 1)]
        return _checked(items, source=str(file))
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigurationError(f"no such question file: {file}") from None
    except IsADirectoryError:
        raise ConfigurationError(f"{file} is a folder, not a question file") from None
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"{file} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    except OSError as exc:
        raise ConfigurationError(f"cannot read {file}: {exc.strerror or exc}") from None
    entries: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            entries.append((f"{file}:{number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise ConfigurationError(
                f"{file}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); a question "
                "file has one JSON object a line"
            ) from None
    return _checked(entries, source=str(file))


def _checked(entries: list[tuple[str, Any]], *, source: str) -> QuestionSet:
    questions: list[LabelledQuestion] = []
    seen: dict[str, str] = {}
    for n, (where, entry) in enumerate(entries, 1):
        if isinstance(entry, LabelledQuestion):
            question = entry
        elif not isinstance(entry, dict):
            raise ConfigurationError(
                f"{where}: a question is an object with 'question' and 'expected', not a "
                f"{type(entry).__name__}"
            )
        else:
            try:
                question = LabelledQuestion.model_validate({**entry, "source": where})
            except ValidationError as exc:
                raise ConfigurationError(f"{where}: {_first_problem(exc)}") from None
        if not question.id:
            question = question.model_copy(update={"id": f"q{n}"})
        if question.id in seen:
            raise ConfigurationError(
                f"{where}: id {question.id!r} is used again (first at {seen[question.id]})"
            )
        seen[question.id] = where
        questions.append(question)
    if not questions:
        raise ConfigurationError(f"{source}: no questions in the file")
    return QuestionSet(questions=questions, source=source)


def _first_problem(exc: ValidationError) -> str:
    """The first error of a validation, worded with its location (``expected[1].span``)."""
    errors = exc.errors()
    # A misspelt key explains a missing one: say it first.
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    where = ""
    for part in error["loc"]:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        key = str(error["loc"][-1])
        fields = (
            Expectation.model_fields if "expected" in map(str, error["loc"])
            else LabelledQuestion.model_fields
        )
        hint = did_you_mean(key, [f for f in fields if f != "source"])
        message = f"unknown key {key!r}{hint}"
        return message + (f" at {where}" if "." in where or "[" in where else "")
    if error["type"] == "missing":
        return f"{where}: missing (a question needs 'question' and 'expected')"
    return f"{where}: {message}"
