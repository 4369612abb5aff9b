"""`Estimator.export_saved_model`: TF1 SavedModels written by `tf.compat.v1.saved_model.Builder`.

As TF 2.15's Estimator: the latest checkpoint (or `checkpoint_path`, or the warm-start
checkpoint when the model was never trained) is restored into a fresh graph in which
`model_fn` was called in the exported mode on the receiver's features; the MetaGraph gets the
mode's tags (`serve` for PREDICT), the signatures of `export_outputs` (and of each
`receiver_tensors_alternatives`), the `local_init_op` as main op, and the export directory is the
next timestamp under `export_dir_base`, written to a temporary directory first.
"""

from __future__ import annotations

import os
from typing import Any

import tensorflow as tf
from tensorflow.python.saved_model import model_utils

from ...inputs import ModeKeys
from ..input_fn import receiver_features

_MODE_ORDER = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def checkpoint_for_export(estimator: Any, checkpoint_path: Any) -> str:
    if checkpoint_path:
        return checkpoint_path
    path = estimator.latest_checkpoint()
    if path:
        return path
    settings = estimator._warm_start_settings  # noqa: SLF001 - the estimator's own state
    if settings:
        path = settings.ckpt_to_initialize_from
        return tf.train.latest_checkpoint(path) if tf.io.gfile.isdir(path) else path
    raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")


def _add_meta_graph(estimator, builder, receiver_fn, checkpoint_path, save_variables, mode, strip_default_attrs):
    tags = model_utils.EXPORT_TAG_MAP[mode]
    with tf.Graph().as_default() as graph:
        estimator._start_graph(graph)  # noqa: SLF001 - global step, then the graph seed, as TF1
        receiver = receiver_fn()
        spec = estimator._call_model_fn(  # noqa: SLF001
            receiver_features(receiver), getattr(receiver, "labels", None), mode, estimator.config, is_export=True
        )
        export_outputs = model_utils.export_outputs_for_mode(
            mode=spec.mode,
            serving_export_outputs=spec.export_outputs,
            predictions=spec.predictions,
            loss=spec.loss,
            metrics=spec.eval_metric_ops,
        )
        signatures = model_utils.build_all_signature_defs(
            receiver.receiver_tensors,
            export_outputs,
            getattr(receiver, "receiver_tensors_alternatives", None),
            serving_only=(mode == ModeKeys.PREDICT),
        )
        with tf.compat.v1.Session(config=estimator._session_config) as session:  # noqa: SLF001
            local_init_op = spec.scaffold.local_init_op or tf.compat.v1.train.Scaffold.default_local_init_op()
            saver = spec.scaffold.saver or tf.compat.v1.train.Saver(sharded=True)
            try:
                saver.restore(session, checkpoint_path)
            except tf.errors.NotFoundError as error:
                raise ValueError(
                    "Could not load all requested variables from checkpoint. Please make sure your model_fn does not "
                    f"expect variables that were not saved in the checkpoint.\n\nEncountered error with mode `{mode}` "
                    f"while restoring checkpoint from: `{checkpoint_path}`. Full Traceback:\n\n{error}"
                ) from error
            builder._add_train_op(spec.train_op)  # noqa: SLF001 - as TF1 recorded the train op
            kwargs = dict(
                tags=tags,
                signature_def_map=signatures,
                assets_collection=tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.ASSET_FILEPATHS),
                main_op=local_init_op,
                saver=saver,
                strip_default_attrs=strip_default_attrs,
            )
            if save_variables:
                builder.add_meta_graph_and_variables(session, **kwargs)
            else:
                builder.add_meta_graph(**kwargs)


def export_all_saved_models(
    estimator, export_dir_base, receiver_fn_map, assets_extra=None, as_text=False, checkpoint_path=None,
    strip_default_attrs=True,
) -> bytes:
    checkpoint_path = checkpoint_for_export(estimator, checkpoint_path)
    export_dir = model_utils.get_timestamped_export_dir(os.fspath(export_dir_base))
    temp_dir = model_utils.get_temp_export_dir(export_dir)
    builder = tf.compat.v1.saved_model.Builder(temp_dir)
    save_variables = True
    for mode in _MODE_ORDER:
        if receiver_fn_map.get(mode):
            _add_meta_graph(estimator, builder, receiver_fn_map[mode], checkpoint_path, save_variables, mode, strip_default_attrs)
            save_variables = False
    if save_variables:
        raise ValueError(f"No valid modes for exporting found. Got {list(receiver_fn_map)}.")
    builder.save(as_text)
    if assets_extra:
        extra = os.path.join(tf.compat.as_text(temp_dir), "assets.extra")
        for relative, source in assets_extra.items():
            destination = os.path.join(extra, relative)
            tf.io.gfile.makedirs(os.path.dirname(destination))
            tf.io.gfile.copy(source, destination)
    tf.io.gfile.rename(temp_dir, export_dir)
    return export_dir
