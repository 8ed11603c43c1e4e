"""The stats command: the kit's contract, its output and errors, in `ragloom`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from ragloom.cli import main
from ragloom.testing import CommandContract

from __PACKAGE__.command import chunk_stats

CHUNKS = [
    {"id": "a#0", "parent_id": "a", "content": "one two"},
    {"id": "a#1", "parent_id": "a", "content": "three"},
    {"id": "b#0", "parent_id": "b", "content": "four"},
]


@pytest.fixture
def chunks_file(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CHUNKS), encoding="utf-8")
    return path


class TestStatsContract(CommandContract):
    @pytest.fixture
    def command(self) -> object:
        return chunk_stats

    @pytest.fixture
    def command_name(self) -> str:
        return "__DIST__:__PREFIX__-stats"

    @pytest.fixture
    def command_args(self, chunks_file: Path) -> list[str]:
        return [str(chunks_file)]


def test_counts_chunks_documents_and_characters(chunks_file: Path) -> None:
    result = CliRunner().invoke(chunk_stats, [str(chunks_file), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"chunks": 3, "documents": 2, "characters": 16}


def test_a_line_that_is_not_a_chunk_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "ok"}\n[1, 2]\n', encoding="utf-8")
    result = CliRunner().invoke(chunk_stats, [str(bad)])
    assert result.exit_code == 2 and "line 2 is not a chunk" in result.output


def test_runs_as_a_ragloom_command(chunks_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["__PREFIX__-stats", str(chunks_file)]) == 0
    assert "3 chunks of 2 documents, 16 characters" in capsys.readouterr().out
