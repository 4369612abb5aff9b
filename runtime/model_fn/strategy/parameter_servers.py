"""A kept model_fn trained under ParameterServerStrategy, as TF 1.x's parameter-server cluster
trained it: the variables on the parameter servers, the workers each running training steps on
their own input pipeline and updating the variables without waiting for each other, the global
step counting every worker's steps, the chief saving the checkpoints.

The process running the program is the cluster's coordinator (TF2's `ClusterCoordinator`; the
workers and parameter servers run `tf.distribute.Server`s). A call's steps are scheduled as
closures of up to `iterations_per_loop` steps each, as many at once as there are workers (each
runs on the next free worker, asynchronously), up to the next checkpoint or the end; then the
coordinator waits for them, so checkpoints hold exactly the steps TF 1.x's `CheckpointSaverHook`
would have. Each worker calls the input_fn once, as each TF 1.x worker did (shard the data by
`input_context` in the input_fn, as there). Evaluation and prediction run on the coordinator on one
device, as TF 1.x's chief or evaluator ran them, from the checkpoint.

Per-step hooks, a `host_call` and the model_fn's own summaries need every step's values on the
coordinator; a call with them raises `Unsupported` (it then runs in graph mode, on one machine).
"""

from __future__ import annotations

from typing import Any, Callable

import tensorflow as tf

from .checks import Unsupported

__all__ = ["ScheduledSteps", "check_schedulable"]


def check_schedulable(*, step_hooks: bool, host_call: bool, model_summaries: bool) -> None:
    """Raises `Unsupported` for what a parameter-server call cannot return from its workers' steps."""
    for present, what in ((step_hooks, "per-step hooks"), (host_call, "a host_call"),
                          (model_summaries, "the model_fn's summaries")):
        if present:
            raise Unsupported(f"{what} under ParameterServerStrategy (each step runs on a worker, asynchronously)")


class ScheduledSteps:
    """Runs a train function (`function(iterator, count)` -> (loss, host values)) on the workers."""

    def __init__(self, strategy: tf.distribute.Strategy, coordinator: Any) -> None:
        self._coordinator = coordinator
        self.workers = max(1, int(getattr(strategy.extended, "_num_workers", 1) or 1))

    def per_worker_iterator(self, dataset_fn: Callable[[], tf.data.Dataset]) -> Any:
        """Each worker's iterator over the dataset `dataset_fn` makes there."""
        return iter(self._coordinator.create_per_worker_dataset(dataset_fn))

    def run(self, function: Any, iterator: Any, count: int, budget: int) -> tuple[Any, int]:
        """Schedules closures of `count` steps, as many as there are workers and `budget` steps
        allow, and waits for them; returns (the last closure's loss, the steps scheduled)."""
        closures = max(1, min(self.workers, budget // count))
        results = [self._coordinator.schedule(function, args=(iterator, tf.constant(count)))
                   for _ in range(closures)]
        self._coordinator.join()
        loss, _ = results[-1].fetch()
        return loss, closures * count
