"""`Estimator.export_saved_model` on the strategy tier: a TF2 SavedModel, no Session.

TF 1.x built the PREDICT graph of the model_fn on the serving receiver's tensors, restored the
checkpoint into it in a Session and wrote a TF1 SavedModel. Here the model_fn's variables are the
strategy tier's (found by a graph-mode build on the receiver's features, restored from the
checkpoint), each signature is a `tf.function` calling the model_fn as written in PREDICT mode on
the receiver's features (the receiver itself is TF1 graph code, traced and pruned as
`tfmigrate.runtime.export` does for Keras models), and `tf.saved_model.save` writes it with the
signatures TF 1.x wrote: one per `export_outputs` entry (and per `receiver_tensors_alternatives`),
TF1's keys, method names and output keys.

Lookup tables the serving graph makes (a vocabulary list's `index_table_from_tensor`) are carried
by the SavedModel, their initializers run when it loads, as TF 1.x ran them in its main op. What a
TF2 SavedModel cannot hold as TF 1.x's did raises `Unsupported` (the export then runs in graph
mode, saying why): asset files (a vocabulary file), local variables, and export outputs other than
predict, classify and regress ones.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import tensorflow as tf
from tensorflow.python.saved_model.model_utils import export_output as tf1_outputs

from ... import export as runtime_export
from .checks import Unsupported
from .tf1_build import patched

__all__ = ["SpecExportOutputs", "check_exportable", "tables_made"]

_KEYS = tf.compat.v1.GraphKeys


def check_exportable(graph: tf.Graph, local_variables: list) -> None:
    """Raises `Unsupported` where the PREDICT build needs what TF 1.x ran as the SavedModel's main op
    and a TF2 SavedModel would not carry (a lookup table is carried: `tables_made`)."""
    if graph.get_collection(_KEYS.ASSET_FILEPATHS):
        raise Unsupported("the serving graph has asset files (a vocabulary), which TF 1.x's SavedModel copied")
    if local_variables:
        raise Unsupported("the serving graph makes local variables (TF 1.x's SavedModel initialized them in its main op)")


@contextlib.contextmanager
def tables_made(into: list) -> Iterator[None]:
    """Records in `into` each TF1 lookup table (`index_table_from_tensor`, `StaticHashTable`, ...)
    made while the signatures are traced: TF2 makes its resource outside the function, and the
    SavedModel carries it (its initializer run when the model loads, as TF 1.x's main op ran it)
    only where an object of the saved module holds it."""
    from tensorflow.python.ops import lookup_ops

    original = lookup_ops.InitializableLookupTableBase.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        into.append(self)

    with patched((lookup_ops.InitializableLookupTableBase, "__init__", init)):
        yield


def _as_runtime_output(name: str, output: Any) -> runtime_export.ExportOutput:
    if isinstance(output, runtime_export.ExportOutput):
        return output
    if isinstance(output, tf1_outputs.ClassificationOutput):
        return runtime_export.ClassificationOutput(scores=output.scores, classes=output.classes)
    if isinstance(output, tf1_outputs.RegressionOutput):
        return runtime_export.RegressionOutput(output.value)
    if isinstance(output, tf1_outputs.PredictOutput):
        return runtime_export.PredictOutput(output.outputs)
    raise Unsupported(f"export output {name!r} is a {type(output).__name__}; a TF2 export writes predict, classify "
                      "and regress signatures")


class SpecExportOutputs:
    """What `tfmigrate.runtime.export.signature_functions` asks of a model: `export_outputs(features)`,
    here the PREDICT spec's `export_outputs` (`spec_of(features)` calls the model_fn in the trace)."""

    def __init__(self, spec_of: Callable[[Any], Any]) -> None:
        self._spec_of = spec_of

    def export_outputs(self, features: Any) -> dict[str, runtime_export.ExportOutput]:
        spec = self._spec_of(features)
        outputs = spec.export_outputs
        if not outputs:  # (an EstimatorSpec fills the default; a spec of another kind may not)
            outputs = {runtime_export.DEFAULT_SERVING_SIGNATURE_DEF_KEY: tf1_outputs.PredictOutput(spec.predictions)}
        return {name: _as_runtime_output(name, output) for name, output in outputs.items()}
