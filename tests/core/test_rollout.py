"""attn_core.rollout: attention rollout against the paper's own code, copied here, and several queries summed against
numpy written out; their properties, padding, and the messages for bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attn_models
from attn_core import AttentionInputError, attention_rollout, head_mean, rollout_row, softmax, summed_attention

from .. import minilm, tiny_bert


# ---- the reference: copied verbatim ------------------------------------------------------------------------------
# From github.com/samiraabnar/attention_flow, attention_graph_util.py, commit
# 8044f5312f4ced18d4cf66ffe28f6c045629b4ed (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers").
# Its callers average the heads first: run_bert_sv.py's get_joint_relevance writes
#     att_sum_heads = full_att_mat.sum(axis=1) / full_att_mat.shape[1]
#     joint_attentions = compute_joint_attention(att_sum_heads, add_residual=True)
# and the notebooks (bert_viz.ipynb) add the residual themselves, then call it with add_residual=False.
def compute_joint_attention(att_mat, add_residual=True):
    if add_residual:
        residual_att = np.eye(att_mat.shape[1])[None,...]
        aug_att_mat = att_mat + residual_att
        aug_att_mat = aug_att_mat / aug_att_mat.sum(axis=-1)[...,None]
    else:
       aug_att_mat =  att_mat

    joint_attentions = np.zeros(aug_att_mat.shape)

    layers = joint_attentions.shape[0]
    joint_attentions[0] = aug_att_mat[0]
    for i in np.arange(1,layers):
        joint_attentions[i] = aug_att_mat[i].dot(joint_attentions[i-1])

    return joint_attentions
# ---- end of the copied code --------------------------------------------------------------------------------------


def reference(full_att_mat: np.ndarray, residual: bool) -> np.ndarray:  # [L, H, n, n] -> [L, n, n]
    """The paper's rollout as its run_bert_sv.py calls it: heads averaged, then compute_joint_attention."""
    att_sum_heads = full_att_mat.sum(axis=1) / full_att_mat.shape[1]
    return compute_joint_attention(att_sum_heads, add_residual=residual)


def random_weights(rng: np.random.Generator, layers: int, heads: int, n: int, *, causal: bool = False) -> np.ndarray:
    scores = rng.standard_normal((layers, heads, n, n)) * 3
    if causal:
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    return softmax(scores)  # [L, H, n, n], rows sum to 1


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 3, 4), (2, 1, 2), (3, 4, 5), (6, 12, 17), (12, 2, 40)])
@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_rollout_is_the_papers_compute_joint_attention(shape, residual, causal):
    a = random_weights(np.random.default_rng(sum(shape)), *shape, causal=causal)
    assert np.array_equal(attention_rollout(a, residual=residual), reference(a, residual))


def test_the_notebooks_way_residual_added_before_the_call_is_the_same():
    a = random_weights(np.random.default_rng(3), 4, 3, 6)
    res_att_mat = a.sum(axis=1) / 3  # bert_viz.ipynb: heads averaged, + I, rows renormalised, then add_residual=False
    res_att_mat = res_att_mat + np.eye(res_att_mat.shape[1])[None, ...]
    res_att_mat = res_att_mat / res_att_mat.sum(axis=-1)[..., None]
    assert np.array_equal(attention_rollout(a), compute_joint_attention(res_att_mat, add_residual=False))


def test_the_order_is_the_last_layer_on_the_left():
    a = random_weights(np.random.default_rng(4), 3, 2, 5)
    aug = a.mean(axis=1) + np.eye(5)
    aug /= aug.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(attention_rollout(a)[-1], aug[2] @ aug[1] @ aug[0], rtol=0, atol=1e-14)
    assert not np.allclose(attention_rollout(a)[-1], aug[0] @ aug[1] @ aug[2])


def test_rollout_on_minilms_attentions_is_the_papers():
    model = minilm.model()
    out = model.forward("The cat sat on the mat because it was tired.")
    for residual in (True, False):
        assert np.array_equal(attention_rollout(out.attentions, residual=residual),
                              reference(out.attentions, residual))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return attn_models.load(str(tiny_bert.build(tmp_path_factory.mktemp("tiny"))))


def test_rollout_on_a_padded_run_is_the_papers_on_the_real_tokens(tiny):
    out = tiny.forward(tiny_bert.SENTENCE, 12)
    assert out.is_pad.any() and not out.is_pad.all()
    real = ~out.is_pad
    joint = attention_rollout(out.attentions, is_pad=out.is_pad)
    want = reference(out.attentions[:, :, real][:, :, :, real], True)  # the paper's on the real tokens alone
    assert np.array_equal(joint[:, real][:, :, real], want)
    assert (joint[:, out.is_pad] == 0).all() and (joint[:, :, out.is_pad] == 0).all()
    full = reference(out.attentions, True)  # on every token, pads included: the real rows are the same
    np.testing.assert_allclose(joint[:, real], full[:, real], rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 3, 4), (3, 4, 5), (6, 12, 17), (12, 2, 40)])
@pytest.mark.parametrize("residual", [True, False])
def test_one_tokens_row_read_from_the_left_is_the_papers_row(shape, residual):
    a = random_weights(np.random.default_rng(sum(shape) + 1), *shape, causal=shape[0] == 3)
    want = reference(a, residual)[-1]  # [n, n]
    for q in range(shape[-1]):
        np.testing.assert_allclose(rollout_row(a, q, residual=residual), want[q], rtol=0, atol=1e-12)


def test_one_tokens_row_on_a_padded_run_and_minilms(tiny):
    out = tiny.forward(tiny_bert.SENTENCE, 12)
    joint = attention_rollout(out.attentions, is_pad=out.is_pad)[-1]
    for q in np.flatnonzero(~out.is_pad):
        np.testing.assert_allclose(rollout_row(out.attentions, q, is_pad=out.is_pad), joint[q], rtol=0, atol=1e-12)
    a = minilm.model().forward("The cat sat on the mat.").attentions
    np.testing.assert_allclose(rollout_row(a[:3], 0), reference(a[:3], True)[-1, 0], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("query", "is_pad"), [(3, None), (-1, None), (1.0, None), (True, None),
                                                (2, np.array([False, False, True]))])
def test_one_tokens_row_names_a_query_that_is_not_a_token(query, is_pad):
    with pytest.raises(AttentionInputError) as err:
        rollout_row(np.full((1, 1, 3, 3), 1 / 3), query, is_pad=is_pad)
    assert str(err.value) == f"query: {query!r} is not the position of a token (0 … 2, not padding)."


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 9), st.integers(0, 2**32 - 1), st.booleans())
def test_rows_sum_to_one_with_the_residual_and_stay_causal(layers, heads, n, seed, causal):
    a = random_weights(np.random.default_rng(seed), layers, heads, n, causal=causal)
    joint = attention_rollout(a)
    np.testing.assert_allclose(joint.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert (joint >= 0).all()
    if causal:  # a token only ever reads itself and the tokens before it
        assert (np.triu(joint, 1) == 0).all()
    np.testing.assert_allclose(attention_rollout(a, residual=False).sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_a_fully_masked_row_keeps_to_itself_with_the_residual():
    a = random_weights(np.random.default_rng(5), 2, 2, 3)
    a[:, :, 1] = 0.0  # query 1 has no key it may attend to
    joint = attention_rollout(a)
    assert joint[:, 1].tolist() == [[0.0, 1.0, 0.0]] * 2
    assert (attention_rollout(a, residual=False)[:, 1] == 0).all()


def test_head_mean_is_the_sum_over_heads_divided():
    a = random_weights(np.random.default_rng(6), 2, 3, 4)
    assert np.array_equal(head_mean(a), (a[:, 0] + a[:, 1] + a[:, 2]) / 3)


# ---- several queries summed ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("queries", [[0], [2, 0], [1, 3, 4], (4,), np.array([3, 1])])
def test_summed_attention_is_the_rows_added_up_or_averaged(queries):
    w = random_weights(np.random.default_rng(7), 1, 3, 5)[0]  # [H, n_q, n_k]
    want_sum = np.zeros((3, 5))
    for h in range(3):
        for q in queries:
            for k in range(5):
                want_sum[h, k] += w[h, q, k]
    np.testing.assert_allclose(summed_attention(w, queries), want_sum, rtol=0, atol=1e-15)
    np.testing.assert_allclose(summed_attention(w, queries, "mean"), want_sum / len(queries), rtol=0, atol=1e-15)
    np.testing.assert_allclose(summed_attention(w[0], queries), want_sum[0], rtol=0, atol=1e-15)
    assert np.allclose(summed_attention(w, queries, "mean").sum(axis=-1), 1.0)  # a mean of rows is a row


@pytest.mark.parametrize(("weights", "queries", "how", "says"), [
    (np.ones((2, 2)) / 2, [], "sum", "queries: choose at least one query token."),
    (np.ones((2, 2)) / 2, [0, 0], "sum", "queries: row 0 is chosen twice; each query counts once."),
    (np.ones((2, 2)) / 2, [2], "sum", "queries: row 2 is outside 0 … 1 (there are 2 queries)."),
    (np.ones((2, 2)) / 2, [-1], "sum", "queries: row -1 is outside 0 … 1 (there are 2 queries)."),
    (np.ones((2, 2)) / 2, [0.5], "sum", "queries: 0.5 is not a whole number (a query's row)."),
    (np.ones((2, 2)) / 2, [True], "sum", "queries: True is not a whole number (a query's row)."),
    (np.ones((2, 2)) / 2, "01", "sum", "queries: expected a list of query rows, got '01'."),
    (np.ones((2, 2)) / 2, [0], "max", "how: must be “sum” or “mean”, got 'max'."),
    (np.ones(3), [0], "sum", "weights: expected at least 2 dimensions (…, queries, keys), none empty; got shape (3,)."),
])
def test_summed_attention_names_what_is_wrong(weights, queries, how, says):
    with pytest.raises(AttentionInputError) as err:
        summed_attention(weights, queries, how)
    assert str(err.value) == says


@pytest.mark.parametrize(("attentions", "is_pad", "says"), [
    (np.ones((2, 2, 2)), None, "attentions: expected shape (layers, heads, n, n) with n queries and n keys, none "
                               "empty; got (2, 2, 2)."),
    (np.full((1, 1, 2, 2), np.nan), None, "attentions: layer 0, head 0, cell (0, 0) is not a finite number."),
    (np.ones((1, 2, 2, 2)), None, "attentions: layer 0, head 0, row 0 sums to 2 (or has a negative weight); "
                                  "attention weights are ≥ 0 and each row sums to 1, or to 0 when every key is "
                                  "masked."),
    (np.full((1, 1, 2, 2), 0.5), np.array([True, True]), "is_pad: every token is padding; rollout needs at least one "
                                                         "real token."),
    (np.full((1, 1, 2, 2), 0.5), np.array([1, 0]), "is_pad: expected 2 true/false values, one per token; got dtype "
                                                   "int64 and shape (2,)."),
])
def test_rollout_names_what_is_wrong(attentions, is_pad, says):
    with pytest.raises(AttentionInputError) as err:
        attention_rollout(attentions, is_pad=is_pad)
    assert str(err.value) == says
