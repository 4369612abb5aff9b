"""`tfm.estimator.inputs.numpy_input_fn`: TF1's numpy input function, read through `tf.data`.

TF1 fed numpy arrays through queue runners. Here the same batches come from a Dataset: `num_epochs`
passes over `x` (None: forever, every batch of `batch_size` rows, as TF1's `dequeue_many` gave), batches of
`batch_size` that run on across epochs with a smaller last one, and the `(features, target)` structure
TF1 returned (a dict of arrays gives a dict of tensors, a single array the features tensor itself).
With `shuffle=False` the order is TF1's; with `shuffle=True` the order is a `tf.data` shuffle over
each epoch (TF1's queue order differs).

Called, the input_fn returns tensors, as TF1's did: the next batch of a one-shot iterator over that
Dataset, so a program's own input_fn can unpack, index and transform what it returns. The runtime's
Estimator tiers and `fit` read the Dataset itself, which the input_fn gives as `dataset_fn`
(`tfm.inputs.dataset_form`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

__all__ = ["numpy_input_fn"]


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is recommended to set it as True for training); got {shuffle}")
    if not isinstance(x, dict) and not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
    if isinstance(x, dict) and isinstance(y, dict) and set(x) & set(y):
        raise ValueError(f"{sorted(set(x) & set(y))} duplicate keys are found in both x and y")

    def dataset_fn() -> tf.data.Dataset:
        data: Any = dict(x) if isinstance(x, dict) else x
        dataset = tf.data.Dataset.from_tensor_slices(data if y is None else (data, y))
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        return dataset.repeat(num_epochs).batch(batch_size, drop_remainder=num_epochs is None)

    def input_fn() -> Any:
        return tf.compat.v1.data.make_one_shot_iterator(dataset_fn()).get_next()

    input_fn.dataset_fn = dataset_fn  # type: ignore[attr-defined]
    return input_fn
