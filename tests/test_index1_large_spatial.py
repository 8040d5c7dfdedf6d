"""The singularity test of the sparse index-1 saddle-point factorization
(csrc/mbs/index1_sparse.c factor_S) on well-posed 3-D chains whose saddle-point
matrix has pivots spanning many decades (issue 22: index1 with dop853 failed on the
1000-link spatial chain of bench_joint_peers.py with "The saddle-point matrix ... is
singular" at t = 0.298 s while KLU's condition estimate of that matrix was 4e5: the
test was the pivot ratio min|u_kk| / max|u_kk| <= 64 N eps, which falls with N on a
long chain while the threshold grows with N).

The cheap regression: a 10-rod chain whose last rod is 1e11 / 1e12 times heavier than
the others (mbint.testing.spatial_chain, tip_scale).  The problem is well posed --
the dense path (LAPACK LU of the symmetrically scaled matrix, index1.c) integrates
it -- but the sparse path refused it at t = 0 before the fix.  Oracle: the dense
path's trajectory (independent linear algebra) and the acceleration-level
constraint residual Phi_q q'' - gamma."""
import numpy as np
import pytest

import mbint
from mbint.testing.spatial_chain import spatial_chain


@pytest.mark.parametrize("tip_scale", [1e11, 1e12])
def test_heavy_tip_chain_runs_sparse_and_matches_dense(tip_scale):
    m = spatial_chain(10, tip_scale=tip_scale)  # nq = 70 >= 60: "auto" would be sparse
    runs = {}
    for la in ("sparse", "dense"):
        tr = mbint.simulate(m, (0.0, 0.1), "dop853", formulation="index1", rtol=1e-8,
                            atol=1e-8, linear_algebra=la)
        assert tr.success, (la, tr.message)
        assert tr.options["linear_algebra"] == la
        assert np.max(tr.violation().acceleration) < 1e-9, la
        runs[la] = tr.q[:, -1]
    # the same ODE to round-off: the two paths differ only in the linear algebra
    assert np.max(np.abs(runs["sparse"] - runs["dense"])) < 1e-10

