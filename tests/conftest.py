from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Whether a cheap step is cached depends on costs measured on the machine at hand: the suite
# pins the default to "always" so that its outcomes never do (subprocesses inherit it). The
# cost-aware mode is tested on its own, with a controllable clock.
os.environ["RAGLOOM_CACHE_MODE"] = "always"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on both backends anyio supports."""
    return str(request.param)
