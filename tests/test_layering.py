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
    for path in sorted((ROOT / "runtime").rglob("*.py")):
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


def _runtime_imports() -> tuple[dict[str, set[str]], list[str]]:
    """(module -> runtime modules it imports, anywhere in it: module level or inside a function;
    `from .x import _private` across modules), read with `ast` (no TensorFlow import)."""
    runtime = ROOT / "runtime"

    def name_of(path: Path) -> str:
        parts = list(path.relative_to(runtime).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    paths = {name_of(path): path for path in sorted(runtime.rglob("*.py"))}
    edges: dict[str, set[str]] = {name: set() for name in paths}
    private: list[str] = []
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" and name else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + (node.module.split(".") if node.module else []))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tfmigrate.runtime"):
                target = node.module.removeprefix("tfmigrate.runtime").lstrip(".")
            else:
                continue
            for alias in node.names:
                module = f"{target}.{alias.name}" if target else alias.name
                if module in paths:  # `from . import x`: the module x
                    edges[name].add(module)
                elif target in paths:
                    edges[name].add(target)
                    if alias.name.startswith("_") and not alias.name.startswith("__") and target != name:
                        private.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {target} import {alias.name}")
    return edges, private


def test_runtime_modules_import_no_cycle() -> None:
    """No two runtime modules import each other, directly or through others (function-local imports
    included: a local import that closes a cycle is the same knot, deferred). The package
    `__init__`s re-export their modules, so edges into a package are left out."""
    edges, _ = _runtime_imports()
    packages = {name for name in edges if (ROOT / "runtime" / name.replace(".", "/") / "__init__.py").exists()}
    graph = {name: {t for t in targets if t not in packages} for name, targets in edges.items()}
    state: dict[str, int] = {}  # 1: on the path, 2: done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "runtime import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_runtime_modules_import_no_private_names_from_each_other() -> None:
    _, private = _runtime_imports()
    assert not private, "private names imported across runtime modules:\n" + "\n".join(private)


#: The runtime's layers, lowest first; a module imports only from its own layer or lower ones.
#: (runtime/__init__.py describes them; a new module must be placed here.)
RUNTIME_LAYERS: dict[str, tuple[str, ...]] = {
    "base": ("_logging", "_state", "summary", "hparams", "proof"),
    "distribution": ("cluster", "config", "strategy"),
    "numerics": (
        "feature_columns", "tf1_names", "optimizers", "losses", "metrics", "layers", "initializers", "schedules",
        "lookup", "tf1", "train_step", "legacy",
    ),
    "host": (
        "inputs", "tf1_checkpoint", "checkpoints", "engine", "keras_workarounds", "data_source", "session_run",
        "early_stopping", "callbacks", "hooks", "keras_compat", "export", "predictions", "ctl", "training", "convert",
    ),
    "models": ("canned", "estimator"),  # canned estimators (Keras) and the hosted TF1 Estimator tier, with their submodules
}


def test_runtime_modules_import_only_their_layer_or_lower() -> None:
    edges, _ = _runtime_imports()
    rank = {module: index for index, modules in enumerate(RUNTIME_LAYERS.values()) for module in modules}

    def layer(name: str) -> int | None:
        return rank.get(name, rank.get(name.split(".")[0]))

    unplaced = sorted(name for name in edges if name and layer(name) is None)
    assert not unplaced, f"runtime modules in no layer of RUNTIME_LAYERS: {unplaced}"
    upward = sorted(
        f"{name} ({list(RUNTIME_LAYERS)[layer(name)]}) imports {target} ({list(RUNTIME_LAYERS)[layer(target)]})"
        for name, targets in edges.items()
        if name
        for target in targets
        if target and layer(target) > layer(name)
    )
    assert not upward, "runtime imports that go up a layer:\n" + "\n".join(upward)
