"""Training speed of Keras `fit`, `tfmigrate.runtime.fit`, with and without multi-step loops.

Not a test: a script printing a table. A small MLP (32 -> 64 -> 64 -> 10, batch 64, synthetic data)
is trained for a fixed number of steps under

  (a) plain Keras `model.fit`, `steps_per_execution=1`;
  (b) plain Keras `model.fit`, `steps_per_execution=N`;
  (c) `tfmigrate.runtime.fit`, the same model compiled the same way as (b).

Each variant is warmed up (traced) first; then the variants run interleaved (the order rotated
every round), `--repeats` times, and the median steps/s of each is reported with the ratios (c)/(b)
(the runtime must stay within 10% of Keras), (b)/(a) (the multi-step speed-up). The
ratios of the best runs are printed too: on a machine whose CPU is throttled now and then (as the
2-vCPU machine in benchmarks/README.md is: runs drop to a fixed, halved rate for seconds at a time)
a median of 3 can land on a throttled run for one variant and not another, while throttling never
makes a run faster. The script exits with status 1 when (c)/(b) < 0.9 by both measures.

    python benchmarks/bench_steps_per_execution.py [--steps-per-execution 50] [--steps 3000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tfmigrate.runtime as tfm  # noqa: E402

BATCH_SIZE = 64
FEATURES = 32
CLASSES = 10
MIN_RUNTIME_VS_KERAS = 0.9


def make_dataset(seed: int = 0) -> tf.data.Dataset:
    """Synthetic classification data: 100 distinct batches, repeated forever."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((100 * BATCH_SIZE, FEATURES)).astype("float32")
    y = rng.randint(0, CLASSES, size=(100 * BATCH_SIZE,)).astype("int32")
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(BATCH_SIZE, drop_remainder=True)


def make_model(steps_per_execution: int) -> keras.Model:
    """The MLP, compiled as every variant uses it (only `steps_per_execution` differs)."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((FEATURES,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(CLASSES),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        steps_per_execution=steps_per_execution,
        jit_compile=False,
    )
    return model


class Variant:
    """One way of training: `run(steps)` trains `steps` more steps and returns the seconds it took."""

    def __init__(self, label: str, train: Callable[[int], None], model: keras.Model) -> None:
        self.label = label
        self._train = train
        self.model = model
        self.steps_per_second: list[float] = []

    def run(self, steps: int) -> None:
        before = int(self.model.optimizer.iterations.numpy())
        start = time.perf_counter()
        self._train(steps)
        elapsed = time.perf_counter() - start
        ran = int(self.model.optimizer.iterations.numpy()) - before
        if ran != steps:
            raise RuntimeError(f"{self.label}: ran {ran} steps instead of {steps}")
        self.steps_per_second.append(steps / elapsed)

    @property
    def median(self) -> float:
        return statistics.median(self.steps_per_second)

    @property
    def best(self) -> float:
        return max(self.steps_per_second)


def keras_fit_variant(label: str, steps_per_execution: int) -> Variant:
    model = make_model(steps_per_execution)
    dataset = make_dataset()

    def train(steps: int) -> None:
        model.fit(dataset, epochs=1, steps_per_epoch=steps, verbose=0, shuffle=False)

    return Variant(label, train, model)


def runtime_fit_variant(label: str, steps_per_execution: int) -> Variant:
    model = make_model(steps_per_execution)
    dataset = make_dataset()

    def train(steps: int) -> None:
        tfm.fit(model, dataset, steps=steps)

    return Variant(label, train, model)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps-per-execution", "-n", type=int, default=50, help="N (default 50)")
    parser.add_argument("--steps", type=int, default=3000, help="steps per timed run (a multiple of N)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved timed runs per variant")
    args = parser.parse_args(argv)
    n, steps = args.steps_per_execution, args.steps
    if steps % n:
        parser.error(f"--steps ({steps}) must be a multiple of --steps-per-execution ({n}): Keras runs whole loops")

    started = time.perf_counter()
    variants = [
        keras_fit_variant("(a) keras fit, steps_per_execution=1", 1),
        keras_fit_variant(f"(b) keras fit, steps_per_execution={n}", n),
        runtime_fit_variant(f"(c) tfmigrate.runtime.fit, steps_per_execution={n}", n),
    ]
    for variant in variants:  # Warm-up: trace the functions and fill the input pipelines.
        variant.run(2 * n)
        variant.steps_per_second.clear()
    for round_index in range(args.repeats):
        shift = round_index % len(variants)  # Rotate the order, so no variant always follows the same one.
        for variant in variants[shift:] + variants[:shift]:
            variant.run(steps)

    print(
        f"TF {tf.__version__}, Keras {keras.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}); MLP {FEATURES}-64-64-{CLASSES}, "
        f"batch {BATCH_SIZE}, {steps} steps per run, median of {args.repeats} interleaved runs"
    )
    width = max(len(v.label) for v in variants)
    print(f"\n{'variant':<{width}}  {'median':>7}  {'best':>7}  steps/s of each run")
    for variant in variants:
        runs = ", ".join(f"{value:.0f}" for value in variant.steps_per_second)
        print(f"{variant.label:<{width}}  {variant.median:>7.0f}  {variant.best:>7.0f}  {runs}")
    a, b, c = variants
    median_ratio, best_ratio = c.median / b.median, c.best / b.best
    ok = median_ratio >= MIN_RUNTIME_VS_KERAS or best_ratio >= MIN_RUNTIME_VS_KERAS
    print(f"\n{'ratio':<48}  {'medians':>7}  {'best':>7}")
    print(f"{'(c)/(b) tfmigrate.runtime.fit vs Keras':<48}  {median_ratio:>7.2f}  {best_ratio:>7.2f}")
    print(f"{f'(b)/(a) steps_per_execution={n} speed-up':<48}  {b.median / a.median:>7.2f}  {b.best / a.best:>7.2f}")
    print(
        f"\n(c)/(b) must be >= {MIN_RUNTIME_VS_KERAS} (within 10% of Keras): "
        + ("ok" if ok else "FAILED")
        + ("" if median_ratio >= MIN_RUNTIME_VS_KERAS else " (the medians' ratio is below: a noisy machine? see the runs)")
    )
    print(f"{time.perf_counter() - started:.0f} s in all")
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
