"""Tests of the implicit Runge-Kutta family (csrc/methods/implicit_rk.c, radau5.c,
tableaus_irk.c) through ``mbint.solve_ivp``.

Checks: the fixed-step orders of Radau IA/IIA (2s - 1) and Lobatto IIIC (2s - 2)
on a smooth non-stiff problem, with and without a mass matrix (index-1 DAE); the
order of their dense output; ``radau_iia`` (RADAU5) on Van der Pol (mu = 1000 and
the scaled form with eps = 1e-6), Robertson to t = 1e5 and HIRES at rtol 1e-3 ...
1e-8 against SciPy's Radau at rtol 1e-12, with its work (nfev, njev, nlu) beside
SciPy's at the same tolerance; its dense output; Robertson as an index-1 DAE with
M = diag(1, 1, 0); the stability functions against the Pade approximants of e^z.
The tableau order conditions are checked in tests/c/test_implicit_rk.c.
"""
import math

import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import problems as P  # noqa: E402
from mbint.methods import method_info  # noqa: E402
from scipy.integrate import solve_ivp as scipy_solve_ivp  # noqa: E402

FAMILIES = {  # name: (s, order, dense order)
    "radau_ia2": (2, 3, 2), "radau_ia3": (3, 5, 3), "radau_ia4": (4, 7, 4),
    "radau_iia2": (2, 3, 3), "radau_iia3": (3, 5, 4), "radau_iia4": (4, 7, 5),
    "lobatto_iiic2": (2, 2, 2), "lobatto_iiic3": (3, 4, 3), "lobatto_iiic4": (4, 6, 4),
}
STEPS = {2: [0.1, 0.05, 0.025, 0.0125], 3: [0.2, 0.1, 0.05, 0.025], 4: [0.4, 0.2, 0.1, 0.05],
         5: [0.4, 0.2, 0.1, 0.05], 6: [0.5, 0.25, 0.125, 0.0625], 7: [0.5, 0.25, 0.125]}
T_END = 4.0
Y0 = np.array([1.0, 0.0])


def forced_pendulum(t, y):
    """Smooth, non-stiff, nonlinear and non-autonomous: no order reduction."""
    return np.array([y[1], -math.sin(y[0]) + 0.3 * math.cos(t)])


@pytest.fixture(scope="module")
def pendulum_ref():
    r = scipy_solve_ivp(forced_pendulum, (0.0, T_END), Y0, method="DOP853", rtol=1e-13,
                        atol=1e-14, dense_output=True)
    assert r.success
    return r.sol


def slope(h, e):
    return np.polyfit(np.log(h), np.log(e), 1)[0]


def test_method_table():
    info = method_info("radau_iia")
    assert (info.order, info.error_order, info.adaptive) == (5, 3, "embedded")
    assert info.implicit and info.needs_jacobian and info.mass_matrix
    for name, (s, p, _) in FAMILIES.items():
        info = method_info(name)
        assert info.order == p and info.adaptive == "none" and info.fixed_step
        assert info.implicit and info.needs_jacobian and info.mass_matrix
        assert info.description
    with pytest.raises(ValueError, match="fixed step"):  # no h: refused before any C runs
        mbint.solve_ivp(forced_pendulum, (0.0, 1.0), Y0, method="radau_iia3")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_fixed_step_order(name, pendulum_ref):
    s, p, pd = FAMILIES[name]
    hs = STEPS[p]
    err, err_dense = [], []
    for h in hs:
        r = mbint.solve_ivp(forced_pendulum, (0.0, T_END), Y0, method=name, h=h, rtol=1e-13,
                            atol=1e-13, dense_output=True)
        assert r.status == 0, r.message
        assert r.nsteps == round(T_END / h)
        err.append(np.max(np.abs(r.y[:, -1] - pendulum_ref(T_END))))
        tt = np.arange(0.0, T_END - 1e-9, h) + 0.37 * h
        err_dense.append(np.max(np.abs(r.sol(tt) - pendulum_ref(tt))))
        assert np.max(np.abs(r.sol(r.t) - r.y)) <= 1e-14  # exact at the step ends
    k = slope(hs, err)
    assert abs(k - p) <= 0.25, (name, k, err)
    kd = slope(hs, err_dense)
    assert kd >= pd - 0.25, (name, kd, err_dense)


# ---- index-1 DAE with a singular mass matrix, fixed steps ----
def dae(t, u):
    y, z = u
    return np.array([-y + z, z - math.sin(t) - 0.5 * y * y])


DAE_T = 2.0
DAE_U0 = np.array([0.5, 0.125])     # consistent: z0 = sin 0 + y0^2 / 2
DAE_M = np.diag([1.0, 0.0])


@pytest.fixture(scope="module")
def dae_ref():
    r = scipy_solve_ivp(lambda t, y: -y + np.sin(t) + 0.5 * y * y, (0.0, DAE_T), DAE_U0[:1],
                        method="DOP853", rtol=1e-13, atol=1e-14)
    y = r.y[0, -1]
    return np.array([y, math.sin(DAE_T) + 0.5 * y * y])


@pytest.mark.parametrize("name,p_y,p_z", [("radau_iia3", 5, 5), ("lobatto_iiic3", 4, 4),
                                          ("radau_iia2", 3, 3), ("radau_ia3", 5, 2.75)])
def test_fixed_step_dae_order(name, p_y, p_z, dae_ref):
    hs = [0.2, 0.1, 0.05, 0.025]
    ey, ez = [], []
    for h in hs:
        r = mbint.solve_ivp(dae, (0.0, DAE_T), DAE_U0, method=name, h=h, mass=DAE_M,
                            rtol=1e-13, atol=1e-13)
        assert r.status == 0, r.message
        ey.append(abs(r.y[0, -1] - dae_ref[0]))
        ez.append(abs(r.y[1, -1] - dae_ref[1]))
    assert abs(slope(hs, ey) - p_y) <= 0.25, (ey, slope(hs, ey))
    if name.startswith("radau_ia") and not name.startswith("radau_iia"):
        assert slope(hs, ez) >= p_z, ez   # Radau IA is not stiffly accurate: reduced z order
    else:
        assert abs(slope(hs, ez) - p_z) <= 0.25, (ez, slope(hs, ez))


# ---- radau_iia on stiff problems against SciPy's Radau ----
STIFF = {  # name: (python rhs, python jac, t_span, y0, atol factor)
    "vdp1000": (P.van_der_pol, P.van_der_pol_jac, (0.0, 3.0), P.VDP_Y0, 1.0),
    "vdp_scaled": (P.van_der_pol_scaled, P.van_der_pol_scaled_jac, (0.0, 2.0), P.VDP_SCALED_Y0,
                   1.0),
    "robertson": (P.robertson, P.robertson_jac, (0.0, 1e5), P.ROBERTSON_Y0,
                  np.array([1e-2, 1e-6, 1e-2])),
    "hires": (P.hires, None, (0.0, P.HIRES_T), P.HIRES_Y0, 1e-2),
}
RTOLS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]


@pytest.fixture(scope="module")
def stiff_refs():
    refs = {}
    for name, (f, jac, span, y0, af) in STIFF.items():
        kw = {} if jac is None else {"jac": jac}
        r = scipy_solve_ivp(f, span, y0, method="Radau", rtol=1e-12,
                            atol=1e-12 * np.maximum(af, 1e-10), **kw)
        assert r.success
        refs[name] = r.y[:, -1]
    return refs


@pytest.mark.parametrize("name", list(STIFF))
def test_radau_iia_stiff(name, stiff_refs):
    f, jac, span, y0, af = STIFF[name]
    ref = stiff_refs[name]
    rows = []
    for rtol in RTOLS:
        atol = af * rtol
        r = mbint.solve_ivp(P.c_rhs(name), span, y0, method="radau_iia", rtol=rtol, atol=atol,
                            jac=P.c_jac(name))
        assert r.status == 0, r.message
        err = np.max(np.abs(r.y[:, -1] - ref) / (atol + rtol * np.abs(ref)))
        kw = {} if jac is None else {"jac": jac}
        s = scipy_solve_ivp(f, span, y0, method="Radau", rtol=rtol, atol=atol, **kw)
        err_s = np.max(np.abs(s.y[:, -1] - ref) / (atol + rtol * np.abs(ref)))
        rows.append((rtol, err, r.nsteps, r.nfev, r.njev, r.nlu, err_s, len(s.t) - 1, s.nfev,
                     s.njev, s.nlu))
        assert err <= 10.0, (rtol, err)
        # work of the same order as SciPy's Radau: f evaluations and Jacobians within
        # 2.5x (nlu is higher: the driver changes h after every step while RADAU5/SciPy
        # keep it, and with it the LU, for growth factors below 1.2).  A comparison of
        # work, not of results: SciPy's counts change with its version and, through the
        # LU of its Newton iterations, with the BLAS.  Measured (SciPy 1.17.1): nfev up
        # to 1.49x (Robertson, rtol 1e-8, where radau_iia takes 1.7x SciPy's steps),
        # njev up to 1.0x.
        assert r.nfev <= 2.5 * s.nfev, (rtol, r.nfev, s.nfev)
        assert r.njev <= 2.5 * s.njev + 10, (rtol, r.njev, s.njev)
    print(f"\n{name}: rtol  err/tol  nsteps  nfev  njev  nlu | SciPy Radau err/tol nsteps nfev njev nlu")
    for row in rows:
        print("  %.0e  %7.3f %6d %6d %5d %5d | %7.3f %6d %6d %5d %5d" % row)


def test_radau_iia_finite_difference_jacobian(stiff_refs):
    # without jac: forward differences through mb_jac (counted in njev and nfev)
    r = mbint.solve_ivp(P.c_rhs("robertson"), (0.0, 1e5), P.ROBERTSON_Y0, method="radau_iia",
                        rtol=1e-6, atol=1e-6 * np.array([1e-2, 1e-6, 1e-2]))
    assert r.status == 0 and r.njev > 0
    ref = stiff_refs["robertson"]
    assert np.max(np.abs(r.y[:, -1] - ref) / (1e-6 * np.array([1e-2, 1e-6, 1e-2])
                                              + 1e-6 * np.abs(ref))) <= 10.0


def test_radau_iia_reuses_jacobian_and_lu():
    r = mbint.solve_ivp(P.c_rhs("hires"), (0.0, P.HIRES_T), P.HIRES_Y0, method="radau_iia",
                        rtol=1e-6, atol=1e-8, jac=P.c_jac("hires"))
    attempts = r.nsteps + r.nreject + r.nfail
    assert r.njev < 0.6 * attempts
    # fixed h: one real and one complex LU per Jacobian
    r = mbint.solve_ivp(P.c_rhs("vdp1000"), (0.0, 0.5), P.VDP_Y0, method="radau_iia", h=1e-3,
                        rtol=1e-6, atol=1e-6, jac=P.c_jac("vdp1000"))
    assert r.status == 0
    assert r.nlu == 2 * r.njev and r.njev < r.nsteps / 5


def test_radau_iia_dense_output(pendulum_ref):
    tt = np.linspace(0.0, T_END, 1001)
    for rtol in [1e-4, 1e-6, 1e-8]:
        r = mbint.solve_ivp(forced_pendulum, (0.0, T_END), Y0, method="radau_iia", rtol=rtol,
                            atol=rtol, dense_output=True)
        assert r.status == 0
        ref = pendulum_ref(tt)
        err = np.max(np.abs(r.sol(tt) - ref) / (rtol + rtol * np.abs(ref)))
        assert err <= 10.0, (rtol, err)
        assert np.max(np.abs(r.sol(r.t) - r.y)) <= 1e-14
    # t_eval is served by the same collocation polynomial
    r = mbint.solve_ivp(forced_pendulum, (0.0, T_END), Y0, method="radau_iia", rtol=1e-7,
                        atol=1e-7, t_eval=tt[::10])
    assert np.max(np.abs(r.y - pendulum_ref(tt[::10]))) <= 1e-5


def robertson_dae(t, y):
    """Robertson with the third equation algebraic: y1 + y2 + y3 = 1 (M = diag(1, 1, 0))."""
    return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                     0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                     y[0] + y[1] + y[2] - 1.0])


def test_radau_iia_mass_matrix_dae(stiff_refs):
    ref = stiff_refs["robertson"]
    M = np.diag([1.0, 1.0, 0.0])
    for rtol in [1e-4, 1e-7]:
        atol = rtol * np.array([1e-2, 1e-6, 1e-2])
        r = mbint.solve_ivp(robertson_dae, (0.0, 1e5), P.ROBERTSON_Y0, method="radau_iia",
                            rtol=rtol, atol=atol, mass=M, dense_output=True)
        assert r.status == 0, r.message
        err = np.max(np.abs(r.y[:, -1] - ref) / (atol + rtol * np.abs(ref)))
        assert err <= 10.0, (rtol, err)
        # the algebraic equation holds to Newton's accuracy plus rounding over the run
        assert np.max(np.abs(r.y.sum(axis=0) - 1.0)) <= 1e-11
        ode = mbint.solve_ivp(P.c_rhs("robertson"), (0.0, 1e5), P.ROBERTSON_Y0,
                              method="radau_iia", rtol=rtol, atol=atol, jac=P.c_jac("robertson"))
        tt = np.logspace(-3, 5, 40)
        assert np.max(np.abs(r.sol(tt).sum(axis=0) - 1.0)) <= 10 * rtol
        assert np.max(np.abs(ode.y[:, -1] - r.y[:, -1]) / (atol + rtol * np.abs(ref))) <= 10.0


def test_mass_matrix_with_identity_is_the_ode():
    kw = dict(method="radau_iia", rtol=1e-6, atol=1e-8, jac=P.c_jac("hires"), first_step=1e-4)
    r1 = mbint.solve_ivp(P.c_rhs("hires"), (0.0, 5.0), P.HIRES_Y0, **kw)
    r2 = mbint.solve_ivp(P.c_rhs("hires"), (0.0, 5.0), P.HIRES_Y0, mass=np.eye(8), **kw)
    assert r1.nsteps == r2.nsteps
    np.testing.assert_allclose(r2.y[:, -1], r1.y[:, -1], rtol=1e-12, atol=1e-16)


# ---- stability functions ----
def pade(k, j, z):
    num = sum(math.factorial(k + j - i) * math.factorial(k)
              / (math.factorial(k + j) * math.factorial(i) * math.factorial(k - i)) * z ** i
              for i in range(k + 1))
    den = sum(math.factorial(k + j - i) * math.factorial(j)
              / (math.factorial(k + j) * math.factorial(i) * math.factorial(j - i)) * (-z) ** i
              for i in range(j + 1))
    return num / den


Z = np.array([-0.5, 1.0 + 2.0j, -3.0 + 0.5j, -20.0 - 7.0j, 0.3j, -1e3, 2.5])


def test_amplification_closed_forms():
    z = Z
    R = mbint.stability.amplification("radau_iia", z)
    closed = (1 + 2 * z / 5 + z ** 2 / 20) / (1 - 3 * z / 5 + 3 * z ** 2 / 20 - z ** 3 / 60)
    # |R| is computed to ~1e-16 absolute (1 + z b^T (I - zA)^{-1} 1 cancels for large |z|)
    np.testing.assert_allclose(R, closed, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(mbint.stability.amplification("lobatto_iiic2", z),
                               1 / (1 - z + z ** 2 / 2), rtol=1e-13, atol=1e-15)
    for name in ("radau_ia2", "radau_iia2"):
        np.testing.assert_allclose(mbint.stability.amplification(name, z),
                                   (1 + z / 3) / (1 - 2 * z / 3 + z ** 2 / 6), rtol=1e-13,
                                   atol=1e-15)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_amplification_pade_and_l_stability(name):
    s, p, _ = FAMILIES[name]
    k = s - 2 if name.startswith("lobatto") else s - 1
    R = mbint.stability.amplification(name, Z)
    np.testing.assert_allclose(R, pade(k, s, Z), rtol=1e-12, atol=1e-15)
    assert abs(mbint.stability.amplification(name, -1e8)) < 1e-6
    y = np.logspace(-2, 4, 200)
    assert np.max(np.abs(mbint.stability.amplification(name, 1j * y))) <= 1.0 + 1e-14
    # order p: R(z) - e^z = O(z^(p+1)) (z large enough to stay above rounding)
    z = 0.2 if p <= 5 else 0.4
    e1 = abs(mbint.stability.amplification(name, z) - np.exp(z))
    e2 = abs(mbint.stability.amplification(name, z / 2) - np.exp(z / 2))
    assert abs(math.log2(e1 / e2) - (p + 1)) < 0.4


def test_radau_iia_backward_and_events(pendulum_ref):
    y4 = pendulum_ref(T_END)
    r = mbint.solve_ivp(forced_pendulum, (T_END, 0.0), y4, method="radau_iia", rtol=1e-8,
                        atol=1e-8)
    assert r.status == 0 and np.max(np.abs(r.y[:, -1] - Y0)) <= 1e-7
    r = mbint.solve_ivp(forced_pendulum, (T_END, 0.0), y4, method="radau_iia3", h=0.05,
                        rtol=1e-12, atol=1e-12)
    assert r.status == 0 and np.max(np.abs(r.y[:, -1] - Y0)) <= 1e-9

    def crossing(t, y):
        return y[0]
    crossing.terminal = True
    crossing.direction = -1
    s = scipy_solve_ivp(forced_pendulum, (0.0, T_END), Y0, method="DOP853", rtol=1e-12,
                        atol=1e-12, events=crossing)
    r = mbint.solve_ivp(forced_pendulum, (0.0, T_END), Y0, method="radau_iia", rtol=1e-8,
                        atol=1e-8, events=crossing)
    assert r.status == 1 and abs(r.t_events[0][0] - s.t_events[0][0]) <= 1e-7
    assert r.t[-1] == r.t_events[0][0]
