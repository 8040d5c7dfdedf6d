"""Planar models, MechanicalSystem and the papers' mechanisms (mbint/mbs/planar.py,
mbint/mbs/mechanical.py, mbint/models, csrc/python/mech_eval.c and system_py.c over
csrc/mbs).

Checks: invalid input raises ValueError naming the element; kernel shapes (one
point and batches); Phi_q, Phi_t, gamma and every derivative kernel against
central differences of the kernel they differentiate, for every joint and force
type (rheonomic drivers included), and df/dy of the index-1 formulation on every
paper model; forces of conservative elements are minus the gradient of the
potential energy; undamped models conserve energy to the integrator's
tolerance; violation stays bounded with projection and is reported without;
the same mechanism as a PlanarModel and as a MechanicalSystem (hand-written
equations in relative angles) moves the same; MechanicalSystem kernels as C
functions; each paper model starts consistent and runs with dopri5 and an
implicit method.
"""
import ctypes
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import MechanicalSystem, PlanarModel, models, problems, simulate

IMPLICIT = [m for m in ("radau_iia", "bdf") if m in {x.name for x in mbint.methods()}]


def rel_err(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    return np.abs(A - B).max(initial=0.0) / max(1.0, np.abs(B).max(initial=0.0))


def fd(fun, x, h=1e-6):
    """Central differences of fun at x: columns d fun / d x_j (fun may return a matrix:
    the result then has the derivative index last)."""
    x = np.asarray(x, float)
    cols = []
    for j in range(x.size):
        d = h * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += d
        xm[j] -= d
        cols.append((np.asarray(fun(xp)) - np.asarray(fun(xm))) / (2 * d))
    return np.stack(cols, axis=-1)


def kitchen_sink():
    """Every joint and force type on five bodies (3 degrees of freedom), at an
    arbitrary (inconsistent) state: the kernels do not care, and nothing is special."""
    m = PlanarModel(gravity=(0.3, -9.81), name="sink")
    a = m.add_body(2.0, 0.5, q=(0.3, -0.2, 0.4), qd=(0.5, -0.3, 1.1), name="a")
    b = m.add_body(1.5, 0.2, q=(1.1, 0.4, -0.7), qd=(-0.2, 0.8, -0.6), name="b")
    c = m.add_body(0.7, 0.1, q=(-0.5, 1.2, 2.1), qd=(0.1, 0.2, 0.9), name="c")
    d = m.add_body(1.2, 0.3, q=(0.8, -1.0, -1.3), qd=(-0.4, 0.3, 0.2), name="d")
    e = m.add_body(0.9, 0.15, q=(-1.1, -0.6, 0.3), qd=(0.2, 0.1, -0.5), name="e")  # free
    m.add_revolute(m.ground, (0.1, 0.2), a, (-0.3, 0.1), name="rev_ground")
    m.add_revolute(a, (0.4, -0.2), b, (-0.2, 0.3), name="rev")
    m.add_translational(b, (0.1, 0.1), c, (-0.2, 0.05), axis=(0.6, 0.8), phi0=0.3, name="slide")
    m.add_distance(c, (0.3, 0.0), d, (0.0, -0.25), length=1.3, name="link")
    m.add_fixed(m.ground, (0.5, 0.5), d, (0.1, 0.2), phi0=-0.4, name="weld")
    m.add_driver(b, "x", c0=0.2, c1=0.3, c2=-0.1, a=0.25, w=2.0, psi=0.3, name="drive_x")
    m.add_driver(c, relative_to=a, f=(0.1, 0.4, 0.05, 0.2, 3.0, -0.5), name="drive_angle")
    m.add_spring_damper(a, (0.2, 0.1), c, (-0.1, 0.3), k=50.0, c=3.0, length0=0.7,
                        actuator=(1.0, 0.0, 0.0, 2.0, 1.5, 0.0), name="tsda")
    m.add_rotational_spring_damper(b, d, k=30.0, c=2.0, angle0=0.5, wrap=True, name="rsda_wrap")
    m.add_rotational_spring_damper(m.ground, c, k=10.0, c=1.0, angle0=-0.2, name="rsda_ground")
    m.add_contact(a, (0.1, -0.1), radius=5.0, line_point=(0.0, 0.0), normal=(0.1, 1.0), K=1e3,
                  damping=5.0, exponent=1.5, name="contact_line")
    m.add_contact(b, (0.0, 0.0), radius=1.0, other=c, other_radius=1.0, K=2e3, damping=3.0,
                  name="contact_circles")
    m.add_generalized_force(d, "theta", c0=0.5, a=2.0, w=3.0, name="harmonic")
    m.add_spring_damper(e, (0.1, 0.0), a, (0.0, 0.2), k=20.0, c=1.0, name="tsda_free")
    m.add_rotational_spring_damper(m.ground, e, k=4.0, c=0.5, angle0=0.1, name="rsda_free")
    m.add_force(c, lambda t, q, qd: np.array([np.sin(q[6]), q[7] * qd[8], 0.1 * qd[6]]),
                name="python")
    return m


T0 = 0.37


@pytest.fixture(scope="module")
def sink():
    return kitchen_sink()


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize("kw, match", [
    (dict(mass=0.0, inertia=1.0), "mass must be positive"),
    (dict(mass=-1.0, inertia=1.0), "mass must be positive"),
    (dict(mass=1.0, inertia=0.0), "inertia must be positive"),
    (dict(mass=float("nan"), inertia=1.0), "mass must be finite"),
    (dict(mass=1.0, inertia=1.0, q=(0, float("nan"), 0)), "q must be finite"),
    (dict(mass=1.0, inertia=1.0, q=(0, 0)), "q must have 3 entries"),
])
def test_body_validation_names_the_body(kw, match):
    m = PlanarModel()
    with pytest.raises(ValueError, match=f"add_body 'wheel'.*{match}"):
        m.add_body(name="wheel", **kw)


def test_joint_and_force_validation_names_the_element():
    m = PlanarModel()
    b = m.add_body(1.0, 1.0, name="b")
    other = PlanarModel().add_body(1.0, 1.0, name="b")
    with pytest.raises(ValueError, match="revolute 'pin'.*not a body of this model"):
        m.add_revolute(m.ground, (0, 0), other, (0, 0), name="pin")
    with pytest.raises(ValueError, match="revolute 'pin2'.*'nope' is not a body"):
        m.add_revolute(m.ground, (0, 0), "nope", (0, 0), name="pin2")
    with pytest.raises(ValueError, match="revolute 'pin3'.*body_j 7 is not a body"):
        m.add_revolute(m.ground, (0, 0), 7, (0, 0), name="pin3")
    with pytest.raises(ValueError, match="revolute 'pin4'.*si must be finite"):
        m.add_revolute(m.ground, (0, float("nan")), b, (0, 0), name="pin4")
    with pytest.raises(ValueError, match="distance 'rod'.*length must be finite"):
        m.add_distance(m.ground, (0, 0), b, (0, 0), length=float("inf"), name="rod")
    with pytest.raises(ValueError, match="same body"):
        m.add_revolute(b, (0, 0), b, (1, 0))
    with pytest.raises(ValueError, match="spring_damper 'sp'.*k must be finite"):
        m.add_spring_damper(m.ground, (0, 0), b, (0, 0), k=float("nan"), name="sp")
    with pytest.raises(ValueError, match="rotational_spring_damper 'rs'.*angle0 must be finite"):
        m.add_rotational_spring_damper(m.ground, b, k=1.0, angle0=float("nan"), name="rs")
    with pytest.raises(ValueError, match="contact 'c'.*K must be positive"):
        m.add_contact(b, K=0.0, name="c")
    with pytest.raises(ValueError, match="contact 'c2'.*normal must be a non-zero"):
        m.add_contact(b, K=1.0, normal=(0, 0), name="c2")
    with pytest.raises(ValueError, match="driver 'd'.*coord must be"):
        m.add_driver(b, "z", name="d")
    with pytest.raises(ValueError, match="driver 'd2'.*w must be finite"):
        m.add_driver(b, "x", w=float("nan"), name="d2")
    with pytest.raises(ValueError, match="driver 'd3'.*unknown time-function coefficients"):
        m.add_driver(b, "x", omega=1.0, name="d3")
    with pytest.raises(ValueError, match="driver 'd4'.*at most 6 coefficients"):
        m.add_driver(b, "x", f=(1, 2, 3, 4, 5, 6, 7), name="d4")
    with pytest.raises(ValueError, match="driver 'd5'.*the ground cannot be driven"):
        m.add_driver(m.ground, "x", name="d5")
    with pytest.raises(ValueError, match="generalized_force 'g'.*coord must be"):
        m.add_generalized_force(b, "q", 1.0, name="g")
    with pytest.raises(ValueError, match="force 'f'.*fn must be callable"):
        m.add_force(b, 3.0, name="f")
    m.add_revolute(m.ground, (0, 0), b, (0, 0), name="pin")
    with pytest.raises(ValueError, match="'pin': the name is already used"):
        m.add_distance(m.ground, (0, 0), b, (1, 0), name="pin")
    with pytest.raises(ValueError, match="at least one body"):
        PlanarModel().compile()


def test_driver_forms_are_equivalent():
    """Tuple, mapping and keyword forms of f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi)."""
    coef = dict(c0=0.1, c1=0.2, c2=0.3, a=0.4, w=5.0, psi=0.6)
    phis = []
    for form in ({"f": tuple(coef.values())}, {"f": coef}, coef):
        m = PlanarModel()
        b = m.add_body(1.0, 1.0, q=(1.0, 2.0, 0.5))
        m.add_driver(b, "y", **form)
        phis.append(m.phi(t=0.7))
    expected = 2.0 - (0.1 + 0.2 * 0.7 + 0.3 * 0.49 + 0.4 * math.sin(5 * 0.7 + 0.6))
    assert np.allclose(phis, expected, rtol=0, atol=1e-14)
    m = PlanarModel()
    b = m.add_body(1.0, 1.0, q=(1.0, 2.0, 0.5))
    m.add_driver(b, "theta", c1=2.0)  # c0 defaults to the initial value: consistent at t = 0
    assert abs(m.phi()[0]) < 1e-15


# ------------------------------------------------------------------ kernel shapes

def test_kernel_shapes(sink):
    m = sink
    nq, nc = m.nq, m.nc
    assert (nq, nc) == (15, 2 + 2 + 2 + 1 + 3 + 1 + 1)
    q, qd, lam = m.q0, m.qd0, np.linspace(-1, 1, nc)
    shapes = {
        "phi": (m.phi(T0, q), (nc,)), "phi_q": (m.constraint_jacobian(T0, q), (nc, nq)),
        "phi_t": (m.phi_t(T0, q), (nc,)), "gamma": (m.gamma(T0, q, qd), (nc,)),
        "mass": (m.mass(q), (nq, nq)), "forces": (m.forces(T0, q, qd), (nq,)),
        "forces_q": (m.forces_q(T0, q, qd), (nq, nq)),
        "forces_qd": (m.forces_qd(T0, q, qd), (nq, nq)),
        "phiq_x_q": (m.phiq_x_q(T0, q, qd), (nc, nq)),
        "phiqT_lam_q": (m.phiqT_lam_q(T0, q, lam), (nq, nq)),
        "gamma_q": (m.gamma_q(T0, q, qd), (nc, nq)), "gamma_qd": (m.gamma_qd(T0, q, qd), (nc, nq)),
        "contact_gaps": (m.contact_gaps(q), (2,)),
        "rhs": (m.rhs(T0, np.r_[q, qd]), (2 * nq,)),
        "jac": (m.jacobian(T0, np.r_[q, qd]), (2 * nq, 2 * nq)),
    }
    for name, (v, shape) in shapes.items():
        assert v.shape == shape, name
        assert np.all(np.isfinite(v)), name
    qdd, lam = m.accelerations(T0, q, qd)
    assert qdd.shape == (nq,) and lam.shape == (nc,)
    T, V = m.energy(T0, q, qd)
    assert isinstance(T, float) and isinstance(V, float)
    # batches: m points along the last axis (as a trajectory's q), t scalar or per point
    Q = q[:, None] + 0.01 * np.arange(5)
    QD = np.tile(qd[:, None], (1, 5))
    ts = T0 + 0.1 * np.arange(5)
    assert m.constraint_jacobian(ts, Q).shape == (nc, nq, 5)
    assert m.gamma(T0, Q, QD).shape == (nc, 5)
    assert m.mass(Q).shape == (nq, nq, 5)
    assert m.energy(ts, Q, QD)[0].shape == (5,)
    assert m.contact_gaps(Q).shape == (2, 5)
    # point k of a batch is the single evaluation at (ts[k], Q[:, k], QD[:, k])
    for k in (0, 3):
        assert np.array_equal(m.constraint_jacobian(ts, Q)[..., k],
                              m.constraint_jacobian(ts[k], Q[:, k]))
        assert np.array_equal(m.forces(ts, Q, QD)[:, k], m.forces(ts[k], Q[:, k], QD[:, k]))
        assert np.array_equal(m.phiqT_lam_q(ts, Q, np.tile(lam[:, None], (1, 5)))[..., k],
                              m.phiqT_lam_q(ts[k], Q[:, k], lam))
        assert m.energy(ts, Q, QD)[1][k] == m.energy(ts[k], Q[:, k], QD[:, k])[1]
        assert np.array_equal(m.contact_gaps(Q)[:, k], m.contact_gaps(Q[:, k]))
    # one state at several times: the points are the times
    assert np.array_equal(m.phi(ts, q)[:, 2], m.phi(ts[2], q))
    qdd_b, lam_b = m.accelerations(ts, Q, QD)
    assert qdd_b.shape == (nq, 5) and lam_b.shape == (nc, 5)
    assert np.allclose(qdd_b[:, 4], m.accelerations(ts[4], Q[:, 4], QD[:, 4])[0], rtol=0,
                       atol=1e-12)
    Y = np.vstack([Q, QD])
    assert m.rhs(ts, Y).shape == (2 * nq, 5) and m.jacobian(ts, Y).shape == (2 * nq, 2 * nq, 5)
    assert np.array_equal(m.rhs(ts, Y)[:, 1], m.rhs(ts[1], Y[:, 1]))
    with pytest.raises(ValueError, match="same number of points"):
        m.phi(np.zeros(3), Q)
    with pytest.raises(ValueError, match=r"q must have shape \(15,\) or \(15, m\)"):
        m.phi(0.0, np.zeros(5))
    with pytest.raises(ValueError, match=r"q must have shape \(15,\) or \(15, m\)"):
        m.phi(0.0, Q.T)  # time-major points are refused, not misread
    info = mbint._core.mech_info(m.compile().handle)
    assert info["python"] and info["planar"] and info["ncontact"] == 2


def test_saddle_point_system(sink):
    """M qdd + Phi_q^T lam = Q and Phi_q qdd = gamma at the computed (qdd, lam)."""
    m = sink
    q, qd = m.q0, m.qd0
    qdd, lam = m.accelerations(T0, q, qd)
    P = m.constraint_jacobian(T0, q)
    assert rel_err(m.mass(q) @ qdd + P.T @ lam, m.forces(T0, q, qd)) < 1e-10
    assert rel_err(P @ qdd, m.gamma(T0, q, qd)) < 1e-10


# ------------------------------------------------------------------ derivatives

def test_constraint_derivatives_against_central_differences(sink):
    m = sink
    q, qd = m.q0, m.qd0
    x = np.linspace(-0.7, 1.3, m.nq)
    lam = np.linspace(1.0, -2.0, m.nc)
    # Phi_q, including the rheonomic driver rows
    assert rel_err(m.constraint_jacobian(T0, q), fd(lambda z: m.phi(T0, z), q)) < 1e-6
    # Phi_t
    assert rel_err(m.phi_t(T0, q), fd(lambda z: m.phi(z[0], q), [T0])[:, 0]) < 1e-6
    assert np.abs(m.phi_t(T0, q)[-2:]).min() > 0.01  # the drivers are really rheonomic

    # gamma = -d/ds [Phi_q(t + s, q + s qd) qd + Phi_t(t + s, q + s qd)]
    def g(s):
        z = q + s[0] * qd
        return m.constraint_jacobian(T0 + s[0], z) @ qd + m.phi_t(T0 + s[0], z)

    assert rel_err(m.gamma(T0, q, qd), -fd(g, [0.0])[:, 0]) < 1e-6
    assert rel_err(m.phiq_x_q(T0, q, x), fd(lambda z: m.constraint_jacobian(T0, z) @ x, q)) < 1e-6
    assert rel_err(m.phiqT_lam_q(T0, q, lam),
                   fd(lambda z: m.constraint_jacobian(T0, z).T @ lam, q)) < 1e-6
    assert rel_err(m.gamma_q(T0, q, qd), fd(lambda z: m.gamma(T0, z, qd), q)) < 1e-6
    assert rel_err(m.gamma_qd(T0, q, qd), fd(lambda z: m.gamma(T0, q, z), qd)) < 1e-6


def test_force_derivatives_against_central_differences(sink):
    m = sink
    q, qd = m.q0, m.qd0
    assert np.all(m.contact_gaps(q) > 0)  # both contacts active
    assert rel_err(m.forces_q(T0, q, qd), fd(lambda z: m.forces(T0, z, qd), q)) < 1e-6
    assert rel_err(m.forces_qd(T0, q, qd), fd(lambda z: m.forces(T0, q, z), qd)) < 1e-6
    # mass is constant and block diagonal
    M = m.mass(q)
    assert np.allclose(M, np.diag([2, 2, .5, 1.5, 1.5, .2, .7, .7, .1, 1.2, 1.2, .3, .9, .9, .15]))


@pytest.mark.parametrize("element", ["tsda", "rsda", "rsda_wrap", "contact_line",
                                     "contact_circles"])
def test_each_force_type_alone(element):
    """Each force element on its own: Q_q, Q_qd by differences; conservative parts:
    Q = -dV/dq."""
    m = PlanarModel(gravity=(0.0, 0.0))
    a = m.add_body(2.0, 0.5, q=(0.3, -0.2, 0.4), qd=(0.5, -0.3, 1.1))
    b = m.add_body(1.5, 0.2, q=(1.1, 0.4, 2.9), qd=(-0.2, 0.8, -0.6))
    kw = {}
    if element == "tsda":
        m.add_spring_damper(a, (0.2, 0.1), b, (-0.1, 0.3), k=50.0, c=0.0, length0=0.4)
    elif element.startswith("rsda"):
        m.add_rotational_spring_damper(a, b, k=30.0, c=0.0, angle0=-0.3,
                                       wrap=element == "rsda_wrap")
    elif element == "contact_line":
        m.add_contact(b, (0.1, 0.2), radius=1.0, line_point=(0.0, 0.3), normal=(0.2, 1.0), K=1e3,
                      exponent=1.3)
    else:
        m.add_contact(a, (0.0, 0.1), radius=0.6, other=b, other_point=(0.1, 0.0), other_radius=0.7,
                      K=2e3)
    q, qd = m.q0, m.qd0
    Q = m.forces(0.0, q, qd)
    assert np.abs(Q).max() > 1.0
    assert rel_err(m.forces_q(0.0, q, qd), fd(lambda z: m.forces(0.0, z, qd), q)) < 1e-6
    assert rel_err(Q, -fd(lambda z: np.array(m.energy(0.0, z, qd)[1]), q)) < 1e-6, kw


def test_dissipative_force_derivatives():
    """Dampers, the actuator and damped contacts: Q_qd by differences."""
    m = PlanarModel(gravity=(0.0, -1.0))
    a = m.add_body(2.0, 0.5, q=(0.3, -0.2, 0.4), qd=(0.5, -0.3, 1.1))
    b = m.add_body(1.5, 0.2, q=(1.1, 0.4, -0.7), qd=(-0.2, 0.8, -0.6))
    m.add_spring_damper(m.ground, (0.0, 0.0), a, (0.1, 0.0), k=10.0, c=4.0, actuator=(0, 1.0))
    m.add_rotational_spring_damper(a, b, k=5.0, c=2.0)
    m.add_contact(b, radius=1.0, K=1e3, damping=20.0)
    q, qd = m.q0, m.qd0
    assert rel_err(m.forces_qd(0.3, q, qd), fd(lambda z: m.forces(0.3, q, z), qd)) < 1e-6
    assert rel_err(m.forces_q(0.3, q, qd), fd(lambda z: m.forces(0.3, z, qd), q)) < 1e-6


@pytest.mark.parametrize("name", sorted(models.PAPER_MODELS))
def test_index1_jacobian_of_paper_models(name):
    """df/dy of the index-1 formulation (LLM eqs 10-15) against differences of f."""
    m = models.PAPER_MODELS[name]()
    y = np.r_[m.q0, m.qd0] + 0.01 * np.sin(np.arange(2 * m.nq))  # off the manifold too
    J = m.jacobian(0.1, y)
    assert rel_err(J, fd(lambda z: m.rhs(0.1, z), y, h=1e-5)) < 1e-6
    Jb = m.jacobian(0.1, y, baumgarte=(3.0, 4.0))
    assert rel_err(Jb, fd(lambda z: m.rhs(0.1, z, baumgarte=(3.0, 4.0)), y, h=1e-5)) < 1e-6


def test_index1_jacobian_of_kitchen_sink(sink):
    y = np.r_[sink.q0, sink.qd0]
    assert rel_err(sink.jacobian(T0, y), fd(lambda z: sink.rhs(T0, z), y, h=1e-5)) < 1e-6


# ------------------------------------------------------------------ energy and violation

def test_undamped_models_conserve_energy():
    """Energy drift bounded by the integrator's tolerance (relative to the energy scale)."""
    for ctor, t_end in ((models.double_pendulum_stiff_spring, 1.0),
                        (models.two_link_manipulator, 3.0), (models.pendulum_particle, 2.0)):
        m = ctor()
        for rtol in (1e-6, 1e-9):
            tr = simulate(m, (0.0, t_end), rtol=rtol, atol=rtol * 1e-2, project=True)
            E = tr.energy()
            scale = np.abs(E.kinetic).max() + np.abs(E.potential).max()
            drift = np.abs(E.total - E.total[0]).max() / scale
            assert drift < 100 * rtol, (m.name, rtol, drift)
        # the model's own energy equals the paper's formula
        assert rel_err(E.total, m.reference_energy(tr.q, tr.qd)) < 1e-12


def test_violation_bounded_with_projection_and_reported_without():
    m = models.two_link_manipulator()
    free = simulate(m, (0.0, 10.0), rtol=1e-5, atol=1e-7)
    proj = simulate(m, (0.0, 10.0), rtol=1e-5, atol=1e-7, project=True)
    baum = simulate(m, (0.0, 10.0), rtol=1e-5, atol=1e-7, baumgarte=10.0)
    vf, vp, vb = free.violation(), proj.violation(), baum.violation()
    assert vf.position.max() > 1e-6           # drift is there, and reported
    assert vf.position[-1] > 10 * vf.position[len(vf.position) // 10]  # and grows
    assert vp.position.max() < 1e-10 and vp.velocity.max() < 1e-10
    assert vb.position.max() < vf.position.max() / 10
    assert vf.acceleration.max() < 1e-10       # q'' from the index-1 system
    assert vb.acceleration.max() > 1e-8        # includes the Baumgarte terms
    per_row = free.violation(per_row=True)
    assert per_row.position.shape == (m.nc, len(free.t))
    assert np.array_equal(np.abs(per_row.position).max(axis=0), vf.position)
    assert np.array_equal(per_row.position, m.phi(free.t, free.q))


# ------------------------------------------------------------------ MechanicalSystem

def two_link_relative():
    """The LS manipulator by hand in relative angles phi = (theta1, theta2 - theta1):
    M_phi = T^T M_theta T, Q_phi = T^T Q_theta with theta' = T phi' (T constant)."""
    L1, L2, m1, m2, g = 1.0, math.sqrt(3.0), 1.0, 2.0, 9.81
    a1, a2 = L1 / 2, L2 / 2
    I1, I2 = m1 * L1 ** 2 / 12, m2 * L2 ** 2 / 12
    A, B, C = m1 * a1 ** 2 + I1 + m2 * L1 ** 2, m2 * L1 * a2, m2 * a2 ** 2 + I2
    T = np.array([[1.0, 0.0], [1.0, 1.0]])  # theta' = T phi'

    def mass(p):
        c = math.cos(p[1])
        return T.T @ np.array([[A, B * c], [B * c, C]]) @ T

    def forces(t, p, pd):
        th1, th2 = p[0], p[0] + p[1]
        w1, w2 = pd[0], pd[0] + pd[1]
        s = math.sin(th2 - th1)
        Qa = np.array([-g * (m1 * a1 + m2 * L1) * math.cos(th1) + B * s * w2 ** 2,
                       -g * m2 * a2 * math.cos(th2) - B * s * w1 ** 2])
        return T.T @ Qa

    def energy(t, p, pd):
        th1, th2 = p[0], p[0] + p[1]
        return g * (m1 * a1 * math.sin(th1) + m2 * (L1 * math.sin(th1) + a2 * math.sin(th2))) + \
            0.5 * pd @ mass(p) @ pd

    def geometry(p):
        th1, th2 = p[0], p[0] + p[1]
        e = np.array([L1 * math.cos(th1), L1 * math.sin(th1)])
        return [np.array([[0.0, 0.0], e, e + L2 * np.array([math.cos(th2), math.sin(th2)])])]

    return MechanicalSystem(mass=mass, forces=forces, q0=[math.pi / 3, -math.pi / 6 - math.pi / 3],
                            energy=energy, names=["phi1", "phi2"], geometry=geometry,
                            name="two_link_relative")


def test_planar_model_and_mechanical_system_move_the_same():
    pm = models.two_link_manipulator()
    ms = two_link_relative()
    te = np.linspace(0.0, 3.0, 31)
    for method in ["dopri5"] + IMPLICIT[:1]:
        a = simulate(pm, (0.0, 3.0), method=method, rtol=1e-9, atol=1e-11, t_eval=te)
        b = simulate(ms, (0.0, 3.0), method=method, rtol=1e-9, atol=1e-11, t_eval=te)
        assert a.success and b.success
        assert np.abs(a.output("theta1") - b.q[0]).max() < 1e-6
        assert np.abs(a.output("theta2") - (b.q[0] + b.q[1])).max() < 1e-6
        assert rel_err(a.energy().total, b.energy().total) < 1e-6
    assert np.allclose(ms.energy()[0], 0.0) and ms.nc == 0


def cartesian_pendulum(gamma=True, L=1.3, mass=2.0):
    """Point mass on a rod, q = (x, y), Phi = (x^2 + y^2 - L^2) / 2."""
    th = 0.8
    q0 = [L * math.sin(th), -L * math.cos(th)]
    kw = dict(gamma=(lambda t, q, qd: np.array([-(qd @ qd)]))) if gamma else {}
    return MechanicalSystem(mass=mass * np.eye(2),
                            forces=lambda t, q, qd: np.array([0.0, -9.81 * mass]),
                            constraints=lambda t, q: np.array([0.5 * (q @ q - L * L)]),
                            constraint_jacobian=lambda t, q: q[None, :], constraint_t=0,
                            q0=q0, **kw)


def test_constrained_mechanical_system_matches_planar_model():
    """The Cartesian pendulum (gamma by hand, and by differences) against a PlanarModel
    body hanging on a distance joint."""
    L, th = 1.3, 0.8
    pm = PlanarModel()
    b = pm.add_body(2.0, 0.1, q=(L * math.sin(th), -L * math.cos(th), 0.0))
    pm.add_distance(pm.ground, (0, 0), b, (0, 0), length=L)
    te = np.linspace(0, 2, 21)
    ref = simulate(pm, (0, 2), rtol=1e-10, atol=1e-12, t_eval=te)
    for gamma in (True, False):
        ms = cartesian_pendulum(gamma)
        assert rel_err(ms.gamma(0.0, ms.q0, [0.3, -0.2]), [-(0.09 + 0.04)]) < 1e-8
        tr = simulate(ms, (0, 2), rtol=1e-10, atol=1e-12, t_eval=te)
        assert np.abs(tr.q - ref.q[:2]).max() < 1e-7
        assert rel_err(tr.lam[0] * L, ref.lam[0] * L) < 1e-5  # same multiplier scaling


def test_mechanical_system_rheonomic_finite_differences():
    """Phi_t and gamma of a rheonomic constraint by central differences in C."""
    w = 1.7

    def phi(t, q):  # a point on a line turning at w
        return np.array([q[1] * math.cos(w * t) - q[0] * math.sin(w * t)])

    def phi_q(t, q):
        return np.array([[-math.sin(w * t), math.cos(w * t)]])

    ms = MechanicalSystem(mass=np.eye(2), forces=lambda t, q, qd: np.zeros(2), constraints=phi,
                          constraint_jacobian=phi_q, q0=[1.0, 0.0])
    q, qd, t = np.array([0.4, 0.9]), np.array([-0.3, 0.5]), 0.6
    c, s = math.cos(w * t), math.sin(w * t)
    pt = -w * (q[1] * s + q[0] * c)
    # gamma = -2 Phi_qt qd - Phi_tt ((Phi_q qd)_q = 0 here)
    gamma = 2 * w * (qd[0] * c + qd[1] * s) + w * w * (q[1] * c - q[0] * s)
    assert abs(ms.phi_t(t, q)[0] - pt) < 1e-8
    assert abs(ms.gamma(t, q, qd)[0] - gamma) < 1e-6


def test_mechanical_system_kernels_are_called_time_first(tmp_path):
    """Every Python kernel of a MechanicalSystem receives t (a float, in s) first and
    then the 1-D vectors of one point; mass and geometry receive q only.  The
    Cartesian pendulum with every derivative by hand: the kernels are also right,
    so the analytic index-1 Jacobian matches differences of f."""
    L, mass, g = 1.3, 2.0, 9.81
    calls = {}

    def rec(name, fn):
        def wrapped(*args):
            calls.setdefault(name, args)
            return fn(*args)
        return wrapped

    kernels = dict(
        mass=rec("mass", lambda q: mass * np.eye(2)),
        forces=rec("forces", lambda t, q, qd: np.array([0.0, -g * mass]) - 0.3 * qd),
        constraints=rec("constraints", lambda t, q: np.array([0.5 * (q @ q - L * L)])),
        constraint_jacobian=rec("constraint_jacobian", lambda t, q: q[None, :]),
        constraint_t=rec("constraint_t", lambda t, q: np.zeros(1)),
        gamma=rec("gamma", lambda t, q, qd: np.array([-(qd @ qd)])),
        forces_q=rec("forces_q", lambda t, q, qd: np.zeros((2, 2))),
        forces_qd=rec("forces_qd", lambda t, q, qd: -0.3 * np.eye(2)),
        gamma_q=rec("gamma_q", lambda t, q, qd: np.zeros((1, 2))),
        gamma_qd=rec("gamma_qd", lambda t, q, qd: -2.0 * qd[None, :]),
        phiq_x_q=rec("phiq_x_q", lambda t, q, x: x[None, :]),
        phiqT_lam_q=rec("phiqT_lam_q", lambda t, q, lam: lam[0] * np.eye(2)),
        energy=rec("energy", lambda t, q, qd: g * mass * q[1] + 0.5 * mass * qd @ qd),
        geometry=rec("geometry", lambda q: [np.array([[0.0, 0.0], q])]),
    )
    ms = MechanicalSystem(q0=[L * math.sin(0.8), -L * math.cos(0.8)],
                          qd0=[0.4 * math.cos(0.8), 0.4 * math.sin(0.8)], **kernels)  # consistent
    y = np.r_[ms.q0, ms.qd0]
    assert rel_err(ms.jacobian(0.2, y), fd(lambda z: ms.rhs(0.2, z), y)) < 1e-6
    tr = simulate(ms, (0.0, 0.5), method=IMPLICIT[0] if IMPLICIT else "dopri5", rtol=1e-8,
                  atol=1e-10)
    assert tr.success and tr.energy().total.shape == tr.t.shape
    ms.phi_t(0.1)
    ms.phiq_x_q(0.1, ms.q0, np.ones(2))
    ms.phiqT_lam_q(0.1, ms.q0, np.ones(1))
    ms.gamma_q(0.1)
    ms.gamma_qd(0.1)
    ms.forces_q(0.1)
    ms.forces_qd(0.1)
    tr.animate(tmp_path / "frames", fps=4, max_frames=2)  # calls geometry(q) per frame
    sizes = dict(mass=(2,), geometry=(2,), constraints=(2,), constraint_jacobian=(2,),
                 constraint_t=(2,), phiqT_lam_q=(2, 1))
    assert set(calls) == set(kernels)
    for name, args in calls.items():
        if name in ("mass", "geometry"):
            assert len(args) == 1 and args[0].shape == (2,), name
            continue
        assert isinstance(args[0], float), name          # t first
        shapes = tuple(np.shape(a) for a in args[1:])
        expect = sizes.get(name, (2, 2))
        assert shapes == tuple((n,) for n in expect), (name, shapes)


RotLine = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double,
                           ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double))
RotLineJ = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double,
                            ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                            ctypes.c_long)
W_ROT = 1.7


@RotLine
def rot_line_phi_c(ud, t, q, out):
    out[0] = q[1] * math.cos(W_ROT * t) - q[0] * math.sin(W_ROT * t)
    return 0


@RotLineJ
def rot_line_phi_q_c(ud, t, q, out, ld):
    out[0] = -math.sin(W_ROT * t)   # column-major, ld = nc = 1
    out[ld] = math.cos(W_ROT * t)
    return 0


def test_mechanical_system_c_constraints_take_time_first():
    """The rheonomic line as C constraint kernels (the mb_mech slot order: user data, t,
    q, out) and as Python kernels f(t, q): the same Phi, Phi_t and gamma at any t."""
    def phi(t, q):
        return np.array([q[1] * math.cos(W_ROT * t) - q[0] * math.sin(W_ROT * t)])

    def phi_q(t, q):
        return np.array([[-math.sin(W_ROT * t), math.cos(W_ROT * t)]])

    common = dict(mass=np.eye(2), forces=lambda t, q, qd: np.zeros(2), q0=[1.0, 0.0])
    py = MechanicalSystem(constraints=phi, constraint_jacobian=phi_q, **common)
    c = MechanicalSystem(constraints=rot_line_phi_c, constraint_jacobian=rot_line_phi_q_c, nc=1,
                         **common)
    q, qd = np.array([0.4, 0.9]), np.array([-0.3, 0.5])
    for t in (0.0, 0.6, 2.3):
        assert np.array_equal(c.phi(t, q), phi(t, q))
        assert np.array_equal(c.constraint_jacobian(t, q), phi_q(t, q))
        assert np.array_equal(c.phi_t(t, q), py.phi_t(t, q))
        assert np.array_equal(c.gamma(t, q, qd), py.gamma(t, q, qd))
    assert abs(c.phi_t(0.6, q)[0] + W_ROT * (q[1] * math.sin(1.02) + q[0] * math.cos(1.02))) < 1e-8


def test_mechanical_system_validation():
    with pytest.raises(ValueError, match="forces is required"):
        MechanicalSystem(mass=np.eye(2), forces=None, q0=[0, 0])
    with pytest.raises(ValueError, match="give nq or q0"):
        MechanicalSystem(mass=lambda q: np.eye(2), forces=lambda t, q, qd: q)
    with pytest.raises(ValueError, match="both constraints and constraint_jacobian"):
        MechanicalSystem(mass=np.eye(2), forces=lambda t, q, qd: q, constraints=lambda t, q: q[:1],
                         q0=[0, 0])
    with pytest.raises(ValueError, match="mass at .*expected shape \\(2, 2\\)"):
        MechanicalSystem(mass=lambda q: np.eye(3), forces=lambda t, q, qd: q, q0=[0, 0])
    with pytest.raises(ValueError, match="forces at .*returned 3 values, expected 2"):
        MechanicalSystem(mass=np.eye(2), forces=lambda t, q, qd: np.zeros(3), q0=[0, 0])
    with pytest.raises(ValueError, match="constraint_jacobian at .*expected shape \\(1, 2\\)"):
        MechanicalSystem(mass=np.eye(2), forces=lambda t, q, qd: q, constraints=lambda t, q: q[:1],
                         constraint_jacobian=lambda t, q: np.eye(2), q0=[0, 0])

    def boom(t, q, qd):
        if t > 0.1:
            raise ZeroDivisionError("user bug")
        return -q

    ms = MechanicalSystem(mass=np.eye(1), forces=boom, q0=[1.0])
    with pytest.raises(ZeroDivisionError, match="user bug"):
        simulate(ms, (0, 1))
    with pytest.raises(ValueError, match="no energy function"):
        simulate(ms, (0, 0.05)).energy()


DP = ctypes.POINTER(ctypes.c_double)
MASS_C = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, DP, DP, ctypes.c_long)
FORCES_C = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double, DP, DP, DP)


@MASS_C
def msd_mass_c(ud, q, M, ld):
    M[0] = problems.MSD_M
    return 0


@FORCES_C
def msd_forces_c(ud, t, q, qd, Q):
    Q[0] = problems.MSD_M * problems.G - problems.MSD_K * q[0] - problems.MSD_C * qd[0]
    return 0


def test_mechanical_system_with_c_kernels():
    """Kernels as C functions (ctypes): the LN mass-spring-damper against its closed form."""
    ms = MechanicalSystem(mass=msd_mass_c, forces=msd_forces_c, q0=[0.0], qd0=[0.0])
    assert not mbint._core.mech_info(ms._mech_handle())["python"]
    te = np.linspace(0, 5, 11)
    tr = simulate(ms, (0, 5), rtol=1e-10, atol=1e-12, t_eval=te)
    assert np.abs(tr.q[0] - problems.mass_spring_damper_exact(te)[0]).max() < 1e-8
    bad = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double)(lambda t: 0)
    with pytest.raises(ValueError, match="signature"):
        MechanicalSystem(mass=bad, forces=msd_forces_c, q0=[0.0])


# ------------------------------------------------------------------ slow paths, errors

def test_python_force_equals_generalized_force():
    def model(py):
        m = PlanarModel()
        b = m.add_body(1.0, 0.1, q=(1.0, 0.0, 0.0))
        m.add_revolute(m.ground, (0, 0), b, (-1.0, 0.0))
        if py:
            m.add_force(b, lambda t, q, qd: np.array([0.0, 0.0, 0.5 + 2.0 * math.sin(3.0 * t)]))
        else:
            m.add_generalized_force(b, "theta", c0=0.5, a=2.0, w=3.0)
        return m

    te = np.linspace(0, 1, 6)
    a = simulate(model(True), (0, 1), rtol=1e-9, atol=1e-11, t_eval=te)
    b = simulate(model(False), (0, 1), rtol=1e-9, atol=1e-11, t_eval=te)
    assert np.abs(a.q - b.q).max() < 1e-9
    if IMPLICIT:  # Q_q of the Python force by differences in C
        c = simulate(model(True), (0, 1), method=IMPLICIT[0], rtol=1e-8, atol=1e-10, t_eval=te)
        assert np.abs(c.q - b.q).max() < 1e-5

    m = PlanarModel()
    bb = m.add_body(1.0, 1.0)
    m.add_force(bb, lambda t, q, qd: np.zeros(2))
    with pytest.raises(ValueError, match="expected \\(f_x, f_y, torque\\)"):
        m.forces()
    m2 = PlanarModel()
    b2 = m2.add_body(1.0, 1.0)
    m2.add_force(b2, lambda t, q, qd: 1.0 / 0.0)
    with pytest.raises(ZeroDivisionError):
        simulate(m2, (0, 1))


def test_redundant_and_inconsistent_constraints_are_reported():
    m = PlanarModel()
    b = m.add_body(1.0, 0.1, q=(1.0, 0.0, 0.0))
    m.add_revolute(m.ground, (0, 0), b, (-1.0, 0.0), name="pin")
    m.add_distance(m.ground, (0, 0), b, (0.0, 0.0), name="rod")  # implied by the pin
    with pytest.raises(ValueError, match="redundant.*rank 2 < nc = 3.*rod"):
        simulate(m, (0, 1))
    m = PlanarModel()
    b = m.add_body(1.0, 0.1, q=(1.01, 0.02, 0.0), qd=(0.3, 0.0, 0.0))
    m.add_revolute(m.ground, (0, 0), b, (-1.0, 0.0))
    with pytest.raises(ValueError, match=r"inconsistent initial conditions.*\|Phi\(q0\)\| = "
                                         r"2\.000e-02.*consistent='project'"):
        simulate(m, (0, 1))
    tr = simulate(m, (0, 1), consistent="project", rtol=1e-8, atol=1e-10)
    assert tr.initial["position"] < 1e-10 and tr.initial["velocity"] < 1e-10
    assert np.abs(m.phi(0.0, tr.q[:, 0])).max() < 1e-10
    tr = simulate(m, (0, 0.1), consistent="ignore")
    assert tr.violation().position[0] == pytest.approx(0.02)


# ------------------------------------------------------------------ the papers' models

@pytest.mark.parametrize("name", sorted(models.PAPER_MODELS))
def test_paper_model_consistent_and_runs(name):
    m = models.PAPER_MODELS[name]()
    if m.nc:
        assert np.abs(m.phi()).max() < 1e-14
        vel = m.constraint_jacobian() @ m.qd0 + m.phi_t()
        assert np.abs(vel).max() < 1e-13
    assert rel_err(sum(m.energy()), m.reference_energy(m.q0, m.qd0)) < 1e-13
    t_end = min(m.t_span[1], 0.3 if name == "stiff_double_pendulum" else 1.0)
    opts = dict(rtol=1e-7, atol=1e-9)  # and the model's other settings (max_step)
    ref = simulate(m, (0.0, t_end), method="dopri5", **opts)
    assert ref.success, ref.message
    assert ref.options["max_step"] == m.settings.get("max_step", np.inf)
    for method in IMPLICIT:
        tr = simulate(m, (0.0, t_end), method=method, **opts)
        assert tr.success, (method, tr.message)
        assert np.abs(tr.q[:, -1] - ref.q[:, -1]).max() < 1e-4, method
    for out in m.outputs:
        v = ref.output(out)
        assert v.shape == (len(ref.t),)
        # an output indexes the coordinate first: one state gives the value at that state
        k = len(ref.t) // 2
        assert np.asarray(m.outputs[out](ref.t[k], ref.q[:, k], ref.qd[:, k])) == v[k]


def test_rn_printed_initial_state():
    """RN 5.1: the printed numbers, the consistency of the geometry behind them."""
    m = models.stiff_double_pendulum()
    printed_q = [1.0, 0.0, 0.0, 3.4488887, -0.388228, 23 * math.pi / 12]
    printed_qd = [0.0, 0.0, 0.0, 3.8822857, 14.4888887, 10.0]
    assert np.abs(m.q0 - printed_q).max() < 1e-6
    assert np.abs(m.qd0 - printed_qd).max() < 2e-6
    assert np.abs(m.phi()).max() < 1e-15
    assert np.abs(m.constraint_jacobian() @ m.qd0).max() < 1e-14
    # dominant eigenvalue: real, of the order -1e5 (the paper: "a real part of the order -10E5")
    ev = np.linalg.eigvals(m.jacobian(0.0, np.r_[m.q0, m.qd0]))
    lead = ev[np.argmax(np.abs(ev))]
    assert -2e5 < lead.real < -5e4 and abs(lead.imag) < 1.0
    if IMPLICIT:  # body 1 settles hanging down, theta1 = 3 pi/2 (mod 2 pi) less the gravity sag
        tr = simulate(m, (0.0, 8.0), method=IMPLICIT[0], rtol=1e-5, atol=1e-7)
        assert abs(tr.output("theta1_mod")[-1] - 1.5 * math.pi) < 0.05


def test_sp_rk4_unstable_at_paper_step():
    """SP paper: with h = 0.005 RK4 is unstable on the pendulum with the particle."""
    m = models.pendulum_particle()
    tr = simulate(m, (0.0, 1.0), method="rk4", h=0.005)
    blown = (not tr.success) or np.abs(tr.output("particle_offset")).max() > 1.0
    assert blown
    ok = simulate(m, (0.0, 1.0), method="rk4", h=0.0005)
    assert ok.success and ok.output("particle_offset").max() < 1e-3


def test_ln_mass_spring_damper_matches_closed_form():
    m = models.mass_spring_damper()
    te = np.linspace(0, 5, 26)
    tr = simulate(m, (0, 5), rtol=1e-10, atol=1e-12, t_eval=te)
    assert np.abs(tr.output("x") - problems.mass_spring_damper_exact(te)[0]).max() < 1e-8


def test_bouncing_balls_planar_model_equals_paper_ode():
    m = models.bouncing_balls()
    f = models.bouncing_balls_ode()
    te = np.linspace(0, 1.5, 16)
    tr = simulate(m, (0, 1.5), rtol=1e-10, atol=1e-12, max_step=0.005, t_eval=te)
    ref = scipy_solve_ivp(f.fun, (0, 1.5), f.y0, method="DOP853", rtol=1e-11, atol=1e-12,
                          max_step=0.005, t_eval=te)
    assert np.abs(tr.output("height1") - ref.y[0]).max() < 1e-6
    assert np.abs(tr.output("height2") - ref.y[1]).max() < 1e-6
    assert np.allclose(m.contact_gaps(tr.q), f.gaps(ref.y), atol=1e-6)  # both (n, m)
    assert rel_err(tr.energy().total, f.energy(ref.y)) < 1e-5
    assert np.all(tr.q[[0, 2, 3, 5]] == 0.0)  # on the vertical line, not rotating
    J = f.jac(0.0, np.array([1.15, 1.0, 0.0, 0.0]))
    assert rel_err(J, fd(lambda y: f.fun(0.0, y), [1.15, 1.0, 0.0, 0.0])) < 1e-6
