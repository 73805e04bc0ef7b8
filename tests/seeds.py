"""The seed tutorials' worked examples, written out once for every test: their matrices and printed results.

Copied by hand from the seeds (/work/shared/seeds/*.txt), never computed and never read from
attn_core.presets: the presets are checked against these numbers (tests/core/test_presets.py,
tests/core/test_seeds.py), not the other way round.

Every matrix is a plain nested list of rows, as the seeds write them (JSON-ready; wrap it in
``np.array(m, dtype=float)`` for arithmetic). Shapes are [rows, columns]. Treat them as read-only.

- seed 000: 000_c1df7a97e0b93a5c.txt (Chinese; numpy in float32, scores divided by √3)
- seed 001: 001_f9bee8540deac39e.txt (Korean; random embeddings, nothing numeric printed)
- seed 002: 002_b1af577879c95d98.txt (English notebook; random q, k, v, causal mask, 8 decimals printed)
- seed 003: 003_29a10d6e47c4dec1.txt (Korean; seed 000's matrices, k_d = 1, a Q/K/V table, 8 heads of 64)
- seed 004: 004_fb675548c476237e.txt (English; torch, seed 000's matrices, unscaled scores)
"""

from __future__ import annotations

import numpy as np

# ---- seed 000: 3 tokens, d_model 4, d_k = d_v = 3 --------------------------------------------------
# Seeds 003 (Step 1, Step 2) and 004 ("Step 1: Prepare Inputs", "Step 2: Initialize Weights") write out
# the same X, W_Q, W_K, W_V.

#: [3, 4] "inputs = np.vstack([input_1,input_2,input_3])" (#### 輸入)
SEED000_X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]
#: [4, 3] ``wq`` (#### 權重)
SEED000_W_Q = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
#: [4, 3] ``wk`` (#### 權重)
SEED000_W_K = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]
#: [4, 3] ``wv`` (#### 權重)
SEED000_W_V = [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]

# [3, 3] each: the query, key and value representations printed under "Calculate QKV representations";
# seed 003 prints the same rows in its |input|Q|K|V| table, seed 004 prints them with torch (Step 3)
SEED000_Q = [[1, 0, 2], [2, 2, 2], [2, 1, 3]]
SEED000_K = [[0, 1, 1], [4, 4, 0], [2, 3, 1]]
SEED000_V = [[1, 2, 3], [2, 8, 0], [2, 6, 3]]
#: the divisor printed under "Calculate QKV representations": [1.7320508], √3 in float32
SEED000_DIVISOR = 1.7320508

#: [3, 3] softmax(QKᵀ/√3), printed under "Calculate Attention scores" (float32)
SEED000_WEIGHTS = [
    [1.3612579e-01, 4.3193707e-01, 4.3193707e-01],
    [8.9044782e-04, 9.0884298e-01, 9.0266980e-02],
    [7.4448888e-03, 7.5470752e-01, 2.3784746e-01],
]
#: [3, 3] the attention output (weights @ V), printed under "Calculate Attention" (float32)
SEED000_OUTPUT = [
    [1.8638741, 6.3193707, 1.7041886],
    [1.9991105, 7.8141265, 0.27347228],
    [1.9925548, 7.479635, 0.73587704],
]

# ---- seed 001: "slow but steady wins the race", embedding dim 10, Q = K = V = the embeddings -------

#: the example sentence of "3.1 Set-up" (6 tokens; its embeddings are random and not printed)
SEED001_SENTENCE = "slow but steady wins the race"

# ---- seed 002: 4 tokens, d_k = d_v = 8, causal mask (8 decimals printed) ---------------------------

#: the example sentence named in its first cell ("L : length of the sentence, ex: My name is Kishor")
SEED002_TOKENS = ("My", "name", "is", "Kishor")
#: [4, 4] ``np.matmul(q,k.T)`` (In [66])
SEED002_QKT = [
    [-1.36260171, -1.00846343, 0.83830779, -1.10325174],
    [2.76055142, -5.37365317, -5.91054408, 3.86834114],
    [0.83956039, -0.89236221, -1.56808315, 1.9914997],
    [1.4558852, -6.19223184, -4.35573576, 5.09868666],
]
# ``q.var(), k.var(), np.matmul(q, k.T).var()`` (In [67]) and ``scaled.var()`` (In [68])
SEED002_VAR_Q = 1.0062948343438747
SEED002_VAR_K = 1.0562895664061145
SEED002_VAR_QKT = 11.068915998163352
SEED002_VAR_SCALED = 1.383614499770419
#: [4, 4] ``scaled = np.matmul(q, k.T) / math.sqrt(d_k)`` (In [69])
SEED002_SCALED = [
    [-0.48175246, -0.35654566, 0.29638656, -0.39005839],
    [0.97600231, -1.8998733, -2.0896929, 1.36766513],
    [0.29682942, -0.31549769, -0.55440112, 0.70410147],
    [0.51473315, -2.18928456, -1.53998515, 1.80265795],
]
#: [4, 4] the additive causal mask (In [71])
SEED002_ADDITIVE_MASK = [[0, -np.inf, -np.inf, -np.inf], [0, 0, -np.inf, -np.inf], [0, 0, 0, -np.inf], [0, 0, 0, 0]]
#: [4, 4] ``np.exp(scaled + mask)`` (In [74])
SEED002_EXP = [
    [0.61769995, 0.0, 0.0, 0.0],
    [2.65382585, 0.14958757, 0.0, 0.0],
    [1.34558575, 0.72942576, 0.57441617, 0.0],
    [1.67319195, 0.11199685, 0.21438429, 6.06574854],
]
#: [4] its row sums (In [74])
SEED002_EXP_SUMS = [0.61769995, 2.80341342, 2.64942768, 8.06532162]
#: [4, 4] ``attention = softmax(scaled + mask)`` (In [75])
SEED002_WEIGHTS = [
    [1.0, 0.0, 0.0, 0.0],
    [0.94664092, 0.05335908, 0.0, 0.0],
    [0.50787789, 0.27531446, 0.21680764, 0.0],
    [0.20745508, 0.01388622, 0.026581, 0.7520777],
]
#: [4, 8] ``new_v = np.matmul(attention, v)`` (In [76])
SEED002_NEW_V = [
    [-0.86809855, -1.18069928, -0.06732257, -0.07734407, 0.90038494, 0.98346644, 1.78747552, 1.74595429],
    [-0.80533354, -0.99471947, -0.08073652, -0.00649675, 0.8041906, 1.04012565, 1.6762444, 1.54688036],
    [-0.49883119, 0.16491485, 0.14500971, 0.44535492, -0.12936482, 1.09460771, 0.7726493, 0.09295474],
    [-0.41214081, 0.49047069, 0.67251614, 0.05135334, -1.39087677, -0.73216931, 0.58833651, 0.32972812],
]

# ---- seed 003: seed 000's matrices as a table, k_d = 1 ----------------------------------------------

#: the |input|Q|K|V| table after Step 3: token -> ([3] Q row, [3] K row, [3] V row)
SEED003_TABLE = {
    "input1": ([1, 0, 2], [0, 1, 1], [1, 2, 3]),
    "input2": ([2, 2, 2], [4, 4, 0], [2, 8, 0]),
    "input3": ([2, 1, 3], [2, 3, 1], [2, 6, 3]),
}

# ---- seed 004: seed 000's matrices in torch, unscaled --------------------------------------------------

#: [3, 3] ``attn_scores = querys @ keys.T`` (Step 4), not divided by anything
SEED004_SCORES = [[2, 4, 4], [4, 16, 12], [4, 12, 10]]
#: [3, 3] ``torch.nn.functional.softmax(attn_scores, dim=-1)`` (Step 5) as torch prints it: 5 significant digits
SEED004_SOFTMAX_PRINTED = [
    ["6.3379e-02", "4.6831e-01", "4.6831e-01"],
    ["6.0337e-06", "9.8201e-01", "1.7986e-02"],
    ["2.9539e-04", "8.8054e-01", "1.1917e-01"],
]
#: [3, 3] the same digits as numbers
SEED004_SOFTMAX = [[float(w) for w in row] for row in SEED004_SOFTMAX_PRINTED]
