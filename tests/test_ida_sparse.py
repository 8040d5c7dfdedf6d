"""IDA on the sparse mode of the DAE formulations (csrc/mbs/dae_sparse.c): its iteration
matrix cj M_p - df/dy is the problem's linsys a M_p - J with a = cj (KLU), through the
adapter's linear solver (csrc/methods/sundials_linsys.c), with no dense matrix.

The oracle is IDA's dense mode: the dense residual (an LU of M), the dense Jacobian
assembled by dae.c and SUNDIALS' dense LU, an independent implementation of the same
mathematics; a second one is another method (radau_iia, dense) at tight tolerance."""
import numpy as np
import pytest

import mbint
from mbint.testing.spatial_chain import spatial_chain


def _planar_chain(n):
    from mbint.models import pendulum_chain
    return pendulum_chain(n)


def _model(kind):
    return _planar_chain(8) if kind == "planar" else spatial_chain(4)


def _run(model, form, t_end, la, method="ida", tol=1e-7, **kw):
    tr = mbint.simulate(model, (0.0, t_end), method, formulation=form, rtol=tol, atol=tol,
                        linear_algebra=la, **kw)
    assert tr.success, tr.message
    assert tr.options["linear_algebra"] == la
    return tr


@pytest.mark.parametrize("form", ["index1_dae", "ggl"])
@pytest.mark.parametrize("kind", ["planar", "spatial"])
def test_ida_sparse_equals_dense(kind, form):
    # the same steps and decisions (Jacobian evaluations, factorizations), the same final
    # state to round-off amplified by the error control (measured: q 1e-11, q' 1.2e-10,
    # lambda 6e-11 relative on the spatial index1_dae; over 0.3 s the chains' chaos makes a
    # step's Newton test tip differently near step 250: hence the span 0.2 s)
    model = _model(kind)
    d = _run(model, form, 0.2, "dense")
    s = _run(model, form, 0.2, "sparse")
    for key in ("nsteps", "njev", "nlu", "nreject"):
        assert s.stats[key] == d.stats[key], key
    assert d.t.size == s.t.size
    assert np.max(np.abs(s.t - d.t)) <= 1e-4 * 0.2
    scale = max(1.0, np.max(np.abs(d.q[:, -1])))
    assert np.max(np.abs(s.q[:, -1] - d.q[:, -1])) <= 1e-9 * scale
    assert np.max(np.abs(s.qd[:, -1] - d.qd[:, -1])) <= 1e-8 * max(1.0, np.max(np.abs(d.qd)))
    assert np.max(np.abs(s.lam[:, -1] - d.lam[:, -1])) <= 1e-8 * np.max(np.abs(d.lam))
    # the constraint violations at all three levels: the same size
    for vd, vs in zip(d.violation(), s.violation()):
        vd, vs = np.max(np.abs(vd)), np.max(np.abs(vs))
        assert vs <= 1.5 * vd + 1e-12


@pytest.mark.parametrize("form", ["index1_dae", "ggl"])
def test_ida_sparse_converges_to_another_method(form):
    # an independent method and linear algebra: radau_iia (dense) at tight tolerance; IDA
    # sparse at two tolerances approaches it (the error shrinks with the tolerance)
    model = spatial_chain(4)
    ref = _run(model, "index1_dae", 0.2, "dense", method="radau_iia", tol=1e-11)
    errs = []
    for tol in (1e-5, 1e-8):
        s = _run(model, form, 0.2, "sparse", tol=tol)
        errs.append(np.max(np.abs(s.q[:, -1] - ref.q[:, -1])))
    assert errs[1] <= 1e-6
    assert errs[1] <= 0.1 * errs[0]


def test_ida_automatic_mode_is_sparse_for_large_models():
    model = spatial_chain(10)  # nq = 70 >= SPARSE_MIN_NQ
    assert model.nq >= mbint._core.MB_INDEX1_SPARSE_MIN_NQ
    flags = next(d["flags"] for d in mbint._core.methods() if d["name"] == "ida")
    assert flags & mbint._core.MB_LINSYS_MASS
    auto = mbint.simulate(model, (0.0, 0.05), "ida", formulation="index1_dae", rtol=1e-7,
                          atol=1e-7)
    assert auto.success and auto.options["linear_algebra"] == "sparse"
    dense = _run(model, "index1_dae", 0.05, "dense")
    assert auto.stats["nsteps"] == dense.stats["nsteps"]
    assert np.max(np.abs(auto.q[:, -1] - dense.q[:, -1])) <= 1e-9
    # small models stay dense under "auto"
    small = mbint.simulate(spatial_chain(4), (0.0, 0.01), "ida", formulation="index1_dae")
    assert small.success and small.options["linear_algebra"] == "dense"


def test_ida_sparse_piecewise_equals_whole_run():
    # the Simulator's piecewise run (mb_sundials_open/_advance) takes the whole run's
    # steps on the sparse linsys too: the same numbers at the same times
    model = spatial_chain(4)
    tk = np.linspace(0.0, 0.1, 11)
    ref = mbint.simulate(model, (0.0, 0.1), "ida", formulation="index1_dae", rtol=1e-7,
                         atol=1e-7, linear_algebra="sparse", t_eval=tk)
    sim = mbint.Simulator(model, method="ida", formulation="index1_dae", t_end=0.1,
                          rtol=1e-7, atol=1e-7, linear_algebra="sparse")
    got = []
    for t in tk:
        assert sim.advance(t) == t
        got.append(sim.state[0])
    np.testing.assert_array_equal(np.array(got).T, ref.q)
    assert sim.stats["nsteps"] == ref.stats["nsteps"]


@pytest.mark.parametrize("method,form", [("ida", "index3"), ("ida", "index2"),
                                         ("cvode_bdf", "index1_dae"), ("arkode_dirk", "ggl")])
def test_what_stays_refused(method, form):
    # IDA does not solve the index-2 and index-3 formulations (in either mode); the other
    # SUNDIALS methods take no singular mass matrix: a ValueError naming method and
    # formulation, and the methods that do solve it
    model = spatial_chain(10)
    with pytest.raises(ValueError, match=f"formulation='{form}': method '{method}' does not "
                                         f"solve it"):
        mbint.simulate(model, (0.0, 0.01), method, formulation=form, linear_algebra="sparse")
