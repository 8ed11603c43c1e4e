"""Output safety: no output path may destroy an input, the cache or the other output, nor
turn a device or FIFO into a file; an output that cannot be written is one line, exit 2, and
the earlier output is kept; an empty folder writes nothing; an empty file is skipped."""

from __future__ import annotations

import json
import os
import resource
import stat
from pathlib import Path

import pytest

from .conftest import check, command, environment, pipeline_file, snapshot, temp_files


def _unchanged(work: Path, before: dict[str, str]) -> None:
    assert snapshot(work / "docs", work / "old.jsonl") == before
    assert temp_files(work) == []


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["docs", "-o", "docs/a.md"], "docs/a.md"),
        (["docs", "-o", "new.jsonl", "--failures", "docs/b.txt"], "docs/b.txt"),
        (["docs/a.md", "-o", "docs/a.md"], "docs/a.md"),
        (["docs", "docs/c.py", "-o", "docs/c.py"], "docs/c.py"),
    ],
    ids=["out-is-input", "failures-is-input", "out-is-named-input", "out-is-input-twice"],
)
def test_an_output_naming_an_input_file_is_refused(rb, work: Path, args, named) -> None:
    before = snapshot(work / "docs", work / "old.jsonl")
    err = check(rb("ingest", *args, "--no-cache"), 2, "refusing to write", "input file")
    assert err.count(named) >= 2  # the output and the input: both paths named
    _unchanged(work, before)


def test_out_equal_to_the_cache_is_refused(rb, work: Path) -> None:
    assert rb("ingest", "docs", "-o", "first.jsonl", "--cache", "c.sqlite", "-q").returncode == 0
    before = snapshot(work / "docs", work / "old.jsonl", work / "c.sqlite")
    check(rb("ingest", "docs", "-o", "c.sqlite", "--cache", "c.sqlite"), 2,
          "refusing to write --out c.sqlite: it is the cache file")
    assert snapshot(work / "docs", work / "old.jsonl", work / "c.sqlite") == before


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "c.sqlite", "--cache", "c.sqlite"],
        ["-o", "new.jsonl", "--failures", "c.sqlite", "--cache", "c.sqlite"],
        ["-o", "new.jsonl", "--failures", "new.jsonl", "--cache", "c.sqlite"],
        ["-o", "docs/a.md", "--cache", "c.sqlite"],
    ],
    ids=["out-is-cache", "failures-is-cache", "out-is-failures", "out-is-input"],
)
def test_a_refused_run_creates_no_cache_file(rb, work: Path, args) -> None:
    """Outputs are checked before anything is created: a refused run leaves no cache file
    (nor its folder) behind."""
    before = snapshot(work / "docs", work / "old.jsonl")
    check(rb("ingest", "docs", *args), 2, "refusing to write")
    assert sorted(p.name for p in work.iterdir()) == ["docs", "old.jsonl"]
    _unchanged(work, before)
    check(rb("ingest", "docs", "-o", "new.jsonl", "--cache", "made/c.sqlite",
             "--failures", "new.jsonl"), 2, "refusing to write")
    assert not (work / "made").exists()


def test_a_cache_that_is_a_device_is_refused(rb, work: Path) -> None:
    """``--cache /dev/null`` is refused before SQLite opens it (it would create
    ``/dev/null-journal``)."""
    cache = os.devnull
    journal = Path(cache + "-journal")
    existed = journal.exists()
    before = snapshot(work / "docs", work / "old.jsonl")
    check(rb("ingest", "docs", "-o", "new.jsonl", "--cache", cache), 2,
          f"cannot use {cache} as the cache file", "--no-cache")
    check(rb("cache", "info", "--cache", cache), 2, f"cannot use {cache} as the cache file")
    assert existed or not journal.exists()
    assert not (work / "new.jsonl").exists()
    _unchanged(work, before)


def test_out_equal_to_failures_is_refused(rb, work: Path) -> None:
    before = snapshot(work / "docs", work / "old.jsonl")
    check(rb("ingest", "docs", "-o", "old.jsonl", "--failures", "old.jsonl", "--no-cache"), 2,
          "refusing to write --failures old.jsonl: it is also the --out file")
    _unchanged(work, before)


def test_out_naming_a_fifo_keeps_the_fifo(rb, work: Path) -> None:
    fifo = work / "pipe"
    os.mkfifo(fifo)
    check(rb("ingest", "docs", "-o", fifo, "--no-cache"), 2, "not a regular file", str(fifo))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_out_naming_a_device_keeps_the_device(rb) -> None:
    check(rb("ingest", "docs", "-o", os.devnull, "--no-cache"), 2, "not a regular file",
          os.devnull)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.parametrize("flag", ["-o", "--failures"])
def test_an_output_that_is_a_folder_is_refused(rb, work: Path, flag: str) -> None:
    (work / "folder").mkdir()
    check(rb("ingest", "docs", flag, "folder", "--no-cache"), 2)
    assert (work / "folder").is_dir() and not any((work / "folder").iterdir())


def test_out_under_a_regular_file(rb, work: Path) -> None:
    before = snapshot(work / "docs", work / "old.jsonl")
    check(rb("ingest", "docs", "-o", "old.jsonl/chunks.jsonl", "--no-cache"), 2,
          "cannot write --out old.jsonl/chunks.jsonl")
    _unchanged(work, before)


def test_out_in_a_folder_that_cannot_be_written(rb, work: Path) -> None:
    if os.geteuid() == 0:
        target = "/proc/ragloom-chunks.jsonl"  # root may write anywhere else
    else:
        locked = work / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        target = str(locked / "chunks.jsonl")
    check(rb("ingest", "docs", "-o", target, "--no-cache"), 2, f"cannot write --out {target}")
    assert not os.path.exists(target)


def test_a_full_disk_keeps_the_old_output(rb, work: Path) -> None:
    """A file size limit makes writes fail as a full disk does (EFBIG instead of ENOSPC)."""
    (work / "docs" / "big.txt").write_text("word " * 100_000, encoding="utf-8")
    before = snapshot(work / "old.jsonl")

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    check(rb("ingest", "docs", "-o", "old.jsonl", "--no-cache", "-q", preexec_fn=small_files),
          2, "cannot write --out old.jsonl", "File too large")
    assert snapshot(work / "old.jsonl") == before
    assert temp_files(work) == []


def test_an_empty_folder_writes_nothing(rb, work: Path) -> None:
    (work / "empty").mkdir()
    before = snapshot(work / "old.jsonl")
    check(rb("ingest", "empty", "-o", "old.jsonl", "--no-cache"), 2,
          "nothing to ingest: no files found in empty", "old.jsonl was not written")
    assert snapshot(work / "old.jsonl") == before


def test_an_empty_file_is_skipped_not_failed(rb, work: Path) -> None:
    (work / "docs" / "empty.txt").write_text("", encoding="utf-8")
    (work / "docs" / "blank.txt").write_text("  \n\n", encoding="utf-8")
    proc = rb("ingest", "docs", "-o", "out.jsonl", "--no-cache", "--json")
    check(proc, 0)
    report = json.loads(proc.stdout)
    assert report["failures"] == []
    assert sorted(p["source"] for p in report["skipped"]) == ["docs/blank.txt", "docs/empty.txt"]
    lines = (work / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["parent"] for line in lines} == {"a.md", "b.txt", "c.py"}


def test_an_earlier_output_inside_the_folder_is_replaced_not_ingested(rb, work: Path) -> None:
    check(rb("ingest", "docs", "-o", "docs/chunks.jsonl", "--no-cache", "-q"), 0)
    first = (work / "docs" / "chunks.jsonl").read_text(encoding="utf-8")
    check(rb("ingest", "docs", "-o", "docs/chunks.jsonl", "--no-cache", "-q"), 0)
    assert (work / "docs" / "chunks.jsonl").read_text(encoding="utf-8") == first


def test_a_temporary_left_by_kill_9_is_removed_by_the_next_run(rb, spawn, work: Path) -> None:
    """``kill -9`` leaves the run's temporary output behind; the next successful run removes
    it, and only it: a temporary of a process still running and one whose writer cannot be
    told are left alone."""
    blocking = pipeline_file(
        work / "blocking.toml", 'import = "ragloom_rb_steps:BlockAfter"\nparams = { after = 1 }',
        'chunker = "ragloom-text:auto"',
    )
    proc = spawn(command("ingest", "docs", "-o", "out.jsonl", "--no-cache", "-c", blocking,
                         "--allow-imports"), cwd=work, env=environment())
    assert proc.stderr is not None
    seen = ""
    while "blocked after 1 items" not in seen:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    assert "blocked after 1 items" in seen, seen
    proc.kill()
    proc.wait()
    left = temp_files(work)
    assert len(left) == 1 and Path(left[0]).name.startswith(".out.jsonl."), left
    # A temporary of a writer still running (this test's own process id) and one of an
    # unknown writer (no host and process in its name) must stay.
    tag = Path(left[0]).name.split(".")[3]
    alive = work / f".out.jsonl.{tag}.{os.getpid()}.abcd1234.tmp"
    unknown = work / ".out.jsonl.abcd1234.tmp"
    alive.write_text("", encoding="utf-8")
    unknown.write_text("", encoding="utf-8")
    check(rb("ingest", "docs", "-o", "out.jsonl", "--no-cache", "-q"), 0)
    assert temp_files(work) == sorted([str(alive), str(unknown)])
    assert (work / "out.jsonl").stat().st_size > 0
