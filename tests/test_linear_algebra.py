"""The linear_algebra setting of models and simulate (issue 13): "auto", "dense",
"sparse" (csrc/mbs/index1_sparse.c through _core.mech_set_linalg and mech_simulate).

The sparse and the dense index-1 formulation are the same mathematics: the same run
agrees to the tolerance level (not bits: different factorizations) and takes the same
number of steps within 10 %; "auto" picks sparse from mbint.SPARSE_MIN_NQ coordinates
on planar models; bad settings are ValueErrors; sparse on a mechanism without sparse
kernels says so.  The large-model rank check of check_initial_conditions (the envelope
LDL^T of Phi_q Phi_q^T, no SVD) still names a dependent row."""
import numpy as np
import pytest

import mbint
from mbint import models
from mbint.mbs.simulate import check_initial_conditions


def test_sparse_and_dense_runs_agree():
    m = models.pendulum_chain(12, k=50.0, c=0.5, angle=-0.3)
    runs = {}
    for mode in ("dense", "sparse"):
        for method in ("radau_iia", "bdf", "rodas4", "cvode_bdf"):
            tr = mbint.simulate(m, (0, 0.5), method, rtol=1e-8, atol=1e-8,
                                linear_algebra=mode, t_eval=[0.5])
            assert tr.success, tr.message
            assert tr.options["linear_algebra"] == mode
            runs[mode, method] = tr
    for method in ("radau_iia", "bdf", "rodas4", "cvode_bdf"):
        d, s = runs["dense", method], runs["sparse", method]
        assert np.abs(d.q[:, -1] - s.q[:, -1]).max() < 1e-6, method
        nd, ns = d.stats["nsteps"], s.stats["nsteps"]
        assert abs(nd - ns) <= 0.1 * nd + 2, (method, nd, ns)
    # and both are right: against a tight dense reference
    ref = mbint.simulate(m, (0, 0.5), "radau_iia", rtol=1e-12, atol=1e-12, t_eval=[0.5],
                         linear_algebra="dense")
    for key, tr in runs.items():
        assert np.abs(tr.q[:, -1] - ref.q[:, -1]).max() < 1e-5, key


def test_auto_threshold_and_model_setting():
    small = models.pendulum_chain(mbint.SPARSE_MIN_NQ // 3 - 1)   # nq just below
    large = models.pendulum_chain(-(-mbint.SPARSE_MIN_NQ // 3))   # nq at or above
    assert small.nq < mbint.SPARSE_MIN_NQ <= large.nq
    kw = dict(rtol=1e-6, atol=1e-6, t_eval=[0.01])
    assert mbint.simulate(small, (0, 0.01), "bdf", **kw).options["linear_algebra"] == "dense"
    assert mbint.simulate(large, (0, 0.01), "bdf", **kw).options["linear_algebra"] == "sparse"
    large.linear_algebra = "dense"
    assert mbint.simulate(large, (0, 0.01), "bdf", **kw).options["linear_algebra"] == "dense"
    # the kernels follow the model's setting; f is the same either way
    y = np.concatenate([large.q0, large.qd0 + 0.1])
    fd = large.rhs(0.0, y)
    large.linear_algebra = "sparse"
    fs = large.rhs(0.0, y)
    assert np.abs(fd - fs).max() <= 1e-12 * np.abs(fd).max()
    # a run's own setting wins over the model's
    tr = mbint.simulate(large, (0, 0.01), "bdf", linear_algebra="dense", **kw)
    assert tr.options["linear_algebra"] == "dense"


def test_bad_settings():
    m = models.pendulum_chain(3)
    with pytest.raises(ValueError, match="linear_algebra"):
        m.linear_algebra = "banded"
    with pytest.raises(ValueError, match="linear_algebra"):
        mbint.simulate(m, (0, 0.1), "bdf", linear_algebra="fast")
    # the sparse DAE mode (index3 and the other DAE formulations) serves bdf, radau_iia,
    # ida and lstable_block (split, r <= 4), not astable_block
    with pytest.raises(ValueError, match="sparse DAE.*not 'astable_block'"):
        mbint.simulate(m, (0, 0.1), "astable_block", formulation="index1_dae",
                       linear_algebra="sparse")
    # the joint formulation has no sparse mode (state_space has one since issue 22)
    with pytest.raises(ValueError, match="index1, state_space and DAE formulations only"):
        mbint.simulate(m, (0, 0.1), "bdf", formulation="joint", linear_algebra="sparse")


def test_sparse_needs_sparse_kernels():
    # a MechanicalSystem (user kernels) has no sparse kernels: the caller's choice, a
    # ValueError naming linear_algebra (it was a bare RuntimeError from the C side)
    ms = mbint.MechanicalSystem(mass=lambda q: np.eye(1), forces=lambda t, q, qd: -q - qd,
                                q0=[1.0], qd0=[0.0])
    with pytest.raises(ValueError, match="linear_algebra='sparse'.*no sparse kernels"):
        mbint.simulate(ms, (0, 0.1), "bdf", linear_algebra="sparse")


def test_large_rank_check_names_a_dependent_row():
    m = models.pendulum_chain(30)
    info = check_initial_conditions(m)
    assert info["rank"] == m.nc and info["dependent"] == []
    # a redundant joint: bar 5's end pinned twice
    m2 = models.pendulum_chain(30)
    m2.add_revolute(m2.body("bar4"), (0.25, 0.0), m2.body("bar5"), (-0.25, 0.0))
    info = check_initial_conditions(m2)
    assert info["rank"] < m2.nc and len(info["dependent"]) >= 1
