"""lstable_block's Newton system split by the eigen-decomposition of B (issue 21; irk_newton.c,
mb_irk_split) and its sparse mode on the DAE formulations (issue 22, item 4).

- The split and the full r n x r n Newton system (``newton="full"``) are the same simplified
  Newton iteration: the same accepted steps and, on the LS manipulator (index 3, index 1)
  and on van der Pol, final states equal to round-off (the error control amplifies the
  rounding of the step sizes a little).
- The split runs through the sparse DAE mode (dae_sparse.c, KLU: slot k per block): on a
  planar and a spatial chain on index3 and index1_dae, sparse and dense take the same
  steps and end in the same state to 1e-9.
- Bad options are refused with messages naming them.
T Lambda T^{-1} = B and the eigenvalues against the Pade denominators:
tests/c/test_lstable_split.c."""
import numpy as np
import pytest

import mbint
from mbint import models
from mbint.models import pendulum_chain
from mbint.testing.spatial_chain import spatial_chain


def _pair(model, form, **kw):
    out = {}
    for nw in ("full", "split"):
        tr = mbint.simulate(model, (0.0, 2.0), method="lstable_block", formulation=form,
                            newton=nw, **kw)
        assert tr.success, tr.message
        out[nw] = tr
    return out["full"], out["split"]


@pytest.mark.parametrize("form", ["index3", "index1_dae"])
@pytest.mark.parametrize("mode", [dict(rtol=1e-4, atol=1e-4), dict(rtol=1e-6, atol=1e-6),
                                  dict(h=0.01)])
def test_split_equals_full_newton(form, mode):
    m = models.two_link_manipulator()
    f, s = _pair(m, form, r=4, **mode)
    assert f.stats["nsteps"] == s.stats["nsteps"]
    assert f.stats["nreject"] == s.stats["nreject"]
    # step sizes equal up to the rounding the error control amplifies (index 3: the
    # estimate weighs the multipliers by h^2; measured 2.4e-6 relative at rtol 1e-6)
    hf, hs = np.diff(f.t), np.diff(s.t)
    assert np.max(np.abs(hf - hs) / hf) <= 1e-5
    scale = max(1.0, np.max(np.abs(f.q[:, -1])))
    assert np.max(np.abs(s.q[:, -1] - f.q[:, -1])) <= 1e-9 * scale
    # not the same code path: the split factors n x n blocks (two complex pairs for r = 4)
    assert s.stats["nlu"] != f.stats["nlu"]


@pytest.mark.parametrize("r", [2, 3, 5, 6])
def test_split_equals_full_on_an_ode(r):
    """van der Pol (mu = 1e3, stiff) over its first relaxation: the same steps, the same
    end point to round-off, for every r (a complex pair only, a real eigenvalue and a
    pair, and the larger blocks)."""
    def vdp(t, y):
        return [y[1], 1e3 * ((1 - y[0] ** 2) * y[1] - y[0])]

    def jac(t, y):
        return [[0.0, 1.0], [1e3 * (-2 * y[0] * y[1] - 1.0), 1e3 * (1 - y[0] ** 2)]]

    out = [mbint.solve_ivp(vdp, (0.0, 1.0), [2.0, 0.0], method="lstable_block", rtol=1e-6,
                           atol=1e-6, jac=jac, r=r, newton=nw) for nw in ("full", "split")]
    assert out[0].success and out[1].success
    assert out[0].t.size == out[1].t.size
    assert np.max(np.abs(out[0].y[:, -1] - out[1].y[:, -1])) <= 1e-10 * max(
        1.0, np.max(np.abs(out[0].y)))


def test_newton_option_refused():
    m = models.two_link_manipulator()
    with pytest.raises(ValueError, match="newton"):
        mbint.simulate(m, (0, 0.1), method="lstable_block", formulation="index3", newton="lu")


@pytest.mark.parametrize("form", ["index3", "index1_dae", "index2", "ggl"])
@pytest.mark.parametrize("kind", ["planar", "spatial"])
def test_sparse_equals_dense(kind, form):
    """Before this change linear_algebra="sparse" refused lstable_block ("does not take
    the structured iteration matrices").  At rtol 1e-9 neither run needs the stage
    Jacobians (a dense-only attempt, see test_sparse_without_stage_jacobians)."""
    model = pendulum_chain(8) if kind == "planar" else spatial_chain(4)
    out = {}
    for la in ("dense", "sparse"):
        tr = mbint.simulate(model, (0.0, 0.3), "lstable_block", formulation=form, rtol=1e-9,
                            atol=1e-9, linear_algebra=la)
        assert tr.success, tr.message
        assert tr.options["linear_algebra"] == la
        out[la] = tr
    d, s = out["dense"], out["sparse"]
    assert d.stats["nsteps"] == s.stats["nsteps"] and d.t.size == s.t.size
    scale = max(1.0, np.max(np.abs(d.q[:, -1])))
    assert np.max(np.abs(s.q[:, -1] - d.q[:, -1])) <= 1e-9 * scale
    assert np.max(np.abs(s.qd[:, -1] - d.qd[:, -1])) <= 1e-7 * max(1.0, np.max(np.abs(d.qd)))


def test_sparse_without_stage_jacobians():
    """Where Newton with one J fails, the dense mode solves the exact block matrix with the
    stage Jacobians (not a Kronecker product: no sparse form); the sparse mode shrinks h
    instead.  Both end within the tolerance of a tight reference."""
    model = pendulum_chain(8)
    ref = mbint.simulate(model, (0.0, 0.3), "radau_iia", formulation="index3", rtol=1e-11,
                         atol=1e-11)
    for la in ("dense", "sparse"):
        tr = mbint.simulate(model, (0.0, 0.3), "lstable_block", formulation="index3",
                            rtol=1e-7, atol=1e-7, linear_algebra=la)
        assert tr.success, tr.message
        assert np.max(np.abs(tr.q[:, -1] - ref.q[:, -1])) <= 1e-6


def test_sparse_needs_the_split():
    """The sparse DAE mode solves through the split (r <= 4, newton="split"): an explicit
    linear_algebra="sparse" with other options is a ValueError naming them; "auto" on a
    model large enough for the sparse mode stays dense for them."""
    model = spatial_chain(10)  # nq = 70: "auto" is sparse for the methods that take it
    assert model.nq >= mbint._core.MB_INDEX1_SPARSE_MIN_NQ
    for kw, what in ((dict(r=5), "r=5"), (dict(newton="full"), "newton='full'")):
        with pytest.raises(ValueError, match=what):
            mbint.simulate(model, (0.0, 0.01), "lstable_block", formulation="index3",
                           linear_algebra="sparse", **kw)
        tr = mbint.simulate(model, (0.0, 0.01), "lstable_block", formulation="index3", **kw)
        assert tr.success and tr.options["linear_algebra"] == "dense", tr.message
    tr = mbint.simulate(model, (0.0, 0.01), "lstable_block", formulation="index3", r=4)
    assert tr.success and tr.options["linear_algebra"] == "sparse", tr.message
