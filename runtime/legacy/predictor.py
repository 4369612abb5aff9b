"""`tfm.legacy.predictor`: TF 1.x's `tf.contrib.predictor.from_saved_model`.

TF1 serving scripts (a tagger's interactive loop, a classifier behind a web handler) loaded an
exported SavedModel once and called it with a dict of inputs: `predict_fn = from_saved_model(dir);
predict_fn({'words': ..., 'nwords': ...})` -> a dict of outputs, as NumPy arrays. `tf.contrib` is
gone; the predictor here is TF 1.15's, on current TF's `tf.compat.v1` SavedModel loader: the model
is loaded into a graph and session of its own (so it runs whether the program runs eagerly or not),
its inputs and outputs are those of a signature (`serving_default` unless another key, a
`SignatureDef` or explicit tensor names are given), and each call is one `Session.run`.
"""

from __future__ import annotations

import logging

import tensorflow as tf

__all__ = ["from_saved_model", "SavedModelPredictor"]

_ALTERNATIVE = "default_input_alternative:{}"  # how TF1's estimator export named extra input signatures


class SavedModelPredictor:
    """A callable over a SavedModel: `predictor({input key: value})` -> {output key: value}."""

    def __init__(self, export_dir, signature_def_key=None, signature_def=None, input_names=None, output_names=None,
                 tags=None, graph=None, config=None):
        tags = tags.split(",") if isinstance(tags, str) else list(tags or [tf.compat.v1.saved_model.tag_constants.SERVING])
        self._graph = graph or tf.Graph()
        with self._graph.as_default():
            self._session = tf.compat.v1.Session(config=config)
            meta_graph = tf.compat.v1.saved_model.loader.load(self._session, tags, export_dir)
        if input_names is None:
            if signature_def is None:
                signature_def = _signature(meta_graph, signature_def_key)
            input_names = {key: info.name for key, info in signature_def.inputs.items()}
            output_names = {key: info.name for key, info in signature_def.outputs.items()}
        self._feed_tensors = {key: self._graph.get_tensor_by_name(name) for key, name in input_names.items()}
        self._fetch_tensors = {key: self._graph.get_tensor_by_name(name) for key, name in output_names.items()}

    @property
    def session(self):
        return self._session

    @property
    def graph(self):
        return self._graph

    @property
    def feed_tensors(self):
        return self._feed_tensors

    @property
    def fetch_tensors(self):
        return self._fetch_tensors

    def __call__(self, input_dict):
        for key in input_dict:
            if key not in self._feed_tensors:
                raise ValueError(f"Unrecognized input key: {key}. Known input keys: {sorted(self._feed_tensors)}")
        feed = {self._feed_tensors[key]: value for key, value in input_dict.items()}
        return self._session.run(fetches=self._fetch_tensors, feed_dict=feed)

    def __repr__(self):
        return f"SavedModelPredictor with feed tensors {self._feed_tensors} and fetch tensors {self._fetch_tensors}"


def _signature(meta_graph, key):
    key = key or tf.compat.v1.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    signatures = meta_graph.signature_def
    if key in signatures:
        return signatures[key]
    if _ALTERNATIVE.format(key) in signatures:
        logging.getLogger("tensorflow").warning('Could not find signature def "%s". Using "%s" instead', key,
                                                _ALTERNATIVE.format(key))
        return signatures[_ALTERNATIVE.format(key)]
    raise ValueError(f'Got signature_def_key "{key}". Available signatures are {list(signatures)}.')


def from_saved_model(export_dir, signature_def_key=None, signature_def=None, input_names=None, output_names=None,
                     tags=None, graph=None, config=None):
    """A `SavedModelPredictor` over the SavedModel in `export_dir` (TF 1.15's arguments)."""
    return SavedModelPredictor(export_dir, signature_def_key=signature_def_key, signature_def=signature_def,
                               input_names=input_names, output_names=output_names, tags=tags, graph=graph,
                               config=config)
