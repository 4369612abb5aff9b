"""Shared test configuration: `--update-fixtures` regenerates every `.out.py` from its `.in.py`."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-fixtures", action="store_true", help="rewrite fixtures/*/*.out.py from the codemod")


def fixture_pairs() -> list[Path]:
    return sorted(FIXTURES.glob("*/*.in.py"))


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name[: -len('.in.py')]}"
