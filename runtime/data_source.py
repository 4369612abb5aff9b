"""`DataSource`: how a migrated program's data reaches a training loop, and the checks before one runs.

A `tf.data.Dataset` is given as is (Keras splits its global batches across replicas); an
`InputFnData` with `per_replica=False` becomes the dataset of one input pipeline; a per-replica
`InputFnData` or any function of `tf.distribute.InputContext` goes through
`strategy.distribute_datasets_from_function`. For the runtime's `engine` it also makes
distributed, per-worker and local datasets. Shared by `estimator_calls` (`fit`/`evaluate`/`predict`),
`ctl.EstimatorLoop` and `convert`; `ensure_built` creates every variable before a step runs and
`check_steps` validates TF1's step counts.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import keras
import numpy as np
import tensorflow as tf

from . import keras_workarounds
from ._random_state import python_random_kept
from .inputs import InputFnData, sharded_by_data

__all__ = ["DataSource", "check_steps", "ensure_built"]


class DataSource:
    """`fit`/`evaluate`'s `data`, turned into what Keras consumes for a given strategy."""

    def __init__(self, data: Any, strategy: tf.distribute.Strategy, *, argument: str = "data") -> None:
        self.strategy = strategy
        self.data = data
        self._map: Callable[..., Any] | None = None  # Applied to every batch (`with_class_weight`).
        if isinstance(data, tf.data.Dataset):
            self.kind = "dataset"
        elif isinstance(data, InputFnData):
            self.kind = "per_replica_fn" if data.per_replica else "global_fn"
        elif callable(data):
            self.kind = "per_replica_fn"
        else:
            raise TypeError(
                f"`{argument}` must be a tf.data.Dataset, an InputFnData (tfmigrate.runtime.input_fn_data) "
                f"or a function of tf.distribute.InputContext, got {type(data).__name__}."
            )

    def with_class_weight(self, class_weight: Mapping[int, float] | None) -> "DataSource":
        """This data with Keras's `class_weight` turned into per-example sample weights.

        Keras's own map (`make_class_weight_map_fn`, what `model.fit(class_weight=...)` applies to a
        dataset), applied to every batch of every input pipeline, so that every loop (Keras's, the
        runtime's device loop and engine) and every kind of data gets the same weights.
        """
        if not class_weight:
            return self
        if not isinstance(class_weight, Mapping):
            raise TypeError(f"`class_weight` must be a dict of class index -> weight, got {type(class_weight).__name__}.")
        from keras.src.trainers.data_adapters.tf_dataset_adapter import make_class_weight_map_fn

        weighted = DataSource(self.data, self.strategy)
        weighted._map = make_class_weight_map_fn(dict(class_weight))
        return weighted

    def _mapped(self, dataset: tf.data.Dataset) -> tf.data.Dataset:
        return dataset if self._map is None else dataset.map(self._map)

    def _single_pipeline_context(self) -> tf.distribute.InputContext:
        return tf.distribute.InputContext(
            num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=self.strategy.num_replicas_in_sync
        )

    def _call_fn(self, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        dataset = self.data(input_context)
        if not isinstance(dataset, tf.data.Dataset):
            raise TypeError(
                f"The dataset function returned {type(dataset).__name__}, not a tf.data.Dataset."
            )
        return self._mapped(dataset)

    def _single_dataset(self) -> tf.data.Dataset:
        """The dataset of a single input pipeline feeding every replica: global batches."""
        if self.kind == "dataset":
            return self._mapped(self.data)
        if self.kind == "global_fn":
            return self._mapped(self.data.global_dataset(self.strategy.num_replicas_in_sync))
        return self._call_fn(self._single_pipeline_context())

    def first_batch(self) -> Any:
        """One element of the (single-pipeline) dataset, to build the model with. An input_fn called
        for it draws nothing the program sees (Python's and NumPy's random states are put back): TF
        1.x called it once per call, and one drawing its data with `np.random` draws that data in
        the call that trains."""
        with python_random_kept():
            for element in self._single_dataset().take(1):
                return element
        raise ValueError("The input data is empty: cannot build the model from its first batch.")

    def evaluated_on_one_device(self) -> bool:
        """TF1 evaluated this `input_fn`'s batches one at a time on one device, and they are
        evaluated here by several replicas: an Estimator's evaluation input under `train_distribute`
        with no `eval_distribute` (TF1 distributed only training then). Its `steps` counted
        batches, not steps of one batch per replica (`keras_input`, `keras_steps`)."""
        data = self.data
        return (
            self.kind == "per_replica_fn"
            and isinstance(data, InputFnData)
            and data.mode == "eval"
            and data.config is not None
            and getattr(data.config, "train_distribute", None) is not None
            and getattr(data.config, "eval_distribute", None) is None
            and self.strategy.num_replicas_in_sync > 1
        )

    def keras_steps(self, limit: int | None) -> int | None:
        """The Keras steps that run `limit` steps as TF1 counted them: `limit` batches spread over
        the replicas where TF1 evaluated them on one device (the last step may leave a replica none)."""
        if limit is None or not self.evaluated_on_one_device():
            return limit
        return -(-limit // self.strategy.num_replicas_in_sync)

    def keras_input(self, limit: int | None) -> Any:
        """The `x` for Keras, cut to `limit` steps when not None (`limit` batches in all where TF1
        evaluated them on one device: `evaluated_on_one_device`)."""
        if self.kind in ("dataset", "global_fn"):
            dataset = self._single_dataset()
            return dataset if limit is None else dataset.take(limit)
        one_device = self.evaluated_on_one_device()

        def dataset_fn(input_context: tf.distribute.InputContext) -> tf.data.Dataset:
            dataset = self._call_fn(input_context)
            if limit is None:
                return dataset
            if one_device and input_context.num_input_pipelines == 1:
                return dataset.take(limit)
            # One step takes one element per replica fed by this pipeline.
            per_step = max(1, input_context.num_replicas_in_sync // input_context.num_input_pipelines)
            return dataset.take(limit * per_step)

        return self.strategy.distribute_datasets_from_function(dataset_fn)

    # What the runtime's engine (`engine.py`) asks for.

    def distributed(self, limit: int | None) -> Any:
        """A distributed dataset of `limit` steps for a synchronous strategy (MultiWorkerMirrored).

        A dataset of global batches is split as Keras splits it, and sharded across workers by data
        (`AutoShardPolicy.DATA`, unless the dataset sets a policy itself), so that every step sees
        the global batch one worker would see: `AUTO` would shard a file-based dataset by files.
        """
        data = self.keras_input(limit)
        if isinstance(data, tf.distribute.DistributedDataset):
            return data
        return self.strategy.experimental_distribute_dataset(sharded_by_data(data))

    def per_worker(self) -> Any:
        """For `ClusterCoordinator.create_per_worker_dataset`: each worker builds its own input.

        A dataset is copied to every worker as is; a dataset function is called on every worker
        (through `distribute_datasets_from_function`, with that worker's `InputContext`).
        """
        if self.kind == "dataset":
            return self._mapped(self.data)
        strategy = self.strategy

        def per_worker_dataset_fn() -> Any:
            return strategy.distribute_datasets_from_function(self._call_fn)

        return per_worker_dataset_fn

    def local(self, limit: int | None) -> tf.data.Dataset:
        """The single-pipeline dataset (global batches) cut to `limit` batches, for this process alone."""
        dataset = self._single_dataset()
        return dataset if limit is None else dataset.take(limit)


def ensure_built(model: keras.Model, source: DataSource, *, with_labels: bool = True) -> None:
    """Creates every model, optimizer and compiled-metric variable before any step runs.

    A checkpoint can then be restored into them, and no variable is created inside a step: under
    ParameterServerStrategy a step runs on a worker, where no variable may be created. The compiled
    loss and metrics are built only `with_labels` (not for `predict`, whose data may have none).
    """
    strategy = model.distribute_strategy
    layers = model._flatten_layers() if hasattr(model, "_flatten_layers") else model.layers  # noqa: SLF001
    unbuilt = not model.built or not all(layer.built for layer in layers)
    batch = None
    if unbuilt:
        batch = source.first_batch()
        x, _, _ = keras.utils.unpack_x_y_sample_weight(batch)
        with strategy.scope():
            model(x, training=False)
    if getattr(model, "optimizer", None) is not None and not model.optimizer.built:
        with strategy.scope():
            model.optimizer.build(model.trainable_variables)
    compile_state = [getattr(model, "_compile_metrics", None), getattr(model, "_compile_loss", None)]
    unbuilt_state = any(state is not None and not state.built for state in compile_state)
    if with_labels and unbuilt_state and hasattr(model, "_symbolic_build"):
        # What Keras's own `fit` does before its first step (symbolic: no data is computed on).
        with strategy.scope():
            model._symbolic_build(data_batch=source.first_batch() if batch is None else batch)  # noqa: SLF001
    keras_workarounds.use_native_increments(model)


def check_steps(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` must be an int or None, got {value!r}.")
    if value <= 0:
        raise ValueError(f"Must specify `{name}` > 0, given: {value}.")
    return int(value)
