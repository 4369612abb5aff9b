"""Whether a program is written for TensorFlow 1.x, not TF 2.x code that reaches for tf.compat.v1.

A TF 1.x program spells TF1-only API on plain `tensorflow` (`tf.contrib`, `tf.Session`,
`tf.logging`, `tf.train.AdamOptimizer`, ...): there, a bare `tf.estimator.DNNClassifier` is the
TF1 (v1) canned estimator, and `tfmigrate verify` runs the original with `tensorflow` as
`tensorflow.compat.v1`. A project is TF 1.x when any of its files is: a model module that only
spells `tf.estimator.X` is TF 1.x when the trainer beside it uses `tf.contrib`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

from .names import ast_dotted

# TF1's `tf.losses` / `tf.metrics` functions whose names TF2's Keras-based modules of the same name
# never had (TF2's `tf.losses.mean_squared_error` and `tf.metrics.mean_absolute_error` are Keras's,
# with another signature: not telling).
_TF1_LOSSES = (
    "absolute_difference|add_loss|compute_weighted_loss|cosine_distance|get_losses|get_regularization_losses?|"
    "get_total_loss|hinge_loss|huber_loss|log_loss|mean_pairwise_squared_error|sigmoid_cross_entropy|"
    "softmax_cross_entropy|sparse_softmax_cross_entropy"
)
_TF1_METRICS = (
    "accuracy|auc|average_precision_at_k|false_negatives\\w*|false_positives\\w*|true_negatives\\w*|"
    "true_positives\\w*|mean|mean_cosine_distance|mean_iou|mean_per_class_accuracy|mean_relative_error|mean_tensor|"
    "percentage_below|precision\\w*|recall\\w*|root_mean_squared_error|sensitivity_at_specificity|"
    "sparse_average_precision_at_k|sparse_precision_at_k|specificity_at_sensitivity"
)
_TF1_ONLY = re.compile(
    r"\btf\.(contrib|flags|app\.run|Session|InteractiveSession|placeholder|layers\.\w+|logging\.\w+|gfile|"
    r"train\.\w*Optimizer|variable_scope|get_variable|to_float|to_int32|random_normal|truncated_normal|"
    r"data\.Iterator\.from_(?:structure|string_handle)|"
    rf"losses\.(?:{_TF1_LOSSES})|metrics\.(?:{_TF1_METRICS}))\b"
)
_COMPAT_IMPORT = re.compile(r"^\s*import\s+tensorflow\.compat\.v1\s+as\s+tf\b", re.M)
_CONTRIB_IMPORT = re.compile(r"^\s*(from\s+tensorflow\.contrib\b|import\s+tensorflow\.contrib\b)", re.M)
# `from tensorflow import placeholder, Session` / `from tensorflow.train import AdamOptimizer`: TF1's
# names imported as names (an ImportError on TF2), the parenthesized list or the rest of the line.
_TF1_FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+tensorflow(?:[ \t]+import[ \t]+(?:\([^)]*?|[^\n(]*?)\b(?:contrib|flags|app|Session|"
    r"InteractiveSession|placeholder|layers|logging|gfile|variable_scope|get_variable|to_float|to_int32|random_normal|"
    r"truncated_normal)|\.train[ \t]+import[ \t]+(?:\([^)]*?|[^\n(]*?)\b\w*Optimizer)\b",
    re.M,
)

# What every `_TF1_FROM_IMPORT` match holds, unanchored (a search led by a literal is fast).
_FROM_TENSORFLOW_IMPORT = re.compile(r"from[ \t]+tensorflow(?:[ \t]+import|\.train[ \t]+import)")

_TF1_ONLY_UNBOUNDED = re.compile(_TF1_ONLY.pattern.removeprefix(r"\b"))
_WORD_CHARACTER = re.compile(r"\w")


def _spells_tf1_only(source: str) -> bool:
    """`_TF1_ONLY.search(source)`, fourteen times faster: a regex led by `\b` cannot skip ahead to
    its literal `tf.`, so each match of the pattern without it is checked for a word character
    before it instead."""
    match = _TF1_ONLY_UNBOUNDED.search(source)
    while match is not None:
        start = match.start()
        if not start or not _WORD_CHARACTER.match(source, start - 1):
            return True
        match = _TF1_ONLY_UNBOUNDED.search(source, start + 1)  # (not past the match: `xtf.layers.tf.Session`)
    return False


def is_tf1_source(source: str, attributes: Callable[[], Iterable[ast.Attribute]] | None = None) -> bool:
    """`import tensorflow as tf` code using TF1-only API (or importing tensorflow.contrib); in code,
    not in its comments or docstrings (a migrated file's docstring may still name `tf.Session`).
    `attributes`: every Attribute node of the source's tree, asked for only when the text alone
    cannot tell (the engine passes its view's index; without it the source is parsed)."""
    # (each line-anchored pattern tried only where the text spells its literal part: a search of
    # `^\s*...` tries every line start, and most files hold none of them)
    if ("tensorflow.contrib" in source and _CONTRIB_IMPORT.search(source)) or (
        _FROM_TENSORFLOW_IMPORT.search(source) and _TF1_FROM_IMPORT.search(source)
    ):
        return True
    if ("tensorflow.compat.v1" in source and _COMPAT_IMPORT.search(source)) or not _spells_tf1_only(source):
        return False
    if attributes is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        nodes: Iterable[ast.AST] = (node for node in ast.walk(tree) if isinstance(node, ast.Attribute))
    else:
        nodes = attributes()
    for node in nodes:
        dotted = ast_dotted(node)  # type: ignore[arg-type]
        if dotted and _TF1_ONLY.match(dotted):
            return True
    return False


def is_tf1_project(sources: Iterable[str]) -> bool:
    return any(is_tf1_source(source) for source in sources)


# TF2's summary ops share their names with TF 1.x's (`tf.summary.scalar`), not their arguments:
# these keywords only TF2's take (its `data`, `step`, `description`; `buckets`, `encoding`).
_TF2_SUMMARY_OPS = frozenset({"scalar", "histogram", "image", "audio", "text"})
_TF2_SUMMARY_KEYWORDS = frozenset({"data", "step", "description", "buckets", "encoding"})


def written_for_tf2(view) -> bool:
    """Whether a file is TF 2.x code by what it spells on plain `tensorflow`: API that TF 1.x never
    had (`tf.summary.create_file_writer`, `tf.metrics.CategoricalAccuracy`: `tf_api.tf2_only_paths`),
    or TF2's summary ops called with what only they take (`tf.summary.scalar(name, x, step=step)`).
    A file of a TF 1.x project that is so is not read as TF 1.x code (`is_tf1_project` is the whole
    run's: a repository of many programs holds TF2 ones beside TF1 ones). `view`: its SourceView."""
    from .tf_api import tf2_only_paths  # (the table loads on first use)

    qualify, tf2_only = view.names.qualify_dotted, tf2_only_paths()
    for chain in view.chains:
        full = qualify(chain.dotted) or ""
        if full.startswith("tensorflow.") and not chain.in_import:
            parts = full[len("tensorflow."):].split(".")
            if any(".".join(parts[:end]) in tf2_only for end in range(1, len(parts) + 1)):
                return True
    for call in view.nodes_of(ast.Call):
        dotted = ast_dotted(call.func)
        full = qualify(dotted) if dotted else None
        if full and full.rpartition(".")[0] == "tensorflow.summary" and full.rpartition(".")[2] in _TF2_SUMMARY_OPS \
                and any(keyword.arg in _TF2_SUMMARY_KEYWORDS for keyword in call.keywords):
            return True
    return False
