"""The sparse mode of the DAE formulations (csrc/mbs/dae_sparse.c) against the dense one:
whole runs of bdf on every DAE formulation (index3, index1_dae, index2, ggl) over planar and spatial chains take the same steps
and end in the same state to round-off, with the same constraint violations; the
choice of the mode (explicit, automatic, refused) through simulate().  The iteration
matrix itself is compared entry by entry in tests/c/test_dae_sparse.c."""
import numpy as np
import pytest

import mbint
from mbint.testing.spatial_chain import spatial_chain


def _planar_chain(n):
    from mbint.models import pendulum_chain
    return pendulum_chain(n)


def _takes_sparse_dae(name):
    """whether method name takes the sparse DAE mode (flag MB_LINSYS_MASS)"""
    flags = next(d["flags"] for d in mbint._core.methods() if d["name"] == name)
    return bool(flags & mbint._core.MB_LINSYS_MASS)


#: the methods that take the sparse DAE mode (bdf, radau_iia: flag MB_LINSYS_MASS, M
#: applied through mb_stepper_mass_apply)
METHODS = [m for m in ("bdf", "radau_iia") if _takes_sparse_dae(m)]


def _pair(model, form, t_end, method="bdf"):
    out = {}
    for la in ("dense", "sparse"):
        tr = mbint.simulate(model, (0.0, t_end), method, formulation=form, rtol=1e-7,
                            atol=1e-7, linear_algebra=la)
        assert tr.success, tr.message
        out[la] = tr
    return out["dense"], out["sparse"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("form", ["index3", "index1_dae", "index2", "ggl"])
@pytest.mark.parametrize("kind", ["planar", "spatial"])
def test_sparse_run_equals_dense(kind, form, method):
    model = _planar_chain(8) if kind == "planar" else spatial_chain(4)
    d, s = _pair(model, form, 0.3, method)
    # the same steps (their sizes differ by the round-off the error control amplifies;
    # measured <= 3e-6 on index 3), the same final state
    assert d.t.size == s.t.size and d.stats["nsteps"] == s.stats["nsteps"]
    scale = max(1.0, np.max(np.abs(d.q[:, -1])))
    assert np.max(np.abs(s.q[:, -1] - d.q[:, -1])) <= 1e-9 * scale
    assert np.max(np.abs(s.qd[:, -1] - d.qd[:, -1])) <= 1e-7 * max(1.0, np.max(np.abs(d.qd)))
    # the constraint violations at all three levels: the same size
    for vd, vs in zip(d.violation(), s.violation()):
        vd, vs = np.max(np.abs(vd)), np.max(np.abs(vs))
        assert vs <= 1.5 * vd + 1e-12


def test_automatic_mode_and_refusals():
    model = spatial_chain(10)  # nq = 70 >= SPARSE_MIN_NQ: automatic is sparse for bdf
    assert model.nq >= mbint._core.MB_INDEX1_SPARSE_MIN_NQ
    tr = mbint.simulate(model, (0.0, 0.01), "bdf", formulation="index3")
    assert tr.success and tr.options["linear_algebra"] == "sparse"
    tr = mbint.simulate(spatial_chain(4), (0.0, 0.01), "bdf", formulation="index3")
    assert tr.success and tr.options["linear_algebra"] == "dense"  # nq = 28 < 60
    # a DAE method without the sparse mode (astable_block, the last one; on index1_dae,
    # since it warns on index3)
    other = next(i.name for i in mbint.methods()
                 if i.dae and i.adaptive != "none" and not _takes_sparse_dae(i.name))
    with pytest.raises(ValueError, match="sparse"):
        mbint.simulate(model, (0.0, 0.01), other, formulation="index1_dae",
                       linear_algebra="sparse")
    # the state space has its own sparse mode (statespace_sparse.c) since issue 22
    tr = mbint.simulate(model, (0.0, 0.01), "bdf", formulation="state_space",
                        linear_algebra="sparse")
    assert tr.success and tr.options["linear_algebra"] == "sparse"
    # a method without the sparse DAE mode stays dense under "auto"
    tr = mbint.simulate(model, (0.0, 0.01), other, formulation="index1_dae")
    assert tr.success and tr.options["linear_algebra"] == "dense"


@pytest.mark.parametrize("kind", ["planar", "spatial"])
def test_sparse_projection_equals_dense(kind):
    # project=True: the sparse mode projects by KLU of [I Phi_q^T; Phi_q 0], the dense
    # mode by the LU of Phi_q Phi_q^T; the same steps, final state and violations
    model = _planar_chain(8) if kind == "planar" else spatial_chain(4)
    out = [mbint.simulate(model, (0.0, 0.3), "bdf", formulation="index3", project=True,
                          rtol=1e-7, atol=1e-7, linear_algebra=la) for la in ("dense", "sparse")]
    d, s = out
    assert d.success and s.success and d.t.size == s.t.size
    assert np.max(np.abs(s.q[:, -1] - d.q[:, -1])) <= 1e-9 * max(1.0, np.max(np.abs(d.q)))
    pos_d, vel_d = (np.max(np.abs(v)) for v in d.violation()[:2])
    pos_s, vel_s = (np.max(np.abs(v)) for v in s.violation()[:2])
    assert pos_s <= 1e-11 and vel_s <= 1e-13  # projected: both levels at round-off
    assert pos_s <= 1.5 * pos_d + 1e-14 and vel_s <= 10 * vel_d + 1e-14
