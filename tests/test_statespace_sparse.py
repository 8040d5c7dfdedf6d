"""The sparse mode of the state-space formulation (csrc/mbs/statespace_sparse.c):
the partition by a sparse LU of Phi_q^T with row pivoting (UMFPACK), Newton for the
dependent coordinates with KLU of Phi_u, v'' from the sparse saddle-point system, J1
and J2 by differences of v''.

Checked against independent references: a tight index-1 run (another formulation and
another linear algebra), the dense state-space run (Gauss-Jordan, dense LU of Phi_u,
E^T M E: the paper's equations), the constraints (|Phi| at round-off at every output),
and conservation of energy on a conservative chain.  The partitions of the two modes may
differ (partial against full pivoting), so the comparisons are in the full coordinates.
"""
import math

import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import models  # noqa: E402
from mbint.testing.spatial_chain import spatial_chain  # noqa: E402


def _run(m, T, method, la, tol=1e-10, **kw):
    tr = mbint.simulate(m, (0, T), method=method, formulation="state_space", rtol=tol,
                        atol=tol, linear_algebra=la, **kw)
    assert tr.status == 0, tr.message
    assert tr.options["linear_algebra"] == la
    return tr


def _index1(m, T, t_eval, **kw):
    return mbint.simulate(m, (0, T), method="radau_iia", rtol=1e-12, atol=1e-12, t_eval=t_eval,
                          **kw)


def test_planar_chain_matches_dense_and_index1():
    """A falling planar chain of 8 bars (nq = 24, nc = 16) with joint springs: the sparse
    run's q, q' at the outputs equal the dense run's and a tight index-1 run's, the
    constraints hold at round-off, and the multipliers equal the saddle-point system's."""
    m = models.pendulum_chain(8, k=5.0, c=0.05)
    te = np.linspace(0, 0.6, 13)
    sp = _run(m, 0.6, "dop853", "sparse", t_eval=te)
    de = _run(m, 0.6, "dop853", "dense", t_eval=te)
    ref = _index1(m, 0.6, te)
    assert np.abs(sp.q - ref.q).max() < 1e-7
    assert np.abs(sp.qd - ref.qd).max() < 1e-6
    assert np.abs(sp.q - de.q).max() < 1e-7
    assert np.abs(m.phi(sp.t, sp.q)).max() < 1e-11
    acc, lam = m.accelerations(te, sp.q, sp.qd)
    assert np.abs(sp.qdd - acc).max() < 1e-8 * max(1.0, np.abs(acc).max())
    assert np.abs(sp.lam - lam).max() < 1e-8 * max(1.0, np.abs(lam).max())


def test_conservative_chain_keeps_its_energy():
    m = models.pendulum_chain(6)
    tr = _run(m, 1.0, "dop853", "sparse", tol=1e-11)
    E = tr.energy().total
    assert np.abs(E - E[0]).max() < 1e-7 * max(1.0, np.abs(E).max())


@pytest.mark.parametrize("method", ["dop853", "bdf", "rosenbrock_nystrom"])
def test_spatial_chain_matches_dense(method):
    """The 3-D chain of the benchmark (spherical and revolute joints, Euler parameters,
    spring-dampers; N = 4, nq = 28): sparse against dense state space and index 1; the
    implicit methods through the differenced J1, J2 of the sparse mode."""
    m = spatial_chain(4)
    T = 0.3
    te = np.linspace(0, T, 7)
    tol = 1e-10 if method == "dop853" else 1e-8
    sp = _run(m, T, method, "sparse", tol=tol, t_eval=te)
    de = _run(m, T, method, "dense", tol=tol, t_eval=te)
    ref = _index1(m, T, te)
    err = 1e-6 if method == "dop853" else 1e-4
    assert np.abs(sp.q - ref.q).max() < err, np.abs(sp.q - ref.q).max()
    assert np.abs(sp.q - de.q).max() < err
    assert np.abs(m.phi(sp.t, sp.q)).max() < 1e-10


def _rotating_slider_crank():
    """Crank r = 0.3 pinned at the origin, rod l = 0.8, slider on the x axis; the crank
    spins at 12 rad/s, so the loop passes through its dead centres."""
    r, l, phi = 0.3, 0.8, 0.4
    B = r * np.array([math.cos(phi), math.sin(phi)])
    xs = B[0] + math.sqrt(l * l - B[1] ** 2)
    th2 = math.atan2(-B[1], xs - B[0])
    m = mbint.PlanarModel(gravity=(0.0, -9.81), name="slider_crank")
    crank = m.add_body(1.0, r * r / 12, q=(B[0] / 2, B[1] / 2, phi), name="crank")
    rod = m.add_body(2.0, 2.0 * l * l / 12, q=((B[0] + xs) / 2, B[1] / 2, th2), name="rod")
    sl = m.add_body(1.0, 0.1, q=(xs, 0.0, 0.0), name="slider")
    m.add_revolute(m.ground, (0.0, 0.0), crank, (-r / 2, 0.0))
    m.add_revolute(crank, (r / 2, 0.0), rod, (-l / 2, 0.0))
    m.add_revolute(rod, (l / 2, 0.0), sl, (0.0, 0.0))
    m.add_translational(m.ground, (0.0, 0.0), sl, (0.0, 0.0), axis=(1.0, 0.0), phi0=0.0)
    # consistent initial velocities: crank rate w, the rest from the velocity constraints
    w = 12.0
    q0 = m.q0.copy()
    P = m.constraint_jacobian(0.0, q0)
    qd = np.zeros(m.nq)
    qd[2] = w
    free = [i for i in range(m.nq) if i != 2]
    qd[free] = np.linalg.lstsq(P[:, free], -P[:, 2] * w, rcond=None)[0]
    return m, qd


def test_closed_loop_repartitions_and_matches_dense():
    m, qd0 = _rotating_slider_crank()
    T = 1.0
    te = np.linspace(0, T, 21)
    # the slider's x kept independent where the configuration allows: at the dead centres
    # Phi_u grows singular and the partition changes (to the crank angle)
    kw = dict(t_eval=te, qd0=qd0, independent=["slider.x"])
    sp = _run(m, T, "dop853", "sparse", **kw)
    de = _run(m, T, "dop853", "dense", **kw)
    ref = _index1(m, T, te, qd0=qd0)
    assert sp.stats["npartition_change"] >= 1, sp.stats
    assert len(sp.partitions) == sp.stats["npartition_change"] + 1
    assert [p[1] for p in sp.partitions] == [p[1] for p in de.partitions]
    assert abs(sp.partitions[1][0] - de.partitions[1][0]) < 1e-2
    assert np.abs(sp.q - ref.q).max() < 1e-6, np.abs(sp.q - ref.q).max()
    assert np.abs(sp.q - de.q).max() < 1e-6
    assert np.abs(m.phi(sp.t, sp.q)).max() < 1e-11


def test_auto_takes_sparse_for_explicit_methods_above_the_threshold():
    big = models.pendulum_chain(mbint.SPARSE_MIN_NQ // 3 + 1)    # nq >= SPARSE_MIN_NQ
    small = models.pendulum_chain(mbint.SPARSE_MIN_NQ // 3 - 1)  # nq < SPARSE_MIN_NQ
    kw = dict(formulation="state_space", rtol=1e-6, atol=1e-6)
    assert mbint.simulate(big, (0, 0.01), "dop853", **kw).options["linear_algebra"] == "sparse"
    assert mbint.simulate(small, (0, 0.01), "dop853", **kw).options["linear_algebra"] == "dense"
    # the implicit methods keep the analytic dense J1, J2 unless asked
    assert mbint.simulate(big, (0, 0.01), "bdf", **kw).options["linear_algebra"] == "dense"


def test_sparse_refused_without_sparse_kernels():
    m = mbint.MechanicalSystem(
        np.eye(2), lambda t, q, qd: np.array([0.0, -9.81]),
        lambda t, q: np.array([q[0] ** 2 + q[1] ** 2 - 1.0]),
        lambda t, q: np.array([[2 * q[0], 2 * q[1]]]), constraint_t=0, q0=[1.0, 0.0],
        qd0=[0.0, 0.0], name="cartesian_pendulum")
    with pytest.raises(ValueError, match="linear_algebra"):
        mbint.simulate(m, (0, 0.1), "dop853", formulation="state_space",
                       linear_algebra="sparse")
    # nothing to partition: an unconstrained model is refused by name ("auto": dense)
    free = mbint.PlanarModel(gravity=(0.0, -9.81))
    free.add_body(1.0, 0.1)
    with pytest.raises(ValueError, match="no constraints"):
        mbint.simulate(free, (0, 0.1), "dop853", formulation="state_space",
                       linear_algebra="sparse")
    tr = mbint.simulate(free, (0, 0.1), "dop853", formulation="state_space")
    assert tr.success and tr.options["linear_algebra"] == "dense"
