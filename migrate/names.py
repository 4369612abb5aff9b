"""Import-alias table: resolves `tf1.estimator.tpu.TPUEstimator`-style chains to canonical TF1 API paths.

Full LibCST scope analysis is expensive (QualifiedNameProvider on every node costs more than
parsing), so tfmigrate keeps its own table: every `import`/`from ... import` in the file and every
module-level `alias = <resolvable chain>` assignment. A chain resolves to a dotted qualified name
(`tensorflow.compat.v1.layers.dense`), which `canonical()` folds into one spelling per TF1 API
symbol (`layers.dense`), whatever the import style.
"""

from __future__ import annotations

import ast
import functools
import re
from itertools import accumulate
from dataclasses import dataclass, field

from .cst_on_demand import Visitor, cst

from .cst_walk import walk

# Qualified-name prefixes that all mean "the TF1 API namespace", longest first.
_TF1_PREFIXES = (
    "tensorflow.compat.v1.",
    "tensorflow.",
)
# tf.contrib locations of TPU estimator pieces, folded onto their tf.compat.v1 homes.
_CONTRIB_FOLDS = {
    # TF1's own function, whose arguments TF2's moved (`dtype` after `weights`): the v1 symbol's
    # call-shape rules decide its spelling (`tf.compat.v1.confusion_matrix` for a positional dtype).
    "tensorflow.contrib.metrics.confusion_matrix": "confusion_matrix",
    "tensorflow.contrib.tpu.TPUEstimator": "estimator.tpu.TPUEstimator",
    "tensorflow.contrib.tpu.TPUEstimatorSpec": "estimator.tpu.TPUEstimatorSpec",
    "tensorflow.contrib.tpu.RunConfig": "estimator.tpu.RunConfig",
    "tensorflow.contrib.tpu.TPUConfig": "estimator.tpu.TPUConfig",
    "tensorflow.contrib.tpu.InputPipelineConfig": "estimator.tpu.InputPipelineConfig",
    "tensorflow.contrib.tpu.CrossShardOptimizer": "tpu.CrossShardOptimizer",
    "tensorflow.contrib.cluster_resolver.TPUClusterResolver": "distribute.cluster_resolver.TPUClusterResolver",
    "tensorflow.contrib.tpu.python.tpu.tpu_estimator.TPUEstimator": "estimator.tpu.TPUEstimator",
    "tensorflow.contrib.tpu.python.tpu.tpu_estimator.TPUEstimatorSpec": "estimator.tpu.TPUEstimatorSpec",
    "tensorflow.contrib.tpu.python.tpu.tpu_config.RunConfig": "estimator.tpu.RunConfig",
    "tensorflow.contrib.tpu.python.tpu.tpu_config.TPUConfig": "estimator.tpu.TPUConfig",
    "tensorflow.contrib.tpu.python.tpu.tpu_optimizer.CrossShardOptimizer": "tpu.CrossShardOptimizer",
    "tensorflow.contrib.tpu.python.tpu.tpu_config.InputPipelineConfig": "estimator.tpu.InputPipelineConfig",
    "tensorflow.contrib.tpu.python.tpu.bfloat16.bfloat16_scope": "tpu.bfloat16_scope",
    "tensorflow.contrib.tpu.python.ops.tpu_ops.cross_replica_sum": "tpu.cross_replica_sum",
    "tensorflow.contrib.tpu.cross_replica_sum": "tpu.cross_replica_sum",
    # The estimator package's own modules of the TPU pieces (`from tensorflow_estimator.python.estimator.tpu
    # import tpu_config`, as TF 1.14+ programs spelled them).
    **{f"tensorflow_estimator.python.estimator.tpu.{module}.{name}": f"estimator.tpu.{name}" for module, names in (
        ("tpu_config", ("RunConfig", "TPUConfig", "InputPipelineConfig")),
        ("tpu_estimator", ("TPUEstimator", "TPUEstimatorSpec")),
    ) for name in names},
    # tf.contrib.framework's global-step functions were tf.train's.
    "tensorflow.contrib.framework.get_or_create_global_step": "train.get_or_create_global_step",
    "tensorflow.contrib.framework.get_global_step": "train.get_global_step",
    # tf.contrib.data's input-pipeline transformations moved to tf.data.experimental (still in TF2).
    "tensorflow.contrib.data.map_and_batch": "data.experimental.map_and_batch",
    "tensorflow.contrib.data.parallel_interleave": "data.experimental.parallel_interleave",
    "tensorflow.contrib.data.shuffle_and_repeat": "data.experimental.shuffle_and_repeat",
    "tensorflow.contrib.data.ignore_errors": "data.experimental.ignore_errors",
    "tensorflow.contrib.data.unbatch": "data.experimental.unbatch",
    "tensorflow.contrib.data.sample_from_datasets": "data.experimental.sample_from_datasets",
    "tensorflow.contrib.data.choose_from_datasets": "data.experimental.choose_from_datasets",
    "tensorflow.contrib.data.bucket_by_sequence_length": "data.experimental.bucket_by_sequence_length",
    "tensorflow.contrib.data.AUTOTUNE": "data.experimental.AUTOTUNE",
    # tf.contrib.framework's TensorSpec is TF's own class; its nest's `is_sequence`, TF's `nest.is_nested`.
    "tensorflow.contrib.framework.TensorSpec": "TensorSpec",
    "tensorflow.contrib.framework.nest.is_sequence": "nest.is_nested",
    # tf.contrib.compiler.jit's XLA scope became tf.xla.experimental's (the same function).
    "tensorflow.contrib.compiler.jit.experimental_jit_scope": "xla.experimental.jit_scope",
    # tf.contrib.estimator's early stopping was tf.estimator.experimental's (TF 1.15 exported both).
    **{f"tensorflow.contrib.estimator.{name}": f"estimator.experimental.{name}" for name in (
        "stop_if_higher_hook", "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook",
        "make_early_stopping_hook",
    )},
}
_LOOKUP_OPS = "tensorflow.python.ops.lookup_ops."
_V1_CONTRIB = "tensorflow.compat.v1.contrib."
_SLIM_PREFIXES = ("tensorflow.contrib.slim.", "tensorflow.contrib.layers.", "tf_slim.")
_ESTIMATOR_PKG_PREFIXES = (
    "tensorflow_estimator.compat.v1.estimator.",
    "tensorflow_estimator.estimator.",
    # `from tensorflow.python.estimator import estimator`: TF 1.x's module of `Estimator`, which the
    # TPU reference models import for `_load_global_step_from_checkpoint_dir`.
    "tensorflow.python.estimator.estimator.",
)


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.BaseExpression) -> str:
    name = dotted(node)
    assert name is not None
    return name


@dataclass
class AliasTable:
    """Local name -> fully qualified name, for names bound by imports or module-level aliases."""

    aliases: dict[str, str] = field(default_factory=dict)
    # Local names bound by `import tensorflow` / `import tensorflow as X` (the TF2 root).
    tf_roots: set[str] = field(default_factory=set)
    # Local names bound to tensorflow.compat.v1 (or v1-flavoured TF modules).
    tf1_roots: set[str] = field(default_factory=set)

    @classmethod
    def from_module(cls, module: cst.Module) -> "AliasTable":
        table = cls()
        table._collect(module)
        return table

    @classmethod
    def from_ast(cls, tree: ast.Module, lines: "SourceLines") -> "AliasTable":
        """The same table from a stdlib `ast` tree (about 15x cheaper to get than a CST).

        Mirrors `from_module` exactly, visiting order included (a local bound twice keeps the
        binding `from_module` keeps); `lines` tells one-line suites (`if x: import y`, whose
        imports `from_module` does not see) from indented blocks.
        """
        table = cls()
        for imp in _iter_ast_imports(tree, lines):
            if isinstance(imp, ast.Import):
                for alias in imp.names:
                    if alias.asname is not None:
                        table._bind(alias.asname, alias.name)
                    else:
                        root = alias.name.split(".")[0]
                        table._bind(root, root)
            else:
                if imp.level or imp.module is None or imp.names[0].name == "*":
                    continue
                for alias in imp.names:
                    table._bind(alias.asname or alias.name, f"{imp.module}.{alias.name}")
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = ast_dotted(stmt.value)
                resolved = table.qualify_dotted(name) if name else None
                if resolved and resolved.startswith(("tensorflow", "tensorflow_estimator")):
                    table._bind(stmt.targets[0].id, resolved)
        return table

    def _collect(self, module: cst.Module) -> None:
        for imp in iter_imports(module):
            if isinstance(imp, cst.Import):
                for alias in imp.names:
                    full = _module_name(alias.name)
                    if alias.asname is not None:
                        local = dotted(alias.asname.name)  # type: ignore[arg-type]
                        if local:
                            self._bind(local, full)
                    else:
                        # `import a.b.c` binds `a`, and `a.b.c` resolves through it.
                        root = full.split(".")[0]
                        self._bind(root, root)
            else:
                if imp.relative or imp.module is None or isinstance(imp.names, cst.ImportStar):
                    continue
                base = _module_name(imp.module)
                for alias in imp.names:
                    name = _module_name(alias.name)
                    local = dotted(alias.asname.name) if alias.asname else name  # type: ignore[arg-type]
                    if local:
                        self._bind(local, f"{base}.{name}")
        # Module-level `alias = tf.estimator` style assignments (one pass, in order).
        for stmt in module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    resolved = self.qualify(small.value)
                    if resolved and resolved.startswith(("tensorflow", "tensorflow_estimator")):
                        self._bind(small.targets[0].target.value, resolved)

    def _bind(self, local: str, full: str) -> None:
        self.aliases[local] = full
        if full == "tensorflow":
            self.tf_roots.add(local)
        elif full in ("tensorflow.compat.v1", "tensorflow._api.v1", "tensorflow.compat.v1.compat.v1"):
            self.tf1_roots.add(local)

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """Fully qualified dotted name of a Name/Attribute chain, if its root is an import."""
        name = dotted(node)
        if name is None:
            return None
        return self.qualify_dotted(name)

    def qualify_dotted(self, name: str) -> str | None:
        """`qualify` for a chain already spelled out (`tf.layers.dense`)."""
        head, _, rest = name.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return None
        return f"{full}.{rest}" if rest else full

    def canonical(self, node: cst.BaseExpression) -> str | None:
        """The TF1 API path (relative to `tf.compat.v1`) a chain refers to, or None."""
        full = self.qualify(node)
        return canonical_name(full) if full else None

    def mentions_tensorflow(self) -> bool:
        return any(v.startswith(("tensorflow", "tensorflow_estimator", "tf_slim")) for v in self.aliases.values())


def import_bindings(stmt: ast.Import | ast.ImportFrom) -> dict[str, str] | None:
    """Local name -> the qualified name an import binds it to (`import a.b` binds `a` to `a`);
    None for a relative or star import, whose bindings the text does not say."""
    if isinstance(stmt, ast.Import):
        return {
            alias.asname or alias.name.partition(".")[0]: alias.name if alias.asname else alias.name.partition(".")[0]
            for alias in stmt.names
        }
    if stmt.level or stmt.module is None or any(alias.name == "*" for alias in stmt.names):
        return None
    return {alias.asname or alias.name: f"{stmt.module}.{alias.name}" for alias in stmt.names}


def bindings(nodes_of) -> list[tuple[str, ast.AST]]:
    """(name, node) for each place a module binds a name other than an import: names assigned or
    deleted (any target, any scope), parameters, defs and classes, `except`, `match` and
    `global`/`nonlocal` names. `nodes_of(*types)`: the tree's nodes of those types
    (`SourceView.nodes_of`, or over `parsing.index_by_type`)."""
    out: list[tuple[str, ast.AST]] = [(n.id, n) for n in nodes_of(ast.Name) if not isinstance(n.ctx, ast.Load)]
    out += [(n.arg, n) for n in nodes_of(ast.arg)]
    out += [(n.name, n) for n in nodes_of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                                         ast.MatchAs, ast.MatchStar) if n.name]
    out += [(n.rest, n) for n in nodes_of(ast.MatchMapping) if n.rest]
    out += [(name, n) for n in nodes_of(ast.Global, ast.Nonlocal) for name in n.names]
    return out


def is_tf_module(module: str) -> bool:
    """Whether `module` is TensorFlow's or its Estimator package's (`tensorflow`, `tensorflow.x`,
    `tensorflow_estimator...`), not another package whose name starts with `tensorflow`
    (`tensorflow_hub`, `tensorflow_transform`), which the rules leave alone."""
    root = module.partition(".")[0]
    return root in ("tensorflow", "tensorflow_estimator")


def contrib_fold(full: str) -> str | None:
    """The TF1 (or Estimator) name a contrib name is (`_CONTRIB_FOLDS`), else None."""
    return _CONTRIB_FOLDS.get(full)


@functools.lru_cache(maxsize=1 << 16)  # (a pure function of the text: every view of a file asks of the same chains)
def canonical_name(full: str) -> str | None:
    if full.startswith(_V1_CONTRIB):  # `tf.compat.v1.contrib.x` is `tf.contrib.x`, however it was imported
        full = "tensorflow.contrib." + full[len(_V1_CONTRIB):]
    if full in _CONTRIB_FOLDS:
        return _CONTRIB_FOLDS[full]
    head, _, attr = full.rpartition(".")
    if head in _CONTRIB_FOLDS:  # `contrib_tpu.InputPipelineConfig.PER_HOST_V2`
        return f"{_CONTRIB_FOLDS[head]}.{attr}"
    for prefix in _SLIM_PREFIXES:
        if full.startswith(prefix):
            # slim's layers are contrib.layers' (and `tf_slim` is where they went after TF1).
            rest = full[len(prefix):]
            while rest.startswith("layers."):
                rest = rest[len("layers."):]
            return "contrib.layers." + rest
    for prefix in _ESTIMATOR_PKG_PREFIXES:
        if full.startswith(prefix):
            return "estimator." + full[len(prefix):]
    if full.startswith(_LOOKUP_OPS):
        # `from tensorflow.python.ops import lookup_ops` (the NMT tutorial's spelling): the module
        # `tf.contrib.lookup` re-exported.
        return "contrib.lookup." + full[len(_LOOKUP_OPS):]
    if full.startswith("tensorflow.contrib."):
        return "contrib." + full[len("tensorflow.contrib."):]
    for prefix in _TF1_PREFIXES:
        if full.startswith(prefix):
            rest = full[len(prefix):]
            if rest.startswith("compat.v1."):
                rest = rest[len("compat.v1."):]
            return rest
    if full in ("tensorflow", "tensorflow.compat.v1"):
        return ""
    return None


def iter_imports(module: cst.Module):
    """Every Import/ImportFrom in the module, at any depth (cheap: statements only)."""
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.If, cst.Try, cst.With, cst.For, cst.While)):
            body = node.body
            stack.extend(getattr(body, "body", ()))
            for attr in ("orelse", "handlers", "finalbody"):
                extra = getattr(node, attr, None)
                if extra is None:
                    continue
                if isinstance(extra, (list, tuple)):
                    for handler in extra:
                        stack.extend(getattr(handler.body, "body", ()))
                elif isinstance(extra, cst.If):
                    stack.append(extra)
                else:
                    inner = getattr(extra, "body", None)
                    if isinstance(inner, cst.BaseSuite):
                        stack.extend(getattr(inner, "body", ()))


def ast_dotted(node: ast.expr) -> str | None:
    """`a.b.c` for an ast Name/Attribute chain, else None."""
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


_NEWLINE = re.compile(rb"\r\n|\r|\n")


class SourceLines:
    """A module's physical lines as UTF-8 bytes (ast columns are byte offsets)."""

    def __init__(self, source: str) -> None:
        self.data = source.encode("utf-8")
        self.starts = [0]
        if b"\r" in self.data:  # `\r\n` and a lone `\r` end a line too, as they do for `ast`
            self.starts.extend(match.end() for match in _NEWLINE.finditer(self.data))
            return
        # (each line's length plus its line break, summed in C: no Python step per line)
        self.starts = list(accumulate(map((1).__add__, map(len, self.data.split(b"\n")[:-1])), initial=0))

    def offset(self, lineno: int, col: int) -> int:
        return self.starts[lineno - 1] + col

    def after(self, lineno: int) -> int:
        """Where the line after line `lineno` starts (the end of the data after the last line)."""
        return self.starts[lineno] if lineno < len(self.starts) else len(self.data)

    def prefix(self, lineno: int, col: int) -> bytes:
        start = self.starts[lineno - 1]
        return self.data[start : start + col]

    def starts_line(self, node: ast.stmt) -> bool:
        """Whether only indentation precedes `node` on its first line."""
        return not self.prefix(node.lineno, node.col_offset).strip()


_AST_BLOCKS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)


def _ast_lines(body: list[ast.stmt], lines: SourceLines) -> list[list[ast.stmt] | ast.stmt]:
    """A block's statements grouped as LibCST sees them: `a; b` is one line; a one-line suite is nothing."""
    if not body or not lines.starts_line(body[0]):
        return []  # `if x: import y`: LibCST's SimpleStatementSuite, which iter_imports skips
    out: list[list[ast.stmt] | ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, _AST_BLOCKS):
            out.append(stmt)
        elif out and isinstance(out[-1], list) and not lines.starts_line(stmt):
            out[-1].append(stmt)
        else:
            out.append([stmt])
    return out


def _iter_ast_imports(tree: ast.Module, lines: SourceLines):
    """`iter_imports` over an ast tree, in the same order."""
    stack = _ast_lines(tree.body, lines)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for small in node:
                if isinstance(small, (ast.Import, ast.ImportFrom)):
                    yield small
        elif isinstance(node, _AST_BLOCKS):
            stack.extend(_ast_lines(node.body, lines))
            if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While)):
                stack.extend(_ast_lines(node.orelse, lines))  # an `elif` is an If starting its line
            elif isinstance(node, ast.Try):
                stack.extend(_ast_lines(node.orelse, lines))
                for handler in node.handlers:
                    stack.extend(_ast_lines(handler.body, lines))
                stack.extend(_ast_lines(node.finalbody, lines))


class ReferenceVisitor(Visitor):
    """A walk that reaches the names code refers to: not an attribute's name (`x.name`) or a
    keyword argument's (`f(name=...)`)."""

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False


class _Names(ReferenceVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


_NAMES_IN: dict[int, tuple[cst.CSTNode, frozenset[str]]] = {}


def names_in(node: cst.CSTNode) -> set[str]:
    """The variable names `node` mentions (not attribute names or keyword-argument names). CST
    nodes never change, so each node's names are worked out once (the model_fn analysis asks
    again of the same function for every helper it inlines)."""
    hit = _NAMES_IN.get(id(node))
    if hit is not None and hit[0] is node:
        return set(hit[1])
    collector = _Names()
    walk(node, collector)
    if len(_NAMES_IN) >= 256:
        _NAMES_IN.clear()
    _NAMES_IN[id(node)] = (node, frozenset(collector.names))
    return collector.names


def chain_node(text: str) -> cst.BaseExpression:
    """`a.b.c` as a CST node (what `cst.parse_expression` gives, without running the parser)."""
    first, *rest = text.split(".")
    node: cst.BaseExpression = cst.Name(first)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def in_its_parens(new: cst.BaseExpression, old: cst.BaseExpression) -> cst.BaseExpression:
    """`new` in the parentheses `old` was written in, with the line breaks and comments inside
    them: a node put in another's place takes its parentheses, which belong to the node in LibCST."""
    if not old.lpar:
        return new
    return new.with_changes(lpar=old.lpar, rpar=old.rpar)


def is_chain(node: cst.BaseExpression) -> bool:
    """`a.b.c` rooted at a Name (not `f(x).c`)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def dotted_text(node: cst.BaseExpression) -> str:
    """`a.b.c` for a Name/Attribute chain; "" for anything else (`f(x).c` gives ".c")."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_text(node.value)}.{node.attr.value}"
    return ""


# Modules current TF lacks (gone with tf.contrib in TF 2.0 and tf.estimator in TF 2.16): an import
# binding anything from one fails.
REMOVED_HOMES = ("tensorflow.contrib", "tensorflow.estimator", "tensorflow.compat.v1.estimator",
                 "tensorflow.compat.v2.estimator", "tensorflow_estimator", "tensorflow.python.estimator")


def removed_home(full: str) -> str | None:
    """The one of `REMOVED_HOMES` that `full` (what an import binds) is or lies inside, else None."""
    return next((home for home in REMOVED_HOMES if full == home or full.startswith(home + ".")), None)


def removed_module(full: str) -> bool:
    return removed_home(full) is not None


_BLOCK_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def import_statements(tree: ast.Module, *, in_scopes: bool = True) -> list[ast.Import | ast.ImportFrom]:
    """The tree's import statements in `ast.walk`'s order (breadth first), walking statements and
    the handlers and cases between them only (no expression holds a statement); with `in_scopes`
    False, not those inside a function or class (the module-level ones, in its blocks too)."""
    found: list[ast.Import | ast.ImportFrom] = []
    level: list[ast.AST] = [tree]
    while level:
        below: list[ast.AST] = []
        for node in level:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif in_scopes or not isinstance(node, _SCOPES):
                for name in _BLOCK_FIELDS:
                    below.extend(getattr(node, name, ()))
        level = below
    return found


def imported_names(stmt: ast.Import | ast.ImportFrom) -> list[str]:
    """The local names an import statement binds (`import a.b` binds `a`; relative imports too)."""
    bound = import_bindings(stmt)
    return list(bound) if bound is not None else [alias.asname or alias.name for alias in stmt.names]


def reexported(filename: str, source: str, parse=ast.parse) -> frozenset[str] | None:
    """The names the module's imports bind for other code to read from it, which no migration
    deletes though the module never reads them: all of them (None) in a package's `__init__.py` or
    a module that turns its linter's unused-import check off on a line of its own (`# pylint:
    disable=unused-import`); else those bound on an import line that turns it off (`# noqa: F401`).
    `parse`: the caller's (`parsing.parse` shares its trees)."""
    if filename.replace("\\", "/").rpartition("/")[2] == "__init__.py":
        return None
    if "unused-import" not in source and "F401" not in source:
        return frozenset()
    lines = source.splitlines()
    if any(line.lstrip().startswith("#") and "unused-import" in line for line in lines):
        return None
    out: set[str] = set()
    for node in import_statements(parse(source)):
        if any("unused-import" in line or "F401" in line for line in lines[node.lineno - 1 : node.end_lineno]):
            out.update(imported_names(node))
    return frozenset(out)
