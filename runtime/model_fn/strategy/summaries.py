"""The events Estimator's `SummarySaverHook` wrote during training (the model_fn's summaries and
Estimator's `loss`), for the strategy tier."""

from __future__ import annotations

import time

__all__ = ["LossSummaries"]

# One event file per model_dir for the process, as TF1's `FileWriterCache` kept one: an event file is
# named by the second it was opened in, and a second writer opened in the same second replaced it.
_WRITERS: dict = {}


def _writer(model_dir: str):
    from tensorflow.python.summary.writer import event_file_writer

    writer = _WRITERS.get(model_dir)
    if writer is None:
        writer = _WRITERS[model_dir] = event_file_writer.EventFileWriter(model_dir)
    writer.reopen()  # (a no-op unless closed)
    return writer


class LossSummaries:
    """The `loss` scalar Estimator's `SummarySaverHook` wrote to `model_dir`: after the first step
    of a `train` call, then at the first step `save_summary_steps` or more after the last one,
    each with the loss of the step that brought the global step there. With `write` False (a
    worker other than the chief) they fall due at the same steps, but nothing is written."""

    def __init__(self, model_dir: str, every: int | None, tag: str = "loss", *, write: bool = True) -> None:
        self._every = every or 0
        self._tag = tag  # `loss`, or TF 1.x's unique name for it where the graph had an op named so
        self._last: int | None = None
        self._writer = None
        self._model_dir = model_dir
        self._write = write

    def steps_until_due(self, step: int) -> int:
        if not self._every:
            return 1 << 30
        if self._last is None:
            return 1
        return max(1, self._last + self._every - step)

    def due_after(self, step: int, count: int) -> bool:
        """Whether `count` steps from `step` end on a step whose summaries are written."""
        return bool(self._every) and count == self.steps_until_due(step)

    def after_steps(self, step: int, loss: float, merged: bytes | None = None) -> None:
        """Writes the event of `step` when it is due: the model_fn's summaries (`merged`, a
        serialized `Summary` from `merge_all`), then Estimator's `loss`, as one event."""
        if not self._every or (self._last is not None and step < self._last + self._every):
            return
        self._last = step
        if not self._write:
            return
        from tensorflow.core.framework import summary_pb2
        from tensorflow.core.util import event_pb2
        if self._writer is None:
            self._writer = _writer(self._model_dir)
        summary = summary_pb2.Summary.FromString(merged) if merged else summary_pb2.Summary()
        if not any(value.tag == "loss" for value in summary.value):  # Estimator added none over the model's own
            summary.value.append(summary_pb2.Summary.Value(tag=self._tag, simple_value=loss))
        self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.flush()
