"""TFM101: tf.compat.v1 / TF1 symbols -> their TF2 names, from TensorFlow's own export metadata.

Read top to bottom: the hand-written tables of what TFM101 rewrites besides TensorFlow's metadata
(removed namespaces, contrib moves, the symbols `tfmigrate.runtime` replaces, TF1 variable-scope
model code), `plan_chain` (what one dotted chain becomes), the rule's CST pass, its `ast` twin
`text_edits`, and the import helpers both use. The metadata lookups are `tfmigrate.tf_api`.

Why this file is over 800 lines: `text_edits` is the engine's fast path for this rule and must
give the CST pass's output byte for byte, so it sits in the same module as the `leave_*` methods
it mirrors and reads the same tables and import helpers; moving either pass, or the helpers they
share, into another module would put half of one rewrite out of sight of the other.
"""

from __future__ import annotations

import ast
import functools
import re

from tfmigrate.cst_on_demand import Transformer, Visitor, cst

from tfmigrate.hosted import hosted_import_home, hosted_symbol
from tfmigrate.names import (ast_dotted, canonical_name, chain_node, dotted_text, in_its_parens, is_chain, is_tf_module, iter_imports,
                             reexported, removed_home, removed_module)
from tfmigrate.rule import RUNTIME_ALIAS, Rule
from tfmigrate.parsing import index_by_type, parse, reparse_edited, statement_groups
from tfmigrate.textpass import SourceView, TextPlan, heeded_removals, name_ids
from tfmigrate.todos import REMOVED_ESTIMATOR
from tfmigrate.tf_api import (
    CallShape, api_table, kept_spelling, known_path, lookup, other_in_tf2, signature_sensitive, v1_only_member, v1_only_module,
    v1_plain_module, v1_present, v2_name, v2_spelled_path,
)
from tfmigrate.cst_walk import transform, walk

# Namespaces that are gone from TF >= 2.16 with Keras 3 even under tf.compat.v1.
_REMOVED = {
    "estimator": (REMOVED_ESTIMATOR, "migrate the Estimator program with it (TFM201/TFM301), or use `tfm.estimator`"),
    "layers": ("tf.compat.v1.layers raises under Keras 3", "use tf.keras.layers inside a Keras model"),
    "contrib": ("tf.contrib does not exist in TF2", "replace it with its TF2 counterpart (core TF, Keras, tf_slim or TensorFlow Addons) or your own code"),
}


_KERAS_ESTIMATOR_TODO = (
    "tf.keras.estimator was removed with tf.estimator in TF 2.16 (`{symbol}`): train and evaluate the Keras "
    "model itself (`model.fit`/`model.evaluate`, or `tfm.fit`/`tfm.evaluate` with the RunConfig for Estimator's "
    "model_dir checkpoints and steps) and drop the estimator, or keep this program on TF <= 2.15"
)


def _removed(head: str, symbol: str) -> str:
    """A removed module's TODO: what is gone (`symbol`) and what to do instead."""
    what, action = _REMOVED[head]
    return f"{what} (`{symbol}`): {action}"

# tf.contrib modules whose symbols live on in current TF under another path (canonical contrib
# prefix -> the TF2 prefix), taken where the path exists there (`tf2_api_paths.json`).
_CONTRIB_MOVED = {
    "contrib.data.": "data.experimental.",
    "contrib.cluster_resolver.": "distribute.cluster_resolver.",
}


# Hand-written: TF1 symbols with no TF2 export that tfmigrate.runtime replaces with TF1's
# semantics (canonical TF1 path -> the runtime's attribute path), and contrib ones whose TF2 home
# is a plain rename (-> "tf:" + the TF2 path). The generated table cannot know these.
_LOOKUP_FUNCTIONS = (
    "index_table_from_tensor", "index_table_from_file", "index_to_string_table_from_tensor",
    "index_to_string_table_from_file", "HashTable", "IdTableWithHashBuckets", "TextFileIdTableInitializer",
    "TextFileStringTableInitializer", "HasherSpec", "FastHashSpec", "StrongHashSpec",
)
RUNTIME_SYMBOLS: dict[str, str] = {
    **{f"contrib.lookup.{name}": f"lookup.{name}" for name in _LOOKUP_FUNCTIONS},
    # `tf.compat.v1.lookup` never exported these; TF1 programs that spelled them so (or `tf.lookup`)
    # ran under TF1's tf.contrib.lookup aliases.
    **{f"lookup.{name}": f"lookup.{name}" for name in _LOOKUP_FUNCTIONS},
    "contrib.lookup.KeyValueTensorInitializer": "tf:lookup.KeyValueTensorInitializer",
    "contrib.lookup.TextFileInitializer": "tf:lookup.TextFileInitializer",
    "contrib.lookup.TextFileIndex": "tf:lookup.TextFileIndex",
    "contrib.lookup.tables_initializer": "lookup.tables_initializer",
    "tables_initializer": "lookup.tables_initializer",
    "initializers.tables_initializer": "lookup.tables_initializer",
    # tf.contrib.training.HParams (and its module's own path) -> the runtime's HParams.
    "contrib.training.HParams": "HParams",
    "contrib.training.python.training.hparam.HParams": "HParams",
    "contrib.framework.nest": "tf:nest",
    # contrib.metrics' aliases of core TF (its streaming metrics are tf-slim's: `hosted._contrib_metrics_symbol`;
    # its confusion_matrix is TF1's, folded: `names._CONTRIB_FOLDS`)
    **{f"contrib.metrics.set_{name}": f"tf:sets.{name}" for name in ("difference", "intersection", "size", "union")},
    # tf.contrib.learn's mode keys are the strings Estimator's are ('train', 'eval', 'infer').
    "contrib.learn.ModeKeys.TRAIN": "estimator.ModeKeys.TRAIN",
    "contrib.learn.ModeKeys.EVAL": "estimator.ModeKeys.EVAL",
    "contrib.learn.ModeKeys.INFER": "estimator.ModeKeys.PREDICT",
    # tf.contrib.framework's checkpoint readers and contrib.training's checkpoints_iterator moved to
    # tf.train (checkpoint_utils) with the same arguments and behaviour.
    "contrib.framework.list_variables": "tf:train.list_variables",
    "contrib.framework.load_checkpoint": "tf:train.load_checkpoint",
    "contrib.framework.load_variable": "tf:train.load_variable",
    # contrib.training's training loop and evaluation helpers: TF 1.15's code, which tf-slim kept
    # (`tf_slim.training`, `tf_slim.train_eval`).
    **{
        f"contrib.training{module}.{name}": f"legacy.slim.training.{name}"
        for module in ("", ".python.training.training")
        for name in ("train", "create_train_op", "add_gradients_summaries", "clip_gradient_norms",
                     "clip_gradient_norms_fn", "multiply_gradients")
    },
    **{
        f"contrib.training{module}.{name}": f"legacy.slim.train_eval.{name}"
        for module in ("", ".python.training.evaluation")
        for name in ("evaluate_once", "evaluate_repeatedly", "get_or_create_eval_step", "wait_for_new_checkpoint",
                     "StopAfterNEvalsHook", "SummaryAtEndHook")
    },
    "contrib.framework.is_tensor": "tf:is_tensor",
    "contrib.eager.in_eager_mode": "tf:executing_eagerly",  # (TF 1.x's deprecated alias of it)
    # tf.contrib.util's tensor_util functions, which TF2 exports at its top (same arguments)
    "contrib.util.make_ndarray": "tf:make_ndarray",
    "contrib.util.make_tensor_proto": "tf:make_tensor_proto",
    "contrib.util.constant_value": "tf:get_static_value",
    "contrib.training.checkpoints_iterator": "tf:train.checkpoints_iterator",
    "contrib.training.python.training.evaluation.checkpoints_iterator": "tf:train.checkpoints_iterator",
    # (slim's `slim.initializers.X` spelling too.)
    **{
        f"contrib.layers.{module}{name}": f"initializers.{name}"
        for module in ("", "initializers.")
        for name in ("variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d")
    },
}


def runtime_symbol(full: str) -> tuple[str, str] | None:
    """(replacement head, rest) for a chain whose longest canonical prefix is in RUNTIME_SYMBOLS."""
    canonical = canonical_name(full)
    if canonical is None:
        return None
    parts = canonical.split(".")
    for end in range(len(parts), 0, -1):
        target = RUNTIME_SYMBOLS.get(".".join(parts[:end]))
        if target is not None:
            return target, ".".join(parts[end:])
    return None


# A module that builds a TF1 graph with variable scopes and no Estimator of its own (BERT's
# `modeling.py`): the migrated model_fn runs its code inside `tfm.tf1.VariableScopeLayer`, whose
# variable store these symbols work under unchanged, so they stay `tf.compat.v1.*` without a TODO;
# the `tf.layers` / contrib layers it calls become the runtime's functional forms (same variables).
_SCOPE_MARKERS = frozenset({"get_variable", "variable_scope"})
_SCOPE_SYMBOLS = frozenset(
    {"get_variable", "variable_scope", "get_variable_scope", "AUTO_REUSE", "VariableScope"}
)
_SCOPE_LAYERS = {
    "layers.dense": "dense",
    "layers.conv2d": "conv2d",
    "layers.dropout": "dropout",
    "contrib.layers.layer_norm": "layer_norm",  # and slim's (`tf_slim.layer_norm`)
}


def is_scope_module(symbols: set[str]) -> bool:
    """Whether a file whose canonical symbols are `symbols` is TF1 variable-scope model code with no
    Estimator of its own (see `_SCOPE_MARKERS`)."""
    return bool(symbols & _SCOPE_MARKERS) and not any(symbol.startswith("estimator") for symbol in symbols)


def _scope_symbol(symbol: str) -> bool:
    return symbol in _SCOPE_SYMBOLS or (symbol.endswith("_initializer") and "." not in symbol)


def _contrib_home(folded: str) -> str | None:
    """The current-TF path of a `contrib.*` symbol that moved (tf.data.experimental, tf.compat.v1.tpu, ...)."""
    for prefix, home in _CONTRIB_MOVED.items():
        if folded.startswith(prefix):
            path = home + folded[len(prefix):]
            head = ".".join(path.split(".")[: home.count(".") + 1])
            return path if head in api_table()[3] else None
    if folded.startswith("contrib.tpu."):
        found = lookup("tpu." + folded[len("contrib.tpu."):])
        if found is not None and v1_present(found[0]):
            return "compat.v1." + "tpu." + folded[len("contrib.tpu."):]
    return None


@functools.cache
def _tf2_module(path: str) -> bool:
    """Whether current TF's `tf.<path>` is a module: its path list holds names under it."""
    prefix = path + "."
    return any(listed.startswith(prefix) for listed in api_table()[3])


_TF_PATH = re.compile(r"tensorflow(?:\.[A-Za-z_]\w*)+")


@functools.lru_cache(maxsize=256)
def string_path_todo(value: str) -> str | None:
    """The TODO for a string that is a TF 1.x API path current TF lacks (`"tensorflow.layers.dense"`,
    a default a program hands `pydoc.locate` or `importlib`): a lookup by that name fails now; else
    None (a path current TF has, its implementation package's, Keras's, or no API path at all)."""
    if not _TF_PATH.fullmatch(value):
        return None
    path = value[len("tensorflow."):]
    if path.split(".")[0] in ("python", "keras", "compat", "core", "lite", "tools", "compiler") or path in api_table()[3]:
        return None
    if _tf2_module(path) or not (path.startswith("contrib.") or known_path(path)):
        return None
    return (f"`{value}` (named in a string) is not in current TF: a lookup by this name (`pydoc.locate`, "
            "`importlib`, a config) fails on TF2; name its TF2 counterpart")


def _ast_literal(node: ast.expr) -> bool:
    """A value that is never None: a string or number, an f-string, an arithmetic or `%`/`+`
    result, a string literal's method's (`"layer_{}".format(i)`)."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)
    return isinstance(node, (ast.JoinedStr, ast.BinOp))


def _cst_literal(node: cst.BaseExpression) -> bool:
    """`_ast_literal` of a CST expression."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return isinstance(node.func.value, (cst.SimpleString, cst.ConcatenatedString))
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float,
                             cst.Imaginary, cst.BinaryOperation))


@functools.lru_cache(maxsize=None)
def _tf2_lacks_members_of(path: str) -> bool:
    """Whether TF 1.x's module `tf.<path>` has members current TF's `tf.<path>` lacks (`train`:
    `exponential_decay`; `nn`: `rnn_cell`), so that the module read as a value (`getattr(tf.train,
    name)`, `mock.patch.object(tf.train, ...)`) is TF1's `tf.compat.v1.<path>`."""
    prefix, current = path + ".", api_table()[3]
    return any(symbol.startswith(prefix) and symbol not in current for symbol in api_table()[0])


@functools.lru_cache(maxsize=None)
def plan_chain(full: str, tf: str, scope_module: bool = False, tf1_program: bool = False) -> tuple[str | None, str | None]:
    """What TFM101 does with a chain that resolves to `full`: (new spelling or None, TODO or None);
    `scope_module`: the file is TF1 variable-scope model code (`is_scope_module`); `tf1_program`:
    a TF 1.x program (`tfmigrate.tf1_program`), whose `tf.X` is the TF1 function even where TF2
    has another function of the same name (`tf.summary.scalar`, `tf.nn.dropout`): that stays
    `tf.compat.v1.X`."""
    if full.startswith("tensorflow.compat.v1.compat.v1."):
        # `tf.compat.v1.X` under `import tensorflow.compat.v1 as tf`: the same `tf.compat.v1.X`.
        full = "tensorflow.compat.v1." + full[len("tensorflow.compat.v1.compat.v1."):]
    if scope_module and canonical_name(full) in _SCOPE_LAYERS:
        return f"{RUNTIME_ALIAS}.tf1.{_SCOPE_LAYERS[canonical_name(full)]}", None  # type: ignore[index]
    hosted = _hosted(full, tf1_program)
    if hosted is not None:
        head, rest = hosted
        head = f"{tf}.{head[3:]}" if head.startswith("tf:") else head
        return head + (f".{rest}" if rest else ""), None
    v2_path = v2_spelled_path(full)
    if v2_path is not None:
        # `tf.compat.v2.summary.record_if` (TF2 API spelled from TF1 code): plain TF2 now. But a
        # TF 1.x program's bare `tf.summary.scalar` is TF1's function (below), so TF2's keeps
        # `tf.compat.v2.summary.scalar`: a run reading the plain spelling as TF 1.x code would take
        # it for TF1's. So in any file: its migration (`tf.compat.v1.placeholder`) no longer reads
        # as TF 1.x code, and a second run would respell it.
        found = lookup(v2_path)
        if found is not None and other_in_tf2(found[0]) and v1_present(found[0]):
            return f"{tf}.compat.v2.{v2_path}", None
        if found is None and _tf2_lacks_members_of(v2_path):
            return f"{tf}.compat.v2.{v2_path}", None  # TF2's module as a value, which TF 1.x code reads as TF1's
        return f"{tf}.{v2_path}", None
    replaced = runtime_symbol(full)
    if replaced is not None:
        target, rest = replaced
        member = f"{target[3:]}.{rest.partition('.')[0]}" if target.startswith("tf:") and rest else None
        if member is not None and member not in api_table()[3] and _tf2_module(target[3:]):
            # A contrib module whose TF2 home, a module, lacks this name (`contrib.framework.nest.is_sequence`:
            # TF2's `tf.nest` has no `is_sequence`); a class's members are not listed, and stay.
            name, spelled = rest.partition(".")[0], f"tf.{canonical_name(full)}"
            return None, f"TF2's `tf.{target[3:]}` has no `{name}` (`{spelled}`): rewrite it with what `tf.{target[3:]}` has"
        head = f"{tf}.{target[3:]}" if target.startswith("tf:") else f"{RUNTIME_ALIAS}.{target}"
        return head + (f".{rest}" if rest else ""), None
    if full.startswith("tensorflow.compat.v1.contrib."):
        # `tf.contrib` under `import tensorflow.compat.v1 as tf`: the same removed namespace (and
        # once that import is respelled `import tensorflow as tf`, the next run sees it so).
        full = "tensorflow." + full[len("tensorflow.compat.v1."):]
    if full.startswith("tensorflow.compat.v1."):
        path, bare = full[len("tensorflow.compat.v1."):], False
    elif full.startswith("tensorflow.") and not full.startswith(("tensorflow.compat.", "tensorflow.contrib")):
        path, bare = full[len("tensorflow."):], True
    elif full.startswith("tensorflow.contrib."):
        folded = canonical_name(full)
        home = _contrib_home(folded) if folded is not None else None
        if home is not None:
            return f"{tf}.{home}", None
        if folded is None or folded.startswith("contrib."):
            return None, _removed("contrib", full.replace("tensorflow.", "tf.", 1))
        path, bare = folded, False
    else:
        return None, None
    if path == "python" or path.startswith("python."):
        # TF's implementation package through compat (`from tensorflow.compat.v1.python.X import Y`,
        # respelled `tensorflow.python.X` by leave_ImportFrom): left; read off `tf`, it has a TODO.
        return None, None
    if path == "keras.estimator" or path.startswith("keras.estimator."):
        # Keras's bridge to Estimator went with it (TF 2.16): nothing hosts a Keras model as one.
        return None, _KERAS_ESTIMATOR_TODO.format(symbol=f"tf.{path}")
    if path.startswith("keras."):
        return None, None
    found = lookup(path)
    if found is not None and found[1] and (tf1_program or not bare) and v1_present(found[0]) \
            and v1_only_member(found[0], found[1].partition(".")[0]):
        return f"{tf}.compat.v1.{path}", None  # TF1's class's own member (`TFLiteConverter.from_session`)
    if bare and tf1_program and found is not None and other_in_tf2(found[0]) and v1_present(found[0]):
        return f"{tf}.compat.v1.{path}", None  # TF 1.x code: `tf.summary.scalar` is TF1's
    if found is None and (tf1_program or not bare):
        plain = v1_plain_module(path)
        if plain is not None and plain not in api_table()[3]:
            return f"{tf}.compat.v1.{path}", None  # `tf.test.mock.patch`: TF1's plain module, kept under compat.v1
        if not known_path(path) and path.split(".")[0] != "estimator":  # (Estimator's: its own TODO, below)
            # Not TF2's, and not a name TF 1.x exported (`tf.merge_all_summaries`, pre-1.0; a module of
            # TF 1.x's package TF2 dropped): an AttributeError on current TF, whatever it was before.
            return (None if bare else f"{tf}.{path}"), (
                f"`tf.{path}` is in neither TF2's API nor TF 1.x's exported API: rewrite it with TF2's")
    if bare and found is None and v1_only_module(path.split(".")[0]):
        # `tf.logging.__dict__`: a TF1 module TF2 lacks, used as a value (its functions are symbols).
        return f"{tf}.compat.v1.{path}", None
    if bare and found is None and _tf1_only(path.split(".")[0]):
        bare = False  # `from tensorflow import layers`: TF1's module, gone from plain TF2
    if bare and found is None and path.split(".")[0] == "estimator":
        # TF2-spelled code's Estimator name the hosted namespace lacks (`tf.estimator.BoostedTreesClassifier`):
        # gone with tf.estimator from TF 2.16.
        return f"{tf}.{path}", _removed("estimator", f"tf.{path}")
    if bare and tf1_program and found is None and _tf2_lacks_members_of(path):
        return f"{tf}.compat.v1.{path}", None  # TF 1.x code's module as a value: TF1's members
    if bare and (found is None or found[0] in api_table()[3]):
        return None, None  # `import tensorflow as tf; tf.X` that is already valid TF2
    if found is None:
        if v1_only_module(path.split(".")[0]):
            return f"{tf}.compat.v1.{path}", None  # `tf.compat.v1.logging.__dict__` stays
        if path.split(".")[0] == "estimator":
            # An Estimator name the hosted namespace lacks (`estimator.tpu.experimental.EmbeddingConfigSpec`).
            return f"{tf}.compat.v1.{path}", _removed("estimator", f"tf.compat.v1.{path}")
        if _tf2_lacks_members_of(path):
            return f"{tf}.compat.v1.{path}", None  # TF1's module as a value (`getattr(tf.compat.v1.train, name)`)
        # A module (`tf.nn`) or something the table does not know: same spelling under tf.
        return f"{tf}.{path}", None
    symbol, rest = found
    head = symbol.split(".")[0]
    if tf1_program and other_in_tf2(symbol) and v1_present(symbol):
        return f"{tf}.compat.v1.{path}", None
    target = v2_name(symbol)
    if target is not None:
        return f"{tf}.{target}" + (f".{rest}" if rest else ""), None
    if scope_module and _scope_symbol(symbol) and not rest:
        todo = None
    elif v1_present(symbol):
        # TF1 API still exported by current TF: it runs as it did (graph-mode code under the
        # hosted estimator, or anywhere TF1 semantics hold).
        todo = None
    elif head in _REMOVED:
        todo = _removed(head, f"tf.{symbol}")
        if bare and head == "estimator":
            # `tf.estimator.X` in TF2 code is the v2 class (v2 head, Keras optimizers), which
            # `tf.compat.v1.estimator.X` is not: keep the spelling, only the TODO is news.
            return f"{tf}.{path}", todo
    else:
        todo = f"`tf.compat.v1.{symbol}` has no TF2 equivalent; rewrite this without it"
    return f"{tf}.compat.v1.{path}", todo


@functools.cache
def _tf1_only(name: str) -> bool:
    """Whether `tf.<name>` is TF1's API (a symbol or a module of it) that no TF 2.x had (`layers`,
    `gfile`, `logging`; not `estimator`, which TF2 had until 2.16)."""
    symbols, _, _, current = api_table()
    tf2 = {path.split(".")[0] for path in symbols.values() if path} | {path.split(".")[0] for path in current}
    return name not in tf2 and any(path == name or path.startswith(name + ".") for path in symbols)


def _hosted(full: str, tf1_program: bool) -> tuple[str, str] | None:
    """`hosted_symbol` of a qualified chain (`tf.compat.v2.estimator.X` included)."""
    canonical = canonical_name(full)
    if canonical is not None and (canonical == "compat.v2.estimator" or canonical.startswith("compat.v2.estimator.")):
        canonical = canonical[len("compat.v2."):]
    return hosted_symbol(canonical, tf1_program) if canonical else None


class CompatV1ToV2(Rule):
    """Spell TF1 API symbols the TF2 way: `tf.compat.v1.nn.relu` -> `tf.nn.relu`, imports included.

    The mapping is TensorFlow's own: the v1 and v2 export names every symbol carried in TF 2.15,
    the last release with both (`rules/data/tf_api_v1_to_v2.json`, regenerated by
    `scripts/gen_api_table.py`), minus the v2 names that no longer resolve on current TF. A symbol
    with no TF2 name is spelled `tf.compat.v1.X` and marked with a TODO; `import
    tensorflow.compat.v1 as tf` becomes `import tensorflow as tf`. Runs after the structural rules,
    which consume the Estimator-era symbols first.

    A function whose TF2 name reads its arguments otherwise (`nn.dropout`'s second argument is
    TF1's keep_prob, TF2's rate; tf_upgrade_v2's renames that reorder them, `nn.conv2d_backprop_input`
    -> `nn.conv2d_transpose`) stays `tf.compat.v1.X` where a call passes them so, and where it is
    referenced uncalled (`partial(tf.nn.dropout, keep_prob=...)`), since any call may come. A TF2
    function a TF 1.x program calls through `tf.compat.v2` keeps that spelling where TF1's would
    read the call otherwise. A TF1 name imported as a name (`from tensorflow import placeholder`,
    `from tensorflow.train import AdamOptimizer`: an ImportError on TF2), or one whose TF2 function
    differs as above, is imported from `tensorflow.compat.v1` instead. A second run changes nothing.
    """

    CODE = "TFM101"
    DECLINES = (
        ("`tf.contrib.*`: gone in TF2, with no TF2 name at the same place",
         "replace it with its TF2 counterpart (core TF, Keras, tf_slim or TensorFlow Addons) or your own code"),
        ("`tf.estimator.*` left after the structural rules (TF 2.16 removed it)",
         "migrate the Estimator program with TFM201/TFM301, or use the hosted tier's `tfm.estimator`"),
        ("`tf.keras.estimator.model_to_estimator`: removed with tf.estimator (TF 2.16)",
         "train and evaluate the Keras model itself (`model.fit`, or `tfm.fit`/`tfm.evaluate` with the RunConfig)"),
        ("`tf.compat.v1.layers` outside TF1 variable-scope model code (it raises under Keras 3)",
         "use `tf.keras.layers` inside a Keras model"),
        ("a TF1 symbol with no TF2 equivalent that current TF no longer provides",
         "rewrite that code without it (TF2 guide: https://www.tensorflow.org/guide/migrate)"),
    )
    SUMMARY = "tf.compat.v1.* / TF1 symbols -> TF2 names (TensorFlow export metadata); v1-only ones get a TODO"
    SAFE = True
    RUNS_AFTER = ("TFM102", "TFM201", "TFM301", "TFM302", "TFM401")

    def should_run(self) -> bool:
        names = self.ctx.names
        return bool(names.tf1_roots) or any(
            full.startswith(("tensorflow.compat.v1.", "tensorflow.contrib")) for full in names.aliases.values()
        ) or bool(names.tf_roots) or any(
            # `from tensorflow import logging`: TF1's, which plain TF2 lacks (an ImportError there)
            full.count(".") == 1 and full.startswith("tensorflow.") and _tf1_only(full.split(".")[1])
            for full in names.aliases.values()
        ) or any(removed_module(full) for full in names.aliases.values())

    _scope_module = False

    def visit_Module(self, node: cst.Module) -> None:
        source = self.ctx.unchanged_source()
        if source is not None:  # the CST is the pass's input: its symbols are known, no code to generate
            self._scope_module = is_scope_module(set(self.ctx.source_symbols or ()))
            self._store_fns = _store_functions(node) if "VariableScopeLayer" in source else set()
        else:
            code = self.ctx.code_of(node)  # (the code once is cheaper than walking the CST for a name)
            self._scope_module = self._scoped(lambda: SourceView(code, parse(code), names=self.ctx.names))
            self._store_fns = _store_functions(node) if "VariableScopeLayer" in code else set()
        self._fn_stack: list[str] = []
        self._kept: dict[int, str | None] = {}  # id(func) -> the spelling a call keeps (`kept_spelling`)
        self._dead_aliases = _dead_module_aliases(node, self.ctx.names, self.ctx.tf2_alias, self.ctx.exported)
        # `from tensorflow.contrib.X import Y`: locals that name removed contrib objects (their bare
        # uses get a TODO), and the imports the runtime replaces whole (rewritten in leave_ImportFrom).
        self._contrib_locals: dict[str, str] = {}
        self._in_import = 0
        self._not_references: set[int] = set()  # ids of Names that are attribute/keyword/parameter/def names
        self._stored: set[int] = set()  # ids of chains assigned to or deleted (`_store_targets`)
        # `ds.output_types`: read through `tf.compat.v1.data.get_output_types(ds)` unless the module
        # gives something of its own such an attribute (`_DATASET_ATTRIBUTE_READ` finds it)
        self._dataset_reads = _reads_dataset_attributes(source if source is not None else code)
        self._in_line = False  # inside a SimpleStatementLine (not a one-line suite: `if x: import y`)
        self._split: dict[int, cst.ImportFrom] = {}  # a TF2 import -> the compat.v1 one split off it
        for imp in _contrib_from_imports(node):
            if _runtime_import(imp) is None:
                module = dotted_text(imp.module)  # type: ignore[arg-type]
                for alias in imp.names:  # type: ignore[union-attr]
                    local = dotted_text(alias.asname.name) if alias.asname else dotted_text(alias.name)  # type: ignore[arg-type]
                    self._contrib_locals[local] = f"{module}.{dotted_text(alias.name)}"

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """A `from tensorflow.contrib... import x` (or from a TF1 estimator module) whose `x` is still
        used after the respelling fails (the whole module, or the function holding it) at import
        on TF2: its own TODO (the uses have theirs)."""
        removed = _removed_module_imports(updated)
        if not removed and not _has_removed_imports(original):
            return updated
        code = self.ctx.code_of(updated)
        used = {node.id for node in index_by_type(parse(code)).get(ast.Name, ())}  # type: ignore[attr-defined]
        kept = reexported(self.ctx.filename, self.ctx.source or code, parse)
        for module, obj, asname in removed:
            # An import of a module current TF lacks binding a name nothing reads (any more): an
            # ImportError for nothing, so it goes (another module importing the name keeps it). One
            # the module imports for others to read (`reexported`) gets its TODO instead.
            local = asname or obj or module
            if local in used or local in self.ctx.exported:
                continue
            if kept is None or local in kept:
                used.add(local)
                continue
            self.ctx.drop_import_if_unused(module, obj, asname)
            self.mark_changed()
        if not _has_removed_imports(original):
            return updated
        return transform(updated, _ContribImportTodos(self, used, self.ctx.exported))

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import += 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import += 1

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self._in_line = True
        return id(node) not in self._dead_aliases

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel | cst.FlattenSentinel:
        self._in_line = False
        if id(original) in self._dead_aliases:
            # `slim = tf.contrib.slim` once the migration replaced every `slim.*` call.
            self.mark_changed()
            return cst.RemoveFromParent()
        split = [self._split.pop(id(statement)) for statement in updated.body if id(statement) in self._split]
        if split:  # `from tensorflow import float32, placeholder`: placeholder from tensorflow.compat.v1
            return cst.FlattenSentinel([updated, *(cst.SimpleStatementLine(body=[imp]) for imp in split)])
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._fn_stack.append(node.name.value)
        self._not_references.add(id(node.name))  # a def's own name reads no import
        return True

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._not_references.add(id(node.name))
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._fn_stack.pop()
        return updated

    def _under_store(self) -> bool:
        """Inside a function a `tfm.tf1.VariableScopeLayer` runs (or one such a function calls)."""
        return self._scope_module or any(name in self._store_fns for name in self._fn_stack)

    def _scoped(self, view) -> bool:
        """TF1 variable-scope model code no structural rule migrated (`is_scope_module`)."""
        if any(code in self.ctx.applied for code in self.RUNS_AFTER if code != "TFM102"):
            return False
        return is_scope_module(view().symbols())

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if "tensorflow." in node.value:
            value = node.evaluated_value
            todo = string_path_todo(value) if isinstance(value, str) else None
            if todo is not None:
                self.todo(todo)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # A dotted chain is handled whole, in leave_Attribute; `f(x).attr` is descended into
        # (`tf.train.AdamOptimizer(lr).minimize`, `ds.make_one_shot_iterator().get_next`).
        if is_chain(node):
            return False
        self._not_references.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_references.add(id(node.keyword))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._stored.update(_store_targets(*(target.target for target in node.targets)))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stored.update(_store_targets(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._stored.update(_store_targets(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        self._stored.update(_store_targets(node.target))

    def visit_For(self, node: cst.For) -> None:
        self._stored.update(_store_targets(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._stored.update(_store_targets(node.target))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._stored.update(_store_targets(node.asname.name))

    def visit_Param(self, node: cst.Param) -> None:
        self._not_references.add(id(node.name))

    def visit_Call(self, node: cst.Call) -> bool:
        full = self.ctx.names.qualify(node.func) if isinstance(node.func, cst.Attribute) else None
        if full is not None and signature_sensitive(full):
            shape = CallShape(
                sum(1 for arg in node.args if arg.keyword is None and not arg.star),
                frozenset(arg.keyword.value for arg in node.args if arg.keyword is not None),
                any(arg.star for arg in node.args),
                bool(node.args) and node.args[0].keyword is None and not node.args[0].star and _cst_literal(node.args[0].value),
            )
            self._kept[id(node.func)] = kept_spelling(full, self.ctx.tf2_alias, shape)
        return True

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        full = self.ctx.names.qualify(original)
        if full is None and self._dataset_reads and not self._in_import:
            if isinstance(original.value, cst.Attribute) and is_chain(original.value):
                # `ds.output_shapes.items`: visit_Attribute left the chain's inner attributes unvisited
                value = self.leave_Attribute(original.value, updated.value)
                if value is not updated.value:
                    updated = updated.with_changes(value=value)
            if original.attr.value in _DATASET_ATTRIBUTES and id(original) not in self._stored and not _names_self(original.value):
                # `ds.output_shapes`: a property of TF1's DatasetV1 and Iterator only; the tf.compat.v1.data
                # function reads it off any dataset or iterator (TF2's have none).
                self.mark_changed()
                target = chain_node(f"{self.ctx.need_tf2()}.compat.v1.data.get_{original.attr.value}")
                return in_its_parens(cst.Call(func=target, args=[cst.Arg(updated.value)]), updated)
        if full is None or (id(original) in self._stored and _patches_tf(full)):
            return updated
        private = None if self._in_import else private_package_read(dotted_text(original), self.ctx.names)
        if private is not None:
            self.todo(private)
            return updated
        if signature_sensitive(full):
            # (called: the spelling `visit_Call` found for the call; else any call may come)
            kept = self._kept[id(original)] if id(original) in self._kept else kept_spelling(full, self.ctx.tf2_alias, None)
            if kept is not None:
                return self._emit(updated, kept)
        return self._rewrite(full, updated)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        # Bare names bound by `from tensorflow.compat.v1 import X` are left to the import's owner;
        # one bound by `from tensorflow.contrib.X import Y` names something TF2 lacks.
        full = self._contrib_locals.get(original.value) if not self._in_import else None
        if full is None or id(original) in self._not_references:
            return updated
        text, todo = plan_chain(full, self.ctx.tf2_alias, self._under_store(), self.ctx.tf1_program)
        if text is not None and todo is None and text.startswith((RUNTIME_ALIAS + ".", self.ctx.tf2_alias + ".")):
            # `arg_scope` from contrib.framework -> tfm.legacy.slim's; `TPUClusterResolver` from
            # contrib.cluster_resolver -> tf.distribute.cluster_resolver's
            return self._emit(updated, text)
        self.todo(_removed("contrib", f"{original.value}`: `{full.replace('tensorflow.', 'tf.', 1)}"))
        return updated

    def _rewrite(self, full: str, node: cst.BaseExpression) -> cst.BaseExpression:
        text, todo = plan_chain(full, self.ctx.tf2_alias, self._under_store(), self.ctx.tf1_program)
        if todo is not None:
            self.todo(todo)
        if text is None:
            return node
        return self._emit(node, text)

    def _emit(self, node: cst.BaseExpression, text: str) -> cst.BaseExpression:
        if self.ctx.names.qualify(node) is not None and dotted_text(node) == text:
            return node
        self.mark_changed()
        if text.startswith(RUNTIME_ALIAS + "."):
            self.ctx.need_runtime()
        else:
            self.ctx.need_tf2()
        return in_its_parens(chain_node(text), node)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        # `dataset.make_one_shot_iterator()`: a method of TF1's DatasetV1 only; the tf.compat.v1.data
        # function takes any dataset.
        func = updated.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _ITERATOR_METHODS
            and not updated.args
            and self.ctx.names.qualify(original.func) is None
        ):
            self.mark_changed()
            target = chain_node(f"{self.ctx.need_tf2()}.compat.v1.data.{func.attr.value}")
            return in_its_parens(cst.Call(func=target, args=[cst.Arg(func.value)]), updated)
        return updated

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self._in_import -= 1
        names = []
        changed = False
        for alias in updated.names:
            full = dotted_text(alias.name)
            local = dotted_text(alias.asname.name) if alias.asname else None  # type: ignore[arg-type]
            if (package := private_module(full)) is not None:
                alias = alias.with_changes(name=chain_node(package))  # type: ignore[arg-type]
                changed = True
            elif full in ("tensorflow.compat.v1", "tensorflow.compat.v2") and local == self.ctx.tf2_alias:
                alias = alias.with_changes(name=cst.Name("tensorflow"))
                changed = True
            elif full in ("tensorflow.compat.v1", "tensorflow.compat.v2") and local:
                self.ctx.drop_import_if_unused(full, asname=local)
            elif full in ("tf_slim", "tensorflow.contrib") or full.startswith(("tf_slim.", "tensorflow.contrib.")):
                # slim/contrib layers the migration replaced leave their import unused.
                self.ctx.drop_import_if_unused(full, asname=local)
            names.append(alias)
        if changed:
            self.mark_changed()
            return updated.with_changes(names=names)
        return updated

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._in_import -= 1
        if updated.module is None or isinstance(updated.names, cst.ImportStar) or updated.relative:
            return updated
        module = dotted_text(updated.module)
        replaced = _runtime_import(updated)
        if replaced is not None:
            # `from tensorflow.contrib.training import HParams` -> `from tfmigrate.runtime import HParams`
            self.mark_changed()
            return replaced
        if (package := private_module(module)) is not None:
            # `from tensorflow.compat.v1.python.saved_model import loader`: no such module on TF2
            self.mark_changed()
            return updated.with_changes(module=chain_node(package))  # type: ignore[arg-type]
        if _v1_module_as_alias(module, [(dotted_text(a.name), a.asname and dotted_text(a.asname.name)) for a in updated.names],
                               self.ctx.tf2_alias):
            # `from tensorflow.compat import v1 as tf`: TF1's module under the name migrated code
            # gives TF2's, as `import tensorflow.compat.v1 as tf` (leave_Import)
            self.mark_changed()
            return cst.Import(names=[cst.ImportAlias(name=cst.Name("tensorflow"), asname=updated.names[0].asname)],
                              semicolon=updated.semicolon)
        if not is_tf_module(module):
            return updated
        home = compat_v1_module(module)
        moved = [alias for alias in updated.names if home and self._imported_from_v1(module, dotted_text(alias.name))]  # type: ignore[union-attr]
        for alias in updated.names:
            obj = dotted_text(alias.name)
            local = dotted_text(alias.asname.name) if alias.asname else None  # type: ignore[arg-type]
            self.ctx.drop_import_if_unused(home if alias in moved else module, obj, local)  # type: ignore[arg-type]
        if not moved:
            return updated
        # `from tensorflow import placeholder`: an ImportError on TF2; TF1's from tensorflow.compat.v1
        self.mark_changed()
        kept = [alias for alias in updated.names if alias not in moved]  # type: ignore[union-attr]
        if not self._in_line or all(_v1_symbol(f"{module}.{dotted_text(alias.name)}") for alias in kept) or "#" in _code(updated):
            # (names compat.v1 has as they are, `float32`; or comments among the names, kept so)
            return updated.with_changes(module=chain_node(home))  # type: ignore[arg-type]
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        result = updated.with_changes(names=kept)
        last = moved[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self._split[id(result)] = cst.ImportFrom(
            module=chain_node(home),  # type: ignore[arg-type]
            names=[alias.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for alias in moved[:-1]] + [last],
        )
        return result

    def _imported_from_v1(self, module: str, obj: str) -> bool:
        """`from <module> import <obj>` names what TFM101 spells `tf.compat.v1.X` (`placeholder`,
        `train.AdamOptimizer`; in a TF 1.x program `summary.scalar`, and `nn.dropout` since any
        call may pass keep_prob): absent from TF2 there, or another function."""
        full = f"{module}.{obj}"
        symbol = _v1_symbol(full)
        if symbol is None:
            return False  # a module (its chains are respelled), or nothing compat.v1 still has
        if signature_sensitive(full) and kept_spelling(full, "tf", None) is not None:
            return True
        text, todo = plan_chain(full, "tf", False, self.ctx.tf1_program)
        return todo is None and text is not None and text.startswith("tf.") and text != f"tf.{symbol}"

    # -- the same rule on `ast` alone (engine fast path; must match the CST pass byte for byte) --
    def text_edits(self, view: SourceView) -> TextPlan | None:
        names, tf = self.ctx.names, self.ctx.tf2_alias
        scope_module = self._scoped(lambda: view)
        if "VariableScopeLayer(" in view.source:
            return None  # functions run under a variable store: the CST pass knows which
        dead = _dead_module_alias_spans(view, names, tf, self.ctx.exported)
        if dead is None:
            return None  # a module alias whose uses the text cannot count as the CST pass does
        if any(
            isinstance(imp, ast.ImportFrom) and not imp.level and compat_v1_module(imp.module or "")
            and any(self._imported_from_v1(imp.module, alias.name) for alias in imp.names)  # type: ignore[arg-type]
            for imp, _ in view.imports
        ):
            return None  # leave_ImportFrom respells the import (or splits it)
        if any(_cst_pass_import(imp) for imp, _ in view.imports):
            return None
        unread = _unread_removed_imports(view, reexported(self.ctx.filename, self.ctx.source or view.source, parse), self.ctx.exported)
        if unread is None:
            return None
        drops, keeps = unread
        dataset = _dataset_attribute_edits(view, names, tf) if _reads_dataset_attributes(view.source) else []
        if dataset is None:
            return None  # leave_Attribute's `tf.compat.v1.data.get_output_types(ds)`, where the text cannot match it
        if ('"tensorflow.' in view.source or "'tensorflow." in view.source) and any(
            isinstance(node.value, str) and string_path_todo(node.value) for node in view.nodes_of(ast.Constant)
        ):
            return None  # visit_SimpleString's TODO
        estimator_imports = [
            imp for imp, _ in view.imports
            if isinstance(imp, ast.ImportFrom) and not imp.level and (imp.module or "").startswith(_CST_IMPORTS)
            and imp.names[0].name != "*"
        ]
        contrib = self._contrib_imports(view, estimator_imports)
        if contrib is None:
            return None
        contrib_homes, contrib_locals = contrib
        plan = TextPlan()
        dropped: dict[str, int] = {}
        to_tf2 = self._chain_edits(view, plan, contrib_locals, scope_module, dropped, frozenset(dead))
        if to_tf2 is None:
            return None
        if dead:
            # leave_SimpleStatementLine: `slim = tf.contrib.slim` nothing mentions any more goes,
            # its lines with it (the CST pass walks nothing inside it).
            for chain in view.chains:
                if not chain.bare and chain.stmt is not None and id(chain.stmt) in dead:
                    root = chain.dotted.partition(".")[0]
                    dropped[root] = dropped.get(root, 0) + 1
            plan.replacements.extend((start, end, "") for start, end in dead.values())
            plan.changed = True
        if _ITERATOR_CALL.search(view.source):
            iterators = _iterator_edits(view, names, tf)
            if iterators is None:
                return None
            if iterators:
                if any(start == edit[0] for edit in plan.replacements for start, _, _ in iterators):
                    return None  # two edits starting together: the CST pass orders them
                plan.replacements.extend(iterators)
                plan.changed = to_tf2 = True
        if dataset:
            # (each head goes before whatever starts where it does: a respelled chain, the call it reads)
            heads = {start for start, end, _ in dataset if start == end}
            if any(start in heads and start == end for start, end, _ in plan.replacements):
                return None  # two heads in one place (an iterator's, say): the CST pass nests them
            plan.replacements.extend(dataset)
            plan.changed = to_tf2 = True
        plan.needs_tf2 = to_tf2 and tf not in names.tf_roots and tf not in names.tf1_roots
        rewritten = self._import_edits(view, plan, estimator_imports, contrib_homes, dropped, to_tf2, bool(drops))
        if rewritten is None:
            return None
        kept = [imp for imp in estimator_imports if id(imp) not in rewritten and _removed_import_head(imp.module) is not None]  # type: ignore[arg-type]
        if not {id(imp) for imp, _ in keeps} <= {id(imp) for imp in kept}:
            return None  # an unread name kept whose import leave_Module may mark: the CST pass
        if kept and not self._kept_import_todos(view, plan, kept, {local for _, local in keeps}):
            return None
        if drops:  # (leave_Module's, after every other request)
            plan.removals.extend(drops)
            plan.changed = True
        return plan

    def _contrib_imports(self, view: SourceView, estimator_imports: list[ast.ImportFrom]) -> tuple[dict[int, str], dict[str, str]] | None:
        """The imports from contrib modules: (id -> the runtime module replacing one, local name ->
        the contrib object of one kept); None where the CST pass must decide."""
        # `from tensorflow.contrib.X import Y`: the runtime's module instead when it has every name
        # (leave_ImportFrom), else each lone use of a name it binds is respelled or gets a TODO (leave_Name).
        contrib_homes: dict[int, str] = {}
        contrib_locals: dict[str, str] = {}
        for imp in estimator_imports:
            if not imp.module.startswith("tensorflow.contrib") or hosted_import_home(imp.module, [a.name for a in imp.names]) is not None:  # type: ignore[union-attr]
                continue
            objs = [alias.name for alias in imp.names]
            runtime = _contrib_runtime_home(imp.module, objs)  # type: ignore[arg-type]
            if runtime is not None:
                home, renamed = runtime
                if renamed != objs:
                    return None  # names the runtime spells otherwise: the CST pass adds their `as`
                contrib_homes[id(imp)] = home
                continue
            for alias in imp.names:
                contrib_locals[alias.asname or alias.name] = f"{imp.module}.{alias.name}"
        if contrib_locals and not _lone_uses_are_names(view, self.ctx.names, set(contrib_locals)):
            return None
        return contrib_homes, contrib_locals

    def _chain_edits(self, view: SourceView, plan: TextPlan, contrib_locals: dict[str, str], scope_module: bool,
                     dropped: dict[str, int], skipped: frozenset[int] = frozenset()) -> bool | None:
        """leave_Attribute / leave_Name: each chain (and lone name of a kept contrib import)
        respelled or given its TODO, into `plan`; `dropped` counts the respelled uses of each
        import's name; the statements in `skipped` (by id) are left alone. Whether an edit spells
        `tf.`; None where the CST pass must decide."""
        names, tf = self.ctx.names, self.ctx.tf2_alias
        to_tf2 = False  # an edit spells `tf.`: `import tensorflow as tf` if the file lacks it
        calls: dict[int, ast.Call] | None = None
        chains = view.chains
        if contrib_locals:
            uses = [use for use in view.lone_names if use.dotted in contrib_locals and not use.call]
            chains = sorted([*chains, *uses], key=lambda chain: chain.start)
        for chain in chains:
            if skipped and chain.stmt is not None and id(chain.stmt) in skipped:
                continue
            if chain.bare:
                if chain.dotted in contrib_locals:
                    # leave_Name: a name bound by a kept contrib import names something TF2 lacks.
                    full = contrib_locals[chain.dotted]
                    text, todo = plan_chain(full, tf, scope_module, self.ctx.tf1_program)
                    if chain.in_fstring:
                        return None
                    if text is not None and todo is None and text.startswith((RUNTIME_ALIAS + ".", tf + ".")):
                        plan.replacements.append((chain.start, chain.end, text))
                        dropped[chain.dotted] = dropped.get(chain.dotted, 0) + 1
                        plan.changed = True
                        if text.startswith(RUNTIME_ALIAS + "."):
                            plan.needs_runtime = True
                        else:
                            to_tf2 = True
                    else:
                        plan.todos.append((chain.stmt, _removed("contrib", f"{chain.dotted}`: `{full.replace('tensorflow.', 'tf.', 1)}")))
                continue
            full = names.qualify_dotted(chain.dotted)
            if full is None or (type(getattr(chain.node, "ctx", None)) in (ast.Store, ast.Del) and _patches_tf(full)):
                continue
            private = None if chain.in_import else private_package_read(chain.dotted, names)
            if private is not None:
                if chain.in_fstring:
                    return None
                plan.todos.append((chain.stmt, private))
                continue
            text, todo = plan_chain(full, tf, scope_module, self.ctx.tf1_program)
            if signature_sensitive(full):
                shape = None  # referenced, not called: any call of it may come
                if chain.call:
                    if calls is None:
                        calls = {id(node.func): node for node in view.nodes_of(ast.Call)}
                    call = calls.get(id(chain.node))
                    if call is None:
                        return None
                    starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
                    shape = CallShape(len(call.args), frozenset(k.arg for k in call.keywords if k.arg is not None), starred,
                                      bool(call.args) and _ast_literal(call.args[0]))
                kept = kept_spelling(full, tf, shape)
                if kept is not None:
                    text, todo = kept, None
            edit = text is not None and text != chain.dotted
            runtime = edit and text.startswith(RUNTIME_ALIAS + ".")  # type: ignore[union-attr]
            if (edit or todo) and (chain.in_import or chain.in_fstring):
                return None
            if todo is not None:
                plan.todos.append((chain.stmt, todo))
            if edit:
                # (whitespace and comments inside the chain go with it, as they do from the CST)
                plan.replacements.append((chain.start, chain.end, text))  # type: ignore[arg-type]
                root = chain.dotted.partition(".")[0]
                dropped[root] = dropped.get(root, 0) + 1
                plan.changed = True
                if runtime:
                    plan.needs_runtime = True  # `import tfmigrate.runtime as tfm`, as `_emit` schedules it
                else:
                    to_tf2 = True
        return to_tf2

    def _import_edits(self, view: SourceView, plan: TextPlan, estimator_imports: list[ast.ImportFrom],
                      contrib_homes: dict[int, str], dropped: dict[str, int], to_tf2: bool, drops: bool) -> set[int] | None:
        """leave_ImportFrom / leave_Import: imports rewritten to the hosted or runtime module, and
        the removals RemoveImportsVisitor is asked about (where it will run: an edit, an earlier
        rule's, or `drops`, leave_Module's removal of an unread removed-module import). The ids of
        the rewritten imports; None where the CST pass must decide."""
        tf, data = self.ctx.tf2_alias, view.lines.data
        # leave_ImportFrom: `from <TF1 estimator module> import ModeKeys` -> from the hosted module.
        rewritten: set[int] = set()
        for imp in estimator_imports:
            home = hosted_import_home(imp.module, [alias.name for alias in imp.names])  # type: ignore[arg-type]
            module = f"tfmigrate.runtime.{home}" if home is not None else contrib_homes.get(id(imp))
            if module is not None:
                span = _import_module_span(view, imp)
                if span is None:
                    return None
                plan.replacements.append((*span, module))
                plan.changed = True
                rewritten.add(id(imp))
        # leave_Import / leave_ImportFrom: (module, obj, local) that RemoveImportsVisitor is asked about.
        scheduled: list[tuple[str, str | None, str | None]] = []
        for imp, _ in view.imports:
            if id(imp) in rewritten:
                continue
            if isinstance(imp, ast.Import):
                for alias in imp.names:
                    if alias.name in ("tensorflow.compat.v1", "tensorflow.compat.v2") and alias.asname == tf:
                        start = view.lines.offset(alias.lineno, alias.col_offset)
                        end = start + len(alias.name)
                        if data[start:end] != alias.name.encode() or data[end : end + 1] not in (b" ", b"\t"):
                            return None
                        plan.replacements.append((start, end, "tensorflow"))
                        plan.changed = True
                    elif alias.name in ("tensorflow.compat.v1", "tensorflow.compat.v2") and alias.asname:
                        scheduled.append((alias.name, None, alias.asname))
                    elif alias.name in ("tf_slim", "tensorflow.contrib") or alias.name.startswith(("tf_slim.", "tensorflow.contrib.")):
                        scheduled.append((alias.name, None, alias.asname))  # as leave_Import does
            elif not imp.level and _v1_module_as_alias(imp.module, [(a.name, a.asname) for a in imp.names], tf):
                start, end = _statement_span(view, imp)
                if not re.fullmatch(rf"from[ \t]+tensorflow\.compat[ \t]+import[ \t]+v1[ \t]+as[ \t]+{tf}",
                                    data[start:end].decode("utf-8")):
                    return None  # (parentheses, a line break or a comment inside: the CST pass)
                plan.replacements.append((start, end, f"import tensorflow as {tf}"))
                plan.changed = True
            elif imp.module and not imp.level and imp.names[0].name != "*" and is_tf_module(imp.module):
                scheduled.extend((imp.module, alias.name, alias.asname) for alias in imp.names)
        if plan.changed or self.ctx.applied or drops:  # the import visitors will run
            for module, obj, asname in heeded_removals(scheduled):  # as the visitor will read them
                local = asname or obj or module
                added = 1 if local == tf and to_tf2 else 0
                if view.certainly_used(local, dropped.get(local, 0), added):
                    # RemoveImportsVisitor keeps it, unless a later rule drops its last use: asked
                    # all the same, as the CST pass asks (who removed a line is charged to askers)
                    plan.removals.append((module, obj, asname))
                    continue
                removal = None
                if obj is None and not added and not (plan.needs_tf2 or plan.needs_runtime) and not self.ctx.adds_imports():
                    removal = view.removable_import(local, dropped.get(local, 0))
                if removal is not None:
                    plan.replacements.append((*removal, ""))
                else:  # let RemoveImportsVisitor decide, as the CST pass does
                    plan.removals.append((module, obj, asname))
        return rewritten

    def _kept_import_todos(self, view: SourceView, plan: TextPlan, kept: list[ast.ImportFrom], unread: set[str]) -> bool:
        """`leave_Module`'s TODO above each kept import from a TF1 estimator module whose names the
        respelled code still reads, or that it keeps unread (`unread`: for other modules to read);
        False where the CST pass must place them."""
        preview = view.apply(TextPlan(replacements=list(plan.replacements)), self.CODE)
        if preview is None:
            return False
        # (only the statements the respellings fell in are parsed again, where that applies)
        tree = reparse_edited(view.tree, view.lines, plan.replacements, preview) or parse(preview)
        used = name_ids(tree) | unread
        exported = self.ctx.exported
        lines, data = view.lines, view.lines.data
        for imp in kept:
            if not any(name in used or name in exported for name in {alias.asname or alias.name for alias in imp.names}):
                continue
            if imp.end_lineno is None or imp.end_col_offset is None or not lines.starts_line(imp):
                return False
            start, end = lines.offset(imp.lineno, imp.col_offset), lines.offset(imp.end_lineno, imp.end_col_offset)
            after = data[end : data.find(b"\n", end) if b"\n" in data[end:] else len(data)].strip()
            text = data[start:end].decode("utf-8")
            if (after and not after.startswith(b"#")) or "\n" in text:
                return False  # `import ...; x` or a multi-line import: the CST pass
            text = _kept_import_text(text, imp.module, [(a.name, a.asname) for a in imp.names], used | exported)  # type: ignore[arg-type]
            plan.todos.append((imp, _removed(_removed_import_head(imp.module), text) + "; then remove this import"))  # type: ignore[arg-type]
        return True


# TF1's DatasetV1 and Iterator properties TF2's lack, read through `tf.compat.v1.data.get_<name>(ds)`.
_DATASET_ATTRIBUTES = ("output_types", "output_shapes", "output_classes")
_DATASET_ATTRIBUTE_READ = re.compile(r"\.\s*output_(?:types|shapes|classes)\b")
# ... unless the module defines such a name itself (a def, or an assignment to one: its own class's).
_DATASET_ATTRIBUTE_DEFINED = re.compile(r"(?:\bdef\s+|\.\s*|^\s*)output_(?:types|shapes|classes)\s*(?:\(|=[^=])", re.M)


def _reads_dataset_attributes(source: str) -> bool:
    """Whether the module reads `x.output_types`/`output_shapes`/`output_classes` and defines none."""
    return bool(_DATASET_ATTRIBUTE_READ.search(source)) and not _DATASET_ATTRIBUTE_DEFINED.search(source)


def _names_self(node: cst.BaseExpression) -> bool:
    """`self` or `cls`: a class's own attribute, not a dataset's."""
    return isinstance(node, cst.Name) and node.value in ("self", "cls")


_ITERATOR_METHODS = ("make_one_shot_iterator", "make_initializable_iterator")
_ITERATOR_CALL = re.compile(r"\.\s*make_(?:one_shot|initializable)_iterator\b")


def _iterator_edits(view: SourceView, names, tf: str) -> list[tuple[int, int, str]] | None:
    """`leave_Call`'s `ds.make_one_shot_iterator()` -> `tf.compat.v1.data.make_one_shot_iterator(ds)`
    as two text edits per call (the function's head before `ds`, `)` for the method's tail), so
    respellings inside `ds` still apply; None when LibCST's output could differ (parentheses,
    spacing or comments around the method, calls nested in one another, f-strings)."""
    data = view.lines.data
    in_fstring = {id(n) for s in view.nodes_of(ast.JoinedStr) for n in ast.walk(s)}
    edits: list[tuple[int, int, str]] = []
    spans: list[tuple[int, int]] = []
    for node in view.nodes_of(ast.Call):
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in _ITERATOR_METHODS):
            continue
        if node.args or node.keywords:
            continue
        dotted = ast_dotted(node.func)
        if dotted is not None and names.qualify_dotted(dotted) is not None:
            continue  # a TF path: respelled as a chain
        if id(node) in in_fstring or node.end_lineno is None or node.end_col_offset is None:
            return None
        start = view.lines.offset(node.lineno, node.col_offset)
        end = view.lines.offset(node.end_lineno, node.end_col_offset)
        tail = f".{node.func.attr}()".encode()
        if not data[start:end].endswith(tail):
            return None
        spans.append((start, end))
        edits.append((start, start, f"{tf}.compat.v1.data.{node.func.attr}("))
        edits.append((end - len(tail), end, ")"))
    spans.sort()
    if any(b[0] < a[1] for a, b in zip(spans, spans[1:])):
        return None
    return edits


def _dataset_attribute_edits(view: SourceView, names, tf: str) -> list[tuple[int, int, str]] | None:
    """`leave_Attribute`'s `ds.output_types` -> `tf.compat.v1.data.get_output_types(ds)` as two text
    edits per read (the function's head before `ds`, `)` for the attribute's tail), so respellings
    inside `ds` still apply; None when LibCST's output could differ (a line break or comment
    before the attribute's name, reads nested in one another, f-strings)."""
    data = view.lines.data
    in_fstring: set[int] | None = None
    edits: list[tuple[int, int, str]] = []
    spans: list[tuple[int, int]] = []
    for node in view.nodes_of(ast.Attribute):
        if node.attr not in _DATASET_ATTRIBUTES or type(node.ctx) is not ast.Load:  # (stored or deleted: `_stored`)
            continue
        dotted = ast_dotted(node)
        if dotted is not None and names.qualify_dotted(dotted) is not None:
            continue  # a TF path: respelled as a chain
        value = node.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            continue
        if in_fstring is None:
            in_fstring = {id(n) for s in view.nodes_of(ast.JoinedStr) for n in ast.walk(s)}
        if id(node) in in_fstring or node.end_lineno is None or node.end_col_offset is None:
            return None
        start = view.lines.offset(node.lineno, node.col_offset)
        end = view.lines.offset(node.end_lineno, node.end_col_offset)
        cut = end - len(node.attr)
        if not data[start:end].endswith(node.attr.encode()):
            return None
        cut = len(data[start:cut].rstrip(b" \t")) + start
        if data[cut - 1 : cut] != b".":
            return None  # a line break or a comment between the dot and the name
        cut = len(data[start : cut - 1].rstrip(b" \t")) + start
        if data[cut - 1 : cut] in (b"\n", b"\\"):
            return None  # a line break before the dot (a comment ends one): LibCST drops it with the dot
        spans.append((start, end))
        edits.append((start, start, f"{tf}.compat.v1.data.get_{node.attr}("))
        edits.append((cut, end, ")"))
    spans.sort()
    if any(b[0] < a[1] for a, b in zip(spans, spans[1:])):
        return None
    return edits


def _removed_import_key(home: str) -> str:
    """The `_REMOVED` entry saying what to do about an import from one of `REMOVED_HOMES`."""
    return "contrib" if home == "tensorflow.contrib" else "estimator"


def _v1_symbol(full: str) -> str | None:
    """The TF1 symbol `tensorflow.X` names when it is one (not a module) tensorflow.compat.v1 still has."""
    found = lookup(full[len("tensorflow."):])
    return found[0] if found is not None and not found[1] and v1_present(found[0]) else None


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def compat_v1_module(module: str) -> str | None:
    """`tensorflow[.X]`'s tensorflow.compat.v1 counterpart (where TF1 names imported from it are
    found on TF2); None for a module outside TF's public API or already compat."""
    if module == "tensorflow":
        return "tensorflow.compat.v1"
    sub = module[len("tensorflow."):] if module.startswith("tensorflow.") else None
    if not sub or sub.split(".")[0] in ("compat", "contrib", "python", "core", "tools", "lite", "keras"):
        return None
    return f"tensorflow.compat.v1.{sub}"


# TF's API modules, off which TF 1.x read its implementation package (`tf.python.ops`) and TF2 does not.
_API_MODULES = ("tensorflow", "tensorflow.compat.v1", "tensorflow.compat.v2")


def private_package_read(dotted: str, names) -> str | None:
    """The TODO for a chain that reads TF's implementation package `python` as an attribute of
    TF's API module (`tf.python.saved_model.loader.load`, also through `import tensorflow.python.X`,
    which binds `tensorflow`): an AttributeError on TF2, whose `tensorflow` has no `python`.
    None for a chain rooted at the package or below it (`from tensorflow.python.ops import array_ops`)."""
    if ".python" not in dotted and not dotted.startswith("python"):
        return None  # (the common case, decided on the text: a chain that spells no `python`)
    full = names.qualify_dotted(dotted)
    root = names.qualify_dotted(dotted.partition(".")[0])
    if full is None or root is None:
        return None
    for module in _API_MODULES:
        if (full == f"{module}.python" or full.startswith(f"{module}.python.")) and root.count(".") <= module.count("."):
            return (f"TF2's `tf` has no `python` (`{dotted}`): import the module from `tensorflow.python` "
                    "(`from tensorflow.python.X import Y`: TensorFlow's internals), or use its public name")
    return None


def _cst_pass_import(imp: ast.Import | ast.ImportFrom) -> bool:
    """An import only the CST pass handles: one of `tensorflow.compat.v1.python.X`, which
    leave_Import / leave_ImportFrom respell, or `import tensorflow.contrib.X as y`, above which
    leave_Module writes a TODO where `y` is still read."""
    if isinstance(imp, ast.ImportFrom):
        return not imp.level and private_module(imp.module or "") is not None
    return any(private_module(alias.name) is not None
               or (alias.asname is not None and f"{alias.name}.".startswith("tensorflow.contrib.")) for alias in imp.names)


def private_module(module: str) -> str | None:
    """`tensorflow.python.X` for an import of `tensorflow.compat.v1.python.X` (or v2's), a module
    TF2 lacks; else None."""
    for compat in _API_MODULES[1:]:
        if module == f"{compat}.python" or module.startswith(f"{compat}.python."):
            return "tensorflow" + module[len(compat):]
    return None


def _removed_import_head(module: str, objs: list[str] = ()) -> str | None:  # type: ignore[assignment]
    """The `_REMOVED` key of a module TF1 programs imported removed names from (or of the module
    `from module import obj` binds: `from tensorflow import estimator`), else None."""
    for full in (module, *(f"{module}.{obj}" for obj in objs)):
        home = removed_home(full)
        if home is not None:
            return _removed_import_key(home)
    return None


def _v1_module_as_alias(module: str | None, names: list[tuple[str, str | None]], tf: str) -> bool:
    """`from tensorflow.compat import v1 as <tf>`, its only name, `tf` the name migrated code
    gives TF2 (`import tensorflow as <tf>` replaces it)."""
    return module == "tensorflow.compat" and names == [("v1", tf)]


def _statement_span(view: SourceView, node: ast.stmt) -> tuple[int, int]:
    """The byte range of a statement of the view's text."""
    lines = view.lines
    return lines.offset(node.lineno, node.col_offset), lines.offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]


def _import_module_span(view: SourceView, imp: ast.ImportFrom) -> tuple[int, int] | None:
    """The byte range of `module` in `from module import ...` when it is spelled plainly."""
    data = view.lines.data
    start = view.lines.offset(imp.lineno, imp.col_offset)
    head = re.compile(rb"from[ \t]+").match(data, start)
    if head is None:
        return None
    module = (imp.module or "").encode("utf-8")
    end = head.end() + len(module)
    if data[head.end() : end] != module or data[end : end + 1] not in (b" ", b"\t"):
        return None
    return head.end(), end


def _kept_removed_import(statement: cst.CSTNode) -> str | None:
    """For a one-import line `from tensorflow.contrib... import names` (also from `tensorflow_estimator`
    or `tensorflow.python.estimator`; or `import tensorflow.contrib.x as y`) that no runtime module
    replaces: its `_REMOVED` key; else None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    node = statement.body[0]
    if isinstance(node, cst.ImportFrom):
        if node.module is None or node.relative or isinstance(node.names, cst.ImportStar) or _runtime_import(node):
            return None
        return _removed_import_head(dotted_text(node.module), [dotted_text(alias.name) for alias in node.names])
    if isinstance(node, cst.Import) and all(
        alias.asname is not None and f"{dotted_text(alias.name)}.".startswith("tensorflow.contrib.") for alias in node.names
    ):
        return "contrib"
    return None


def _removed_module_imports(module: cst.Module) -> list[tuple[str, str | None, str | None]]:
    """Each name an import anywhere in the module binds from a module current TF lacks
    (`removed_module`), as a RemoveImportsVisitor request (module, obj, asname). `import
    tensorflow.contrib.x`, which binds `tensorflow`, is not one."""
    out: list[tuple[str, str | None, str | None]] = []
    for imp in iter_imports(module):
        if isinstance(imp, cst.ImportFrom):
            if imp.module is None or imp.relative or isinstance(imp.names, cst.ImportStar):
                continue
            home = dotted_text(imp.module)
            for alias in imp.names:
                obj = dotted_text(alias.name)
                if removed_module(f"{home}.{obj}"):
                    out.append((home, obj, dotted_text(alias.asname.name) if alias.asname else None))  # type: ignore[arg-type]
            continue
        for alias in imp.names:
            name = dotted_text(alias.name)
            if removed_module(name) and (alias.asname is not None or "." not in name):
                out.append((name, None, dotted_text(alias.asname.name) if alias.asname else None))  # type: ignore[arg-type]
    return out


def _unread_removed_imports(view: SourceView, kept: frozenset[str] | None, exported: frozenset[str]):
    """What leave_Module does with the names `from` imports from modules current TF lacks bind:
    (the removal requests of those the file never reads (the pass's respellings add no read),
    [(import, name)] of those it keeps and marks: each the module imports for others to read
    (`kept`: `reexported`), read or not, and each unread one another module imports from here
    (`exported`)); None where the text pass must leave the file to leave_Module (an `import` of
    such a module)."""
    read: set[str] | None = None
    drops: list[tuple[str, str, str | None]] = []
    keeps: list[tuple[ast.ImportFrom, str]] = []
    for imp, _ in view.imports:
        if isinstance(imp, ast.Import):
            if any(removed_module(alias.name) for alias in imp.names):
                return None
            continue
        if imp.level or imp.names[0].name == "*":
            continue
        for alias in imp.names:
            if removed_module(f"{imp.module}.{alias.name}"):
                local = alias.asname or alias.name
                if kept is None or local in kept:
                    keeps.append((imp, local))
                    continue
                if read is None:
                    read = {node.id for node in view.nodes_of(ast.Name)}  # type: ignore[attr-defined]
                if local in read:
                    continue
                if local in exported:
                    keeps.append((imp, local))
                else:
                    drops.append((imp.module, alias.name, alias.asname))  # type: ignore[arg-type]
    return drops, keeps


def _has_removed_imports(module: cst.Module) -> bool:
    return any(
        isinstance(imp, cst.ImportFrom) and imp.module is not None and not imp.relative
        and not isinstance(imp.names, cst.ImportStar)
        and _removed_import_head(dotted_text(imp.module), [dotted_text(alias.name) for alias in imp.names]) is not None
        for imp in iter_imports(module)
    ) or any(_kept_removed_import(stmt) for stmt in module.body)


class _ContribImportTodos(Transformer):
    """Puts the rule's TODO above each kept contrib/estimator import line (any depth) binding a used name."""

    def __init__(self, rule: "CompatV1ToV2", used: set[str], exported: frozenset[str]) -> None:
        super().__init__()
        self.rule, self.used, self.exported = rule, used, exported

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return False  # an import line holds no statement

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        head = _kept_removed_import(updated)
        if head is None:
            return updated
        node = updated.body[0]
        if not any(name in self.used or name in self.exported for name in _bound_locals(node)):  # type: ignore[arg-type]
            return updated
        text = _code(node)
        if isinstance(node, cst.ImportFrom):
            names = [(dotted_text(a.name), dotted_text(a.asname.name) if a.asname else None) for a in node.names]  # type: ignore[union-attr]
            text = _kept_import_text(text, dotted_text(node.module), names, self.used | self.exported)  # type: ignore[arg-type]
        return self.rule.attach_messages(updated, [_removed(head, text) + "; then remove this import"])


def _kept_import_text(text: str, module: str, names: list[tuple[str, str | None]], read: set[str] | frozenset[str]) -> str:
    """How `from module import names` (spelled `text`) will read once the names nothing reads are
    removed (RemoveImportsVisitor runs after the pass): what the TODO quotes, on one line (an
    import spelled across lines is quoted without its line breaks and comments)."""
    kept = [(name, asname) for name, asname in names if (asname or name) in read]
    if len(kept) == len(names) and "\n" not in text:
        return text
    return f"from {module} import " + ", ".join(f"{name} as {asname}" if asname else name for name, asname in kept)


def _bound_locals(node: cst.Import | cst.ImportFrom) -> set[str]:
    return {
        dotted_text(alias.asname.name) if alias.asname else dotted_text(alias.name)  # type: ignore[arg-type]
        for alias in node.names  # type: ignore[union-attr]
    }


def _contrib_from_imports(module: cst.Module) -> list[cst.ImportFrom]:
    """Every absolute `from tensorflow.contrib... import names` in the module, at any depth (the
    imports the alias table reads)."""
    return [
        imp
        for imp in iter_imports(module)
        if isinstance(imp, cst.ImportFrom)
        and imp.module is not None
        and not imp.relative
        and not isinstance(imp.names, cst.ImportStar)
        and dotted_text(imp.module).startswith("tensorflow.contrib")
    ]


_CST_IMPORTS = ("tensorflow.contrib", "tensorflow.estimator", "tensorflow.compat.v1.estimator", "tensorflow.python.estimator", "tensorflow_estimator")


def _runtime_import(node: cst.ImportFrom) -> cst.ImportFrom | None:
    """`from tensorflow.contrib.X import a, b` whose every name the runtime replaces from one of its
    modules -> that import from tfmigrate.runtime (locals kept); `from <a TF1 estimator module>
    import ModeKeys, TPUEstimator` -> from the hosted `tfmigrate.runtime.estimator[.tpu]`; else None."""
    if node.module is None or node.relative or isinstance(node.names, cst.ImportStar):
        return None
    module = dotted_text(node.module)
    home = hosted_import_home(module, [dotted_text(alias.name) for alias in node.names])
    if home is not None:
        return node.with_changes(module=chain_node(f"tfmigrate.runtime.{home}"))
    objs = [dotted_text(alias.name) for alias in node.names]
    runtime = _contrib_runtime_home(module, objs)
    if runtime is None:
        return None
    home, renamed = runtime
    aliases = []
    for alias, obj, name in zip(node.names, objs, renamed):
        asname = alias.asname
        if asname is None and name != obj:
            asname = cst.AsName(name=cst.Name(obj))
        aliases.append(alias.with_changes(name=cst.Name(name), asname=asname))
    return node.with_changes(module=chain_node(home), names=aliases)


def _contrib_runtime_home(module: str, objs: list[str]) -> tuple[str, list[str]] | None:
    """`from tensorflow.contrib.X import objs` whose every name the runtime replaces from one of
    its modules: that module (`tfmigrate.runtime[.home]`) and the names there; else None."""
    if not module.startswith("tensorflow.contrib"):
        return None
    homes: set[str] = set()
    renamed = []
    for obj in objs:
        replaced = runtime_symbol(f"{module}.{obj}")
        if replaced is None or replaced[1] or replaced[0].startswith(("tf:", "legacy.")):
            return None  # (`tfm.legacy`'s modules are attributes, not importable module paths)
        home, _, name = replaced[0].rpartition(".")
        homes.add(home)
        renamed.append(name)
    if len(homes) != 1:
        return None
    home = homes.pop()
    return "tfmigrate.runtime" + (f".{home}" if home else ""), renamed


def _lone_uses_are_names(view: SourceView, names, locals_: set[str]) -> bool:
    """Whether every mention of these import-bound names that TFM101's `leave_Name` would see is
    one of `view.lone_names` (no `global`, `except ... as` or pattern binds one; the name of a
    def or class is no mention)."""
    if not locals_ <= set(names.aliases):
        return False
    for node in view.nodes_of(ast.Global, ast.Nonlocal):
        if locals_ & set(node.names):
            return False
    for node in view.nodes_of(ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping):
        if (getattr(node, "name", None) or getattr(node, "rest", None)) in locals_:
            return False
    return True


_REMOVED_MODULES = ("tensorflow.contrib", "tf_slim")


def _removed_module_alias(target: str | None, full: str | None) -> bool:
    return target is not None and full is not None and (
        full in _REMOVED_MODULES or full.startswith(tuple(m + "." for m in _REMOVED_MODULES))
    )


class _NameUses(Visitor):
    """How many times each name is mentioned once TFM101 has run: attribute names aside, and the
    roots of the chains it respells (`layers.xavier_initializer` -> `tfm.initializers...`) too."""

    def __init__(self, names, tf: str) -> None:
        self.names, self.tf = names, tf
        self.counts: dict[str, int] = {}

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        dotted = dotted_text(node)
        if not dotted:
            walk(node.value, self)
            return False
        root = dotted.split(".")[0]
        full = self.names.qualify(node)
        text = plan_chain(full, self.tf)[0] if full is not None else None
        if text is None or text.split(".")[0] == root:
            self.counts[root] = self.counts.get(root, 0) + 1
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.counts[node.value] = self.counts.get(node.value, 0) + 1


def _store_targets(*targets: cst.BaseExpression):
    """The chains among assignment (or `del`, `for`, `with ... as`) targets, unpacked."""
    for target in targets:
        if isinstance(target, cst.Attribute):
            yield id(target)
        elif isinstance(target, (cst.Tuple, cst.List)):
            yield from _store_targets(*(element.value for element in target.elements))
        elif isinstance(target, cst.StarredElement):
            yield from _store_targets(target.value)


def _patches_tf(full: str) -> bool:
    """Whether a chain assigned to or deleted sets an attribute of a TF object current TF has
    under the same spelling (`tf.data.Dataset.output_shapes = property(...)`, tensorflow-datasets'
    patch of TF2's Dataset; `tf.compat.v2.data = ...`): the program patches that object, and its
    chain stays as written. Respelled, it would patch another (TF1's `DatasetV1`) or overwrite one
    (`tf.data`)."""
    if not full.startswith("tensorflow.") or full.startswith(("tensorflow.compat.v1.", "tensorflow.contrib.")):
        return False
    owner = full[len("tensorflow."):].rpartition(".")[0]
    return owner == "" or owner in api_table()[3]


def _module_alias(full: str) -> bool:
    """Whether an alias's value is a removed module (`tf.contrib`, `tf.contrib.slim`, `tf_slim`),
    not a name in one (`slim.fully_connected`, `tf.contrib.framework.arg_scope`)."""
    return full in _REMOVED_MODULES or (full.startswith("tensorflow.contrib.") and full.count(".") == 2)


def _dead_module_aliases(module: cst.Module, names, tf: str, exported: frozenset[str] = frozenset()) -> set[int]:
    """Module-level `alias = tf.contrib.X` (or tf_slim) statements whose alias nothing will mention
    (not one another module imports or `__all__` lists: TFM101 respells it). Aliases of modules
    only: an alias of a name in one (`fully_connected = slim.fully_connected`) is a name the module
    offers its importers, respelled and kept (`_module_alias`)."""
    found: dict[str, int] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
            assign = stmt.body[0]
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                target = assign.targets[0].target.value
                if isinstance(assign.value, (cst.Name, cst.Attribute)) and _removed_module_alias(
                    target, names.qualify(assign.value)
                ) and target not in exported and _module_alias(names.qualify(assign.value)):
                    found[target] = id(stmt)
    if not found:
        return set()
    uses = _NameUses(names, tf)
    walk(module, uses)
    return {stmt for target, stmt in found.items() if uses.counts.get(target, 0) == 1}


def _dead_module_alias_spans(view: SourceView, names, tf: str, exported: frozenset[str]) -> dict[int, tuple[int, int]] | None:
    """`_dead_module_aliases` read off the `ast`: {id(statement): its byte span} for each
    module-level `alias = tf.contrib.X` (or tf_slim) the CST pass deletes; None where the text
    cannot tell it as that pass would (then the CST pass runs).

    The CST pass counts every Name `alias` (keyword and parameter names too) and every chain
    rooted at it that TFM101 leaves rooted there; the alias is dead when that count is 1 (the
    assignment itself). Here the count is taken only where each word `alias` in the file is a
    Name the scan found (a lone name or a chain's root): a word anywhere else (a comment, a
    string, a keyword argument, after a dot) and the CST pass decides."""
    body = view.tree.body
    alone = {id(body[group[2][0]]) for group in statement_groups(body) if len(group[2]) == 1}
    found: dict[str, tuple[int, ast.Assign]] = {}
    for index, stmt in enumerate(body):
        # (asked in the CST pass's order: `exported` remembers what was asked)
        if id(stmt) in alone and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            dotted = ast_dotted(stmt.value) if isinstance(stmt.value, (ast.Name, ast.Attribute)) else None
            target = stmt.targets[0].id
            full = names.qualify_dotted(dotted) if dotted is not None else None
            if _removed_module_alias(target, full) and target not in exported and _module_alias(full):  # type: ignore[arg-type]
                found[target] = (index, stmt)
    if not found:
        return {}
    if not view.source.isascii():
        return None  # (an identifier is NFKC-normalized: another spelling can name the alias)
    code = _code_only(view)
    if code is None:
        return None
    dead: dict[int, tuple[int, int]] = {}
    for target, (index, stmt) in found.items():
        lone = [use for use in view.lone_names if use.dotted == target]
        rooted = [chain for chain in view.chains if not chain.bare and chain.dotted.partition(".")[0] == target]
        named = _import_names(view, target)  # (`from m import slim as s`: a Name `slim` to LibCST)
        words = len(re.findall(rf"(?<![\w.]){re.escape(target)}(?!\w)", code))
        if named is None or any(chain.node is None for chain in rooted) or words != len(lone) + len(rooted) + named:
            return None
        count = len(lone) + named
        for chain in rooted:  # `_NameUses.visit_Attribute`
            full = names.qualify_dotted(chain.dotted)
            text = plan_chain(full, tf)[0] if full is not None else None
            if text is None or text.split(".")[0] == target:
                count += 1
        if count == 1:
            span = view.statement_with_leading_lines(index)
            if span is None:
                return None
            dead[id(stmt)] = span
    return dead


def _import_names(view: SourceView, target: str) -> int | None:
    """How many Names `target` the imports hold to LibCST (an imported name, an `as` name); None
    where one spells it in its module path, which LibCST reads as a chain."""
    count = 0
    for imp, _ in view.imports:
        paths = [alias.name for alias in imp.names] if isinstance(imp, ast.Import) else [imp.module or ""]
        if any(path == target or path.startswith(target + ".") for path in paths):
            return None
        for alias in imp.names:
            count += (alias.asname == target) + (isinstance(imp, ast.ImportFrom) and alias.name == target)
    return count


def _code_only(view: SourceView) -> str | None:
    """The view's (ASCII) text with its string literals and comments blanked out, line for line
    and byte for byte; f-strings kept whole (the names in their fields are code), and None when
    one holds a `#` (what follows it would pass for a comment)."""
    data = bytearray(view.lines.data)
    offset = view.lines.offset
    fstrings = []
    for node in view.nodes_of(ast.JoinedStr):
        if node.end_lineno is None or node.end_col_offset is None:
            return None
        fstrings.append((offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)))
        if b"#" in data[fstrings[-1][0] : fstrings[-1][1]]:
            return None
    for node in view.nodes_of(ast.Constant):
        if isinstance(node.value, (str, bytes)) and node.end_lineno is not None and node.end_col_offset is not None:
            start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
            if not any(first <= start < last for first, last in fstrings):  # (a part of an f-string)
                data[start:end] = bytes(32 if byte != 10 else 10 for byte in data[start:end])
    return re.sub(r"#[^\n]*", lambda match: " " * len(match.group()), data.decode("ascii"))  # what `#` is left starts a comment


def _store_functions(module: cst.Module) -> set[str]:
    """Names of the functions `tfm.tf1.VariableScopeLayer(f)` / `(self.f)` runs, and of the
    module-level functions they call (transitively): their TF1 code runs under a variable store."""
    found: set[str] = set()
    defs: dict[str, list[cst.FunctionDef]] = {}

    class Collect(Visitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            defs.setdefault(node.name.value, []).append(node)

        def visit_Call(self, node: cst.Call) -> None:
            if dotted_text(node.func).endswith("tf1.VariableScopeLayer") and node.args:
                target = dotted_text(node.args[0].value)
                if target:
                    found.add(target.rsplit(".", 1)[-1])

    walk(module, Collect())
    if not found:
        return found
    module_fns = {s.name.value for s in module.body if isinstance(s, cst.FunctionDef)}
    todo = list(found)
    while todo:
        name = todo.pop()
        for fn in defs.get(name, []):
            called: set[str] = set()

            class Calls(Visitor):
                def visit_Call(self, node: cst.Call) -> None:
                    if isinstance(node.func, cst.Name) and node.func.value in module_fns:
                        called.add(node.func.value)

            walk(fn, Calls())
            for callee in called - found:
                found.add(callee)
                todo.append(callee)
    return found


