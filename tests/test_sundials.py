"""The SUNDIALS methods (csrc/methods/sundials_*.c) through ``mbint.solve_ivp`` and
``mbint.solve_dae``.

Checks: the methods table; accuracy on Van der Pol (mu = 1000 form of
problems.c_rhs("vdp1000"), t in [0, 2]), Robertson (t to 1e5) and HIRES at
rtol = 1e-3 ... 1e-8 against SciPy's Radau at rtol = 1e-12 (computed once per
module), in the weighted RMS norm sqrt(mean(((y - y_ref) / (atol + rtol |y_ref|))^2))
at the final time; agreement of cvode_bdf and ida with mbint's radau_iia and bdf;
events by SUNDIALS' root finding, t_eval, the dense output; statistics; failures
(exceptions propagate, non-finite f, max_steps); ARKODE fixed steps; ida with a
singular mass matrix; solve_dae on Robertson's kinetics with the conservation
law as algebraic equation (inconsistent initial values corrected by IDACalcIC)
against the ODE, with a Python or C residual and an optional Jacobian; bad input
raises ValueError naming the argument.  The C-level checks (ASan) are in
tests/c/test_sundials.c.
"""
import ctypes
import re

import numpy as np
import pytest
from scipy import LowLevelCallable
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import problems as P

SUNDIALS = ["cvode_bdf", "cvode_adams", "ida", "arkode_erk", "arkode_dirk"]
TOLS = [10.0 ** -e for e in range(3, 9)]

# problem: (Python f, Python Jacobian, t_span, y0, atol / rtol per component)
PROBLEMS = {
    "vdp1000": (P.van_der_pol, P.van_der_pol_jac, (0.0, 2.0), P.VDP_Y0, np.ones(2)),
    "robertson": (P.robertson, P.robertson_jac, (0.0, 1e5), P.ROBERTSON_Y0,
                  np.array([1.0, 1e-4, 1.0])),   # y2 ~ 1e-5 .. 1e-8
    "hires": (P.hires, None, (0.0, P.HIRES_T), P.HIRES_Y0, np.ones(8)),
}

# Error bound (in units of the tolerance) per method and problem, and the
# tolerances it is checked at.  SUNDIALS controls the local error of each step (its
# WRMS norm <= 1); the global error is not controlled, and what it comes to depends on
# heuristics (order selection, nonlinear convergence tests, step growth limits) that
# differ between SUNDIALS releases.  Measured maxima over rtol = 1e-3 .. 1e-8 (RMS norm)
# with SUNDIALS 6.4.1:
#   vdp1000:   cvode_bdf 13.4, ida 10.0, arkode_dirk 0.6, cvode_adams 6.4, arkode_erk 0.09
#   robertson: cvode_bdf 1.3, ida 1.6, arkode_dirk 0.65, cvode_adams (1e-5..1e-8) 0.14
#   hires:     cvode_bdf 8.9, ida 6.3, arkode_dirk 0.03, arkode_erk 0.09,
#              cvode_adams (1e-5..1e-8) 6.2
# The variable-order BDF and Adams codes (CVODE, IDA) get 50: a global error of the
# order of the tolerance, at least 3.7x above the measurements (the earlier 10 and 20
# were met at 89% and 67%); ARKODE keeps 10 (measured <= 0.65).  A tolerance that does
# not reach SUNDIALS shows as 1e3..1e5 at rtol 1e-8.
# Adams-Moulton (orders > 2 are not A-stable) is stability-limited at loose
# tolerances on the stiff problems (Robertson 1e-3: 300x with 2e5 steps; HIRES
# 1e-4: 90x), and the explicit ERK cannot do Robertson to 1e5 at all.
VARIABLE_ORDER_BOUND, ARKODE_BOUND = 50, 10
_V, _A = VARIABLE_ORDER_BOUND, ARKODE_BOUND
BOUNDS = {
    ("cvode_bdf", "vdp1000"): (_V, TOLS), ("ida", "vdp1000"): (_V, TOLS),
    ("arkode_dirk", "vdp1000"): (_A, TOLS), ("cvode_adams", "vdp1000"): (_V, TOLS),
    ("arkode_erk", "vdp1000"): (_A, TOLS),
    ("cvode_bdf", "robertson"): (_V, TOLS), ("ida", "robertson"): (_V, TOLS),
    ("arkode_dirk", "robertson"): (_A, TOLS), ("cvode_adams", "robertson"): (_V, TOLS[2:]),
    ("cvode_bdf", "hires"): (_V, TOLS), ("ida", "hires"): (_V, TOLS),
    ("arkode_dirk", "hires"): (_A, TOLS), ("arkode_erk", "hires"): (_A, TOLS),
    ("cvode_adams", "hires"): (_V, TOLS[2:]),
}


@pytest.fixture(scope="module")
def refs():
    out = {}
    for name, (f, jac, t_span, y0, sc) in PROBLEMS.items():
        r = scipy_solve_ivp(f, t_span, y0, method="Radau", rtol=1e-12, atol=1e-14 * sc,
                            jac=jac, dense_output=True)
        assert r.success
        out[name] = r
    return out


def werr(y, y_ref, rtol, atol):
    """weighted RMS error of y against y_ref"""
    return float(np.sqrt(np.mean(((y - y_ref) / (atol + rtol * np.abs(y_ref))) ** 2)))


def run(problem, method, rtol, **kw):
    _, _, t_span, y0, sc = PROBLEMS[problem]
    kw.setdefault("jac", P.c_jac(problem))
    return mbint.solve_ivp(P.c_rhs(problem), t_span, y0, method=method, rtol=rtol,
                           atol=rtol * sc, **kw)


def have(method):
    return method in [m.name for m in mbint.methods()]


def oscillator(t, y):
    return np.array([y[1], -y[0]])


# ---------------------------------------------------------------- the methods table

def test_methods_table():
    ms = {m.name: m for m in mbint.methods()}
    assert set(SUNDIALS) <= set(ms)
    for name in SUNDIALS:
        m = ms[name]
        assert m.backend == "sundials" and m.description and m.reference
    assert ms["cvode_bdf"].order == 5 and ms["cvode_adams"].order == 12 and ms["ida"].order == 5
    for name in ("cvode_bdf", "cvode_adams", "ida"):
        assert ms[name].adaptive == "variable order" and not ms[name].fixed_step
        assert ms[name].implicit and ms[name].needs_jacobian
    assert ms["ida"].mass_matrix and not ms["cvode_bdf"].mass_matrix
    assert ms["arkode_erk"].order == 4 and ms["arkode_erk"].error_order == 3
    assert not ms["arkode_erk"].implicit and ms["arkode_erk"].fixed_step
    assert ms["arkode_dirk"].implicit and ms["arkode_dirk"].needs_jacobian
    assert ms["dopri5"].backend == "mbint"


# ---------------------------------------------------------------- accuracy

@pytest.mark.parametrize("method, problem", sorted(BOUNDS), ids=lambda v: v)
def test_error_within_bound_of_tolerance(refs, method, problem, record_property):
    bound, tols = BOUNDS[method, problem]
    y_ref = refs[problem].y[:, -1]
    sc = PROBLEMS[problem][4]
    errs = []
    for rtol in tols:
        res = run(problem, method, rtol)
        assert res.status == 0, (rtol, res.message)
        assert res.t[-1] == PROBLEMS[problem][2][1]
        errs.append(werr(res.y[:, -1], y_ref, rtol, rtol * sc))
    record_property("errors/tol", errs)
    assert max(errs) <= bound, dict(zip(tols, errs))


@pytest.mark.parametrize("problem", list(PROBLEMS))
@pytest.mark.parametrize("method", ["cvode_bdf", "ida"])
@pytest.mark.parametrize("ours", ["radau_iia", "bdf"])
def test_agrees_with_mbint_methods(refs, method, ours, problem):
    if not have(ours):
        pytest.skip(f"mbint method {ours!r} is not built")
    rtol = 1e-8
    sc = PROBLEMS[problem][4]
    a, b = run(problem, method, rtol), run(problem, ours, rtol)
    assert a.status == 0 and b.status == 0, (a.message, b.message)
    # each within its own bound of the reference (SUNDIALS 50, ours 10): together
    # within the sum (measured <= 6.6)
    bound = VARIABLE_ORDER_BOUND + 10
    assert werr(a.y[:, -1], b.y[:, -1], rtol, rtol * sc) <= bound
    # and over the whole run, through the dense output of ours at our points (not
    # for Van der Pol, where a phase shift of 1e-9 at a jump is a large difference)
    if problem != "vdp1000":
        b = run(problem, ours, rtol, dense_output=True)
        d = werr(a.y[:, 1:], b.sol(a.t[1:]), rtol, (rtol * sc)[:, None])
        assert d <= bound      # measured <= 3.7


@pytest.mark.parametrize("method", SUNDIALS)
def test_nfev_counts_every_evaluation(method):
    # nfev includes the evaluations of difference-quotient Jacobians (and of
    # y'(t0) for ida); with an analytic Jacobian, fewer evaluations per step
    calls = [0]

    def f(t, y):
        calls[0] += 1
        return P.robertson(t, y)

    kw = dict(method=method, rtol=1e-5, atol=1e-5 * PROBLEMS["robertson"][4])
    t_span = (0.0, 1e5) if method != "arkode_erk" else (0.0, 0.05)
    fd = mbint.solve_ivp(f, t_span, P.ROBERTSON_Y0, **kw)
    assert fd.status == 0 and calls[0] == fd.nfev
    if not mbint.methods()[[m.name for m in mbint.methods()].index(method)].needs_jacobian:
        assert fd.njev == fd.nlu == 0
        return
    calls[0] = 0
    an = mbint.solve_ivp(f, t_span, P.ROBERTSON_Y0, jac=P.robertson_jac, **kw)
    assert an.status == 0 and calls[0] == an.nfev
    assert fd.njev > 0 and an.njev > 0 and an.nlu >= an.njev
    assert fd.nfev / fd.nsteps > an.nfev / an.nsteps


def test_python_jacobian_callable_and_constant_matrix():
    A = np.array([[0.0, 1.0], [-1.0, 0.0]])
    calls = [0]

    def jac(t, y):
        calls[0] += 1
        return A

    for method in ("cvode_bdf", "ida", "arkode_dirk"):
        calls[0] = 0
        r1 = mbint.solve_ivp(oscillator, (0, 5), [1.0, 0.0], method=method, rtol=1e-8,
                             atol=1e-10, jac=jac)
        r2 = mbint.solve_ivp(oscillator, (0, 5), [1.0, 0.0], method=method, rtol=1e-8,
                             atol=1e-10, jac=A)
        assert calls[0] == r1.njev > 0
        np.testing.assert_array_equal(r1.y, r2.y)


# ---------------------------------------------------------------- output

@pytest.mark.parametrize("method", SUNDIALS)
def test_events_direction_and_terminal_count(method):
    def g0(t, y):          # cos t, decreasing through 0 at pi/2, 5 pi/2
        return y[0]
    g0.direction, g0.terminal = -1, 2

    def g1(t, y):          # -sin t, both directions
        return y[1]

    res = mbint.solve_ivp(P.c_rhs("oscillator"), (0, 20), [1.0, 0.0], method=method,
                          rtol=1e-9, atol=1e-11, events=[g0, g1], dense_output=True)
    assert res.status == 1 and res.message == "A termination event occurred."
    np.testing.assert_allclose(res.t_events[0], [np.pi / 2, 5 * np.pi / 2], atol=1e-7)
    np.testing.assert_allclose(res.t_events[1], [np.pi, 2 * np.pi], atol=1e-7)
    np.testing.assert_allclose(res.y_events[0][:, 1], [-1.0, -1.0], atol=1e-7)
    assert abs(res.t[-1] - 2.5 * np.pi) < 1e-7 and abs(res.y[0, -1]) < 1e-7
    assert res.t_steps[-1] == res.t[-1]
    np.testing.assert_allclose(res.sol(res.t[-1]), res.y[:, -1], atol=1e-12)


@pytest.mark.parametrize("method", SUNDIALS)
def test_t_eval_and_dense_output(method):
    te = np.linspace(0, 10, 41)
    kw = dict(method=method, rtol=1e-8, atol=1e-10)
    a = mbint.solve_ivp(P.c_rhs("oscillator"), (0, 10), [1.0, 0.0], t_eval=te, **kw)
    b = mbint.solve_ivp(P.c_rhs("oscillator"), (0, 10), [1.0, 0.0], dense_output=True, **kw)
    assert a.status == b.status == 0
    np.testing.assert_array_equal(a.t, te)
    assert a.nsteps == b.nsteps and len(b.t) == b.nsteps + 1
    # t_eval values and sol come from the same interpolant of the same steps
    np.testing.assert_allclose(a.y, b.sol(te), atol=1e-13)
    # sol passes through the steps' end points and is as accurate between them
    np.testing.assert_allclose(b.sol(b.t), b.y, atol=1e-13)
    t_mid = 0.5 * (b.t[1:] + b.t[:-1])
    e_mid = np.max(np.abs(b.sol(t_mid)[0] - np.cos(t_mid)))
    e_node = np.max(np.abs(b.y[0] - np.cos(b.t)))
    assert e_mid <= 2 * e_node + 1e-12
    assert np.all(np.diff(b.t_steps) > 0) and len(b.h_steps) == b.nsteps


@pytest.mark.parametrize("problem", ["robertson", "hires"])
@pytest.mark.parametrize("method", ["cvode_bdf", "ida", "arkode_dirk"])
def test_dense_output_on_stiff_problem(refs, method, problem):
    rtol = 1e-7
    atol = (rtol * PROBLEMS[problem][4])[:, None]
    res = run(problem, method, rtol, dense_output=True)
    ref = refs[problem].sol
    e_nodes = werr(res.y, ref(res.t), rtol, atol)
    t_mid = 0.5 * (res.t[1:] + res.t[:-1])
    e_mid = werr(res.sol(t_mid), ref(t_mid), rtol, atol)
    # between the steps within the same bound (ARKODE's cubic Hermite interpolant is
    # one order below the method: mid-step 1.5 against 0.17 at the steps on Robertson);
    # the bounds of the accuracy test above (measured: cvode_bdf on HIRES 9.8 at the
    # steps and 9.9 between them, the others <= 3)
    bound = ARKODE_BOUND if method.startswith("arkode") else VARIABLE_ORDER_BOUND
    assert e_nodes < bound and e_mid < bound, (e_nodes, e_mid)


def test_backward_integration():
    for method in SUNDIALS:
        res = mbint.solve_ivp(lambda t, y: -y, (2.0, 0.0), [np.exp(-2.0)], method=method,
                              rtol=1e-8, atol=1e-10, dense_output=True)
        assert res.status == 0 and res.t[-1] == 0.0
        assert abs(res.y[0, -1] - 1.0) < 1e-6
        assert abs(res.sol(1.0)[0] - np.exp(-1.0)) < 1e-6


# ---------------------------------------------------------------- failures

@pytest.mark.parametrize("method", SUNDIALS)
def test_exception_in_fun_propagates(method):
    def fun(t, y):
        if t > 0.5:
            raise KeyError("boom")
        return -y

    with pytest.raises(KeyError, match="boom"):
        mbint.solve_ivp(fun, (0, 1), [1.0], method=method)


@pytest.mark.parametrize("method", ["cvode_bdf", "ida", "arkode_erk"])
def test_exception_in_event_and_jacobian_propagates(method):
    def g(t, y):
        if t > 0.5:
            raise RuntimeError("event")
        return y[0] - 2.0

    with pytest.raises(RuntimeError, match="event"):
        mbint.solve_ivp(oscillator, (0, 1), [1.0, 0.0], method=method, events=g)

    def jac(t, y):
        raise ZeroDivisionError("jac")

    if method != "arkode_erk":
        with pytest.raises(ZeroDivisionError, match="jac"):
            mbint.solve_ivp(P.van_der_pol, (0, 1), P.VDP_Y0, method=method, jac=jac)


@pytest.mark.parametrize("method", SUNDIALS)
def test_non_finite_rhs_stops_with_trajectory_so_far(method):
    def fun(t, y):
        return np.array([np.nan if t > 1.0 else -y[0]])

    res = mbint.solve_ivp(fun, (0, 3), [1.0], method=method, rtol=1e-8, atol=1e-10,
                          max_step=0.1)
    assert res.status == -1 and not res.success
    assert "non-finite" in res.message
    assert 0.8 < res.t[-1] <= 1.0 + 1e-12
    np.testing.assert_allclose(res.y[0], np.exp(-res.t), rtol=1e-6)


DP = ctypes.POINTER(ctypes.c_double)
RHS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, DP, DP, ctypes.c_void_p)


@RHS
def decay_fails_after_1_c(t, y, ydot, user_data):
    ydot[0] = -y[0]
    return -4 if t > 1.0 else 0


@pytest.mark.parametrize("method", SUNDIALS)
def test_c_fun_negative_return_and_max_steps(method):
    res = mbint.solve_ivp(decay_fails_after_1_c, (0, 3), [1.0], method=method, max_step=0.1)
    assert res.status == -1 and "failure code -4" in res.message
    assert 0.8 < res.t[-1] <= 1.0
    res = mbint.solve_ivp(P.c_rhs("vdp1000"), (0, 2), P.VDP_Y0, method=method, max_steps=25)
    assert res.status == -1 and "maximum number of steps (25)" in res.message
    assert res.nsteps + res.nreject == 25 and len(res.t) == res.nsteps + 1


def test_fixed_step_arkode_and_refusal_for_cvode():
    errs = []
    for h in (0.1, 0.05):
        res = mbint.solve_ivp(lambda t, y: -y, (0, 2), [1.0], method="arkode_dirk", h=h)
        assert res.nsteps == round(2 / h) and res.t[-1] == 2.0
        errs.append(abs(res.y[0, -1] - np.exp(-2.0)))
    assert abs(np.log2(errs[0] / errs[1]) - 4.0) < 0.25
    with pytest.raises(ValueError, match=r"\bh\b"):
        mbint.solve_ivp(lambda t, y: -y, (0, 2), [1.0], method="cvode_bdf", h=0.1)
    with pytest.raises(ValueError, match=r"\bmass\b"):
        mbint.solve_ivp(lambda t, y: -y, (0, 2), [1.0], method="cvode_bdf", mass=[[1.0]])


@pytest.mark.parametrize("name, value", [("controller", "i"), ("safety", 0.8),
                                         ("fac_min", 0.2), ("fac_max", 5.0),
                                         ("error_per_unit_step", True)])
def test_driver_controller_options_are_refused(name, value):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), [1.0], method="cvode_bdf", **{name: value})


@pytest.mark.parametrize("method", ["cvode_bdf", "ida", "arkode_dirk"])
def test_two_threads_at_once(method):
    # no global state: one SUNContext per run, the GIL released for C functions
    import threading

    kw = dict(method=method, rtol=1e-8, jac=P.c_jac("robertson"),
              atol=1e-8 * PROBLEMS["robertson"][4])
    ref = mbint.solve_ivp(P.c_rhs("robertson"), (0, 1e5), P.ROBERTSON_Y0, **kw)
    out, errors = [None, None], []

    def work(i):
        try:
            for _ in range(3):
                out[i] = mbint.solve_ivp(P.c_rhs("robertson"), (0, 1e5), P.ROBERTSON_Y0, **kw)
        except BaseException as exc:  # re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors, errors
    for res in out:
        np.testing.assert_array_equal(res.y, ref.y)
        assert res.nfev == ref.nfev


# ---------------------------------------------------------------- DAEs

def robertson_dae(t, y, yp):
    return np.array([yp[0] + 0.04 * y[0] - 1e4 * y[1] * y[2],
                     yp[1] - 0.04 * y[0] + 1e4 * y[1] * y[2] + 3e7 * y[1] ** 2,
                     y[0] + y[1] + y[2] - 1.0])


def robertson_dae_jac(t, y, yp, cj):
    return np.array([[0.04 + cj, -1e4 * y[2], -1e4 * y[1]],
                     [-0.04, 1e4 * y[2] + 6e7 * y[1] + cj, 1e4 * y[1]],
                     [1.0, 1.0, 1.0]])


RES = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, DP, DP, DP, ctypes.c_void_p)


@RES
def robertson_dae_c(t, y, yp, r, user_data):
    r[0] = yp[0] + 0.04 * y[0] - 1e4 * y[1] * y[2]
    r[1] = yp[1] - 0.04 * y[0] + 1e4 * y[1] * y[2] + 3e7 * y[1] ** 2
    r[2] = y[0] + y[1] + y[2] - 1.0
    return 0


ATOL_R = np.array([1e-8, 1e-12, 1e-8])


@pytest.mark.parametrize("kind", ["python", "python+jac", "ctypes"])
def test_solve_dae_robertson_matches_the_ode(refs, kind):
    residual = robertson_dae_c if kind == "ctypes" else robertson_dae
    jac = robertson_dae_jac if kind == "python+jac" else None
    te = np.array([0.0, 0.4, 40.0, 4e3, 1e5])
    # y3(0) = 0.2 and y'(0) = 0 are inconsistent: IDACalcIC corrects them
    res = mbint.solve_dae(residual, (0, 1e5), [1.0, 0.0, 0.2], [0.0, 0.0, 0.0],
                          algebraic_vars=[False, False, True], rtol=1e-6, atol=ATOL_R,
                          t_eval=te, jac=jac, dense_output=True)
    assert res.status == 0, res.message
    np.testing.assert_allclose(res.y[:, 0], [1.0, 0.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(res.yp0, [-0.04, 0.04, 0.0], atol=1e-12)
    np.testing.assert_array_equal(res.t, te)
    ref = refs["robertson"].sol(te)
    assert werr(res.y, ref, 1e-6, ATOL_R[:, None]) < 10
    # the constraint holds at every output point, y' follows the ODE
    np.testing.assert_allclose(res.y.sum(axis=0), 1.0, atol=1e-12)
    f = np.array([P.robertson(t, y) for t, y in zip(res.t, res.y.T)]).T
    np.testing.assert_allclose(res.yp[:2], f[:2], rtol=1e-3, atol=1e-8)
    np.testing.assert_allclose(res.sol(te), res.y, atol=1e-14)
    if jac is not None:
        assert res.njev > 0
    assert res.nfev > 0 and res.nsteps > 0 and res.nlu > 0


def test_solve_dae_jacobian_saves_evaluations():
    kw = dict(algebraic_vars=[False, False, True], rtol=1e-6, atol=ATOL_R)
    calls = [0, 0]

    def F(t, y, yp):
        calls[0] += 1
        return robertson_dae(t, y, yp)

    def jac(t, y, yp, cj):
        calls[1] += 1
        return robertson_dae_jac(t, y, yp, cj)

    a = mbint.solve_dae(F, (0, 1e5), [1.0, 0.0, 0.0], [-0.04, 0.04, 0.0], **kw)
    assert a.status == 0 and calls == [a.nfev, 0] and a.njev > 0
    calls[0] = 0
    b = mbint.solve_dae(F, (0, 1e5), [1.0, 0.0, 0.0], [-0.04, 0.04, 0.0], jac=jac, **kw)
    assert b.status == 0 and calls == [b.nfev, b.njev] and b.njev > 0
    # difference quotients cost 3 residuals per Jacobian
    assert a.nfev / a.nsteps > b.nfev / b.nsteps
    np.testing.assert_allclose(a.y[:, -1], b.y[:, -1], rtol=1e-4, atol=1e-9)


def test_ida_with_singular_mass_matrix_matches_the_ode(refs):
    M = np.diag([1.0, 1.0, 0.0])

    def f(t, y):
        d = P.robertson(t, y)
        d[2] = y[0] + y[1] + y[2] - 1.0
        return d

    def jac(t, y):
        J = P.robertson_jac(t, y)
        J[2] = 1.0
        return J

    for j in (None, jac):
        res = mbint.solve_ivp(f, (0, 1e5), [1.0, 0.0, 0.3], method="ida", mass=M, rtol=1e-6,
                              atol=ATOL_R, jac=j)
        assert res.status == 0, res.message
        assert abs(res.y[2, 0]) < 1e-14            # y3(0) made consistent
        assert werr(res.y[:, -1], refs["robertson"].y[:, -1], 1e-6, ATOL_R) < 10
        np.testing.assert_allclose(res.y.sum(axis=0), 1.0, atol=1e-12)


def test_solve_dae_events():
    def g(t, y):          # y3 crosses 0.5
        return y[2] - 0.5
    g.terminal = True
    res = mbint.solve_dae(robertson_dae, (0, 1e5), [1.0, 0.0, 0.0], [-0.04, 0.04, 0.0],
                          algebraic_vars=[False, False, True], rtol=1e-8,
                          atol=[1e-10, 1e-14, 1e-10], events=g)
    assert res.status == 1 and len(res.t_events[0]) == 1
    assert abs(res.y_events[0][0, 2] - 0.5) < 1e-8 and res.t[-1] == res.t_events[0][0]
    ref = scipy_solve_ivp(P.robertson, (0, 1e5), P.ROBERTSON_Y0, method="Radau", rtol=1e-10,
                          atol=[1e-12, 1e-16, 1e-12], jac=P.robertson_jac,
                          events=g).t_events[0][0]
    assert abs(res.t[-1] - ref) < 1e-5 * ref


def test_solve_dae_exception_propagates():
    def F(t, y, yp):
        if t > 1.0:
            raise ArithmeticError("residual")
        return robertson_dae(t, y, yp)

    with pytest.raises(ArithmeticError, match="residual"):
        mbint.solve_dae(F, (0, 10), [1.0, 0.0, 0.0], [-0.04, 0.04, 0.0],
                        algebraic_vars=[False, False, True])


DAE_BASE = dict(residual=robertson_dae, t_span=(0.0, 1.0), y0=[1.0, 0.0, 0.0],
                yp0=[-0.04, 0.04, 0.0])


@pytest.mark.parametrize("name, change", [
    ("residual", dict(residual=3.0)),
    ("residual", dict(residual=LowLevelCallable(P.c_rhs("robertson")))),
    ("t_span", dict(t_span=(0.0,))),
    ("t_span", dict(t_span=(0.0, np.inf))),
    ("y0", dict(y0=[[1.0, 0.0, 0.0]])),
    ("y0", dict(y0=[np.nan, 0.0, 0.0])),
    ("yp0", dict(yp0=[0.0, 0.0])),
    ("algebraic_vars", dict(algebraic_vars=[False, True])),
    ("algebraic_vars", dict(algebraic_vars=[0, 2, 1])),
    ("rtol", dict(rtol=0.0)),
    ("atol", dict(atol=[1e-6, 1e-6])),
    ("atol", dict(atol=-1.0)),
    ("t_eval", dict(t_eval=[0.5, 0.2])),
    ("t_eval", dict(t_eval=[0.0, 2.0])),
    ("jac", dict(jac=np.eye(3))),
    ("max_steps", dict(max_steps=0)),
    ("first_step", dict(first_step=-1.0)),
    ("calc_ic", dict(calc_ic="yes")),
    ("events", dict(events=[1.0])),
], ids=lambda v: v if isinstance(v, str) else "")
def test_solve_dae_bad_input_raises_value_error_naming_the_argument(name, change):
    kw = {**DAE_BASE, **change}
    residual, t_span, y0 = kw.pop("residual"), kw.pop("t_span"), kw.pop("y0")
    with pytest.raises(ValueError, match=rf"\b{re.escape(name)}\b"):
        mbint.solve_dae(residual, t_span, y0, **kw)
