"""Shared test configuration: `--update-fixtures` regenerates every `.out.py` from its `.in.py`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Every module code the codemod reuses from the text it came from is compared with LibCST's own
# render, in every test and every CLI the tests start (`tfmigrate.reused_code`).
os.environ.setdefault("TFMIGRATE_CHECK_REUSED_CODE", "1")

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

    if hasattr(session.config, "workerinput"):  # An xdist worker: its reports reach the controller, which decides.
        return
    if os.environ.get("TFMIGRATE_NO_SKIPS") and _SKIPPED and session.exitstatus == 0:
        print(f"\n{len(_SKIPPED)} tests were skipped; skips are failures here:\n  " + "\n  ".join(_SKIPPED))
        session.exitstatus = 1


# Parallel runs: `./run tests` runs the suite with pytest-xdist (`-n auto --dist loadgroup`).
#   * Tests that share a per-process cache run on one worker: an equivalence program's tests (both
#     targets and its distribution-strategy runs share its oracle results) carry
#     `xdist_group("program:<fixture id>")`, and a test using a module- or class-scoped fixture of
#     its own module (an oracle run, a trained model) gets `xdist_group("module:<path>")` here.
#   * The heaviest work goes first: xdist hands out work units (a group, or a single test) in
#     collection order once its own reordering (by test count) is off, so each worker reorders its
#     collection by an estimate of each unit's cost (the markers: multi-process, oracle, TF).
#   * `-n auto` means the usable cores, at most MAX_WORKERS (each worker holds TensorFlow and starts
#     TF subprocesses; more workers than cores only contend).
MAX_WORKERS = 8
_COST = {"slow": 30.0, "oracle": 10.0, "tf": 1.0}  # Rough seconds per test, by its heaviest marker.
_DEFAULT_COST = 0.05


@pytest.hookimpl(optionalhook=True)  # An xdist hook: -n 0 and runs without xdist do not call it.
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    import os

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return max(1, min(len(os.sched_getaffinity(0)), MAX_WORKERS))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist") and config.getoption("dist", "no") == "loadgroup":
        config.option.loadscopereorder = False  # The workers order the collection themselves (below).


def _module_group(item: pytest.Item) -> str | None:
    """`module:<path>` when `item` uses a module- or class-scoped fixture defined in its module or a conftest."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in item.fixturenames:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope in ("module", "class") and fixturedef.baseid:
                return f"module:{item.nodeid.split('::', 1)[0]}"
    return None


def _group_of(item: pytest.Item) -> str | None:
    marks = [mark for mark in item.iter_markers("xdist_group")]
    if marks:
        mark = marks[0]
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    return None


def _cost(item: pytest.Item) -> float:
    return max([_COST[mark.name] for mark in item.iter_markers() if mark.name in _COST], default=_DEFAULT_COST)


@pytest.hookimpl(tryfirst=True)  # Before xdist's own hook reads the xdist_group marks.
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _group_of(item) is None and (group := _module_group(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    if not hasattr(config, "workerinput"):  # A serial run keeps the collection order.
        return
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(_group_of(item) or item.nodeid, []).append(item)
    ordered = sorted(units.values(), key=lambda unit: -sum(_cost(item) for item in unit))  # Stable.
    items[:] = [item for unit in ordered for item in unit]


@pytest.hookimpl(tryfirst=True)  # Before xdist sends the worker's collection to the controller.
def pytest_collection_finish(session: pytest.Session) -> None:
    """Tags grouped tests' node ids with `@<group>` where xdist could not.

    --dist loadgroup learns a test's group from a `@<group>` suffix that xdist's worker adds to
    the node id; on pytest >= 9.2 (structured node ids) its assignment has no effect and every test
    is scheduled alone (pytest-dev/pytest-xdist#1386). tests/test_parallel.py checks the grouping.
    """
    if not (hasattr(session.config, "workerinput") and session.config.getvalue("loadgroup")):
        return
    for item in session.items:
        group = _group_of(item)
        if group is not None and not item.nodeid.endswith(f"@{group}"):
            from _pytest.nodeid import NodeId  # Only pytest >= 9.2 gets here.

            item._id = NodeId.parse(f"{item.nodeid}@{group}")
