"""Make tests/models/reference_erf.npz: erf correctly rounded to float64, by mpmath at 120 bits (an implementation
independent of attn_models.ops.erf and of math.erf), for tests/models/test_erf.py.

Points (float64, seed 0): 3,000 uniform in [0, 6.5], 1,000 uniform in [0, 0.05] (the first grid steps), 500
log-uniform in [1e-320, 1] (subnormals included), and every grid point k/256 and midpoint (k + ½)/256 of [0, 6]
(where the polynomial changes); erf is odd, so the test checks −x too.

Run once, when the points change (the test suite itself needs no mpmath; torch's environment has it)::

    /tmp/torchenv/bin/python tests/models/make_erf_reference.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "reference_erf.npz"


def points() -> np.ndarray:  # -> [n]
    rng = np.random.default_rng(0)
    grid = np.arange(0, 6 * 256 + 1) / 256
    return np.concatenate([rng.uniform(0, 6.5, 3_000), rng.uniform(0, 0.05, 1_000),
                           10.0 ** rng.uniform(-320, 0, 500), grid, grid[:-1] + 0.5 / 256])


def main() -> None:
    import mpmath  # here: collecting this file (pytest's doctests) needs no mpmath

    mpmath.mp.prec = 120
    x = points()
    np.savez_compressed(OUT, x=x, erf=np.array([float(mpmath.erf(mpmath.mpf(float(v)))) for v in x]))
    print(f"wrote {OUT} ({len(x)} points)")


if __name__ == "__main__":
    main()
