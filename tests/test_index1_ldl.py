"""The dense index-1 f and df/dy against their mathematics (index1.c).

Planar models (constant diagonal M) take the Schur path, W = Phi_q M^-1 Phi_q^T
factored L D L^T; a spatial model takes the scaled LU of the saddle-point matrix.
Oracles: the saddle-point equations themselves (M q'' + Phi_q^T lam = Q,
Phi_q q'' = gamma) from the model's own kernels, central differences of f for
df/dy, and the rank of Phi_q for redundant constraints.
"""
import numpy as np
import pytest

from mbint import PlanarModel, SpatialModel, models, simulate


def _states(m, k=4, seed=0):
    """k states (q, qd) near the model's initial state (not on the constraints:
    f and df/dy are defined off the manifold too)."""
    rng = np.random.default_rng(seed)
    for _ in range(k):
        yield (m.q0 + 0.3 * rng.standard_normal(m.nq), m.qd0 + rng.standard_normal(m.nq))


def _spatial_pendulum():
    m = SpatialModel(gravity=(0.3, -0.2, -9.81))
    a = m.add_body(2.0, (0.3, 0.4, 0.5), r=(0.5, 0.1, 0.0), axis_angle=((1, 2, 3), 0.7),
                   omega=(0.5, -0.3, 0.8))
    c = m.add_body(1.5, (0.2, 0.25, 0.3), r=(1.0, -0.1, 0.2), axis_angle=((-2, 1, 0.5), 1.1))
    m.add_spherical(m.ground, a, (0.0, 0.0, 0.0))
    m.add_spherical(a, c, (0.8, 0.0, 0.1))
    return m


PLANAR = {"stiff_double_pendulum": models.stiff_double_pendulum,
          "two_link_manipulator": models.two_link_manipulator,
          "pendulum_particle": models.pendulum_particle}


@pytest.mark.parametrize("name", sorted(PLANAR) + ["spatial_pendulum"])
def test_f_solves_the_saddle_point_equations(name):
    m = _spatial_pendulum() if name == "spatial_pendulum" else PLANAR[name]()
    for q, qd in _states(m):
        qdd, lam = m.accelerations(0.0, q, qd)
        M, P = m.mass(q), m.constraint_jacobian(0.0, q)
        Q, g = m.forces(0.0, q, qd), m.gamma(0.0, q, qd)
        r1 = M @ qdd + P.T @ lam - Q
        r2 = P @ qdd - g
        scale1 = np.abs(M @ qdd).max() + np.abs(P.T @ lam).max() + np.abs(Q).max()
        scale2 = np.abs(P).max() * np.abs(qdd).max() + np.abs(g).max()
        assert np.abs(r1).max() <= 1e-12 * scale1, name
        assert np.abs(r2).max() <= 1e-12 * scale2, name
        f = m.rhs(0.0, np.concatenate([q, qd]))
        assert np.array_equal(f[:m.nq], qd) and np.array_equal(f[m.nq:], qdd)


@pytest.mark.parametrize("name", sorted(PLANAR) + ["spatial_pendulum"])
def test_jacobian_matches_central_differences_of_f(name):
    m = _spatial_pendulum() if name == "spatial_pendulum" else PLANAR[name]()
    for q, qd in _states(m, k=2, seed=1):
        y = np.concatenate([q, qd])
        J = m.jacobian(0.0, y)
        Jfd = np.empty_like(J)
        for j in range(y.size):
            h = 1e-6 * max(1.0, abs(y[j]))
            e = np.zeros_like(y)
            e[j] = h
            Jfd[:, j] = (m.rhs(0.0, y + e) - m.rhs(0.0, y - e)) / (2 * h)
        err = np.abs(J - Jfd).max() / np.abs(J).max()
        assert err < 1e-6, (name, err)


def test_redundant_constraints_make_f_fail_on_the_schur_path():
    # the pin implies the rod: Phi_q has rank 2 < nc = 3, W is singular and its L D L^T
    # pivot falls below the threshold (the same report as the LU path's)
    m = PlanarModel()
    b = m.add_body(1.0, 0.1, q=(1.0, 0.0, 0.0))
    m.add_revolute(m.ground, (0, 0), b, (-1.0, 0.0))
    m.add_distance(m.ground, (0, 0), b, (0.0, 0.0))
    assert np.linalg.matrix_rank(m.constraint_jacobian(0.0, m.q0)) == 2
    with pytest.raises(Exception, match="singular"):
        m.rhs(0.0, np.concatenate([m.q0, m.qd0]))


def test_singular_configuration_is_reported_not_solved():
    # two bars pinned in a straight line between two ground points: at the straight
    # configuration the middle pin's rows and the far pin's rows are dependent
    # (Phi_q loses rank), so W is singular though no constraint is redundant elsewhere
    m = PlanarModel()
    b1 = m.add_body(1.0, 0.1, q=(0.5, 0.0, 0.0))
    b2 = m.add_body(1.0, 0.1, q=(1.5, 0.0, 0.0))
    m.add_revolute(m.ground, (0, 0), b1, (-0.5, 0.0))
    m.add_revolute(b1, (0.5, 0.0), b2, (-0.5, 0.0))
    m.add_revolute(m.ground, (2.0, 0.0), b2, (0.5, 0.0))
    P = m.constraint_jacobian(0.0, m.q0)
    assert np.linalg.matrix_rank(P) < m.nc
    with pytest.raises(Exception, match="singular"):
        m.rhs(0.0, np.concatenate([m.q0, m.qd0]))


def test_ldl_run_agrees_with_a_tight_reference():
    # the whole path: rodas4 at 1e-6 on the stiff pendulum against radau_iia at 1e-11
    m = models.stiff_double_pendulum()
    ref = simulate(m, (0, 0.5), method="radau_iia", rtol=1e-11, atol=1e-11)
    tr = simulate(m, (0, 0.5), method="rodas4", rtol=1e-6, atol=1e-6)
    assert ref.success and tr.success
    assert np.abs(tr.q[:, -1] - ref.q[:, -1]).max() < 1e-4
