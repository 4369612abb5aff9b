"""Loads a TF1 name-based checkpoint (Estimator's `model.ckpt-N`) into a migrated Keras model.

`tf.train.Checkpoint(...).restore(tf1_checkpoint)` silently restores nothing and
`model.load_weights` refuses the format, so the mapping is explicit:

  * **Weights.** A migrated model holds its layers as attributes named as TF1 named the layers'
    variable scopes (`self.dense`, `self.dense_1`, `self.hidden`: `tf.layers` auto-naming or the
    explicit `name=`), so `<attribute>/<weight>` is the TF1 name: `dense_1/kernel`. Where it is
    not (`variable_scope` prefixes, slim's `weights`/`biases`, `tf.get_variable`s held by the
    model), the model class's `TF1_NAMES` maps `attribute` or `attribute/weight` to it. An
    `assignment_map` in `init_from_checkpoint` syntax (`{'old_scope/': 'new_scope/'}`, or
    variable to variable) rewrites TF1 names first.
  * **Optimizer slots**, by optimizer: Adam `<v>/Adam`, `<v>/Adam_1`, `beta1_power`,
    `beta2_power`; Momentum `<v>/Momentum` (Keras SGD keeps `-lr * accumulator`); Adagrad
    `<v>/Adagrad`; RMSProp `<v>/RMSProp`, then `_1` (mg if centered, else momentum), `_2`;
    Adadelta `<v>/Adadelta`, `_1`; Ftrl `<v>/Ftrl`, `_1`.
  * **global_step** becomes `optimizer.iterations`.
  * Shapes are checked; a model variable or slot the checkpoint lacks is an error (nothing is ever
    restored silently half-way); TF1 variables nothing consumed are reported.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

from .tf1_variable_names import tf1_variable_names
from ._state import model_state

keras = tf.keras
logger = logging.getLogger("tfmigrate.runtime")


@dataclass
class LoadReport:
    """What `load_tf1_checkpoint` did: assigned `model name <- TF1 name` pairs and leftovers."""

    path: str
    assigned: dict[str, str] = field(default_factory=dict)
    unused: list[str] = field(default_factory=list)
    global_step: int | None = None


def _mapped_name(name: str, assignment_map: dict[str, str]) -> str | None:
    """The checkpoint name `init_from_checkpoint`'s `assignment_map` (checkpoint name or scope ->
    model name or scope) gives model variable `name`, or None when no entry covers it."""
    for ckpt, mine in assignment_map.items():
        if not mine.endswith("/"):
            if name == mine:
                return ckpt
            continue
        if mine == "/":
            rest = name
        elif name.startswith(mine):
            rest = name[len(mine):]
        else:
            continue
        if not ckpt.endswith("/"):
            raise ValueError(f"assignment_map entry {ckpt!r}: {mine!r}: a scope must map to a scope ('scope/': 'other_scope/')")
        return rest if ckpt == "/" else ckpt + rest
    return None


def _apply_assignment_map(name: str, assignment_map: dict[str, str] | None) -> str:
    """Model-side name -> checkpoint name, `init_from_checkpoint` style ({ckpt_scope/: model_scope/})."""
    if not assignment_map:
        return name
    mapped = _mapped_name(name, assignment_map)
    return name if mapped is None else mapped


_PART = re.compile(r"^(.*)/part_(\d+)$")


def open_checkpoint(path: str):
    """(reader, {name: shape}) of the checkpoint at `path`, or of the latest one in directory `path`.

    Raises:
      ValueError: `path` is a directory without a checkpoint.
    """
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"no checkpoint in directory {path!r}")
        path = latest
    reader = tf.train.load_checkpoint(path)
    return reader, reader.get_variable_to_shape_map()


def partitioned_variables(shapes: dict[str, list[int]]) -> dict[str, list[str]]:
    """`name -> [name/part_0, name/part_1, ...]` for variables a TF1 partitioner split."""
    parts: dict[str, dict[int, str]] = {}
    for key in shapes:
        match = _PART.match(key)
        if match:
            parts.setdefault(match.group(1), {})[int(match.group(2))] = key
    return {name: [by_index[i] for i in sorted(by_index)] for name, by_index in parts.items()}


def _read(reader, name: str, partitioned: dict[str, list[str]]) -> np.ndarray:
    """A variable's value; partitioned ones are concatenated along the axis their parts split."""
    if name not in partitioned:
        return reader.get_tensor(name)
    pieces = [reader.get_tensor(part) for part in partitioned[name]]
    first = pieces[0].shape
    axis = next((i for i in range(len(first)) if any(p.shape[i] != first[i] for p in pieces)), 0)
    return np.concatenate(pieces, axis=axis)


def slot_map(optimizer: Any) -> list[tuple[str, str, float]]:
    """(optimizer attribute holding per-variable slots, TF1 slot suffix, scale) for `optimizer`.

    The runtime's own optimizers (`optimizers.Adam`, `Momentum`, `RMSProp`, `AdamWeightDecay`)
    declare theirs (`tf1_slots()`); Keras's are mapped here.
    """
    declared = getattr(optimizer, "tf1_slots", None)
    if callable(declared):
        return list(declared())
    if isinstance(optimizer, keras.optimizers.Adam):
        return [("_momentums", "Adam", 1.0), ("_velocities", "Adam_1", 1.0)]
    if isinstance(optimizer, keras.optimizers.RMSprop):
        # A v2 canned estimator's Keras 2 RMSprop (`rms`, `momentum`; TF1's `RMSProp`, `RMSProp_1`).
        if optimizer.centered:
            raise ValueError("no TF1 slot mapping for a centered Keras RMSprop")
        slots = [("_velocities", "RMSProp", 1.0)]
        if optimizer.momentum > 0:
            slots.append(("_momentums", "RMSProp_1", 1.0))
        return slots
    if isinstance(optimizer, keras.optimizers.Adagrad):
        return [("_accumulators", "Adagrad", 1.0)]
    if isinstance(optimizer, keras.optimizers.Adadelta):
        return [("_accumulated_grads", "Adadelta", 1.0), ("_accumulated_delta_vars", "Adadelta_1", 1.0)]
    if isinstance(optimizer, keras.optimizers.Ftrl):
        return [("_accumulators", "Ftrl", 1.0), ("_linears", "Ftrl_1", 1.0)]
    if isinstance(optimizer, keras.optimizers.SGD):
        if optimizer.momentum:
            # Keras SGD keeps v = -lr * a where TF1 kept the raw accumulator a.
            return [("momentums", "Momentum", -float(np.asarray(optimizer.learning_rate)))]
        return []
    raise ValueError(f"no TF1 slot mapping for optimizer {type(optimizer).__name__}")


def load_tf1_checkpoint(
    model: keras.Model,
    path: str,
    *,
    assignment_map: dict[str, str] | None = None,
    include_optimizer: bool = True,
    only_mapped: bool = False,
    optimizer: Any = None,
) -> LoadReport:
    """Assigns a TF1 checkpoint's variables to a built (and, for slots, compiled) Keras model.

    Args:
      model: the migrated model, built; its optimizer built too when `include_optimizer`.
      path: a checkpoint prefix (`.../model.ckpt-100`) or a directory holding checkpoints.
      assignment_map: `init_from_checkpoint`-style renames, checkpoint scope -> model scope.
      include_optimizer: also restore optimizer slots and `global_step`.
      only_mapped: restore only the variables (and, with `include_optimizer`, the slots and
        `global_step`) that `assignment_map` covers (`init_from_checkpoint`), leaving the others
        as they are.
      optimizer: the optimizer whose slots to restore, when it is not `model.optimizer` (a custom
        training loop's optimizer, never compiled into the model).

    Returns:
      A `LoadReport`.

    Raises:
      ValueError: a model variable or optimizer slot is missing from the checkpoint or has another
        shape; no variable is assigned in that case.
    """
    own = getattr(model, "load_tf1_checkpoint", None)
    if callable(own):  # Models with their own TF1 slot layout (runtime.canned's canned estimators).
        return own(path, assignment_map=assignment_map, include_optimizer=include_optimizer, only_mapped=only_mapped)
    reader, shapes = open_checkpoint(path)
    plan: list[tuple[Any, str, float]] = []
    missing: list[str] = []
    partitioned = partitioned_variables(shapes)
    if only_mapped and not assignment_map:
        raise ValueError("only_mapped needs an assignment_map")
    for name, variable in tf1_variable_names(model).items():
        if only_mapped and _mapped_name(name, assignment_map) is None:  # type: ignore[arg-type]
            continue
        ckpt_name = _apply_assignment_map(name, assignment_map)
        if ckpt_name not in shapes and ckpt_name not in partitioned:
            missing.append(f"{name} (looked for {ckpt_name!r})")
            continue
        plan.append((variable, ckpt_name, 1.0))
    if optimizer is None:
        optimizer = getattr(model, "optimizer", None)
    if not include_optimizer:
        optimizer = None
    step = None
    if optimizer is not None:
        for attr, suffix, scale in slot_map(optimizer):
            slots = getattr(optimizer, attr)
            for name, variable in tf1_variable_names(model).items():
                if not variable.trainable:
                    continue
                if only_mapped:
                    # init_from_checkpoint: a scope mapping covers the slot variables too.
                    ckpt_name = _mapped_name(f"{name}/{suffix}", assignment_map)  # type: ignore[arg-type]
                    if ckpt_name is None:
                        continue
                else:
                    ckpt_name = f"{_apply_assignment_map(name, assignment_map)}/{suffix}"
                if ckpt_name not in shapes and ckpt_name not in partitioned:
                    missing.append(f"optimizer slot {ckpt_name!r}")
                    continue
                plan.append((slots[optimizer._get_variable_index(variable)], ckpt_name, scale))
        step_name = _apply_assignment_map("global_step", assignment_map) if only_mapped else "global_step"
        if step_name in shapes and (not only_mapped or _mapped_name("global_step", assignment_map) is not None):  # type: ignore[arg-type]
            step = int(reader.get_tensor(step_name))
    if not plan and not missing:
        what = "the assignment_map covers none of the model's variables" if only_mapped else "the model has no variables"
        raise ValueError(f"{what}: nothing to restore from TF1 checkpoint {path!r} (is the model built?)")
    if missing:
        raise ValueError(
            f"TF1 checkpoint {path!r} does not hold every variable of the model; nothing was restored. "
            f"Missing: {', '.join(missing)}. Pass `assignment_map` if the TF1 scopes were named differently."
        )
    values: dict[str, np.ndarray] = {}
    for variable, ckpt_name, _ in plan:
        values[ckpt_name] = _read(reader, ckpt_name, partitioned)
        if tuple(values[ckpt_name].shape) != tuple(variable.shape):
            raise ValueError(
                f"TF1 variable {ckpt_name!r} has shape {tuple(values[ckpt_name].shape)}, the model's has "
                f"{tuple(variable.shape)}; nothing was restored"
            )
    report = LoadReport(path=path, global_step=step)
    for variable, ckpt_name, scale in plan:
        value = values[ckpt_name]
        variable.assign(value * scale if scale != 1.0 else value)
        report.assigned[getattr(variable, "path", getattr(variable, "name", "?"))] = ckpt_name
    if optimizer is not None:
        # TF1 state outside the slots (Adam's beta powers), as the optimizer declares it.
        for attr, key in getattr(optimizer, "TF1_NON_SLOT_VARIABLES", ()):
            if only_mapped:
                if _mapped_name(key, assignment_map) is None:  # type: ignore[arg-type]
                    continue
                key = _apply_assignment_map(key, assignment_map)
            if key not in shapes:
                raise ValueError(f"TF1 checkpoint {path!r} has no {key!r} for {type(optimizer).__name__}")
            for power in getattr(optimizer, attr):
                power.assign(reader.get_tensor(key))
            report.assigned[key] = key
        if step is not None:
            optimizer.iterations.assign(step)
            report.assigned["iterations"] = "global_step"
    consumed = set(report.assigned.values())
    consumed |= {part for whole in consumed if whole in partitioned for part in partitioned[whole]}
    report.unused = sorted(name for name in shapes if name not in consumed)
    if report.unused:
        logger.warning("tfmigrate.runtime: TF1 checkpoint %s: not restored into the model: %s", path, ", ".join(report.unused))
    logger.info("tfmigrate.runtime: restored TF1 checkpoint %s (%d variables, global step %s).", path, len(report.assigned), step)
    return report


# An `assignment_map` for `init_from_checkpoint`: every trainable variable of the model that the
# checkpoint holds under the same TF1 name, what BERT's `get_assignment_map_from_checkpoint(tvars,
# init_checkpoint)` computes (and every BERT-derived program calls before init_from_checkpoint).
MATCHING_VARIABLES = "tfmigrate:matching-variables"


def matching_assignment_map(model: keras.Model, path: str) -> dict[str, str]:
    """{name: name} for the model's trainable variables whose TF1 names the checkpoint holds."""
    if tf.io.gfile.isdir(path):
        path = tf.train.latest_checkpoint(path) or path
    names = set(tf.train.load_checkpoint(path).get_variable_to_shape_map())
    return {name: name for name, variable in tf1_variable_names(model).items() if variable.trainable and name in names}


class WarmStartSettings:
    """TF1's `tf.estimator.WarmStartSettings`, for `warm_start`.

    Args:
      ckpt_to_initialize_from: a TF1 (or the runtime's) checkpoint prefix or directory.
      vars_to_warm_start: a regular expression (TF1 matched it with `re.match`, from the start of
        the name) or a list of them, over the model's TF1 variable names; only trainable
        variables, as TF1's default did. None: no variable.
      var_name_to_vocab_info: not supported (vocabulary remapping); must be empty.
      var_name_to_prev_var_name: the checkpoint's name for a variable that was renamed.
    """

    def __init__(
        self,
        ckpt_to_initialize_from: str,
        vars_to_warm_start: str | list[str] | None = ".*",
        var_name_to_vocab_info: dict | None = None,
        var_name_to_prev_var_name: dict[str, str] | None = None,
    ) -> None:
        if var_name_to_vocab_info:
            raise ValueError("WarmStartSettings(var_name_to_vocab_info=...) is not supported by tfmigrate.runtime")
        self.ckpt_to_initialize_from = ckpt_to_initialize_from
        self.vars_to_warm_start = vars_to_warm_start
        self.var_name_to_prev_var_name = dict(var_name_to_prev_var_name or {})

    def assignment_map(self, model: keras.Model) -> dict[str, str]:
        """{checkpoint name: model name} for the variables TF1's warm start covered."""
        patterns = self.vars_to_warm_start
        if patterns is None:
            return {}
        if isinstance(patterns, str):
            patterns = [patterns]
        chosen = {}
        for name, variable in tf1_variable_names(model).items():
            if variable.trainable and any(re.match(pattern, name) for pattern in patterns):
                chosen[self.var_name_to_prev_var_name.get(name, name)] = name
        return chosen


def warm_start(model: keras.Model, warm_start_from: "str | WarmStartSettings") -> keras.Model:
    """TF1's `Estimator(warm_start_from=...)`: on a fresh start (no checkpoint in `model_dir`),
    the trainable variables start from another checkpoint; optimizer slots and the global step
    start fresh. A path warm-starts every trainable variable, under the same names."""
    settings = warm_start_from if isinstance(warm_start_from, WarmStartSettings) else WarmStartSettings(warm_start_from)
    model_state(model).init_checkpoints.append((settings.ckpt_to_initialize_from, settings, False))
    return model


def init_from_checkpoint(
    model: keras.Model, ckpt_dir_or_file: str, assignment_map: dict[str, str] | str, *, optimizer_variables: bool = False
) -> keras.Model:
    """`tf.compat.v1.train.init_from_checkpoint` for a migrated model.

    TF1 replaced the initializers of the variables `assignment_map` covers, so they started from
    the checkpoint when training started fresh, and a checkpoint in `model_dir` still won. Here the
    request is recorded on the model, and the runtime's `fit`/`evaluate`/`predict` apply it once
    the model is built, unless they restore `model_dir` instead. Optimizer slots and the global
    step start fresh, as in TF1.

    Args:
      model: the migrated Keras model.
      ckpt_dir_or_file: a TF1 checkpoint prefix, or a directory (its latest checkpoint).
      assignment_map: checkpoint name or scope -> model (TF1) name or scope, as TF1 took it; or
        `MATCHING_VARIABLES`, the trainable variables the checkpoint has under their own names.
      optimizer_variables: the TF1 call ran after the optimizer made its slots (a TPU
        `scaffold_fn`, or a call after `minimize`), so scope mappings covered the slots
        (`<var>/Adam`, ...) too, and `global_step`/`beta1_power` when mapped.

    Returns:
      `model`.
    """
    if not assignment_map:
        raise ValueError("init_from_checkpoint needs a non-empty assignment_map")
    amap = assignment_map if assignment_map == MATCHING_VARIABLES else dict(assignment_map)
    model_state(model).init_checkpoints.append((ckpt_dir_or_file, amap, optimizer_variables))
    return model


def _resolved_map(model: keras.Model, path: str, amap: Any) -> dict[str, str]:
    if isinstance(amap, WarmStartSettings):
        resolved = amap.assignment_map(model)
        if not resolved:
            raise ValueError(f"warm start from {path!r}: vars_to_warm_start matches no trainable variable of the model")
        return resolved
    if amap == MATCHING_VARIABLES:
        return matching_assignment_map(model, path)
    return amap


def apply_init_checkpoints(model: keras.Model, optimizer: Any = None) -> list[LoadReport]:
    """Loads the pending `init_from_checkpoint` requests of a built `model` (then forgets them);
    `optimizer` when its slots are not `model.optimizer`'s (a custom training loop's)."""
    state = model_state(model)
    reports = [
        load_tf1_checkpoint(
            model,
            path,
            assignment_map=_resolved_map(model, path, amap),
            include_optimizer=slots,
            only_mapped=True,
            optimizer=optimizer,
        )
        for path, amap, slots in state.init_checkpoints
    ]
    state.init_checkpoints = []
    return reports
