"""Labelled question files: formats, facets and alternatives, and located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ragloom import ConfigurationError
from ragloom.evaluation import LabelledQuestion, QuestionSet, load_questions

GOOD = {
    "id": "a", "question": "How do I clear the cache and write a plugin?",
    "expected": [
        {"facet": 1, "document": "guides/caching.md", "contains": "cache clear"},
        {"facet": 2, "document": "plugins.rst"},
        {"facet": 2, "document": "./faq.html"},
    ],
}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_facets_alternatives_and_kind(tmp_path: Path) -> None:
    lines = [json.dumps(GOOD), "", "# a comment", json.dumps(
        {"question": "Where is the cache?", "expected": ["guides/caching.md"]}
    )]
    questions = load_questions(write(tmp_path, "q.jsonl", "\n".join(lines)))
    first, second = questions
    assert [f.label for f in first.facets] == ["1", "2"]
    assert [e.document for e in first.facets[1].alternatives] == ["plugins.rst", "faq.html"]
    assert first.facets[0].alternatives[0].contains == ["cache clear"]
    assert first.question_kind == "compound"
    assert second.id == "q2" and second.question_kind == "simple"
    assert second.source.endswith("q.jsonl:4")


def test_json_and_yaml_lists(tmp_path: Path) -> None:
    as_json = load_questions(write(tmp_path, "q.json", json.dumps([GOOD])))
    yaml_text = (
        "- question: Where is the cache?\n  kind: one-ask\n  expected:\n"
        "    - document: guides/caching.md\n      span: [10, 20]\n"
    )
    as_yaml = load_questions(write(tmp_path, "q.yaml", yaml_text))
    assert as_json.questions[0].id == "a"
    assert as_yaml.questions[0].question_kind == "one-ask"
    assert as_yaml.questions[0].expected[0].span == (10, 20)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "q.jsonl:1: not valid JSON"),
        ('{"question": "x"}', "q.jsonl:1: expected: missing"),
        ('{"question": "  ", "expected": ["a"]}', "q.jsonl:1: question: the question is blank"),
        ('{"question": "x", "expected": []}', "q.jsonl:1: expected"),
        ('{"question": "x", "expectd": ["a"]}', "did you mean 'expected'?"),
        ('{"question": "x", "expected": [{"document": "a", "contans": "b"}]}',
         "unknown key 'contans' (did you mean 'contains'?) at expected[0].contans"),
        ('{"question": "x", "expected": [{"document": "a", "span": [5, 2]}]}',
         "expected[0].span: span must be [start, end)"),
        ('{"question": "x", "expected": [{"document": "a", "contains": " "}]}',
         "a 'contains' string is blank"),
        ('["x"]', "q.jsonl:1: a question is an object"),
        ('{"id": "a", "question": "x", "expected": ["a"]}\n'
         '{"id": "a", "question": "y", "expected": ["b"]}', "q.jsonl:2: id 'a' is used again"),
        ("", "no questions in the file"),
    ],
)
def test_errors_name_the_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_questions(write(tmp_path, "q.jsonl", text))
    assert message in str(info.value)


def test_missing_folder_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such question file"):
        load_questions(tmp_path / "absent.jsonl")
    with pytest.raises(ConfigurationError, match="is a folder"):
        load_questions(tmp_path)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigurationError, match="not UTF-8"):
        load_questions(binary)
    with pytest.raises(ConfigurationError, match="is a list of questions"):
        load_questions(write(tmp_path, "q.json", '{"question": "x"}'))


def test_a_set_from_objects() -> None:
    built = QuestionSet.of([GOOD, LabelledQuestion(question="q", expected=["d"])])
    assert [q.id for q in built] == ["a", "q2"]
