"""The design card's layering: the codemod never imports TensorFlow; the runtime never imports the codemod."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_codemod_runs_without_importing_tensorflow() -> None:
    probe = (
        "import sys\n"
        "from tfmigrate.cli import main\n"
        "from tfmigrate.registry import all_rules\n"
        "from tfmigrate.engine import transform_source\n"
        "all_rules()\n"
        "src = open(sys.argv[1]).read()\n"
        "assert transform_source(src).changed\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'tf_keras'))\n"
        "assert not bad, bad\n"
    )
    program = ROOT / "fixtures" / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py"
    proc = subprocess.run([sys.executable, "-c", probe, str(program)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_runtime_never_imports_the_codemod() -> None:
    for path in sorted((ROOT / "runtime").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                assert not node.module.startswith("tfmigrate") or node.module.startswith("tfmigrate.runtime"), (
                    f"{path.name} imports {node.module}"
                )
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.name
                    assert not name.startswith("tfmigrate") or name.startswith("tfmigrate.runtime"), f"{path.name} imports {name}"
