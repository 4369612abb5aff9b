"""`Estimator.export_saved_model` on a Keras model: the same serving signatures, as a TF2 SavedModel.

TF1 built the PREDICT graph of `model_fn` on the tensors a `serving_input_receiver_fn` returned
(`ServingInputReceiver(features, receiver_tensors)`), and wrote one signature per entry of the
spec's `export_outputs` (by default `{'serving_default': PredictOutput(predictions)}`) into a
timestamped directory under `export_dir_base`. `export_saved_model` here does the same with
`tf.saved_model.save`:

  * The receiver function is TF1 graph code (`tf.compat.v1.placeholder`, `tf.io.parse_example`):
    it is traced once with `tf.compat.v1.wrap_function` and pruned to a function from the
    receiver tensors to the features, so any TF1 receiver keeps working;
    `build_parsing_serving_input_receiver_fn` and `build_raw_serving_input_receiver_fn` are
    TF1's, returning such functions.
  * The outputs are the model's `export_outputs(features)` when the migrated model has that
    method (a model_fn's `export_outputs=`), else `PredictOutput` of its `predict_step`
    (the model_fn's PREDICT `predictions`), else of its call.
  * Signatures get TF1's names, input keys (`examples` for a parsing receiver; `inputs` for
    classify/regress signatures, which TF1 wrote only for a single string receiver tensor) and
    output keys (`classes`/`scores`, `outputs`, the predictions' keys), and TF1's method names
    (`tensorflow/serving/classify`, `.../regress`, `.../predict`).
  * The directory is `export_dir_base/<unix seconds>` (a second later when that exists), written
    under `temp-<seconds>` first, and the path is returned as bytes, as TF1 returned it.

TPUEstimator (`export_to_tpu=True`, its default) also wrote a `{serve, tpu}` MetaGraph, the
PREDICT graph rewritten for TPU inference, which loads only where TPU kernels exist (on CPU it
fails). The export here writes the `{serve}` MetaGraph only; under a TPUStrategy a warning says so.

Exporters (`LatestExporter`, `BestExporter`, `FinalExporter`) are called by
`train_and_evaluate` after each evaluation, as TF1's `EvalSpec(exporters=...)` were.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Any, Callable, Mapping

import tensorflow as tf

from . import cluster
from .early_stopping import read_eval_metrics
from ._logging import logger, warn_once
from .feature_columns import lookup_tables
from .checkpoints import model_checkpoint
from . import checkpoints
from ._state import model_state

keras = tf.keras

__all__ = [
    "BestExporter",
    "ClassificationOutput",
    "Exporter",
    "FinalExporter",
    "LatestExporter",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
    "export_saved_model",
    "placeholder",
]

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
_SINGLE_FEATURE_DEFAULT_NAME = "feature"
_SINGLE_RECEIVER_DEFAULT_NAME = "input"
_CLASSIFY_METHOD = "tensorflow/serving/classify"
_REGRESS_METHOD = "tensorflow/serving/regress"
_PREDICT_METHOD = "tensorflow/serving/predict"


# -- receivers -----------------------------------------------------------------------------------


def _as_dict(value: Any, default_name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    return {default_name: value}


class ServingInputReceiver:
    """TF1's `tf.estimator.export.ServingInputReceiver(features, receiver_tensors, alternatives)`."""

    def __init__(self, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: Any = None) -> None:
        self.features = _as_dict(features, _SINGLE_FEATURE_DEFAULT_NAME)
        self.receiver_tensors = _as_dict(receiver_tensors, _SINGLE_RECEIVER_DEFAULT_NAME)
        if not self.receiver_tensors:
            raise ValueError("receiver_tensors must be defined.")
        self.receiver_tensors_alternatives = {
            name: _as_dict(tensors, _SINGLE_RECEIVER_DEFAULT_NAME)
            for name, tensors in (receiver_tensors_alternatives or {}).items()
        }
        self.single_feature = False


class TensorServingInputReceiver(ServingInputReceiver):
    """TF1's `TensorServingInputReceiver`: `features` is one tensor, handed to the model as is."""

    def __init__(self, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: Any = None) -> None:
        super().__init__({_SINGLE_FEATURE_DEFAULT_NAME: features}, receiver_tensors, receiver_tensors_alternatives)
        self.single_feature = True


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Any:
    """A receiver tensor in a `serving_input_receiver_fn` (TF1's `tf.placeholder`).

    Receiver functions are traced as TF1 graphs (`tf.compat.v1.wrap_function`), where this is
    `tf.compat.v1.placeholder`; the signature's inputs are these tensors.
    """
    return tf.compat.v1.placeholder(dtype=dtype, shape=shape, name=name)


def build_parsing_serving_input_receiver_fn(feature_spec: Mapping[str, Any], default_batch_size: int | None = None):
    """TF1's: a receiver of serialized `tf.Example`s (`examples`), parsed with `feature_spec`."""

    def serving_input_receiver_fn() -> ServingInputReceiver:
        serialized = tf.compat.v1.placeholder(dtype=tf.string, shape=[default_batch_size], name="input_example_tensor")
        receiver_tensors = {"examples": serialized}
        features = tf.io.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, receiver_tensors)

    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features: Mapping[str, Any], default_batch_size: int | None = None):
    """TF1's: one placeholder per feature (named after it, batch dimension `default_batch_size`).

    `features` maps names to tensors or `tf.TensorSpec`s giving dtype and shape (TF1 took graph
    tensors; their batch dimension is replaced).
    """

    def serving_input_receiver_fn() -> ServingInputReceiver:
        receiver = {}
        for name, tensor in features.items():
            shape = tf.TensorShape(tensor.shape).as_list()
            if shape:
                shape[0] = default_batch_size
            receiver[name] = tf.compat.v1.placeholder(dtype=tensor.dtype, shape=shape, name=name)
        return ServingInputReceiver(dict(receiver), receiver)

    return serving_input_receiver_fn


# -- export outputs ------------------------------------------------------------------------------


class ExportOutput:
    """One serving signature's outputs (TF1's `tf.estimator.export.ExportOutput`)."""

    METHOD = _PREDICT_METHOD

    def outputs(self) -> dict[str, Any]:
        raise NotImplementedError


class PredictOutput(ExportOutput):
    """TF1's `PredictOutput(outputs)`: a tensor (key `output`) or a dict of tensors."""

    def __init__(self, outputs: Any) -> None:
        self._outputs = _as_dict(outputs, "output")

    def outputs(self) -> dict[str, Any]:
        return dict(self._outputs)


class ClassificationOutput(ExportOutput):
    """TF1's `ClassificationOutput(scores=None, classes=None)` (outputs `scores`, `classes`)."""

    METHOD = _CLASSIFY_METHOD

    def __init__(self, scores: Any = None, classes: Any = None) -> None:
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self.scores, self.classes = scores, classes

    def outputs(self) -> dict[str, Any]:
        out = {}
        if self.classes is not None:
            out["classes"] = self.classes
        if self.scores is not None:
            out["scores"] = self.scores
        return out


class RegressionOutput(ExportOutput):
    """TF1's `RegressionOutput(value)` (output `outputs`)."""

    METHOD = _REGRESS_METHOD

    def __init__(self, value: Any) -> None:
        self.value = value

    def outputs(self) -> dict[str, Any]:
        return {"outputs": self.value}


def _model_outputs(model: keras.Model, features: Any) -> dict[str, ExportOutput]:
    """What the model exports for `features`: its `export_outputs`, else its predictions."""
    method = getattr(model, "export_outputs", None)
    if callable(method):
        outputs = dict(method(features))
    else:
        if not isinstance(model, keras.Model):  # an `EstimatorLoop`: its PREDICT step
            predictions = model.predict_step(features)
        elif type(model).predict_step is not keras.Model.predict_step:
            predictions = model.predict_step(features)
        else:
            predictions = model(features, training=False)
        outputs = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(predictions)}
    if DEFAULT_SERVING_SIGNATURE_DEF_KEY not in outputs:
        if len(outputs) != 1:
            raise ValueError(
                "Multiple `export_outputs` were provided, but none of them are specified as the default. "
                "Use 'serving_default' to specify a default."
            )
        outputs[DEFAULT_SERVING_SIGNATURE_DEF_KEY] = next(iter(outputs.values()))
    return outputs


# -- export --------------------------------------------------------------------------------------


def _timestamped_dir(export_dir_base: str) -> str:
    for _ in range(10):
        path = os.path.join(export_dir_base, str(int(time.time())))
        if not tf.io.gfile.exists(path):
            return path
        time.sleep(1)
    raise RuntimeError(f"Failed to obtain a unique export directory name under {export_dir_base!r} after 10 attempts.")


def _trace_receiver(fn: Callable[[], Any]) -> tuple[ServingInputReceiver, dict[str | None, Any]]:
    """The receiver, and per group of receiver tensors a function from them to the features.

    The groups are the receiver tensors (key None) and each of `receiver_tensors_alternatives`
    (key: its name). Each value is `(function, keys, specs)`: the function takes the group's
    tensors in `keys` order; `specs` are their `tf.TensorSpec`s named by key. An alternative the
    features cannot be computed from (they need a tensor it does not feed) maps to None, as TF1
    left out its signatures (`_ensure_servable`).
    """
    box: dict[str, ServingInputReceiver] = {}

    def traced():
        receiver = fn()
        if not isinstance(receiver, ServingInputReceiver):
            raise TypeError(
                "serving_input_receiver_fn must return a tfmigrate.runtime.export.ServingInputReceiver, "
                f"got {type(receiver).__name__}."
            )
        box["receiver"] = receiver
        return receiver.receiver_tensors, receiver.receiver_tensors_alternatives, receiver.features

    wrapped = tf.compat.v1.wrap_function(traced, [])
    receiver = box["receiver"]
    receiver_tensors, alternatives, features = wrapped.structured_outputs
    groups: dict[str | None, Any] = {}
    for group, tensors in [(None, receiver_tensors), *sorted(alternatives.items())]:
        keys = sorted(tensors)
        specs = {k: tf.TensorSpec(tensors[k].shape, tensors[k].dtype, name=k) for k in keys}
        unfed = _unfed_placeholder(features, [tensors[k] for k in keys])
        if unfed is not None and group is not None:
            logger.warning(
                "tfmigrate.runtime.export: the features need placeholder %r, which receiver_tensors_alternatives[%r] "
                "does not feed; its signatures are not written (TF1 left them out too).",
                unfed,
                group,
            )
            groups[group] = None
            continue
        groups[group] = (wrapped.prune(feeds=[tensors[k] for k in keys], fetches=features), keys, specs)
    return receiver, groups


def _unfed_placeholder(fetches: Any, feeds: list[Any]) -> str | None:
    """The name of a placeholder `fetches` need that `feeds` do not cut off, or None (TF1's `_ensure_servable`)."""
    fed = {tensor.ref() for tensor in feeds}
    stack = [t for t in tf.nest.flatten(fetches, expand_composites=True) if t.ref() not in fed]
    seen: set[str] = set()
    while stack:
        op = stack.pop().op
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type == "Placeholder":
            return op.name
        stack.extend(t for t in op.inputs if t.ref() not in fed)
    return None


def signature_functions(model: Any, receiver_fn: Callable[[], Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The serving signatures TF1's `build_all_signature_defs` wrote, as concrete functions.

    One signature per export output on the receiver tensors (named as the output), and one per
    export output on each of `receiver_tensors_alternatives` (named `<alternative>:<output>`).
    `model`: a Keras model, an `EstimatorLoop`, or anything with `export_outputs(features)` ->
    {name: `ExportOutput`} (the strategy tier's model_fn). Returns (functions, method names).
    """
    receiver, groups = _trace_receiver(receiver_fn)

    def features_from(group: Any, inputs: Mapping[str, Any]) -> Any:
        pruned, keys, _ = group
        features = pruned(*[inputs[k] for k in keys])
        if receiver.single_feature:
            return features[_SINGLE_FEATURE_DEFAULT_NAME]
        return features

    # One trace to learn the export outputs' names and kinds.
    kinds: dict[str, type] = {}

    def record_kinds(**inputs):
        outputs = _model_outputs(model, features_from(groups[None], inputs))
        kinds.update({name: type(output) for name, output in outputs.items()})
        return {name: output.outputs() for name, output in outputs.items()}

    tf.function(record_kinds).get_concrete_function(**groups[None][2])
    functions: dict[str, Any] = {}
    methods: dict[str, str] = {}
    for group_name, group in groups.items():
        if group is None:
            continue
        _, keys, specs = group
        single_string = len(keys) == 1 and specs[keys[0]].dtype == tf.string
        for name, kind in kinds.items():
            signature = name if group_name is None else f"{group_name}:{name}"
            if kind in (ClassificationOutput, RegressionOutput):
                if not single_string:
                    logger.warning(
                        "tfmigrate.runtime.export: export output %r (%s) needs a single string receiver tensor, as in "
                        "TF1; signature %r is not written.",
                        name,
                        kind.__name__,
                        signature,
                    )
                    continue
                input_specs = {"inputs": tf.TensorSpec(specs[keys[0]].shape, tf.string, name="inputs")}

                def make(output_name: str, group: Any = group, key: str = keys[0]):
                    def serve(inputs):
                        outputs = _model_outputs(model, features_from(group, {key: inputs}))
                        return dict(outputs[output_name].outputs())

                    return serve

                functions[signature] = tf.function(make(name)).get_concrete_function(**input_specs)
            else:

                def make_predict(output_name: str, group: Any = group):
                    def serve(**inputs):
                        outputs = _model_outputs(model, features_from(group, inputs))
                        return dict(outputs[output_name].outputs())

                    return serve

                functions[signature] = tf.function(make_predict(name)).get_concrete_function(**specs)
            methods[signature] = kind.METHOD
    return functions, methods


def export_saved_model(
    model: keras.Model,
    export_dir_base: str | os.PathLike,
    serving_input_receiver_fn: Callable[[], ServingInputReceiver],
    assets_extra: Mapping[str, str] | None = None,
    as_text: bool = False,
    checkpoint_path: str | None = None,
    experimental_mode: Any = None,
    *,
    config: Any = None,
    model_dir: str | os.PathLike | None = None,
) -> bytes:
    """Exports `model` as TF1 `Estimator.export_saved_model` did (see the module docstring).

    Args:
        model: The migrated Keras model (built: train, evaluate or restore it first), or a
            `ctl.EstimatorLoop` (`loop.export_saved_model(...)`), whose `export_outputs` or
            `predict_step` give the signatures and whose `model` is saved.
        export_dir_base: The directory under which the timestamped export directory is created.
        serving_input_receiver_fn: A function of no arguments returning a `ServingInputReceiver`
            (TF1 graph code is fine: it is traced with `tf.compat.v1.wrap_function`).
        assets_extra: `{destination relative to assets.extra: source path}`, copied as TF1 did.
        as_text: Also write `saved_model.pbtxt`.
        checkpoint_path: Restore these weights first (a TF2 checkpoint of the model) when given.
        experimental_mode: Only PREDICT (None) is supported.
        config: The `RunConfig` (its `model_dir`).
        model_dir: Overrides `config.model_dir`: a model object not yet restored or trained in
            this process is first restored from that directory's latest checkpoint, as TF1
            exported the latest checkpoint.

    Returns:
        The export directory, as bytes (as TF1 returned it).
    """
    if experimental_mode not in (None, "infer", "predict", "PREDICT"):
        raise NotImplementedError("tfmigrate.runtime.export_saved_model exports the PREDICT graph only.")
    if checkpoint_path is not None:
        checkpoint = model_checkpoint(model) if isinstance(model, keras.Model) else model.checkpoint
        checkpoint.restore(os.fspath(checkpoint_path)).expect_partial()
    else:
        _restore_latest(model, config, model_dir)
    functions, methods = signature_functions(model, serving_input_receiver_fn)
    strategy = model.distribute_strategy if isinstance(model, keras.Model) else model.strategy
    module = tf.Module()
    module.model = model if isinstance(model, keras.Model) else model.model  # an `EstimatorLoop`'s model
    module.lookup_tables = lookup_tables(module.model)  # vocabulary columns' tables (not Keras-tracked)
    return write_saved_model(module, functions, methods, strategy, export_dir_base, assets_extra, as_text)


def write_saved_model(module: tf.Module, functions: Mapping[str, Any], methods: Mapping[str, str], strategy: Any,
                      export_dir_base: str | os.PathLike, assets_extra: Mapping[str, str] | None = None,
                      as_text: bool = False) -> bytes:
    """Saves `module` with the signature `functions` (and their TF1 method names) into the next
    timestamped directory under `export_dir_base`, as TF1 wrote an export; returns its path as bytes.

    Under a multi-worker strategy every worker exports (a save may read variables collectively)
    into the chief's timestamped directory name; only the chief writes it, the others write to a
    temporary directory they delete (`cluster.checkpoint_dir`), and all return once it exists.
    """
    export_dir_base = os.fspath(export_dir_base)
    chief = cluster.is_chief(strategy)
    stamp = int(os.path.basename(_timestamped_dir(export_dir_base))) if chief else 0
    export_dir = os.path.join(export_dir_base, str(int(cluster.chief_value(strategy, stamp))))
    write_base, temporary = cluster.checkpoint_dir(export_dir_base, strategy)
    temp_dir = os.path.join(write_base, "temp-" + os.path.basename(export_dir))
    tf.io.gfile.makedirs(write_base)
    if isinstance(strategy, (tf.distribute.TPUStrategy, tf.distribute.experimental.TPUStrategy)):
        warn_once(
            "export.no_tpu_metagraph",
            "tfmigrate.runtime.export_saved_model: only the {serve} MetaGraph is written; TF1 TPUEstimator "
            "(export_to_tpu=True) also wrote a {serve, tpu} MetaGraph rewritten for TPU inference. Export one "
            "for TPU serving separately if you serve on TPUs.",
        )
    tf.saved_model.save(module, temp_dir, signatures=functions)
    _set_method_names(temp_dir, methods)
    if as_text:
        from google.protobuf import text_format
        from tensorflow.core.protobuf import saved_model_pb2

        proto = saved_model_pb2.SavedModel()
        with tf.io.gfile.GFile(os.path.join(temp_dir, "saved_model.pb"), "rb") as f:
            proto.ParseFromString(f.read())
        with tf.io.gfile.GFile(os.path.join(temp_dir, "saved_model.pbtxt"), "w") as f:
            f.write(text_format.MessageToString(proto))
    if assets_extra:
        extra = os.path.join(temp_dir, "assets.extra")
        for dest, source in assets_extra.items():
            target = os.path.join(extra, dest)
            tf.io.gfile.makedirs(os.path.dirname(target))
            tf.io.gfile.copy(source, target, overwrite=True)
    if temporary:
        tf.io.gfile.rmtree(write_base)
    else:
        tf.io.gfile.rename(temp_dir, export_dir)
        logger.info("tfmigrate.runtime: SavedModel written to %s.", export_dir)
    cluster.chief_value(strategy, 0.0)  # Every worker returns once the chief's export is there.
    return export_dir.encode()


def _restore_latest(model: keras.Model, config: Any, model_dir: Any) -> None:
    if not isinstance(model, keras.Model):  # an `EstimatorLoop`: restored when it first ran
        if model._prepared or model.model_dir is None:  # noqa: SLF001
            return
        if not model.model.built:
            raise ValueError(
                "tfmigrate.runtime.export_saved_model: the loop's model is not built; train, evaluate or predict "
                "with it first (TF1 exported the latest checkpoint of the model directory)."
            )
        if checkpoints.latest_checkpoint(model.model_dir) is None:
            raise ValueError(f"Couldn't find trained model at {model.model_dir!r}.")
        model.restore(model.model_dir)
        return
    if model_dir is None and config is not None:
        model_dir = getattr(config, "model_dir", None)
    state = model_state(model)
    if model_dir is None or state.restored:
        return
    if not model.built:
        raise ValueError(
            "tfmigrate.runtime.export_saved_model: the model is not built; train, evaluate or predict with it first "
            "(TF1 exported the latest checkpoint of the model directory)."
        )
    if checkpoints.latest_checkpoint(os.fspath(model_dir)) is None:
        raise ValueError(f"Couldn't find trained model at {os.fspath(model_dir)!r}.")
    checkpoints.restore_latest(model, os.fspath(model_dir))
    state.restored = True


def _set_method_names(export_dir: str, methods: Mapping[str, str]) -> None:
    changes = {name: method for name, method in methods.items() if method != _PREDICT_METHOD}
    if not changes:
        return
    updater = tf.compat.v1.saved_model.signature_def_utils.MethodNameUpdater(export_dir)
    for name, method in changes.items():
        updater.replace_method_name(signature_key=name, method_name=method, tags="serve")
    updater.save()


# -- exporters -----------------------------------------------------------------------------------


class Exporter:
    """TF1's `tf.estimator.Exporter`: `export(model, export_path, checkpoint_path, eval_result, is_the_final_export)`."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    def export(self, model, export_path, checkpoint_path, eval_result, is_the_final_export):
        raise NotImplementedError


def _garbage_collect(export_path: str, keep: int | None) -> None:
    if keep is None or not tf.io.gfile.exists(export_path):
        return
    versions = sorted(
        (int(name), name) for name in tf.io.gfile.listdir(export_path) if name.rstrip("/").isdigit()
    )
    for _, name in versions[: max(0, len(versions) - keep)]:
        shutil.rmtree(os.path.join(export_path, name.rstrip("/")), ignore_errors=True)


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False) -> None:
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self) -> str:
        return self._name

    def _export(self, model, export_path, checkpoint_path=None) -> bytes:
        return export_saved_model(
            model,
            export_path,
            self._serving_input_receiver_fn,
            assets_extra=self._assets_extra,
            as_text=self._as_text,
            checkpoint_path=checkpoint_path,
        )


class LatestExporter(_SavedModelExporter):
    """TF1's `LatestExporter`: exports after every evaluation, keeping the newest `exports_to_keep`."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5) -> None:
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError("`exports_to_keep`, if provided, must be a positive number. Got %s" % exports_to_keep)
        self._exports_to_keep = exports_to_keep

    def export(self, model, export_path, checkpoint_path, eval_result, is_the_final_export):
        path = self._export(model, export_path, checkpoint_path)
        _garbage_collect(export_path, self._exports_to_keep)
        return path


class FinalExporter(_SavedModelExporter):
    """TF1's `FinalExporter`: exports once, after the final evaluation."""

    def export(self, model, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not is_the_final_export:
            return None
        return self._export(model, export_path, checkpoint_path)


def _loss_smaller(best_eval_result: Mapping[str, Any], current_eval_result: Mapping[str, Any]) -> bool:
    """TF1's default BestExporter comparison: the current `loss` is smaller than the best."""
    default_key = "loss"
    if not best_eval_result or default_key not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or default_key not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result[default_key] > current_eval_result[default_key]


class BestExporter(_SavedModelExporter):
    """TF1's `BestExporter`: exports when `compare_fn(best, current)` says the evaluation improved.

    The best result starts from the evaluation results already in the model directory
    (`event_file_pattern`, relative to it; TF1's default `eval/*.tfevents.*`), as TF1 read them.
    """

    def __init__(
        self,
        name="best_exporter",
        serving_input_receiver_fn=None,
        event_file_pattern="eval/*.tfevents.*",
        compare_fn=_loss_smaller,
        assets_extra=None,
        as_text=False,
        exports_to_keep=5,
    ) -> None:
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError("`exports_to_keep`, if provided, must be a positive number")
        self._event_file_pattern = event_file_pattern
        self._compare_fn = compare_fn
        self._exports_to_keep = exports_to_keep
        self._best_eval_result = None
        self._model_dir = None
        self._has_exported = False

    def export(self, model, export_path, checkpoint_path, eval_result, is_the_final_export):
        export_result = None
        model_dir = os.path.dirname(os.path.dirname(os.fspath(export_path)))
        if self._model_dir != model_dir and self._event_file_pattern:
            self._model_dir = model_dir
            self._best_eval_result = self._best_from_events(os.path.join(model_dir, self._event_file_pattern))
        if (
            self._best_eval_result is None
            or not self._has_exported
            or self._compare_fn(best_eval_result=self._best_eval_result, current_eval_result=eval_result)
        ):
            self._best_eval_result = eval_result
            export_result = self._export(model, export_path, checkpoint_path)
            _garbage_collect(export_path, self._exports_to_keep)
            self._has_exported = True
        return export_result

    def _best_from_events(self, pattern: str) -> Any:
        best = None
        directories = sorted({os.path.dirname(p) for p in tf.io.gfile.glob(pattern)})
        for directory in directories:
            for metrics in read_eval_metrics(directory).values():
                if best is None or self._compare_fn(best_eval_result=best, current_eval_result=metrics):
                    best = metrics
        return best
