"""Runs a TensorFlow 1.x program on the oracle (TF 2.15) as TF 1.x would have run it.

    python tf1_launcher.py PROGRAM.py [ARGS...]

The published BERT/ALBERT programs were written for TF 1.x: `import tensorflow as tf` and then
`tf.flags`, `tf.gfile`, `tf.logging`, graph mode, and `from tensorflow.contrib import tpu`. This
launcher makes `import tensorflow` give `tensorflow.compat.v1` with v2 behaviour disabled, puts a
stand-in `tensorflow.contrib` in place that exposes only the contrib pieces these programs import
(each mapped to where TF 1.15 had moved it), and then runs PROGRAM as `__main__` with ARGS as its
argv. It changes nothing in the program; it is only ever run on the oracle interpreter.
"""

from __future__ import annotations

import runpy
import sys
import types
from pathlib import Path


def _module(name: str, **attributes: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


def install() -> None:
    import tensorflow.compat.v1 as tf
    import tf_slim

    tf.disable_v2_behavior()
    sys.modules["tensorflow"] = tf

    contrib = _module("tensorflow.contrib")
    contrib.__path__ = []  # a package: `import tensorflow.contrib.tpu` finds the submodules below
    submodules = {
        # tf.contrib.tpu: TPUEstimator and its specs/configs moved to tf.estimator.tpu (TF 1.15).
        "tpu": dict(
            TPUEstimator=tf.estimator.tpu.TPUEstimator,
            TPUEstimatorSpec=tf.estimator.tpu.TPUEstimatorSpec,
            RunConfig=tf.estimator.tpu.RunConfig,
            TPUConfig=tf.estimator.tpu.TPUConfig,
            InputPipelineConfig=tf.estimator.tpu.InputPipelineConfig,
            CrossShardOptimizer=tf.tpu.CrossShardOptimizer,
        ),
        "cluster_resolver": dict(
            TPUClusterResolver=tf.distribute.cluster_resolver.TPUClusterResolver,
        ),
        "data": dict(
            map_and_batch=tf.data.experimental.map_and_batch,
            parallel_interleave=tf.data.experimental.parallel_interleave,
        ),
        "layers": dict(layer_norm=tf_slim.layers.layer_norm),
        "metrics": dict(
            streaming_concat=tf_slim.metrics.streaming_concat,
            streaming_pearson_correlation=tf_slim.metrics.streaming_pearson_correlation,
        ),
    }
    for name, attributes in submodules.items():
        setattr(contrib, name, _module(f"tensorflow.contrib.{name}", **attributes))
    tf.contrib = contrib  # `tf.contrib.tpu...` as an attribute too


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    program = sys.argv[1]
    install()
    sys.argv = sys.argv[1:]
    sys.path[0] = str(Path(program).resolve().parent)  # as `python PROGRAM` would have it
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
