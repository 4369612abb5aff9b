"""Import-alias table: resolves `tf1.estimator.tpu.TPUEstimator`-style chains to canonical TF1 API paths.

Full LibCST scope analysis is expensive (QualifiedNameProvider on every node costs more than
parsing), so tfmigrate keeps its own table: every `import`/`from ... import` in the file and every
module-level `alias = <resolvable chain>` assignment. A chain resolves to a dotted qualified name
(`tensorflow.compat.v1.layers.dense`), which `canonical()` folds into one spelling per TF1 API
symbol (`layers.dense`), whatever the import style.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

# Qualified-name prefixes that all mean "the TF1 API namespace", longest first.
_TF1_PREFIXES = (
    "tensorflow.compat.v1.",
    "tensorflow.",
)
# tf.contrib locations of TPU estimator pieces, folded onto their tf.compat.v1 homes.
_CONTRIB_FOLDS = {
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
}
_SLIM_PREFIXES = ("tensorflow.contrib.slim.", "tensorflow.contrib.layers.", "tf_slim.")
_ESTIMATOR_PKG_PREFIXES = (
    "tensorflow_estimator.compat.v1.estimator.",
    "tensorflow_estimator.estimator.",
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

    def _collect(self, module: cst.Module) -> None:
        for imp in _iter_imports(module):
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


def canonical_name(full: str) -> str | None:
    if full in _CONTRIB_FOLDS:
        return _CONTRIB_FOLDS[full]
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


def _iter_imports(module: cst.Module):
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
