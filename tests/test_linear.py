"""mbint.equilibrium, mbint.linearize and mbint.modes against closed forms and independent
computations (energy minimization on a 1-DOF parametrization, a 2-DOF Lagrangian
linearization written here, difference Jacobians of the index-1 right-hand side)."""
import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.linalg import eigvals, null_space  # noqa: E402
from scipy.optimize import minimize_scalar  # noqa: E402

import mbint  # noqa: E402

G = 9.81


def rod_pendulum(m=2.0, d=0.7, Ic=0.3, theta=-1.2, torque=None):
    """A body pinned to the ground at distance d from its centre of mass."""
    model = mbint.PlanarModel(gravity=(0.0, -G), name="rod")
    b = model.add_body(m, Ic, q=(d * math.cos(theta), d * math.sin(theta), theta), name="rod")
    model.add_revolute(model.ground, (0.0, 0.0), b, (-d, 0.0), name="pin")
    if torque is not None:
        model.add_generalized_force(b, "theta", torque, name="motor")
    return model


def sorted_eigs(a):
    a = np.asarray(a, complex)
    return a[np.lexsort((a.imag, np.round(a.real, 8)))]


# ------------------------------------------------------------------ the pendulum
def test_pendulum_frequency_and_unstable_upright():
    m, d, Ic = 2.0, 0.7, 0.3
    Ip = Ic + m * d * d
    model = rod_pendulum(m, d, Ic)
    eq = mbint.equilibrium(model, stability=True)
    assert eq.method == "newton"
    assert abs(eq.q[2] + math.pi / 2) < 1e-12 and abs(eq.q[0]) < 1e-12
    assert abs(eq.q[1] + d) < 1e-12
    f = math.sqrt(m * G * d / Ip) / (2 * math.pi)
    md = eq.modes
    assert eq.stable and md.stable and len(md) == 1
    assert abs(md.frequencies[0] - f) < 1e-12 * f
    assert abs(md.damped_frequencies[0] - f) < 1e-12 * f
    assert abs(md.damping_ratios[0]) < 1e-12
    # the upright equilibrium: a positive real eigenvalue sqrt(m g d / I_pivot)
    up = mbint.equilibrium(model, q0=(0.05, d, math.pi / 2 + 0.07), stability=True)
    assert abs(up.q[2] - math.pi / 2) < 1e-12
    assert up.stable is False
    s = up.modes.eigenvalues
    lam = math.sqrt(m * G * d / Ip)
    assert np.max(s.real) == pytest.approx(lam, rel=1e-12)
    assert np.all(np.abs(s.imag) < 1e-12)


def test_pendulum_linearization_inputs_outputs():
    m, d, Ic = 2.0, 0.7, 0.3
    Ip = Ic + m * d * d
    model = rod_pendulum(m, d, Ic)
    q = mbint.equilibrium(model).q
    lin = mbint.linearize(model, q, inputs=["rod.theta"], outputs=["rod.x", "rod.theta'"],
                          independent=["rod.theta"])
    assert lin.state_names == ["rod.theta", "rod.theta'"]
    assert lin.state_units == ["rad", "rad/s"] and lin.input_units == ["N m"]
    np.testing.assert_allclose(lin.A, [[0, 1], [-m * G * d / Ip, 0]], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lin.B, [[0], [1 / Ip]], rtol=1e-12)
    # x = d cos(theta): dx/dtheta = -d sin(-pi/2) = d
    np.testing.assert_allclose(lin.C, [[d, 0], [0, 1]], rtol=1e-12, atol=1e-15)
    ss = lin.to_scipy()
    # static gain of the angle to the torque: 1 / (m g d)
    assert ss.A.shape == (2, 2)
    gain = (lin.C @ np.linalg.solve(-lin.A, lin.B))[0, 0]
    assert gain == pytest.approx(d / (m * G * d), rel=1e-12)
    # the same A by central differences of v''
    lin_d = mbint.linearize(model, q, independent=["rod.theta"], jacobian="differences")
    np.testing.assert_allclose(lin_d.A, lin.A, rtol=1e-8, atol=1e-8)


# ------------------------------------------------------------------ two masses
def two_mass_system(m1, m2, k1, k2, alpha=0.0, g=0.0):
    """Masses hanging in a chain (coordinates downwards): ground -k1- m1 -k2- m2, damping
    alpha K (proportional), gravity g along the coordinates."""
    K = np.array([[k1 + k2, -k2], [-k2, k2]])
    M = np.diag([m1, m2])

    def forces(t, q, qd):
        return g * np.array([m1, m2]) - K @ q - alpha * K @ qd

    return mbint.MechanicalSystem(M, forces, q0=np.zeros(2), names=["x1", "x2"],
                                  units=["m", "m"], name="two_masses"), M, K


def closed_form_frequencies(m1, m2, k1, k2):
    a = m1 * m2
    b = -(m1 * k2 + m2 * (k1 + k2))
    c = k1 * k2
    disc = math.sqrt(b * b - 4 * a * c)
    w2 = np.array([(-b - disc) / (2 * a), (-b + disc) / (2 * a)])
    return np.sqrt(w2) / (2 * math.pi)


def test_two_masses_frequencies_damping_and_statics():
    m1, m2, k1, k2 = 2.0, 0.5, 300.0, 80.0
    model, M, K = two_mass_system(m1, m2, k1, k2, alpha=0.002, g=G)
    eq = mbint.equilibrium(model, stability=True)
    # static deflections: K q = m g
    np.testing.assert_allclose(eq.q, np.linalg.solve(K, G * np.array([m1, m2])), rtol=1e-13)
    md = eq.modes
    f = closed_form_frequencies(m1, m2, k1, k2)
    np.testing.assert_allclose(md.frequencies, f, rtol=1e-12)
    # proportional damping C = alpha K: zeta_i = alpha w_i / 2
    np.testing.assert_allclose(md.damping_ratios, 0.002 * 2 * math.pi * f / 2, rtol=1e-10)
    np.testing.assert_allclose(md.damped_frequencies,
                               f * np.sqrt(1 - md.damping_ratios ** 2), rtol=1e-10)
    # mode shapes: (K - w^2 M) phi = 0
    for j in range(2):
        w2 = (2 * math.pi * f[j]) ** 2
        phi = np.real(md.full_shapes[:, j])
        assert np.linalg.norm((K - w2 * M) @ phi) < 1e-10 * np.linalg.norm(K) * np.abs(phi).max()
    # the pinned first mass: reactions hold the whole weight
    fx = mbint.equilibrium(model, q0=np.zeros(2), fixed=["x1"])
    assert abs(fx.q[0]) < 1e-15
    assert fx.q[1] == pytest.approx(m2 * G / k2, rel=1e-13)
    assert fx.reactions[0] == pytest.approx((m1 + m2) * G, rel=1e-13)


def test_two_masses_transfer_static_gain():
    m1, m2, k1, k2 = 2.0, 0.5, 300.0, 80.0
    model, M, K = two_mass_system(m1, m2, k1, k2)
    lin = mbint.linearize(model, np.zeros(2), inputs=["x2"], outputs=["x1", "x2"])
    np.testing.assert_allclose(lin.B[2:, 0], np.linalg.solve(M, [0.0, 1.0]), rtol=1e-12)
    gain = lin.C @ np.linalg.solve(-lin.A, lin.B)
    np.testing.assert_allclose(gain[:, 0], np.linalg.solve(K, [0.0, 1.0]), rtol=1e-10)
    ss = lin.to_scipy()
    assert ss.B.shape == (4, 1) and ss.C.shape == (2, 4)


def planar_two_masses(m1, m2, k1, k2, c1=0.0):
    """The same chain horizontally as a PlanarModel: two bodies on translational joints
    along x, TSDAs ground-body1 and body1-body2 (springs relaxed at the start)."""
    model = mbint.PlanarModel(gravity=(0.0, -G), name="planar_two_masses")
    b1 = model.add_body(m1, 1.0, q=(1.0, 0.0, 0.0), name="m1")
    b2 = model.add_body(m2, 1.0, q=(2.0, 0.0, 0.0), name="m2")
    for b in (b1, b2):
        model.add_translational(model.ground, (0.0, 0.0), b, (0.0, 0.0), axis=(1.0, 0.0),
                                phi0=0.0)
    model.add_spring_damper(model.ground, (0.0, 0.0), b1, (0.0, 0.0), k=k1, c=c1, name="s1")
    model.add_spring_damper(b1, (0.0, 0.0), b2, (0.0, 0.0), k=k2, name="s2")
    model.add_generalized_force(b2, "x", 0.0, name="push")
    return model


def test_planar_two_masses_on_sliders():
    m1, m2, k1, k2, c1 = 2.0, 0.5, 300.0, 80.0, 3.0
    model = planar_two_masses(m1, m2, k1, k2)
    md = mbint.modes(model)
    np.testing.assert_allclose(md.frequencies, closed_form_frequencies(m1, m2, k1, k2),
                               rtol=1e-12)
    assert set(md.names) == {"m1.x", "m2.x"}
    # a damper c1 on the first spring: eigenvalues of M s^2 + C s + K (companion form)
    damped = planar_two_masses(m1, m2, k1, k2, c1)
    M, K, C = np.diag([m1, m2]), np.array([[k1 + k2, -k2], [-k2, k2]]), np.diag([c1, 0.0])
    Minv = np.linalg.inv(M)
    comp = np.block([[np.zeros((2, 2)), np.eye(2)], [-Minv @ K, -Minv @ C]])
    s = eigvals(comp)
    s = s[s.imag > 0]
    s = s[np.argsort(np.abs(s))]
    mdd = mbint.modes(damped)
    np.testing.assert_allclose(mdd.eigenvalues, s, rtol=1e-11)
    np.testing.assert_allclose(mdd.damping_ratios, -s.real / np.abs(s), rtol=1e-10)
    # inputs: a generalized force element and the TSDA actuator (tension pulls together)
    lin = mbint.linearize(damped, damped.q0, inputs=["push", "s2"], outputs=["m1.x", "m2.x"],
                          independent=["m1.x", "m2.x"])
    np.testing.assert_allclose(lin.B[2:], Minv @ np.array([[0.0, 1.0], [1.0, -1.0]]),
                               rtol=1e-9, atol=1e-12)
    assert lin.input_units == ["N", "N"]


# ------------------------------------------------------------------ RN double pendulum
def lagrangian_double_pendulum(k1, c1, k2, c2):
    """M, C, K of the RN double pendulum (models/rn.py: bars of length 2 and 3, m1 = 3,
    m2 = 0.3, J1 = 1, J2 = 0.225, CMs 1 and 1.5 from their pins) in the absolute angles
    (theta1, theta2) about theta1 = theta2 = -pi/2, where both springs are relaxed."""
    m1, m2, L1, L2, J1, J2 = 3.0, 0.3, 1.0, 1.5, 1.0, 0.225
    M = np.array([[m1 * L1 ** 2 + J1 + m2 * (2 * L1) ** 2, m2 * 2 * L1 * L2],
                  [m2 * 2 * L1 * L2, m2 * L2 ** 2 + J2]])
    K = np.array([[G * (m1 * L1 + m2 * 2 * L1) + k1 + k2, -k2], [-k2, G * m2 * L2 + k2]])
    C = np.array([[c1 + c2, -c2], [-c2, c2]])
    return M, C, K


def test_stiff_double_pendulum_frequencies():
    model = mbint.models.stiff_double_pendulum(c1=0.0, c2=0.0)
    eq = mbint.equilibrium(model)
    assert abs(eq.q[2] + math.pi / 2) < 1e-12
    assert abs(math.remainder(eq.q[5] + math.pi / 2, 2 * math.pi)) < 1e-12  # theta2 = 3 pi/2
    md = mbint.modes(model, eq.q)
    M, _, K = lagrangian_double_pendulum(400.0, 0.0, 3e5, 0.0)
    f = np.sort(np.sqrt(np.real(eigvals(np.linalg.solve(M, K))))) / (2 * math.pi)
    np.testing.assert_allclose(md.frequencies, f, rtol=1e-9)
    np.testing.assert_allclose(md.damping_ratios, 0.0, atol=1e-9)
    # the paper's damped model: eigenvalues of M s^2 + C s + K (all real: overdamped)
    dm = mbint.models.stiff_double_pendulum()
    M, C, K = lagrangian_double_pendulum(400.0, 15.0, 3e5, 5e4)
    Minv = np.linalg.inv(M)
    comp = np.block([[np.zeros((2, 2)), np.eye(2)], [-Minv @ K, -Minv @ C]])
    s_ref = sorted_eigs(eigvals(comp))
    lin = mbint.linearize(dm, eq.q, np.zeros(6))
    s = sorted_eigs(lin.eigenvalues())
    np.testing.assert_allclose(s, s_ref, rtol=1e-8)


# ------------------------------------------------------------------ equilibria by hand
def test_mass_on_spring_static_deflection():
    model = mbint.models.mass_spring_damper()
    eq = mbint.equilibrium(model)
    m, k = mbint.problems.MSD_M, mbint.problems.MSD_K
    assert eq.q[1] == pytest.approx(-m * G / k, rel=1e-13)
    assert eq.force_residual < 1e-12 and eq.constraint_residual < 1e-14


def test_spring_loaded_pendulum_against_energy_minimum():
    m, d, Ic, k, L0 = 2.0, 0.7, 0.3, 60.0, 0.5
    anchor = np.array([1.0, 0.0])
    model = rod_pendulum(m, d, Ic, theta=-1.0)
    model.add_spring_damper(model.ground, anchor, "rod", (d, 0.0), k=k, length0=L0)

    def V(th):
        tip = 2 * d * np.array([math.cos(th), math.sin(th)])
        return m * G * d * math.sin(th) + 0.5 * k * (np.linalg.norm(tip - anchor) - L0) ** 2

    ref = minimize_scalar(V, bracket=(-1.0, -0.5, 0.0), tol=1e-14).x
    eq = mbint.equilibrium(model)
    assert abs(eq.q[2] - ref) < 1e-7  # the minimizer's accuracy (sqrt(eps))
    # the stationarity condition itself, by a central difference of V in theta
    h = 1e-5
    dV = (V(eq.q[2] + h) - V(eq.q[2] - h)) / (2 * h)
    assert abs(dV) < 1e-8


def slider_crank(r=0.3, l=0.8, m=(1.0, 2.0, 1.0), k=200.0, anchor=2.0, L0=1.0, phi=-1.0):
    """Crank (pinned at the origin), rod, slider on the x axis; a spring from the slider to
    the ground point (anchor, 0); gravity -y."""
    B = r * np.array([math.cos(phi), math.sin(phi)])
    xs = B[0] + math.sqrt(l * l - B[1] ** 2)
    th2 = math.atan2(-B[1], xs - B[0])
    model = mbint.PlanarModel(gravity=(0.0, -G), name="slider_crank")
    crank = model.add_body(m[0], m[0] * r * r / 12, q=(B[0] / 2, B[1] / 2, phi), name="crank")
    rod = model.add_body(m[1], m[1] * l * l / 12, q=((B[0] + xs) / 2, B[1] / 2, th2), name="rod")
    sl = model.add_body(m[2], 0.1, q=(xs, 0.0, 0.0), name="slider")
    model.add_revolute(model.ground, (0.0, 0.0), crank, (-r / 2, 0.0))
    model.add_revolute(crank, (r / 2, 0.0), rod, (-l / 2, 0.0))
    model.add_revolute(rod, (l / 2, 0.0), sl, (0.0, 0.0))
    model.add_translational(model.ground, (0.0, 0.0), sl, (0.0, 0.0), axis=(1.0, 0.0), phi0=0.0)
    model.add_spring_damper(model.ground, (anchor, 0.0), sl, (0.0, 0.0), k=k, length0=L0)
    return model


def test_slider_crank_with_spring_against_energy_minimum():
    r, l, ms, k, anchor, L0 = 0.3, 0.8, (1.0, 2.0, 1.0), 200.0, 2.0, 1.0
    model = slider_crank(r, l, ms, k, anchor, L0, phi=-1.0)

    def V(phi):  # the 1-DOF parametrization by the crank angle
        By = r * math.sin(phi)
        xs = r * math.cos(phi) + math.sqrt(l * l - By * By)
        return G * (ms[0] * By / 2 + ms[1] * By / 2) + 0.5 * k * (abs(anchor - xs) - L0) ** 2

    ref = minimize_scalar(V, bracket=(-2.5, -1.0, 0.5), tol=1e-14).x
    eq = mbint.equilibrium(model)
    assert eq.method == "newton"
    assert abs(eq.q[2] - ref) < 1e-7
    h = 1e-5
    assert abs((V(eq.q[2] + h) - V(eq.q[2] - h)) / (2 * h)) < 1e-7
    assert eq.constraint_residual < 1e-13


# ------------------------------------------------------------------ A against simulate's f
def restricted_rhs_eigenvalues(model, q, t=0.0):
    """Eigenvalues of the central-difference Jacobian of the index-1 ODE f(t, (q, q'))
    (the rhs simulate integrates) restricted to the tangent space of the constraint
    manifold at the equilibrium (q, 0): span diag(N, N), N = null(Phi_q)."""
    nq = model.nq
    y = np.concatenate([q, np.zeros(nq)])
    J = np.zeros((2 * nq, 2 * nq))
    for j in range(2 * nq):
        h = 1e-6 * max(1.0, abs(y[j]))
        e = np.zeros(2 * nq)
        e[j] = h
        J[:, j] = (model.rhs(t, y + e) - model.rhs(t, y - e)) / (2 * h)
    N = null_space(model.constraint_jacobian(t, q)) if model.nc else np.eye(nq)
    Z = np.zeros_like(N)
    T = np.block([[N, Z], [Z, N]])
    return eigvals(np.linalg.pinv(T) @ J @ T)


@pytest.mark.parametrize("build", ["slider_crank", "two_link", "double_pendulum"])
def test_A_against_difference_jacobian_of_simulate_rhs(build):
    model = {"slider_crank": lambda: slider_crank(),
             "two_link": lambda: mbint.models.two_link_manipulator(),
             "double_pendulum": lambda: mbint.models.stiff_double_pendulum(k2=3e3, c2=5.0)}[build]()
    q = mbint.equilibrium(model).q
    s = sorted_eigs(mbint.linearize(model, q, np.zeros(model.nq)).eigenvalues())
    ref = sorted_eigs(restricted_rhs_eigenvalues(model, q))
    np.testing.assert_allclose(s, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


# ------------------------------------------------------------------ relaxation, errors, plots
def test_relaxation_when_newton_stalls():
    # horizontal pendulum: the Jacobian's stiffness m g d cos(theta) vanishes, Newton's
    # step does not move theta, the line search fails; relaxation lets it fall to rest
    m, d, Ic = 2.0, 0.7, 0.3
    model = rod_pendulum(m, d, Ic, theta=0.0)
    eq = mbint.equilibrium(model)
    assert eq.method == "relaxation"
    assert abs(eq.q[2] + math.pi / 2) < 1e-10
    with pytest.raises(RuntimeError, match="residual"):
        mbint.equilibrium(model, relaxation=False)


def test_no_equilibrium_is_a_clear_error():
    m, d = 2.0, 0.7
    model = rod_pendulum(m, d, 0.3, torque=1.5 * m * G * d)
    with pytest.raises(RuntimeError, match=r"no equilibrium.*force residual"):
        mbint.equilibrium(model)


def test_bad_arguments():
    model = rod_pendulum()
    with pytest.raises(ValueError, match="nq = 3"):
        mbint.equilibrium(model, q0=[0.0, 1.0])
    with pytest.raises(ValueError, match="nq = 3"):
        mbint.linearize(model, q=[0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="constraints"):
        mbint.linearize(model, q=[0.3, 0.3, 0.0])
    q = mbint.equilibrium(model).q
    with pytest.raises(ValueError, match="input 'nope'"):
        mbint.linearize(model, q, inputs=["nope"])
    with pytest.raises(ValueError, match="output 'nope'"):
        mbint.linearize(model, q, outputs=["nope"])
    with pytest.raises(ValueError, match="fixed"):
        mbint.equilibrium(model, fixed=["rod.z"])
    with pytest.raises(ValueError, match="model"):
        mbint.modes(object())


def test_rigid_body_modes_are_apart():
    # a free mass on a slider plus a mass on a spring: one zero mode, one at sqrt(k/m)
    model = mbint.PlanarModel(gravity=(0.0, 0.0))
    a = model.add_body(1.0, 1.0, q=(0.0, 0.0, 0.0), name="free")
    b = model.add_body(4.0, 1.0, q=(0.0, 1.0, 0.0), name="sprung")
    for body in (a, b):
        model.add_translational(model.ground, (0.0, body.q0[1]), body, (0.0, 0.0),
                                axis=(1.0, 0.0), phi0=0.0)
    model.add_spring_damper(model.ground, (-1.0, 1.0), b, (0.0, 0.0), k=100.0)
    md = mbint.modes(model, model.q0)
    np.testing.assert_allclose(md.frequencies, [math.sqrt(100.0 / 4.0) / (2 * math.pi)],
                               rtol=1e-12)
    assert md.rigid_eigenvalues.size == 2 and md.rigid_shapes.shape[1] == 1
    np.testing.assert_allclose(np.abs(md.rigid_full_shapes[:, 0]), [1, 0, 0, 0, 0, 0],
                               atol=1e-12)


def test_plots():
    import matplotlib.pyplot as plt

    md = mbint.modes(slider_crank())
    ax = md.plot(0)
    assert ax.get_xlabel() == "x [m]" and "Hz" in ax.get_title()
    model, _, _ = two_mass_system(2.0, 0.5, 300.0, 80.0)
    ax = mbint.modes(model, np.zeros(2)).plot(1)
    assert "x1 [m]" in [t.get_text() for t in ax.get_xticklabels()]
    with pytest.raises(IndexError):
        md.plot(5)
    plt.close("all")


def test_spatial_pendulum():
    # a 3-D body on a revolute joint about y at the origin, its CM at (0.5, 0, -0.5):
    # hangs at distance d = sqrt(0.5) below the pin, f = sqrt(m g d / (J_yy + m d^2)) / 2 pi
    m, Jyy = 2.0, 0.4
    model = mbint.SpatialModel(gravity=(0.0, 0.0, -G))
    a = model.add_body(m, (0.3, Jyy, 0.5), r=(0.5, 0.0, -0.5), name="a")
    model.add_revolute(model.ground, a, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    eq = mbint.equilibrium(model, stability=True)
    d = math.sqrt(0.5)
    np.testing.assert_allclose(eq.q[:3], [0.0, 0.0, -d], atol=1e-12)
    f = math.sqrt(m * G * d / (Jyy + m * d * d)) / (2 * math.pi)
    assert eq.stable and len(eq.modes) == 1
    assert eq.modes.frequencies[0] == pytest.approx(f, rel=1e-12)
    ax = eq.modes.plot(0)  # a bar chart of the 7 coordinates
    assert "a.x [m]" in [t.get_text() for t in ax.get_xticklabels()]


def test_spatial_actuator_input_against_reduced_accelerations():
    # B of a spatial RSDA's actuator against v'' of the reduced ODE (StateSpace, C) of
    # the model with the actuator at 1 N m minus at 0, at the same point and partition
    def build(act):
        model = mbint.SpatialModel(gravity=(0.0, 0.0, -G))
        a = model.add_body(2.0, (0.3, 0.4, 0.5), r=(0.5, 0.0, -0.5), name="a")
        model.add_revolute(model.ground, a, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0))
        model.add_rotational_spring_damper(model.ground, a, (0.0, 1.0, 0.0), k=5.0,
                                           actuator=act, name="motor")
        return model

    model = build(0.0)
    q = mbint.equilibrium(model).q
    lin = mbint.linearize(model, q, inputs=["motor"])
    assert lin.input_units == ["N m"]
    ind = list(lin.independent)
    acc = [mbint.StateSpace(build(a), 0.0, q, np.zeros(7), independent=ind)
           .acceleration(q[ind], np.zeros(len(ind))) for a in (0.0, 1.0)]
    np.testing.assert_allclose(lin.B[len(ind):, 0], acc[1] - acc[0], rtol=1e-9, atol=1e-12)
    assert np.abs(lin.B).max() > 0.1


def test_urdf_joint_torque_input(tmp_path):
    pytest.importorskip("yourdfpy")
    # one link on a continuous joint about y, CM 0.25 m below it: dtheta''/dtau = 1/I_pivot
    p = tmp_path / "p.urdf"
    p.write_text(
        '<robot name="p"><link name="base"/><link name="bar"><inertial>'
        '<origin xyz="0 0 -0.25"/><mass value="1"/><inertia ixx="0.02" iyy="0.02" izz="0.001" '
        'ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j" type="continuous">'
        '<parent link="base"/><child link="bar"/><axis xyz="0 1 0"/></joint></robot>')
    model = mbint.load_urdf(str(p), torques={"j": 0.0})
    lin = mbint.linearize(model, model.q0, np.zeros(model.nq), inputs=["j"],
                          outputs=["j.angle", "j.rate"])
    Ip = 0.02 + 0.25 ** 2
    # the angle's response: C A B = d theta''/d tau
    assert (lin.C @ lin.A @ lin.B)[0, 0] == pytest.approx(1 / Ip, rel=1e-8)
    md = mbint.modes(model, model.q0)
    assert md.frequencies[0] == pytest.approx(math.sqrt(G * 0.25 / Ip) / (2 * math.pi), rel=1e-9)


def test_modes_off_equilibrium_warns():
    model = rod_pendulum(theta=-1.0)
    with pytest.warns(RuntimeWarning, match="not a static equilibrium"):
        mbint.modes(model, model.q0)


def test_relaxation_with_a_driver_frozen_in_time():
    # a time-driven angle of body 1 (theta1 = 0.3 + 0.2 t^2, at t = 1: 0.5) and a pendulum
    # pinned to it, started horizontal (Newton stalls there): the relaxation with the
    # driver frozen at t = 1 lets body 2 hang straight down below the driven body's tip
    tip = np.array([math.cos(0.5), math.sin(0.5)])
    model = mbint.PlanarModel(gravity=(0.0, -G))
    a = model.add_body(1.0, 0.1, q=(0.5 * tip[0], 0.5 * tip[1], 0.5), name="arm")
    b = model.add_body(1.0, 0.1, q=(tip[0] + 0.5, tip[1], math.pi / 2), name="bob")
    model.add_revolute(model.ground, (0.0, 0.0), a, (-0.5, 0.0))
    model.add_driver(a, "theta", (0.3, 0.0, 0.2))
    model.add_revolute(a, (0.5, 0.0), b, (0.0, 0.5))
    eq = mbint.equilibrium(model, t=1.0, q0=model.q0)
    assert eq.method == "relaxation"
    assert eq.q[2] == pytest.approx(0.5, abs=1e-12)
    np.testing.assert_allclose(eq.q[3:5], tip - [0.0, 0.5], atol=1e-10)
    assert abs(math.remainder(eq.q[5], 2 * math.pi)) < 1e-10


def test_hmmwv_statics_and_modes():
    # the RN vehicle (98 coordinates, 80 constraints): Newton converges, the equilibrium is
    # stable, the free motions in the road plane are rigid-body modes, and the chassis
    # modes on the suspensions and tires lie in a vehicle's range (0.5 to 20 Hz)
    car = mbint.models.hmmwv()
    eq = mbint.equilibrium(car, stability=True)
    assert eq.method == "newton" and eq.constraint_residual < 1e-10
    md = eq.modes
    assert md.stable
    assert md.rigid_shapes.shape[1] >= 3  # x, y, yaw at least
    assert md.shapes.shape == (car.nq - car.nc, len(md))
    assert 0.5 < md.frequencies[0] < 20.0
