"""Converts a TF1 (Estimator) checkpoint into the TF2 checkpoint the runtime writes and restores.

`tfm.fit` restores a TF1 `model.ckpt-N` in `model_dir` by itself (through `tf1_checkpoint`), so
conversion is optional: it is for teams that want their model_dirs to hold TF2 checkpoints only,
or to hand a checkpoint to TF2 tooling. The output is `<output_dir>/ckpt-<global_step>` plus a
`checkpoint` file, the layout `tfm.fit`/`tfm.evaluate` restore from.

Command line (the program is a migrated file; its module-level code must sit under
`if __name__ == '__main__':`, because it is imported)::

    tfmigrate-checkpoint MODEL_DIR_OR_CKPT OUTPUT_DIR --program trainer.py --builder model_fn \\
        --input-fn train_input_fn --batch-size 32 [--params '{"hidden": 10}'] [--assignment-map '{...}']
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from typing import Any

import keras

from . import checkpoints
from .inputs import input_fn_data
from .data_source import DataSource, ensure_built
from .tf1_checkpoint import LoadReport, load_tf1_checkpoint

__all__ = ["convert_tf1_checkpoint", "main"]


def convert_tf1_checkpoint(
    model: keras.Model,
    tf1_checkpoint: str | os.PathLike,
    output_dir: str | os.PathLike,
    *,
    data: Any,
    assignment_map: dict[str, str] | None = None,
) -> tuple[str, LoadReport]:
    """Loads `tf1_checkpoint` into the compiled migrated `model` and saves it as a TF2 checkpoint.

    Args:
      model: the migrated Keras model, compiled (its optimizer's slots are converted too).
      tf1_checkpoint: a TF1 checkpoint prefix, or a directory holding TF1 checkpoints.
      output_dir: where to write `ckpt-<global_step>`; must not hold checkpoints already.
      data: input the model can be built from (a `tf.data.Dataset` or `tfm.input_fn_data(...)`).
      assignment_map: `init_from_checkpoint`-style renames, checkpoint scope -> model scope.

    Returns:
      (the TF2 checkpoint path written, the loader's report of what was mapped).
    """
    output_dir = os.fspath(output_dir)
    if checkpoints.latest_checkpoint(output_dir) is not None:
        raise ValueError(f"{output_dir!r} already holds a checkpoint; convert into an empty directory")
    ensure_built(model, DataSource(data, model.distribute_strategy))
    report = load_tf1_checkpoint(model, os.fspath(tf1_checkpoint), assignment_map=assignment_map)
    step = int(model.optimizer.iterations.numpy()) if getattr(model, "optimizer", None) is not None else 0
    path = checkpoints.checkpoint_manager(model, output_dir, None).save(checkpoint_number=step)
    return path, report


def _load_program(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("tfmigrate_converted_program", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"tfmigrate-checkpoint: cannot import {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tfmigrate-checkpoint",
        description="Write the TF2 checkpoint of a migrated model from its TF1 (Estimator) checkpoint.",
    )
    parser.add_argument("tf1_checkpoint", help="TF1 checkpoint prefix (model.ckpt-N) or a model_dir holding one")
    parser.add_argument("output_dir", help="empty directory for ckpt-<global_step>")
    parser.add_argument("--program", required=True, help="the migrated Python file")
    parser.add_argument("--builder", default="model_fn", help="its model builder (default: model_fn)")
    parser.add_argument("--input-fn", required=True, help="an input_fn of the program, to build the model with")
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--params", default="{}", help="the params dict, as JSON")
    parser.add_argument("--assignment-map", default=None, help="checkpoint scope -> model scope, as JSON")
    args = parser.parse_args(argv)
    program = _load_program(args.program)
    params = json.loads(args.params)
    try:
        builder = getattr(program, args.builder)
        input_fn = getattr(program, args.input_fn)
    except AttributeError as error:
        raise SystemExit(f"tfmigrate-checkpoint: {error}") from error
    model = builder(params)
    data = input_fn_data(input_fn, batch_size=args.batch_size, params=params)
    amap = json.loads(args.assignment_map) if args.assignment_map else None
    path, report = convert_tf1_checkpoint(model, args.tf1_checkpoint, args.output_dir, data=data, assignment_map=amap)
    print(f"tfmigrate-checkpoint: {report.path} -> {path} ({len(report.assigned)} variables, global step {report.global_step})")
    if report.unused:
        print(f"tfmigrate-checkpoint: not in the model: {', '.join(report.unused)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
