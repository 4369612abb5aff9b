"""`Estimator.predict` semantics on top of `tfmigrate.runtime.predict`: one dict per example.

TF1 `Estimator.predict(input_fn, predict_keys=None, yield_single_examples=True)` was a generator:
per example (or per batch) it yielded the `predictions` dict of the PREDICT-mode spec, keyed as
the model_fn keyed it. Migrated models return that dict from `predict_step`; this generator
splits Keras's concatenated arrays back into Estimator's shape.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np
from . import engine
from .estimator_calls import EstimatorCallsModel, estimator_call, one_step_per_run, predict


def predict_examples(
    model,
    data: Any,
    *,
    predict_keys: str | Sequence[str] | None = None,
    yield_single_examples: bool = True,
    **predict_kwargs: Any,
) -> Iterator[Any]:
    """Yields predictions as TF1 `Estimator.predict` did.

    Args:
      model: the migrated Keras model (its `predict_step` returns the TF1 `predictions`).
      data: as for `tfmigrate.runtime.predict` (an `input_fn_data(..., mode="infer")`, a dataset).
      predict_keys: only these keys of a dict of predictions (TF1's `predict_keys`).
      yield_single_examples: one item per example (True) or per batch (False): the batches the
        input made, as Estimator yielded them (the runtime runs one batch per step to see them).
      **predict_kwargs: passed to `tfmigrate.runtime.predict` (`steps`, `config`, `model_dir`,
        `checkpoint_path`).

    Yields:
      A dict per example (or batch) when the model predicts a dict, else an array.

    Raises:
      ValueError: a `predict_keys` entry the predictions do not have.
    """
    if isinstance(model, EstimatorCallsModel):  # Estimator's own predict, on a kept model_fn
        yield from estimator_call(model, "predict_examples", data, dict(
            predict_keys=predict_keys, yield_single_examples=yield_single_examples, **predict_kwargs))
        return
    sizes: list[int] = []
    if not yield_single_examples and not engine.uses_engine(model):
        # Estimator yielded the batches as the input_fn made them: record each batch's size.
        import keras
        import tensorflow as tf

        class BatchSizes(keras.callbacks.Callback):
            def on_predict_batch_end(self, batch, logs=None):
                # Keras flattens a dict of outputs into the logs (else they are `outputs`).
                leaves = [v for v in tf.nest.flatten(dict(logs or {})) if np.ndim(v) >= 1]
                if leaves:
                    sizes.append(int(np.shape(leaves[0])[0]))

        predict_kwargs = dict(predict_kwargs)
        predict_kwargs["callbacks"] = list(predict_kwargs.get("callbacks") or []) + [BatchSizes()]
        with one_step_per_run(model):
            outputs = predict(model, data, **predict_kwargs)
    else:
        outputs = predict(model, data, **predict_kwargs)
    if isinstance(predict_keys, str):
        predict_keys = [predict_keys]
    if isinstance(outputs, dict):
        if predict_keys is not None:
            missing = [key for key in predict_keys if key not in outputs]
            if missing:
                raise ValueError(f"`predict_keys` {missing} are not among the predictions {sorted(outputs)}")
            outputs = {key: outputs[key] for key in predict_keys}
        total = len(next(iter(outputs.values())))
    else:
        total = len(outputs)
    if yield_single_examples:
        bounds = [(start, start + 1) for start in range(total)]
    else:
        if sum(sizes) != total:  # the runtime's engine ran it: batches of the data's batch size
            step = getattr(data, "batch_size", None) or total
            sizes = [min(step, total - start) for start in range(0, total, step)]
        starts = np.cumsum([0] + sizes[:-1]).tolist()
        bounds = [(start, start + size) for start, size in zip(starts, sizes)]
    for start, end in bounds:
        if isinstance(outputs, dict):
            item = {key: np.asarray(value[start:end]) for key, value in outputs.items()}
            yield {key: value[0] for key, value in item.items()} if yield_single_examples else item
        else:
            chunk = np.asarray(outputs[start:end])
            yield chunk[0] if yield_single_examples else chunk
