"""The codemod benchmark runs end to end in quick mode and prints its ratio lines (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "bench_codemod.py"


def test_quick_benchmark_prints_ratios() -> None:
    cmd = [sys.executable, str(SCRIPT), "--quick", "--files", "8", "--plain-lines", "1500", "--no-oracle", "-j", "2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for line in (
        "tfmigrate -j 1 ",
        "tfmigrate -j 2 ",
        "libcst parse+codegen",
        "tfmigrate -j 1, non-TF tree",
        "ratio vs tf_upgrade_v2",
        "ratio vs libcst parse+codegen floor, -j 1: ",
        "scaling -j 1 -> -j 2: ",
    ):
        assert line in out, out
