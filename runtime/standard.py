"""`StandardTrainer`/`StandardEvaluator`: the `Trainer`/`Evaluator` interfaces as per-step hooks.

A subclass writes one step (`train_step(iterator)`, which calls `strategy.run`) and optionally the
hooks around a loop of steps (`train_loop_begin`, `train_loop_end`); the base class owns the input
iterator and how the loop runs: a `tf.while_loop` inside one `tf.function` call
(`use_tf_while_loop=True`), one `tf.function` call per step (`use_tf_function=True`), or eagerly.

`KerasModelTrainer`/`KerasModelEvaluator` are ready-made subclasses for a compiled Keras model, with
the numbers of `model.fit`/`model.evaluate` (same loss, same gradients, same optimizer update).

Datasets may be a `tf.data.Dataset` of global batches (split across replicas by
`strategy.experimental_distribute_dataset`), an already distributed dataset, an `InputFnData`
(`input_fn_data`), or a function of `tf.distribute.InputContext` returning per-replica batches
(`strategy.distribute_datasets_from_function`).
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
from typing import Any, Callable

import keras
import numpy as np
import tensorflow as tf

from . import checkpoints, interfaces, loops
from .inputs import InputFnData

__all__ = [
    "KerasModelEvaluator",
    "KerasModelTrainer",
    "StandardEvaluator",
    "StandardEvaluatorOptions",
    "StandardTrainer",
    "StandardTrainerOptions",
    "distribute_dataset",
]


# -- options -------------------------------------------------------------------------------------


def _check_bool(owner: str, name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{owner}: `{name}` must be a bool, got {value!r}.")


def _check_while_loop(owner: str, use_tf_function: bool, use_tf_while_loop: bool) -> None:
    if use_tf_while_loop and not use_tf_function:
        raise ValueError(
            f"{owner}: `use_tf_while_loop=True` requires `use_tf_function=True` (the while loop runs inside a "
            "tf.function); pass `use_tf_while_loop=False` to run the steps from Python."
        )


@dataclasses.dataclass(frozen=True)
class StandardTrainerOptions:
    """How `StandardTrainer` runs a loop of training steps.

    Attributes:
        use_tf_function: Run `train_step` inside a `tf.function`, one call per step
            (`create_one_step_fn`), or one per loop with `use_tf_while_loop`; otherwise eagerly,
            for debugging. In a `tf.function` a step must draw exactly one element from its
            iterator: the element is fetched before the step, so no step starts on exhausted input.
        use_tf_while_loop: Run all the steps of a loop inside one `tf.function` call, as a
            `tf.while_loop` (TPUEstimator's `iterations_per_loop`). Requires `use_tf_function`.
    """

    use_tf_function: bool = True
    use_tf_while_loop: bool = True

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            _check_bool("StandardTrainerOptions", field.name, getattr(self, field.name))
        _check_while_loop("StandardTrainerOptions", self.use_tf_function, self.use_tf_while_loop)


@dataclasses.dataclass(frozen=True)
class StandardEvaluatorOptions:
    """How `StandardEvaluator` runs an evaluation.

    Attributes:
        use_tf_function: Run `eval_step` inside a `tf.function`, one call per step (otherwise
            eagerly). A step must then draw exactly one element from its iterator.
        use_tf_while_loop: Run all the steps inside one `tf.function` call, as a `tf.while_loop`.
            Requires `use_tf_function`. The state `eval_begin` returns must then be None (and
            `eval_reduce` is not called) or a nest of tensors `eval_reduce` keeps the shapes of.
        recreate_iterator_for_each_eval: Start every `evaluate` call from the beginning of the
            dataset (otherwise continue where the last call stopped).
    """

    use_tf_function: bool = True
    use_tf_while_loop: bool = False
    recreate_iterator_for_each_eval: bool = True

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            _check_bool("StandardEvaluatorOptions", field.name, getattr(self, field.name))
        _check_while_loop("StandardEvaluatorOptions", self.use_tf_function, self.use_tf_while_loop)


# -- datasets ------------------------------------------------------------------------------------


def distribute_dataset(strategy: tf.distribute.Strategy, dataset: Any, *, argument: str = "dataset") -> Any:
    """Returns `dataset` distributed over `strategy`'s replicas.

    Args:
        strategy: The strategy the steps run under.
        dataset: A `tf.data.Dataset` of global batches (split across the replicas), a distributed
            dataset (returned as is), an `InputFnData` (per-replica or global batches, as it says), or
            a function of `tf.distribute.InputContext` returning the per-replica batches of one input
            pipeline.
        argument: The argument name quoted in errors.

    Returns:
        A distributed dataset (a `tf.data.Dataset` under the default strategy).

    Raises:
        TypeError: If `dataset` is none of these.
    """
    if isinstance(dataset, tf.distribute.DistributedDataset):
        return dataset
    if isinstance(dataset, tf.data.Dataset):
        return strategy.experimental_distribute_dataset(dataset)
    if isinstance(dataset, InputFnData) and not dataset.per_replica:
        return strategy.experimental_distribute_dataset(dataset.global_dataset(strategy.num_replicas_in_sync))
    if callable(dataset):
        return strategy.distribute_datasets_from_function(dataset)
    raise TypeError(
        f"`{argument}` must be a tf.data.Dataset, a distributed dataset, an InputFnData or a function of "
        f"tf.distribute.InputContext, got {type(dataset).__name__}."
    )


# -- the standard runners ------------------------------------------------------------------------


class StandardTrainer(interfaces.Trainer, metaclass=abc.ABCMeta):
    """A `Trainer` made of hooks: `train_loop_begin`, `train_step` (one step), `train_loop_end`.

    Example:

    ```python
    class MyTrainer(tfm.StandardTrainer):
        def train_step(self, iterator):
            def one_step_on_data(batch):
                ...  # forward pass, tape.gradient, optimizer.apply_gradients
            self.strategy.run(one_step_on_data, args=(next(iterator),))
    ```

    The iterator over the training dataset is created on the first `train` call and kept: each call
    continues where the previous one stopped.
    """

    def __init__(
        self,
        train_dataset: Any,
        options: StandardTrainerOptions | None = None,
        *,
        strategy: tf.distribute.Strategy | None = None,
    ) -> None:
        """Initializes the trainer.

        Args:
            train_dataset: The training data (see `distribute_dataset` for the accepted kinds).
            options: A `StandardTrainerOptions`; the defaults run each loop as one `tf.while_loop`.
            strategy: The strategy `train_step` runs under; defaults to the strategy in scope.

        Raises:
            TypeError: If `options` is not a `StandardTrainerOptions` or `train_dataset` has an
                unsupported type.
        """
        super().__init__()
        if options is None:
            options = StandardTrainerOptions()
        if not isinstance(options, StandardTrainerOptions):
            raise TypeError(f"`options` must be a StandardTrainerOptions, got {type(options).__name__}.")
        self._strategy = strategy or tf.distribute.get_strategy()
        self._train_options = options
        self._train_dataset = distribute_dataset(self._strategy, train_dataset, argument="train_dataset")
        self._train_iter: Any = None
        self._train_loop_fn: Callable[..., loops.LoopOutput] | None = None
        self.last_loop_num_steps: int | None = None

    @property
    def strategy(self) -> tf.distribute.Strategy:
        """The strategy the steps run under."""
        return self._strategy

    @property
    def train_options(self) -> StandardTrainerOptions:
        """The `StandardTrainerOptions`."""
        return self._train_options

    @property
    def train_dataset(self) -> Any:
        """The distributed training dataset. Setting it restarts the input from the new dataset."""
        return self._train_dataset

    @train_dataset.setter
    def train_dataset(self, train_dataset: Any) -> None:
        self._train_dataset = distribute_dataset(self._strategy, train_dataset, argument="train_dataset")
        self._train_iter = None

    def create_train_loop_fn(self) -> Callable[..., loops.LoopOutput]:
        """Returns the loop function running `train_step`, as the options say."""
        if self._train_options.use_tf_while_loop:
            return loops.create_tf_while_loop_fn(self.train_step)
        if self._train_options.use_tf_function:
            return loops.create_loop_fn(loops.create_one_step_fn(self.train_step))
        return loops.create_loop_fn(self.train_step)

    def train(self, num_steps: int | tf.Tensor) -> interfaces.Logs | None:
        """Runs `train_loop_begin`, `num_steps` `train_step`s (fewer if the input ends), `train_loop_end`.

        Args:
            num_steps: The number of steps, an int or a scalar int32 tensor.

        Returns:
            What `train_loop_end` returns. `last_loop_num_steps` holds the number of steps that ran.
        """
        self.train_loop_begin()
        if self._train_loop_fn is None:
            self._train_loop_fn = self.create_train_loop_fn()
        if self._train_iter is None:
            self._train_iter = iter(self._train_dataset)
        output = self._train_loop_fn(self._train_iter, num_steps)
        self.last_loop_num_steps = int(output.num_steps)
        return self.train_loop_end()

    def train_loop_begin(self) -> None:
        """Called eagerly before each loop of steps (e.g. to reset metrics)."""

    @abc.abstractmethod
    def train_step(self, iterator: Any) -> Any:
        """Runs one training step: draws a batch with `next(iterator)` and calls `strategy.run`.

        Traced inside a `tf.function` (and a `tf.while_loop`) unless the options say otherwise.

        Args:
            iterator: The iterator over the distributed training dataset (under
                `use_tf_while_loop`, an iterator over this step's element).

        Returns:
            Ignored.
        """

    def train_loop_end(self) -> interfaces.Logs | None:
        """Called eagerly after each loop of steps.

        Returns:
            The loop's logs (e.g. metric results), or None.
        """
        return None


class StandardEvaluator(interfaces.Evaluator, metaclass=abc.ABCMeta):
    """An `Evaluator` made of hooks: `eval_begin`, `eval_step`, `eval_reduce`, `eval_end`.

    `eval_begin()` may return a state; after every step `state = eval_reduce(state, step_outputs)`;
    `eval_end(state)` (or `eval_end()` when the state is None) returns the results.
    """

    def __init__(
        self,
        eval_dataset: Any,
        options: StandardEvaluatorOptions | None = None,
        *,
        strategy: tf.distribute.Strategy | None = None,
    ) -> None:
        """Initializes the evaluator.

        Args:
            eval_dataset: The evaluation data (see `distribute_dataset` for the accepted kinds).
            options: A `StandardEvaluatorOptions`; the defaults run one `tf.function` call per step
                and restart the input for every evaluation.
            strategy: The strategy `eval_step` runs under; defaults to the strategy in scope.

        Raises:
            TypeError: If `options` is not a `StandardEvaluatorOptions` or `eval_dataset` has an
                unsupported type.
        """
        super().__init__()
        if options is None:
            options = StandardEvaluatorOptions()
        if not isinstance(options, StandardEvaluatorOptions):
            raise TypeError(f"`options` must be a StandardEvaluatorOptions, got {type(options).__name__}.")
        self._strategy = strategy or tf.distribute.get_strategy()
        self._eval_options = options
        self._eval_dataset = distribute_dataset(self._strategy, eval_dataset, argument="eval_dataset")
        self._eval_iter: Any = None
        self._eval_loop_fn: Callable[..., loops.LoopOutput] | None = None
        self.last_eval_num_steps: int | None = None

    @property
    def strategy(self) -> tf.distribute.Strategy:
        """The strategy the steps run under."""
        return self._strategy

    @property
    def eval_options(self) -> StandardEvaluatorOptions:
        """The `StandardEvaluatorOptions`."""
        return self._eval_options

    @property
    def eval_dataset(self) -> Any:
        """The distributed evaluation dataset. Setting it restarts the input from the new dataset."""
        return self._eval_dataset

    @eval_dataset.setter
    def eval_dataset(self, eval_dataset: Any) -> None:
        self._eval_dataset = distribute_dataset(self._strategy, eval_dataset, argument="eval_dataset")
        self._eval_iter = None

    def create_eval_loop_fn(self) -> Callable[..., loops.LoopOutput]:
        """Returns the loop function running `eval_step`, as the options say."""
        if self._eval_options.use_tf_while_loop:
            return loops.create_tf_while_loop_fn(self.eval_step)
        if self._eval_options.use_tf_function:
            return loops.create_loop_fn(loops.create_one_step_fn(self.eval_step))
        return loops.create_loop_fn(self.eval_step)

    def evaluate(self, num_steps: int | tf.Tensor) -> interfaces.Logs:
        """Runs `eval_begin`, `num_steps` `eval_step`s (all the input when -1), `eval_end`.

        Args:
            num_steps: The number of steps, or -1 to evaluate until the input ends (the evaluation
                dataset must then be finite).

        Returns:
            What `eval_end` returns. `last_eval_num_steps` holds the number of steps that ran.
        """
        state = self.eval_begin()
        if self._eval_loop_fn is None:
            self._eval_loop_fn = self.create_eval_loop_fn()
        if self._eval_iter is None or self._eval_options.recreate_iterator_for_each_eval:
            self._eval_iter = iter(self._eval_dataset)
        output = self._eval_loop_fn(self._eval_iter, num_steps, state=state, reduce_fn=self.eval_reduce)
        self.last_eval_num_steps = int(output.num_steps)
        if output.state is None:
            return self.eval_end()
        return self.eval_end(output.state)

    def eval_begin(self) -> Any:
        """Called eagerly before the evaluation (e.g. to reset metrics).

        Returns:
            The initial state for `eval_reduce`, or None.
        """
        return None

    @abc.abstractmethod
    def eval_step(self, iterator: Any) -> Any:
        """Runs one evaluation step: draws a batch with `next(iterator)` and calls `strategy.run`.

        Args:
            iterator: The iterator over the distributed evaluation dataset.

        Returns:
            The step's outputs, passed to `eval_reduce`.
        """

    def eval_reduce(self, state: Any = None, step_outputs: Any = None) -> Any:
        """Folds one step's outputs into the state (by default, keeps the state).

        Args:
            state: The state so far (what `eval_begin` returned, then what this returned).
            step_outputs: What `eval_step` returned.

        Returns:
            The new state.
        """
        del step_outputs
        return state

    def eval_end(self, *args: Any) -> interfaces.Logs:
        """Called eagerly after the evaluation, with the final state unless it is None.

        Returns:
            The evaluation results.
        """
        del args
        return {}


# -- Keras models --------------------------------------------------------------------------------

#: A per-example loss for `KerasModelTrainer(loss_fn=...)`: `loss_fn(y_true, y_pred, sample_weight)`
#: returns the (weighted) loss of each example, shape `[batch]`.
PerExampleLossFn = Callable[[Any, Any, Any], Any]


def _check_keras_model(model: Any, owner: str) -> None:
    if not isinstance(model, keras.Model):
        raise TypeError(f"{owner}: `model` must be a Keras 3 keras.Model, got {type(model).__name__}.")
    if getattr(model, "optimizer", None) is None or not getattr(model, "compiled", True):
        raise ValueError(f"{owner}: compile `model` first (model.compile(optimizer=..., loss=..., metrics=...)).")


def _check_model_strategy(model: keras.Model, strategy: tf.distribute.Strategy, owner: str) -> None:
    if not isinstance(strategy, tf.distribute.Strategy):
        raise TypeError(f"{owner}: `strategy` must be a tf.distribute.Strategy, got {type(strategy).__name__}.")
    if model.distribute_strategy is not strategy:
        raise ValueError(
            f"{owner}: `model` was built under {type(model.distribute_strategy).__name__} but `strategy` is "
            f"{type(strategy).__name__}; build and compile the model inside `strategy.scope()`."
        )


def _data_batch_spec(dataset: Any, distributed: Any, strategy: tf.distribute.Strategy) -> Any:
    """A nest of `tf.TensorSpec` shaped like one batch, to build the model and its metrics with."""
    if isinstance(dataset, tf.data.Dataset):
        return dataset.element_spec
    for element in distributed:
        local = tf.nest.map_structure(lambda value: strategy.experimental_local_results(value)[0], element)
        return tf.nest.map_structure(tf.TensorSpec.from_tensor, local)
    raise ValueError("The dataset is empty: cannot build the model from its first batch.")


def _build_keras_state(model: keras.Model, strategy: tf.distribute.Strategy, batch_spec: Any) -> None:
    """Creates the model's, compiled metrics' and optimizer's variables (as `model.fit` does first).

    Variables must exist before a checkpoint is restored into them, and must not be created inside
    the training loop's `tf.function`. Keras builds them symbolically (`Model._symbolic_build`, no
    data read, no state changed); the same is used here.
    """
    with strategy.scope():
        model._symbolic_build(data_batch=batch_spec)  # noqa: SLF001


def _first_tensor(structure: Any) -> tf.Tensor:
    return next(value for value in tf.nest.flatten(structure) if value is not None)


class _KerasModelLoss:
    """The loss of one replica's batch, scaled for summing gradients over the replicas.

    With no `loss_fn`, `model.compute_loss` (the compiled loss plus `model.losses`): Keras 3 loss
    objects already divide by `num_replicas_in_sync` inside a strategy, so nothing more is done.
    With a per-example `loss_fn`: `tf.nn.compute_average_loss` (sum / global batch size) plus
    `tf.nn.scale_regularization_loss(sum(model.losses))`, the same numbers with equal replica batches.
    """

    def __init__(self, model: keras.Model, loss_fn: PerExampleLossFn | None) -> None:
        if loss_fn is not None and not callable(loss_fn):
            raise TypeError(f"`loss_fn` must be callable or None, got {type(loss_fn).__name__}.")
        self._model = model
        self._loss_fn = loss_fn
        # `training` was added to `compute_loss` in Keras 3.3; overrides may lack it.
        self._compute_loss_takes_training = "training" in inspect.signature(model.compute_loss).parameters

    def __call__(self, x: Any, y: Any, y_pred: Any, sample_weight: Any, *, training: bool) -> tf.Tensor:
        model = self._model
        if self._loss_fn is None:
            if self._compute_loss_takes_training:
                return model.compute_loss(x, y, y_pred, sample_weight, training=training)
            return model.compute_loss(x, y, y_pred, sample_weight)
        per_example = tf.convert_to_tensor(self._loss_fn(y, y_pred, sample_weight))
        if per_example.shape.rank != 1:
            raise ValueError(
                f"`loss_fn` must return one loss per example (shape [batch]), got shape {per_example.shape}."
            )
        loss = tf.nn.compute_average_loss(per_example)
        if model.losses:
            loss += tf.nn.scale_regularization_loss(tf.add_n([tf.cast(l, loss.dtype) for l in model.losses]))
        return loss


class _KerasLossMean:
    """The batch-size-weighted mean of the replica-unscaled loss over a loop, as Keras logs `loss`.

    Each step contributes `loss * num_replicas * batch_size` per replica, summed over replicas with
    `strategy.reduce` (Keras's loss tracker: `Mean(unscale_loss_for_distribution(loss), batch_size)`).
    """

    def __init__(self, strategy: tf.distribute.Strategy) -> None:
        self._strategy = strategy
        with strategy.scope():
            self.total = tf.Variable(0.0, trainable=False, name="loss_total")
            self.count = tf.Variable(0.0, trainable=False, name="loss_count")

    def replica_values(self, loss: tf.Tensor, x: Any) -> tuple[tf.Tensor, tf.Tensor]:
        """Inside `strategy.run`: this replica's (loss sum, number of examples)."""
        replicas = self._strategy.num_replicas_in_sync
        unscaled = loss * tf.cast(replicas, loss.dtype) if replicas > 1 else loss
        batch_size = tf.cast(tf.shape(_first_tensor(x))[0], tf.float32)
        return tf.cast(unscaled, tf.float32) * batch_size, batch_size

    def update(self, per_replica: tuple[Any, Any]) -> None:
        """In cross-replica context: adds the replicas' values of one step."""
        total, count = per_replica
        self.total.assign_add(self._strategy.reduce(tf.distribute.ReduceOp.SUM, total, axis=None))
        self.count.assign_add(self._strategy.reduce(tf.distribute.ReduceOp.SUM, count, axis=None))

    def reset(self) -> None:
        self.total.assign(0.0)
        self.count.assign(0.0)


def _to_python(value: Any) -> Any:
    array = np.asarray(value)
    return array.item() if array.size == 1 else array


class _KerasMetrics:
    """Resets and reads a Keras model's metrics and the loss mean, each in one `tf.function` call.

    Eagerly, a reset is one op per metric variable and a read several per metric: milliseconds per
    loop, as much as a few training steps of a small model.
    """

    def __init__(self, model: keras.Model, strategy: tf.distribute.Strategy, loss: _KerasLossMean) -> None:
        self._model = model
        self._strategy = strategy
        self._loss = loss
        self._reset_fn = tf.function(self._reset_all, autograph=False)
        self._results_fn = tf.function(self._all_results, autograph=False)

    def _reset_all(self) -> None:
        self._model.reset_metrics()
        self._loss.reset()

    def _all_results(self) -> dict[str, tf.Tensor]:
        results = dict(self._model.get_metrics_result())
        results["loss"] = tf.math.divide_no_nan(self._loss.total, self._loss.count)
        return results

    def reset(self) -> None:
        with self._strategy.scope():
            self._reset_fn()

    def logs(self) -> dict[str, Any]:
        with self._strategy.scope():  # Metric variables are read (summed over replicas) in cross-replica context.
            results = self._results_fn()
        return {name: _to_python(value) for name, value in results.items()}


class KerasModelTrainer(StandardTrainer):
    """Trains a compiled Keras model with a custom loop, with `model.fit`'s numbers.

    Each step: the forward pass with `training=True` under a `tf.GradientTape`, the compiled loss
    (`model.compute_loss`, or a per-example `loss_fn`), `optimizer.scale_loss`, `tape.gradient`,
    `optimizer.apply_gradients` (which sums the replicas' gradients), and the compiled metrics
    (`model.compute_metrics`). On the same global batches the weights equal `model.fit`'s.

    `train(num_steps)` returns the loop's logs: `loss` (the batch-size-weighted mean over the loop's
    steps, as `fit` logs it, reduced over replicas with `strategy.reduce`) and the compiled metrics,
    all reset at the start of every loop (`fit` resets them every epoch). The global step is
    `model.optimizer.iterations`.
    """

    def __init__(
        self,
        model: keras.Model,
        train_dataset: Any,
        *,
        strategy: tf.distribute.Strategy,
        loss_fn: PerExampleLossFn | None = None,
        options: StandardTrainerOptions | None = None,
    ) -> None:
        """Initializes the trainer and creates every model, metric and optimizer variable.

        Args:
            model: A Keras 3 model built and compiled inside `strategy.scope()`.
            train_dataset: The training data: a `tf.data.Dataset` of global batches `(x, y)` or
                `(x, y, sample_weight)`, a distributed dataset, an `InputFnData`, or a function of
                `tf.distribute.InputContext` returning per-replica batches.
            strategy: The model's strategy.
            loss_fn: Optional per-example loss `loss_fn(y_true, y_pred, sample_weight) -> [batch]`,
                averaged with `tf.nn.compute_average_loss` instead of the compiled loss.
            options: A `StandardTrainerOptions`.

        Raises:
            TypeError: If `model` is not a Keras model, `strategy` not a strategy, or `loss_fn` not
                callable.
            ValueError: If `model` is not compiled or belongs to another strategy.
        """
        _check_keras_model(model, "KerasModelTrainer")
        _check_model_strategy(model, strategy, "KerasModelTrainer")
        super().__init__(train_dataset, options, strategy=strategy)
        self._model = model
        self._loss = _KerasModelLoss(model, loss_fn)
        self._loss_mean = _KerasLossMean(strategy)
        _build_keras_state(model, strategy, _data_batch_spec(train_dataset, self.train_dataset, strategy))
        self._metrics = _KerasMetrics(model, strategy, self._loss_mean)
        self._checkpoint: tf.train.Checkpoint | None = None

    @property
    def model(self) -> keras.Model:
        """The Keras model."""
        return self._model

    @property
    def global_step(self) -> Any:
        """The global step: `model.optimizer.iterations`, incremented by every step."""
        return self._model.optimizer.iterations

    @property
    def checkpoint(self) -> tf.train.Checkpoint:
        """`tf.train.Checkpoint(model=model, optimizer=model.optimizer)`, as `tfm.fit` saves it."""
        if self._checkpoint is None:
            self._checkpoint = checkpoints.model_checkpoint(self._model)
        return self._checkpoint

    def train_loop_begin(self) -> None:
        """Resets the model's metrics and the loss mean."""
        self._metrics.reset()

    def train_step(self, iterator: Any) -> None:
        """One optimizer step on the next global batch, on every replica."""
        per_replica = self.strategy.run(self.one_step_on_data, args=(next(iterator),))
        self._loss_mean.update(per_replica)

    def one_step_on_data(self, data: Any) -> tuple[tf.Tensor, tf.Tensor]:
        """One replica's step on its batch (replica context).

        Args:
            data: `(x, y)` or `(x, y, sample_weight)`.

        Returns:
            This replica's (unscaled loss * batch size, batch size), for the loss mean.
        """
        model = self._model
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        with tf.GradientTape() as tape:
            y_pred = model(x, training=True)
            loss = self._loss(x, y, y_pred, sample_weight, training=True)
            scaled_loss = model.optimizer.scale_loss(loss)
        trainable_weights = model.trainable_weights
        if trainable_weights:
            gradients = tape.gradient(scaled_loss, trainable_weights)
            model.optimizer.apply_gradients(zip(gradients, trainable_weights))
        model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)
        return self._loss_mean.replica_values(loss, x)

    def train_loop_end(self) -> dict[str, Any]:
        """The loop's logs: `loss` and the compiled metrics, as Python numbers."""
        return self._metrics.logs()


class KerasModelEvaluator(StandardEvaluator):
    """Evaluates a compiled Keras model with a custom loop, with `model.evaluate`'s numbers.

    Each step: the forward pass with `training=False`, the compiled loss (or `loss_fn`) and the
    compiled metrics. `evaluate(num_steps)` returns `loss` (the batch-size-weighted mean, as
    `model.evaluate` reports it) and the compiled metrics' results.
    """

    def __init__(
        self,
        model: keras.Model,
        eval_dataset: Any,
        *,
        strategy: tf.distribute.Strategy,
        loss_fn: PerExampleLossFn | None = None,
        options: StandardEvaluatorOptions | None = None,
    ) -> None:
        """Initializes the evaluator and creates every model and metric variable.

        Args:
            model: A Keras 3 model built and compiled inside `strategy.scope()`.
            eval_dataset: The evaluation data (as `KerasModelTrainer`'s `train_dataset`).
            strategy: The model's strategy.
            loss_fn: Optional per-example loss, as for `KerasModelTrainer`.
            options: A `StandardEvaluatorOptions`.

        Raises:
            TypeError: If `model` is not a Keras model, `strategy` not a strategy, or `loss_fn` not
                callable.
            ValueError: If `model` is not compiled or belongs to another strategy.
        """
        _check_keras_model(model, "KerasModelEvaluator")
        _check_model_strategy(model, strategy, "KerasModelEvaluator")
        super().__init__(eval_dataset, options, strategy=strategy)
        self._model = model
        self._loss = _KerasModelLoss(model, loss_fn)
        self._loss_mean = _KerasLossMean(strategy)
        _build_keras_state(model, strategy, _data_batch_spec(eval_dataset, self.eval_dataset, strategy))
        self._metrics = _KerasMetrics(model, strategy, self._loss_mean)

    @property
    def model(self) -> keras.Model:
        """The Keras model."""
        return self._model

    def eval_begin(self) -> None:
        """Resets the model's metrics and the loss mean."""
        self._metrics.reset()

    def eval_step(self, iterator: Any) -> None:
        """One evaluation step on the next global batch, on every replica."""
        per_replica = self.strategy.run(self.one_step_on_data, args=(next(iterator),))
        self._loss_mean.update(per_replica)

    def one_step_on_data(self, data: Any) -> tuple[tf.Tensor, tf.Tensor]:
        """One replica's evaluation step on its batch (replica context).

        Returns:
            This replica's (unscaled loss * batch size, batch size), for the loss mean.
        """
        model = self._model
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        y_pred = model(x, training=False)
        loss = self._loss(x, y, y_pred, sample_weight, training=False)
        model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)
        return self._loss_mean.replica_values(loss, x)

    def eval_end(self, *args: Any) -> dict[str, Any]:
        """The evaluation's logs: `loss` and the compiled metrics, as Python numbers."""
        del args
        return self._metrics.logs()
