"""The design card's layering: the codemod never imports TensorFlow; the runtime never imports the codemod."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _passes(probe: str, *args: str) -> None:
    """`probe` (Python code asserting what a fresh process imports) passes in a process of its own."""
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


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
    _passes(probe, str(program))


def test_unused_import_removal_runs_without_libcst_codemod() -> None:
    """Importing `libcst.codemod` (its matchers) costs a tenth of a second, more than a small
    file's whole migration: removing a lone unused import does not need its visitor."""
    probe = (
        "import sys\n"
        "from tfmigrate.engine import transform_source\n"
        "src = 'import tensorflow as tf\\nfrom tensorflow.contrib import slim\\n\\nx = tf.placeholder(tf.float32)\\n'\n"
        "out = transform_source(src).output\n"
        "assert 'contrib' not in out and 'tf.compat.v1.placeholder' in out, out\n"
        "assert 'libcst.codemod' not in sys.modules\n"
    )
    _passes(probe)


def test_cli_starts_and_checks_a_text_path_file_without_importing_libcst(tmp_path) -> None:
    """Importing LibCST is a third of the CLI's start-up: `--version`, and `--check` on a file the
    text passes finish, never import it (`cst_on_demand`). A file that needs the CST path then
    imports it and migrates as before, in the same process."""
    session = tmp_path / "session.py"
    session.write_text("import tensorflow as tf\nsess = tf.Session()\n")
    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from tfmigrate.cli import main\n"
        "assert CliRunner().invoke(main, ['--version']).exit_code == 0\n"
        "result = CliRunner().invoke(main, ['--check', sys.argv[1]])\n"
        "assert result.exit_code == 1 and 'TFM104' in result.output, result.output\n"
        "assert 'libcst' not in sys.modules, 'the text path imported LibCST'\n"
        "from tfmigrate.engine import transform_source\n"
        "result = transform_source(open(sys.argv[2]).read())\n"
        "assert result.changed and result.error is None and 'libcst' in sys.modules, result.error\n"
    )
    program = ROOT / "fixtures" / "TFM301_tpu_estimator_to_keras" / "guide_adagrad.in.py"
    _passes(probe, str(session), str(program))


def test_codemod_modules_read_no_libcst_name_when_imported() -> None:
    """What reads `cst.<Name>` while a module is imported (a base class, a tuple of node types)
    imports LibCST for every run: no codemod module does (`cst_on_demand`)."""
    probe = (
        "import importlib, pkgutil, sys\n"
        "import tfmigrate, tfmigrate.rules, tfmigrate.estimator\n"
        "for package in (tfmigrate, tfmigrate.rules, tfmigrate.estimator):\n"
        "    for info in pkgutil.iter_modules(package.__path__):\n"
        "        if package is tfmigrate and info.name in ('runtime', 'fixtures'):\n"
        "            continue\n"
        "        importlib.import_module(f'{package.__name__}.{info.name}')\n"
        "assert 'libcst' not in sys.modules, 'a module imported LibCST'\n"
    )
    _passes(probe)


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


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles a depth-first walk of `graph` (module -> modules it imports) closes, each as a path."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return cycles


def test_runtime_modules_import_no_cycle() -> None:
    """No two runtime modules import each other, directly or through others (function-local imports
    included: a local import that closes a cycle is the same knot, deferred). The package
    `__init__`s re-export their modules, so edges into a package are left out."""
    edges, _ = _runtime_imports()
    packages = {name for name in edges if (ROOT / "runtime" / name.replace(".", "/") / "__init__.py").exists()}
    graph = {name: {t for t in targets if t not in packages} for name, targets in edges.items()}
    cycles = import_cycles(graph)
    assert not cycles, "runtime import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_runtime_modules_import_no_private_names_from_each_other() -> None:
    _, private = _runtime_imports()
    assert not private, "private names imported across runtime modules:\n" + "\n".join(private)


#: The runtime's layers, lowest first; a module imports only from its own layer or lower ones.
#: (runtime/__init__.py describes them; a new module must be placed here.)
RUNTIME_LAYERS: dict[str, tuple[str, ...]] = {
    "base": ("_logging", "_state", "_patching", "_random_state", "summary", "hparams", "proof"),
    "distribution": ("cluster", "run_config_cluster", "config", "strategy"),
    "numerics": (
        "feature_columns", "tf1_variable_names", "optimizers", "losses", "metrics", "layers", "initializers", "schedules",
        "lookup", "tf1_tests", "tf1", "train_step", "legacy",
    ),
    "host": (
        "iterator_input", "inputs", "tf1_checkpoint", "checkpoints", "engine", "keras_workarounds", "data_source", "session_run",
        "early_stopping", "callbacks", "hooks", "estimator_calls", "export", "predictions", "ctl", "training", "convert",
    ),
    # canned estimators (Keras), the hosted TF1 Estimator (graph-mode tier) and the strategy tier that runs its
    # model_fn in TF2 (model_fn), with their submodules
    "models": ("canned", "estimator", "model_fn"),
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


# -- the codemod's model_fn analysis (`tfmigrate.estimator`) ----------------------------------------

#: The model_fn analysis' modules, lowest first (migrate/estimator/__init__.py describes them); a
#: module imports at run time only from its own layer or lower ones (imports under
#: `if TYPE_CHECKING:`, for annotations, are left out). A new module must be placed here.
ESTIMATOR_LAYERS: dict[str, tuple[str, ...]] = {
    "plan": ("plan", "analysis"),
    "tables": ("tables",),
    "syntax": ("syntax", "hoist"),
    "concerns": (
        "shapes", "spec", "checkpoints", "dataflow", "forward", "scoped", "loss", "optimizer", "metrics", "summaries",
    ),
    "analyzer": ("analyzer",),
}


def _codemod_imports() -> list[tuple[Path, str, str, int, bool]]:
    """(file, imported module, imported name, line, at run time) for each `from ... import name` in
    the codemod (migrate/, rules/), relative imports resolved to `tfmigrate.*`."""
    packages = {"migrate": "tfmigrate", "rules": "tfmigrate.rules"}
    out: list[tuple[Path, str, str, int, bool]] = []
    for top, package in packages.items():
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = package.split(".") + list(path.relative_to(ROOT / top).with_suffix("").parts)
            here = parts[:-1]  # the package a relative import starts from
            tree = ast.parse(path.read_text(encoding="utf-8"))
            typing_only: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                    typing_only |= {id(n) for n in ast.walk(node)}
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom):
                    continue
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    target = ".".join(base + (node.module.split(".") if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    out.append((path, target, alias.name, node.lineno, id(node) not in typing_only))
    return out


def test_estimator_modules_import_only_their_layer_or_lower() -> None:
    rank = {module: index for index, modules in enumerate(ESTIMATOR_LAYERS.values()) for module in modules}
    estimator = ROOT / "migrate" / "estimator"
    unplaced = sorted(p.stem for p in estimator.glob("*.py") if p.stem != "__init__" and p.stem not in rank)
    assert not unplaced, f"tfmigrate.estimator modules in no layer of ESTIMATOR_LAYERS: {unplaced}"
    upward = []
    for path, target, name, line, _ in _codemod_imports():  # (`if TYPE_CHECKING:` imports too)
        if path.parent != estimator or path.stem == "__init__":
            continue
        module = f"{target}.{name}" if target == "tfmigrate.estimator" else target
        if module.startswith("tfmigrate.estimator.") and rank[module.rsplit(".", 1)[1]] > rank[path.stem]:
            upward.append(f"{path.relative_to(ROOT)}:{line}: imports {module}")
    assert not upward, "tfmigrate.estimator imports that go up a layer:\n" + "\n".join(upward)


def test_codemod_modules_import_no_cycle() -> None:
    """No two modules of the codemod (migrate/, rules/) import each other, directly or through
    others, `if TYPE_CHECKING:` imports included (a type-only import back is the same knot).
    Imports of a package (its `__init__` re-exports) are left out."""
    modules = {target for _, target, _, _, _ in _codemod_imports()}
    graph: dict[str, set[str]] = {}
    for path, target, name, _, _ in _codemod_imports():
        package = "tfmigrate.rules" if path.is_relative_to(ROOT / "rules") else "tfmigrate"
        parts = package.split(".") + list(path.relative_to(ROOT / ("rules" if package.endswith("rules") else "migrate")).with_suffix("").parts)
        if parts[-1] == "__init__":
            continue
        module = ".".join(parts)
        imported = f"{target}.{name}" if f"{target}.{name}" in modules or _is_module(f"{target}.{name}") else target
        if imported.startswith("tfmigrate") and not _is_package(imported) and imported != module:
            graph.setdefault(module, set()).add(imported)
    cycles = import_cycles(graph)
    assert not cycles, "codemod import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def _source_of(module: str) -> Path:
    parts = module.split(".")
    top = ROOT / ("rules" if parts[:2] == ["tfmigrate", "rules"] else "migrate")
    return top.joinpath(*parts[2 if top.name == "rules" else 1:])


def _is_package(module: str) -> bool:
    return (_source_of(module) / "__init__.py").exists()


def _is_module(module: str) -> bool:
    return _source_of(module).with_suffix(".py").exists()


def test_codemod_modules_import_no_private_names_from_each_other() -> None:
    """Across modules, the codemod (migrate/, its estimator package, rules/) imports public names only:
    the machinery's API is what a rule may call."""
    private = [
        f"{path.relative_to(ROOT)}:{line}: from {target} import {name}"
        for path, target, name, line, _ in _codemod_imports()
        if name.startswith("_") and not name.startswith("__") and target.startswith("tfmigrate")
    ]
    assert not private, "private names imported across modules:\n" + "\n".join(private)
