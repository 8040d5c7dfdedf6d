"""Tests of the state-space formulation (csrc/mbs/statespace.c, RN paper eqs 4-35):
``mbint.StateSpace`` and ``simulate(..., formulation="state_space")``.

- v'' and the full q'' and lambda at a point equal those of the index-1 saddle-point
  system (an independent formulation) to round-off, on every paper model.
- J1 = dv''/dv and J2 = dv''/dv' (eqs 26-35) against central differences of v'' on
  every paper model (at the initial state and inside a run) and on MechanicalSystems
  with a state-dependent M(q) and only mass, forces, constraints and their Jacobian
  given (every other derivative by differences in C), scleronomic and rheonomic; the
  time derivative M^ dv''/dt (eq 46) likewise.
- A NumPy transcription of eqs 28-31 and 34-35 from the model's kernels reproduces
  J1 and J2; with eq 29's last term as transcribed, (Phi_q q')_v, it does not: the
  term is (Phi_q q'')_v.
- Gauss-Jordan with full pivoting picks a Phi_u whose condition is within a small
  factor of the best of all choices; redundant constraints and singular
  configurations are ValueErrors naming the dependent rows.
- Runs: the trajectory holds the full q, qd, lam, consistent to round-off at every
  output point; t_eval, dense output and events agree with a tight index-1
  reference; repartitions are counted; every method of mbint's driver runs on it;
  SUNDIALS methods are refused by name; a Newton failure inside a step is
  recoverable and, at the minimum step, a failed run with the trajectory so far.
"""
import itertools

import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import _core, models  # noqa: E402


# ---------------------------------------------------------------- systems

def arm_with_tip(rheonomic=False):
    """Two links in absolute angles (M(q) depends on theta2 - theta1) and a tip mass
    (x, y) tied to the end of link 2 by two constraints; with ``rheonomic`` the
    attachment point moves, x_t = l1 cos th1 + l2 cos th2 + a sin(w t).  Only mass,
    forces, constraints and constraint_jacobian are given: Phi_t, gamma and every
    derivative kernel come from central differences in C."""
    l1, l2, m1, m2, mt, g = 1.0, 0.8, 1.0, 0.5, 0.3, 9.81
    k1, c1, k2, c2 = 40.0, 0.5, 300.0, 2.0
    a, w = (0.05, 3.0) if rheonomic else (0.0, 0.0)

    def mass(q):
        c = m2 * l1 * 0.5 * l2 * np.cos(q[1] - q[0])
        M = np.zeros((4, 4))
        M[0, 0] = m1 * l1 ** 2 / 3 + m2 * l1 ** 2
        M[1, 1] = m2 * l2 ** 2 / 3
        M[0, 1] = M[1, 0] = c
        M[2, 2] = M[3, 3] = mt
        return M

    def forces(t, q, qd):
        s = m2 * l1 * 0.5 * l2 * np.sin(q[1] - q[0])
        rel, reld = q[1] - q[0], qd[1] - qd[0]
        return np.array([
            -(m1 * l1 / 2 + m2 * l1) * g * np.cos(q[0]) + s * qd[1] ** 2
            - k1 * (q[0] + 1.0) - c1 * qd[0] + k2 * rel + c2 * reld,
            -m2 * l2 / 2 * g * np.cos(q[1]) - s * qd[0] ** 2 - k2 * rel - c2 * reld,
            0.0, -mt * g])

    def phi(t, q):
        return np.array([q[2] - l1 * np.cos(q[0]) - l2 * np.cos(q[1]) - a * np.sin(w * t),
                         q[3] - l1 * np.sin(q[0]) - l2 * np.sin(q[1])])

    def phi_q(t, q):
        return np.array([[l1 * np.sin(q[0]), l2 * np.sin(q[1]), 1.0, 0.0],
                         [-l1 * np.cos(q[0]), -l2 * np.cos(q[1]), 0.0, 1.0]])

    th = np.array([-0.4, 0.3])
    thd = np.array([1.0, -2.0])
    q0 = np.array([*th, 0, 0])
    q0[2:] = [l1 * np.cos(th[0]) + l2 * np.cos(th[1]), l1 * np.sin(th[0]) + l2 * np.sin(th[1])]
    qd0 = np.array([*thd, 0, 0])
    qd0[2:] = -phi_q(0.0, q0)[:, :2] @ thd + [a * w, 0.0]
    return mbint.MechanicalSystem(mass, forces, phi, phi_q, q0=q0, qd0=qd0,
                                  names=["th1", "th2", "xt", "yt"],
                                  name="arm_tip_rheo" if rheonomic else "arm_tip")


def double_pendulum_angles():
    """nc = 0, M(q) varies: the double pendulum in absolute angles (trivial partition)."""
    m, l, g = 1.0, 1.0, 9.81

    def mass(q):
        c = m * l * l * np.cos(q[0] - q[1])
        return np.array([[2 * m * l * l, c], [c, m * l * l]])

    def forces(t, q, qd):
        s = m * l * l * np.sin(q[0] - q[1])
        return np.array([-s * qd[1] ** 2 - 2 * m * g * l * np.sin(q[0]),
                         s * qd[0] ** 2 - m * g * l * np.sin(q[1])])

    return mbint.MechanicalSystem(mass, forces, q0=[0.7, -0.3], qd0=[0.0, 1.0],
                                  name="dp_angles")


def _systems():
    out = {k: f() for k, f in models.PAPER_MODELS.items()}
    out["arm_tip"] = arm_with_tip()
    out["arm_tip_rheo"] = arm_with_tip(True)
    out["dp_angles"] = double_pendulum_angles()
    return out


SYSTEMS = _systems()


def _states(model):
    """The initial state and one inside a short run."""
    out = [(0.0, model.q0, model.qd0)]
    tr = mbint.simulate(model, (0.0, 0.15), method="radau_iia", rtol=1e-9, atol=1e-10)
    out.append((tr.t[-1], tr.q[:, -1], tr.qd[:, -1]))
    return out


def _fd_jacobians(S, t):
    v, vd, nd = S.v, S.vd, len(S.v)
    J1, J2 = np.zeros((nd, nd)), np.zeros((nd, nd))
    for j in range(nd):
        e = np.zeros(nd)
        e[j] = d = 1e-6 * max(1.0, abs(v[j]))
        J1[:, j] = (S.acceleration(v + e, vd, t) - S.acceleration(v - e, vd, t)) / (2 * d)
        e[j] = 0.0
        e[j] = d = 1e-6 * max(1.0, abs(vd[j]))
        J2[:, j] = (S.acceleration(v, vd + e, t) - S.acceleration(v, vd - e, t)) / (2 * d)
    return J1, J2


def _rel(A, B):
    return np.abs(A - B).max() / max(np.abs(B).max(), 1e-300)


# ---------------------------------------------------------------- at a point

@pytest.mark.parametrize("name", list(SYSTEMS))
def test_accelerations_equal_index1(name):
    model = SYSTEMS[name]
    for t, q, qd in _states(model):
        S = mbint.StateSpace(model, t, q, qd)
        r = S.evaluate(jacobians=False)
        # at the formulation's consistent state (u, u' recomputed from v, v')
        assert np.abs(r["q"] - q).max() < 1e-8 and np.abs(r["qd"] - qd).max() < 1e-6
        qdd_i1, lam_i1 = model.accelerations(t, r["q"], r["qd"])
        assert _rel(r["qdd"], np.asarray(qdd_i1)) < 1e-9, name
        if model.nc:
            assert _rel(r["lam"], np.asarray(lam_i1)) < 1e-9, name
        assert np.array_equal(r["vdd"], r["qdd"][S.independent])
        # the reduced mass matrix is E^T M E, symmetric positive definite (Lemma 1.1)
        assert np.allclose(r["M_hat"], r["M_hat"].T, rtol=1e-12, atol=0)
        assert np.linalg.eigvalsh(r["M_hat"]).min() > 0


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_jacobians_against_central_differences(name):
    model = SYSTEMS[name]
    for t, q, qd in _states(model):
        S = mbint.StateSpace(model, t, q, qd)
        r = S.evaluate()
        J1, J2 = _fd_jacobians(S, t)
        # kernels in C: 1e-6; MechanicalSystems with every derivative by differences,
        # gamma itself by differences of Phi: 1e-4; relative to the larger block (a
        # block of tiny entries next to a stiff one is compared at the stiff scale,
        # where the differences of v'' have their noise)
        tol = 1e-4 if isinstance(model, mbint.MechanicalSystem) else 1e-6
        scale = max(np.abs(J1).max(), np.abs(J2).max())
        assert np.abs(r["J1"] - J1).max() <= tol * scale, (name, t, _rel(r["J1"], J1))
        assert np.abs(r["J2"] - J2).max() <= tol * scale, (name, t, _rel(r["J2"], J2))
        # M^ J1, M^ J2 are the right-hand sides of eqs 31, 35
        assert _rel(r["M_hat"] @ r["J1"], r["MJ1"]) < 1e-10
        assert _rel(r["M_hat"] @ r["J2"], r["MJ2"]) < 1e-10
        # eq 46: M^ dv''/dt against central differences of v'' in t
        d = 1e-5
        vt = (S.acceleration(S.v, S.vd, t + d) - S.acceleration(S.v, S.vd, t - d)) / (2 * d)
        scale = max(np.abs(r["M_hat"] @ vt).max(), 1e-8 * np.abs(r["MJ1"]).max())
        assert np.abs(r["Mat"] - r["M_hat"] @ vt).max() <= 1e-4 * scale, name


def test_rheonomic_time_derivative_is_not_zero():
    S = mbint.StateSpace(SYSTEMS["arm_tip_rheo"])
    assert np.abs(S.evaluate()["Mat"]).max() > 1e-2
    S = mbint.StateSpace(SYSTEMS["arm_tip"])
    assert np.abs(S.evaluate()["Mat"]).max() < 1e-6 * np.abs(S.evaluate()["MJ1"]).max()


def _numpy_jacobians(model, S, t, eq29_as_printed=False):
    """J1, J2 by eqs 28a-31, 34-35 in NumPy from the model's kernels (planar models:
    every derivative kernel analytic).  eq29_as_printed: L with the transcribed last
    term -(Phi_q q')_v instead of -(Phi_q q'')_v."""
    r = S.evaluate(jacobians=False)
    q, qd, qdd, lam = r["q"], r["qd"], r["qdd"], r["lam"]
    v, u = S.independent, S.dependent
    P = np.asarray(model.constraint_jacobian(t, q))
    Pu, Pv = P[:, u], P[:, v]
    H = -np.linalg.solve(Pu, Pv)                                      # eq 28a
    Qq, Qqd = np.asarray(model.forces_q(t, q, qd)), np.asarray(model.forces_qd(t, q, qd))
    Gq, Gqd = np.asarray(model.gamma_q(t, q, qd)), np.asarray(model.gamma_qd(t, q, qd))
    Pqd_q = np.asarray(model.phiq_x_q(t, q, qd))                      # (Phi_q q')_q
    Pqdd_q = np.asarray(model.phiq_x_q(t, q, qdd))                    # (Phi_q q'')_q
    PTl_q = np.asarray(model.phiqT_lam_q(t, q, lam))                  # (Phi_q^T lam)_q
    M = np.asarray(model.mass(q))

    def E(X):  # X_v + X_u H
        return X[:, v] + X[:, u] @ H

    J = -np.linalg.solve(Pu, E(Pqd_q))                                # eq 28b
    last = Pqd_q[:, v] if eq29_as_printed else Pqdd_q[:, v]
    L = np.linalg.solve(Pu, (Gq[:, u] - Pqdd_q[:, u]) @ H + Gq[:, v] + Gqd[:, u] @ J - last)
    N = np.linalg.solve(Pu, Gqd[:, u] @ H + Gqd[:, v])               # eq 34
    Mvv, Mvu, Muv, Muu = M[np.ix_(v, v)], M[np.ix_(v, u)], M[np.ix_(u, v)], M[np.ix_(u, u)]
    Mhat = Mvv + Mvu @ H + H.T @ Muv + H.T @ Muu @ H                  # eq 10a
    R = ((PTl_q[np.ix_(u, u)] - Qq[np.ix_(u, u)]) @ H - Qq[np.ix_(u, v)] - Qqd[np.ix_(u, u)] @ J
         + PTl_q[np.ix_(u, v)] + Muu @ L)                             # eq 30, M constant
    MJ1 = (Qq[np.ix_(v, v)] + Qq[np.ix_(v, u)] @ H + Qqd[np.ix_(v, u)] @ J
           - (Mvu @ L + H.T @ R + PTl_q[np.ix_(v, u)] @ H + PTl_q[np.ix_(v, v)]))  # eq 31
    W = Qqd[np.ix_(v, u)] @ H + Qqd[np.ix_(v, v)] - Mvu @ N
    X = -(Qqd[np.ix_(u, u)] @ H + Qqd[np.ix_(u, v)] - Muu @ N)
    MJ2 = W - H.T @ X                                                 # eq 35
    return np.linalg.solve(Mhat, MJ1), np.linalg.solve(Mhat, MJ2)


@pytest.mark.parametrize("name", ["stiff_double_pendulum", "double_pendulum_stiff_spring",
                                  "two_link_manipulator"])
def test_paper_formulas_in_numpy_and_eq29(name):
    model = SYSTEMS[name]
    t, q, qd = _states(model)[1]
    S = mbint.StateSpace(model, t, q, qd)
    J1c, J2c = S.jacobians()
    J1, J2 = _numpy_jacobians(model, S, t)
    scale = max(np.abs(J1c).max(), np.abs(J2c).max())
    assert np.abs(J1 - J1c).max() < 1e-9 * scale and np.abs(J2 - J2c).max() < 1e-9 * scale
    # against central differences: the derived L is right, eq 29 as transcribed is not
    J1fd, _ = _fd_jacobians(S, t)
    J1p, _ = _numpy_jacobians(model, S, t, eq29_as_printed=True)
    err, err_p = np.abs(J1 - J1fd).max(), np.abs(J1p - J1fd).max()
    assert err_p > 100 * err, (err, err_p)


# ---------------------------------------------------------------- partitioning

@pytest.mark.parametrize("name", ["stiff_double_pendulum", "two_link_manipulator", "arm_tip",
                                  "mass_spring_damper"])
def test_gauss_jordan_picks_a_well_conditioned_phi_u(name):
    model = SYSTEMS[name]
    S = mbint.StateSpace(model)
    P = np.asarray(model.constraint_jacobian(0.0, model.q0))
    nq, nc = model.nq, model.nc
    assert len(S.independent) == nq - nc and sorted([*S.independent, *S.dependent]) == \
        list(range(nq))
    conds = []
    for dep in itertools.combinations(range(nq), nc):
        s = np.linalg.svd(P[:, dep], compute_uv=False)
        conds.append(np.inf if s[-1] < 1e-12 * s[0] else s[0] / s[-1])
    chosen = np.linalg.cond(P[:, S.dependent])
    assert np.isfinite(chosen) and chosen <= 8 * min(conds), (chosen, min(conds))


def test_independent_coordinates_can_be_preferred():
    m = SYSTEMS["stiff_double_pendulum"]
    assert mbint.StateSpace(m).names == ["body1.theta", "body2.y"]  # full pivoting
    S = mbint.StateSpace(m, independent=["body1.theta", "body2.theta"])
    assert S.names == ["body1.theta", "body2.theta"]
    tr = mbint.simulate(m, (0, 0.05), method="rosenbrock_nystrom", formulation="state_space",
                        independent=["body1.theta", "body2.theta"])
    assert tr.partitions[0][1] == ["body1.theta", "body2.theta"]
    with pytest.raises(ValueError, match="independent"):
        mbint.simulate(m, (0, 0.05), independent=["body1.theta"])  # index1
    with pytest.raises(ValueError, match="independent"):
        mbint.simulate(m, (0, 0.05), formulation="state_space", independent=["nope"])


def _redundant_model():
    """A double pendulum with a distance constraint that the pin of body 1 implies
    (the distance from the pin to body 1's far end is its length, always)."""
    m = mbint.PlanarModel(gravity=(0, -9.81))
    b1 = m.add_body(mass=1.0, inertia=0.1, q=(1, 0, 0))
    b2 = m.add_body(mass=1.0, inertia=0.1, q=(3, 0, 0))
    m.add_revolute(m.ground, (0, 0), b1, (-1, 0), name="pin")
    m.add_revolute(b1, (1, 0), b2, (-1, 0), name="elbow")
    m.add_distance(m.ground, (0, 0), b1, (1, 0), 2.0, name="implied_rod")
    return m


def test_redundant_constraints_name_the_rows():
    m = _redundant_model()
    with pytest.raises(ValueError, match="implied_rod"):
        mbint.StateSpace(m)
    with pytest.raises(ValueError, match="implied_rod"):
        mbint.simulate(m, (0, 1), method="rosenbrock_nystrom", formulation="state_space")


def test_singular_configuration_names_the_rows():
    """A point held by two distance links from (-1, 0) and (1, 0) sits on the line
    between them at (0, 0): both rows of Phi_q are parallel."""
    m = mbint.PlanarModel(gravity=(0, -9.81))
    b = m.add_body(mass=1.0, inertia=0.1, q=(0, 0, 0))
    m.add_distance(m.ground, (-1, 0), b, (0, 0), 1.0, name="left")
    m.add_distance(m.ground, (1, 0), b, (0, 0), 1.0, name="right")
    with pytest.raises(ValueError, match="right|left"):
        mbint.StateSpace(m)


# ---------------------------------------------------------------- runs

@pytest.fixture(scope="module")
def reference():
    m = SYSTEMS["stiff_double_pendulum"]
    return m, mbint.simulate(m, (0, 2), method="radau_iia", rtol=1e-12, atol=1e-12,
                             dense_output=True)


def test_run_holds_the_full_consistent_state(reference):
    m, ref = reference
    te = np.linspace(0, 2, 41)
    tr = mbint.simulate(m, (0, 2), method="rosenbrock_nystrom", formulation="state_space",
                        rtol=1e-7, atol=1e-7, t_eval=te, independent="pivoting")
    assert tr.status == 0 and tr.q.shape == (6, 41) and tr.lam.shape == (4, 41)
    V = tr.violation()
    assert V.position.max() < 1e-12 and V.velocity.max() < 1e-9 and \
        V.acceleration.max() < 1e-6 * np.abs(tr.qdd).max()
    qr, qdr = ref.state(te)
    assert np.abs(tr.q - qr).max() < 1e-4 and np.abs(tr.qd - qdr).max() < 1e-2
    # lambda and q'' at the points: those of the index-1 system at the same state
    acc, lam = m.accelerations(te, tr.q, tr.qd)
    assert _rel(tr.qdd, acc) < 1e-9 and _rel(tr.lam, lam) < 1e-9
    # full pivoting's partition is re-chosen along the way (cond(Phi_u) grows > 25 %)
    assert tr.stats["nrepartition"] >= 1 and tr.stats["npartition_change"] >= 1
    assert len(tr.partitions) == tr.stats["npartition_change"] + 1


def test_dense_output_and_events_across_repartitions(reference):
    m, ref = reference

    def theta1(t, q, qd):
        return q[2] + 1.0
    tr = mbint.simulate(m, (0, 2), method="rosenbrock_nystrom", formulation="state_space",
                        rtol=1e-8, atol=1e-8, dense_output=True, events=theta1,
                        independent="pivoting")
    assert tr.stats["npartition_change"] >= 1
    ts = np.linspace(0, 2, 333)
    q, qd = tr.state(ts)
    qr, qdr = ref.state(ts)
    assert np.abs(q - qr).max() < 1e-5
    # around each change of partition the dense output is continuous and consistent
    for tp, _ in tr.partitions[1:]:
        a, b = tr.state(np.array([tp - 1e-9, tp + 1e-9]))[0].T
        assert np.abs(a - b).max() < 1e-6
    assert np.abs(m.phi(ts, q)).max() < 1e-12
    # events see the full state: theta1 = -1 where the reference crosses it
    te = tr.t_events[0]
    assert len(te) >= 1
    assert np.abs(ref.state(te)[0][2] + 1.0).max() < 1e-5
    assert np.allclose(tr.q_events[0][2], -1.0, atol=1e-9)


def _small():
    return models.stiff_double_pendulum(k2=300.0, c2=5.0)


def test_every_driver_method_runs_on_it():
    m = _small()
    ref = mbint.simulate(m, (0, 0.2), method="radau_iia", rtol=1e-11, atol=1e-11)
    for info in mbint.methods():
        kw = dict(h=1e-3) if info.adaptive == "none" else dict(rtol=1e-6, atol=1e-8)
        if info.backend != "mbint":
            with pytest.raises(ValueError, match=info.name):
                mbint.simulate(m, (0, 0.2), method=info.name, formulation="state_space")
            continue
        tr = mbint.simulate(m, (0, 0.2), method=info.name, formulation="state_space", **kw)
        assert tr.status == 0, (info.name, tr.message)
        err = np.abs(tr.q[:, -1] - ref.q[:, -1]).max()
        assert err < 2e-2, (info.name, err)
        assert np.abs(m.phi(tr.t, tr.q)).max() < 1e-12


def test_newton_failure_is_recoverable_then_a_failed_run():
    """A pendulum in Cartesian coordinates (v = x, u = y) whose constraint has no root
    in y for x < -0.5: Newton fails there (recoverable: the step is retried smaller)
    until the minimum step; the run ends with status -1, a message, and the
    trajectory so far."""
    L = 1.0

    def phi(t, q):
        return np.array([q[0] ** 2 + q[1] ** 2 - L * L + (10.0 if q[0] < -0.5 else 0.0)])

    def phi_q(t, q):
        return np.array([[2 * q[0], 2 * q[1]]])

    def gamma(t, q, qd):
        return np.array([-2.0 * (qd[0] ** 2 + qd[1] ** 2)])

    m = mbint.MechanicalSystem(np.eye(2), lambda t, q, qd: np.array([0.0, -9.81]), phi, phi_q,
                               gamma, constraint_t=0, q0=[0.0, -L], qd0=[-3.0, 0.0], name="cart")
    for method in ("rosenbrock_nystrom", "radau_iia"):
        tr = mbint.simulate(m, (0, 3), method=method, formulation="state_space")
        assert tr.status == -1, method
        assert "Newton" in tr.message, (method, tr.message)
        assert tr.stats["nfail"] > 0 and tr.stats["newton_failures"] > 0
        assert -0.5 <= tr.q[0, -1] < -0.49, (method, tr.q[:, -1])  # up to the boundary
        assert np.abs(m.phi(tr.t, tr.q)).max() < 1e-12


def test_cartesian_pendulum_repartitions_through_x_equal_zero():
    """nc = 1: cond(Phi_u) of a 1 x 1 Phi_u is always 1, the paper's test alone never
    repartitions; the second test |Phi_q| |Phi_u^-1| does, and the pendulum swings
    through the points where u = x or u = y has a vanishing derivative."""
    L = 1.0
    m = mbint.MechanicalSystem(
        np.eye(2), lambda t, q, qd: np.array([0.0, -9.81]),
        lambda t, q: np.array([q[0] ** 2 + q[1] ** 2 - L * L]),
        lambda t, q: np.array([[2 * q[0], 2 * q[1]]]), constraint_t=0, q0=[L, 0.0],
        qd0=[0.0, 0.0], name="cartesian_pendulum",
        energy=lambda t, q, qd: 0.5 * (qd[0] ** 2 + qd[1] ** 2) + 9.81 * q[1])
    tr = mbint.simulate(m, (0, 4), method="rosenbrock_nystrom", formulation="state_space",
                        rtol=1e-9, atol=1e-9)
    assert tr.status == 0, tr.message
    assert tr.stats["npartition_change"] >= 2
    E = tr.energy().total
    assert np.abs(E - E[0]).max() < 1e-5


def test_bad_arguments():
    m = _small()
    with pytest.raises(ValueError, match="project"):
        mbint.simulate(m, (0, 0.1), formulation="state_space", project=True)
    with pytest.raises(ValueError, match="baumgarte"):
        mbint.simulate(m, (0, 0.1), formulation="state_space", baumgarte=1.0)
    with pytest.raises(ValueError, match="formulation"):
        mbint.simulate(m, (0, 0.1), formulation="ode")


@pytest.mark.parametrize("name", ["arm_tip", "arm_tip_rheo"])
def test_mechanical_system_with_mass_matrix_runs(name):
    """A MechanicalSystem with M(q) (and, rheonomic, a moving attachment): the
    state-space run with rosenbrock_nystrom agrees with a tight index-1 run."""
    m = SYSTEMS[name]
    ref = mbint.simulate(m, (0, 0.3), method="radau_iia", rtol=1e-11, atol=1e-11)
    tr = mbint.simulate(m, (0, 0.3), method="rosenbrock_nystrom", formulation="state_space",
                        rtol=1e-7, atol=1e-7)
    assert tr.status == 0, tr.message
    assert np.abs(tr.q[:, -1] - ref.q[:, -1]).max() < 1e-5
    assert np.abs(m.phi(tr.t, tr.q)).max() < 1e-9


def test_dense_output_of_dense_record_methods_on_the_state_space():
    # regression: with llm and singular_perturbation (dense output by their own records,
    # not polynomials) traj.sol(t) on the state space raised "set the method that wrote
    # them": the method was set on the full-state wrapper, not on the reduced output
    m = models.stiff_double_pendulum()
    for method, kw in (("llm", {}), ("singular_perturbation", {"fast": "auto"})):
        tr = mbint.simulate(m, (0, 0.2), method=method, formulation="state_space",
                            dense_output=True, rtol=1e-6, atol=1e-8, **kw)
        ys = tr.sol(tr.t)
        assert ys.shape == (2 * m.nq, len(tr.t))
        # at the output points the dense output is the trajectory itself
        assert np.allclose(ys[:m.nq], tr.q, atol=1e-9, rtol=0)
        mid = 0.5 * (tr.t[:-1] + tr.t[1:])
        qm = tr.sol(mid)[:m.nq]
        assert np.abs(m.phi(mid, qm)).max() < 1e-8  # on the constraints between steps


def test_default_partition_prefers_the_coordinates_of_stiff_forces():
    """The default state space took full pivoting's (theta1, y2) on the RN pendulum, where
    the torsional spring k2 = 3e5 N m/rad is nonlinear in v and rosenbrock_nystrom took
    1698 steps at rtol 1e-6 (344 with the angles).  Now the coordinates the stiff force
    elements act in are preferred; "pivoting" keeps the paper's choice."""
    m = SYSTEMS["stiff_double_pendulum"]
    kw = dict(method="rosenbrock_nystrom", formulation="state_space", rtol=1e-6, atol=1e-6)
    d = mbint.simulate(m, (0, 2), **kw)
    p = mbint.simulate(m, (0, 2), independent="pivoting", **kw)
    a = mbint.simulate(m, (0, 2), independent=["body1.theta", "body2.theta"], **kw)
    assert d.partitions[0][1] == ["body1.theta", "body2.theta"]
    assert p.partitions[0][1] == ["body1.theta", "body2.y"]
    assert np.array_equal(d.q, a.q) and d.stats["nsteps"] == a.stats["nsteps"]
    assert d.stats["nsteps"] < 0.5 * p.stats["nsteps"], (d.stats["nsteps"], p.stats["nsteps"])
    assert np.abs(d.q[:, -1] - p.q[:, -1]).max() < 1e-4   # the same motion
    assert mbint.StateSpace(m, independent="pivoting").names == ["body1.theta", "body2.y"]
    with pytest.raises(ValueError, match="pivoting"):
        mbint.simulate(m, (0, 0.05), formulation="state_space", independent="angles")
    with pytest.raises(ValueError, match="pivoting"):
        mbint.StateSpace(m, independent="angles")


def test_default_partition_without_stiffness_is_full_pivoting():
    """No force depends on q (gravity only): nothing to prefer, the paper's partition."""
    m = mbint.PlanarModel(gravity=(0.0, -9.81))
    b1 = m.add_body(1.0, 0.1, (0.5, 0.0, 0.0), name="a")
    b2 = m.add_body(1.0, 0.1, (1.5, 0.0, 0.0), name="b")
    m.add_revolute("ground", (0.0, 0.0), b1, (-0.5, 0.0))
    m.add_revolute(b1, (0.5, 0.0), b2, (-0.5, 0.0))
    kw = dict(method="rosenbrock_nystrom", formulation="state_space", rtol=1e-6, atol=1e-6)
    d = mbint.simulate(m, (0, 0.5), **kw)
    p = mbint.simulate(m, (0, 0.5), independent="pivoting", **kw)
    assert d.partitions == p.partitions and np.array_equal(d.q, p.q)


def test_events_see_the_full_state():
    """Regression: the user's events g(t, q, qd) on the state space got the integrated
    (v, v') cut at nq instead of the full (q, q'); the event's value at the root is a
    body coordinate of the full state."""
    m = models.stiff_double_pendulum()
    sizes = []

    def g(t, q, qd):
        sizes.append((len(q), len(qd)))
        return (q[0] - m.q0[0]) ** 2 - 1e-6  # a coordinate that moves by 1 mm

    g.terminal = True
    tr = mbint.simulate(m, (0, 1.0), "rodas4", formulation="state_space", events=g)
    assert set(sizes) == {(m.nq, m.nq)}
    assert len(tr.t_events[0]) == 1
    assert abs(abs(tr.q_events[0][0, 0] - m.q0[0]) - 1e-3) <= 1e-6
