"""In-process tests train under the runtime's MirroredStrategy, never a raw second one.

A second `tf.distribute.MirroredStrategy` over the same devices restarts the collective keys
(tensorflow#62790): training under it, then training another model under the runtime's cached
strategy in the same process, fails with "Shape mismatch in the collective instance". Which tests
share a process depends on the parallel run's scheduling, so one raw strategy that all-reduces
can break unrelated tests (it broke four mirrored tests in a CI run). Raw strategies are allowed
only where they cannot issue collectives: one device, or `ReductionToOneDevice`.
"""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _dotted(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _collective_free(call: ast.Call) -> bool:
    devices = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "devices"), None)
    if isinstance(devices, (ast.List, ast.Tuple)) and len(devices.elts) == 1:
        return True
    ops = next((k.value for k in call.keywords if k.arg == "cross_device_ops"), None)
    return isinstance(ops, ast.Call) and _dotted(ops.func).endswith("ReductionToOneDevice")


def test_in_process_tests_build_no_collective_mirrored_strategy():
    offenders = []
    for path in sorted(HERE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _dotted(node.func).endswith("distribute.MirroredStrategy"):
                if not _collective_free(node):
                    offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, "use tfm.make_strategy('mirrored', devices=...) instead: " + ", ".join(offenders)
    # The check sees the spellings the tests use (it found test_tf1_scope's and test_losses's).
    sample = ast.parse("tf.distribute.MirroredStrategy(two_cpus)").body[0].value
    assert isinstance(sample, ast.Call) and not _collective_free(sample)
