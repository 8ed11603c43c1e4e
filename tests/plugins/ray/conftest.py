"""One local Ray for the whole session (2 CPUs, no dashboard, no network), shared by every
test of ragloom-ray that needs one.

Under pytest-xdist every test that uses ``ray_session`` is put in one ``xdist_group``, so that
one worker process starts Ray once (``--dist loadgroup``) instead of every worker starting one
on the same two cores."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip(
    "ragloom_ray", reason="ragloom-ray tests need ragloom-ray (pip install -e plugins/ray)"
)

STEPS = Path(__file__).resolve().parent / "steps"


# before pytest-xdist reads the groups (its own hook may be registered before this conftest)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "ray_session" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(scope="session")
def ray_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A local Ray started once; its workers can import the test steps."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # pragma: no cover - someone else's Ray
        yield ray
        return
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    path = os.pathsep.join(p for p in (str(STEPS), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"PYTHONPATH": path, "RAY_AUTH_MODE": "disabled"}},
    )
    try:
        yield ray
    finally:
        ray.shutdown()
