"""`tfm.legacy.crf`: TF 1.x's `tf.contrib.crf`, the linear-chain CRF, on current TensorFlow.

TF 2 dropped `tf.contrib`, and TensorFlow Addons (where `tfa.text` took the CRF) no longer
installs with current TF. Sequence taggers (BiLSTM-CRF NER programs, BERT taggers) call
`crf_log_likelihood` for their loss and `crf_decode` for their predictions, usually inside a
model_fn the hosted tier runs in TF1 graph mode. The functions here take TF 1.15's arguments and
compute what TF 1.15 computed, step for step where it matters to the numbers:

- the forward algorithm (`crf_log_norm`) runs over positions 1..length-1, each sequence's alphas
  kept as they were past its end (TF1 ran a `dynamic_rnn` with `sequence_length=length - 1`),
  then takes a log-sum-exp over the last alphas; a sequence of length 0 gets 0;
- a maximum length of 1 (known statically, else decided in the graph) takes TF1's short path;
- `crf_log_likelihood(..., transition_params=None)` makes the `transitions` variable with
  `get_variable` in the current variable scope, as TF1 did, so TF1 checkpoints load;
- `crf_decode` is Viterbi in the graph: backpointers forward, the best last tag, the tags back
  (0 past a sequence's end), and the best score.

`viterbi_decode` is the NumPy decoder TF1 offered for use outside the graph. (TF1's three
`Crf*RnnCell` classes, the steps of its `dynamic_rnn`s, are not here: the loops are `tf.scan`s.)
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

__all__ = [
    "crf_binary_score", "crf_decode", "crf_log_likelihood", "crf_log_norm", "crf_multitag_sequence_score",
    "crf_sequence_score", "crf_unary_score", "viterbi_decode",
]


def _one_position_or_more(inputs, one, more):
    """TF1's `smart_cond(max_seq_len == 1, one, more)`: decided now when the length is static."""
    static = tf.compat.dimension_value(inputs.shape[1])
    if static is not None:
        return one() if static == 1 else more()
    return tf.cond(tf.equal(tf.shape(inputs)[1], 1), one, more)


def _zero_where_empty(values, sequence_lengths):
    return tf.where(tf.less_equal(sequence_lengths, 0), tf.zeros_like(values), values)


def _less_one(sequence_lengths):
    return tf.maximum(tf.constant(0, dtype=sequence_lengths.dtype), sequence_lengths - 1)


def _time_major_steps(rest, steps):
    """`rest` ([batch, time, tags]) time-major, and for each time which sequences are still in it."""
    keep = tf.transpose(tf.sequence_mask(steps, maxlen=tf.shape(rest)[1]), [1, 0])
    return tf.transpose(rest, [1, 0, 2]), keep


def _forward_alphas(rest, first, transition_params, steps):
    """The forward algorithm's alphas after each sequence's first `steps` positions of `rest`."""
    transitions = tf.expand_dims(transition_params, 0)

    def step(alphas, elems):
        unary, on = elems
        new = unary + tf.reduce_logsumexp(tf.expand_dims(alphas, 2) + transitions, [1])
        return tf.where(tf.expand_dims(on, 1), new, alphas)

    return tf.scan(step, _time_major_steps(rest, steps), initializer=first)[-1]


def _viterbi_forward(rest, first, transition_params, steps):
    """Viterbi's forward pass: backpointers ([batch, time, tags], 0 past each sequence's end) and
    the last scores."""
    transitions = tf.expand_dims(transition_params, 0)

    def step(carry, elems):
        score, _ = carry
        unary, on = elems
        candidates = tf.expand_dims(score, 2) + transitions
        new = unary + tf.reduce_max(candidates, [1])
        pointers = tf.cast(tf.argmax(candidates, 1), tf.int32)
        on = tf.expand_dims(on, 1)
        return tf.where(on, new, score), tf.where(on, pointers, tf.zeros_like(pointers))

    scores, pointers = tf.scan(
        step, _time_major_steps(rest, steps), initializer=(first, tf.zeros_like(first, dtype=tf.int32)))
    return tf.transpose(pointers, [1, 0, 2]), scores[-1]


def _viterbi_backward(pointers, last_tags, steps):
    """Follows the (per sequence reversed) backpointers from `last_tags` ([batch, 1]): the tags
    before it, [batch, time, 1], 0 past each sequence's end."""
    batch = tf.range(tf.shape(pointers)[0])

    def step(carry, elems):
        tags, _ = carry
        row, on = elems
        new = tf.expand_dims(tf.gather_nd(row, tf.stack([batch, tf.squeeze(tags, [1])], axis=1)), -1)
        on = tf.expand_dims(on, 1)
        return tf.where(on, new, tags), tf.where(on, new, tf.zeros_like(new))

    _, tags = tf.scan(step, _time_major_steps(pointers, steps), initializer=(last_tags, tf.zeros_like(last_tags)))
    return tf.transpose(tags, [1, 0, 2])


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalized score of each tag sequence: [batch]."""
    inputs, tag_indices = tf.convert_to_tensor(inputs), tf.convert_to_tensor(tag_indices)
    sequence_lengths = tf.convert_to_tensor(sequence_lengths)

    def one():
        batch_size = tf.shape(inputs, out_type=tag_indices.dtype)[0]
        examples = tf.reshape(tf.range(batch_size, dtype=tag_indices.dtype), [-1, 1])
        scores = tf.gather_nd(tf.squeeze(inputs, [1]), tf.concat([examples, tag_indices], axis=1))
        return _zero_where_empty(scores, sequence_lengths)

    def more():
        return crf_unary_score(tag_indices, sequence_lengths, inputs) + crf_binary_score(
            tag_indices, sequence_lengths, transition_params)

    return _one_position_or_more(inputs, one, more)


def crf_multitag_sequence_score(inputs, tag_bitmap, sequence_lengths, transition_params):
    """The unnormalized score of all tag sequences `tag_bitmap` ([batch, time, tags], bool) allows."""
    inputs = tf.convert_to_tensor(inputs)
    filtered = tf.where(tag_bitmap, inputs, tf.fill(tf.shape(inputs), float("-inf")))
    return _one_position_or_more(
        inputs,
        lambda: tf.reduce_logsumexp(filtered, axis=[1, 2], keepdims=False),
        lambda: crf_log_norm(filtered, sequence_lengths, transition_params),
    )


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """The log partition function of each sequence: [batch]."""
    inputs, sequence_lengths = tf.convert_to_tensor(inputs), tf.convert_to_tensor(sequence_lengths)
    first = tf.squeeze(tf.slice(inputs, [0, 0, 0], [-1, 1, -1]), [1])

    def one():
        return _zero_where_empty(tf.reduce_logsumexp(first, [1]), sequence_lengths)

    def more():
        rest = tf.slice(inputs, [0, 1, 0], [-1, -1, -1])
        alphas = _forward_alphas(rest, first, transition_params, _less_one(sequence_lengths))
        return _zero_where_empty(tf.reduce_logsumexp(alphas, [1]), sequence_lengths)

    return _one_position_or_more(inputs, one, more)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """(log-likelihood of each tag sequence [batch], the transition matrix): the matrix is the
    `transitions` variable of the current variable scope when none is given."""
    inputs = tf.convert_to_tensor(inputs)
    num_tags = tf.compat.dimension_value(inputs.shape[2])
    if transition_params is None:
        transition_params = tf.compat.v1.get_variable("transitions", [num_tags, num_tags])
    sequence_scores = crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params)
    log_norm = crf_log_norm(inputs, sequence_lengths, transition_params)
    return sequence_scores - log_norm, transition_params


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """The sum of each sequence's unary potentials at its tags, within its length: [batch]."""
    inputs, tag_indices = tf.convert_to_tensor(inputs), tf.convert_to_tensor(tag_indices)
    batch_size, max_seq_len, num_tags = tf.shape(inputs)[0], tf.shape(inputs)[1], tf.shape(inputs)[2]
    offsets = tf.expand_dims(tf.range(batch_size) * max_seq_len * num_tags, 1)
    offsets += tf.expand_dims(tf.range(max_seq_len) * num_tags, 0)
    if tag_indices.dtype == tf.int64:
        offsets = tf.cast(offsets, tf.int64)
    picked = tf.gather(tf.reshape(inputs, [-1]), tf.reshape(offsets + tag_indices, [-1]))
    unary = tf.reshape(picked, [batch_size, max_seq_len])
    masks = tf.sequence_mask(sequence_lengths, maxlen=tf.shape(tag_indices)[1], dtype=tf.float32)
    return tf.reduce_sum(unary * masks, 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """The sum of each sequence's transition potentials between its tags, within its length: [batch]."""
    tag_indices, transition_params = tf.convert_to_tensor(tag_indices), tf.convert_to_tensor(transition_params)
    num_tags = tf.compat.dimension_value(transition_params.shape[0])
    num_transitions = tf.shape(tag_indices)[1] - 1
    starts = tf.slice(tag_indices, [0, 0], [-1, num_transitions])
    ends = tf.slice(tag_indices, [0, 1], [-1, num_transitions])
    binary = tf.gather(tf.reshape(transition_params, [-1]), starts * num_tags + ends)
    masks = tf.sequence_mask(sequence_lengths, maxlen=tf.shape(tag_indices)[1], dtype=tf.float32)
    return tf.reduce_sum(binary * tf.slice(masks, [0, 1], [-1, -1]), 1)


def crf_decode(potentials, transition_params, sequence_length):
    """(the best tag sequence [batch, time] int32, 0 past each length; its score [batch])."""
    potentials, sequence_length = tf.convert_to_tensor(potentials), tf.convert_to_tensor(sequence_length)

    def one():
        squeezed = tf.squeeze(potentials, [1])
        tags = tf.expand_dims(tf.argmax(squeezed, axis=1), 1)
        return tf.cast(tags, dtype=tf.int32), tf.reduce_max(squeezed, axis=1)

    def more():
        first = tf.squeeze(tf.slice(potentials, [0, 0, 0], [-1, 1, -1]), axis=[1])
        rest = tf.slice(potentials, [0, 1, 0], [-1, -1, -1])
        steps = _less_one(sequence_length)
        pointers, last_score = _viterbi_forward(rest, first, transition_params, steps)
        pointers = tf.reverse_sequence(pointers, steps, seq_axis=1, batch_axis=0)
        last_tag = tf.expand_dims(tf.cast(tf.argmax(last_score, axis=1), dtype=tf.int32), axis=-1)
        earlier = tf.squeeze(_viterbi_backward(pointers, last_tag, steps), axis=[2])
        tags = tf.reverse_sequence(tf.concat([last_tag, earlier], axis=1), sequence_length, seq_axis=1, batch_axis=0)
        return tags, tf.reduce_max(last_score, axis=1)

    return _one_position_or_more(potentials, one, more)


def viterbi_decode(score, transition_params):
    """(the best tag sequence as a list of ints, its score) for one sequence's [time, tags]
    unary potentials, in NumPy (TF1's decoder for use outside the graph)."""
    score, transition_params = np.asarray(score), np.asarray(transition_params)
    best = np.zeros_like(score)
    pointers = np.zeros_like(score, dtype=np.int32)
    best[0] = score[0]
    for t in range(1, score.shape[0]):
        candidates = np.expand_dims(best[t - 1], 1) + transition_params
        best[t] = score[t] + np.max(candidates, 0)
        pointers[t] = np.argmax(candidates, 0)
    path = [np.argmax(best[-1])]
    for row in pointers[:0:-1]:
        path.append(row[path[-1]])
    path.reverse()
    return path, np.max(best[-1])
