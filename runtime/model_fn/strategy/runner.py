"""The strategy tier's engine: a TF1 model_fn run as written inside a strategy's `tf.function`.

`ModelFnRunner` trains, evaluates and predicts for an `Estimator` (whose `input_fn`/`model_fn`
calling conventions and graph-mode construction it borrows, `core.Estimator`), with no Session:

  * **variables** (`held.py`): found by building the mode once in a TF1 graph as the graph-mode
    Estimator does (TF 1.x's initial values), made once under `strategy.scope()` with their TF1
    names, handed back on every trace;
  * **training**: `train_op` is the step. One call of the train function runs up to
    `iterations_per_loop` steps (`steps_per_call`) in a loop over the distributed iterator,
    each step `strategy.run` of the model_fn in TRAIN mode (`replicas.py` says how gradients
    meet). A call ends where Estimator's `CheckpointSaverHook` would save (its start, every
    `save_checkpoints_steps`/`_secs`, the end), so checkpoints hold the same steps.
    `TFMIGRATE_JIT_COMPILE=1` compiles the step function with XLA;
  * **checkpoints**: `model.ckpt-N` with TF1 names (`tf.compat.v1.train.Saver` over the held
    global variables, run eagerly), so TF 1.x's checkpoints continue here and these continue on
    TF 1.x or the graph-mode tier; `keep_checkpoint_max` holds;
  * **evaluation**: each step runs the model_fn in EVAL mode and its `eval_metric_ops` updates
    (and Estimator's `loss` mean); the metric counters are per-replica sums (`ON_READ`), and the
    metric values are computed once at the end from the counters, as TF1 ran its value tensors
    after the last update (the value subgraph of the graph-mode build, over the counters'
    reduced values). Results are Estimator's: metrics, `loss`, `global_step`;
  * **prediction**: the model_fn in PREDICT mode per batch, its `predictions` yielded per example;
  * **export**: a TF2 SavedModel whose signatures call the model_fn in PREDICT mode on the serving
    receiver's features (`exports.py`);
  * **several workers** (MultiWorkerMirrored): only the chief writes (checkpoints, `loss` events,
    saving listeners, `training_chief_hooks`); every worker takes the chief's values when a call
    restores (`replicas.values_of_the_first_replica`).

What the engine cannot run as the graph-mode Estimator did raises `Unsupported` with the reason
(`checks.py`) before anything is trained; `core.Estimator` then runs that call in graph mode and
logs why. How a trace keeps TF 1.x's build (seeds, Python's random state, restores) is
`tf1_build.py`; the `loss` events, `summaries.py`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any, Callable, Iterator

import numpy as np
import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.training import training_util

from ..._logging import logger, warn_once
from ..._random_state import python_random_kept, python_random_replay, python_random_restored_on
from ...cluster import chief_value, is_chief, is_multi_worker
from ...iterator_input import IteratorInput, NotADataset, dataset_of_tensors, iterator_input_detected
from ...inputs import ModeKeys, sharded_by_data
from ...export import signature_functions, write_saved_model
from ..input_fn import parse_input_fn_result, receiver_features
from .checks import Unsupported, as_op, check_spec, variable_reads
from .exports import SpecExportOutputs, check_exportable, tables_made
from .held import Found, HeldVariables, discover, first_copy, local_copy, name_of, random_op_count
from .host_calls import HostCall, call_host_fn, host_calls_kept, read_before_the_step, replicas_joined
from .hook_runs import HookRuns, PredictCalls
from .shared_reads import reads_shared
from .whole_reads import gathers_read_whole, sparsely_written
from .replicas import (estimator_loss_reduction, estimator_loss_scaling, first_replica, mean_gradients, tpu_code_path,
                       tpu_shards, values_of_the_first_replica)
from .parameter_servers import ScheduledSteps, check_schedulable
from .summaries import LossSummaries
from .tf1_build import (eager_graph_seeds, ema_restore_maps, graph_seeds, held_variable_ops, op_seeds_recorded,
                        optimizer_updates_skipped, restores_at_discovery,
                        saver_ops_recorded, tf1_op_seeds, tf1_tensor_equality)

__all__ = ["ModelFnRunner", "Unsupported"]

_KEYS = tf.compat.v1.GraphKeys


def jit_compile_requested() -> bool:
    return os.environ.get("TFMIGRATE_JIT_COMPILE", "").strip().lower() in ("1", "true", "yes")


class _Mode:
    """One mode's discovery: its variables and what the graph-mode build showed."""

    def __init__(self, found: list[Found], initial_values: Callable[[], list], graph: tf.Graph, spec: Any,
                 extra: dict) -> None:
        self.found = found
        self.initial_values = initial_values
        self.graph = graph
        self.spec = spec
        self.extra = extra


class ModelFnRunner(HookRuns):
    """Runs one Estimator's model_fn in TF2 under `strategy` (see the module doc)."""

    def __init__(self, estimator: Any, strategy: tf.distribute.Strategy, *, tpu_code_path: bool = False,
                 steps_per_call: int = 1, split_batches: bool = True, jit_compile: bool = False,
                 distribute_as_estimator: bool = False, export: bool = False) -> None:
        self._scheduled = None  # under ParameterServerStrategy: the workers' steps (`parameter_servers.py`)
        if isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
            from ...strategy import cluster_coordinator

            self._scheduled = ScheduledSteps(strategy, cluster_coordinator(strategy))
        self._as_estimator = distribute_as_estimator  # RunConfig(train_distribute=...): `replicas.py`
        if distribute_as_estimator:
            split_batches = False  # each replica takes its own batch of the input_fn's dataset, as TF 1.x
        self._estimator = estimator
        self._strategy = strategy
        self._tpu = tpu_code_path
        self._steps_per_call = max(1, int(steps_per_call))
        self._split = split_batches
        self._jit_asked = jit_compile
        self._export = export  # the model_fn called as for an export (TPUEstimator: `use_tpu` False)
        self._held = HeldVariables()
        self._modes: dict[str, _Mode] = {}
        self._functions: dict[Any, Any] = {}
        self._saver = None
        self._aggregates: dict = {}  # name -> (a per-replica variable, the plain one its aggregate is saved from)
        self._trace: Any = None  # the held variables' hand-back in the trace under way
        self._host_call: Any = None  # the (fn, tensors) of the train step's host_call, as last traced
        self._host: HostCall | None = None  # its function on the host, for one train call
        self._step_hooks = None  # a call's per-step hooks, while it runs (`hook_runs.py`)
        self._hook_values: dict = {}
        self._built = threading.local()  # the ops the model_fn made in this replica's trace
        # Under a multi-worker strategy only the chief writes (checkpoints, `loss` events, saving
        # listeners, `training_chief_hooks`), as TF 1.x's MonitoredTrainingSession gave those to it.
        self._chief = is_chief(strategy)

    @property
    def trains_on_parameter_servers(self) -> bool:
        return self._scheduled is not None

    # -- discovery and variables -----------------------------------------------------------------

    def _discover(self, mode: str, input_fn: Any) -> _Mode:
        """Builds `mode` in a TF1 graph, as the graph-mode Estimator builds it for every call (its
        tf.layers draw their initializers' seeds from Python's `random` there, so a later
        Estimator of the program draws what it drew under graph mode)."""
        estimator = self._estimator
        graph = tf.Graph()
        extra: dict = {}

        def build():
            with graph.device(estimator.config.device_fn) if getattr(estimator.config, "device_fn", None) else contextlib.nullcontext():
                estimator._start_graph(graph)  # noqa: SLF001 - the graph-mode build's own steps, same op order
                if mode == ModeKeys.TRAIN:
                    training_util._get_or_create_global_step_read(graph)  # noqa: SLF001

                extra["input_random_ops_before"] = random_op_count(graph)
                extra["python_random_before_input"] = python_random_replay()
                given = input_fn() if self._export else estimator._call_input_fn(input_fn, mode)  # noqa: SLF001 - (a receiver's features)
                features, labels, _ = parse_input_fn_result(given)
                extra["graph_seed"], extra["random_ops_before"] = graph.seed, random_op_count(graph)
                with optimizer_updates_skipped(mode), op_seeds_recorded() as op_seeds, saver_ops_recorded() as saver_ops, \
                        host_calls_kept() if mode == ModeKeys.TRAIN else contextlib.nullcontext() as host_calls, \
                        tpu_shards(self._strategy.num_replicas_in_sync) if self._tpu else contextlib.nullcontext():
                    first = len(graph.get_operations())
                    spec = estimator._call_model_fn(features, labels if mode != ModeKeys.PREDICT else None, mode,  # noqa: SLF001
                                                    estimator.config, is_export=self._export)
                    extra["model_fn_ops"] = graph.get_operations()[first:]
                extra["saver_ops"] = saver_ops
                extra["op_seeds"] = op_seeds
                if host_calls:  # TF 1.x built the host_call's ops in this graph, their names taken there too
                    first = len(graph.get_operations())
                    call_host_fn(host_calls[-1])
                    extra["host_ops"] = set(graph.get_operations()[first:])  # (run on the host, not in the step)
                extra["loss_tag"] = graph.unique_name("loss", mark_as_used=False)  # Estimator's loss summary's
                extra["host_call"] = bool(host_calls)
                extra["host_dtypes"] = [tf.convert_to_tensor(t).dtype for t in tf.nest.flatten(host_calls[-1][1])] if host_calls else []
                extra["random_ops"] = random_op_count(graph) - extra["random_ops_before"]
                if mode == ModeKeys.EVAL:
                    extra["loss_metric"] = tf.compat.v1.metrics.mean(spec.loss)
                if not tf.train.latest_checkpoint(estimator.model_dir):
                    estimator._maybe_warm_start(None)  # noqa: SLF001 - warm start sets the initial values
                extra["features"], extra["labels"] = features, labels
                return spec

        spec, found, initial_values = discover(graph, build)
        extra["sparsely_written"] = sparsely_written(graph)
        check_spec(mode, spec, graph, extra)
        self._held.make(found, self._strategy)
        previous = self._modes.get(mode)
        if previous is not None and [f.name for f in previous.found] != [f.name for f in found]:
            self._functions.clear()  # another build of model_fn: trace again
        self._modes[mode] = _Mode(found, initial_values, graph, spec, extra)
        return self._modes[mode]

    def _saver_for_checkpoints(self) -> Any:
        """A TF1 Saver over the held global variables (made again when a mode added some); a
        replicated variable is saved from its first copy (the copies are equal), a per-replica one
        (`ON_READ`: batch norm's moving statistics) as its replicas' aggregate, as TF 1.x saved it
        (through a plain variable set to that aggregate before each save, `_save`). Where training's
        Scaffold has a Saver of its own, checkpoints are saved by its names and kept by its
        `max_to_keep`, as TF 1.x's `CheckpointSaverHook` saved through it."""
        variables = self._held.global_variables()
        train = self._modes.get(ModeKeys.TRAIN)
        names = (train.extra.get("restore_names") or {}) if train is not None else {}  # a Scaffold's own Saver's
        key = (tuple(variables), tuple(sorted(names.items())))
        if self._saver is None or self._saver[0] != key:
            config = self._estimator.config
            self._aggregates = {name: (variable, tf.Variable(tf.zeros_like(first_copy(variable)), trainable=False))
                                for name, variable in variables.items() if _per_replica(variable)}
            saved = {names.get(name, name): self._aggregates[name][1] if name in self._aggregates else first_copy(variable)
                     for name, variable in variables.items()}
            keeps = train.extra.get("saver_keeps") if names else None  # (TF1 saved through that Saver)
            max_to_keep, hours = keeps or (None, None)
            self._saver = key, tf.compat.v1.train.Saver(
                var_list=saved,
                max_to_keep=config.keep_checkpoint_max if max_to_keep is None else max_to_keep,
                keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours if hours is None else hours,
                save_relative_paths=True,
            )
        return self._saver[1]

    def _restore(self, checkpoint_path: str | None, mode: str) -> None:
        """The checkpoint's values, or (none) the initial values `mode`'s graph-mode build gives;
        under several workers, the chief's (`values_of_the_first_replica`)."""
        self._restore_here(checkpoint_path, mode)
        if is_multi_worker(self._strategy):
            with self._strategy.scope():
                values_of_the_first_replica(self._strategy, list(self._held.global_variables().values()))

    def _restore_here(self, checkpoint_path: str | None, mode: str) -> None:
        if checkpoint_path:
            saver = self._saver_for_checkpoints()
            reader = tf.train.load_checkpoint(checkpoint_path)
            # A Scaffold's own Saver restores the mode's variables by its names (`checks.restore_names`).
            names = self._modes[mode].extra.get("restore_names") or {}
            with self._strategy.scope():
                for name, variable in self._held.global_variables().items():
                    key = names.get(name, name)
                    if not reader.has_tensor(key):
                        raise tf.errors.NotFoundError(None, None, f"Key {key} not found in checkpoint {checkpoint_path}")
                    variable.assign(reader.get_tensor(key), read_value=False)  # every replica's copy
            state = tf.train.get_checkpoint_state(self._estimator.model_dir)
            if state is not None:  # as TF1's SessionManager did: keep_checkpoint_max counts the earlier ones
                saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
            return
        discovered = self._modes[mode]
        for item, value in zip(discovered.found, discovered.initial_values()):
            # (read_value=False: reading a per-replica variable back is a collective, which a worker
            # restoring from a checkpoint, on this path or not, would not join)
            self._held.by_name[item.name].assign(value, read_value=False)
        self._scaffold_initializes(mode)

    def _global_step(self) -> int:
        step = self._held.by_name.get("global_step")
        return int(step.numpy()) if step is not None else 0

    def _save(self, step: int) -> str | None:
        """Saves `model.ckpt-<step>` (the chief only; every worker reads the per-replica variables'
        aggregates, a collective, and waits until the chief has written, so each restores what it
        wrote)."""
        path = os.path.join(self._estimator.model_dir, "model.ckpt")
        saver = self._saver_for_checkpoints()
        with self._strategy.scope():
            for variable, aggregate in self._aggregates.values():
                aggregate.assign(variable.read_value())  # (read across replicas: their aggregate)
        saved = None
        if self._chief:
            os.makedirs(self._estimator.model_dir, exist_ok=True)
            saved = saver.save(None, path, global_step=step, write_meta_graph=False)
            logger.info("Saving checkpoints for %d into %s.", step, path)
        chief_value(self._strategy, 0.0)  # (a collective under several workers: the chief has written)
        return saved

    # -- the step functions ----------------------------------------------------------------------

    def _call_model_fn(self, mode: str, features: Any, labels: Any, then: Callable[[Any], Any] | None = None) -> Any:
        """The spec of the model_fn called in a trace, and `then(spec)` (under the same variables)."""
        discovered = self._modes[mode]
        shards = tpu_shards(self._strategy.num_replicas_in_sync) if self._tpu else contextlib.nullcontext()
        with self._trace.replica(), graph_seeds(discovered.extra), shards:
            graph = tf.compat.v1.get_default_graph()
            first = len(graph.get_operations())
            try:
                spec = self._estimator._call_model_fn(features, labels, mode, self._estimator.config,  # noqa: SLF001
                                                      is_export=self._export)
                self._built.ops = graph.get_operations()[first:]
                self._built.scope = graph.get_name_scope()  # (a loop's body names its ops `while/...`)
            except Unsupported:  # (NotHeld too)
                raise
            except Exception as error:  # noqa: BLE001 - it built in graph mode: that tier runs it
                raise Unsupported(f"model_fn failed in a tf.function where its graph-mode build did not "
                                  f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})") from error
            return spec, (then(spec) if then is not None else None)

    def _replicated(self, replica_fn: Callable, mode: str, jit_compile: bool = True) -> Callable:
        """`replica_fn` (which calls the model_fn in `mode`) run on every replica, under the held
        variables and the gradient rules of `replicas.py`."""
        strategy = self._strategy
        replica_fn = tf.autograph.experimental.do_not_convert(replica_fn)
        if jit_compile and self._jit_compile():  # the step XLA compiles, as a TPU compiles it (the input stays outside)
            replica_fn = tf.function(replica_fn, jit_compile=True, autograph=False)

        def run(*args):
            if self._as_estimator:
                gradients = estimator_loss_scaling(strategy)
            else:
                gradients = tpu_code_path(strategy.num_replicas_in_sync) if self._tpu else mean_gradients()
            # Class-wide patches are entered here, once, not in the replicas' threads (which interleave).
            with self._model_fn_trace(mode, gradients):
                return strategy.run(replica_fn, args=args)

        return run

    @contextlib.contextmanager
    def _model_fn_trace(self, mode: str, gradients: Any) -> Iterator[None]:
        """Around the model_fn's calls in one trace: the held variables (`self._trace`), how
        gradients meet (`gradients`), and TF 1.x's build rules (`tf1_build.py`)."""
        with self._held.scope(self._modes[mode].found, as_estimator_replicas=self._as_estimator) as self._trace, \
                restores_at_discovery(), gradients, \
                optimizer_updates_skipped(mode), tf1_tensor_equality(), tf1_op_seeds(), ema_restore_maps(), \
                held_variable_ops(), reads_shared(), gathers_read_whole(self._written_sparsely):
            yield

    def _written_sparsely(self, variable: Any) -> bool:
        """Whether a discovered mode's build writes `variable` by rows (`whole_reads.py`)."""
        return any(name_of(variable) in mode.extra["sparsely_written"] for mode in self._modes.values())

    def _loss_reduce_op(self) -> Any:
        """How the replicas' losses make the reported one (read after the step is traced): their
        mean; under a RunConfig strategy, as TF 1.x's Estimator reported it (`replicas.py`)."""
        if self._as_estimator:
            return estimator_loss_reduction()
        return tf.distribute.ReduceOp.MEAN

    def _jit_compile(self) -> bool:
        """TFMIGRATE_JIT_COMPILE=1 (or `jit_compile=True`) on one replica (a TPUStrategy compiles its
        replicated step itself); a jitted replica step under MirroredStrategy cannot reach the other
        devices' variables."""
        if not (self._jit_asked or jit_compile_requested()):
            return False
        if self._strategy.num_replicas_in_sync > 1:
            warn_once("jit-replicas", "TFMIGRATE_JIT_COMPILE=1 compiles the step on one replica only; %s has %d: "
                      "running without XLA.", type(self._strategy).__name__, self._strategy.num_replicas_in_sync)
            return False
        return True

    def _function(self, key: Any, python_function: Callable, mode: str) -> Any:
        """A `tf.function` of `python_function`, made once; or per call where the model_fn draws
        unseeded random numbers: TF1 built a new graph per train/evaluate/predict call, and each
        random op's sequence started again there (a function's random kernels keep their state)."""
        if self._modes[mode].extra.get("random_ops"):
            self._functions.pop(key, None)
        if key not in self._functions:
            self._functions[key] = tf.function(python_function, autograph=False)
        return self._functions[key]

    def _train_replica_step(self, features: Any, labels: Any, then: Callable[[Any], Any] | None = None) -> tuple:
        """One replica's training step: (its loss after the train_op, its host_call's tensors
        flattened, `then(spec)`). The host_call's function and structure are kept for the host."""
        step = self._held.by_name.get("global_step")
        before = tf.identity(local_copy(step)) if step is not None else None
        early = self._early_reads()
        with host_calls_kept() as host_calls:
            spec, extra = self._call_model_fn(ModeKeys.TRAIN, features, labels, then)
        hooked = self._hooked(early)
        host: list = []
        if host_calls:
            fn, tensors = host_calls[-1]
            self._host_call = (fn, tensors)
            host = [tf.convert_to_tensor(t) for t in tf.nest.flatten(tensors)]
            if before is not None:
                handle = local_copy(step).handle
                host = [read_before_the_step(t, handle, before) for t in host]
            host = [tf.identity(t) for t in host]
        with tf.control_dependencies([spec.train_op]):
            return tf.identity(tf.cast(spec.loss, tf.float32)), host + hooked, extra

    def _train_function(self) -> Any:
        strategy = self._strategy

        def replica_step(features, labels):
            loss, host, _ = self._train_replica_step(features, labels)
            return loss, host

        step = self._replicated(replica_step, ModeKeys.TRAIN)

        def train_steps(iterator, count):
            def body(i, _loss, *arrays):
                features, labels = _split_batch(iterator.get_next())
                losses, host = step(features, labels)
                loss = strategy.reduce(self._loss_reduce_op(), losses, axis=None)
                written = [array.write(i, value) for array, value in zip(arrays, self._to_host(host))]
                return (i + 1, loss, *written)

            # (the host_call's tensors and the hooks' fetches, one TensorArray each, per step)
            arrays = [tf.TensorArray(dtype, size=0, dynamic_size=True) for dtype in self._host_dtypes()]
            _, loss, *arrays = tf.while_loop(lambda i, _loss, *_: i < count, body,
                                             [tf.constant(0), tf.constant(0.0), *arrays], parallel_iterations=1)
            return loss, [array.stack() for array in arrays]

        return self._function(("train", *self._hook_fetches()), train_steps, ModeKeys.TRAIN)

    def _host_dtypes(self) -> list:
        return list(self._modes[ModeKeys.TRAIN].extra["host_dtypes"]) + self._hook_dtypes()

    def _to_host(self, values: list) -> list:
        """A step's host_call tensors joined over the replicas (`replicas_joined`), then the hooks'
        fetches as the first replica computed them (TF 1.x's hooks were the first replica's)."""
        count = len(self._modes[ModeKeys.TRAIN].extra["host_dtypes"])
        joined = [replicas_joined(self._strategy, value) for value in values[:count]]
        return joined + first_replica(self._strategy, values[count:])


    def _train_summary_function(self) -> Any:
        """One training step that also returns the model_fn's summaries merged (`merge_all` of the
        trace's SUMMARIES, as Estimator's `SummarySaverHook` ran it with the `train_op`): the
        step a call ends on when summaries are due. The summaries are replica 0's (TF1 skipped
        them on the other replicas), computed outside XLA (no summary op compiles)."""
        strategy = self._strategy

        def replica_step(features, labels):
            def merged(spec):
                summary = tf.compat.v1.summary.merge_all()
                return tf.constant(b"") if summary is None else summary

            loss, host, summary = self._train_replica_step(features, labels, merged)
            return loss, host, tf.identity(summary)

        step = self._replicated(replica_step, ModeKeys.TRAIN, jit_compile=False)

        def summary_step(iterator):
            features, labels = _split_batch(iterator.get_next())
            losses, host, summaries = step(features, labels)
            loss = strategy.reduce(self._loss_reduce_op(), losses, axis=None)
            stacked = [tf.expand_dims(value, 0) for value in self._to_host(host)]
            return loss, stacked, strategy.experimental_local_results(summaries)[0]

        return self._function(("train-summary", *self._hook_fetches()), summary_step, ModeKeys.TRAIN)

    def _eval_function(self) -> Any:
        strategy = self._strategy

        def replica_step(features, labels):
            early = self._early_reads()
            spec, loss_metric = self._call_model_fn(ModeKeys.EVAL, features, labels,
                                                    lambda spec: tf.compat.v1.metrics.mean(spec.loss))
            hooked = self._hooked(early)
            updates = [update for _, update in spec.eval_metric_ops.values()] + [loss_metric[1]]
            with tf.control_dependencies([as_op(update) for update in updates]):
                return [tf.constant(0)] + [tf.identity(value) for value in hooked]

        step = self._replicated(replica_step, ModeKeys.EVAL)

        def eval_steps(iterator, count):
            def body(i, *arrays):
                features, labels = _split_batch(iterator.get_next())
                done, *hooked = step(features, labels)
                with tf.control_dependencies(tf.nest.flatten(strategy.experimental_local_results(done))):
                    return (i + 1, *[array.write(i, value) for array, value in zip(arrays, first_replica(strategy, hooked))])

            arrays = [tf.TensorArray(dtype, size=0, dynamic_size=True) for dtype in self._hook_dtypes()]
            _, *arrays = tf.while_loop(lambda i, *_: i < count, body, [tf.constant(0), *arrays], parallel_iterations=1)
            return [array.stack() for array in arrays]

        return self._function(("eval", *self._hook_fetches()), eval_steps, ModeKeys.EVAL)

    def _predict_function(self, predict_keys: Any) -> Any:
        strategy = self._strategy

        def replica_step(features):
            early = self._early_reads()
            spec, _ = self._call_model_fn(ModeKeys.PREDICT, features, None)
            return _select(spec.predictions, predict_keys), [tf.identity(value) for value in self._hooked(early)]

        step = self._replicated(replica_step, ModeKeys.PREDICT)

        def predict_step(iterator):
            batch = iterator.get_next()
            features = batch[0] if isinstance(batch, tuple) else batch
            predictions, hooked = step(features)
            return predictions, [tf.expand_dims(value, 0) for value in first_replica(strategy, hooked)]

        key = ("predict", tuple(sorted(predict_keys or ())), *self._hook_fetches())
        return self._function(key, predict_step, ModeKeys.PREDICT)

    # -- the input -------------------------------------------------------------------------------

    def _iterator(self, input_fn: Any, mode: str) -> Any:
        """The input_fn's dataset, distributed; its unseeded random ops (a shuffle) seeded as the
        graph-mode build seeded them."""
        estimator = self._estimator
        strategy = self._strategy
        extra = self._modes[mode].extra
        seed, before = extra.get("graph_seed"), extra.get("input_random_ops_before", 0)

        replay = extra.get("python_random_before_input")

        def call_input_fn(**kwargs: Any) -> Any:
            # From the Python and NumPy random states the graph-mode build called it with: TF 1.x
            # called an input_fn once per call, and one drawing its data with `np.random` draws that.
            if replay is not None:
                replay()
            return estimator._call_input_fn(input_fn, mode, **kwargs)  # noqa: SLF001

        def dataset(**kwargs: Any) -> tf.data.Dataset:
            with python_random_kept():
                return read_dataset(**kwargs)

        def read_dataset(**kwargs: Any) -> tf.data.Dataset:
            call = lambda: call_input_fn(**kwargs)  # noqa: E731
            try:
                with eager_graph_seeds(seed, before), iterator_input_detected():
                    result = call()
                if isinstance(result, tf.data.Dataset):
                    return result
            except IteratorInput:  # it returns a one-shot iterator's tensors
                pass
            try:  # tensors: the dataset they stand for (`iterator_input.py`)
                return dataset_of_tensors(call, seed, before)
            except NotADataset as why:
                raise Unsupported(str(why)) from why

        if self._scheduled is not None:  # each worker's own input pipeline, as each TF 1.x worker called the input_fn
            return self._scheduled.per_worker_iterator(dataset)
        if self._split or strategy.num_replicas_in_sync == 1:
            return iter(strategy.experimental_distribute_dataset(sharded_by_data(dataset())))
        return iter(strategy.distribute_datasets_from_function(lambda context: dataset(input_context=context)))

    # -- train -----------------------------------------------------------------------------------

    def train(self, input_fn: Any, steps: int | None, max_steps: int | None, listeners: list | None = None,
              hooks: list | None = None) -> float | None:
        """Estimator's `train`: `steps` more, or up to `max_steps`, or until the input ends; checkpoints
        and `saving_listeners` (called with no session) as `CheckpointSaverHook` made and called them;
        `hooks` that act only when the session is made (`session_hooks.py`)."""
        with context.eager_mode(), python_random_restored_on(Unsupported), self._estimator._on_strategy_tier(self._strategy):  # noqa: SLF001
            return self._train(input_fn, steps, max_steps, list(listeners or []), list(hooks or []))

    def _train(self, input_fn: Any, steps: int | None, max_steps: int | None, listeners: list,
               hooks: list) -> float | None:
        mode = self._discover(ModeKeys.TRAIN, input_fn)
        checkpoint = tf.train.latest_checkpoint(self._estimator.model_dir)
        self._restore(checkpoint, ModeKeys.TRAIN)
        hooks = hooks + list(mode.spec.training_hooks)  # (the build's own)
        if self._chief:
            hooks += list(mode.spec.training_chief_hooks)
        else:
            listeners = []  # (TF 1.x called them from the chief's CheckpointSaverHook)
        with self._hooks_of_call(ModeKeys.TRAIN, hooks):
            return self._train_steps(mode, input_fn, steps, max_steps, listeners)

    def _train_steps(self, mode: _Mode, input_fn: Any, steps: int | None, max_steps: int | None,
                     listeners: list) -> float | None:
        step = self._global_step()
        last = None if steps is None else step + steps
        if max_steps is not None:
            last = max_steps if last is None else min(last, max_steps)
        config = self._estimator.config
        every = config.save_checkpoints_steps
        every_secs = config.save_checkpoints_secs if not every else None
        iterator = self._iterator(input_fn, ModeKeys.TRAIN)
        function = self._train_function()
        replicas = self._strategy.num_replicas_in_sync
        if self._scheduled is not None:
            logger.info("Training on %d worker%s of %s (asynchronously), %d step(s) per closure%s.",
                        self._scheduled.workers, "" if self._scheduled.workers == 1 else "s",
                        type(self._strategy).__name__, self._steps_per_call, " (XLA)" if self._jit_compile() else "")
        else:
            logger.info("Training on %d replica%s of %s, %d step(s) per call%s.", replicas, "" if replicas == 1 else "s",
                        type(self._strategy).__name__, self._steps_per_call, " (XLA)" if self._jit_compile() else "")
        summaries = LossSummaries(self._estimator.model_dir, config.save_summary_steps, mode.extra["loss_tag"],
                                  write=self._chief)  # (every worker runs the same steps per call)
        if self._scheduled is not None:
            check_schedulable(step_hooks=self._step_hooks is not None, host_call=bool(mode.extra["host_call"]),
                              model_summaries=bool(mode.graph.get_collection(_KEYS.SUMMARIES)))
        summary_function = self._model_summaries(mode) and self._train_summary_function()
        for listener in listeners:
            listener.begin()
        saved_step, saved_at = step, time.monotonic()
        stop = self._save_with(listeners, step)  # CheckpointSaverHook saves the state it starts from
        loss = None
        try:
            while not stop and (last is None or step < last):
                budget = summaries.steps_until_due(step)  # (the steps until the call must end)
                if last is not None:
                    budget = min(budget, last - step)
                if every:
                    budget = min(budget, saved_step + every - step)
                count = min(self._steps_per_hook_call(), budget)
                summarized = summary_function and summaries.due_after(step, count)
                merged = None
                if self._step_hooks is not None and self._step_hooks.before_run():  # a tensor not fetched yet: trace again
                    function = self._train_function()
                    summary_function = summary_function and self._train_summary_function()
                try:
                    with python_random_kept():  # a trace's tf.layers draw no seeds the program would see
                        if self._scheduled is not None:  # on the workers, asynchronously
                            loss, _ = self._scheduled.run(function, iterator, count, budget)
                        elif not summarized or count > 1:
                            loss, host = function(iterator, tf.constant(count - 1 if summarized else count))
                            self._run_host_call(host)
                        if summarized:
                            loss, host, merged = summary_function(iterator)
                            self._run_host_call(host)
                            merged = merged.numpy()
                        loss = float(loss)
                except (tf.errors.OutOfRangeError, StopIteration):
                    step = self._global_step()
                    break
                previous, step = step, self._global_step()
                if step <= previous:
                    raise RuntimeError("model_fn's train_op did not increase the global step: training would never "
                                       "end (TF 1.x's StopAtStepHook counts the global step too).")
                summaries.after_steps(step, loss, merged)
                if self._step_hooks is not None and self._step_hooks.after_run(self._hook_values):
                    stop = True  # a hook asked to stop (`run_context.request_stop()`)
                due = (every and step >= saved_step + every) or (every_secs and time.monotonic() - saved_at >= every_secs)
                if due:
                    stop = self._save_with(listeners, step) or stop  # (a hook's stop request stands)
                    saved_step, saved_at = step, time.monotonic()
        finally:
            summaries.close()
            if self._host is not None:
                self._host.close()
                self._host = None
        if step != saved_step:
            self._save_with(listeners, step)
        for listener in listeners:
            listener.end(None, step)
        logger.info("Loss for final step: %s.", loss)
        return loss

    def _run_host_call(self, stacked: list) -> None:
        """The host_call's function on each step's tensors (`stacked`: one array per tensor, a row per
        step), on the host, as TPUEstimator ran it after each device loop; the hooks' fetches (the
        arrays after those) are kept for their `after_run`: the call's last step's."""
        count = len(self._modes[ModeKeys.TRAIN].extra["host_dtypes"])
        self._keep_hook_values(stacked[count:])
        stacked = stacked[:count]
        if not stacked:
            return
        if self._host is None:
            fn, tensors = self._host_call
            self._host = HostCall(fn, tensors)
        for row in range(int(stacked[0].shape[0])):
            self._host([values[row] for values in stacked])

    def _model_summaries(self, mode: _Mode) -> bool:
        """Whether the TRAIN model_fn makes summaries this tier writes (on the TPU code path TF1 ran
        them on no TPU: a TPU program writes its summaries from a `host_call`)."""
        if not mode.graph.get_collection(_KEYS.SUMMARIES):
            return False
        if self._tpu:
            warn_once("tpu-summaries", "On the TPU code path the summaries model_fn makes are not written (a TPU ran "
                      "no summary op: TPU programs write theirs from a host_call).")
            return False
        return True

    def _save_with(self, listeners: list, step: int) -> bool:
        """Saves a checkpoint between the listeners' `before_save` and `after_save`; True when one
        of them asks training to stop."""
        for listener in listeners:
            listener.before_save(None, step)
        self._save(step)
        stop = False
        for listener in listeners:
            if listener.after_save(None, step):
                stop = True
        return stop

    # -- evaluate --------------------------------------------------------------------------------

    def evaluate(self, input_fn: Any, steps: int | None, checkpoint_path: str | None, hooks: list | None = None) -> dict:
        with context.eager_mode(), python_random_restored_on(Unsupported), self._estimator._on_strategy_tier(self._strategy):  # noqa: SLF001
            return self._evaluate(input_fn, steps, checkpoint_path, list(hooks or []))

    def _evaluate(self, input_fn: Any, steps: int | None, checkpoint_path: str | None, hooks: list) -> dict:
        mode = self._discover(ModeKeys.EVAL, input_fn)
        self._restore(checkpoint_path, ModeKeys.EVAL)
        hooks = hooks + list(mode.spec.evaluation_hooks)  # (the build's own)
        with self._hooks_of_call(ModeKeys.EVAL, hooks):
            for variable in self._held.local_variables(mode.found):
                variable.assign(tf.zeros_like(variable))
            function = self._eval_function()
            iterator = self._iterator(input_fn, ModeKeys.EVAL)
            done = 0
            while steps is None or done < steps:
                count = self._steps_per_hook_call() if steps is None else min(self._steps_per_hook_call(), steps - done)
                if self._step_hooks is not None and self._step_hooks.before_run():  # a tensor not fetched yet
                    function = self._eval_function()
                try:
                    with python_random_kept():
                        self._keep_hook_values(function(iterator, tf.constant(count)))
                except (tf.errors.OutOfRangeError, StopIteration):
                    break
                done += count
                if self._step_hooks is not None and self._step_hooks.after_run(self._hook_values):
                    break
        results = self._metric_values(mode)
        results[_KEYS.GLOBAL_STEP] = np.int64(self._global_step())
        return results

    def _metric_values(self, mode: _Mode) -> dict:
        """The graph-mode build's value tensors, computed from the held counters' reduced values."""
        values = {key: value for key, (value, _) in mode.spec.eval_metric_ops.items()}
        values["loss"] = mode.extra["loss_metric"][0]
        reads, feeds = variable_reads(mode.graph, list(values.values()))
        by_name = self._held.by_name
        graph_def = mode.graph.as_graph_def()
        names = sorted(values)

        def imported():
            tf.compat.v1.import_graph_def(graph_def, name="")

        wrapped = tf.compat.v1.wrap_function(imported, [])
        function = wrapped.prune(
            [wrapped.graph.get_tensor_by_name(read.name) for read in reads],
            [wrapped.graph.get_tensor_by_name(values[name].name) for name in names])
        with self._strategy.scope():
            counters = [_reduced(by_name[name]) for name in feeds]
        computed = function(*counters)
        return {name: _as_session_value(value) for name, value in zip(names, computed)}

    # -- predict ---------------------------------------------------------------------------------

    def predict(self, input_fn: Any, predict_keys: Any, checkpoint_path: str | None,
                yield_single_examples: bool, hooks: list | None = None) -> Iterator[Any]:
        """Builds and restores now (raising `Unsupported` before anything is yielded); returns the
        predictions' iterator."""
        with context.eager_mode(), python_random_restored_on(Unsupported), self._estimator._on_strategy_tier(self._strategy):  # noqa: SLF001
            mode = self._discover(ModeKeys.PREDICT, input_fn)
            self._restore(checkpoint_path, ModeKeys.PREDICT)
            hooks = list(hooks or []) + list(mode.spec.prediction_hooks)  # (the build's own)
            with self._hooks_of_call(ModeKeys.PREDICT, hooks, end=False):
                calls = PredictCalls(self, predict_keys, self._step_hooks, mode)
            iterator = self._iterator(input_fn, ModeKeys.PREDICT)
            first = calls.next(iterator)  # (traced now: a trace that fails raises here)
        return self._predictions(calls, iterator, yield_single_examples, first)

    # -- export --------------------------------------------------------------------------------

    def export_saved_model(self, receiver_fn: Callable[[], Any], export_dir_base: Any, checkpoint_path: str,
                           assets_extra: Any = None, as_text: bool = False) -> bytes:
        """Estimator's `export_saved_model` of the PREDICT graph, as a TF2 SavedModel (`exports.py`):
        the variables restored from `checkpoint_path`, each signature a function calling the
        model_fn on the receiver's features. Returns the export directory, as bytes."""
        with context.eager_mode(), python_random_restored_on(Unsupported):
            mode = self._discover(ModeKeys.PREDICT, lambda: receiver_features(receiver_fn()))
            check_exportable(mode.graph, self._held.local_variables(mode.found))
            try:
                self._restore(checkpoint_path, ModeKeys.PREDICT)
            except tf.errors.NotFoundError as error:
                raise ValueError(
                    "Could not load all requested variables from checkpoint. Please make sure your model_fn does not "
                    f"expect variables that were not saved in the checkpoint.\n\nEncountered error with mode "
                    f"`{ModeKeys.PREDICT}` while restoring checkpoint from: `{checkpoint_path}`. Full Traceback:"
                    f"\n\n{error}") from error

            def spec_of(features: Any) -> Any:
                with self._model_fn_trace(ModeKeys.PREDICT, contextlib.nullcontext()):
                    return self._call_model_fn(ModeKeys.PREDICT, features, None)[0]

            tables: list = []
            with tables_made(tables):
                functions, methods = signature_functions(SpecExportOutputs(spec_of), receiver_fn)
            module = tf.Module()
            module.model_fn_variables = [self._held.by_name[item.name] for item in mode.found]
            module.lookup_tables = tables
            return write_saved_model(module, functions, methods, self._strategy, export_dir_base, assets_extra, as_text)

    def _predictions(self, calls: PredictCalls, iterator: Any, yield_single_examples: bool,
                     outputs: Any) -> Iterator[Any]:
        while outputs is not None:
            with context.eager_mode(), self._estimator._on_strategy_tier(self._strategy):  # noqa: SLF001
                local = self._strategy.experimental_local_results(outputs)
                values = tf.nest.map_structure(lambda *parts: np.concatenate([np.asarray(p) for p in parts]), *local)
            if not yield_single_examples:
                yield values
            elif not isinstance(values, dict):
                yield from values
            else:
                length = len(next(iter(values.values())))
                for index in range(length):
                    yield {key: value[index] for key, value in values.items()}
            with context.eager_mode(), self._estimator._on_strategy_tier(self._strategy):  # noqa: SLF001
                outputs = calls.next(iterator)
        with context.eager_mode():
            calls.end()


def _per_replica(variable: Any) -> bool:
    """A variable each replica keeps its own copy of (`ON_READ`), read as their aggregate."""
    return isinstance(variable, tf.distribute.DistributedValues) and \
        getattr(variable, "synchronization", None) == tf.VariableSynchronization.ON_READ


def _as_session_value(value: Any) -> Any:
    """What `session.run` gave for the value: a NumPy scalar for a scalar (eval events write those
    as simple values), else an array."""
    array = np.asarray(value)
    return array[()] if array.ndim == 0 else array


def _split_batch(batch: Any) -> tuple[Any, Any]:
    if isinstance(batch, (tuple, list)) and len(batch) == 2:
        return batch[0], batch[1]
    return batch, None


def _select(predictions: Any, keys: Any) -> Any:
    if not keys or not isinstance(predictions, dict):
        return predictions
    return {key: value for key, value in predictions.items() if key in keys}


def _reduced(variable: Any) -> Any:
    """A metric counter's value over all replicas (an ON_READ variable read in cross-replica
    context sums its replicas' copies)."""
    return tf.convert_to_tensor(variable.read_value())
