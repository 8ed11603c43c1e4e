"""The plugin's own tests: ragloom's conformance kit, one fixture per component."""

from __future__ import annotations

import pytest
from acme_ragloom import BlockChunker, PrefixRouter
from ragloom.testing import ChunkerContract, RouterContract


class TestBlockChunker(ChunkerContract):
    @pytest.fixture
    def chunker(self) -> BlockChunker:
        return BlockChunker(chunk_size=120)


class TestPrefixRouter(RouterContract):
    queries = [*RouterContract.queries, "billing: my invoice", "Support: it broke"]

    @pytest.fixture
    def router(self) -> PrefixRouter:
        return PrefixRouter(routes=["billing", "support"])


def test_prefix_routes() -> None:
    import anyio

    decision = anyio.run(PrefixRouter(routes=["billing"]).decide, "Billing: refund")
    assert decision.route == "billing" and decision.fallback_reason is None
