"""`tfm.legacy.crf` (TF 1.x's `tf.contrib.crf`) against brute force over every tag path.

For small batches, every tag sequence of each example is enumerated in NumPy: the partition
function is the log-sum-exp of all their scores, the decoded sequence the best of them. The
functions run eagerly and in a TF1 graph (the hosted tier's mode), with the time axis known and
unknown (TF1 chose the one-position path in the graph then), lengths from 0 to the maximum.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfmigrate.runtime import legacy  # noqa: E402

crf = legacy.crf
pytestmark = pytest.mark.tf


def _path_score(unary: np.ndarray, transitions: np.ndarray, tags) -> float:
    return float(sum(unary[t, tag] for t, tag in enumerate(tags)) + sum(transitions[a, b] for a, b in zip(tags, tags[1:])))


def _brute_force(unary: np.ndarray, transitions: np.ndarray, length: int) -> tuple[float, list[int], float]:
    """(log partition, best path, best score) of one example's first `length` positions."""
    if length == 0:
        return 0.0, [], 0.0
    scores = {tags: _path_score(unary, transitions, tags) for tags in itertools.product(range(unary.shape[1]), repeat=length)}
    best = max(scores, key=scores.get)
    values = np.array(list(scores.values()))
    return float(values.max() + np.log(np.exp(values - values.max()).sum())), list(best), scores[best]


def _case(seed: int, batch: int = 4, time: int = 5, tags: int = 3):
    rng = np.random.RandomState(seed)
    unary = rng.randn(batch, time, tags).astype(np.float32)
    transitions = rng.randn(tags, tags).astype(np.float32)
    lengths = np.array([time, 1, 3, 0][:batch], dtype=np.int32)
    tag_indices = rng.randint(0, tags, size=(batch, time)).astype(np.int32)
    return unary, transitions, lengths, tag_indices


def _check(unary, transitions, lengths, tag_indices, got: dict) -> None:
    for b, length in enumerate(lengths):
        log_norm, best, best_score = _brute_force(unary[b], transitions, int(length))
        score = _path_score(unary[b], transitions, list(tag_indices[b, :length])) if length else 0.0
        np.testing.assert_allclose(got["score"][b], score, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got["log_norm"][b], log_norm, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got["likelihood"][b], score - log_norm, rtol=1e-5, atol=1e-5)
        if length:
            assert list(got["decoded"][b, :length]) == best, (b, got["decoded"][b], best)
            assert not got["decoded"][b, length:].any()  # TF1's zeros past the end
            np.testing.assert_allclose(got["best"][b], best_score, rtol=1e-5, atol=1e-5)
            path, value = crf.viterbi_decode(unary[b, :length], transitions)
            assert [int(t) for t in path] == best
            np.testing.assert_allclose(value, best_score, rtol=1e-5, atol=1e-5)


def _ops(unary, tag_indices, lengths, transitions) -> dict:
    log_likelihood, _ = crf.crf_log_likelihood(unary, tag_indices, lengths, transitions)
    decoded, best = crf.crf_decode(unary, transitions, lengths)
    bitmap = tf.one_hot(tag_indices, tf.shape(unary)[2], on_value=True, off_value=False, dtype=tf.bool)
    return {
        "score": crf.crf_sequence_score(unary, tag_indices, lengths, transitions),
        "multitag": crf.crf_multitag_sequence_score(unary, bitmap, lengths, transitions),
        "log_norm": crf.crf_log_norm(unary, lengths, transitions),
        "likelihood": log_likelihood,
        "decoded": decoded,
        "best": best,
    }


@pytest.mark.parametrize("seed", [0, 1])
def test_eager_matches_brute_force(seed: int) -> None:
    unary, transitions, lengths, tag_indices = _case(seed)
    got = {k: v.numpy() for k, v in _ops(tf.constant(unary), tf.constant(tag_indices), tf.constant(lengths), tf.constant(transitions)).items()}
    _check(unary, transitions, lengths, tag_indices, got)
    # one-hot bitmaps: the multitag score is the sequence's own (where it has positions)
    np.testing.assert_allclose(got["multitag"][lengths > 0], got["score"][lengths > 0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("time", [1, 5])
def test_graph_mode_with_the_time_axis_unknown(time: int) -> None:
    unary, transitions, lengths, tag_indices = _case(2, time=time)
    lengths = np.minimum(lengths, time)
    with tf.Graph().as_default():
        u = tf.compat.v1.placeholder(tf.float32, [None, None, 3])
        t = tf.compat.v1.placeholder(tf.int32, [None, None])
        n = tf.compat.v1.placeholder(tf.int32, [None])
        ops = _ops(u, t, n, tf.constant(transitions))
        with tf.compat.v1.Session() as session:
            got = session.run(ops, {u: unary, t: tag_indices, n: lengths})
    _check(unary, transitions, lengths, tag_indices, got)


def test_one_position_known_statically() -> None:
    unary, transitions, lengths, tag_indices = _case(3, time=1)
    lengths = np.minimum(lengths, 1)
    got = {k: v.numpy() for k, v in _ops(tf.constant(unary), tf.constant(tag_indices), tf.constant(lengths), tf.constant(transitions)).items()}
    _check(unary, transitions, lengths, tag_indices, got)


def test_log_likelihood_makes_and_trains_the_transitions_variable() -> None:
    unary, _, lengths, tag_indices = _case(4)
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(1)
        logits = tf.compat.v1.get_variable("logits", initializer=unary)
        with tf.compat.v1.variable_scope("crf_layer"):
            log_likelihood, transitions = crf.crf_log_likelihood(logits, tag_indices, lengths)
        loss = tf.reduce_mean(-log_likelihood)
        step = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        assert transitions.name == "crf_layer/transitions:0"
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            before, start = session.run([loss, transitions])
            for _ in range(20):
                session.run(step)
            after, values = session.run([loss, transitions])
    assert after < before and not np.allclose(values, start)
    # the loss is the brute-force negative log-likelihood at the start
    want = np.mean([_brute_force(unary[b], start, int(n))[0] - (
        _path_score(unary[b], start, list(tag_indices[b, :n])) if n else 0.0) for b, n in enumerate(lengths)])
    np.testing.assert_allclose(before, want, rtol=1e-5)


def test_the_codemod_spells_exactly_these_functions() -> None:
    from tfmigrate import hosted

    assert hosted._CONTRIB_CRF == frozenset(crf.__all__)  # noqa: SLF001 - the codemod's copy (it never imports TF)
