"""check_initial_conditions and the initial-state errors of simulate (issue 21) on both
of its paths: the dense SVD below mbint.SPARSE_MIN_NQ coordinates, the sparse rank
test from there on (Phi_q from the model's sparse kernels, the dependent rows from the
envelope LDL^T of Phi_q Phi_q^T, _core.gram_dependent; no nq x nq array).

Expected values come from the geometry of the models (a body moved by a known
distance, a joint added twice, a loop closed at full stretch), not from the code."""
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
