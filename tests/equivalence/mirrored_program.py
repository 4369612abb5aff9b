"""Runs a migrated program under MirroredStrategy on two logical CPUs: `python mirrored_program.py PROGRAM`.

The program's own strategy request (`tfm.make_strategy("auto", ...)` finds no GPU on this machine and
would give the default strategy; `tfm.strategy_from_config(config)` the RunConfig's) is answered
with a MirroredStrategy over the two logical CPUs the CPU is split into before TensorFlow starts.
"""

from __future__ import annotations

import os
import runpy
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import tfmigrate.runtime as tfm  # noqa: E402

_make_strategy = tfm.make_strategy


def _mirrored(*args, **kwargs):
    strategy = _make_strategy("mirrored", devices=["/cpu:0", "/cpu:1"])
    assert strategy.num_replicas_in_sync == 2
    return strategy


tfm.make_strategy = _mirrored
tfm.strategy_from_config = _mirrored

if __name__ == "__main__":
    program = sys.argv[1]
    sys.argv = [program]
    print("strategy", type(_mirrored()).__name__, flush=True)
    runpy.run_path(program, run_name="__main__")
