"""`tfm.legacy.fused_rnn`: TF 1.x's `tf.contrib.rnn.LSTMBlockFusedCell` and `TimeReversedFusedRNN`.

The fused LSTM ran a whole time-major sequence (`[time, batch, input]`) in one `BlockLSTM` kernel,
which current TF still has (`tf.raw_ops.BlockLSTM`); `tf.contrib` with its Python class is gone.
BiLSTM taggers build one forward cell and one wrapped in `TimeReversedFusedRNN` for the backward
direction. As in TF 1.x, the cell is a TF1 layer (tf-keras's legacy `Layer`, the same code): its
variables `kernel` ([input + units, 4 * units], gates i, c, f, o) and `bias` (zeros) live under
`lstm_fused_cell`, `lstm_fused_cell_1`, ... in the variable scope it is first called in, so TF1
checkpoints load; the kernel's default initializer is TF 1.x's `glorot_uniform_initializer`, whose
op seed comes from the graph. With `sequence_length`, outputs past each sequence's end are 0 and
the final state `(c, h)` is the one at its last step (the initial state for length 0).
"""

from __future__ import annotations

import tensorflow as tf
from tf_keras.src.layers.rnn.legacy_cells import LSTMStateTuple  # (tfm.legacy.rnn_cell's)
from tf_keras.src.legacy_tf_layers import base as _legacy

__all__ = ["LSTMBlockFusedCell", "TimeReversedFusedRNN"]


class LSTMBlockFusedCell(_legacy.Layer):
    """TF 1.x's fused LSTM over a time-major sequence (call: `cell(inputs, initial_state=None,
    dtype=None, sequence_length=None, scope=None)` -> `(outputs, LSTMStateTuple(c, h))`)."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, reuse=None, dtype=None,
                 name="lstm_fused_cell"):
        super().__init__(_reuse=reuse, name=name, dtype=dtype)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._cell_clip = cell_clip if cell_clip is not None else -1
        self._use_peephole = use_peephole

    @property
    def num_units(self):
        return self._num_units

    def build(self, input_shape):
        if isinstance(input_shape, (list, tuple)) and input_shape and isinstance(input_shape[0], tf.TensorShape):
            input_shape = input_shape[0]  # a list of steps, each [batch, input]
        input_size = tf.compat.dimension_value(tf.TensorShape(input_shape)[-1])
        glorot = tf.compat.v1.glorot_uniform_initializer
        self._kernel = self.add_weight("kernel", [input_size + self._num_units, self._num_units * 4], initializer=glorot())
        self._bias = self.add_weight("bias", [self._num_units * 4], initializer=tf.compat.v1.constant_initializer(0.0))
        if self._use_peephole:
            self._peepholes = [self.add_weight(f"w_{gate}_diag", [self._num_units], initializer=glorot()) for gate in "ifo"]
        self.built = True

    def call(self, inputs, initial_state=None, dtype=None, sequence_length=None):
        is_list = isinstance(inputs, list)
        if is_list:
            inputs = tf.stack(inputs)
        shape = inputs.shape.with_rank(3)
        if not shape[2]:
            raise ValueError(f"Expecting inputs_shape[2] to be set: {shape}")
        batch_size = tf.compat.dimension_value(shape[1]) or tf.shape(inputs)[1]
        time_len = tf.compat.dimension_value(shape[0]) or tf.shape(inputs)[0]
        if initial_state is None:
            if dtype is None:
                raise ValueError("Either initial_state or dtype needs to be specified")
            zeros = tf.zeros(tf.stack([batch_size, self._num_units]), dtype=dtype)
            initial_state = zeros, zeros
        elif len(initial_state) != 2:
            raise ValueError("Expecting initial_state to be a tuple with length 2 or None")
        elif dtype is None:
            dtype = initial_state[0].dtype
        if sequence_length is not None:
            sequence_length = tf.convert_to_tensor(sequence_length)
        cell_0, output_0 = initial_state
        cells, outputs = self._run(inputs, cell_0, output_0, dtype, time_len, sequence_length)
        if sequence_length is None:
            final_cell, final_output = cells[-1], outputs[-1]
        else:
            mask = tf.transpose(tf.sequence_mask(sequence_length, time_len, dtype=dtype), [1, 0])
            outputs *= tf.tile(tf.expand_dims(mask, [-1]), [1, 1, self._num_units])
            # the state after each sequence's last step: index `length` once the initial state leads
            at = tf.stack([sequence_length, tf.range(batch_size, dtype=sequence_length.dtype)], axis=1)
            final_cell = tf.gather_nd(tf.concat([tf.expand_dims(cell_0, [0]), cells], 0), at)
            final_output = tf.gather_nd(tf.concat([tf.expand_dims(output_0, [0]), outputs], 0), at)
        if is_list:
            outputs = tf.unstack(outputs)
        return outputs, LSTMStateTuple(final_cell, final_output)

    def _run(self, inputs, cell_0, output_0, dtype, time_len, sequence_length):
        """`BlockLSTM` up to the longest sequence: (cell states, outputs), each [time, batch, units]."""
        if self._use_peephole:
            w_i, w_f, w_o = self._peepholes
        else:
            w_i = w_f = w_o = tf.zeros([self._num_units], dtype=dtype)
        longest = tf.cast(time_len if sequence_length is None else tf.reduce_max(sequence_length), tf.int64)
        _, cells, _, _, _, _, outputs = tf.raw_ops.BlockLSTM(
            seq_len_max=longest, x=inputs, cs_prev=cell_0, h_prev=output_0, w=self._kernel, wci=w_i, wcf=w_f,
            wco=w_o, b=self._bias, forget_bias=self._forget_bias, cell_clip=self._cell_clip,
            use_peephole=self._use_peephole)
        return cells, outputs


class TimeReversedFusedRNN:
    """TF 1.x's wrapper running a fused cell over each sequence reversed (within its length), its
    outputs reversed back: the backward half of a bidirectional LSTM."""

    def __init__(self, cell):
        self._cell = cell

    @staticmethod
    def _reverse(t, lengths):
        if isinstance(t, list):
            return list(reversed(t))
        if lengths is None:
            return tf.reverse(t, [0])
        return tf.reverse_sequence(t, lengths, seq_axis=0, batch_axis=1)

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
        inputs = self._reverse(inputs, sequence_length)
        outputs, state = self._cell(inputs, initial_state=initial_state, dtype=dtype, sequence_length=sequence_length,
                                    scope=scope)
        return self._reverse(outputs, sequence_length), state
