"""Tests of the Rosenbrock family (csrc/methods/rosenbrock.c, tableaus_ros.c) through
``mbint.solve_ivp``: ros4 (RN paper), ros2 (ode23s), rodas4 (Hairer-Wanner RODAS)
and the W-method w2 (RN paper).

Checks: fitted orders with a fixed step on a non-autonomous nonlinear problem (df/dt
by finite differences, as no dfdt is given), dense-output orders, R(z) from
``mbint.stability.amplification`` against closed forms and against one step of the
kernel, L-stability, w2 with a deliberately wrong (constant) Jacobian, Jacobian and
LU reuse (njev, nlu), accuracy on Van der Pol (mu = 1000), Robertson (to t = 1e5)
and HIRES against SciPy's Radau at rtol 1e-12, and rodas4/ros4 with a mass matrix
(Robertson as an index-1 DAE), and a linear invariant of trace species (a catalyst at
1e-22 bound by O(1) species): its drift stays at rounding of the trace scale and the
order of the unknowns does not change the step count.  The table checks (order
conditions 36a-36h to 1e-12, the paper's misprints) are in tests/c/test_rosenbrock.c.
"""
import math

import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import problems as P  # noqa: E402
from scipy.integrate import solve_ivp as scipy_solve_ivp  # noqa: E402

METHODS = ["ros4", "ros2", "rodas4", "w2"]
ORDER = {"ros4": 4, "ros2": 2, "rodas4": 4, "w2": 2}
# dense output: local interpolation error O(h^(q+1)), q = order of the extension
DENSE_ORDER = {"ros4": 2, "ros2": 2, "rodas4": 3, "w2": 2}


# ---- a smooth non-autonomous nonlinear problem with known solution (cos t, sin 2t) ----
def na_rhs(t, y):
    g1 = -math.sin(t) + 2.0 * math.cos(t) - math.cos(t) * math.sin(2.0 * t)
    g2 = 2.0 * math.cos(2.0 * t) + math.sin(2.0 * t) + math.cos(t) ** 2
    return np.array([-2.0 * y[0] + y[0] * y[1] + g1, -y[1] - y[0] ** 2 + g2])


def na_jac(t, y):
    return np.array([[-2.0 + y[1], y[0]], [-2.0 * y[0], -1.0]])


def na_exact(t):
    t = np.asarray(t, float)
    return np.array([np.cos(t), np.sin(2.0 * t)])


def slope(hs, errs):
    return np.polyfit(np.log(hs), np.log(errs), 1)[0]


def test_registered():
    info = {m.name: m for m in mbint.methods()}
    for name in METHODS:
        m = info[name]
        assert m.order == ORDER[name]
        assert m.needs_jacobian and m.implicit and m.adaptive == "embedded"
        assert m.dense_output == "own"
    assert info["ros4"].error_order == 3 and info["rodas4"].error_order == 3
    assert info["ros2"].error_order == 3 and info["w2"].error_order == 1
    assert info["rodas4"].mass_matrix and info["ros4"].mass_matrix
    assert not info["ros2"].mass_matrix and not info["w2"].mass_matrix


@pytest.mark.parametrize("method", METHODS)
def test_fixed_step_order(method):
    Ns = [20, 40, 80, 160] if ORDER[method] == 4 else [40, 80, 160, 320]
    hs, errs = [], []
    for N in Ns:
        r = mbint.solve_ivp(na_rhs, (0.0, 2.0), [1.0, 0.0], method=method, h=2.0 / N, jac=na_jac)
        assert r.status == 0
        errs.append(np.max(np.abs(r.y[:, -1] - na_exact(2.0))))
        hs.append(2.0 / N)
    q = slope(hs, errs)
    assert abs(q - ORDER[method]) < 0.25, f"{method}: fitted order {q:.2f}, errors {errs}"


@pytest.mark.parametrize("method", METHODS)
def test_dense_output_order(method):
    """Errors at theta = 0.37 inside fixed steps: O(h^min(p, q + 1))."""
    Ns = [10, 20, 40, 80] if ORDER[method] == 4 else [40, 80, 160, 320]
    hs, errs = [], []
    for N in Ns:
        h = 2.0 / N
        te = (np.arange(N) + 0.37) * h
        r = mbint.solve_ivp(na_rhs, (0.0, 2.0), [1.0, 0.0], method=method, h=h, jac=na_jac,
                            t_eval=te)
        errs.append(np.max(np.abs(r.y - na_exact(te))))
        hs.append(h)
    q = slope(hs, errs)
    expected = min(ORDER[method], DENSE_ORDER[method] + 1)
    assert q > expected - 0.25, f"{method}: dense output order {q:.2f} < {expected}, errors {errs}"


def test_ros2_is_ode23s():
    """ros2 against a direct transcription of Shampine & Reichelt's formulas (fixed h,
    autonomous Van der Pol mu = 5, so df/dt = 0): steps and the ntrp23s interpolant."""
    mu = 5.0
    f = lambda t, y: np.array([y[1], mu * ((1.0 - y[0] ** 2) * y[1] - y[0])])  # noqa: E731
    jac = lambda t, y: np.array([[0.0, 1.0], [mu * (-2.0 * y[0] * y[1] - 1.0),  # noqa: E731
                                              mu * (1.0 - y[0] ** 2)]])
    d, e32, h, N = 1.0 / (2.0 + math.sqrt(2.0)), 6.0 + math.sqrt(2.0), 0.01, 50
    y, I = np.array([2.0, 0.0]), np.eye(2)
    theta = 0.3
    mids = []
    for k in range(N):
        W = I - h * d * jac(0.0, y)
        F0 = f(0.0, y)
        k1 = np.linalg.solve(W, F0)
        F1 = f(0.0, y + 0.5 * h * k1)
        k2 = np.linalg.solve(W, F1 - k1) + k1
        mids.append(y + h * (theta * (1 - theta) * k1 + theta * (theta - 2 * d) * k2) / (1 - 2 * d))
        y = y + h * k2
    r = mbint.solve_ivp(f, (0.0, N * h), [2.0, 0.0], method="ros2", h=h, jac=jac,
                        dense_output=True)
    np.testing.assert_allclose(r.y[:, -1], y, rtol=1e-12)
    np.testing.assert_allclose(r.sol((np.arange(N) + theta) * h).T, np.array(mids), rtol=1e-11,
                               atol=1e-13)
    # the error estimate h/6 (k1 - 2 k2 + k3) of the first (accepted) adaptive step
    rtol, atol, y0 = 1e-3, 1e-6, np.array([2.0, 0.0])
    r = mbint.solve_ivp(f, (0.0, 1.0), y0, method="ros2", rtol=rtol, atol=atol, jac=jac,
                        first_step=h)
    W = I - h * d * jac(0.0, y0)
    F0 = f(0.0, y0)
    k1 = np.linalg.solve(W, F0)
    F1 = f(0.0, y0 + 0.5 * h * k1)
    k2 = np.linalg.solve(W, F1 - k1) + k1
    y1 = y0 + h * k2
    F2 = f(0.0, y1)
    k3 = np.linalg.solve(W, F2 - e32 * (k2 - F1) - 2.0 * (k1 - F0))
    est = h / 6.0 * (k1 - 2.0 * k2 + k3)
    sc = atol + rtol * np.maximum(np.abs(y0), np.abs(y1))
    assert r.h_steps[0] == h
    np.testing.assert_allclose(r.err_steps[0], np.sqrt(np.mean((est / sc) ** 2)), rtol=1e-10)


# ---- stability functions ----
def R_single_pole(s, g, z):
    """(1 - g z)^-s times the degree-s Taylor polynomial of (1 - g z)^s e^z."""
    coef = np.zeros(s + 1)
    for j in range(s + 1):
        cj = math.comb(s, j) * (-g) ** j
        for k in range(j, s + 1):
            coef[k] += cj / math.factorial(k - j)
    return np.polyval(coef[::-1], z) / (1.0 - g * z) ** s


# RODAS (rodas.f, METH = 1), transformed coefficients, converted here to the defining form
RODAS_A = {(1, 0): 1.544, (2, 0): 0.9466785280815826, (2, 1): 0.2557011698983284,
           (3, 0): 3.314825187068521, (3, 1): 2.896124015972201, (3, 2): 0.9986419139977817,
           (4, 0): 1.221224509226641, (4, 1): 6.019134481288629, (4, 2): 12.53708332932087,
           (4, 3): -0.687886036105895}
RODAS_C = [-5.6688, -2.430093356833875, -0.2063599157091915, -0.1073529058151375,
           -9.594562251023355, -20.47028614809616, 7.496443313967647, -10.24680431464352,
           -33.99990352819905, 11.7089089320616, 8.083246795921522, -7.981132988064893,
           -31.52159432874371, 16.31930543123136, -6.058818238834054]


def rodas_defining():
    s, g = 6, 0.25
    A = np.zeros((s, s))
    for (i, j), v in RODAS_A.items():
        A[i, j] = v
    A[5, :4] = A[4, :4]
    A[5, 4] = 1.0
    C = np.zeros((s, s))
    C[np.tril_indices(s, -1)] = RODAS_C
    Gamma = np.linalg.inv(np.eye(s) / g - C)
    m = np.concatenate([A[4, :4], [1.0, 1.0]])
    return A @ Gamma, Gamma, m @ Gamma


def R_rodas(z):
    alpha, Gamma, b = rodas_defining()
    B = alpha + Gamma
    z = np.atleast_1d(z)
    return np.array([1.0 + zz * b @ np.linalg.solve(np.eye(6) - zz * B, np.ones(6)) for zz in z])


def R_closed(method, z):
    if method == "ros4":
        return R_single_pole(4, 0.57281606, z)
    if method == "rodas4":
        return R_rodas(z)
    g = 1.0 - 1.0 / math.sqrt(2.0) if method == "ros2" else 1.0 + 1.0 / math.sqrt(2.0)
    return (1.0 + (1.0 - 2.0 * g) * z) / (1.0 - g * z) ** 2   # the z^2 term vanishes


@pytest.mark.parametrize("method", METHODS)
def test_amplification_closed_form(method):
    z = np.array([-0.5, 0.3, -2.0 + 1.0j, 1.5j, -10.0 - 7.0j, -300.0, 0.7 + 0.2j, -1e3 + 50j])
    R = mbint.stability.amplification(method, z)
    np.testing.assert_allclose(R, R_closed(method, z), rtol=1e-12, atol=1e-14)
    assert abs(mbint.stability.amplification(method, -1e8)) < 1e-6    # L-stable
    y = np.logspace(-3, 6, 2001)
    assert np.max(np.abs(mbint.stability.amplification(method, 1j * y))) <= 1.0 + 1e-12


@pytest.mark.parametrize("method", METHODS)
def test_amplification_is_what_the_kernel_does(method):
    for lam, h in [(-3.0, 0.1), (-50.0, 0.2), (-1e4, 0.5)]:
        r = mbint.solve_ivp(lambda t, y: lam * y, (0.0, h), [1.0], method=method, h=h,
                            jac=lambda t, y: np.array([[lam]]))
        R = mbint.stability.amplification(method, h * lam)
        assert abs(r.y[0, -1] - R.real) < 1e-14 * max(1.0, abs(R))


# ---- the W-method with a deliberately approximate Jacobian ----
mild = na_rhs   # mildly nonlinear, non-autonomous, exact solution (cos t, sin 2t)


def test_w2_order_with_constant_approximate_jacobian():
    J0 = na_jac(0.0, np.array([1.0, 0.0]))   # exact at t0, then held constant
    hs, errs = [], []
    for N in [40, 80, 160, 320, 640]:
        r = mbint.solve_ivp(mild, (0.0, 2.0), [1.0, 0.0], method="w2", h=2.0 / N, jac=J0)
        assert r.status == 0
        errs.append(np.max(np.abs(r.y[:, -1] - na_exact(2.0))))
        hs.append(2.0 / N)
    q = slope(hs, errs)
    assert abs(q - 2.0) < 0.25, f"w2 with constant J: fitted order {q:.2f}, errors {errs}"
    # ros4 is not a W-method: with the same J it loses its order
    errs4 = [np.max(np.abs(mbint.solve_ivp(mild, (0.0, 2.0), [1.0, 0.0], method="ros4",
                                           h=2.0 / N, jac=J0).y[:, -1] - na_exact(2.0)))
             for N in [40, 80, 160, 320]]
    assert slope(hs[:4], errs4) < 3.0
    # adaptive: the error follows the tolerance
    prev = np.inf
    for tol in [1e-3, 1e-5, 1e-7]:
        r = mbint.solve_ivp(mild, (0.0, 2.0), [1.0, 0.0], method="w2", rtol=tol, atol=tol, jac=J0)
        e = np.max(np.abs(r.y[:, -1] - na_exact(2.0)))
        assert r.status == 0 and e < 10 * tol and e < prev
        prev = e


# ---- Jacobian / LU reuse and the work counters ----
@pytest.mark.parametrize("name,y0,tf,atol", [("vdp1000", P.VDP_Y0, 2.0, 1e-6),
                                             ("robertson", P.ROBERTSON_Y0, 1e5, 1e-10)])
def test_counters(name, y0, tf, atol):
    lines = []
    for method in METHODS:
        r = mbint.solve_ivp(P.c_rhs(name), (0.0, tf), y0, method=method, rtol=1e-5, atol=atol,
                            jac=P.c_jac(name), first_step=0.05)
        assert r.status == 0
        assert r.nreject > 0          # the first step is too large: retried with the same J
        lines.append(f"{method:7s} {name}: nsteps {r.nsteps} nreject {r.nreject} nfev {r.nfev} "
                     f"njev {r.njev} nlu {r.nlu}")
        assert r.nlu == r.nsteps + r.nreject + r.nfail
        if method == "w2":
            assert r.njev < r.nsteps / 2
        else:
            assert r.njev == r.nsteps
    print("\n" + "\n".join(lines))


# ---- stiff problems against SciPy's Radau at rtol 1e-12 ----


STIFF = {
    # rhs, jac (Python, for SciPy), y0, tf, t_eval, atol(rtol), reference atol
    "vdp1000": (P.van_der_pol, P.van_der_pol_jac, P.VDP_Y0, 2.0, [0.5, 1.2, 2.0],
                lambda rtol: rtol, 1e-12),
    "robertson": (P.robertson, P.robertson_jac, P.ROBERTSON_Y0, 1e5,
                  [1.0, 10.0, 100.0, 1e3, 1e4, 1e5], lambda rtol: 1e-10, 1e-16),
    "hires": (P.hires, P.hires_jac, P.HIRES_Y0, P.HIRES_T, [5.0, 50.0, P.HIRES_T],
              lambda rtol: 1e-4 * rtol, 1e-14),
}
RTOLS = [1e-3, 1e-4, 1e-5, 1e-6]


@pytest.fixture(scope="module")
def references():
    refs = {}
    for name, (f, jac, y0, tf, te, _, ref_atol) in STIFF.items():
        r = scipy_solve_ivp(f, (0.0, tf), y0, method="Radau", rtol=1e-12, atol=ref_atol,
                            jac=jac, t_eval=te)
        assert r.success
        refs[name] = r.y
    return refs


def test_hires_jacobian_matches_differences():
    """The Python HIRES Jacobian given to SciPy's Radau for the reference."""
    y = P.HIRES_Y0 + np.random.default_rng(1).uniform(0.001, 0.01, 8)
    eps = 1e-7
    Jfd = np.column_stack([(P.hires(0.0, y + eps * e) - P.hires(0.0, y - eps * e)) / (2 * eps)
                           for e in np.eye(8)])
    np.testing.assert_allclose(P.hires_jac(0.0, y), Jfd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(STIFF))
def test_stiff_accuracy(name, references):
    """Each method at rtol 1e-3..1e-6 (ros2: to 1e-5) reaches an error within 10x of
    its tolerance, max over the t_eval points and components of
    |y - y_ref| / (atol + rtol |y_ref|)."""
    f, jac, y0, tf, te, atol_of, _ = STIFF[name]
    ref = references[name]
    rows, bad = [], []
    for method in METHODS:
        row = []
        for rtol in RTOLS:
            if method == "ros2" and rtol < 1e-5:
                continue
            atol = atol_of(rtol)
            r = mbint.solve_ivp(P.c_rhs(name), (0.0, tf), y0, method=method, rtol=rtol, atol=atol,
                                jac=P.c_jac(name), t_eval=te)
            assert r.status == 0, r.message
            ratio = float(np.max(np.abs(r.y - ref) / (atol + rtol * np.abs(ref))))
            row.append(f"{rtol:.0e}: {ratio:5.2f} ({r.nsteps} steps)")
            if ratio > 10.0:
                bad.append(f"{method} rtol {rtol:.0e}: error {ratio:.1f} x tolerance")
        rows.append(f"{method:7s} " + "  ".join(row))
    print(f"\n{name}: error / tolerance\n" + "\n".join(rows))
    assert not bad, "; ".join(bad)


# ---- mass matrices ----
def robertson_dae(t, y):
    return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                     0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                     y[0] + y[1] + y[2] - 1.0])


def robertson_dae_jac(t, y):
    return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                     [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                     [1.0, 1.0, 1.0]])


@pytest.mark.parametrize("method", ["rodas4", "ros4"])
def test_mass_matrix_index1_dae(method, references):
    te = STIFF["robertson"][4]
    M = np.diag([1.0, 1.0, 0.0])
    rtol, atol = 1e-5, 1e-10
    r = mbint.solve_ivp(robertson_dae, (0.0, 1e5), [1.0, 0.0, 0.0], method=method, rtol=rtol,
                        atol=atol, jac=robertson_dae_jac, mass=M, t_eval=te)
    assert r.status == 0, r.message
    ref = references["robertson"]
    ratio = np.max(np.abs(r.y - ref) / (atol + rtol * np.abs(ref)))
    assert ratio < 10.0, f"{method}: Robertson DAE error {ratio:.1f} x tolerance"
    np.testing.assert_allclose(r.y.sum(axis=0), 1.0, atol=1e-12)


def test_mass_matrix_rejected_where_unsupported():
    for method in ["ros2", "w2"]:
        with pytest.raises(ValueError, match="mass"):
            mbint.solve_ivp(robertson_dae, (0.0, 1.0), [1.0, 0.0, 0.0], method=method,
                            jac=robertson_dae_jac, mass=np.diag([1.0, 1.0, 0.0]))


# ---- a linear invariant of trace species (stage solves in the error-control scaling) ----
# A trace catalyst C binds two molecules of an O(1) species A; the complex X releases C
# and two D; A <-> D carries an O(1) flux.  Reactions 2A + C <-> X (k1, km1), X -> C + 2D
# (k2), A <-> D (k3, km3).  w = (1, 1, 0, 0) on (C, X, A, D): w.f(y) = 0 for every y (the
# catalyst is conserved), so w.J = 0 and every Rosenbrock stage keeps w.u_i = 0 in exact
# arithmetic.  C + X = 1e-22 while A, D = O(1); the atol of 1e-30 on C and X controls them.
# |df_A/dC| = 2 |df_C/dC|: partial pivoting on E = I/(h gamma) - J picked the row of A as
# the pivot of column C (C stored first), and the O(1) rounding leaked into C and X:
# at rtol 1e-4 the invariant drifted by 7e-3 of its value with rodas4 (1.5e3 times its
# value with w2), and noise in the error estimate of C and X took rodas4 to 5.8e5 steps
# (87 with the unknowns in the order A, D, C, X).
CAT_K = (1e6, 1e3, 1e2, 1.0, 0.5)
CAT_TOTAL = 1e-22
CAT_ORDERS = {"trace first": [0, 1, 2, 3], "trace last": [2, 3, 0, 1]}  # stored y = y_CXAD[order]


def catalytic_rhs(t, y):
    k1, km1, k2, k3, km3 = CAT_K
    C, X, A, D = y
    r1 = k1 * A * A * C - km1 * X
    r2 = k2 * X
    r3 = k3 * A - km3 * D
    return np.array([-r1 + r2, r1 - r2, -2.0 * r1 - r3, 2.0 * r2 + r3])


def catalytic_jac(t, y):
    k1, km1, k2, k3, km3 = CAT_K
    C, X, A, D = y
    return np.array([[-k1 * A * A, km1 + k2, -2.0 * k1 * A * C, 0.0],
                     [k1 * A * A, -km1 - k2, 2.0 * k1 * A * C, 0.0],
                     [-2.0 * k1 * A * A, 2.0 * km1, -4.0 * k1 * A * C - k3, km3],
                     [0.0, 2.0 * k2, k3, -km3]])


def catalytic_run(method, rtol, order):
    p = np.array(order)
    q = np.argsort(p)  # y_CXAD = y_stored[q]
    y0 = np.array([CAT_TOTAL, 0.0, 1.0, 0.0])
    atol = np.array([1e-30, 1e-30, 1e-10, 1e-10])
    r = mbint.solve_ivp(lambda t, y: catalytic_rhs(t, y[q])[p], (0.0, 10.0), y0[p],
                        method=method, rtol=rtol, atol=atol[p],
                        jac=lambda t, y: catalytic_jac(t, y[q])[np.ix_(p, p)],
                        first_step=1e-8, max_steps=50000)
    return r, r.y[q]


def test_catalytic_jacobian_matches_differences():
    y = np.array([3e-23, 7e-23, 0.6, 0.4])
    J = catalytic_jac(0.0, y)
    for j in range(4):  # f has degree <= 2 in each y_j: central differences are exact
        d = 1e-3
        e = np.zeros(4)
        e[j] = d
        fd = (catalytic_rhs(0.0, y + e) - catalytic_rhs(0.0, y - e)) / (2.0 * d)
        np.testing.assert_allclose(J[:, j], fd, rtol=1e-6, atol=1e-12 * np.abs(J).max())
    np.testing.assert_array_equal(J[0] + J[1], 0.0)  # w.J = 0


@pytest.mark.parametrize("rtol", [1e-4, 1e-7])
@pytest.mark.parametrize("method", METHODS)
def test_trace_invariant(method, rtol):
    """|w.y_n - w.y_0| <= 20 u sum_k w.|y_k| (a few roundings per step at the scale of the
    components the invariant involves), and the stored order of the unknowns does not
    change the number of steps (rounding does not drive the error estimate)."""
    u = np.finfo(float).eps / 2
    steps = {}
    for name, order in CAT_ORDERS.items():
        r, Y = catalytic_run(method, rtol, order)
        drift = np.abs((Y[0] + Y[1]) - CAT_TOTAL)
        bound = 20.0 * u * np.cumsum(np.abs(Y[0]) + np.abs(Y[1]))
        k = int(np.argmax(drift / bound))
        assert drift[k] <= bound[k], (
            f"{method} ({name}): |w.y - w.y0| = {drift[k]:.2e} at t = {r.t[k]:.3g}, "
            f"bound {bound[k]:.2e}; y_C, y_X = {Y[0, k]:.2e}, {Y[1, k]:.2e}")
        assert r.status == 0, f"{method} ({name}): {r.message}"
        steps[name] = r.t.size - 1
    assert steps["trace first"] <= 1.2 * steps["trace last"] + 5, steps
