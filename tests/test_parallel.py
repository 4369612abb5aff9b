"""The suite's parallel run (pytest-xdist, as `./run tests` runs it): grouping, and skips still failing.

Each test runs a small pytest session with `-n 2 --dist loadgroup` on test files of its own, with
tests/conftest.py loaded as a plugin (so its hooks, not a copy of them, are what is checked).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import ROOT

import equivalence.test_ctl_strategies as ctl_strategies
import equivalence.test_distributed_train_and_evaluate as distributed
import equivalence.test_equivalence as equivalence


def _run_parallel(tmp_path: Path, source: str, *, no_skips: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(source), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TFMIGRATE_NO_SKIPS"))}
    env["PYTHONPATH"] = str(ROOT / "tests")
    if no_skips:
        env["TFMIGRATE_NO_SKIPS"] = "1"
    command = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-v", "-rs"]
    command += ["-n", "2", "--dist", "loadgroup", "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_a_skip_fails_a_parallel_run(tmp_path: Path) -> None:
    source = """
        import pytest

        def test_passes():
            pass

        def test_skipped():
            pytest.skip("for the check")
    """
    proc = _run_parallel(tmp_path, source, no_skips=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "1 tests were skipped; skips are failures here" in out and "test_skipped" in out, out
    assert _run_parallel(tmp_path, source, no_skips=False).returncode == 0


def test_tests_sharing_a_cache_run_on_one_worker(tmp_path: Path) -> None:
    """An `xdist_group` mark, or a module-scoped fixture of the module, keeps tests on one worker."""
    source = """
        import pytest

        @pytest.fixture(scope="module")
        def computed_once():
            return 1

        @pytest.mark.parametrize("i", range(6))
        def test_uses_the_module_fixture(computed_once, i):
            pass

        @pytest.mark.parametrize("i", range(6))
        @pytest.mark.xdist_group("program:x")
        def test_in_a_group(i):
            pass

        @pytest.mark.parametrize("i", range(6))
        def test_alone(i):
            pass
    """
    proc = _run_parallel(tmp_path, source, no_skips=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    ran_on: dict[str, set[str]] = {}
    for worker, name, group in re.findall(r"\[(gw\d)\][^\n]*?::(test_\w+)\[\d\]([^ ]*)", out):
        ran_on.setdefault(f"{name}{group}", set()).add(worker)
    # xdist schedules by the `@<group>` suffix of the node id (tests/conftest.py adds it where xdist cannot).
    assert set(ran_on) == {
        "test_uses_the_module_fixture@module:test_inner.py", "test_in_a_group@program:x", "test_alone"
    }, out
    assert len(ran_on["test_uses_the_module_fixture@module:test_inner.py"]) == 1, out
    assert len(ran_on["test_in_a_group@program:x"]) == 1, out


def test_an_equivalence_program_is_one_group() -> None:
    """Both targets and the strategy runs of a program share its oracle cache: one xdist group."""

    def groups(function) -> dict[str, str]:
        marks = [m for m in function.pytestmark if m.name == "parametrize"]
        return {
            str(param.values[0]): next(m.args[0] for m in param.marks if m.name == "xdist_group")
            for param in marks[0].args[1]
        }

    keras = groups(equivalence.test_migration_matches_oracle)
    ctl = groups(equivalence.test_ctl_migration_matches_oracle)
    assert keras and all(ctl[case] == keras[case] for case in ctl)
    tpu = ctl_strategies.TPU
    for test in (
        ctl_strategies.test_ctl_program_under_mirrored_two_cpus,
        ctl_strategies.test_ctl_program_as_two_multi_worker_processes,
        ctl_strategies.test_ctl_program_as_parameter_server_coordinator,
    ):
        for name, group in groups(test).items():
            assert group == keras[str(tpu / f"{name}.in.py")]
    # A module of one program's tests takes its group from `pytestmark`.
    assert next(m.args[0] for m in distributed.pytestmark if m.name == "xdist_group") == keras[str(distributed.CASE)]
