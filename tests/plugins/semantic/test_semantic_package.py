"""ragloom-semantic as a package: exports, lazy imports, entry points, the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import ragloom_semantic

PLUGIN = Path(__file__).resolve().parents[3] / "plugins" / "semantic"


def test_public_exports() -> None:
    assert set(ragloom_semantic.__all__) == {
        "Encoder", "Model2VecEmbedder", "SemanticChunker", "SemanticRoute", "SemanticRouter",
        "StaticEncoder", "bundled_model_path", "load_static_model", "__version__",
    }
    for name in ragloom_semantic.__all__:
        assert getattr(ragloom_semantic, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ragloom_semantic.nope  # noqa: B018


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = (
        "import sys, ragloom_semantic; "
        "heavy = ('numpy', 'model2vec', 'pydantic', 'anyio', 'ragloom.models'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_pure_modules_do_not_need_the_core() -> None:
    code = (
        "import sys; import ragloom_semantic._scoring, ragloom_semantic._segment, "
        "ragloom_semantic._model; "
        "print(sorted(m for m in sys.modules if m.startswith('ragloom.') and m != 'ragloom.lazy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # only the package's lazy-export helper, no core module


def test_entry_points_are_declared() -> None:
    def names(group: str) -> dict[str, str]:
        return {
            ep.name: ep.value
            for ep in entry_points(group=group)
            if ep.dist and ep.dist.name == "ragloom-semantic"
        }

    assert names("ragloom.routers") == {"semantic": "ragloom_semantic.router:SemanticRouter"}
    assert names("ragloom.chunkers") == {"semantic": "ragloom_semantic.chunker:SemanticChunker"}
    assert names("ragloom.embedders") == {
        "model2vec": "ragloom_semantic.embedder:Model2VecEmbedder"
    }


@pytest.mark.e2e
def test_wheel_ships_the_model(tmp_path: Path) -> None:
    subprocess.run(
        # with the run's own hatchling (the tests env has it): no build environment to make
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(tmp_path), str(PLUGIN)],
        check=True,
    )
    (wheel,) = tmp_path.glob("ragloom_semantic-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    folder = "ragloom_semantic/models/m2v-minilm-256/"
    for name in ("config.json", "model.safetensors", "modules.json", "tokenizer.json",
                 "README.md", "PROVENANCE.md"):
        assert folder + name in names
    assert "ragloom_semantic/py.typed" in names
