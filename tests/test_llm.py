"""Tests of the Local Linearization Method (csrc/methods/llm.c; LLM paper: Gil,
Sanfelice, Nikravesh) and of the driver extensions it brought: dense records (a
continuous output that is not a polynomial) and switching events (restarts at
contact instants), through ``mbint.solve_ivp`` and ``mbint.simulate``.

Checks: exactness to rounding on y' = lambda y and on linear systems with a
forcing linear in t, for any h; order 2 on a nonlinear problem; the local error
estimate of eqs 29-33 against the exact local error on the test ODE of eq 35;
adaptive runs (EPS, EPUS, elementary and PI controllers, the Fig 7 settings);
the continuous output of eq 18; events and t_eval; the bouncing balls of eqs 19-21
with contact restarts (ODE form and PlanarModel); restarts of other methods at a
switching event.  The C side (dense record bit for bit, Jacobian reuse, the fixed
grid around cuts, df/dt given) is in tests/c/test_llm.c.
"""
import math

import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
from mbint import _core  # noqa: E402
from mbint.models import bouncing_balls, bouncing_balls_ode  # noqa: E402
from scipy.integrate import solve_ivp as scipy_solve_ivp  # noqa: E402

EPS = np.finfo(float).eps


def test_registered():
    info = mbint.methods()[[m.name for m in mbint.methods()].index("llm")]
    assert info.order == 2 and info.needs_jacobian and info.adaptive == "embedded"
    assert info.fixed_step and not info.implicit and not info.mass_matrix
    z = np.array([-1.0, -30 + 4j, 0.5 - 2j, 20j])
    np.testing.assert_allclose(mbint.stability.amplification("llm", z), np.exp(z), rtol=1e-15)


# ---- exactness ----------------------------------------------------------------------

@pytest.mark.parametrize("lam", [-2.0, 0.5, -40.0])
@pytest.mark.parametrize("h", [0.1, 1.0, 3.0])
def test_exact_on_scalar_linear(lam, h):
    r = mbint.solve_ivp(lambda t, y: lam * y, (0, 9), [1.0], method="llm", h=h,
                        jac=[[lam]])
    ex = np.exp(lam * r.t)
    # rounding: relative to y, plus a few ulps of max |y| where y + phi cancels
    bound = 1e-13 * np.abs(ex) + 4 * EPS * np.abs(r.y[0]).max()
    assert r.success and len(r.t) == math.ceil(9 / h - 1e-9) + 1
    assert np.all(np.abs(r.y[0] - ex) <= bound)


def _linear_system():
    """y' = A y + b0 + b1 t, A = Q B Q^T (B: a damped rotation block and a decay)."""
    B = np.array([[-0.3, 4.0, 0.0], [-4.0, -0.3, 0.0], [0.0, 0.0, -2.0]])
    c1, s1, c2, s2 = math.cos(0.4), math.sin(0.4), math.cos(0.7), math.sin(0.7)
    Q = np.array([[1, 0, 0], [0, c2, -s2], [0, s2, c2]]) @ \
        np.array([[c1, -s1, 0], [s1, c1, 0], [0, 0, 1]])
    A = Q @ B @ Q.T
    b0, b1 = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.8, -1.1])
    y0 = np.array([1.0, 0.5, -0.25])
    # particular solution c0 + c1 t: A c1 = -b1, A c0 = c1 - b0; homogeneous part by
    # the closed form of e^{Bt}
    cc1 = np.linalg.solve(A, -b1)
    cc0 = np.linalg.solve(A, cc1 - b0)

    def exact(t):
        z = Q.T @ (y0 - cc0)
        ea, cw, sw = math.exp(-0.3 * t), math.cos(4 * t), math.sin(4 * t)
        ez = np.array([ea * (cw * z[0] + sw * z[1]), ea * (-sw * z[0] + cw * z[1]),
                       math.exp(-2 * t) * z[2]])
        return cc0 + cc1 * t + Q @ ez

    return A, b0, b1, y0, exact


@pytest.mark.parametrize("h", [0.05, 0.5, 3.0])
def test_exact_on_linear_system_forced_linearly_in_t(h):
    """Exact to rounding.  solve_ivp takes no df/dt and its forward difference is not
    exact (the exactness with the user's df/dt, y' = A y + b0 + b1 t as it stands, is
    tested in C); here t is a state: z = (y, t), z' = (A y + b0 + b1 z_4, 1), linear
    and autonomous with its exact Jacobian [[A, b1], [0, 0]]."""
    A, b0, b1, y0, exact = _linear_system()
    Jz = np.zeros((4, 4))
    Jz[:3, :3], Jz[:3, 3] = A, b1
    r = mbint.solve_ivp(lambda t, z: np.append(A @ z[:3] + b0 + b1 * z[3], 1.0), (0, 6),
                        np.append(y0, 0.0), method="llm", h=h, jac=Jz)
    ex = np.array([exact(t) for t in r.t]).T
    assert r.success and len(r.t) == math.ceil(6 / h - 1e-9) + 1
    assert np.abs(r.y[:3] - ex).max() < 1e-13 * (1 + np.abs(ex).max())
    assert np.abs(r.y[3] - r.t).max() < 1e-14 * 6


# ---- order 2 ------------------------------------------------------------------------

def test_order_two_on_a_nonlinear_problem():
    def f(t, y):
        return np.array([y[1], -math.sin(y[0]) - 0.1 * y[1] + 0.3 * math.cos(t)])

    def jac(t, y):
        return np.array([[0.0, 1.0], [-math.cos(y[0]), -0.1]])

    ref = scipy_solve_ivp(f, (0, 4), [1.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-13)
    hs = 0.2 / 2.0 ** np.arange(5)
    errs = [np.abs(mbint.solve_ivp(f, (0, 4), [1.0, 0.0], method="llm", h=h, jac=jac).y[:, -1]
                   - ref.y[:, -1]).max() for h in hs]
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert abs(slope - 2.0) < 0.25, (slope, errs)


# ---- the local error estimate (eqs 29-33) on the test ODE of eq 35 --------------------

def eq35():
    """The test ODE of eq 35, derived from its exact solution x = (sin 1/t, cos 1/t, t):
    x1' = -cos(1/t) / t^2 = -x2 / x3^2, x2' = sin(1/t) / t^2 = x1 / x3^2 and x3' = 1
    (t is the state x3, so the system is autonomous); x(1/pi) = (0, -1, 1/pi)."""
    def f(t, x):
        return np.array([-x[1] / x[2] ** 2, x[0] / x[2] ** 2, 1.0])

    def jac(t, x):
        return np.array([[0.0, -1 / x[2] ** 2, 2 * x[1] / x[2] ** 3],
                         [1 / x[2] ** 2, 0.0, -2 * x[0] / x[2] ** 3],
                         [0.0, 0.0, 0.0]])

    def exact(t):
        return np.array([math.sin(1 / t), math.cos(1 / t), t])

    return f, jac, exact


def test_error_estimate_within_factor_two_of_the_exact_local_error():
    """One step of every h in [1e-3, 1e-1] from the exact x(1/pi): with atol = 1 and
    rtol ~ 0 the driver's normalized error (err_steps) is the RMS of the estimate
    l_{n+1}, compared with the RMS of the exact local error x(t0 + h) - x_1."""
    f, jac, exact = eq35()
    t0 = 1 / math.pi
    ratios = []
    for h in np.logspace(-3, -1, 9):
        r = mbint.solve_ivp(f, (t0, t0 + h), exact(t0), method="llm", first_step=h,
                            rtol=1e-12, atol=1.0, jac=jac)
        assert r.nsteps == 1 and r.nreject == 0
        le = exact(t0 + h) - r.y[:, -1]
        ratios.append(r.err_steps[0] / np.sqrt(np.mean(le ** 2)))
    ratios = np.array(ratios)
    assert np.all((ratios > 0.5) & (ratios < 2.0)), ratios
    assert np.all(ratios[:4] > 0.99)  # asymptotically exact for small h


# ---- adaptive step control ----------------------------------------------------------

def _pendulum():
    def f(t, y):
        return np.array([y[1], -9.81 * math.sin(y[0])])

    def jac(t, y):
        return np.array([[0.0, 1.0], [-9.81 * math.cos(y[0]), 0.0]])

    return f, jac, np.array([2.0, 0.0])


@pytest.mark.parametrize("epus", [False, True])
@pytest.mark.parametrize("controller", ["i", "pi"])
def test_adaptive_keeps_the_estimate_under_tol(epus, controller):
    f, jac, y0 = _pendulum()
    tol = 1e-6
    r = mbint.solve_ivp(f, (0, 5), y0, method="llm", rtol=tol, atol=tol, jac=jac,
                        controller=controller, error_per_unit_step=epus)
    ref = scipy_solve_ivp(f, (0, 5), y0, method="DOP853", rtol=1e-12, atol=1e-12)
    assert r.success and r.nsteps > 20 and r.nreject < r.nsteps
    assert np.all(r.err_steps <= 1.0)
    # the global error follows the tolerance (EPUS keeps it per unit time)
    assert np.abs(r.y[:, -1] - ref.y[:, -1]).max() < 2e3 * tol


@pytest.mark.parametrize("epus, k", [(True, 2), (False, 3)])
def test_elementary_controller_is_eq_38(epus, k):
    """h* = gamma (tol / r)^(1/k) h (eq 38) with gamma = 0.9 and k = p = 2 for EPUS
    (k = p + 1 = 3 for EPS), as in Fig 7; the driver bounds h*/h to [0.2, 10].  On
    y' = -y^2 no step is rejected, so every ratio of consecutive steps is eq 38's."""
    r = mbint.solve_ivp(lambda t, y: -y ** 2, (0, 10), [1.0], method="llm", rtol=1e-12,
                        atol=1e-4, jac=lambda t, y: [[-2 * y[0]]], controller="i",
                        error_per_unit_step=epus, safety=0.9)
    h, e = np.abs(r.h_steps), np.maximum(r.err_steps, 1e-10)
    assert r.success and r.nreject == 0 and len(h) > 10
    pred = np.clip(0.9 * e[:-2] ** (-1.0 / k), 0.2, 10.0)
    np.testing.assert_allclose(h[1:-1] / h[:-2], pred, rtol=1e-12)


def test_fig7_settings_on_the_stiff_double_pendulum():
    """Fig 7: EPUS, k = 2, gamma = 0.9, tol = 0.1 and 0.05 (atol = tol, rtol ~ 0): the
    estimated error stays under tol, the smaller tol takes more and smaller steps."""
    from mbint.models import double_pendulum_stiff_spring
    m = double_pendulum_stiff_spring()
    runs = {}
    for tol in (0.1, 0.05):
        tr = mbint.simulate(m, (0, 2), method="llm", controller="i", error_per_unit_step=True,
                            safety=0.9, atol=tol, rtol=1e-12)
        assert tr.success and np.all(tr.err_steps <= 1.0)
        runs[tol] = tr
    assert runs[0.05].stats["nsteps"] > runs[0.1].stats["nsteps"]
    assert np.median(np.abs(runs[0.05].h_steps)) < np.median(np.abs(runs[0.1].h_steps))


# ---- continuous output (eq 18) ------------------------------------------------------

def test_continuous_output():
    f, jac, y0 = _pendulum()
    r = mbint.solve_ivp(f, (0, 3), y0, method="llm", h=0.02, jac=jac, dense_output=True)
    ref = scipy_solve_ivp(f, (0, 3), y0, method="DOP853", rtol=1e-13, atol=1e-13,
                          dense_output=True)
    # exact at the step ends: the record's y_n at theta = 0, and y_new at theta = 1
    np.testing.assert_array_equal(r.sol(r.t[:-1]), r.y[:, :-1])
    np.testing.assert_allclose(r.sol(r.t[-1]), r.y[:, -1], rtol=0, atol=1e-15)
    # inside the steps as accurate as at their ends (order 2 globally)
    tm = 0.5 * (r.t[1:] + r.t[:-1])
    e_mid = np.abs(r.sol(tm) - ref.sol(tm)).max()
    e_end = np.abs(r.y - ref.sol(r.t)).max()
    assert e_mid < 1.5 * e_end and e_end < 1e-2
    # scalar call, and the C entry point directly (vector theta = stacked scalars)
    assert r.sol(1.234).shape == (2,)
    k = 7
    rec = r.sol.records[k]
    th = np.array([0.0, 0.3, 1.0])
    Y = _core.dense_record_eval("llm", 2, rec, r.t[k], r.t[k + 1] - r.t[k], th)
    assert Y.shape == (3, 2)
    for j in range(3):
        np.testing.assert_array_equal(
            Y[j], _core.dense_record_eval("llm", 2, rec, r.t[k], r.t[k + 1] - r.t[k], th[j]))
    with pytest.raises(ValueError):
        _core.dense_record_eval("dopri5", 2, rec, 0.0, 0.1, 0.5)
    with pytest.raises(ValueError):
        _core.dense_record_eval("llm", 3, rec, 0.0, 0.1, 0.5)


def test_events_and_t_eval():
    """Free fall is linear: the LLM and its continuous output are exact, so the
    impact time and the t_eval values are exact to rounding."""
    g, y_top = 9.81, 2.0

    def ground(t, y):
        return y[0]

    ground.terminal = True
    ground.direction = -1
    te = np.linspace(0, 0.6, 7)
    r = mbint.solve_ivp(lambda t, y: np.array([y[1], -g]), (0, 2), [y_top, 0.0], method="llm",
                        rtol=1e-6, atol=1e-9, t_eval=te, events=ground, jac=[[0, 1], [0, 0]])
    assert r.status == 1 and len(r.t_events[0]) == 1
    assert abs(r.t_events[0][0] - math.sqrt(2 * y_top / g)) < 1e-14
    np.testing.assert_allclose(r.y[0], y_top - 0.5 * g * te ** 2, rtol=0, atol=1e-14)
    assert r.nsteps < 10


# ---- switching events: the bouncing balls (eqs 19-21) -------------------------------

def _switching(events):
    for g in events:
        g.switching = True
    return events


def _rel_drift(E):
    return np.abs(E - E[0]).max() / abs(E[0])


def test_bouncing_balls_ode_llm_exact_dopri5_drifts():
    o = bouncing_balls_ode()
    evs = _switching(o.events)
    fixed = mbint.solve_ivp(o.fun, (0, 5), o.y0, method="llm", h=0.005, jac=o.jac, events=evs)
    adapt = mbint.solve_ivp(o.fun, (0, 5), o.y0, method="llm", jac=o.jac, events=evs,
                            rtol=1e-6, atol=1e-8, max_step=0.005)
    d5 = mbint.solve_ivp(o.fun, (0, 5), o.y0, method="dopri5", rtol=1e-6, atol=1e-8,
                         max_step=0.01)
    d5sw = mbint.solve_ivp(o.fun, (0, 5), o.y0, method="dopri5", rtol=1e-6, atol=1e-8,
                           max_step=0.01, events=evs)
    e_fixed, e_adapt = _rel_drift(o.energy(fixed.y)), _rel_drift(o.energy(adapt.y))
    e_d5, e_d5sw = _rel_drift(o.energy(d5.y)), _rel_drift(o.energy(d5sw.y))
    assert fixed.success and adapt.success and d5.success and d5sw.success
    assert e_fixed < 1e-8 and e_adapt < 1e-8
    assert e_d5 > 1e-6 and e_d5 > 1e3 * e_fixed
    assert e_d5sw > 1e3 * e_fixed  # restarts help dopri5, but it is not exact
    # one restart per contact instant, the same instants in both llm runs
    n_ev = [len(v) for v in fixed.t_events]
    assert fixed.nrestart == sum(n_ev) > 20 and [len(v) for v in adapt.t_events] == n_ev
    for a, b in zip(fixed.t_events, adapt.t_events):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_bouncing_balls_planar_model_through_simulate():
    m = bouncing_balls()
    o = bouncing_balls_ode()
    ode = mbint.solve_ivp(o.fun, (0, 5), o.y0, method="llm", h=0.005, jac=o.jac,
                          events=_switching(o.events))
    llm = mbint.simulate(m, (0, 5), method="llm", h=0.005)
    d5 = mbint.simulate(m, (0, 5), method="dopri5", rtol=1e-6, atol=1e-8, max_step=0.01)
    d5_plain = mbint.simulate(m, (0, 5), method="dopri5", rtol=1e-6, atol=1e-8, max_step=0.01,
                              contact_switching=False)
    e_llm = _rel_drift(m.reference_energy(llm.q, llm.qd))
    e_d5 = _rel_drift(m.reference_energy(d5.q, d5.qd))
    e_plain = _rel_drift(m.reference_energy(d5_plain.q, d5_plain.qd))
    assert llm.success and d5.success and d5_plain.success
    assert e_llm < 1e-8 and e_d5 > 1e3 * e_llm and e_plain > 1e-6 and e_plain > 1e3 * e_llm
    # contacts (ball-ball, ball-ground) as in eq 19: the instants of the ODE form
    assert llm.stats["nrestart"] == sum(len(v) for v in llm.t_contacts)
    assert not hasattr(d5_plain, "t_contacts") and "nrestart" not in d5_plain.stats
    for a, b in zip(llm.t_contacts, ode.t_events):
        assert len(a) == len(b)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    # the continuous output of a PlanarModel run is the LLM's, too
    dense = mbint.simulate(m, (0, 1), method="llm", h=0.005, dense_output=True)
    q, qd = dense.state(dense.t[3])
    np.testing.assert_array_equal(q, dense.q[:, 3])


# ---- switching events with other methods --------------------------------------------

def _kinked():
    """y' = -y above 0.5, -2 y below (a jump in f and f_y at y = 0.5, t = ln 2):
    y = e^-t, then 0.5 e^(-2 (t - ln 2))."""
    def f(t, y):
        return np.array([-y[0] if y[0] > 0.5 else -2.0 * y[0]])

    def jac(t, y):
        return np.array([[-1.0 if y[0] > 0.5 else -2.0]])

    def g(t, y):
        return y[0] - 0.5

    g.switching = True

    def exact(t):
        t = np.asarray(t, float)
        return np.where(t < math.log(2), np.exp(-t), 0.5 * np.exp(-2 * (t - math.log(2))))

    return f, jac, g, exact


@pytest.mark.parametrize("method", ["dopri5", "bdf", "radau_iia", "rodas4", "llm"])
def test_restart_at_a_switching_event(method):
    f, jac, g, exact = _kinked()
    tol = 1e-8
    r = mbint.solve_ivp(f, (0, 3), [1.0], method=method, rtol=tol, atol=1e-10, events=[g],
                        jac=jac, dense_output=True)
    assert r.success and r.nrestart == 1 and len(r.t_events[0]) == 1
    assert abs(r.t_events[0][0] - math.log(2)) < 1e-7
    assert abs(r.y[0, -1] / exact(3.0) - 1) < 20 * tol
    tt = np.linspace(0, 3, 61)
    assert np.abs(r.sol(tt)[0] - exact(tt)).max() < 20 * tol
    # a step ends at the switch: no step straddles it
    assert np.min(np.abs(r.t - r.t_events[0][0])) == 0.0
    assert r.nreject < 60


def test_switching_with_a_fixed_step_keeps_the_grid():
    """The step across the switch is retried: to just before the root (located on
    the dense output of the step, polluted by the jump, so this may take a few
    tries), then a short step across it; the grid points stay."""
    f, jac, g, exact = _kinked()
    r = mbint.solve_ivp(f, (0, 1), [1.0], method="rk4", h=0.1, events=[g])
    assert r.success and r.nrestart == 1
    grid = np.round(np.arange(0, 1.0001, 0.1), 12)
    assert set(grid) <= set(np.round(r.t, 12)) and len(r.t) <= len(grid) + 10
    assert abs(r.t_events[0][0] - math.log(2)) < 1e-6
    # rk4's own error at h = 0.1 (the plain run straddles the jump: 1e-2)
    assert abs(r.y[0, -1] / exact(1.0) - 1) < 5e-5


def test_switching_arguments():
    f, jac, g, exact = _kinked()
    with pytest.raises(ValueError, match="SUNDIALS"):
        mbint.solve_ivp(f, (0, 1), [1.0], method="cvode_bdf", events=[g])

    def bad(t, y):
        return y[0]

    bad.switching = "yes"
    with pytest.raises(ValueError, match="switching"):
        mbint.solve_ivp(f, (0, 1), [1.0], method="dopri5", events=[bad])
