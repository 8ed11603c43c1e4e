from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def shared_data() -> Path | None:
    """``../shared/data`` beside the checkout (or $RAGLOOM_SHARED_DATA), if present."""
    env = os.environ.get("RAGLOOM_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None
