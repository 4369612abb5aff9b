"""`tf.summary.scalar`/`histogram`/`image`/`text` that work without TensorBoard installed.

TF2's `tf.summary.scalar` and friends live in the TensorBoard package (`TBNotInstalledError`
otherwise), and tensorflow-cpu does not depend on it; TF1's `tf.summary.*` worked with TF alone.
A migrated model_fn's summaries call these instead: they write with core `tf.summary.write` and
the plugin metadata TensorBoard reads (histograms in TensorBoard's 30-bucket format, images as
PNG), at the default writer's step (`optimizer.iterations` under `tfm.fit`).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

__all__ = ["histogram", "image", "scalar", "text"]


def _metadata(plugin: str, data_class: int = summary_pb2.DATA_CLASS_TENSOR) -> summary_pb2.SummaryMetadata:
    return summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin), data_class=data_class
    )


_SCALAR = _metadata("scalars", summary_pb2.DATA_CLASS_SCALAR)
_HISTOGRAM = _metadata("histograms")
_IMAGE = _metadata("images", summary_pb2.DATA_CLASS_BLOB_SEQUENCE)
_TEXT = _metadata("text")


def scalar(name: str, data: Any, step: Any = None) -> Any:
    """A scalar summary (`tf.summary.scalar`)."""
    return tf.summary.write(name, tf.cast(tf.reshape(data, []), tf.float32), step=step, metadata=_SCALAR)


def _buckets(data: Any, bucket_count: int = 30) -> tf.Tensor:
    """TensorBoard's histogram tensor: `[bucket_count, 3]` rows of (left edge, right edge, count)."""
    data = tf.reshape(tf.cast(data, tf.float64), [-1])
    size = tf.size(data)

    def empty() -> tf.Tensor:
        return tf.zeros([0, 3], tf.float64)

    def filled() -> tf.Tensor:
        low, high = tf.reduce_min(data), tf.reduce_max(data)
        width = (high - low) / bucket_count

        def equal() -> tf.Tensor:  # every value the same: one bucket around it
            edges = tf.stack([low - 0.5, low + 0.5])
            return tf.reshape(tf.concat([edges, [tf.cast(size, tf.float64)]], 0), [1, 3])

        def spread() -> tf.Tensor:
            index = tf.minimum(tf.cast(tf.floor((data - low) / width), tf.int32), bucket_count - 1)
            counts = tf.reduce_sum(tf.one_hot(index, bucket_count, dtype=tf.float64), axis=0)
            edges = tf.linspace(low, high, bucket_count + 1)
            return tf.stack([edges[:-1], edges[1:], counts], axis=1)

        return tf.cond(tf.equal(width, 0.0), equal, spread)

    return tf.cond(tf.equal(size, 0), empty, filled)


def histogram(name: str, data: Any, step: Any = None, buckets: int | None = None) -> Any:
    """A histogram summary (`tf.summary.histogram`; TF1's `values`)."""
    return tf.summary.write(name, _buckets(data, buckets or 30), step=step, metadata=_HISTOGRAM)


def image(name: str, data: Any, step: Any = None, max_outputs: int = 3) -> Any:
    """An image summary of a `[k, h, w, c]` batch (`tf.summary.image`; TF1's `tensor`)."""
    images = tf.image.convert_image_dtype(data, tf.uint8, saturate=True)[:max_outputs]
    encoded = tf.map_fn(tf.image.encode_png, images, fn_output_signature=tf.string)
    shape = tf.shape(images)
    dims = tf.stack([tf.strings.as_string(shape[2]), tf.strings.as_string(shape[1])])
    return tf.summary.write(name, tf.concat([dims, encoded], 0), step=step, metadata=_IMAGE)


def text(name: str, data: Any, step: Any = None) -> Any:
    """A text summary (`tf.summary.text`)."""
    return tf.summary.write(name, tf.convert_to_tensor(data, tf.string), step=step, metadata=_TEXT)
