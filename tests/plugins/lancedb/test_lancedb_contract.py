"""LanceDBStore passes the kit's store contract."""

from __future__ import annotations

import pytest
from ragloom.testing import StoreContract
from ragloom_lancedb import LanceDBStore


class TestLanceDBStore(StoreContract):
    @pytest.fixture
    def store_factory(self):
        return lambda directory: LanceDBStore(directory / "index")


class TestLanceDBStoreOtherTable(StoreContract):
    """Another table name, and a directory that already exists."""

    @pytest.fixture
    def store_factory(self):
        return lambda directory: LanceDBStore(directory, table="passages", hybrid_k=10)
