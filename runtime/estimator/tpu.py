"""`tfm.estimator.tpu`: TF1's `tf.estimator.tpu` (`tf.contrib.tpu`), run as TPUEstimator ran off TPU.

This runtime runs on CPUs/GPUs only. `TPUEstimator(use_tpu=False)` behaves as TF 2.15's did;
`use_tpu=True` is logged once and run the same way (TF1's CPU path), never on a TPU:

  * `input_fn` and `model_fn` must take `params`; both get a copy of `params` with `batch_size`
    (the mode's `train_/eval_/predict_batch_size`, when given) and `model_fn`'s also `use_tpu`
    (False); exporting calls `model_fn` with `use_tpu=False` and no `batch_size`;
  * the global step is TPUEstimator's resource variable;
  * a `TPUEstimatorSpec` is run as its CPU form (`as_estimator_spec`): `eval_metrics`' metric_fn
    called on its tensors, `host_call`'s ops run with every step, `scaffold_fn()` called;
  * training runs `iterations_per_loop` steps per `session.run` in an in-graph loop, as on TPU,
    wherever that gives the per-step numbers, and step by step as TF 2.15 did otherwise
    (`tpu_loop`);
  * `num_shards`, `batch_axis`, `eval_on_tpu`, `export_to_tpu` (the
    `{serve, tpu}` MetaGraph is not written) and the embedding config have no effect off TPU.
"""

from __future__ import annotations

import contextlib
import copy
import random
from typing import Any, Iterator

import numpy as np
import tensorflow as tf
from tensorflow.python.training import training_util

from .._logging import logger, warn_once
from ..config import InputPipelineConfig, RunConfig, TPUConfig
from ..inputs import ModeKeys, dataset_form, named_parameters
from .core import Estimator, tf1_variables
from .spec import EstimatorSpec, TPUEstimatorSpec
from ..model_fn.graph.tpu_loop import LoopStepsHook, NotLoopable, build_train_loop

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec", "ExportSavedModelApiVersion"]

_RESERVED_PARAMS = ("batch_size", "context")


class ExportSavedModelApiVersion:
    V1 = 1
    V2 = 2


def _check_batch_size(value: Any, name: str) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
        raise ValueError(f"`{name}` must be a positive int, got {value!r}.")


class TPUEstimator(Estimator):
    """TF1's `tf.estimator.tpu.TPUEstimator` on its CPU path (see the module docstring)."""

    def __init__(
        self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True, train_batch_size=None,
        eval_batch_size=None, predict_batch_size=None, batch_axis=None, eval_on_tpu=True, export_to_tpu=True,
        export_to_cpu=True, warm_start_from=None, embedding_config_spec=None,
        export_saved_model_api_version=ExportSavedModelApiVersion.V1,
    ) -> None:
        params = dict(params or {})
        reserved = [key for key in _RESERVED_PARAMS if key in params]
        if reserved:
            raise ValueError(f"{reserved} are reserved keys but existed in params {params}.")
        if model_fn is not None and "params" not in named_parameters(model_fn):
            raise ValueError(
                f"model_fn ({model_fn}) does not include params argument, required by TPUEstimator to pass batch size "
                "as params['batch_size']"
            )
        for value, name in ((train_batch_size, "train_batch_size"), (eval_batch_size, "eval_batch_size"),
                            (predict_batch_size, "predict_batch_size")):
            _check_batch_size(value, name)
        if use_tpu and train_batch_size is None:
            raise ValueError("`train_batch_size` cannot be `None`")
        if embedding_config_spec is not None:
            raise NotImplementedError("TPUEstimator(embedding_config_spec=...) (TPU embeddings) needs a TPU; tfmigrate.runtime runs without one.")
        if config is not None and (getattr(config, "train_distribute", None) or getattr(config, "eval_distribute", None)):
            raise NotImplementedError(
                "tfm.estimator.tpu.TPUEstimator: RunConfig(train_distribute/eval_distribute=...) is not supported "
                "(TPUEstimator runs on its CPU path here). Use tfm.estimator.Estimator with MirroredStrategy, or "
                "drop the strategy."
            )
        super().__init__(model_fn, model_dir=model_dir, config=config, params=params, warm_start_from=warm_start_from)
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size, ModeKeys.PREDICT: predict_batch_size}
        self._use_tpu = use_tpu
        self._export_to_tpu = export_to_tpu
        self._tpu_replicas: int | None = None  # set while the strategy tier runs the TPU code path
        if use_tpu and self._tier == "graph":
            warn_once(
                "tpu-estimator-on-cpu",
                "TPUEstimator(use_tpu=True): the graph-mode tier has no TPU; running on the CPU as "
                "TPUEstimator(use_tpu=False) did (TFMIGRATE_MODEL_FN_TIER=strategy runs the TPU code path under "
                "TPUStrategy, or on the local devices).",
            )

    # -- the strategy tier: the TPU code path on the strategy's replicas --------------------------

    def _default_strategy(self) -> Any:
        if not self._use_tpu:
            return super()._default_strategy()
        from ..strategy import make_strategy

        # A TPUStrategy on the TPU the program's RunConfig names (`cluster=TPUClusterResolver(...)`,
        # as BERT builds it from --tpu_name, or a `master="grpc://..."` address) or, with neither,
        # the one TPUClusterResolver() finds; where no TPU resolves, the local devices.
        config = self._config
        master = getattr(config, "master", None)
        return make_strategy("auto", use_tpu=True, cluster_resolver=getattr(config, "cluster", None),
                             tpu=master if isinstance(master, str) and master.startswith("grpc://") else None)

    def _runner_options(self) -> dict:
        return {"tpu_code_path": bool(self._use_tpu), "split_batches": not self._use_tpu}

    @contextlib.contextmanager
    def _on_strategy_tier(self, strategy: Any) -> Iterator[None]:
        """`use_tpu=True` on the strategy tier: the program's TPU code path, each replica a TPU core
        (`params['use_tpu']` True, `params['batch_size']` the per-replica batch, the input_fn called
        for per-replica batches), whatever the strategy's devices."""
        if not self._use_tpu:
            yield
            return
        self._tpu_replicas = strategy.num_replicas_in_sync
        try:
            yield
        finally:
            self._tpu_replicas = None

    def _batch_size(self, mode: str) -> int | None:
        size = self._batch_sizes[mode]
        replicas = self._tpu_replicas
        if size is None or not replicas:
            return size
        if size % replicas:
            raise ValueError(f"The {mode} batch size {size} is not divisible by the {replicas} replicas (TPU cores).")
        return size // replicas

    def _create_global_step(self, graph: tf.Graph) -> Any:
        if tf.compat.v1.train.get_global_step(graph) is not None:
            raise ValueError('"global_step" already exists.')
        with graph.as_default() as g, g.name_scope(None):
            return tf.compat.v1.get_variable(
                tf.compat.v1.GraphKeys.GLOBAL_STEP, shape=[], dtype=tf.int64,
                initializer=tf.compat.v1.initializers.zeros(), trainable=False, use_resource=True,
                collections=[tf.compat.v1.GraphKeys.GLOBAL_VARIABLES, tf.compat.v1.GraphKeys.GLOBAL_STEP],
            )

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        self._train_request = (steps, max_steps, bool(hooks))
        return super().train(input_fn, hooks=hooks, steps=steps, max_steps=max_steps, saving_listeners=saving_listeners)

    def _train_in_graph(self, graph, input_fn, hooks, listeners):
        iterations = self._config.iterations_per_loop
        steps, max_steps, user_hooks = getattr(self, "_train_request", (None, None, bool(hooks)))
        if iterations > 1 and not user_hooks:
            loop_graph = tf.Graph()
            random_states = random.getstate(), np.random.get_state()
            try:
                with loop_graph.as_default(), loop_graph.device(self._config.device_fn):
                    loop = self._build_train_loop(loop_graph, input_fn, iterations, steps, max_steps)
            except NotLoopable as reason:
                # The step-by-step graph must draw what the attempt drew (tf.layers seed from `random`).
                random.setstate(random_states[0])
                np.random.set_state(random_states[1])
                logger.info("Training one step per session.run: %s.", reason)
            else:
                spec, input_hooks, global_step = loop
                with loop_graph.as_default(), loop_graph.device(self._config.device_fn):
                    return self._train_with_spec(spec, input_hooks, hooks, global_step, listeners, iterations)
        return super()._train_in_graph(graph, input_fn, hooks, listeners)

    def _build_train_loop(self, graph, input_fn, iterations, steps, max_steps):
        self._start_graph(graph)
        training_util._get_or_create_global_step_read(graph)  # noqa: SLF001 - Estimator's step read
        dataset = self._call_input_fn(input_fn, ModeKeys.TRAIN)
        spec, count, input_hooks, step_after = build_train_loop(
            graph, dataset, lambda features, labels: self._call_model_fn(features, labels, ModeKeys.TRAIN, self._config),
            iterations,
        )
        config = self._config
        loop_hook = LoopStepsHook(count, step_after, iterations, steps, max_steps, config.save_checkpoints_steps,
                                  config.save_summary_steps, self._model_dir)
        logger.info("Training %d steps per session.run (iterations_per_loop) in an in-graph loop.", iterations)
        return spec, input_hooks + [loop_hook], tf.compat.v1.train.get_global_step(graph)

    def _input_fn_kwargs(self, input_fn: Any, mode: str) -> dict:
        args = named_parameters(input_fn)
        if "params" not in args:
            raise ValueError(
                f"input_fn ({input_fn}) does not include params argument, required by TPUEstimator to pass batch size "
                'as params["batch_size"]'
            )
        kwargs: dict[str, Any] = {"params": copy.deepcopy(self._params)}
        if "config" in args:
            kwargs["config"] = self.config
        if "mode" in args:
            kwargs["mode"] = mode
        if self._batch_sizes[mode] is not None:
            kwargs["params"]["batch_size"] = self._batch_size(mode)
        return kwargs

    def _call_input_fn(self, input_fn: Any, mode: str, input_context: Any = None) -> Any:
        input_fn = dataset_form(input_fn)
        kwargs = self._input_fn_kwargs(input_fn, mode)
        with tf.compat.v1.device("/device:CPU:0"):
            return input_fn(**kwargs)

    def _call_model_fn(self, features, labels, mode, config, is_export=False) -> EstimatorSpec:
        args = named_parameters(self._model_fn)
        kwargs: dict[str, Any] = {}
        params = copy.deepcopy(self._params)
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "config" in args:
            kwargs["config"] = copy.deepcopy(config)
        kwargs["params"] = params
        if not is_export and self._batch_sizes[mode] is not None:
            params["batch_size"] = self._batch_size(mode)
        params["use_tpu"] = bool(self._tpu_replicas) and not is_export
        if not params["use_tpu"]:
            logger.info("Running %s on CPU/GPU", mode)
        # use_tpu=True run off a TPU (the graph-mode tier): a CrossShardOptimizer the program wraps on its
        # own flag sums over the one shard there is (CPUs have no CrossReplicaSum kernel)
        one_shard = self._use_tpu and not params["use_tpu"] and not self._tpu_replicas
        with tf1_variables(), _one_shard_sums() if one_shard else contextlib.nullcontext():
            spec = self._model_fn(features=features, **kwargs)
        if isinstance(spec, TPUEstimatorSpec):
            return spec.as_estimator_spec()
        return self._as_estimator_spec(spec)


@contextlib.contextmanager
def _one_shard_sums() -> Iterator[None]:
    """`tpu_ops.cross_replica_sum` (CrossShardOptimizer's all-reduce) as the sum over one shard."""
    from tensorflow.python.tpu.ops import tpu_ops

    from ..model_fn.strategy.tf1_build import patched

    with patched((tpu_ops, "cross_replica_sum", lambda x, group_assignment=None, name=None: tf.identity(x, name=name))):
        yield
