"""`tfm.estimator.inputs.numpy_input_fn` and `pandas_input_fn`: TF1's input functions over numpy
arrays and pandas DataFrames, read through `tf.data`.

TF1 fed the arrays (a DataFrame's columns) through queue runners. Here the same batches come from a
Dataset: `num_epochs` passes over the rows (None: forever, every batch of `batch_size` rows, as TF1's
`dequeue_many` gave), batches of `batch_size` that run on across epochs with a smaller last one, and
the `(features, target)` structure TF1 returned (numpy: a dict of arrays gives a dict of tensors, a
single array the features tensor itself; pandas: a dict of the DataFrame's columns, and `y` a Series
gives the target tensor, a DataFrame a dict of its columns). With `shuffle=False` the order is TF1's;
with `shuffle=True` the order is a `tf.data` shuffle over each epoch (TF1's queue order differs).

Called, an input_fn returns tensors, as TF1's did: the next batch of a one-shot iterator over that
Dataset, so a program's own input_fn can unpack, index and transform what it returns. The runtime's
Estimator tiers and `fit` read the Dataset itself, which the input_fn gives as `dataset_fn`
(`tfm.inputs.dataset_form`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

__all__ = ["numpy_input_fn", "pandas_input_fn"]


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is recommended to set it as True for training); got {shuffle}")
    if not isinstance(x, dict) and not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
    if isinstance(x, dict) and isinstance(y, dict) and set(x) & set(y):
        raise ValueError(f"{sorted(set(x) & set(y))} duplicate keys are found in both x and y")

    data: Any = dict(x) if isinstance(x, dict) else x
    return _batches_input_fn(data if y is None else (data, y), batch_size, num_epochs, shuffle, queue_capacity)


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1,
                    target_column="target"):
    import pandas as pd  # (the program's own import: it made the DataFrame)

    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is recommended to set it as True for training); got {shuffle}")
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    if y is not None:
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame already has a column with that name: {x.columns}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
    # The columns as they are now (TF1 copied the DataFrame when the input_fn was made).
    features = {str(column): _column(x[column]) for column in x.columns}
    if y is None:
        data: Any = features
    elif isinstance(y, pd.DataFrame):
        data = (features, {str(column): _column(y[column]) for column in y.columns})
    else:
        data = (features, _column(y))
    if queue_capacity is None:
        queue_capacity = 4 * len(x) if shuffle else len(x)
    return _batches_input_fn(data, batch_size, num_epochs, shuffle, max(int(queue_capacity), 1))


def _column(series: Any) -> np.ndarray:
    """A column's values, copied (an object column of strings becomes `tf.string`, as in TF1's queue)."""
    return np.array(series.values, copy=True)


def _batches_input_fn(data: Any, batch_size: int, num_epochs: int | None, shuffle: bool, buffer: int) -> Any:
    def dataset_fn() -> tf.data.Dataset:
        dataset = tf.data.Dataset.from_tensor_slices(data)
        if shuffle:
            dataset = dataset.shuffle(buffer)
        return dataset.repeat(num_epochs).batch(batch_size, drop_remainder=num_epochs is None)

    def input_fn() -> Any:
        return tf.compat.v1.data.make_one_shot_iterator(dataset_fn()).get_next()

    input_fn.dataset_fn = dataset_fn  # type: ignore[attr-defined]
    return input_fn
