"""Hand-written TF1 optimizers that programs carry with them, recognised by what they compute.

BERT's `AdamWeightDecayOptimizer` (a `tf.train.Optimizer` subclass whose `apply_gradients`
creates `adam_m`/`adam_v` variables and assigns the update by hand) is copied into most
BERT-derived programs. It cannot run on TF2 as written (it builds TF1 graph variables inside
`apply_gradients`), and it is always the same algorithm, so the codemod replaces it with the
runtime's step-for-step Keras form, `tfm.optimizers.AdamWeightDecay`. A class is taken for it only
when its constructor takes BERT's arguments and its update is BERT's (no bias correction, the
decoupled decay, the exclusion list); other `tf.train.Optimizer` subclasses stay TODOs.
"""

from __future__ import annotations

from typing import Callable

from .cst_on_demand import cst

ADAM_WEIGHT_DECAY = "user:AdamWeightDecayOptimizer"

# The constructor parameters (BERT's order) and what the update must read and must not.
_ADAMW_PARAMS = ("learning_rate", "weight_decay_rate", "beta_1", "beta_2", "epsilon", "exclude_from_weight_decay", "name")
_ADAMW_READS = ("self.beta_1", "self.beta_2", "self.epsilon", "self.weight_decay_rate", "sqrt", "exclude_from_weight_decay")
_BIAS_CORRECTION = ("beta1_power", "beta_1_power", "**", "pow(", "_get_beta_accumulators")


def recognise(cls: cst.ClassDef, module: cst.Module, canonical: Callable[[cst.BaseExpression], str | None]) -> str | None:
    """The key (`OPTIMIZERS` in `estimator.tables`) of the algorithm a user optimizer class implements."""
    if not any(canonical(base.value) == "train.Optimizer" for base in cls.bases):
        return None
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}  # type: ignore[attr-defined]
    init, apply = methods.get("__init__"), methods.get("apply_gradients")
    if init is None or apply is None:
        return None
    params = [p.name.value for p in init.params.params][1:]
    if tuple(params) != _ADAMW_PARAMS:
        return None
    code = module.code_for_node(cls)
    if not all(read in code for read in _ADAMW_READS) or any(marker in code for marker in _BIAS_CORRECTION):
        return None
    return ADAM_WEIGHT_DECAY
