"""Evaluation results on disk (`model_dir/eval[_name]`) and the early-stopping rules that read them.

The one implementation of `tf.estimator.experimental`'s early-stopping conditions: both the
Keras-side hooks (`hooks.stop_if_*_hook`, for `tfm.fit(hooks=...)`) and the hosted Estimator's
(`estimator.hooks.stop_if_*_hook`, graph-mode `SessionRunHook`s) ask `threshold_crossed` /
`no_improvement` whether to stop; they differ only in how a stop is requested.
"""

from __future__ import annotations

import collections
import operator
import os
from typing import Any, Callable, Mapping

import numpy as np
import tensorflow as tf

from . import summary
from ._logging import logger

__all__ = ["eval_dir", "no_improvement", "read_eval_metrics", "threshold_crossed", "write_eval_results"]


def eval_dir(model_dir: str | os.PathLike, name: str | None = None) -> str:
    """Where TF1 `Estimator.evaluate(name=...)` wrote its results: `model_dir/eval[_name]`."""
    return os.path.join(os.fspath(model_dir), "eval" if not name else "eval_" + name)


def write_eval_results(directory: str, results: Mapping[str, Any], step: int) -> None:
    """Writes evaluation results as TF1 did: one scalar summary per metric at `step` (simple values)."""
    os.makedirs(directory, exist_ok=True)
    writer = tf.summary.create_file_writer(directory)
    with writer.as_default(step=step):
        for key, value in sorted(results.items()):
            array = np.asarray(value)
            if key == "global_step" or array.size != 1 or not np.issubdtype(array.dtype, np.number):
                continue
            summary.scalar(key, float(array), step)
    writer.flush()
    writer.close()


def read_eval_metrics(directory: str) -> "collections.OrderedDict[int, dict[str, float]]":
    """`{global_step: {metric: value}}` from the event files in `directory`, sorted by step.

    Reads TF1's `simple_value` summaries and TF2's scalar tensors alike, so a model directory
    evaluated by the original program counts too.
    """
    metrics: dict[int, dict[str, float]] = collections.defaultdict(dict)
    if tf.io.gfile.exists(directory):
        for path in sorted(tf.io.gfile.glob(os.path.join(directory, "*.tfevents.*"))):
            try:
                # A Python reader, no ops: the hosted Estimator calls this inside its finalized graph.
                for event in tf.compat.v1.train.summary_iterator(path):
                    if not event.HasField("summary"):
                        continue
                    found = {}
                    for value in event.summary.value:
                        if value.HasField("simple_value"):
                            found[value.tag] = value.simple_value
                        elif value.HasField("tensor") and value.tensor.dtype == tf.float32.as_datatype_enum:
                            found[value.tag] = float(tf.make_ndarray(value.tensor))
                    if found:
                        metrics[event.step].update(found)
            except tf.errors.DataLossError:
                logger.warning("Skipping the rest of the corrupted event file %s.", path)
    return collections.OrderedDict(sorted(metrics.items()))


def threshold_crossed(directory: str, metric_name: str, threshold: Any, higher_is_better: bool, min_steps: int) -> Callable[[], bool]:
    """`stop_if_{higher,lower}_hook`'s condition: an evaluation at or after `min_steps` crossed `threshold`."""
    better = operator.gt if higher_is_better else operator.lt

    def should_stop() -> bool:
        for step, metrics in read_eval_metrics(directory).items():
            if step < min_steps:
                continue
            if better(metrics[metric_name], threshold):
                logger.info("At step %s, metric %r has value %s: early stopping.", step, metric_name, metrics[metric_name])
                return True
        return False

    return should_stop


def no_improvement(directory: str, metric_name: str, max_steps: int, higher_is_better: bool, min_steps: int) -> Callable[[], bool]:
    """`stop_if_no_{increase,decrease}_hook`'s condition: no better value for `max_steps` global steps."""
    better = operator.gt if higher_is_better else operator.lt

    def should_stop() -> bool:
        best = best_step = None
        for step, metrics in read_eval_metrics(directory).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if best is None or better(value, best):
                best, best_step = value, step
            if step - best_step >= max_steps:
                logger.info("No improvement in metric %r for %s steps: early stopping.", metric_name, step - best_step)
                return True
        return False

    return should_stop
