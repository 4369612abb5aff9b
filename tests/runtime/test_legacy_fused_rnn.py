"""`tfm.legacy.fused_rnn` (TF 1.x's `tf.contrib.rnn.LSTMBlockFusedCell` and `TimeReversedFusedRNN`)
against an LSTM written out in NumPy, in a TF1 graph as the hosted tier runs it: the BiLSTM of
sequence taggers (a forward cell and a time-reversed one), padded sequences of several lengths."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfmigrate.runtime import legacy  # noqa: E402

fused = legacy.fused_rnn
pytestmark = pytest.mark.tf

TIME, BATCH, INPUT, UNITS = 5, 3, 4, 6
LENGTHS = np.array([5, 2, 3], np.int32)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _lstm(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray, lengths: np.ndarray, forget_bias: float = 1.0):
    """Outputs [time, batch, units] (0 past each length) and the state (c, h) at each length."""
    c = np.zeros((x.shape[1], UNITS))
    h = np.zeros((x.shape[1], UNITS))
    outputs, final_c, final_h = np.zeros((x.shape[0], x.shape[1], UNITS)), c.copy(), h.copy()
    for t in range(x.shape[0]):
        i, j, f, o = np.split(np.concatenate([x[t], h], axis=1) @ kernel + bias, 4, axis=1)
        c = _sigmoid(f + forget_bias) * c + _sigmoid(i) * np.tanh(j)
        h = _sigmoid(o) * np.tanh(c)
        live = (t < lengths)[:, None]
        outputs[t] = np.where(live, h, 0.0)
        final_c, final_h = np.where(live, c, final_c), np.where(live, h, final_h)
    return outputs, final_c, final_h


def _reverse(x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    out = x.copy()
    for b, n in enumerate(lengths):
        out[:n, b] = x[:n, b][::-1]
    return out


def test_a_bidirectional_fused_lstm_matches_numpy() -> None:
    x = np.random.RandomState(0).randn(TIME, BATCH, INPUT).astype(np.float32)
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(2)
        inputs = tf.compat.v1.placeholder(tf.float32, [None, None, INPUT])
        lengths = tf.compat.v1.placeholder(tf.int32, [None])
        with tf.compat.v1.variable_scope("bilstm"):
            forward = fused.LSTMBlockFusedCell(UNITS)
            backward = fused.TimeReversedFusedRNN(fused.LSTMBlockFusedCell(UNITS))
            out_fw, state_fw = forward(inputs, dtype=tf.float32, sequence_length=lengths)
            out_bw, state_bw = backward(inputs, dtype=tf.float32, sequence_length=lengths)
        variables = {v.name: v for v in tf.compat.v1.global_variables()}
        assert sorted(variables) == [
            "bilstm/lstm_fused_cell/bias:0", "bilstm/lstm_fused_cell/kernel:0",
            "bilstm/lstm_fused_cell_1/bias:0", "bilstm/lstm_fused_cell_1/kernel:0",
        ]
        assert variables["bilstm/lstm_fused_cell/kernel:0"].shape == (INPUT + UNITS, 4 * UNITS)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            got = session.run([out_fw, state_fw, out_bw, state_bw], {inputs: x, lengths: LENGTHS})
            weights = session.run(variables)
    kernel, bias = weights["bilstm/lstm_fused_cell/kernel:0"], weights["bilstm/lstm_fused_cell/bias:0"]
    assert np.abs(kernel).max() > 0 and not bias.any()  # glorot kernel, zero bias
    outputs, c, h = _lstm(x, kernel, bias, LENGTHS)
    np.testing.assert_allclose(got[0], outputs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1].c, c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1].h, h, rtol=1e-5, atol=1e-6)
    kernel, bias = weights["bilstm/lstm_fused_cell_1/kernel:0"], weights["bilstm/lstm_fused_cell_1/bias:0"]
    outputs, c, h = _lstm(_reverse(x, LENGTHS), kernel, bias, LENGTHS)
    np.testing.assert_allclose(got[2], _reverse(outputs, LENGTHS), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3].h, h, rtol=1e-5, atol=1e-6)


def test_without_lengths_a_list_of_steps_and_a_given_state() -> None:
    x = np.random.RandomState(1).randn(TIME, BATCH, INPUT).astype(np.float32)
    with tf.Graph().as_default():
        cell = fused.LSTMBlockFusedCell(UNITS, forget_bias=0.5)
        steps = [tf.constant(x[t]) for t in range(TIME)]
        start = (tf.zeros([BATCH, UNITS]), tf.zeros([BATCH, UNITS]))
        outputs, state = cell(steps, initial_state=start)
        assert isinstance(outputs, list) and len(outputs) == TIME
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            got, final, kernel = session.run([outputs, state, cell.weights[0]])
    want, c, h = _lstm(x, kernel, np.zeros(4 * UNITS), np.full(BATCH, TIME), forget_bias=0.5)
    np.testing.assert_allclose(np.stack(got), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(final.c, c, rtol=1e-5, atol=1e-6)


def test_the_codemod_spells_exactly_these_classes() -> None:
    from tfmigrate import hosted

    assert hosted._FUSED_RNN == frozenset(fused.__all__)  # noqa: SLF001 - the codemod's copy (it never imports TF)
