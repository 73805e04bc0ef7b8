"""One preset per worked example in the seed tutorials, each a complete configuration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .attention import apply_mask, softmax
from .config import Config, make_config
from .errors import N_
from .initializers import initialize
from .masks import causal_mask
from .tokens import embed, tokenize

# ---- seed 000 / 003 / 004: 3 inputs, d_model = 4 ---------------------------------------------
SEED_X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]  # [3, 4]
SEED_W_Q = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]  # [4, 3]
SEED_W_K = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]  # [4, 3]
SEED_W_V = [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]  # [4, 3]
SEED_TOKENS = ("input1", "input2", "input3")

# ---- seed 002: the notebook's printed QKᵀ, variances and attention output ----------------------
SEED002_QKT = np.array([
    [-1.36260171, -1.00846343, 0.83830779, -1.10325174],
    [2.76055142, -5.37365317, -5.91054408, 3.86834114],
    [0.83956039, -0.89236221, -1.56808315, 1.9914997],
    [1.4558852, -6.19223184, -4.35573576, 5.09868666],
])  # [4, 4]
SEED002_VAR_Q, SEED002_VAR_K = 1.0062948343438747, 1.0562895664061145
SEED002_OUT = np.array([
    [-0.86809855, -1.18069928, -0.06732257, -0.07734407, 0.90038494, 0.98346644, 1.78747552, 1.74595429],
    [-0.80533354, -0.99471947, -0.08073652, -0.00649675, 0.8041906, 1.04012565, 1.6762444, 1.54688036],
    [-0.49883119, 0.16491485, 0.14500971, 0.44535492, -0.12936482, 1.09460771, 0.7726493, 0.09295474],
    [-0.41214081, 0.49047069, 0.67251614, 0.05135334, -1.39087677, -0.73216931, 0.58833651, 0.32972812],
])  # [4, 8]


@dataclass(frozen=True)
class Preset:
    """A worked example: what it is, where it comes from, and how to build it.

    ``title``, ``source`` and ``note`` are in English, marked for the catalogs: show them with ``_(preset.title)``.
    """

    key: str
    title: str
    source: str
    note: str
    build: Callable[[], Config]


def _seed_000() -> Config:
    return make_config(SEED_TOKENS, SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V)


def _seed_004_unscaled() -> Config:
    return make_config(SEED_TOKENS, SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, scale="none")


def seed_002_qkv() -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # -> [4, 8] x 3
    """Q, K, V that reproduce every number seed 002 prints.

    The notebook draws q, k, v with an unseeded ``np.random.randn`` and prints QKᵀ, var(q), var(k)
    and the causal attention output, not q, k, v themselves. We rebuild them: a seeded q rescaled to
    the printed variance; k solving q kᵀ = QKᵀ, plus a null-space part of q sized to give the
    printed var(k); v = weights⁻¹ · output (the causal weights are lower triangular, invertible).
    """
    rng = np.random.default_rng(0)  # a seed whose minimum-norm k has var(k) below the printed one
    q = rng.standard_normal((4, 8))
    q *= np.sqrt(SEED002_VAR_Q / q.var())
    pinv = np.linalg.pinv(q)  # [8, 4]
    base = pinv @ SEED002_QKT  # [8, 4]: q @ base = QKᵀ
    extra = (np.eye(8) - pinv @ q) @ rng.standard_normal((8, 4))  # [8, 4]: q @ extra = 0
    # var(base + t·extra) = a t² + b t + c; pick the positive root for the printed var(k)
    def var_terms(m):
        return m - m.mean()
    b0, e0 = var_terms(base).ravel(), var_terms(extra).ravel()
    a, b, c = e0 @ e0 / 32, 2 * b0 @ e0 / 32, b0 @ b0 / 32 - SEED002_VAR_K
    t = (-b + np.sqrt(b * b - 4 * a * c)) / (2 * a)
    k = (base + t * extra).T  # [4, 8]
    weights = softmax(apply_mask((q @ k.T) / np.sqrt(8), causal_mask(4)))  # [4, 4]
    v = np.linalg.solve(weights, SEED002_OUT)  # [4, 8]
    return q, k, v


def _seed_002_causal() -> Config:
    q, k, v = seed_002_qkv()
    pick = np.eye(24)  # X = [q | k | v]; each weight picks its 8 columns
    return make_config(
        ("My", "name", "is", "Kishor"), np.hstack([q, k, v]), pick[:, 0:8], pick[:, 8:16], pick[:, 16:24],
        mask_kind="causal",
    )


def _seed_001_sentence() -> Config:
    tokens = tokenize("slow but steady wins the race")
    x = embed(tokens, 10, seed=1)  # [6, 10]
    eye = np.eye(10)
    return make_config(tokens, x, eye, eye, eye)


def _cross_translation() -> Config:
    source = ("le", "chat", "dort")  # X: the sentence read (keys and values)
    target = ("the", "cat", "sleeps")  # Y: the sentence written so far (queries), word i translating source word i
    x = embed(source, 6, seed=0)  # [3, 6]
    y = x + 0.25 * initialize("gaussian", (3, 6), seed=1)  # [3, 6]: each target word near its source word
    eye = np.eye(6)
    return make_config(source, x, eye, eye, eye, y_tokens=target, y=y)


def _additive() -> Config:
    w_1 = initialize("xavier_uniform", (3, 4), seed=41)  # [d_q, d_a]: d_a = 4
    w_2 = initialize("xavier_uniform", (3, 4), seed=42)  # [d_k, d_a]
    v_a = initialize("xavier_uniform", (1, 4), seed=43)  # [1, d_a]
    return make_config(SEED_TOKENS, SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, scale="none", score="additive",
                       w_1=w_1, w_2=w_2, v_a=v_a)


def _seed_003_heads() -> Config:
    w = [initialize("gaussian", (4, 512), seed=s, std=0.5) for s in (31, 32, 33)]  # [4, 8·64] each
    w_o = initialize("xavier_uniform", (512, 4), seed=34)  # [8·64, d_model]
    return make_config(SEED_TOKENS, SEED_X, *w, w_o=w_o, n_heads=8)


PRESETS: dict[str, Preset] = {p.key: p for p in (
    Preset(
        "seed000", N_("3 inputs, d_model 4, scaled by √d_k"), N_("the Chinese, Korean and English tutorials' example"),
        N_("The example three tutorials work through by hand. The Chinese one divides by √(number of tokens) = √3, "
        "which equals √d_k here only because both are 3."), _seed_000,
    ),
    Preset(
        "seed004_unscaled", N_("3 inputs, d_model 4, no scaling"),
        N_("the English illustrated and Korean Python tutorials"),
        N_("The English illustrated tutorial takes the softmax of the raw scores [[2, 4, 4], [4, 16, 12], "
        "[4, 12, 10]]; the Korean Python tutorial rounds √3 down to 1, the same thing."), _seed_004_unscaled,
    ),
    Preset(
        "seed002_causal", N_("4 tokens, d_k = d_v = 8, causal mask"), N_("the English notebook “Transformer”"),
        N_("The notebook's Q, K, V are random and not printed; X holds Q, K, V side by side and the "
        "weights pick them out, rebuilt so QKᵀ, the variances, the weights and the output match the "
        "printed digits."), _seed_002_causal,
    ),
    Preset(
        "seed001_sentence", N_('"slow but steady wins the race", width 10, Q = K = V'),
        N_("the Korean blog post's sentence"),
        N_("Deterministic embeddings of width 10 (the blog post uses a random Keras Embedding); identity "
        "projections, so Q = K = V = X, scaled by √10."), _seed_001_sentence,
    ),
    Preset(
        "seed003_heads", N_("3 inputs, 8 heads × 64 → 512"), N_("the Korean Python tutorial's last steps"),
        N_("The tutorial's 3 inputs with W_Q, W_K, W_V widened to 8 heads of 64 columns (seeded Gaussian, "
        "std 0.5); the heads concatenate to 3 × 512 and W_O projects back to d_model = 4."),
        _seed_003_heads,
    ),
    Preset(
        "cross_translation", N_("cross-attention: “the cat sleeps” reads “le chat dort”"),
        N_("after the Korean Python tutorial's translation step"),
        N_("Encoder-decoder attention: the queries come from the sentence being written (Y), the keys and values "
        "from the sentence being translated (X). Each target word's input lies near its source word's, so the "
        "weights align the two sentences word by word."), _cross_translation,
    ),
    Preset(
        "additive", N_("3 inputs, additive (Bahdanau) scores"), N_("the tutorials' example, with Bahdanau's scores"),
        N_("The tutorials' inputs and W_Q, W_K, W_V, but each score is v_a · tanh(q W_1 + k W_2), with W_1, W_2 of "
        "4 feature columns and v_a seeded (Xavier uniform), and no scaling, as in Bahdanau's attention."),
        _additive,
    ),
)}

DEFAULT_PRESET = "seed000"


def load_preset(key: str) -> Config:
    """A fresh configuration for the preset ``key``."""
    return PRESETS[key].build()
