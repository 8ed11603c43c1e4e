"""CsvLoader: ragloom's loader contract, and its own behaviour."""

from __future__ import annotations

import pytest
from ragloom.loading import LoadError, SourceFile
from ragloom.plugins import Registry
from ragloom.testing import LoaderContract

from __PACKAGE__.loader import CsvLoader

PEOPLE = b'name,city\nAda,London\n"Grace, R.","New\nYork"\n\n'
SCORES = "team\tscore\n\u00c6gir\t3\nshort\n".encode()


class TestCsvLoaderContract(LoaderContract):
    @pytest.fixture
    def loader(self) -> CsvLoader:
        return CsvLoader()

    @pytest.fixture
    def samples(self) -> list[SourceFile]:
        return [
            SourceFile("people.csv", PEOPLE, "people.csv"),
            SourceFile("data/scores.tsv", SCORES, "data/scores.tsv"),
        ]

    @pytest.fixture
    def bad_samples(self) -> list[SourceFile]:
        return [
            SourceFile("latin1.csv", "caf\u00e9,1\n".encode("latin-1"), "latin1.csv"),
            SourceFile("quote.csv", b'a,"never closed\n', "quote.csv"),
            SourceFile("blank.csv", b"\n , \n", "blank.csv"),
        ]


def test_a_table_with_its_header() -> None:
    (doc,) = CsvLoader().load(SourceFile("people.csv", PEOPLE, "p", {"size": len(PEOPLE)}))
    assert doc.content == (
        "| name | city |\n| --- | --- |\n| Ada | London |\n| Grace, R. | New<br>York |\n"
    )
    assert doc.metadata == {"size": len(PEOPLE), "columns": ["name", "city"], "rows": 2}
    (tsv,) = CsvLoader().load(SourceFile("s.tsv", SCORES, "s"))
    assert tsv.content.splitlines()[-1] == "| short |  |"


def test_too_many_rows_are_refused() -> None:
    with pytest.raises(LoadError, match=r"big\.csv: 3 rows, more than 2"):
        CsvLoader(max_rows=2).load(SourceFile("big.csv", b"h\n1\n2\n3\n", "big"))


def test_registered_under_its_name() -> None:
    assert Registry().resolve("loader", "__DIST__:__PREFIX__-csv") is CsvLoader
