"""The TF1 names of a migrated Keras model's variables (what a TF1 checkpoint called them).

Below both `optimizers` (AdamWeightDecay matches its exclusions against these names) and
`tf1_checkpoint` (which restores TF1 checkpoints by them); see `tf1_checkpoint`'s docstring for
the naming rules.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from .feature_columns import scoped_tf1_names

keras = tf.keras

__all__ = ["tf1_variable_names"]


def tf1_variable_names(model: keras.Model) -> dict[str, Any]:
    """TF1 name -> model variable, from the model's layer and weight attributes (see the module
    docstring), renamed by the model's `TF1_NAMES` where the codemod recorded other TF1 names."""
    own = getattr(model, "tf1_variable_names", None)
    if callable(own):  # Models that know their TF1 names (runtime.canned's canned estimators).
        return own()
    names: dict[str, Any] = {}
    renames: dict[str, str] = dict(getattr(type(model), "TF1_NAMES", {}) or {})
    attrs = [(attr, value) for attr, value in vars(model).items() if not attr.startswith("_")]
    layers = [(attr, value) for attr, value in attrs if isinstance(value, keras.layers.Layer)]
    weights = [(attr, value) for attr, value in attrs if isinstance(value, keras.Variable)]
    if not layers and not weights:  # Sequential/functional models: the layers' own names are the scopes.
        layers = [(layer.name, layer) for layer in model.layers]
    for attr, layer in layers:
        scope = renames.get(attr, attr)
        absolute = getattr(layer, "tf1_absolute_names", None)
        if isinstance(absolute, dict):  # tf1.VariableScopeLayer: the TF1 names its function's scopes gave
            names.update(absolute)
            continue
        own_names = getattr(layer, "tf1_names", None)
        if isinstance(own_names, dict):  # feature_columns.InputLayer/LinearModel: TF1 names under their scope
            names.update(scoped_tf1_names(scope, own_names))
            continue
        for weight in layer.weights:
            leaf = weight.name.split("/")[-1]
            names[renames.get(f"{attr}/{leaf}", f"{scope}/{leaf}")] = weight
    for attr, weight in weights:  # `tf.get_variable`s, migrated to `add_weight`
        names[renames.get(attr, attr)] = weight
    return names
