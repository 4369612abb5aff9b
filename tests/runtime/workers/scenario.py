"""The training scenario every strategy kind is checked on: one model, one data set, one run.

Shared by the in-process tests and the worker processes (`strategy_worker.py`), so that every kind
trains exactly the same model on exactly the same global batches as the default strategy.
"""

from __future__ import annotations

import os
from typing import Any

import keras
import numpy as np
import tensorflow as tf

import tfmigrate.runtime as tfm

STEPS = 10
GLOBAL_BATCH = 8
EVAL_STEPS = 4
PREDICT_STEPS = 3

_rng = np.random.RandomState(0)
X = _rng.rand(64, 3).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3).astype("float32")


def dataset(batch_size: int = GLOBAL_BATCH, repeat: bool = True, skip: int = 0) -> tf.data.Dataset:
    """Global batches of (X, Y), in order; `skip` drops that many batches (a resumed run's position)."""
    data = tf.data.Dataset.from_tensor_slices((X, Y))
    data = data.repeat() if repeat else data
    return data.batch(batch_size, drop_remainder=True).skip(skip)


def input_fn(params: dict[str, Any]) -> tf.data.Dataset:
    """A TF1-style input_fn (`params['batch_size']`), for `tfm.input_fn_data`."""
    return dataset(params["batch_size"])


def make_model(strategy: tf.distribute.Strategy, steps_per_execution: int, learning_rate: float = 0.05) -> keras.Model:
    """A small dense model with constant initial weights, compiled in `strategy`'s scope."""
    with strategy.scope():
        model = keras.Sequential(
            [
                keras.Input((3,)),
                keras.layers.Dense(4, activation="tanh", kernel_initializer=keras.initializers.Constant(0.1)),
                keras.layers.Dense(1, kernel_initializer="zeros"),
            ]
        )
        model.compile(
            optimizer=keras.optimizers.SGD(learning_rate),
            loss="mse",
            metrics=["mae"],
            steps_per_execution=steps_per_execution,
            jit_compile=False,
        )
    return model


def weights(model: keras.Model) -> list[list[float]]:
    return [np.asarray(w, "float64").ravel().tolist() for w in model.get_weights()]


def run(strategy: tf.distribute.Strategy, steps_per_execution: int, *, data: str = "dataset") -> dict[str, Any]:
    """Trains STEPS steps, evaluates EVAL_STEPS batches and predicts PREDICT_STEPS batches.

    Args:
        strategy: The strategy to build the model under.
        steps_per_execution: The model's `steps_per_execution`.
        data: "dataset" (a dataset of global batches) or "input_fn" (`tfm.input_fn_data`).

    Returns:
        JSON-able results: weights, the fit history, evaluate's results, the predictions, and the
        global step.
    """
    model = make_model(strategy, steps_per_execution)
    if data == "input_fn":
        train_data = tfm.input_fn_data(input_fn, batch_size=GLOBAL_BATCH)
        eval_data = tfm.input_fn_data(input_fn, batch_size=GLOBAL_BATCH, mode="eval")
    else:
        train_data = eval_data = dataset()
    history = tfm.fit(model, train_data, steps=STEPS)
    results = tfm.evaluate(model, eval_data, steps=EVAL_STEPS)
    predictions = tfm.predict(model, dataset(repeat=False), steps=PREDICT_STEPS)
    return {
        "weights": weights(model),
        "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
        "evaluate": results,
        "predictions": np.asarray(predictions, "float64").ravel().tolist(),
        "global_step": int(model.optimizer.iterations.numpy()),
        "pid": os.getpid(),
    }


def max_weight_difference(a: dict[str, Any], b: dict[str, Any]) -> float:
    return max(float(np.max(np.abs(np.subtract(x, y)))) for x, y in zip(a["weights"], b["weights"], strict=True))


# -- Keras's own fit arguments (`tfm.fit(epochs=..., steps_per_epoch=...)`, test_fit_keras_args.py) --

EPOCHS = 2
STEPS_PER_EPOCH = 5
VALIDATION_STEPS = 5
CLASS_WEIGHT = {0: 0.5, 1: 2.0}
LABELS = (Y > 0).astype("float32")  # Two classes, for `class_weight`.


def class_dataset(batch_size: int = GLOBAL_BATCH, repeat: bool = True) -> tf.data.Dataset:
    """Global batches of (X, LABELS), in order."""
    data = tf.data.Dataset.from_tensor_slices((X, LABELS))
    data = data.repeat() if repeat else data
    return data.batch(batch_size, drop_remainder=True)


def _history(history: Any) -> dict[str, Any]:
    return {
        "epoch": list(history.epoch),
        "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
    }


def keras_reference(steps_per_execution: int) -> dict[str, Any]:
    """Keras's own `model.fit` under the default strategy: what every `keras_args_run` must reach."""
    model = make_model(tf.distribute.get_strategy(), steps_per_execution)
    history = model.fit(
        class_dataset(),
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        validation_data=class_dataset(repeat=False),
        validation_steps=VALIDATION_STEPS,
        class_weight=CLASS_WEIGHT,
        shuffle=False,
        verbose=0,
    )
    return {"weights": weights(model), "global_step": int(model.optimizer.iterations.numpy()), **_history(history)}


def keras_args_run(strategy: tf.distribute.Strategy, steps_per_execution: int) -> dict[str, Any]:
    """`tfm.fit` in both styles, from the same initial weights, with Keras's `class_weight`.

    "keras": `epochs x steps_per_epoch` with validation; "estimator": `steps=EPOCHS * STEPS_PER_EPOCH`.
    """
    out: dict[str, Any] = {}
    model = make_model(strategy, steps_per_execution)
    history = tfm.fit(
        model,
        class_dataset(),
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        validation_data=class_dataset(repeat=False),
        validation_steps=VALIDATION_STEPS,
        class_weight=CLASS_WEIGHT,
        verbose=0,
    )
    out["keras"] = {"weights": weights(model), "global_step": int(model.optimizer.iterations.numpy()), **_history(history)}
    model = make_model(strategy, steps_per_execution)
    history = tfm.fit(model, class_dataset(), steps=EPOCHS * STEPS_PER_EPOCH, class_weight=CLASS_WEIGHT)
    out["estimator"] = {
        "weights": weights(model),
        "global_step": int(model.optimizer.iterations.numpy()),
        **_history(history),
    }
    return out
