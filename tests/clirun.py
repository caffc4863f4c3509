"""Run the installed CLI in a real subprocess, as a user or CI would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "redline_canary", *args], capture_output=True, text=True,
        env=full_env, cwd=cwd or ROOT, timeout=timeout, check=False,
    )
