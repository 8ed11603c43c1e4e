"""``show_progress=True`` on long Python calls: pipelines over many items and ingestion.

Off a terminal (here: pytest's captured stderr) progress is plain lines; with rich told the
stream is a terminal (``FORCE_COLOR``) it is a bar redrawn in place. rich is imported only when
progress is shown, and without it ``show_progress=True`` says how to install it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path

import anyio
import pytest
from ragloom import Chunker, Document, Pipeline
from ragloom.ingest import Ingestor, ingest


class Words(Chunker):
    step_id = "tests/progress-words"

    def split(self, document: Document) -> Iterable[str]:
        text, start = document.content, 0
        for i, char in enumerate(text):
            if char == " ":
                yield text[start : i + 1]
                start = i + 1
        if start < len(text):
            yield text[start:]


class FailsOnX(Words):
    step_id = "tests/progress-fails-on-x"

    def split(self, document: Document) -> Iterable[str]:
        if "x" in document.content:
            raise ValueError("no x here")
        return super().split(document)


def docs(n: int) -> list[Document]:
    return [Document(id=f"d{i}", content=f"word {i} more words") for i in range(n)]


@pytest.fixture
def every_update(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line for every update (not only each tenth of the work), whatever the clock says."""
    monkeypatch.setenv("RAGLOOM_PROGRESS_INTERVAL", "0")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "dumb")


def lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("ragloom: ")]


@pytest.mark.usefixtures("every_update")
def test_run_sync_shows_inputs_taken_out_of_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    result = Pipeline(Words()).run_sync(docs(600), show_progress=True)
    assert len(result) == 600 * 4 and result.failed == []
    out, err = capsys.readouterr()
    assert out == ""
    shown = lines(err)
    assert shown[-1] == "ragloom: 600/600 inputs (100%), 2400 outputs, 0 failed"
    counts = [int(re.match(r"ragloom: (\d+)/600", line).group(1)) for line in shown]  # type: ignore[union-attr]
    assert counts == sorted(counts) and len(counts) >= 3  # windows of at most 256 inputs


@pytest.mark.usefixtures("every_update")
def test_the_same_outputs_with_and_without_progress(capsys: pytest.CaptureFixture[str]) -> None:
    items = docs(40) + [Document(id="bad", content="x marks")]
    quiet = Pipeline(FailsOnX()).run_sync(items)
    shown = Pipeline(FailsOnX()).run_sync(items, show_progress=True)
    assert [c.model_dump() for c in shown] == [c.model_dump() for c in quiet]
    assert [f.item_id for f in shown.failed] == [f.item_id for f in quiet.failed] == ["bad"]
    assert "ragloom: 41/41 inputs (100%), 160 outputs, 1 failed" in capsys.readouterr().err


@pytest.mark.anyio
@pytest.mark.usefixtures("every_update")
async def test_async_run_with_progress_and_inputs_of_unknown_length(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def generated() -> Iterator[Document]:
        yield from docs(5)

    async def streamed() -> AsyncIterator[Document]:
        for doc in docs(3):
            await anyio.sleep(0)
            yield doc

    assert len(await Pipeline(Words()).run(generated(), show_progress=True)) == 20
    assert lines(capsys.readouterr().err)[-1] == "ragloom: 5 inputs, 20 outputs, 0 failed"
    assert len(await Pipeline(Words()).run(streamed(), show_progress=True)) == 12
    assert lines(capsys.readouterr().err)[-1] == "ragloom: 3 inputs, 12 outputs, 0 failed"


def test_on_a_terminal_progress_is_a_bar(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich then treats the stream as a terminal
    monkeypatch.delenv("NO_COLOR", raising=False)
    Pipeline(Words()).run_sync(docs(300), show_progress=True)
    err = capsys.readouterr().err
    assert lines(err) == []  # no plain lines
    assert "\r" in err or "\x1b[" in err  # redrawn in place
    assert "300/300" in err and "1200 outputs, 0 failed" in err


@pytest.mark.usefixtures("every_update")
def test_ingestion_shows_files_done(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(12):
        (folder / f"f{i:02d}.txt").write_text(f"file {i} text " * 20, encoding="utf-8")
    seen: list[int] = []
    with Ingestor(Pipeline(Words()), cache=False) as ingestor:
        report = ingestor.run(
            [folder], out=tmp_path / "a.jsonl", show_progress=True,
            on_progress=lambda p: seen.append(p.done),
        )
    assert report.ok and report.files == 12
    assert seen == list(range(1, 13))  # the caller's callback still gets every update
    shown = lines(capsys.readouterr().err)
    assert len(shown) == 12 and shown[-1].startswith("ragloom: 12/12 files (100%), ")
    # ingest() in one call, the same
    again = ingest([folder], out=tmp_path / "b.jsonl", pipeline=Pipeline(Words()), cache=False,
                   show_progress=True)
    assert again.chunks == report.chunks
    assert lines(capsys.readouterr().err)[-1].startswith("ragloom: 12/12 files (100%), ")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_without_rich_show_progress_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rich", None)  # as if rich were not installed
    with pytest.raises(ModuleNotFoundError, match=r"show_progress=True needs the rich library"):
        Pipeline(Words()).run_sync(docs(2), show_progress=True)
    with pytest.raises(ModuleNotFoundError, match=r"pip install rich"):
        anyio.run(lambda: Pipeline(Words()).run(docs(2), show_progress=True))
    (tmp_path / "a.txt").write_text("some text", encoding="utf-8")
    with pytest.raises(ModuleNotFoundError, match=r"core\[cli\]"):
        ingest([tmp_path / "a.txt"], out=tmp_path / "o.jsonl", pipeline=Pipeline(Words()),
               cache=False, show_progress=True)
    assert not (tmp_path / "o.jsonl").exists()
    # Without show_progress nothing needs rich.
    assert len(Pipeline(Words()).run_sync(docs(2))) == 8
    assert capsys.readouterr().err == ""


def test_rich_is_imported_only_when_progress_is_shown() -> None:
    code = (
        "import sys\n"
        "from ragloom import Document, Pipeline, Chunker\n"
        "class W(Chunker):\n"
        "    def split(self, d):\n"
        "        return d.content.split()\n"
        "Pipeline(W()).run_sync([Document(id='a', content='x y')])\n"
        "print('rich' in sys.modules)\n"
        "Pipeline(W()).run_sync([Document(id='a', content='x y')], show_progress=True)\n"
        "print('rich' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
