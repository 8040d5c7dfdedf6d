"""The C planar kernels against the pure-NumPy oracle (mbint/testing/reference.py).

A second check of csrc/mbs beside the finite-difference tests of test_model.py:
``mbint.testing.reference.NumpyReference`` is written from the body-coordinate
formulation, not from the C code, so agreement to rounding error means that both
implement the same physics.  Checked on every paper model and on a model with
every joint and force type, at random (inconsistent) states, random times and
targeted states (contacts closing and opening, the penalty force clamped at
zero, wrapped RSDA angles):

* Phi, Phi_q, Phi_t, gamma, M, Q, the energies and the contact gaps to 1e-12
  relative (max-norm error over max(1, max-norm of the reference));
* f(t, y) of the index-1 formulation (also with Baumgarte terms) and lambda to
  1e-12 relative per state, and the C solution (q'', lambda) solves the NumPy
  saddle-point system S x = b with a backward error below 1e-14.  The states keep
  cond(S) below 1e8 (pendulum_particle, with its 1e-5 kg particle, reaches 1e7;
  the others stay below 1e3), so that a forward error of 1e-12 is a fair demand;
* the analytic df/dy in C against central differences of the NumPy f (1e-7;
  the differences themselves are good to about 1e-10 here).
"""
import math

import numpy as np
import pytest

import mbint
from mbint import PlanarModel, models
from mbint.testing.reference import NumpyReference, wrap_angle

RTOL = 1e-12
BACKWARD_TOL = 1e-14
JAC_RTOL = 1e-7
N_RANDOM = 60


def rel_err(A, B):
    """max |A - B| / max(1, max |B|)."""
    A, B = np.asarray(A, float), np.asarray(B, float)
    assert A.shape == B.shape, (A.shape, B.shape)
    return np.abs(A - B).max(initial=0.0) / max(1.0, np.abs(B).max(initial=0.0))


def every_element_model():
    """Seven bodies with every joint type (revolute, translational, distance, fixed,
    coordinate and angle drivers, ground on either side) and every force type (TSDA
    with an actuator and one of free length 0, RSDA with and without wrap, contact
    line with damping and exponent 1.5, contact circles off the centres,
    generalized forces, twice on one coordinate, and Python forces on a body and on
    the whole vector); 21 coordinates, 15 constraint rows."""
    m = PlanarModel(gravity=(0.7, -9.81), name="every_element")
    a = m.add_body(2.0, 0.4, q=(0.4, -0.3, -0.6), qd=(0.3, 0.2, 0.8), name="a")
    b = m.add_body(1.2, 0.25, q=(1.2, -0.5, 0.3), qd=(-0.5, 0.4, -1.2), name="b")
    c = m.add_body(0.8, 0.05, q=(-0.9, 0.2, 0.2), qd=(0.6, 0.1, 0.0), name="c")
    d = m.add_body(1.5, 0.3, q=(1.9, 0.1, 1.1), qd=(0.1, -0.3, 0.5), name="d")
    e = m.add_body(0.6, 0.02, q=(-0.4, 1.1, -2.0), qd=(-0.2, 0.3, 1.5), name="e")
    f = m.add_body(0.9, 0.1, q=(2.4, 0.7, 0.9), qd=(0.2, 0.2, -0.4), name="f")
    g = m.add_body(0.5, 0.01, q=(0.6, 0.15, 0.4), qd=(1.0, -2.0, 3.0), name="g")    # free
    m.add_revolute(m.ground, (0.1, -0.1), a, (-0.35, 0.1), name="rev_ground")
    m.add_revolute(a, (0.45, -0.05), b, (-0.3, 0.2), name="rev")
    m.add_translational(m.ground, (-0.5, 0.0), c, (0.1, -0.2), axis=(2.0, 1.0), phi0=0.2,
                        name="slide_ground")
    m.add_translational(b, (0.2, -0.1), d, (-0.3, 0.05), axis=(-0.3, 0.9), phi0=0.8,
                        name="slide")
    m.add_distance(c, (0.2, 0.1), e, (0.0, -0.3), length=1.1, name="link")
    m.add_distance(m.ground, (-1.0, 1.5), e, (0.15, 0.05), length=0.7, name="link_ground")
    m.add_fixed(d, (0.3, 0.2), f, (-0.2, 0.1), phi0=-0.2, name="weld")
    m.add_driver(a, relative_to=m.ground, c0=-0.6, c1=0.7, a=0.3, w=2.5, psi=0.4,
                 name="drive_a")
    m.add_driver(c, "x", c0=-0.9, c1=0.2, c2=-0.3, a=0.1, w=4.0, psi=-1.0, name="drive_cx")
    m.add_spring_damper(a, (0.1, 0.2), e, (-0.1, 0.0), k=40.0, c=2.5, length0=0.8,
                        actuator=(0.5, -0.2, 0.1, 1.5, 2.0, 0.3), name="tsda")
    m.add_spring_damper(f, (0.1, -0.1), g, (0.05, 0.0), k=15.0, length0=0.0, name="tsda_zero")
    m.add_rotational_spring_damper(b, d, k=25.0, c=1.5, angle0=2.5, wrap=True, name="rsda_wrap")
    m.add_rotational_spring_damper(m.ground, e, k=8.0, c=0.5, angle0=-0.3, name="rsda_ground")
    m.add_rotational_spring_damper(g, m.ground, k=3.0, c=0.2, angle0=-3.0, wrap=True,
                                   name="rsda_wrap_ground")
    m.add_contact(g, (0.05, -0.02), radius=0.2, line_point=(0.0, 0.1), normal=(0.2, 1.0),
                  K=2e3, damping=20.0, exponent=1.5, name="contact_line")
    m.add_contact(f, (0.1, 0.05), radius=0.5, other=g, other_point=(-0.04, 0.03),
                  other_radius=0.3, K=5e3, damping=10.0, name="contact_circles")
    m.add_contact(e, (0.0, 0.0), radius=0.0, normal=(0.0, 1.0), line_point=(0.0, 1.3), K=1e4,
                  name="contact_point")
    m.add_generalized_force(b, "theta", c0=0.3, a=1.2, w=3.0, psi=0.1, name="gen1")
    m.add_generalized_force(b, "theta", c0=-0.1, c1=0.4, c2=0.05, name="gen2")
    m.add_generalized_force(g, "x", f=(0.2, 0.1), name="gen3")
    m.add_force(d, lambda t, q, qd: np.array([np.sin(q[9]) + t, q[10] * qd[11], 0.2 * qd[9]]),
                name="py_body")
    m.add_force(None, lambda t, q, qd: 0.05 * np.cos(q + t) - 0.1 * qd, name="py_all")
    return m


MODELS = dict(models.PAPER_MODELS, every_element=every_element_model)


def random_states(model, n, seed):
    """n random states around the initial one, velocities up to a few units, times in [0, 3]:
    t of shape (n,), q and qd of shape (nq, n) (one column per state)."""
    rng = np.random.default_rng(seed)
    q = model.q0 + 0.4 * rng.standard_normal((n, model.nq))
    qd = model.qd0 + 2.0 * rng.standard_normal((n, model.nq))
    t = rng.uniform(0.0, 3.0, n)
    return t, q.T, qd.T


def targeted_states(name, model):
    """States on the special branches of each model (empty when it has none), as
    :func:`random_states`."""
    t, q, qd = [], [], []
    if name == "bouncing_balls":
        # radius 0.1; (y1, y2, v1, v2): free; ball-ground only; ball-ball only; both; both separating
        for y1, y2, v1, v2 in [(2.0, 1.0, 0.3, -0.2), (1.5, 0.07, 0.0, -3.0),
                               (1.18, 1.0, -2.0, 1.0), (0.25, 0.08, -1.0, 2.0),
                               (0.26, 0.09, 4.0, 5.0), (0.3, 0.1, 0.0, 0.0)]:
            q.append([0.0, y1, 0.0, 0.0, y2, 0.0])
            qd.append([0.0, v1, 0.0, 0.0, v2, 0.0])
            t.append(0.5)
    elif name == "stiff_double_pendulum":
        # angles far from the zero-tension ones, several turns away: the wrapped springs
        for th1, th2 in [(3 * math.pi / 2, 23 * math.pi / 12), (-7.0, 9.5), (12.3, -4.4),
                         (math.pi / 2 - 1e-9, 0.3), (-math.pi / 2 + math.pi - 1e-9, 2.0)]:
            q.append([math.cos(th1), math.sin(th1), th1,
                      2 * math.cos(th1) + 1.5 * math.cos(th2),
                      2 * math.sin(th1) + 1.5 * math.sin(th2), th2])
            qd.append([0.5, -0.3, 2.0, 1.0, 3.0, -10.0])
            t.append(1.0)
    elif name == "every_element":
        base_q, base_qd = model.q0.copy(), model.qd0.copy()
        g_ = 6 * 3
        # g's contact with the line y = 0.1 + ... and with f's circle: closing,
        # separating fast (damping would pull: clamped to zero), deep
        for gx, gy, vx, vy in [(0.6, 0.15, 1.0, -1.0), (0.6, 0.15, 1.0, 5.0),
                               (0.6, 0.0, 1.0, 0.5), (2.2, 0.9, 1.0, -0.5),
                               (1.6815, 0.797, -20.0, 0.0), (5.0, 5.0, 1.0, 0.0)]:
            qq, vv = base_q.copy(), base_qd.copy()
            qq[g_:g_ + 2] = gx, gy
            vv[g_:g_ + 2] = vx, vy
            q.append(qq)
            qd.append(vv)
            t.append(0.8)
        # the point contact of e: above its line, approaching it
        qq, vv = base_q.copy(), base_qd.copy()
        qq[13], vv[13] = 1.45, -3.0
        q.append(qq)
        qd.append(vv)
        t.append(1.3)
        # wrapped RSDA angles around +-pi from the zero-tension angle
        for dth in (math.pi - 1e-7, -math.pi + 1e-7, 3 * math.pi + 0.1, -11.0):
            qq = base_q.copy()
            qq[9 + 2] = qq[3 + 2] + 2.5 + dth
            qq[g_ + 2] = -3.0 - dth
            q.append(qq)
            qd.append(base_qd)
            t.append(2.0)
    return (np.array(t), np.array(q).reshape(-1, model.nq).T,
            np.array(qd).reshape(-1, model.nq).T)


@pytest.fixture(scope="module", params=sorted(MODELS))
def case(request):
    name = request.param
    model = MODELS[name]()
    ref = NumpyReference(model)
    t1, q1, v1 = random_states(model, N_RANDOM, seed=len(name))
    t2, q2, v2 = targeted_states(name, model)
    t = np.concatenate([t1, t2])
    q = np.concatenate([q1, q2], 1)
    qd = np.concatenate([v1, v2], 1)
    return name, model, ref, t, q, qd


def test_every_element_model_uses_every_kind():
    m = every_element_model()
    kinds = {e.kind for e in m.joint_elements + m.force_elements}
    assert kinds == {"revolute", "translational", "distance", "fixed", "driver_coord",
                     "driver_angle", "tsda", "rsda", "contact_line", "contact_circles",
                     "generalized", "python"}
    assert (m.nq, m.nc) == (21, 15)


def _contact_gaps_rates_forces(model, q, qd):
    """Gaps, their rates (central differences along qd) and the unclamped normal
    forces K delta^e + c delta' of every contact, shape (n_contacts, m) each."""
    ref = NumpyReference(model)
    h = 1e-7
    gaps = ref.contact_gaps(q)
    rates = (ref.contact_gaps(q + h * qd) - ref.contact_gaps(q - h * qd)) / (2 * h)
    K, cd, ex = (np.array([e.params[key] for e in ref.contact_elements]) for key in
                 ("K", "cd", "e"))
    return gaps, rates, K[:, None] * np.maximum(gaps, 0.0) ** ex[:, None] + cd[:, None] * rates


@pytest.mark.parametrize("name", ["bouncing_balls", "every_element"])
def test_targeted_states_reach_every_contact_branch(name):
    """The targeted states open and close every contact; on the damped model some
    close a contact whose damping term outweighs its spring term (the normal force
    is clamped to zero there)."""
    model = MODELS[name]()
    t, q, qd = targeted_states(name, model)
    gaps, rates, raw = _contact_gaps_rates_forces(model, q, qd)
    assert (gaps > 0).any(axis=1).all() and (gaps <= 0).any(axis=1).all()
    if name == "every_element":
        clamped = (gaps > 0) & (raw < 0)
        assert clamped[0].any() and clamped[1].any()


def test_constraints(case):
    name, model, ref, t, q, qd = case
    assert rel_err(model.phi(t, q), ref.phi(t, q)) <= RTOL
    assert rel_err(model.constraint_jacobian(t, q), ref.constraint_jacobian(t, q)) <= RTOL
    assert rel_err(model.phi_t(t, q), ref.phi_t(t, q)) <= RTOL
    assert rel_err(model.gamma(t, q, qd), ref.gamma(t, q, qd)) <= RTOL


def test_mass_and_forces(case):
    name, model, ref, t, q, qd = case
    assert rel_err(model.mass(q), ref.mass(q)) <= RTOL
    for k in range(len(t)):
        # per state: Q of the stiff models spans many magnitudes between states
        assert rel_err(model.forces(t[k], q[:, k], qd[:, k]),
                       ref.forces(t[k], q[:, k], qd[:, k])) <= RTOL, k
    assert rel_err(model.forces(t, q, qd), ref.forces(t, q, qd)) <= RTOL


def test_energy_and_gaps(case):
    name, model, ref, t, q, qd = case
    kin, pot = model.energy(t, q, qd)
    rkin, rpot = ref.energy(t, q, qd)
    assert rel_err(kin, rkin) <= RTOL
    assert rel_err(pot, rpot) <= RTOL
    if ref.contact_elements:
        assert rel_err(model.contact_gaps(q), ref.contact_gaps(q)) <= RTOL


def _saddle(ref, t, q, qd, alpha, beta):
    """The NumPy saddle-point matrix S (m, n, n) and right-hand side b (m, n), one per
    state (stacked on the leading axis, for numpy.linalg.solve)."""
    nq, nc = ref.nq, ref.nc
    P = ref.constraint_jacobian(t, q)                    # (nc, nq, m)
    S = np.zeros((q.shape[1], nq + nc, nq + nc))
    S[:, :nq, :nq] = np.moveaxis(ref.mass(q), -1, 0)
    S[:, :nq, nq:] = np.moveaxis(P, -1, 0).swapaxes(1, 2)
    S[:, nq:, :nq] = np.moveaxis(P, -1, 0)
    c = ref.gamma(t, q, qd) - 2 * alpha * (np.einsum("ijm,jm->im", P, qd) + ref.phi_t(t, q)) \
        - beta ** 2 * ref.phi(t, q)
    return S, np.concatenate([ref.forces(t, q, qd), c], 0).T


@pytest.mark.parametrize("baumgarte", [None, (4.0, 7.0)])
def test_index1_rhs(case, baumgarte):
    name, model, ref, t, q, qd = case
    alpha, beta = (0.0, 0.0) if baumgarte is None else baumgarte
    y = np.concatenate([q, qd], 0)
    f_c = model.rhs(t, y, baumgarte=baumgarte)
    f_r = ref.rhs(t, y, baumgarte=baumgarte)
    assert f_c.shape == f_r.shape == y.shape
    assert np.array_equal(f_c[:model.nq], qd)
    qdd, lam = model.accelerations(t, q, qd, baumgarte=baumgarte)
    assert np.allclose(qdd, f_c[model.nq:], rtol=1e-15, atol=0)
    S, b = _saddle(ref, t, q, qd, alpha, beta)
    x = np.concatenate([qdd, lam], 0).T                  # one row per state, as S and b
    xr = np.linalg.solve(S, b[..., None])[..., 0]
    assert np.linalg.cond(S).max() < 1e8   # the states are fair tests of a linear solve
    for k in range(len(t)):
        r = S[k] @ x[k] - b[k]
        backward = np.abs(r).max() / (np.abs(S[k]).sum(1).max() * np.abs(x[k]).max()
                                      + np.abs(b[k]).max())
        assert backward <= BACKWARD_TOL, (k, backward)
        assert rel_err(f_c[:, k], f_r[:, k]) <= RTOL, k
        assert rel_err(lam[:, k], xr[k, model.nq:]) <= RTOL, k


def test_single_point_equals_batch(case):
    name, model, ref, t, q, qd = case
    y = np.concatenate([q, qd], 0)
    f_c, f_r = model.rhs(t, y), ref.rhs(t, y)
    for k in (0, len(t) - 1):
        assert np.array_equal(model.rhs(t[k], y[:, k]), f_c[:, k])
        assert rel_err(ref.rhs(t[k], y[:, k]), f_r[:, k]) <= 1e-12
    # the other batch kernels of the reference: point k is column k
    k = len(t) // 2
    assert np.array_equal(ref.constraint_jacobian(t, q)[..., k],
                          ref.constraint_jacobian(t[k], q[:, k]))
    assert np.array_equal(ref.mass(q)[..., k], ref.mass(q[:, k]))
    assert rel_err(ref.forces(t, q, qd)[:, k], ref.forces(t[k], q[:, k], qd[:, k])) <= 1e-15
    assert rel_err(ref.energy(t, q, qd)[1][k], ref.energy(t[k], q[:, k], qd[:, k])[1]) <= 1e-15


def test_analytic_jacobian_against_numpy_differences(case):
    name, model, ref, t, q, qd = case
    for k in range(3):
        y = np.concatenate([q[:, k], qd[:, k]])
        assert rel_err(model.jacobian(t[k], y), ref.jacobian(t[k], y)) <= JAC_RTOL, (name, k)


def test_paper_models_start_consistent_in_the_reference():
    for name, make in models.PAPER_MODELS.items():
        model = make()
        ref = NumpyReference(model)
        if ref.nc:
            assert np.abs(ref.phi(0.0, model.q0)).max() < 1e-9, name
            vel = ref.constraint_jacobian(0.0, model.q0) @ model.qd0 + ref.phi_t(0.0, model.q0)
            assert np.abs(vel).max() < 1e-9, name


def test_reference_detects_a_wrong_kernel():
    """The comparison can fail: a model changed after the reference was built
    (a stiffer spring, a moved pin) no longer agrees."""
    model = models.stiff_double_pendulum()
    ref = NumpyReference(model)
    t, q, qd = random_states(model, 5, seed=3)
    model.force_elements[1].params["k"] *= 1.0 + 1e-9
    model.joint_elements[1].params["sj_x"] += 1e-9
    model._compiled = None
    assert rel_err(model.forces(t, q, qd), ref.forces(t, q, qd)) > RTOL
    assert rel_err(model.phi(t, q), ref.phi(t, q)) > RTOL
    y = np.concatenate([q, qd], 0)
    assert rel_err(model.rhs(t, y), ref.rhs(t, y)) > RTOL


def _coincident_tsda(length0):
    """Two free bodies joined by a TSDA whose attachment points coincide (l = 0)."""
    m = PlanarModel(gravity=(0.0, 0.0))
    a = m.add_body(1.0, 1.0, q=(0.0, 0.0, 0.3))
    p = (0.1 * math.cos(0.3), 0.1 * math.sin(0.3))
    b = m.add_body(1.0, 1.0, q=(p[0], p[1], 0.0))
    m.add_spring_damper(a, (0.1, 0.0), b, (0.0, 0.0), k=5.0, length0=length0)
    return m


def test_tsda_at_coincident_points():
    """At coincident attachment points (l = 0) the potential is k/2 L0^2 and a spring of
    free length 0 keeps its stiffness (its force k d is smooth there); the C kernel once
    returned early and dropped both."""
    m = _coincident_tsda(0.5)
    ref = NumpyReference(m)
    q, qd = m.q0, np.zeros(6)
    assert ref.energy(0.0, q, qd)[1] == pytest.approx(0.625)       # k/2 L0^2
    assert m.energy(0.0, q, qd)[1] == pytest.approx(0.625)
    m0 = _coincident_tsda(0.0)
    ref0 = NumpyReference(m0)
    h = 1e-6
    fd = np.stack([(ref0.forces(0.0, q + h * e, qd) - ref0.forces(0.0, q - h * e, qd)) / (2 * h)
                   for e in np.eye(6)], 1)
    assert fd[0, 0] == pytest.approx(-5.0)                          # -k on x_a
    assert rel_err(m0.forces_q(0.0, q, qd), fd) <= 1e-6


def test_wrap_angle():
    a = np.array([math.pi, -math.pi, 3 * math.pi, 0.5, -7.0])
    w = wrap_angle(a)
    assert np.all((w > -math.pi) & (w <= math.pi))
    assert np.allclose(np.cos(w), np.cos(a)) and np.allclose(np.sin(w), np.sin(a))
    assert w[0] == math.pi and w[1] == math.pi


def test_reference_is_plain_numpy():
    """The oracle never calls the C extension."""
    import ast
    import inspect

    import mbint.testing.reference as r
    tree = ast.parse(inspect.getsource(r))
    names = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
             for a in n.names}
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "_core" not in names and not any(m and "_core" in m for m in mods)
    assert mbint.testing.reference.NumpyReference.__doc__
