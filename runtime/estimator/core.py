"""`Estimator`: TF1's `tf.compat.v1.estimator.Estimator` on current TF.

The hosted tier leaves a TF1 `model_fn` as written; this class takes each call (its arguments
checked as TF 2.15's Estimator checked them) to the strategy tier, which runs the model_fn in TF2
(`runtime/model_fn/strategy/`), or where that cannot run it, to the graph-mode tier
(`runtime/model_fn/graph/session_calls.py`, a part of this class). Either way the numbers are
those of TF 2.15's Estimator, whose graph-mode build both tiers follow:

  * every `train`/`evaluate`/`predict`/`export_saved_model` builds a fresh `tf.Graph` whose seed
    is `config.tf_random_seed`, creates the global step, calls `input_fn` (under `/cpu:0`) and then
    `model_fn`, in that order (op-level seeds come from the graph's op count, so the order is
    part of the numbers);
  * `input_fn` and `model_fn` get only the arguments they name (`mode`, `params`, `config`;
    `labels`); a Dataset is read through an initializable iterator;
  * training runs a `MonitoredTrainingSession` with Estimator's hooks: `StopAtStepHook`
    (`steps` counts from the restored step, `max_steps` is absolute and skips training once
    reached), `NanTensorHook`, a loss/step `LoggingTensorHook`, a `CheckpointSaverHook`
    (`save_checkpoints_steps`/`_secs`, `keep_checkpoint_max`, `saving_listeners`), summaries and
    the step counter;
  * evaluation adds `loss` as `tf.compat.v1.metrics.mean(loss)` over the batches, reports
    `global_step`, restores the latest (or given) checkpoint, and writes the results as events in
    `model_dir/eval` (or `eval_<name>`);
  * `warm_start_from` goes through `tf.compat.v1.train.warm_start` when no checkpoint exists;
  * within a training step, every read of a variable runs before the step's writes to it unless
    the program orders them otherwise (`step_order`): the order TF 1.x's executor nearly always
    picked, made certain;
  * outside a distribution strategy, the variables `model_fn` makes without asking for a kind
    are TF 1.x's reference variables (`tf1_variables`), as the program's own TF made them: the
    same numbers as resource variables, and each step runs fewer ops (a resource variable adds a
    read op per use, which made a tiny ALBERT step 1.6x slower than on TF 2.15 with TF 1.x's
    behaviour). `get_variable(use_resource=True)` still gets a resource variable.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import tempfile
from typing import Any, Iterator

import numpy as np
import tensorflow as tf
from tensorflow.python.training import evaluation as tf1_evaluation

from .._logging import logger
from ..config import RunConfig
from ..inputs import ModeKeys, dataset_form, named_parameters
from .. import model_fn as model_fn_tiers
from ..model_fn.graph import distribute, saved_model
from ..model_fn.graph.session_calls import GraphModeCalls
from ..model_fn.strategy.tf1_build import tf1_control_flow
from .spec import EstimatorSpec

__all__ = ["Estimator", "WarmStartSettings", "VocabInfo"]

VocabInfo = tf.compat.v1.train.VocabInfo


@contextlib.contextmanager
def tf1_variables() -> Iterator[None]:
    """Variables made inside are TF 1.x's reference variables unless they ask for a kind (the root
    variable scope re-entered with `use_resource=False`, which `get_variable`, `compat.v1.Variable`
    and the legacy layers read), and `tf.cond`/`tf.while_loop` build TF 1.x's control flow: a
    reference variable assigned in a branch (tf-slim's `streaming_concat`) is not a tensor a TF2
    branch function can assign. Under a distribution strategy, whose variables must be resource
    variables, and inside a `tf.function` (the strategy tier), nothing changes."""
    if tf.distribute.has_strategy() or tf.inside_function():  # a strategy, or the strategy tier's tf.function
        yield
        return
    with tf1_control_flow(), \
            tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), use_resource=False):
        yield


@contextlib.contextmanager
def keras_names_per_graph() -> Iterator[None]:
    """Keras layers made inside are named afresh (`dense`, `dense_1`, ...), as Keras 2 named them
    in each graph; Keras 3 counts names per process, so a model_fn's `tf.keras.layers` made
    `dense_3` in the eval graph where training had saved `dense`, and its checkpoint did not
    restore. The process's own counts are kept for the Keras code around it."""
    try:
        from keras.src.backend.common import global_state
    except ImportError:  # pragma: no cover - Keras 3 moved its state: nothing to keep apart
        yield
        return
    saved = global_state.get_global_attribute("object_name_uids")
    global_state.set_global_attribute("object_name_uids", collections.defaultdict(int))
    try:
        yield
    finally:
        global_state.set_global_attribute("object_name_uids", saved)


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        ["ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info", "var_name_to_prev_var_name"],
    )
):
    """TF1's `tf.estimator.WarmStartSettings`: the arguments of `tf.compat.v1.train.warm_start`."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(
            cls, os.fspath(ckpt_to_initialize_from), vars_to_warm_start, var_name_to_vocab_info or {},
            var_name_to_prev_var_name or {},
        )


def _warm_start_settings(warm_start_from: Any) -> WarmStartSettings | None:
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        variables = os.path.join(path, "variables", "variables")
        if tf.io.gfile.exists(variables + ".index"):  # A SavedModel directory.
            return WarmStartSettings(variables)
        return WarmStartSettings(path)
    raise ValueError(f"warm_start_from must be a string or a WarmStartSettings, instead got {type(warm_start_from)}")


def default_session_config() -> Any:
    """TF1 Estimator's session config: soft placement, one round of Grappler's meta optimizer."""
    from tensorflow.core.protobuf import rewriter_config_pb2

    rewrite = rewriter_config_pb2.RewriterConfig(meta_optimizer_iterations=rewriter_config_pb2.RewriterConfig.ONE)
    return tf.compat.v1.ConfigProto(allow_soft_placement=True, graph_options=tf.compat.v1.GraphOptions(rewrite_options=rewrite))


def config_with_model_dir(config: Any, model_dir: Any) -> RunConfig:
    if config is None:
        config = RunConfig()
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be an instance of `RunConfig`, but provided {config!r}.")
    model_dir = os.fspath(model_dir) if model_dir is not None else None
    if model_dir and config.model_dir is not None and config.model_dir != model_dir:
        raise ValueError(
            "`model_dir` are set both in constructor and `RunConfig`, but with different values. "
            f"In constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' "
        )
    if model_dir:
        return config.replace(model_dir=model_dir)
    if config.model_dir is None:
        model_dir = tempfile.mkdtemp()
        logger.warning("Using temporary folder as model directory: %s", model_dir)
        return config.replace(model_dir=model_dir)
    return config


def _global_step_from_checkpoint(model_dir: str) -> int:
    path = tf.train.latest_checkpoint(model_dir)
    if not path:
        return 0
    try:
        return int(tf.train.load_variable(path, tf.compat.v1.GraphKeys.GLOBAL_STEP))
    except (tf.errors.NotFoundError, ValueError):
        return 0


def load_global_step_from_checkpoint_dir(checkpoint_dir: str) -> int:
    """TF's `estimator._load_global_step_from_checkpoint_dir` (which TF1 programs called to resume
    their schedule): the global step of the directory's latest checkpoint, 0 without one (or on
    any error, as there). The hosted tier's checkpoints (`model.ckpt-N`) hold TF1's `global_step`;
    those of a model_fn the Keras tier migrated (`ckpt-N`) are object-based, their step in the name."""
    try:
        step = _global_step_from_checkpoint(checkpoint_dir)
        found = None if step else re.search(r"(?:^|/)ckpt-(\d+)$", tf.train.latest_checkpoint(checkpoint_dir) or "")
        return int(found.group(1)) if found else step
    except Exception:  # noqa: BLE001 - TF's returned 0 for any failure too
        return 0


def _check_hooks(hooks: Any, kind: type = tf.compat.v1.train.SessionRunHook, what: str = "SessionRunHook") -> list:
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, kind):
            raise TypeError(f"All hooks must be {what} instances, given: {hook!r}")
    return hooks


def _summary_value(summary: Any, key: str, value: Any) -> None:
    if isinstance(value, (np.floating, float)):
        summary.value.add(tag=key, simple_value=float(value))
    elif isinstance(value, (np.integer, int)):
        summary.value.add(tag=key, simple_value=int(value))
    elif isinstance(value, bytes):
        try:
            parsed = tf.compat.v1.Summary.FromString(value)
        except Exception:  # noqa: BLE001 - TF1 skipped strings that are not Summary protos
            logger.warning("Skipping summary for %s, cannot parse string to Summary.", key)
            return
        for index, item in enumerate(parsed.value):
            item.tag = f"{key}/{index}"
        summary.value.extend(parsed.value)
    elif isinstance(value, np.ndarray):
        entry = summary.value.add(tag=key, node_name=key)
        entry.tensor.CopyFrom(tf.make_tensor_proto(value))
    else:
        logger.warning("Skipping summary for %s: unsupported type %s.", key, type(value).__name__)


def write_eval_summary(output_dir: str, results: dict, global_step: int, checkpoint_path: str | None) -> None:
    """The eval results as one event at `global_step` in `output_dir` (Estimator's eval events)."""
    with tf.Graph().as_default():  # TF1's FileWriter refuses eager mode.
        _write_eval_summary(output_dir, results, global_step, checkpoint_path)


def _write_eval_summary(output_dir: str, results: dict, global_step: int, checkpoint_path: str | None) -> None:
    writer = tf.compat.v1.summary.FileWriterCache.get(output_dir)
    summary = tf.compat.v1.Summary()
    for key, value in results.items():
        if value is None or key == tf.compat.v1.GraphKeys.GLOBAL_STEP:
            continue
        _summary_value(summary, key, value)
    writer.add_summary(summary, global_step)
    if checkpoint_path:
        path_summary = tf.compat.v1.Summary()
        path_summary.value.add(tag="checkpoint_path", tensor=tf.make_tensor_proto(checkpoint_path, dtype=tf.string))
        writer.add_summary(path_summary, global_step)
    writer.flush()


class CheckpointReader:
    """The Estimator methods that read its model directory (`latest_checkpoint` comes from the class)."""

    _model_dir: str

    def latest_checkpoint(self) -> str | None:  # pragma: no cover - each estimator class defines it
        raise NotImplementedError

    def _checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if not path:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        return path

    def get_variable_names(self) -> list[str]:
        return [name for name, _ in tf.train.list_variables(self._checkpoint())]

    def get_variable_value(self, name: str) -> Any:
        return tf.train.load_variable(self._checkpoint(), name)

    def eval_dir(self, name: str | None = None) -> str:
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)


class Estimator(CheckpointReader, GraphModeCalls):
    """TF1's `tf.compat.v1.estimator.Estimator`, in TF1 graph mode (see the module docstring)."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None) -> None:
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        self._config = config_with_model_dir(config, model_dir)
        self._model_dir = self._config.model_dir
        session_config = self._config.session_config
        self._session_config = session_config if session_config is not None else default_session_config()
        self._check_model_fn(model_fn, params)
        self._model_fn = model_fn
        self._params = dict(params or {})
        self._warm_start_settings = _warm_start_settings(warm_start_from)
        self._tier = model_fn_tiers.tier()
        if self._tier == "graph":  # (the strategy tier runs more strategies; it checks a call it leaves to graph mode)
            for strategy in (self._config.train_distribute, self._config.eval_distribute):
                if strategy is not None:
                    distribute.check_strategy(strategy)
        self._runner: Any = None
        self._distributed_runners: list = []  # (RunConfig strategy, its runner)
        self._exporter: Any = None  # the strategy tier's runner for exports
        self._local_runner: Any = None  # evaluation and prediction beside parameter-server training
        self._host: dict[str, Any] = {}  # what `run_under` set: the strategy, steps per call, XLA

    # -- the strategy tier -----------------------------------------------------------------------

    def _strategy_tier(self, what: str, *, distributed: Any = None, hooks: Any = None) -> Any:
        """The strategy tier's runner for this call, or None (the call runs in graph mode).

        `distributed` (the RunConfig's `train_distribute`/`eval_distribute` for this call): the
        model_fn runs under that strategy as TF 1.x's Estimator ran it there (`ModelFnRunner`'s
        `distribute_as_estimator`); otherwise under TFMIGRATE_STRATEGY, `run_under`'s strategy or
        the default one."""
        if self._tier != "strategy":
            return None
        reason = None
        if not tf.compat.v1.executing_eagerly_outside_functions():
            reason = "the program disabled eager execution (TF1 graph mode)"
        elif unsupported := model_fn_tiers.hooks_unsupported(hooks):
            reason = f"{what}(hooks=...): {unsupported}"
        elif distributed is not None:
            reason = model_fn_tiers.distribute_unsupported(distributed)
        if reason:
            logger.warning("%s runs in graph mode: %s.", what.capitalize(), reason)
            return None
        if distributed is not None:
            return self._distributed_runner(distributed)
        if what != "train" and self._runner is not None and self._runner.trains_on_parameter_servers:
            return self._coordinator_runner()
        if self._runner is None:
            host = self._host
            strategy = model_fn_tiers.strategy_from_env() or self._host_strategy() or self._default_strategy()
            self._runner = model_fn_tiers.ModelFnRunner(
                self, strategy, steps_per_call=self._steps_per_call(), jit_compile=bool(host.get("jit_compile")),
                **self._runner_options())
        return self._runner

    def _coordinator_runner(self) -> Any:
        """The runner for evaluation and prediction where training runs on parameter servers: on
        this process (the coordinator), one device, from the checkpoint, as TF 1.x's chief or
        evaluator ran them."""
        if self._local_runner is None:
            self._local_runner = model_fn_tiers.ModelFnRunner(
                self, tf.distribute.get_strategy(), steps_per_call=self._steps_per_call(),
                **self._runner_options())
        return self._local_runner

    def _host_strategy(self) -> Any:
        """`run_under`'s strategy, unless it is the RunConfig's own: a call TF 1.x's Estimator ran
        with no strategy (an evaluation with no `eval_distribute`, a prediction) runs on one device."""
        strategy = self._host.get("strategy")
        if strategy is not None and strategy in (self._config.train_distribute, self._config.eval_distribute):
            return None
        return strategy

    def _distributed_runner(self, strategy: Any) -> Any:
        """The runner under a RunConfig's own strategy (one per strategy: train and eval may differ)."""
        for known, runner in self._distributed_runners:
            if known is strategy:
                return runner
        runner = model_fn_tiers.ModelFnRunner(self, strategy, distribute_as_estimator=True,
                                              steps_per_call=self._steps_per_call(),
                                              jit_compile=bool(self._host.get("jit_compile")))
        self._distributed_runners.append((strategy, runner))
        return runner

    def _steps_per_call(self) -> int:
        return self._host.get("steps_per_call") or getattr(self._config, "iterations_per_loop", 1) or 1

    def run_under(self, strategy: Any = None, *, steps_per_call: int | None = None, jit_compile: bool = False) -> None:
        """Sets how the strategy tier runs this model_fn from now on (`tfm.ModelFnModel` calls it):
        under `strategy` (None: the one TFMIGRATE_STRATEGY names, else the estimator's own),
        `steps_per_call` steps per `tf.function` call (None: `iterations_per_loop`), every step
        compiled with XLA when `jit_compile`. TFMIGRATE_STRATEGY still wins over `strategy`."""
        if self._runner is not None or self._distributed_runners:
            raise RuntimeError("run_under(): this estimator's strategy tier already ran; set it before the first call.")
        self._host = {"strategy": strategy, "steps_per_call": steps_per_call, "jit_compile": jit_compile}

    def _default_strategy(self) -> Any:
        """The strategy the strategy tier runs under when TFMIGRATE_STRATEGY names none: the one in
        scope; in a TF 1.x parameter-server cluster (`TF_CONFIG` with "ps" tasks), which TF 1.x's
        Estimator trained asynchronously, a ParameterServerStrategy coordinated by the chief (the
        program run as a ps or worker task serves that task's server: `make_strategy`)."""
        if not tf.distribute.has_strategy():
            from ..cluster import tf_config

            task = tf_config()
            if task is not None and task.cluster.get("ps") and task.task_type in ("chief", "worker", "ps"):
                from ..strategy import make_strategy

                return make_strategy("auto")
        return tf.distribute.get_strategy()

    def _runner_options(self) -> dict:
        return {}

    @contextlib.contextmanager
    def _on_strategy_tier(self, strategy: Any) -> Iterator[None]:
        """Entered by the strategy tier around each of its calls (TPUEstimator takes its TPU code path)."""
        yield

    @staticmethod
    def _check_model_fn(model_fn: Any, params: Any) -> None:
        args = named_parameters(model_fn)
        if "features" not in args:
            raise ValueError(f"model_fn ({model_fn}) must include features argument.")
        if params is not None and "params" not in args:
            raise ValueError(f"model_fn ({model_fn}) does not include params argument, but params ({params}) is passed to Estimator.")

    # -- properties ------------------------------------------------------------------------------

    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self) -> RunConfig:
        return self._config

    @property
    def params(self) -> dict:
        return dict(self._params)

    @property
    def model_fn(self):
        def public_model_fn(features, labels, mode, config):
            return self._call_model_fn(features, labels, mode, config)

        return public_model_fn

    def latest_checkpoint(self) -> str | None:
        return tf.train.latest_checkpoint(self._model_dir)

    # -- calling the user's functions ------------------------------------------------------------

    def _input_fn_kwargs(self, input_fn: Any, mode: str) -> dict:
        args = named_parameters(input_fn)
        kwargs: dict[str, Any] = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self.config
        return kwargs

    def _call_input_fn(self, input_fn: Any, mode: str, input_context: Any = None) -> Any:
        input_fn = dataset_form(input_fn)
        kwargs = self._input_fn_kwargs(input_fn, mode)
        if input_context is not None and "input_context" in named_parameters(input_fn):
            kwargs["input_context"] = input_context  # From a strategy's make_input_fn_iterator.
        with tf.compat.v1.device("/cpu:0"):
            return input_fn(**kwargs)

    def _model_fn_kwargs(self, labels: Any, mode: str, config: Any) -> dict:
        args = named_parameters(self._model_fn)
        kwargs: dict[str, Any] = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        return kwargs

    def _call_model_fn(self, features: Any, labels: Any, mode: str, config: Any, is_export: bool = False) -> EstimatorSpec:
        kwargs = self._model_fn_kwargs(labels, mode, config)
        with tf1_variables(), keras_names_per_graph():
            spec = self._model_fn(features=features, **kwargs)
        return self._as_estimator_spec(spec)

    def _as_estimator_spec(self, spec: Any) -> EstimatorSpec:
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec

    def _create_global_step(self, graph: tf.Graph) -> Any:
        return tf.compat.v1.train.create_global_step(graph)

    def _start_graph(self, graph: tf.Graph) -> Any:
        tf.compat.v1.random.set_random_seed(self._config.tf_random_seed)
        return self._create_global_step(graph)

    def _maybe_warm_start(self, checkpoint_path: str | None) -> None:
        if not checkpoint_path and self._warm_start_settings:
            logger.info("Warm-starting with WarmStartSettings: %s", self._warm_start_settings)
            tf.compat.v1.train.warm_start(*self._warm_start_settings)

    # -- train -----------------------------------------------------------------------------------

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains the model: `steps` more steps, or up to global step `max_steps` (TF1's rules)."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= _global_step_from_checkpoint(self._model_dir):
            logger.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _check_hooks(hooks)
        listeners = _check_hooks(saving_listeners, tf.compat.v1.train.CheckpointSaverListener, "CheckpointSaverListener")
        runner = self._strategy_tier("train", distributed=self._config.train_distribute, hooks=hooks)
        if runner is not None:
            try:
                runner.train(input_fn, steps, max_steps, listeners, hooks=hooks)
                return self
            except model_fn_tiers.Unsupported as reason:
                logger.warning("Training runs in graph mode: %s.", reason)
        self._train_in_graph_mode(input_fn, hooks, steps, max_steps, listeners)
        return self

    # -- evaluate --------------------------------------------------------------------------------

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None) -> dict:
        """Evaluates `steps` batches (or until the input ends); returns metrics, `loss`, `global_step`."""
        hooks = _check_hooks(hooks)
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        user_hooks = list(hooks)
        if steps is not None:
            hooks.append(tf1_evaluation._StopAfterNEvalsHook(num_evals=steps))  # noqa: SLF001 - TF1's own hook
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                logger.info("Could not find trained model in model_dir: %s, running initialization to evaluate.", self._model_dir)
        runner = self._strategy_tier("evaluate", distributed=self._config.eval_distribute, hooks=user_hooks)
        if runner is not None:
            try:
                results = runner.evaluate(input_fn, steps, checkpoint_path, hooks=user_hooks)
            except model_fn_tiers.Unsupported as reason:
                logger.warning("Evaluation runs in graph mode: %s.", reason)
            else:
                step = results[tf.compat.v1.GraphKeys.GLOBAL_STEP]
                logger.info("Saving dict for global step %d: %s", step, _format(results))
                write_eval_summary(self.eval_dir(name), results, step, checkpoint_path)
                return results
        results = self._evaluate_in_graph_mode(input_fn, hooks, checkpoint_path)
        step = results[tf.compat.v1.GraphKeys.GLOBAL_STEP]
        logger.info("Saving dict for global step %d: %s", step, _format(results))
        write_eval_summary(self.eval_dir(name), results, step, checkpoint_path)
        return results

    # -- predict ---------------------------------------------------------------------------------

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True) -> Iterator[Any]:
        """Yields predictions (one example at a time, or whole batches) until the input ends."""
        hooks = _check_hooks(hooks)
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
        if not checkpoint_path:
            logger.info("Could not find trained model in model_dir: %s, running initialization to predict.", self._model_dir)
        runner = self._strategy_tier("predict", hooks=hooks)
        if runner is not None:
            try:
                predictions = runner.predict(input_fn, predict_keys, checkpoint_path, yield_single_examples, hooks=hooks)
            except model_fn_tiers.Unsupported as reason:
                logger.warning("Prediction runs in graph mode: %s.", reason)
            else:
                yield from predictions
                return
        yield from self._predict_in_graph_mode(input_fn, predict_keys, hooks, checkpoint_path, yield_single_examples)

    # -- export ----------------------------------------------------------------------------------

    def export_saved_model(
        self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False, checkpoint_path=None,
        experimental_mode=ModeKeys.PREDICT,
    ):
        """Writes a TF1 SavedModel (`{serve}` MetaGraph of PREDICT mode); returns its path as bytes."""
        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        return self._export_all(
            export_dir_base, {experimental_mode: serving_input_receiver_fn}, assets_extra=assets_extra,
            as_text=as_text, checkpoint_path=checkpoint_path, strip_default_attrs=True,
        )

    def export_savedmodel(
        self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False, checkpoint_path=None,
        strip_default_attrs=False,
    ):
        """TF1's deprecated spelling of `export_saved_model`."""
        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        return self._export_all(
            export_dir_base, {ModeKeys.PREDICT: serving_input_receiver_fn}, assets_extra=assets_extra,
            as_text=as_text, checkpoint_path=checkpoint_path, strip_default_attrs=strip_default_attrs,
        )

    def experimental_export_all_saved_models(
        self, export_dir_base, input_receiver_fn_map, assets_extra=None, as_text=False, checkpoint_path=None
    ):
        return self._export_all(
            export_dir_base, input_receiver_fn_map, assets_extra=assets_extra, as_text=as_text,
            checkpoint_path=checkpoint_path, strip_default_attrs=True,
        )

    def _export_all(self, export_dir_base, receiver_fn_map, *, assets_extra, as_text, checkpoint_path,
                    strip_default_attrs) -> bytes:
        """On the strategy tier a TF2 SavedModel of the PREDICT graph (`model_fn/strategy/exports.py`); in
        graph mode (another mode's MetaGraph too, or what `exports.py` refuses, with the reason
        logged) TF 1.x's SavedModel."""
        runner = self._export_runner(receiver_fn_map)
        if runner is not None:
            checkpoint_path = saved_model.checkpoint_for_export(self, checkpoint_path)
            try:
                return runner.export_saved_model(receiver_fn_map[ModeKeys.PREDICT], export_dir_base, checkpoint_path,
                                                 assets_extra=assets_extra, as_text=as_text)
            except model_fn_tiers.Unsupported as reason:
                logger.warning("Export runs in graph mode: %s.", reason)
        return saved_model.export_all_saved_models(
            self, export_dir_base, receiver_fn_map, assets_extra=assets_extra, as_text=as_text,
            checkpoint_path=checkpoint_path, strip_default_attrs=strip_default_attrs,
        )

    def _export_runner(self, receiver_fn_map: dict) -> Any:
        """The strategy tier's runner for exports (its own variables, under the strategy in scope,
        the model_fn called as for an export), or None (the export runs in graph mode)."""
        if self._tier != "strategy":
            return None
        reason = None
        if not tf.compat.v1.executing_eagerly_outside_functions():
            reason = "the program disabled eager execution (TF1 graph mode)"
        elif set(mode for mode, fn in receiver_fn_map.items() if fn) != {ModeKeys.PREDICT}:
            reason = "a TRAIN or EVAL MetaGraph (experimental_export_all_saved_models) is written by TF 1.x's builder"
        if reason:
            logger.warning("Export runs in graph mode: %s.", reason)
            return None
        if self._exporter is None:
            self._exporter = model_fn_tiers.ModelFnRunner(self, tf.distribute.get_strategy(), export=True)
        return self._exporter


def _format(results: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(results.items()) if not isinstance(v, bytes))
