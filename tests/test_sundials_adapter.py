"""The bookkeeping of the SUNDIALS adapters (csrc/methods/sundials_common.c,
sundials_setup.c, sundials_util.c), which issue 21 trimmed for speed: what the trimming
must not change.

Checks, for every SUNDIALS method on Van der Pol (mu = 1000) or the harmonic
oscillator:
- the three ways the tolerances reach SUNDIALS (one atol for all components as a
  scalar, several as a vector, a per-component rtol through an error-weight function)
  compute the same weights 1 / (rtol |y_i| + atol_i), so a run is the same to the last
  bit whichever way the same tolerances are given;
- every field :class:`mbint.OdeResult` documents is present in each output mode (every
  step, ``t_eval``, ``dense_output``, events), the step history has one entry per
  accepted step (``nsteps``), chains (each step starts where the last ended), and every
  recorded error estimate passed SUNDIALS' error test (normalized error <= 1);
- the steps do not depend on what is output (same history in every mode), and a t_eval
  at the step ends returns the step ends' states bit for bit;
- the finiteness check of f names the first non-finite component wherever it is (it
  sums the entries in two interleaved halves, so the odd tail is checked too).
"""
import numpy as np
import pytest

import mbint

SUNDIALS = ["cvode_bdf", "cvode_adams", "ida", "arkode_erk", "arkode_dirk"]
NONSTIFF = {"cvode_adams", "arkode_erk"}


def vdp(t, y):
    return [y[1], 1000.0 * (1.0 - y[0] ** 2) * y[1] - y[0]]


def osc(t, y):
    return [y[1], -y[0]]


def run(method, **kw):
    if method in NONSTIFF:
        return mbint.solve_ivp(osc, (0.0, 10.0), [1.0, 0.0], method=method, **kw)
    return mbint.solve_ivp(vdp, (0.0, 1.0), [2.0, 0.0], method=method, **kw)


ARRAYS = ("t", "y", "t_steps", "h_steps", "err_steps")
COUNTS = ("nfev", "njev", "nlu", "nsteps", "nreject", "nfail")


def assert_same_run(a, b):
    for k in ARRAYS:
        assert np.array_equal(a[k], b[k]), k
    for k in COUNTS:
        assert a[k] == b[k], k


@pytest.mark.parametrize("method", SUNDIALS)
def test_tolerance_forms_give_the_same_run(method):
    scalar = run(method, rtol=1e-6, atol=1e-7)
    assert scalar.success and scalar.nsteps > 10
    # a uniform atol list and a per-component rtol (error-weight function) are the
    # same tolerances
    assert_same_run(scalar, run(method, rtol=1e-6, atol=[1e-7, 1e-7]))
    assert_same_run(scalar, run(method, rtol=[1e-6, 1e-6], atol=[1e-7, 1e-7]))
    # a non-uniform atol (vector tolerances) against the error-weight function
    vec = run(method, rtol=1e-6, atol=[1e-7, 1e-9])
    assert_same_run(vec, run(method, rtol=[1e-6, 1e-6], atol=[1e-7, 1e-9]))
    assert vec.nsteps != scalar.nsteps or not np.array_equal(vec.y, scalar.y)


DOCUMENTED = ("t", "y", "sol", "t_events", "y_events", "nfev", "njev", "nlu", "status",
              "message", "success", "nsteps", "nreject", "nfail", "nrestart", "nswitch",
              "t_steps", "h_steps", "err_steps", "method")


def event_zero_of_y0(t, y):
    return y[0]


MODES = {
    "steps": {},
    "t_eval": {"t_eval": np.linspace(0.0, 1.0, 7)},
    "dense": {"dense_output": True},
    "t_eval+dense": {"t_eval": np.linspace(0.0, 1.0, 7), "dense_output": True},
    "events": {"events": event_zero_of_y0},
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("method", SUNDIALS)
def test_result_fields_in_each_output_mode(method, mode):
    kw = dict(MODES[mode])
    res = run(method, rtol=1e-6, atol=1e-8, **kw)
    base = run(method, rtol=1e-6, atol=1e-8)
    assert res.success, res.message
    for name in DOCUMENTED:
        assert name in res, name
    assert (res.sol is not None) == bool(kw.get("dense_output"))
    assert (res.t_events is not None) == ("events" in kw)
    # one history entry per accepted step, chained, ending at tf
    n = res.nsteps
    assert res.t_steps.shape == res.h_steps.shape == res.err_steps.shape == (n,)
    tf = 10.0 if method in NONSTIFF else 1.0
    assert res.t_steps[-1] == tf
    starts = res.t_steps - res.h_steps
    np.testing.assert_allclose(starts[1:], res.t_steps[:-1], rtol=0, atol=1e-12 * tf)
    assert abs(starts[0]) <= 1e-12 * tf
    # every accepted step passed the error test
    assert np.all(res.err_steps >= 0) and np.all(res.err_steps <= 1.0 + 1e-12)
    assert np.count_nonzero(res.err_steps) > n // 2
    # the output does not change the steps
    for k in ("t_steps", "h_steps", "err_steps"):
        assert np.array_equal(res[k], base[k]), k
    for k in COUNTS:
        assert res[k] == base[k], k
    if "t_eval" in kw:
        te = kw["t_eval"] * tf
        res = run(method, rtol=1e-6, atol=1e-8, **{**kw, "t_eval": te})
        assert np.array_equal(res.t, te)
    else:
        assert np.array_equal(res.t, np.r_[0.0, base.t_steps])
    if kw.get("dense_output"):
        np.testing.assert_allclose(res.sol(res.t), res.y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", SUNDIALS)
def test_t_eval_at_the_step_ends_returns_the_steps_states(method):
    steps = run(method, rtol=1e-6, atol=1e-8)
    at_ends = run(method, rtol=1e-6, atol=1e-8, t_eval=steps.t)
    assert_same_run(steps, at_ends)


@pytest.mark.parametrize("bad", [0, 1, 2])
@pytest.mark.parametrize("method", ["cvode_bdf", "ida", "arkode_erk"])
def test_non_finite_component_is_named_wherever_it_is(method, bad):
    def fun(t, y):
        f = -np.asarray(y, float)
        if t > 0.5:
            f[bad] = np.inf if bad == 1 else np.nan
        return f

    res = mbint.solve_ivp(fun, (0.0, 1.0), [1.0, 2.0, 3.0], method=method, rtol=1e-8,
                          atol=1e-10, max_step=0.05)
    assert res.status == -1
    assert f"non-finite value (component {bad})" in res.message, res.message
    assert 0.4 < res.t[-1] <= 0.5 + 1e-12
    np.testing.assert_allclose(res.y[:, -1], np.array([1.0, 2.0, 3.0]) * np.exp(-res.t[-1]),
                               rtol=1e-6)
