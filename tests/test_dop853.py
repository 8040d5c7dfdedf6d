"""DOP853 (Dormand-Prince 8(5,3), Hairer's code): the tableau's order conditions (all
rooted trees), the fitted orders of the method and of its dense output, the error
estimate and step-size exponent it hands the driver, adaptive runs on the Arenstorf
orbit, and events, t_eval and dense output against closed-form solutions."""
from functools import lru_cache

import numpy as np
import pytest
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import _core, problems
from mbint.methods import method_info

TAB = _core.tableau("dop853")


# ---- rooted trees: a tree is the sorted tuple of its subtrees ----
def _order(t):
    return 1 + sum(_order(u) for u in t)


@lru_cache(maxsize=None)
def _trees(n):
    """All rooted trees with n vertices (1, 1, 2, 4, 9, 20, 48, 115, 286 for n = 1..9)."""
    if n == 1:
        return ((),)
    return tuple(sorted({tuple(sorted(f)) for f in _forests(n - 1, n - 1)}))


def _forests(m, largest):
    """Forests of m vertices, as tuples of trees of at most `largest` vertices each."""
    if m == 0:
        yield ()
        return
    for k in range(min(m, largest), 0, -1):
        for t in _trees(k):
            for rest in _forests(m - k, k):
                yield (t,) + rest


def _gamma(t):
    g = _order(t)
    for u in t:
        g *= _gamma(u)
    return g


def _phi(A, t):
    """Phi_i(t) = prod over the subtrees u of (A Phi(u))_i: b . Phi(t) is the weight."""
    v = np.ones(A.shape[0])
    for u in t:
        v = v * (A @ _phi(A, u))
    return v


def _extended():
    """The 16-stage tableau: 12 stages, k_13 = f(t + h, y_new), 3 dense-output stages."""
    A = np.zeros((16, 16))
    A[:12, :12] = TAB["A"]
    A[12, :12] = TAB["b"]
    A[13:, :] = TAB["A_extra"]
    c = np.r_[TAB["c"], 1.0, TAB["c_extra"]]
    return A, c


def _dense_weights(theta):
    """b_i(theta) of Hairer's nested form y + theta (F0 + (1-theta)(F1 + theta(F2 + ...)))."""
    b = np.r_[TAB["b"], 0.0, 0.0, 0.0, 0.0]
    k1, k13 = np.eye(16)[0], np.eye(16)[12]
    F = [b, k1 - b, 2 * b - k1 - k13, *TAB["D"]]
    th, u = theta, 1 - theta
    p = [th, th * u, th**2 * u, th**2 * u**2, th**3 * u**2, th**3 * u**3, th**4 * u**3]
    return sum(pj * Fj for pj, Fj in zip(p, F))


def _residual(A, w, n, theta=1.0):
    return max(abs(w @ _phi(A, t) - theta ** _order(t) / _gamma(t)) for t in _trees(n))


def test_tree_counts():
    assert [len(_trees(n)) for n in range(1, 10)] == [1, 1, 2, 4, 9, 20, 48, 115, 286]


def test_registered():
    info = method_info("dop853")
    assert (info.order, info.error_order, info.adaptive, info.dense_output) == (8, 7, "embedded",
                                                                                 "own")
    assert not info.implicit and info.fixed_step
    assert TAB["order"] == 8 and TAB["error_order"] == 7 and TAB["fsal"]
    assert TAB["A"].shape == (12, 12) and TAB["D"].shape == (4, 16)


def test_tableau_row_sums_and_quadrature():
    A, c = _extended()
    assert np.all(np.triu(A) == 0)
    np.testing.assert_allclose(A.sum(axis=1), c, rtol=0, atol=2e-15)
    b = TAB["b"]
    np.testing.assert_allclose(b.sum(), 1.0, rtol=0, atol=1e-15)
    for k in range(8):  # b . c^k = 1/(k+1), k <= 7
        assert abs(b @ TAB["c"] ** k - 1 / (k + 1)) < 1e-15, k
    assert abs(b @ TAB["c"] ** 8 - 1 / 9) > 1e-8


def test_order_conditions_all_trees():
    """b satisfies the 200 conditions of the trees up to order 8 and not all of order 9;
    the embedded weights b - e5 and b - e3 are of orders 5 and 3 exactly."""
    A = TAB["A"]
    b = TAB["b"]
    for n in range(1, 9):
        assert _residual(A, b, n) < 4e-15, n
    assert _residual(A, b, 9) > 1e-8
    for e, q in ((TAB["e"][:12], 5), (TAB["e3"][:12], 3)):
        assert TAB["e"][12] == 0 and TAB["e3"][12] == 0  # the FSAL stage has no weight
        assert abs(e.sum()) < 4e-15
        for n in range(1, q + 1):
            assert _residual(A, b - e, n) < 4e-15, (q, n)
        assert _residual(A, b - e, q + 1) > 1e-4, q


def test_dense_weights_order_7():
    """The continuous weights b(theta) over the 16 stages satisfy the tree conditions
    theta^|t| / gamma(t) up to order 7 (not 8) inside the step, and equal b at theta = 1."""
    A, _ = _extended()
    for theta in (0.1, 0.3, 0.5, 0.77):
        w = _dense_weights(theta)
        for n in range(1, 8):
            assert _residual(A, w, n, theta) < 4e-15, (theta, n)
        assert _residual(A, w, 8, theta) > 1e-7
    np.testing.assert_allclose(_dense_weights(1.0), np.r_[TAB["b"], 0, 0, 0, 0], atol=1e-15)


# ---- problems with closed-form solutions ----
def kepler(t, y):
    q = y[:2]
    r3 = (q @ q) ** 1.5
    return np.array([y[2], y[3], -q[0] / r3, -q[1] / r3])


def kepler_exact(t, e):
    """Two-body orbit of eccentricity e, period 2 pi, starting at the pericenter:
    Kepler's equation E - e sin E = t solved by Newton to rounding."""
    t = np.atleast_1d(np.asarray(t, float))
    E = t.copy()
    for _ in range(50):
        E = E - (E - e * np.sin(E) - t) / (1 - e * np.cos(E))
    s, d = np.sqrt(1 - e * e), 1 - e * np.cos(E)
    return np.array([np.cos(E) - e, s * np.sin(E), -np.sin(E) / d, s * np.cos(E) / d])


def _fixed_slope(fun, T, y0, exact, Ns):
    errs = []
    for N in Ns:
        r = mbint.solve_ivp(fun, (0, T), y0, method="dop853", h=T / N, t_eval=[T])
        assert r.success
        errs.append(np.max(np.abs(r.y[:, -1] - exact)))
    return np.polyfit(np.log(T / np.asarray(Ns, float)), np.log(errs), 1)[0], errs


@pytest.mark.parametrize("case", ["oscillator", "cos_t_y", "kepler"])
def test_fixed_step_order(case):
    """Fitted slope 8 +- 0.3 with fixed h, errors 1e-5 .. 1e-13 (above rounding).
    Measured: oscillator 8.07, y' = cos(t) y 8.06, Kepler (e = 0.05) 7.92."""
    if case == "oscillator":  # h = 0.5 .. 0.25 over [0, 10]
        T = 10.0
        args = (problems.oscillator, T, [1.0, 0.0], [np.cos(T), -np.sin(T)], [20, 24, 32, 40])
    elif case == "cos_t_y":  # y = exp(sin t); h = 0.5 .. 0.2 over [0, 2]
        args = (lambda t, y: np.cos(t) * y, 2.0, [1.0], np.exp(np.sin(2.0)), [4, 5, 7, 10])
    else:  # one period of a nonlinear orbit, h = 0.26 .. 0.098
        T = 2 * np.pi
        args = (kepler, T, kepler_exact(0.0, 0.05)[:, 0], kepler_exact(T, 0.05)[:, 0],
                [24, 32, 48, 64])
    slope, errs = _fixed_slope(*args)
    assert abs(slope - 8) < 0.3, (slope, errs)
    assert min(errs) > 1e-14


def test_amplification():
    """R(z) is the kernel's: its Taylor coefficients (from samples on |z| = 1) are 1/k!
    up to k = 8 and not at k = 9; it is a polynomial of degree 12 (12 stages)."""
    N = 64
    z = np.exp(2j * np.pi * np.arange(N) / N)
    R = mbint.stability.amplification("dop853", z)
    np.testing.assert_allclose(R, mbint.stability.amplification_from_tableau("dop853", z),
                               rtol=1e-14)
    a = np.fft.fft(R) / N  # a_k for |z| = 1
    fact = np.array([np.prod(np.arange(1, k + 1), dtype=float) for k in range(13)])
    np.testing.assert_allclose(a[:9].real, 1 / fact[:9], rtol=1e-12, atol=1e-15)
    assert abs(a[9] - 1 / fact[9]) > 1e-9
    assert np.max(np.abs(a[13:])) < 1e-15 and abs(a[12]) > 1e-12
    lam, h = -3.0, 0.5  # one step on y' = lambda y multiplies by R(h lambda)
    r = mbint.solve_ivp(lambda t, y: lam * y, (0, h), [1.0], method="dop853", h=h)
    np.testing.assert_allclose(r.y[0, -1], mbint.stability.amplification("dop853", h * lam).real,
                               rtol=1e-14)


def test_dense_output_local_order():
    """One step from the exact state (Kepler, e = 0.05): the interpolant's error inside
    the step is O(h^8) (dense output of order 7), the step's end O(h^9) (order 8).
    Measured slopes 7.86 and 8.94."""
    e, hs = 0.05, np.array([0.8, 0.4, 0.2, 0.1])
    theta = np.linspace(0.05, 0.95, 19)
    inner, end = [], []
    for h in hs:
        r = mbint.solve_ivp(kepler, (0, h), kepler_exact(0.0, e)[:, 0], method="dop853", h=h,
                            dense_output=True)
        assert r.nfev == 1 + 12 + 3  # f0, 11 stages + FSAL, 3 dense stages
        inner.append(np.max(np.abs(r.sol(theta * h) - kepler_exact(theta * h, e))))
        end.append(np.max(np.abs(r.y[:, -1] - kepler_exact(h, e)[:, 0])))
    s_inner = np.polyfit(np.log(hs), np.log(inner), 1)[0]
    s_end = np.polyfit(np.log(hs[:3]), np.log(end[:3]), 1)[0]  # end[3] is near rounding
    assert abs(s_inner - 8) < 0.3, (s_inner, inner)
    assert abs(s_end - 9) < 0.3, (s_end, end)


def test_dense_output_continuous_and_accurate():
    """Adaptive, e = 0.5: each degree-7 piece starts at its step's y and ends at the next
    one; between steps the interpolant is as accurate as the steps."""
    e, T = 0.5, 2 * np.pi
    r = mbint.solve_ivp(kepler, (0, T), kepler_exact(0.0, e)[:, 0], method="dop853",
                        rtol=1e-10, atol=1e-12, dense_output=True)
    assert r.success
    C = r.sol.C  # (steps, 8, n)
    assert C.shape[1] == 8
    np.testing.assert_allclose(C[:, 0, :].T, r.y[:, :-1], rtol=0, atol=0)
    np.testing.assert_allclose(C.sum(axis=1).T, r.y[:, 1:], rtol=0, atol=4e-15)
    err_steps = np.max(np.abs(r.y - kepler_exact(r.t, e)))
    tt = (r.t[:-1, None] + np.diff(r.t)[:, None] * np.linspace(0.1, 0.9, 9)).ravel()
    err_dense = np.max(np.abs(r.sol(tt) - kepler_exact(tt, e)))
    # measured 1.7e-10 at the steps, 6.1e-10 between them
    assert err_steps < 1e-8 and err_dense < 10 * err_steps, (err_steps, err_dense)


def test_nfev_counts_dense_stages():
    """12 evaluations per attempted step (+ f0 and the initial-step probe); the dense
    output adds 3 per accepted step."""
    y0 = kepler_exact(0.0, 0.5)[:, 0]
    for dense in (False, True):
        r = mbint.solve_ivp(kepler, (0, 2 * np.pi), y0, method="dop853", rtol=1e-9, atol=1e-12,
                            dense_output=dense)
        assert r.nfev == 2 + 12 * (r.nsteps + r.nreject) + (3 * r.nsteps if dense else 0)


def _reference_error_norms(fun, t, y, h, rtol, atol):
    """|err5|, |err3| of one DOP853 step, written out from the tableau: RMS norms of
    err / (atol + max(|y|, |y_new|) rtol)."""
    A, b, c = TAB["A"], TAB["b"], TAB["c"]
    K = np.zeros((13, len(y)))
    K[0] = fun(t, y)
    for i in range(1, 12):
        K[i] = fun(t + c[i] * h, y + h * A[i, :i] @ K[:i])
    y_new = y + h * b @ K[:12]
    K[12] = fun(t + h, y_new)
    scale = atol + np.maximum(np.abs(y), np.abs(y_new)) * rtol
    n5 = np.sqrt(np.mean((h * TAB["e"] @ K / scale) ** 2))
    n3 = np.sqrt(np.mean((h * TAB["e3"] @ K / scale) ** 2))
    return n5, n3


@pytest.mark.parametrize("epus", [False, True])
def test_error_norm_is_dop853s(epus):
    """The driver's norm of the returned error vector is DOP853's combined estimate
    |err5|^2 / sqrt(|err5|^2 + 0.01 |err3|^2); under error per unit step it is that
    estimate divided by |h|.  Here |err5| = 5.7 alone would reject the step; the
    combined estimate (0.032, per unit step 0.64) accepts it."""
    y0, h, rtol, atol = kepler_exact(0.0, 0.5)[:, 0], 0.05, 1e-9, 1e-11
    r = mbint.solve_ivp(kepler, (0, 1), y0, method="dop853", rtol=rtol, atol=atol,
                        first_step=h, error_per_unit_step=epus)
    n5, n3 = _reference_error_norms(kepler, 0.0, y0, h, rtol, atol)
    ref = n5**2 / np.sqrt(n5**2 + 0.01 * n3**2) / (h if epus else 1.0)
    assert n5 > 1 and ref < 1
    assert r.h_steps[0] == h  # the first attempt was accepted
    # err5 ~ 6e-9 is a sum of O(1) terms: rounding leaves ~1e-8 relative agreement
    np.testing.assert_allclose(r.err_steps[0], ref, rtol=1e-6)


@pytest.mark.parametrize("epus,k", [(False, 8), (True, 7)])
def test_step_size_exponent(epus, k):
    """controller="i": h_next / h = 0.9 err^(-1/k), k = 8 (error per step, SciPy's and
    Hairer's exponent 1/8) or 7 (per unit step)."""
    T = 20.0
    r = mbint.solve_ivp(problems.oscillator, (0, T), [1.0, 0.0], method="dop853", rtol=1e-9,
                        atol=1e-9, controller="i", error_per_unit_step=epus)
    assert r.success and r.nreject == 0 and r.nsteps > 10
    h, err = np.abs(r.h_steps), r.err_steps
    ratio = h[1:-1] / h[:-2]  # the last step is cut to T
    expect = np.clip(0.9 * err[:-2] ** (-1.0 / k), 0.2, 10.0)
    np.testing.assert_allclose(ratio, expect, rtol=1e-12)


# ---- adaptive runs on the Arenstorf orbit (periodic: y(T) = y0) ----
def _arenstorf(method, rtol, **kw):
    y0, T = problems.ARENSTORF_Y0, problems.ARENSTORF_T
    r = mbint.solve_ivp(problems.c_rhs("arenstorf"), (0, T), y0, method=method, rtol=rtol,
                        atol=rtol * 1e-2, **kw)
    assert r.success
    return np.max(np.abs(r.y[:, -1] - y0)), r.nfev


def test_arenstorf_tolerance_proportional():
    """The global error follows rtol: err / rtol stays within a factor 10 over rtol
    1e-6 .. 1e-11.  The orbit amplifies local errors by ~1e3 (dopri5 alike): measured
    err / rtol = 1450, 1170, 1870, 1630, 1160, 1100; at rtol 1e-10, err = 1.2e-7."""
    rtols = 10.0 ** -np.arange(6, 12)
    ratios = np.array([_arenstorf("dop853", rtol)[0] / rtol for rtol in rtols])
    assert ratios.max() / ratios.min() < 10, ratios
    assert ratios.max() < 1e4, ratios


def test_arenstorf_fewer_evaluations_than_dopri5():
    """At matched error (dopri5's evaluations interpolated in log-log at dop853's error
    for rtol 1e-10), dop853 needs at most 0.7 x dopri5's evaluations.  Measured: 3386
    against ~9500, a ratio of 0.36."""
    err8, nfev8 = _arenstorf("dop853", 1e-10)
    runs = [_arenstorf("dopri5", rtol) for rtol in (1e-9, 1e-10, 1e-11, 1e-12)]
    e5 = np.log([e for e, _ in runs])[::-1]
    n5 = np.log([n for _, n in runs])[::-1]
    assert e5[0] < np.log(err8) < e5[-1]  # inside the dopri5 range
    nfev5 = np.exp(np.interp(np.log(err8), e5, n5))
    assert nfev8 <= 0.7 * nfev5, (nfev8, nfev5, err8)


@pytest.mark.parametrize("rtol", [1e-6, 1e-9])
def test_arenstorf_steps_close_to_scipy(rtol):
    """With the elementary controller the steps are SciPy DOP853's algorithm: accepted
    steps and evaluations within 3 % (measured: equal, 78/1274 and 162/2618)."""
    y0, T = problems.ARENSTORF_Y0, problems.ARENSTORF_T
    ours = mbint.solve_ivp(problems.arenstorf, (0, T), y0, method="dop853", rtol=rtol,
                           atol=rtol * 1e-2, controller="i")
    theirs = scipy_solve_ivp(problems.arenstorf, (0, T), y0, method="DOP853", rtol=rtol,
                             atol=rtol * 1e-2)
    assert ours.success and theirs.success
    assert abs(ours.nsteps - (len(theirs.t) - 1)) <= 0.03 * (len(theirs.t) - 1)
    assert abs(ours.nfev - theirs.nfev) <= 0.03 * theirs.nfev


# ---- events, t_eval, dense output against the exact orbit ----
E_ORBIT = 0.5


def test_events():
    """Kepler orbit, e = 0.5: q_y = 0 going down at the apocenter t = pi; q_x = 0 going
    down (terminal) where cos E = e, t = E - e sin E = pi/3 - sqrt(3)/4."""
    y0 = kepler_exact(0.0, E_ORBIT)[:, 0]

    def apocenter(t, y):
        return y[1]
    apocenter.direction = -1

    def axis(t, y):
        return y[0]
    axis.direction = -1
    axis.terminal = True

    r = mbint.solve_ivp(kepler, (0, 2 * np.pi), y0, method="dop853", rtol=1e-10, atol=1e-12,
                        events=apocenter)
    assert r.status == 0 and len(r.t_events[0]) == 1
    assert abs(r.t_events[0][0] - np.pi) < 1e-8
    np.testing.assert_allclose(r.y_events[0][0], kepler_exact(np.pi, E_ORBIT)[:, 0], atol=1e-8)

    r = mbint.solve_ivp(kepler, (0, 2 * np.pi), y0, method="dop853", rtol=1e-10, atol=1e-12,
                        events=[apocenter, axis])
    t_star = np.pi / 3 - np.sqrt(3) / 4
    assert r.status == 1 and len(r.t_events[1]) == 1 and len(r.t_events[0]) == 0
    assert abs(r.t_events[1][0] - t_star) < 1e-9 and r.t[-1] == r.t_events[1][0]
    np.testing.assert_allclose(r.y[:, -1], kepler_exact(t_star, E_ORBIT)[:, 0], atol=1e-9)


def test_t_eval():
    y0 = kepler_exact(0.0, E_ORBIT)[:, 0]
    te = np.linspace(0, 2 * np.pi, 37)
    r = mbint.solve_ivp(kepler, (0, 2 * np.pi), y0, method="dop853", rtol=1e-10, atol=1e-12,
                        t_eval=te)
    assert r.success and np.array_equal(r.t, te)
    assert np.isin(te, r.t_steps).sum() <= 2  # the others lie inside steps: interpolated
    np.testing.assert_allclose(r.y, kepler_exact(te, E_ORBIT), atol=1e-8)


def test_dense_output():
    y0 = kepler_exact(0.0, E_ORBIT)[:, 0]
    r = mbint.solve_ivp(kepler, (0, 2 * np.pi), y0, method="dop853", rtol=1e-10, atol=1e-12,
                        dense_output=True)
    tt = np.random.default_rng(1).uniform(0, 2 * np.pi, 200)
    np.testing.assert_allclose(r.sol(tt), kepler_exact(tt, E_ORBIT), atol=1e-8)
