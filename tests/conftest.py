"""Shared test fixtures: the shared models folder (fails, never skips, when missing) and helpers."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("EDGECC_DEBUG", "1")  # ir.verify after every pass in tests
# the CLI's compile cache off in tests: a test that patches the compiler in process must see its
# patch, not an entry of an earlier compile (tests/test_compile_cache.py turns it on itself)
os.environ.setdefault("EDGECC_NO_CACHE", "1")

# The edgecc_run fixture of the project's pytest plugin, also when the installed package predates
# its entry point (an installed plugin's fixture is then overridden by this same function).
from edgecc.pytest_plugin import edgecc_run  # noqa: E402,F401

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EDGECC_SHARED", REPO.parent / "shared"))
MODELS = SHARED / "models" / "tflite"


def shared_model(name: str) -> Path:
    p = MODELS / f"{name}.tflite"
    if not p.is_file():
        pytest.fail(f"shared model missing: {p} (tests need ../shared/models beside the checkout)")
    return p


@pytest.fixture
def models_dir() -> Path:
    if not MODELS.is_dir():
        pytest.fail(f"{MODELS} is missing: the shared models must sit beside the checkout")
    return MODELS
