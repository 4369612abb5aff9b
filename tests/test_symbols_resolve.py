"""Every TensorFlow (and runtime) symbol in every migrated fixture resolves on the installed TF.

A migrated file must run on current TensorFlow: each `tf.a.b.c` chain in a `.out.py` /
`.ctl.out.py` / `.ctl-standalone.out.py` is looked up attribute by attribute on the installed
`tensorflow` (and each `tfm.x.y` on `tfmigrate.runtime`). A chain that does not resolve is allowed
only in a statement the codemod marked with a `# TODO(tfmigrate ...)` comment.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import FIXTURES

pytestmark = pytest.mark.tf

OUTPUTS = sorted(p for p in FIXTURES.glob("*/*.py") if not p.name.endswith(".in.py"))


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> module path for `import tensorflow as tf` / `import tfmigrate.runtime as tfm`."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("tensorflow", "tfmigrate"):
                    out[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    return out


def _chains(tree: ast.Module, aliases: dict[str, str]):
    """(line, dotted chain) for each outermost attribute chain rooted at an alias (for an
    assignment or `del` target, the object it sets an attribute of)."""
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        parts = []
        current: ast.AST = node
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if isinstance(current, ast.Name) and current.id in aliases:
            if not isinstance(node.ctx, ast.Load):
                parts = parts[1:]  # (an assignment or `del` target: its owner must resolve, not the attribute)
            yield node.lineno, aliases[current.id], list(reversed(parts))


# The hosted tier's namespaces (`tfm.estimator`, `tfm.legacy`), on another branch of the runtime:
# resolved against the namespace it mirrors (TF 2.15's tf.compat.v1.estimator / layers /
# nn.rnn_cell) until `tfmigrate.runtime.estimator` is here.
def _hosted_resolves(parts: list[str]) -> bool | None:
    import importlib.util

    from tfmigrate.hosted import HOSTED_ESTIMATOR, RNN_CELLS

    if parts[:1] == ["estimator"] and importlib.util.find_spec("tfmigrate.runtime.estimator") is None:
        return any(".".join(parts[: n]) in HOSTED_ESTIMATOR for n in range(2, len(parts) + 1))
    if parts[:1] == ["legacy"] and importlib.util.find_spec("tfmigrate.runtime.legacy") is None:
        if parts[1:2] in (["rnn_cell"], ["tf1_rnn_cell"]):
            return len(parts) >= 3 and parts[2] in RNN_CELLS
        if parts[1:2] in (["layers"], ["tf1_layers"]):  # TF 2.15's tf.compat.v1.layers, as the symbol table lists it
            from tfmigrate.tf_api import api_table

            return len(parts) >= 3 and any(".".join(["layers", *parts[2:n]]) in api_table()[0] for n in range(3, len(parts) + 1))
        return False
    return None


def _resolves(module: str, parts: list[str]) -> bool:
    import importlib

    if module == "tfmigrate.runtime":
        hosted = _hosted_resolves(parts)
        if hosted is not None:
            return hosted

    obj = importlib.import_module(module)
    for part in parts:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return False
    return True


def _todo_covered(tree: ast.Module, lines: list[str], lineno: int) -> bool:
    """A TODO comment stands above or inside the innermost statement holding `lineno`."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno - node.lineno) < (best.end_lineno - best.lineno):  # type: ignore[operator]
                best = node
    start = (best.lineno if best is not None else lineno) - 4
    end = best.end_lineno if best is not None else lineno
    return any("TODO(tfmigrate" in line for line in lines[max(start, 0) : end])


@pytest.mark.parametrize("output", OUTPUTS, ids=[f"{p.parent.name}/{p.name}" for p in OUTPUTS])
def test_migrated_symbols_resolve(output: Path) -> None:
    text = output.read_text(encoding="utf-8")
    tree = ast.parse(text)
    aliases = _aliases(tree)
    lines = text.splitlines()
    unresolved = [
        f"line {line}: {module}.{'.'.join(parts)}"
        for line, module, parts in _chains(tree, aliases)
        if not _resolves(module, parts) and not _todo_covered(tree, lines, line)
    ]
    assert not unresolved, "symbols that do not resolve on the installed TensorFlow:\n" + "\n".join(unresolved)


def test_the_scan_sees_symbols() -> None:
    """The scan is not vacuous: it finds tf/tfm chains, and flags a symbol TF 2.16+ removed."""
    tree = ast.parse("import tensorflow as tf\nx = tf.estimator.Estimator\ny = tf.keras.layers.Dense\n")
    chains = list(_chains(tree, _aliases(tree)))
    assert [(m, p) for _, m, p in chains] == [("tensorflow", ["estimator", "Estimator"]), ("tensorflow", ["keras", "layers", "Dense"])]
    assert not _resolves("tensorflow", ["estimator", "Estimator"])
    assert _resolves("tensorflow", ["keras", "layers", "Dense"])
    assert len(OUTPUTS) > 50
    assert _resolves("tfmigrate.runtime", ["estimator", "tpu", "TPUEstimator"])
    assert _resolves("tfmigrate.runtime", ["legacy", "layers", "conv2d"])
    assert _resolves("tfmigrate.runtime", ["legacy", "rnn_cell", "LSTMCell"])
    assert _resolves("tfmigrate.runtime", ["legacy", "tf1_layers", "conv2d"])
    assert _resolves("tfmigrate.runtime", ["legacy", "tf1_rnn_cell", "LSTMCell"])
    assert _resolves("tfmigrate.runtime", ["estimator", "DNNClassifier"])  # hosted canned estimators
    assert not _resolves("tfmigrate.runtime", ["estimator", "BoostedTreesClassifier"])
