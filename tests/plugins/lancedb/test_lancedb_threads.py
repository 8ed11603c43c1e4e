"""Lance's compute pool on a machine of two CPUs: by default Lance keeps two CPUs for I/O and
computes on one thread; a store gives the pool every CPU unless the user chose."""

from __future__ import annotations

import os
import re

import pytest
import ragloom_lancedb._threads as threads
from ragloom.stores import StoreError
from ragloom_lancedb import LanceDBStore


@pytest.fixture
def unset(monkeypatch):
    monkeypatch.delenv("LANCE_CPU_THREADS", raising=False)
    monkeypatch.delenv("LANCE_IO_CORE_RESERVATION", raising=False)
    return monkeypatch


def cpus(monkeypatch, count: int) -> None:
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: set(range(count)))


def test_a_store_on_two_cpus_gives_lance_both(unset, tmp_path) -> None:
    cpus(unset, 2)
    LanceDBStore(tmp_path / "index").close()
    assert os.environ["LANCE_CPU_THREADS"] == "2"


@pytest.mark.parametrize("count", [1, 3, 8])
def test_other_machines_keep_lances_default(unset, count) -> None:
    cpus(unset, count)
    threads.use_every_cpu()
    assert "LANCE_CPU_THREADS" not in os.environ


@pytest.mark.parametrize(
    "variable, value",
    [
        ("LANCE_CPU_THREADS", "1"),
        ("LANCE_IO_CORE_RESERVATION", "1"),
        # values Lance accepts, as given
        ("LANCE_CPU_THREADS", " 3 "),
        ("LANCE_IO_CORE_RESERVATION", "0"),
    ],
)
def test_what_the_user_set_is_kept(unset, variable, value) -> None:
    cpus(unset, 2)
    unset.setenv(variable, value)
    threads.use_every_cpu()
    assert os.environ[variable] == value
    kept = value if variable == "LANCE_CPU_THREADS" else None
    assert os.environ.get("LANCE_CPU_THREADS") == kept


@pytest.mark.parametrize("variable", ["LANCE_CPU_THREADS", "LANCE_IO_CORE_RESERVATION"])
def test_an_empty_variable_counts_as_unset(unset, variable) -> None:
    # Lance panics on an empty value: it is removed, and the default applies
    cpus(unset, 2)
    unset.setenv(variable, " ")
    threads.use_every_cpu()
    assert "LANCE_IO_CORE_RESERVATION" not in os.environ
    assert os.environ["LANCE_CPU_THREADS"] == "2"


@pytest.mark.parametrize(
    "variable, value",
    [
        ("LANCE_CPU_THREADS", "abc"),
        ("LANCE_CPU_THREADS", "0"),
        ("LANCE_CPU_THREADS", "-1"),
        ("LANCE_CPU_THREADS", "2.5"),
        ("LANCE_IO_CORE_RESERVATION", "x"),
        ("LANCE_IO_CORE_RESERVATION", "-1"),
    ],
)
def test_a_value_lance_would_panic_on_is_a_store_error(unset, tmp_path, variable, value) -> None:
    unset.setenv(variable, value)
    expected = rf"{variable} .* must be an integer >= [01], got '{re.escape(value)}'"
    with pytest.raises(StoreError, match=expected):
        LanceDBStore(tmp_path / "index")
    assert os.environ[variable] == value  # the user's setting is left as it was
