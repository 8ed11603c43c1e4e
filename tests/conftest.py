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


def shared_data() -> Path | None:
    """``../shared/data`` beside the checkout (or $RAGLOOM_SHARED_DATA), if present."""
    env = os.environ.get("RAGLOOM_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None
