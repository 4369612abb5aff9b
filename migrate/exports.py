"""Module-level names other modules of the program read: kept when a rule finds them unused here.

The runner migrates a tree as one program: `from layers_lib import slim` in one module keeps
`slim = tf.contrib.slim` (or `from tensorflow.contrib import slim`) in `layers_lib`, which TFM101
then respells instead of deleting. A module's own `__all__` counts the same way.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from .names import ast_dotted, import_statements
from .gcpause import cyclic_gc_paused
from .parsing import indexed


class AskedNames(frozenset):
    """A module's exported names that remember which names were asked about (`name in names`):
    a rule's only use of them. The runner migrates each module before it knows what the others
    import from it, then again the few whose rules asked about a name that turns out exported."""

    def __new__(cls, names: Iterable[str] = ()) -> "AskedNames":
        self = super().__new__(cls, names)
        self.asked: set[str] = set()
        return self

    def __contains__(self, name: object) -> bool:
        self.asked.add(name)  # type: ignore[arg-type]
        return frozenset.__contains__(self, name)


def module_exports(tree: ast.Module | None) -> frozenset[str]:
    """The names a module's `__all__ = [...]` (or `+= [...]`, tuples too) lists."""
    out: set[str] = set()
    for stmt in tree.body if tree is not None else ():
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AugAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(stmt.value, (ast.List, ast.Tuple)):
            out |= {e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return frozenset(out)


def imported_names(modules: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """For (dotted module name, source) pairs of one program: module name -> the names other modules
    import from it (`from m import x`, relative imports too) or read as `m.x` after `import m`. A
    module is also reachable by each tail of its name (`pkg.m` as `m`, the program run from `pkg/`)."""
    modules = list(modules)
    names = [name for name, _ in modules]
    return names_read_from(names, reads_of(modules, program_tails(names)))


def program_tails(names: Iterable[str]) -> frozenset[str]:
    """Every name the program's modules go by: each tail of each dotted module name."""
    return frozenset(_by_tail(names))


def names_read_from(names: Iterable[str], found: Iterable[tuple[str, str, list[str]]]) -> dict[str, frozenset[str]]:
    """`imported_names` from the program's module names and what `reads_of` found in its modules."""
    by_tail = _by_tail(names)
    out: dict[str, set[str]] = {}
    for importer, target, read in found:
        for module in by_tail.get(target, ()):
            if module != importer:
                out.setdefault(module, set()).update(read)
    return {name: frozenset(read) for name, read in out.items()}


def importers_of(names: Iterable[str], found: Iterable[tuple[str, str, list[str]]], *, unique: bool = False) -> dict[str, set[str]]:
    """Module name -> the modules of the program that import it or names from it (`reads_of`'s
    finds: `from m import x`, `m.x` after `import m`, `from pkg import m`). `unique`: only where
    the import names one module of the run (not `trainer.model` of several projects run together)."""
    by_tail = _by_tail(names)
    out: dict[str, set[str]] = {}
    for importer, target, read in found:
        for tail in (target, *(f"{target}.{name}" for name in read)):
            modules = by_tail.get(tail, ())
            if unique and len(modules) > 1:
                continue
            for module in modules:
                if module != importer:
                    out.setdefault(module, set()).add(importer)
    return out


def _by_tail(names: Iterable[str]) -> dict[str, list[str]]:
    by_tail: dict[str, list[str]] = {}
    for name in names:
        parts = name.split(".")
        for start in range(len(parts)):
            by_tail.setdefault(".".join(parts[start:]), []).append(name)
    return by_tail


def reads_of(modules: list[tuple[str, str]], tails: frozenset[str]) -> list[tuple[str, str, list[str]]]:
    """(importer, module it reads from, the names) for each import and `m.x` read in these
    modules; `tails`: every name a module of the program goes by."""
    # One pause of the collector for them all: each tree dies at the next module, unwalked by it.
    with cyclic_gc_paused():
        return [read for importer, source in modules for read in module_reads(importer, source, tails)]


def module_reads(importer: str, source: str, tails: frozenset[str], parse: Callable[[str], ast.Module] = ast.parse) -> list[tuple[str, str, list[str]]]:
    """`reads_of` for one module; `parse`: how to parse its source (by default `ast.parse`, whose
    trees die with the call; the runner passes the memo the module's migration then reads)."""
    found: list[tuple[str, str, list[str]]] = []
    if "import" not in source:
        return found
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return found
    bound: dict[str, str] = {}  # local dotted name -> the module it is
    for node in import_statements(tree):
        if isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                package = importer.split(".")[: -node.level]
                target = ".".join([*package, *([target] if target else [])])
            found.append((importer, target, [alias.name for alias in node.names if alias.name != "*"]))
            for alias in node.names:  # `from pkg import m` binds a module
                bound[alias.asname or alias.name] = f"{target}.{alias.name}" if target else alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name] = alias.name
    # Only a name bound to a module of this program can read names from one.
    bound = {local: module for local, module in bound.items() if module in tails}
    if not bound:
        return found
    for node in indexed(tree).get(ast.Attribute, ()):  # (the migration's walk of the tree, where it made one)
        dotted = ast_dotted(node.value)
        if dotted in bound:
            found.append((importer, bound[dotted], [node.attr]))
    return found


def module_name(path: str, root: str) -> str:
    """`pkg/m.py` under `root` -> `pkg.m` (`pkg/__init__.py` -> `pkg`)."""
    import os

    rel = os.path.relpath(path, root) if os.path.isdir(root) else os.path.basename(path)
    parts = rel[: -len(".py")].replace(os.sep, "/").split("/") if rel.endswith(".py") else rel.split(os.sep)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(part for part in parts if part not in ("", "."))
