from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture()
def mini_corpus() -> Path:
    return ROOT / "tests" / "data" / "corpus"
