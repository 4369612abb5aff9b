"""Runs a TensorFlow 1.x program on the oracle (TF 2.15) as TF 1.x would have run it.

    python tf1_launcher.py PROGRAM.py [ARGS...]

The published BERT/ALBERT programs were written for TF 1.x: `import tensorflow as tf` and then
`tf.flags`, `tf.gfile`, `tf.logging`, graph mode, and `from tensorflow.contrib import tpu`. This
launcher makes `import tensorflow` give `tensorflow.compat.v1` with v2 behaviour disabled, puts a
stand-in `tensorflow.contrib` in place that exposes only the contrib pieces these programs import
(each mapped to where TF 1.15 had moved it), and then runs PROGRAM as `__main__` with ARGS as its
argv. It changes nothing in the program; it is only ever run on the oracle interpreter.

With `TF1_LAUNCHER_SEED=N` in the environment, every graph whose program set no graph-level seed
reads as seeded with N (what `tf.set_random_seed(N)` in each graph would do), so the unseeded
initializers of a fresh model draw the same values in every run.

With `TF1_LAUNCHER_TPU_SHARDS=N`, a `TPUEstimator(use_tpu=True)` program runs its TPU code path
as a TPU of N cores that are all fed the same batch would: the oracle has no TPU, so the estimator
itself runs on the CPU (its `params['use_tpu']` is False), the model_fn's own `use_tpu` (BERT's
and ALBERT's, from their flag, in a closure) stays as the program set it, and
`CrossShardOptimizer`'s cross-shard sum is N times each gradient (N identical shards), its loss
divided by N. That is exactly a 2-shard TPU run where each shard's examples are the same, as in the
real-program lane (one training example, repeated): the reference for the TPU code path replicated.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys
from pathlib import Path


def _proof():
    """`runtime/proof.py`, loaded from its file: the oracle has no tfmigrate installed."""
    path = Path(__file__).resolve().parents[2] / "runtime" / "proof.py"
    spec = importlib.util.spec_from_file_location("tfmigrate_proof", path)
    proof = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(proof)  # type: ignore[union-attr]
    return proof


def simulate_tpu_shards(shards: int) -> None:
    """`TF1_LAUNCHER_TPU_SHARDS` (see the module doc): N TPU cores fed the same batch, on a CPU."""
    from tensorflow.python.tpu import tpu_function
    from tensorflow.python.tpu.ops import tpu_ops
    from tensorflow_estimator.python.estimator.tpu import tpu_estimator

    def cross_replica_sum(x, group_assignment=None, name=None):
        assert group_assignment is None, "group_assignment: not a sum over every shard"
        return x * shards

    tpu_ops.cross_replica_sum = cross_replica_sum
    tpu_function.get_tpu_context().set_number_of_shards(shards)
    init = tpu_estimator.TPUEstimator.__init__

    def on_the_cpu(self, *args, **kwargs):
        kwargs["use_tpu"] = False
        init(self, *args, **kwargs)

    tpu_estimator.TPUEstimator.__init__ = on_the_cpu


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    program = sys.argv[1]
    proof = _proof()
    proof.as_tf1()  # the probe's TF 1.x set-up: compat.v1 as `tensorflow`, the `tensorflow.contrib` stand-in
    if os.environ.get("TF1_LAUNCHER_SEED"):
        proof.seed_unseeded_graphs(int(os.environ["TF1_LAUNCHER_SEED"]))
    if os.environ.get("TF1_LAUNCHER_TPU_SHARDS"):
        simulate_tpu_shards(int(os.environ["TF1_LAUNCHER_TPU_SHARDS"]))
    sys.argv = sys.argv[1:]
    sys.path[0] = str(Path(program).resolve().parent)  # as `python PROGRAM` would have it
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
