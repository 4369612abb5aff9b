"""`tfm.estimator.export`: TF1's `tf.estimator.export` for the hosted `Estimator`, and its exporters.

Receivers (`ServingInputReceiver`, `TensorServingInputReceiver`, the `build_*_serving_input_receiver_fn`
builders) are the runtime's (`tfmigrate.runtime.export`); the export outputs are TensorFlow's own
`model_utils` classes, the ones TF1's Estimator put in its signatures. The exporters are the
runtime's, writing through `Estimator.export_saved_model`.
"""

from __future__ import annotations

from tensorflow.python.saved_model.model_utils.export_output import (
    ClassificationOutput,
    EvalOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
    TrainOutput,
)

from .. import export as _runtime_export
from ..export import (
    ServingInputReceiver,
    TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
)

__all__ = [
    "BestExporter", "ClassificationOutput", "EvalOutput", "ExportOutput", "Exporter", "FinalExporter", "LatestExporter",
    "PredictOutput", "RegressionOutput", "ServingInputReceiver", "TensorServingInputReceiver", "TrainOutput",
    "build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn",
]

Exporter = _runtime_export.Exporter


class _ThroughEstimator:
    """Exports with `estimator.export_saved_model` (the exporters' `model` is the Estimator)."""

    def _export(self, estimator, export_path, checkpoint_path=None):
        return estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn, assets_extra=self._assets_extra, as_text=self._as_text,
            checkpoint_path=checkpoint_path,
        )


class LatestExporter(_ThroughEstimator, _runtime_export.LatestExporter):
    """TF1's `LatestExporter`: exports after every evaluation, keeping the newest `exports_to_keep`."""


class FinalExporter(_ThroughEstimator, _runtime_export.FinalExporter):
    """TF1's `FinalExporter`: exports once, after the final evaluation."""


class BestExporter(_ThroughEstimator, _runtime_export.BestExporter):
    """TF1's `BestExporter`: exports when the evaluation improved on the best in `model_dir`'s eval events."""
