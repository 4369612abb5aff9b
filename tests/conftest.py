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


# A skipped test is not a passing test: under TFMIGRATE_NO_SKIPS=1 (./run tests, CI) any skip fails the run.
_SKIPPED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import os

    if os.environ.get("TFMIGRATE_NO_SKIPS") and _SKIPPED and session.exitstatus == 0:
        print(f"\n{len(_SKIPPED)} tests were skipped; skips are failures here:\n  " + "\n  ".join(_SKIPPED))
        session.exitstatus = 1
