"""`input_fn_data`: call a TF1 `input_fn` the way Estimator/TPUEstimator did, as a TF2 dataset function.

TF1 Estimator inspected `input_fn`'s signature and passed only the arguments it names: `params`
(TPUEstimator adds `batch_size` and `use_tpu` to a copy), `mode` and `config`. `InputFnData` does the
same, and is called with a `tf.distribute.InputContext` so it plugs into
`strategy.distribute_datasets_from_function`.

Which batch size the `input_fn` sees (TPUEstimator's `params['batch_size']`, G = global batch size,
R = replicas, P = input pipelines, i.e. hosts):

  * `per_replica=False` (TPUEstimator PER_HOST_V1, the default `per_host_input_for_training=True`,
    or `use_tpu=False`): G / P, a host batch. `fit` builds one dataset with an `InputContext` of one
    pipeline and hands it to Keras, which splits each global batch across the replicas.
  * `per_replica=True` (PER_HOST_V2, PER_SHARD_V1, or Estimator + `train_distribute`):
    `input_context.get_per_replica_batch_size(G)` = G / R. `fit` uses
    `strategy.distribute_datasets_from_function`, so each replica receives whole dataset elements.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Mapping

import tensorflow as tf

from ._random_state import python_random_replay
from .iterator_input import IteratorInput, NotADataset, dataset_of_tensors, iterator_input_detected

__all__ = ["InputFnData", "ModeKeys", "dataset_form", "input_fn_data"]


class ModeKeys:
    """The values of TF1 `tf.estimator.ModeKeys`, which `input_fn`s compare `mode` against."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_MODES = {"train": ModeKeys.TRAIN, "eval": ModeKeys.EVAL, "infer": ModeKeys.PREDICT, "predict": ModeKeys.PREDICT}


def dataset_form(input_fn: Callable[..., Any]) -> Callable[..., Any]:
    """What the runtime calls for `input_fn`'s batches: its `tf.data` form where it has one
    (`tfm.estimator.inputs.numpy_input_fn`'s input_fn returns a one-shot iterator's tensors, as TF
    1.x's returned its queue's, and gives the dataset they come from as `dataset_fn`), else itself."""
    return getattr(input_fn, "dataset_fn", input_fn)


def named_parameters(fn: Callable[..., Any]) -> frozenset[str]:
    """The parameter names TF1's `fn_args` reported: named ones, minus those a `partial` binds."""
    bound: set[str] = set()
    target = fn
    while isinstance(target, functools.partial):
        bound.update(target.keywords or {})
        target = target.func
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # Builtins and some C callables.
        return frozenset()
    named = {
        name
        for name, parameter in signature.parameters.items()
        if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    return frozenset(named - bound)


@dataclasses.dataclass(frozen=True)
class InputFnData:
    """A TF1 `input_fn` plus how to call it; call it with a `tf.distribute.InputContext`.

    Build it with `input_fn_data(...)`. Calling it returns the `tf.data.Dataset` the `input_fn`
    builds for that input pipeline.

    Attributes:
        input_fn: The TF1 input function.
        batch_size: Global batch size (TPUEstimator's `train_batch_size`/`eval_batch_size`), or None
            to leave `params` without a `batch_size` (plain Estimator).
        params: The Estimator's `params` (copied for every call), or None.
        mode: "train", "eval" or "infer" (the `tf.estimator.ModeKeys` values).
        per_replica: Whether the `input_fn`'s batches are per replica (see the module docstring):
            True tells `fit`/`evaluate` to use `strategy.distribute_datasets_from_function`, False
            to give Keras the dataset of `global_dataset()`, whose global batches Keras splits.
        use_tpu: Put into `params['use_tpu']` when not None.
        config: Passed as `config` to an `input_fn` that takes one.
    """

    input_fn: Callable[..., Any]
    batch_size: int | None
    params: Mapping[str, Any] | None
    mode: str
    per_replica: bool
    use_tpu: bool | None
    config: Any = None

    def __post_init__(self) -> None:
        if not callable(self.input_fn):
            raise TypeError(f"`input_fn` must be callable, got {type(self.input_fn).__name__}.")
        if self.batch_size is not None and (
            isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size <= 0
        ):
            raise ValueError(f"`batch_size` must be a positive int or None, got {self.batch_size!r}.")
        if self.params is not None and not isinstance(self.params, Mapping):
            raise TypeError(f"`params` must be a dict or None, got {type(self.params).__name__}.")
        if self.mode not in _MODES:
            raise ValueError(f"`mode` must be one of 'train', 'eval', 'infer', got {self.mode!r}.")
        object.__setattr__(self, "mode", _MODES[self.mode])

    def batch_size_for(self, input_context: tf.distribute.InputContext) -> int | None:
        """The `params['batch_size']` the `input_fn` gets in `input_context`.

        Raises:
            ValueError: If the global batch size does not divide evenly.
        """
        if self.batch_size is None:
            return None
        if self.per_replica:
            return input_context.get_per_replica_batch_size(self.batch_size)
        pipelines = input_context.num_input_pipelines
        if self.batch_size % pipelines:
            raise ValueError(
                f"`batch_size` ({self.batch_size}) must be divisible by the number of input pipelines "
                f"({pipelines})."
            )
        return self.batch_size // pipelines

    def call_params(self, input_context: tf.distribute.InputContext) -> dict[str, Any]:
        """The `params` dict the `input_fn` receives in `input_context` (a fresh copy)."""
        params = dict(self.params or {})
        batch_size = self.batch_size_for(input_context)
        if batch_size is not None:
            params["batch_size"] = batch_size
        if self.use_tpu is not None:
            params["use_tpu"] = self.use_tpu
        return params

    def __call__(self, input_context: tf.distribute.InputContext | None = None) -> tf.data.Dataset:
        """Calls the `input_fn` for one input pipeline.

        Args:
            input_context: The pipeline's context; None means one pipeline, one replica.

        Returns:
            The `tf.data.Dataset` the `input_fn` returned.

        Raises:
            TypeError: If the `input_fn` does not return a `tf.data.Dataset`.
        """
        if input_context is None:
            input_context = tf.distribute.InputContext()
        input_fn = dataset_form(self.input_fn)
        wanted = named_parameters(input_fn)
        kwargs: dict[str, Any] = {}
        if "params" in wanted:
            kwargs["params"] = self.call_params(input_context)
        if "mode" in wanted:
            kwargs["mode"] = self.mode
        if "config" in wanted:
            kwargs["config"] = self.config
        if "input_context" in wanted:
            kwargs["input_context"] = input_context
        seed = getattr(self.config, "tf_random_seed", None)
        name = getattr(self.input_fn, "__name__", repr(self.input_fn))

        replay = python_random_replay()

        def call() -> Any:  # (called twice for tensors: each draws what TF 1.x's one call drew)
            replay()
            return input_fn(**kwargs)

        try:
            with iterator_input_detected():
                dataset = call()
        except IteratorInput:  # TF1's `iterator.get_next()` tensors
            tensors = True
        else:
            if isinstance(dataset, tf.data.Dataset):
                return dataset
            tensors = isinstance(dataset, (tuple, list, dict)) or tf.is_tensor(dataset)
        if tensors:
            try:  # the iterator's dataset, mapped; or tensors its own ops make, those ops for each batch
                return dataset_of_tensors(call, seed, 0)
            except NotADataset:  # tensors of another kind (a queue-based reader): the input_fn again, in a graph of its own
                return graph_input_dataset(call, name, seed=seed)
        raise TypeError(
            f"input_fn {name!r} returned {type(dataset).__name__}, not a tf.data.Dataset or "
            "(features, labels) tensors."
        )

    def global_dataset(self, num_replicas_in_sync: int = 1) -> tf.data.Dataset:
        """The dataset for a single input pipeline: what Keras gets when `per_replica` is False."""
        return self(
            tf.distribute.InputContext(
                num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=num_replicas_in_sync
            )
        )


def sharded_by_data(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset` split across workers by its batches' examples (`AutoShardPolicy.DATA`) where it
    sets no policy itself, so that each step of a multi-worker run sees the global batch one
    worker would see: `AUTO` would shard a file-based dataset by files (a program reading one file
    fails; one reading several sees other batches). One worker reads it as it is."""
    if dataset.options().experimental_distribute.auto_shard_policy != tf.data.experimental.AutoShardPolicy.AUTO:
        return dataset
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return dataset.with_options(options)


def graph_input_dataset(call: Callable[[], Any], name: str = "input_fn", seed: int | None = None) -> tf.data.Dataset:
    """The batches of a TF1 `input_fn` that returns tensors (`features, labels` from
    `dataset.make_one_shot_iterator().get_next()`, or a queue-based reader), as a dataset.

    Estimator ran such an input_fn in its graph and took one batch per session run. Here it runs in
    a graph of its own (tables and local variables initialized, as Estimator's scaffold did) and
    each element of the returned dataset is one session run, until the input ends
    (`OutOfRangeError`): the same batches, in the same order. `seed` (the RunConfig's
    `tf_random_seed`) is the graph's seed, as Estimator's graph had it: an unseeded `shuffle`
    draws TF1's order (an op seed counts the graph's unseeded random ops before it, and
    Estimator's graph had none before the input_fn's).
    """
    graph = tf.Graph()
    with graph.as_default():
        if seed is not None:
            tf.compat.v1.random.set_random_seed(seed)
        result = call()
        if any(isinstance(t, tf.SparseTensor) for t in tf.nest.flatten(result)):
            raise TypeError(
                f"input_fn {name!r} returns sparse tensors from an iterator: return the tf.data.Dataset instead."
            )
        specs = tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), result)
        initializers = tf.group(tf.compat.v1.tables_initializer(), tf.compat.v1.local_variables_initializer())

    def batches():
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(initializers)
            while True:
                try:
                    yield session.run(result)
                except tf.errors.OutOfRangeError:
                    return

    return tf.data.Dataset.from_generator(batches, output_signature=specs)


def input_fn_data(
    input_fn: Callable[..., Any],
    *,
    batch_size: int | None,
    params: Mapping[str, Any] | None = None,
    mode: str = "train",
    per_replica: bool | None = None,
    use_tpu: bool | None = None,
    config: Any = None,
) -> InputFnData:
    """Wraps a TF1 `input_fn` so it is called as Estimator/TPUEstimator called it.

    Args:
        input_fn: The TF1 input function. It may take any of `params`, `mode`, `config` (and
            `input_context`), or nothing; it must return a `tf.data.Dataset`.
        batch_size: TPUEstimator's global batch size for `mode`, or None for a plain Estimator
            (then `params` gets no `batch_size`).
        params: The Estimator's `params`; the `input_fn` gets a copy with `batch_size` (and
            `use_tpu`) added.
        mode: "train", "eval" or "infer" ("predict" is accepted for "infer").
        per_replica: False for PER_HOST_V1 / `use_tpu=False` (the `input_fn` builds host batches
            of G / pipelines, which Keras splits); True for PER_HOST_V2 / PER_SHARD_V1 /
            Estimator + distribution strategy (the `input_fn` builds per-replica batches of G / R).
            None (the default): as TPUEstimator decided it, from `config.tpu_config`'s
            `per_host_input_for_training` for training on TPU, global batches otherwise.
        use_tpu: TPUEstimator's `use_tpu`, put into `params['use_tpu']` when not None.
        config: The `RunConfig` passed to an `input_fn` that takes `config`.

    Returns:
        An `InputFnData`, to pass to `fit`/`evaluate` or call with an `InputContext`.

    Raises:
        ValueError: If `batch_size` or `mode` is invalid.
        TypeError: If `input_fn` is not callable or `params` is not a dict.
    """
    if per_replica is None:
        tpu_config = getattr(config, "tpu_config", None)
        per_replica = bool(
            use_tpu is not False
            and mode == "train"
            and tpu_config is not None
            and getattr(tpu_config, "per_replica_input", False)
        )
    return InputFnData(
        input_fn=input_fn,
        batch_size=batch_size,
        params=params,
        mode=mode,
        per_replica=bool(per_replica),
        use_tpu=use_tpu,
        config=config,
    )
