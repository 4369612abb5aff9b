"""What an input_fn returned, read as Estimator read it (both tiers of a model_fn)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

__all__ = ["DatasetInitializerHook", "parse_input_fn_result", "receiver_features", "split_features_labels"]


class DatasetInitializerHook(tf.compat.v1.train.SessionRunHook):
    """Initializes the input_fn's Dataset iterator when the session is created."""

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def begin(self) -> None:
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord) -> None:
        session.run(self._initializer)


def parse_input_fn_result(result: Any) -> tuple[Any, Any, list]:
    """(features, labels, input hooks) from what an input_fn returned, as Estimator read it."""
    hooks = []
    if isinstance(result, tf.data.Dataset):
        iterator = tf.compat.v1.data.make_initializable_iterator(result)
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    return (*split_features_labels(result), hooks)


def split_features_labels(result: Any) -> tuple[Any, Any]:
    """(features, labels) from one element an input_fn gives: a pair, or features alone."""
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1]
    return result, None


def receiver_features(receiver: Any) -> Any:
    """The features a serving receiver hands the model_fn (a `TensorServingInputReceiver`'s tensor
    itself), in an export on either tier."""
    if getattr(receiver, "single_feature", False):
        return receiver.features["feature"]
    return receiver.features
