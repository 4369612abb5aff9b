"""`RunConfig(train_distribute=...)` / `eval_distribute=...` on the hosted Estimator.

TF 2.15's Estimator built its replicas with the TF1 graph-mode distribution API
(`strategy.extended.call_for_each_replica` inside a `tf.Graph`, `make_input_fn_iterator`,
per-replica `Scaffold`s merged). On TF 2.21 the strategies' graph-mode (V1) code paths that
Estimator relied on are not there in a usable form, so a strategy is refused with an error that
says so, rather than silently ignored.
"""

from __future__ import annotations

from typing import Any


def check_strategy(strategy: Any) -> None:
    raise NotImplementedError(
        f"tfm.estimator.Estimator: RunConfig(train_distribute/eval_distribute={type(strategy).__name__}) is not "
        "supported. The hosted tier runs the TF1 model_fn in graph mode on one device; TF 2.21's "
        "tf.distribute strategies no longer build Estimator's graph-mode replicas "
        "(extended.call_for_each_replica in a tf.Graph with make_input_fn_iterator). Remove the strategy to "
        "run on one device, or migrate the program with `tfmigrate --target keras` for distributed training."
    )
