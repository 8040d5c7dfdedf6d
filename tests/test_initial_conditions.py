"""check_initial_conditions and the initial-state errors of simulate (issue 21) on both
of its paths: the dense SVD below mbint.SPARSE_MIN_NQ coordinates, the sparse rank
test from there on (Phi_q from the model's sparse kernels, the dependent rows from the
envelope LDL^T of Phi_q Phi_q^T, _core.gram_dependent; no nq x nq array).

Below SPARSE_MIN_NQ the residuals, the tolerance's scale and the rank come from one C
call (_core.mech_initial_check), checked here against NumPy.  The Python work of a
small simulate() call is counted (function calls, not time).

Expected values come from the geometry of the models (a body moved by a known
distance, a joint added twice, a loop closed at full stretch) or from NumPy, not from
the code under test."""
import sys
import tracemalloc

import numpy as np
import pytest

import mbint
from mbint import _core, models
from mbint.mbs.simulate import check_initial_conditions

LINK = 0.5  # pendulum_chain's default bar length [m]


def _large_chain(n=30):
    m = models.pendulum_chain(n)
    assert m.nq >= mbint.SPARSE_MIN_NQ  # the sparse path
    return m


def test_large_model_inconsistent_position_and_velocity():
    m = _large_chain()
    q0 = m.q0.copy()
    q0[3 * 7] += 0.02          # bar7 moved 2 cm along x: its two pins open by 0.02 m
    info = check_initial_conditions(m, q0=q0)
    assert info["position"] == pytest.approx(0.02, rel=1e-12)
    assert not info["consistent"] and info["rank"] == m.nc and info["dependent"] == []
    with pytest.raises(ValueError, match=r"inconsistent initial conditions.*\|Phi\(q0\)\| = "
                                         r"2\.000e-02.*consistent='project'"):
        mbint.simulate(m, (0, 0.01), "radau_iia", q0=q0)
    qd0 = m.qd0.copy()
    qd0[3 * 7 + 1] = 0.3      # bar7's centre moving up at 0.3 m/s, its neighbours at rest
    info = check_initial_conditions(m, qd0=qd0)
    assert info["position"] == 0.0
    assert info["velocity"] == pytest.approx(0.3, rel=1e-12)
    with pytest.raises(ValueError, match=r"max \|Phi_q qd0 \+ Phi_t\| = 3\.000e-01"):
        mbint.simulate(m, (0, 0.01), "radau_iia", qd0=qd0)
    tr = mbint.simulate(m, (0, 0.01), "radau_iia", qd0=qd0, consistent="project")
    assert tr.success and tr.initial["velocity"] < 1e-10


def test_large_model_redundant_joint_is_named():
    m = _large_chain()
    m.add_revolute(m.body("bar4"), (0.25, 0.0), m.body("bar5"), (-0.25, 0.0), name="again")
    info = check_initial_conditions(m)
    assert info["rank"] == m.nc - 2 == np.linalg.matrix_rank(m.constraint_jacobian())
    assert info["dependent"] == ["again[0]", "again[1]"]
    with pytest.raises(ValueError, match=r"redundant.*rank 60 < nc = 62.*again\[0\], again\[1\]"):
        mbint.simulate(m, (0, 0.01), "radau_iia")


@pytest.mark.parametrize("angle", [0.0, -0.3])
def test_large_model_singular_configuration_is_named(angle):
    # a rod from the pin to the chain's far end, of the chain's full length: at full
    # stretch its row is a combination of the pins' rows (a singular configuration)
    n = 30
    m = models.pendulum_chain(n, angle=angle)
    m.add_distance(m.ground, (0.0, 0.0), m.body(f"bar{n - 1}"), (LINK / 2, 0.0),
                   length=n * LINK, name="rod")
    info = check_initial_conditions(m)
    assert m.nq >= mbint.SPARSE_MIN_NQ
    assert info["position"] < 1e-12 and info["dependent"] == ["rod"]
    assert info["rank"] == m.nc - 1
    with pytest.raises(ValueError, match="singular.*rod"):
        mbint.simulate(m, (0, 0.01), "radau_iia")
    # the chain bent smoothly (pins closed) and the rod at its length there: full rank
    bent = models.pendulum_chain(n, angle=angle)
    th = np.linspace(0.0, 1.0, n) + angle  # a smoothly bent chain, its pins closed
    x = np.concatenate([[0.0], np.cumsum(LINK * np.cos(th))])
    y = np.concatenate([[0.0], np.cumsum(LINK * np.sin(th))])
    qb = np.column_stack([(x[:-1] + x[1:]) / 2, (y[:-1] + y[1:]) / 2, th]).ravel()
    bent.set_initial(q=qb)
    bent.add_distance(bent.ground, (0.0, 0.0), bent.body(f"bar{n - 1}"), (LINK / 2, 0.0),
                      name="rod3")
    info = check_initial_conditions(bent)
    assert info["consistent"] and info["dependent"] == [] and info["rank"] == bent.nc


def test_large_model_without_sparse_kernels():
    # a Python force: no sparse kernels, Phi_q from the dense kernel, the same answer
    m = _large_chain()
    m.add_force(m.body("bar3"), lambda t, q, qd: np.zeros(3))
    assert _core.mech_phi_q_sparse(m._mech_handle(), 0.0, m.q0) is None
    m.add_revolute(m.body("bar4"), (0.25, 0.0), m.body("bar5"), (-0.25, 0.0), name="again")
    info = check_initial_conditions(m)
    assert info["dependent"] == ["again[0]", "again[1]"] and info["rank"] == m.nc - 2


def test_sparse_phi_q_equals_the_dense_kernel():
    m = models.pendulum_chain(25, angle=-0.4)
    q = m.q0 + 0.01 * np.random.default_rng(1).standard_normal(m.nq)
    r, c, v = _core.mech_phi_q_sparse(m._mech_handle(), 0.0, q)
    P = np.zeros((m.nc, m.nq))
    np.add.at(P, (r, c), v)
    assert np.array_equal(P, m.constraint_jacobian(0.0, q))


def test_check_allocates_no_nq_by_nq_array():
    # N = 3000: nq = 9000, a dense Phi_q alone would be 8 nc nq = 432 MB (8 nq^2 = 648 MB)
    m = models.pendulum_chain(3000)
    m._mech_handle()  # the model's own compiled tables are not the check's
    tracemalloc.start()
    try:
        info = check_initial_conditions(m)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info["consistent"] and info["rank"] == m.nc and info["dependent"] == []
    assert peak < 16e6, peak   # O(nnz): about 2 MB here
    assert peak < 8 * m.nq ** 2 / 40


# ---------------------------------------------------------------- the small (dense) path

@pytest.mark.parametrize("make", [models.stiff_double_pendulum, models.two_link_manipulator,
                                  models.pendulum_particle, lambda: models.pendulum_chain(5)])
def test_small_model_check_against_numpy(make):
    m = make()
    assert m.nq < mbint.SPARSE_MIN_NQ and m.nc > 0
    rng = np.random.default_rng(3)
    q = m.q0 + 1e-3 * rng.standard_normal(m.nq)   # off the constraints
    qd = m.qd0 + rng.standard_normal(m.nq)
    t = 0.3
    scale, pos, vel, rank, sv = _core.mech_initial_check(m._mech_handle(), t, q, qd, 1e-10)
    P = m.constraint_jacobian(t, q)
    s = np.linalg.svd(P, compute_uv=False)
    assert np.allclose(sv, s, rtol=1e-12, atol=1e-14 * s[0])
    assert rank == np.sum(s > 1e-10 * max(1.0, s[0])) == np.linalg.matrix_rank(P)
    assert scale == max(np.abs(q).max(), np.abs(qd).max())
    assert pos == np.abs(m.phi(t, q)).max()
    assert vel == pytest.approx(np.abs(P @ qd + m.phi_t(t, q)).max(), rel=1e-13)
    info = check_initial_conditions(m, q, qd, t)
    assert info["tol"] == 1e-8 * max(1.0, scale) and not info["consistent"]
    assert info["rank"] == rank and info["dependent"] == []


def test_small_model_singular_configuration():
    # two bars of 1 m pinned in line (ground - a - b) and a rod of 2 m from the ground
    # pin to b's far end: at full stretch the rod's row depends on the pins' rows
    m = mbint.PlanarModel(name="toggle")
    a = m.add_body(1.0, 0.1, q=(0.5, 0.0, 0.0), name="a")
    b = m.add_body(1.0, 0.1, q=(1.5, 0.0, 0.0), name="b")
    m.add_revolute(m.ground, (0.0, 0.0), a, (-0.5, 0.0))
    m.add_revolute(a, (0.5, 0.0), b, (-0.5, 0.0))
    m.add_distance(m.ground, (0.0, 0.0), b, (0.5, 0.0), length=2.0, name="rod")
    assert m.nq < mbint.SPARSE_MIN_NQ
    info = check_initial_conditions(m)
    assert info["consistent"] and info["position"] == 0.0
    assert info["rank"] == np.linalg.matrix_rank(m.constraint_jacobian()) == m.nc - 1
    assert info["dependent"] == ["rod"]
    with pytest.raises(ValueError, match="rank 4 < nc = 5.*rod"):
        mbint.simulate(m, (0, 0.1))


def test_nonfinite_phi_q_is_a_value_error():
    m = mbint.MechanicalSystem(mass=lambda q: np.eye(2), forces=lambda t, q, qd: np.zeros(2),
                               constraints=lambda t, q: np.array([q[0] - q[1]]),
                               constraint_jacobian=lambda t, q: np.array([[np.nan, -1.0]]),
                               gamma=lambda t, q, qd: np.zeros(1), q0=[0.0, 0.0],
                               qd0=[0.0, 0.0])
    with pytest.raises(ValueError, match="not finite"):
        check_initial_conditions(m)


def test_small_simulate_python_work_is_bounded():
    # the Python work around the C run of a small model, counted: 170 Python function
    # calls and 156 calls of C functions before issue 21 (two dense Phi_q evaluations and
    # an SVD through NumPy, coordinate names built for atol > 0, ...)
    m = models.stiff_double_pendulum()
    for method in ("radau_iia", "rodas4"):
        mbint.simulate(m, m.t_span, method)
        n = {"call": 0, "c_call": 0}

        def count(frame, event, arg):
            if event in n:
                n[event] += 1
        sys.setprofile(count)
        try:
            tr = mbint.simulate(m, m.t_span, method)
        finally:
            sys.setprofile(None)
        assert tr.success
        assert n["call"] <= 100 and n["c_call"] <= 100, (method, n)


# ---------------------------------------------------------------- _core.gram_dependent

def _gram(P):
    import scipy.sparse as sp
    G = sp.csr_matrix(np.asarray(P, float) @ np.asarray(P, float).T)
    return G.indptr.astype(np.intp), G.indices.astype(np.intp), G.data


def test_gram_dependent_known_rows():
    P = np.array([[1.0, 0.0, 0.0],
                  [0.0, 2.0, 0.0],
                  [1.0, 2.0, 0.0],    # row 0 + row 1
                  [0.0, 0.0, 0.0],    # zero row
                  [0.0, 0.0, 5.0],
                  [3.0, -4.0, 1.0]])  # a combination of rows 0, 1, 4
    dep, rank = _core.gram_dependent(*_gram(P), 1e-12)
    assert dep.tolist() == [False, False, True, True, False, True] and rank == 3
    # the angle of GRAM_RTOL2 = 1e-12: 1e-6 rad
    for eps, expect in ((1e-8, True), (1e-4, False)):
        Q = np.array([[1.0, 0.0], [1.0, eps]])  # row 1 at an angle ~eps from row 0
        dep, rank = _core.gram_dependent(*_gram(Q), 1e-12)
        assert dep.tolist() == [False, expect] and rank == 2 - expect


def test_gram_dependent_bad_input():
    with pytest.raises(ValueError, match="CSR"):
        _core.gram_dependent(np.array([0, 2], np.intp), np.array([0], np.intp),
                             np.array([1.0]), 1e-12)
    with pytest.raises(ValueError, match="out of range"):
        _core.gram_dependent(np.array([0, 1], np.intp), np.array([3], np.intp),
                             np.array([1.0]), 1e-12)
    with pytest.raises(ValueError, match="negative"):
        _core.gram_dependent(np.array([0, 1], np.intp), np.array([0], np.intp),
                             np.array([-1.0]), 1e-12)
