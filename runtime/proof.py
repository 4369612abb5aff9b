"""The probe `tfmigrate verify` runs a program under, in either environment.

    python proof.py --record OUT.jsonl [--save-first-checkpoints DIR | --seed-from DIR]
                    [--logdir DIR] [--model-dirs DIR] [--tf1] [--seed-graphs] (PROGRAM.py | -m MODULE) -- [ARGS...]

It runs PROGRAM as `__main__` (as `python PROGRAM.py ARGS` would) after wrapping the calls whose
results the proof compares, and writes one JSON line per result to OUT:

  * `{"kind": "evaluate", "results": {...}}` for every `Estimator.evaluate` (TF 2.15's, or the
    hosted `tfmigrate.runtime.estimator` one), `tfmigrate.runtime.evaluate` and a custom-loop
    `EstimatorLoop.evaluate`;
  * `{"kind": "predict", "values": {...}}` for every example `predict`/`predict_examples` yields;
  * `{"kind": "train", "values": {...}}` after every `train` (and `fit`, and a custom loop's
    `train`): each variable of the checkpoint it left in its model directory, by name, as its
    sum, its sum of magnitudes, its largest magnitude and eight of its values (all of them when it
    has eight or fewer). `verify` compares these where a program records no evaluate or predict
    result (a train-only program).

Same starting weights: on the original's side (`--save-first-checkpoints`), the first checkpoint
(`model.ckpt-0`, which TF1's Estimator writes before the first step) of each estimator's first
`train` is copied aside, numbered in the order the estimators first train; on the migration's
side (`--seed-from`), the n-th model directory that starts training without a checkpoint gets
the n-th of those copies first, so the migration continues from the original's initial weights
(the runtime restores TF1 checkpoints).

With `--seed-graphs` (verify gives it to both sides), every graph the program leaves unseeded is
seeded with `GRAPH_SEED`, and Python's and NumPy's global generators start from it: a program
without `tf_random_seed`, or drawing its data with `np.random`, is compared run against run with one seed.

With `--model-dirs`, a model directory outside the working directory (the program's copy: a
program's `/tmp/mnist_model`) is kept under that directory instead, as the same path below it,
and a `{"kind": "note", "text": ...}` line says so: else the migration would continue from the
original's checkpoints there, and both would start from whatever model the user keeps there.

With `--logdir`, every evaluation's numbers are also written as scalar summaries at its global
step into that directory (one run a side: TensorBoard overlays `original` and `migrated`).

This file imports nothing but the standard library at module level: it runs in the oracle
environment (TF 2.15 + Estimator, no tfmigrate installed) as well as the current one.
`--tf1` runs a TensorFlow 1.x program (`import tensorflow as tf` with `tf.contrib`, `tf.flags`,
...): `tensorflow` is `tensorflow.compat.v1` with v2 behaviour disabled.
"""

from __future__ import annotations

import argparse
import functools
import glob
import importlib
import json
import os
import runpy
import shutil
import sys
from typing import Any, Callable

_state: dict[str, Any] = {
    "record": None, "save": None, "seed": None, "logdir": None, "saved": 0, "seeded": 0, "model_dirs": None, "root": None,
}
_redirected: set[str] = set()  # the model directories a note has been written for
_writers: dict[str, Any] = {}


def _plain(value: Any) -> Any:
    """A result value as JSON: numbers as floats, arrays as (nested) lists, bytes as text."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return str(value)


def _write(entry: dict[str, Any]) -> None:
    with open(_state["record"], "a", encoding="utf-8") as out:
        out.write(json.dumps(entry, sort_keys=True) + "\n")


def _record_evaluation(results: Any) -> None:
    plain = _plain(dict(results))
    _write({"kind": "evaluate", "results": plain})
    if _state["logdir"]:
        _summarise(plain)


def _summarise(results: dict[str, Any]) -> None:
    """The evaluation's numbers as scalar events at its global step (core TF ops: no TensorBoard
    package needed). Eagerly through a v2 writer; in a TF 1.x program (eager execution off)
    through a v1 `FileWriter`."""
    import tensorflow as tf
    from tensorflow.core.framework import summary_pb2

    step = int(results.get("global_step", 0))
    scalars = {key: value for key, value in results.items() if key != "global_step" and isinstance(value, float)}
    if not tf.compat.v1.executing_eagerly():
        writer = _writers.get("v1") or _writers.setdefault("v1", tf.compat.v1.summary.FileWriter(_state["logdir"]))
        values = [summary_pb2.Summary.Value(tag=key, simple_value=value) for key, value in scalars.items()]
        writer.add_summary(summary_pb2.Summary(value=values), step)
        writer.flush()
        return
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
        data_class=summary_pb2.DATA_CLASS_SCALAR,
    )
    writer = _writers.get("v2") or _writers.setdefault("v2", tf.summary.create_file_writer(_state["logdir"]))
    with writer.as_default():
        for key, value in scalars.items():
            tf.summary.write(key, tf.constant(value, tf.float32), step=step, metadata=metadata)
    writer.flush()


# Calls in progress: an `evaluate`/`predict`/`train` reached from a recorded one (TF 2.15's
# TPUEstimator calls Estimator's, both wrapped) is not recorded again.
_ACTIVE = {"evaluate": 0, "predict": 0, "train": 0}


def _record_predictions(predictions: Any):
    nested = _ACTIVE["predict"] > 0
    _ACTIVE["predict"] += 1
    try:
        for prediction in predictions:
            if not nested:
                _write({"kind": "predict", "values": _plain(prediction if isinstance(prediction, dict) else {"": prediction})})
            yield prediction
    finally:
        _ACTIVE["predict"] -= 1


def _outermost_recorded(kind: str, call: Callable[..., Any], record: Callable[..., None]) -> Callable[..., Any]:
    """`call`, then `record(its result, its arguments)`, except inside another such call of `kind`
    (TF 2.15's TPUEstimator's `evaluate`/`train` call Estimator's, both wrapped)."""

    @functools.wraps(call)
    def recorded(*args, **kwargs):
        nested = _ACTIVE[kind] > 0
        _ACTIVE[kind] += 1
        try:
            result = call(*args, **kwargs)
        finally:
            _ACTIVE[kind] -= 1
        if not nested:
            record(result, *args, **kwargs)
        return result

    return recorded


def _wrap_evaluate(owner: Any, name: str = "evaluate") -> None:
    setattr(owner, name, _outermost_recorded("evaluate", getattr(owner, name), lambda results, *a, **k: _record_evaluation(results)))


def _wrap_predict(owner: Any, name: str) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def predict(*args, **kwargs):
        return _record_predictions(original(*args, **kwargs))

    setattr(owner, name, predict)


def _trained(train: Callable[..., Any], model_dir_of: Callable[..., Any]) -> Callable[..., Any]:
    """`train` (an Estimator's, `fit`, a loop's), recording the checkpoint it leaves."""
    return _outermost_recorded("train", train, lambda _, *args, **kwargs: _record_checkpoint(model_dir_of(*args, **kwargs)))


_SAMPLES = 8


def _record_checkpoint(model_dir: Any) -> None:
    """The latest checkpoint of `model_dir`, each numeric variable summarised (module doc)."""
    if model_dir is None:
        return
    import numpy as np
    from tensorflow.python.checkpoint import checkpoint_management
    from tensorflow.python.training import py_checkpoint_reader

    path = checkpoint_management.latest_checkpoint(os.fspath(model_dir))
    if path is None:
        return
    reader = py_checkpoint_reader.NewCheckpointReader(path)
    values: dict[str, Any] = {}
    for name in sorted(reader.get_variable_to_dtype_map()):
        if name == "_CHECKPOINTABLE_OBJECT_GRAPH":
            continue
        value = np.asarray(reader.get_tensor(name))
        if value.dtype.kind not in "biuf":
            continue
        flat = value.astype(np.float64).ravel()
        if flat.size <= _SAMPLES:
            values[name] = flat.tolist()
        else:
            picked = np.linspace(0, flat.size - 1, _SAMPLES).astype(np.int64)
            values[name] = {"sum": float(flat.sum()), "l1": float(np.abs(flat).sum()), "max": float(np.abs(flat).max()),
                            "at": flat[picked].tolist()}
    _write({"kind": "train", "values": values})


def _has_checkpoint(model_dir: str | None) -> bool:
    return bool(model_dir) and bool(glob.glob(os.path.join(model_dir, "*.index")))


def _seed(model_dir: str | None) -> None:
    """Puts the next saved first checkpoint into `model_dir` when it has none."""
    if not _state["seed"] or not model_dir or _has_checkpoint(model_dir):
        return
    source = os.path.join(_state["seed"], str(_state["seeded"]))
    _state["seeded"] += 1
    files = glob.glob(os.path.join(source, "*"))
    if not files:
        return
    os.makedirs(model_dir, exist_ok=True)
    for path in files:
        shutil.copy(path, model_dir)


def _save_first(model_dir: str) -> None:
    """Copies the first checkpoint (model.ckpt-0, or the oldest) of `model_dir` aside, numbered."""
    indexes = sorted(
        glob.glob(os.path.join(model_dir, "model.ckpt-*.index")),
        key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]),
    )
    if not indexes:
        return
    prefix = indexes[0][: -len(".index")]
    target = os.path.join(_state["save"], str(_state["saved"]))
    _state["saved"] += 1
    os.makedirs(target, exist_ok=True)
    for path in glob.glob(prefix + ".*"):
        shutil.copy(path, target)
    with open(os.path.join(target, "checkpoint"), "w", encoding="utf-8") as state:
        name = os.path.basename(prefix)
        state.write(f'model_checkpoint_path: "{name}"\nall_model_checkpoint_paths: "{name}"\n')


def _wrap_estimator_train(cls: Any, session_run_hook: type | None) -> None:
    """`Estimator.train`: seed (migration side) or save aside (original side) the first weights."""
    original = cls.train
    started: set[int] = set()

    @functools.wraps(original)
    def train(self, *args, **kwargs):
        first = id(self) not in started
        started.add(id(self))
        if first and _state["seed"]:
            _seed(self.model_dir)
        if first and _state["save"] and session_run_hook is not None and not _has_checkpoint(self.model_dir):
            model_dir = self.model_dir

            class _SaveFirstCheckpoint(session_run_hook):
                done = False

                def before_run(self, run_context):  # after every hook's after_create_session: ckpt-0 is written
                    if not self.done:
                        self.done = True
                        _save_first(model_dir)

            hooks = list(kwargs.pop("hooks", None) or [])
            kwargs["hooks"] = hooks + [_SaveFirstCheckpoint()]
        return original(self, *args, **kwargs)

    cls.train = _trained(train, lambda self, *args, **kwargs: self.model_dir)


def _wrap_fit(owner: Any, name: str, model_dir_of: Callable[..., Any]) -> None:
    original = getattr(owner, name)
    started: set[int] = set()

    @functools.wraps(original)
    def fit(*args, **kwargs):
        key = id(args[0]) if args else 0
        if key not in started:
            started.add(key)
            _seed(model_dir_of(*args, **kwargs))
        return original(*args, **kwargs)

    setattr(owner, name, _trained(fit, model_dir_of))


def _fit_model_dir(model, data=None, *args, model_dir=None, config=None, **kwargs):
    if model_dir is None and config is not None:
        model_dir = getattr(config, "model_dir", None)
    if model_dir is None:  # a model that knows its own (`tfm.ModelFnModel`: its estimator's)
        model_dir = getattr(model, "model_dir", None)
    return None if model_dir is None else os.fspath(model_dir)


def _sandboxed(model_dir: Any) -> Any:
    """`model_dir`, or where this run keeps it instead when it lies outside the program's copy
    (`--model-dirs`): a program's `/tmp/mnist_model` is one directory for both runs (the migration
    would continue from the original's checkpoints) and may hold a model of the user's."""
    if not _state["model_dirs"] or model_dir is None:
        return model_dir
    given = os.fspath(model_dir)
    if not given or "://" in given:
        return model_dir
    path = os.path.abspath(given)
    for root in (_state["root"], _state["model_dirs"]):
        if path == root or path.startswith(root + os.sep):
            return model_dir
    target = os.path.join(_state["model_dirs"], path.lstrip(os.sep))
    if path not in _redirected:
        _redirected.add(path)
        _write({"kind": "note", "text": f"model_dir {path} lies outside the program's directory: each run used one of its own"})
    return target


def _sandbox_estimator(cls: Any) -> None:
    """An Estimator class whose model directory (`_model_dir`, its config's) is `_sandboxed`."""
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if getattr(self, "_model_dir", None) is not None:
            self._model_dir = _sandboxed(self._model_dir)
        if getattr(self, "_config", None) is not None:
            self._config = _config_sandboxed(self._config)

    cls.__init__ = __init__


def _config_sandboxed(config: Any) -> Any:
    """`config` (a RunConfig, or None), with its `model_dir` `_sandboxed`."""
    model_dir = getattr(config, "model_dir", None)
    moved = _sandboxed(model_dir)
    return config if moved == model_dir else config.replace(model_dir=moved)


def _sandbox_call(owner: Any, name: str) -> None:
    """A runtime function or constructor whose `model_dir=` and `config=` keywords are `_sandboxed`."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def call(*args, **kwargs):
        if kwargs.get("model_dir") is not None:
            kwargs["model_dir"] = _sandboxed(kwargs["model_dir"])
        if kwargs.get("config") is not None:
            kwargs["config"] = _config_sandboxed(kwargs["config"])
        return original(*args, **kwargs)

    setattr(owner, name, call)


def _install_oracle(tf: Any) -> None:
    estimator = getattr(tf.compat.v1, "estimator", None)
    if estimator is None:
        return
    hook = tf.compat.v1.train.SessionRunHook
    for cls in {estimator.Estimator, estimator.tpu.TPUEstimator}:
        if "evaluate" in vars(cls) or cls is estimator.Estimator:
            _wrap_evaluate(cls)
            _wrap_predict(cls, "predict")
    _wrap_estimator_train(estimator.Estimator, hook)
    _sandbox_estimator(estimator.Estimator)


def _install_runtime(tf: Any) -> None:
    try:
        import tfmigrate.runtime as tfm
    except ImportError:
        return
    _wrap_evaluate(tfm)
    _wrap_predict(tfm, "predict_examples")
    _wrap_fit(tfm, "fit", _fit_model_dir)
    _wrap_evaluate(tfm.ctl.EstimatorLoop)
    _wrap_predict(tfm.ctl.EstimatorLoop, "predict")
    _wrap_fit(tfm.ctl.EstimatorLoop, "train", lambda loop, *a, **k: loop.model_dir)
    for name in ("fit", "evaluate", "predict", "predict_examples", "export_saved_model", "train_and_evaluate"):
        if hasattr(tfm, name):
            _sandbox_call(tfm, name)
    _sandbox_call(tfm.ctl.EstimatorLoop, "__init__")
    hosted = getattr(tfm, "estimator", None)
    if hosted is None:
        return
    # Every class of the hosted namespace that defines `evaluate` (the graph-mode Estimator, the
    # canned estimators over Keras models), wrapped once where it defines it.
    owners = {
        owner
        for value in vars(hosted).values()
        if isinstance(value, type)
        for owner in value.__mro__
        if "evaluate" in vars(owner) and "train" in vars(owner)
    }
    for owner in owners:
        _wrap_evaluate(owner)
        _wrap_predict(owner, "predict")
        _wrap_estimator_train(owner, tf.compat.v1.train.SessionRunHook)
        _sandbox_estimator(owner)


def _module(name: str, **attributes: Any) -> Any:
    import types

    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


# TF 1.15's tf.contrib.data names that tf.data.experimental also has.
_CONTRIB_DATA = (
    "AUTOTUNE", "Counter", "CheckpointInputPipelineHook", "CsvDataset", "Optional", "RandomDataset", "Reducer",
    "SqlDataset", "TFRecordWriter", "bucket_by_sequence_length", "choose_from_datasets", "copy_to_device",
    "dense_to_sparse_batch", "enumerate_dataset", "get_next_as_optional", "get_single_element", "group_by_reducer",
    "group_by_window", "ignore_errors", "make_batched_features_dataset", "make_csv_dataset",
    "make_saveable_from_iterator", "map_and_batch", "parallel_interleave", "parse_example_dataset",
    "prefetch_to_device", "rejection_resample", "sample_from_datasets", "scan", "shuffle_and_repeat", "unbatch",
    "unique",
)


# Names tf-slim (TF 1.15's contrib code) reads from TF's internal modules, which TF 2.13-2.14 moved
# into modules of their own: (module, name) -> (the module it is in now, its name there).
_MOVED_NAMES = {
    ("framework.ops", "Tensor"): ("framework.tensor", "Tensor"),
    ("framework.ops", "IndexedSlices"): ("framework.indexed_slices", "IndexedSlices"),
    ("ops.array_ops", "stack"): ("ops.array_ops_stack", "stack"),
    ("ops.array_ops", "unstack"): ("ops.array_ops_stack", "unstack"),
    ("ops.control_flow_ops", "cond"): ("ops.cond", "cond"),
    ("ops.control_flow_ops", "case"): ("ops.control_flow_case", "case"),
    ("ops.control_flow_ops", "while_loop"): ("ops.while_loop", "while_loop"),
    ("ops.control_flow_ops", "Assert"): ("ops.control_flow_assert", "Assert"),
    ("ops.variable_scope", "variable"): ("ops.variable_v1", "VariableV1"),
}


def restore_moved_tf_names() -> None:
    """The names of `_MOVED_NAMES` back where TF <= 2.12 had them (tf_slim's `optimize_loss`,
    `streaming_concat`, `layers.utils.smart_cond`, `local_variable`, ... look there): for the
    oracle's `tf.contrib` stand-in here, and for `tfm.legacy`."""
    for (module, name), (home, new_name) in _MOVED_NAMES.items():
        old = importlib.import_module(f"tensorflow.python.{module}")
        if not hasattr(old, name):
            setattr(old, name, getattr(importlib.import_module(f"tensorflow.python.{home}"), new_name))


# The graph seed `--seed-graphs` gives the graphs a program leaves unseeded (TF's own default graph
# seed, `random_seed.DEFAULT_GRAPH_SEED`).
GRAPH_SEED = 87654321


def seed_unseeded_graphs(seed: int) -> None:
    """Every graph whose program set no graph-level seed reads as seeded with `seed` (what
    `tf.set_random_seed(seed)` in each graph would do; Estimator sets its RunConfig's
    `tf_random_seed`, None by default, in each graph it builds). A program that seeds nothing draws
    new initial weights, dropout masks and shuffles each run, so two runs of the original disagree;
    seeded alike, the original and a hosted migration draw the same ones."""
    from tensorflow.python.framework import ops

    setter = ops.Graph.seed.fset
    ops.Graph.seed = property(lambda graph: seed if graph._seed is None else graph._seed, setter)  # noqa: SLF001


def seed_python_and_numpy(seed: int) -> None:
    """Python's and NumPy's global generators start from `seed`: a program that draws its data or
    fake inputs with `np.random.rand` and seeds nothing is compared run against run with one seed
    (the runtime puts those generators' states back around the calls it adds, so the migration
    draws what the original drew). A program that seeds them itself reseeds them."""
    import random

    import numpy as np

    random.seed(seed)
    np.random.seed(seed)


def as_tf1() -> None:
    """`import tensorflow` gives `tensorflow.compat.v1`, v2 behaviour disabled (a TF 1.x program),
    with a stand-in `tensorflow.contrib` holding the contrib pieces TF 1.x programs import, each
    where TF 1.15 had moved it (tf.estimator.tpu, tf.data.experimental, tf_slim, ...)."""
    import tensorflow.compat.v1 as tf
    from tensorflow.python.ops import lookup_ops

    tf.disable_v2_behavior()
    real_tf = sys.modules["tensorflow"]
    sys.modules["tensorflow"] = tf
    contrib = _module("tensorflow.contrib")
    contrib.__path__ = []  # a package: `import tensorflow.contrib.tpu` finds the submodules below
    from tensorflow.python.ops import summary_ops_v2

    submodules: dict[str, dict[str, Any]] = {
        # TF 1.15's tf.contrib.summary re-exported summary_ops_v2 (all_summary_ops = all_v2_summary_ops).
        "summary": {name: getattr(summary_ops_v2, name) for name in dir(summary_ops_v2) if not name.startswith("_")}
        | {"all_summary_ops": summary_ops_v2.all_v2_summary_ops},
        "tpu": dict(
            TPUEstimator=tf.estimator.tpu.TPUEstimator,
            TPUEstimatorSpec=tf.estimator.tpu.TPUEstimatorSpec,
            RunConfig=tf.estimator.tpu.RunConfig,
            TPUConfig=tf.estimator.tpu.TPUConfig,
            InputPipelineConfig=tf.estimator.tpu.InputPipelineConfig,
            CrossShardOptimizer=tf.tpu.CrossShardOptimizer,
        ),
        "cluster_resolver": dict(TPUClusterResolver=tf.distribute.cluster_resolver.TPUClusterResolver),
        # TF 1.15's tf.contrib.data re-exported tf.data.experimental's (AUTOTUNE, map_and_batch,
        # parallel_interleave, shuffle_and_repeat, unbatch, CsvDataset, ...).
        "data": {name: getattr(tf.data.experimental, name) for name in _CONTRIB_DATA if hasattr(tf.data.experimental, name)},
        "lookup": {name: getattr(lookup_ops, name) for name in dir(lookup_ops) if not name.startswith("_")},
        "framework": dict(
            get_or_create_global_step=tf.train.get_or_create_global_step,
            get_global_step=tf.train.get_global_step,
            nest=tf.nest,
            is_tensor=tf.is_tensor,
        ),
        "rnn": {name: getattr(tf.nn.rnn_cell, name) for name in dir(tf.nn.rnn_cell) if not name.startswith("_")}
        | dict(static_rnn=tf.nn.static_rnn, static_bidirectional_rnn=tf.nn.static_bidirectional_rnn),
    }
    try:  # tf.contrib.layers / slim / metrics went to tf_slim (installed beside the oracle's TF)
        import tf_slim

        restore_moved_tf_names()

        submodules["layers"] = {name: getattr(tf_slim.layers, name) for name in dir(tf_slim.layers) if not name.startswith("_")}
        # ...and contrib.layers' regularizers and initializers, which tf_slim keeps at its top level.
        submodules["layers"].update(
            (name, getattr(tf_slim, name))
            for name in ("l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer",
                         "apply_regularization", "variance_scaling_initializer", "xavier_initializer",
                         "xavier_initializer_conv2d")
            if hasattr(tf_slim, name)
        )
        # ...and its training helpers (TF 1.15's contrib/layers/python/layers/optimizers.py).
        from tf_slim.layers import optimizers

        submodules["layers"].update(
            (name, getattr(optimizers, name))
            for name in ("optimize_loss", "adaptive_clipping_fn", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES")
        )
        # ...and contrib.training's training loop and evaluation helpers (TF 1.15's
        # contrib/training/python/training/{training,evaluation}.py, which tf-slim kept).
        submodules["training"] = {
            name: getattr(module, name)
            for module in (tf_slim.training, tf_slim.train_eval)
            for name in ("train", "create_train_op", "add_gradients_summaries", "clip_gradient_norms",
                         "clip_gradient_norms_fn", "multiply_gradients", "evaluate_once", "evaluate_repeatedly",
                         "get_or_create_eval_step", "wait_for_new_checkpoint", "checkpoints_iterator",
                         "StopAfterNEvalsHook", "SummaryAtEndHook")
            if hasattr(module, name)
        }
        submodules["metrics"] = {name: getattr(tf_slim.metrics, name) for name in dir(tf_slim.metrics) if not name.startswith("_")}
        submodules["metrics"].update(  # ...and its aliases of core TF
            confusion_matrix=tf.confusion_matrix, set_difference=tf.sets.set_difference,
            set_intersection=tf.sets.set_intersection, set_size=tf.sets.set_size, set_union=tf.sets.set_union,
        )
        setattr(contrib, "slim", tf_slim)
        sys.modules["tensorflow.contrib.slim"] = tf_slim
    except ImportError:
        pass
    for name, attributes in submodules.items():
        setattr(contrib, name, _module(f"tensorflow.contrib.{name}", **attributes))
    contrib.crf = _module("tensorflow.contrib.crf", __getattr__=functools.partial(_contrib_crf, tf, real_tf))
    tf.contrib = contrib  # `tf.contrib.tpu...` as an attribute too


# TF 1.15's tf.contrib.crf functions that TensorFlow Addons' `tfa.text` kept as they were.
_CONTRIB_CRF = ("crf_binary_score", "crf_log_norm", "crf_multitag_sequence_score", "crf_sequence_score",
                "crf_unary_score", "viterbi_decode")


def _contrib_crf(tf: Any, real_tf: Any, name: str) -> Any:
    """An attribute of the stand-in `tensorflow.contrib.crf`: TF 1.15's CRF from where it went,
    TensorFlow Addons' `tfa.text` (installed beside the oracle's TF; imported on first use, against
    TF's own API rather than the TF1 view `import tensorflow` gives the program). As TF 1.15's:
    `crf_log_likelihood` makes its `transitions` with `get_variable` in the variable scope, and
    `crf_decode` gives 0 past each sequence's end."""
    module = sys.modules["tensorflow.contrib.crf"]
    if name.startswith("__"):
        raise AttributeError(name)
    if "crf_decode" not in module.__dict__:
        program_tf, sys.modules["tensorflow"] = sys.modules["tensorflow"], real_tf
        try:
            from tensorflow_addons.text import crf
        finally:
            sys.modules["tensorflow"] = program_tf

        def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
            if transition_params is None:
                num_tags = tf.dimension_value(inputs.shape[2])
                transition_params = tf.get_variable("transitions", [num_tags, num_tags])
            return crf.crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params)

        def crf_decode(potentials, transition_params, sequence_length):
            tags, best_score = crf.crf_decode(potentials, transition_params, sequence_length)
            ends = tf.maximum(tf.cast(sequence_length, tf.int32), 1)  # (TF 1.15 kept a lone tag at length 0)
            return tags * tf.sequence_mask(ends, tf.shape(tags)[1], dtype=tags.dtype), best_score

        module.__dict__.update({n: getattr(crf, n) for n in _CONTRIB_CRF})
        module.__dict__.update(crf_log_likelihood=crf_log_likelihood, crf_decode=crf_decode)
    if name not in module.__dict__:
        raise AttributeError(f"module 'tensorflow.contrib.crf' has no attribute {name!r}")
    return module.__dict__[name]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="proof.py")
    parser.add_argument("--record", required=True)
    parser.add_argument("--save-first-checkpoints")
    parser.add_argument("--seed-from")
    parser.add_argument("--logdir")
    parser.add_argument("--model-dirs", help="keep model directories outside the working directory here instead")
    parser.add_argument("--tf1", action="store_true")
    parser.add_argument("--seed-graphs", action="store_true", help=f"seed every graph the program leaves unseeded ({GRAPH_SEED})")
    parser.add_argument("-m", dest="module", help="run this module as `python -m` would (from the working directory)")
    parser.add_argument("program", nargs="?")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    _state.update(
        record=os.path.abspath(options.record),
        save=options.save_first_checkpoints and os.path.abspath(options.save_first_checkpoints),
        seed=options.seed_from and os.path.abspath(options.seed_from),
        logdir=options.logdir and os.path.abspath(options.logdir),
        model_dirs=options.model_dirs and os.path.abspath(options.model_dirs),
        root=os.getcwd(),
    )
    open(_state["record"], "w").close()
    import tensorflow as tf

    _install_oracle(tf)
    _install_runtime(tf)
    if options.tf1:
        as_tf1()
    if options.seed_graphs:
        seed_unseeded_graphs(GRAPH_SEED)
        seed_python_and_numpy(GRAPH_SEED)
    args = [a for a in ([options.program] if options.module and options.program else []) + options.args if a != "--"]
    if options.module:
        sys.argv = [options.module, *args]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(options.module, run_name="__main__", alter_sys=True)
        return
    program = os.path.abspath(options.program)
    sys.argv = [program, *args]
    sys.path.insert(0, os.path.dirname(program))
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
