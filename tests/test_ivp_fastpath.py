"""The fast paths of solve_ivp / solve_dae's argument checks (issue 21): the common
case (a float64 y0, float tolerances, every step option at its default, a method name
seen before) skips work, but must give the same result bit for bit and raise the same
errors as the general path.  No timing here: what is tested is the behaviour the fast
paths keep."""
import math
import warnings

import numpy as np
import pytest

import mbint
from mbint import _validate as check
from mbint import problems

FIELDS = ("t", "y", "t_steps", "h_steps", "err_steps")


def same(a, b):
    """Two results equal bit for bit (arrays, counts, status, message)."""
    for k in FIELDS:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and x.shape == y.shape, k
        assert x.tobytes() == y.tobytes(), k
    for k in ("nfev", "njev", "nlu", "nsteps", "nreject", "nfail", "status", "message",
              "success", "method"):
        assert a[k] == b[k], k


def decay(t, y):
    return -np.arange(1.0, len(y) + 1) * y


Y0 = [1.0, 0.5, 0.25]           # exactly representable in float32


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "rodas4", "cvode_bdf"])
def test_y0_forms_give_identical_results(method):
    ref = mbint.solve_ivp(decay, (0, 1), np.array(Y0), method=method, rtol=1e-6, atol=1e-9)
    for y0 in (Y0, tuple(Y0), np.array(Y0, np.float32), np.array(Y0, ">f8"),
               np.array([1.0, 9, 0.5, 9, 0.25])[::2], np.array([[1.0, 0.5, 0.25]])[0]):
        same(ref, mbint.solve_ivp(decay, (0, 1), y0, method=method, rtol=1e-6, atol=1e-9))


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "cvode_bdf"])
def test_tolerance_forms_give_identical_results(method):
    tol = 0.5 ** 30             # exactly representable in float32
    ref = mbint.solve_ivp(decay, (0, 1), Y0, method=method, rtol=1e-6, atol=tol)
    for rtol, atol in ((np.float64(1e-6), tol), (np.array(1e-6), tol), ([1e-6] * 3, tol),
                       (1e-6, [tol] * 3), (1e-6, np.full(3, tol)), (1e-6, np.float32(tol)),
                       (1e-6, np.array(tol)), (1e-6, np.full(3, tol, np.float32))):
        same(ref, mbint.solve_ivp(decay, (0, 1), Y0, method=method, rtol=rtol, atol=atol))


def test_c_problem_identical_for_every_y0_and_atol_form():
    cfun, cjac = problems.c_rhs("robertson"), problems.c_jac("robertson")
    y0 = problems.ROBERTSON_Y0
    for method in ("cvode_bdf", "rodas4"):
        ref = mbint.solve_ivp(cfun, (0, 1e-2), y0, method=method, jac=cjac, rtol=1e-6,
                              atol=1e-12)
        for y in (list(y0), np.asarray(y0, np.float32)):
            for atol in (1e-12, [1e-12] * 3):
                same(ref, mbint.solve_ivp(cfun, (0, 1e-2), y, method=method, jac=cjac,
                                          rtol=1e-6, atol=atol))


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "cvode_bdf", "euler"])
def test_default_step_options_same_as_given_explicitly(method):
    # the defaults take a cached path; the same values given another way take the
    # checked one
    h = 0.01 if method == "euler" else None
    ref = mbint.solve_ivp(decay, (0, 1), Y0, method=method, h=h)
    for kw in (dict(max_step=float("inf")), dict(max_step=np.float64(np.inf)), dict(min_step=0),
               dict(min_step=np.float64(0.0)), dict(max_steps=None, first_step=None)):
        same(ref, mbint.solve_ivp(decay, (0, 1), Y0, method=method, h=h, **kw))
    # and the cache does not carry over to a call with other options
    other = mbint.solve_ivp(decay, (0, 1), Y0, method=method, h=h, max_step=0.05)
    assert np.all(np.diff(other.t) <= 0.05 + 1e-15)
    same(ref, mbint.solve_ivp(decay, (0, 1), Y0, method=method, h=h))


def test_default_step_options_errors_are_not_cached_away():
    # a fixed-step-only method without h raises on every call, not only the first
    name = next(m.name for m in mbint.methods() if m.adaptive == "none")
    for _ in range(2):
        with pytest.raises(ValueError, match="runs with a fixed step only"):
            mbint.solve_ivp(decay, (0, 1), Y0, method=name)


def test_method_names_resolved_alike():
    ref = mbint.solve_ivp(decay, (0, 1), Y0, method="dopri5")
    for name in ("RK45", "rk45", "ode45", "dopri5"):
        same(ref, mbint.solve_ivp(decay, (0, 1), Y0, method=name))
    for _ in range(2):
        with pytest.raises(ValueError, match="unknown method 'nope'"):
            mbint.solve_ivp(decay, (0, 1), Y0, method="nope")
    with pytest.raises(ValueError, match="method must be a string"):
        mbint.solve_ivp(decay, (0, 1), Y0, method=3)


@pytest.mark.parametrize("bad, message", [
    (dict(rtol=-1.0), "rtol must be positive and finite"),
    (dict(rtol=np.float64(-1.0)), "rtol must be positive and finite"),
    (dict(rtol=[1e-3, -1.0, 1e-3]), "rtol must be positive and finite"),
    (dict(rtol=math.nan), "rtol must be positive and finite"),
    (dict(rtol=math.inf), "rtol must be positive and finite"),
    (dict(rtol=[1e-3, math.inf, 1e-3]), "rtol must be positive and finite"),
    (dict(rtol=1e-3 + 0j), "rtol must be real"),
    (dict(rtol=[1e-3, 1e-3]), r"rtol must be a scalar or have shape \(3,\)"),
    (dict(atol=-1.0), "atol must be non-negative and finite"),
    (dict(atol=np.float32(-1.0)), "atol must be non-negative and finite"),
    (dict(atol=[1e-6, -1.0, 1e-6]), "atol must be non-negative and finite"),
    (dict(atol=math.nan), "atol must be non-negative and finite"),
    (dict(atol=math.inf), "atol must be non-negative and finite"),
    (dict(atol=np.array([1e-6, math.inf, 1e-6])), "atol must be non-negative and finite"),
    (dict(atol="x"), "atol must be a non-negative float or array"),
    (dict(atol=[1e-6, 1e-6]), r"atol must be a scalar or have shape \(3,\)"),
])
@pytest.mark.parametrize("method", ["dopri5", "cvode_bdf"])
def test_bad_tolerances_raise_alike(method, bad, message):
    kw = dict(rtol=1e-3, atol=1e-6)
    kw.update(bad)
    with pytest.raises(ValueError, match=message):
        mbint.solve_ivp(decay, (0, 1), Y0, method=method, **kw)


@pytest.mark.parametrize("atol", [0.0, 0, [0.0, 1e-6, 1e-6], np.zeros(3)])
def test_pure_relative_control_at_zero_refused_on_every_path(atol):
    with pytest.raises(ValueError, match=r"atol\[0\] = 0 where y0\[0\] = 0"):
        mbint.solve_ivp(decay, (0, 1), [0.0, 1.0, 1.0], atol=atol)
    # atol = 0 where y0 is not zero is allowed
    res = mbint.solve_ivp(decay, (0, 1), [1.0, 1.0, 1.0], atol=atol)
    assert res.success


@pytest.mark.parametrize("rtol", [1e-20, np.float64(1e-20), [1e-20, 1e-3, 1e-3]])
def test_rtol_floor_warns_on_every_path(rtol):
    with pytest.warns(UserWarning, match="too small") as rec:
        res = mbint.solve_ivp(decay, (0, 1e-3), Y0, rtol=rtol)
    assert res.success
    assert rec[0].filename == __file__  # stacklevel: the caller's line


@pytest.mark.parametrize("y0, message", [
    ([1.0, math.nan], "All components of the initial state `y0` must be finite"),
    (np.array([1.0, math.inf]), "All components of the initial state `y0` must be finite"),
    (np.r_[np.ones(check._SMALL), math.nan], "must be finite"),
    (np.r_[np.ones(check._SMALL - 1), math.inf], "must be finite"),
    ([[1.0, 2.0]], r"y0 must be 1-dimensional, got shape \(1, 2\)"),
    ("abc", "y0 must be an array of numbers"),
    (None, r"y0 must be 1-dimensional, got shape \(\)"),
])
def test_bad_y0_raises_alike(y0, message):
    for method in ("dopri5", "cvode_bdf"):
        with pytest.raises(ValueError, match=message):
            mbint.solve_ivp(decay, (0, 1), y0, method=method)


def test_ragged_y0_names_y0():
    # regression: NumPy's own message ("setting an array element with a sequence")
    # came out instead of one naming y0
    with pytest.raises(ValueError, match="y0 must be an array of numbers"):
        mbint.solve_ivp(decay, (0, 1), [[1.0, 2.0], [3.0]])
    with pytest.raises(ValueError, match="y0 must be an array of numbers"):
        mbint.solve_dae(lambda t, y, yp: yp + y, (0, 1), [[1.0, 2.0], [3.0]])


def test_t_span_int_beyond_float_range_is_a_value_error():
    # regression: float(10**400) raised OverflowError past the check
    with pytest.raises(ValueError, match="t_span must be finite"):
        mbint.solve_ivp(decay, (0, 10 ** 400), Y0)
    with pytest.raises(ValueError, match="t_span must be finite"):
        mbint.solve_dae(lambda t, y, yp: yp + y, (10 ** 400, 0), Y0)


@pytest.mark.parametrize("bad, message", [
    (dict(rtol=-1.0), "rtol must be positive and finite"),
    (dict(rtol=0), "rtol must be positive and finite"),
    (dict(atol=-1.0), "atol must be non-negative and finite"),
    (dict(atol=math.nan), "atol must be non-negative and finite"),
])
def test_scalar_tolerances_checked_for_an_empty_state(bad, message):
    # regression: with y0 = [] a scalar rtol or atol was expanded to an empty array
    # first, and nothing was checked (SciPy refuses them for every state size)
    with pytest.raises(ValueError, match=message):
        mbint.solve_ivp(decay, (0, 1), [], **bad)
    assert mbint.solve_ivp(decay, (0, 1), [], rtol=1e-3, atol=1e-6).success


@pytest.mark.parametrize("n", [check._SMALL, check._SMALL + 1])
def test_vector_checks_on_both_sides_of_the_small_size(n):
    y0 = np.ones(n)
    bad_atol = np.full(n, 1e-6)
    bad_atol[-1] = -1e-6
    with pytest.raises(ValueError, match="atol must be non-negative and finite"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), y0, atol=bad_atol)
    bad_rtol = np.full(n, 1e-3)
    bad_rtol[-1] = math.nan
    with pytest.raises(ValueError, match="rtol must be positive and finite"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), y0, rtol=bad_rtol)
    zero = np.full(n, 1e-6)
    zero[-1] = 0.0
    y0z = y0.copy()
    y0z[-1] = 0.0
    with pytest.raises(ValueError, match=rf"atol\[{n - 1}\] = 0 where y0\[{n - 1}\] = 0"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), y0z, atol=zero)
    te = np.linspace(0, 1, n)
    te[-2], te[-1] = te[-1], te[-2]
    with pytest.raises(ValueError, match="strictly increasing"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), y0, t_eval=te)
    with pytest.raises(ValueError, match="t_eval values must lie within t_span"):
        mbint.solve_ivp(lambda t, y: -y, (0, 1), y0, t_eval=np.linspace(0, 1.5, n))
    with pytest.raises(ValueError, match="strictly increasing"):
        mbint.solve_ivp(lambda t, y: -y, (1, 0), y0, t_eval=np.linspace(0, 1, n))
    res = mbint.solve_ivp(lambda t, y: -y, (1, 0), y0, t_eval=np.linspace(1, 0, n))
    assert res.success and res.t.size == n
    # vector rtol with equal entries is passed on as one float: same result as the scalar
    same(mbint.solve_ivp(lambda t, y: -y, (0, 1), y0, rtol=1e-5),
         mbint.solve_ivp(lambda t, y: -y, (0, 1), y0, rtol=np.full(n, 1e-5)))


def test_complex_y0_still_integrated_as_pairs():
    for y0 in ([1 + 1j, 2.0], np.array([1 + 1j, 2.0]), (1j, 2)):
        res = mbint.solve_ivp(lambda t, y: -1j * y, (0, 1), y0, rtol=1e-8, atol=1e-10)
        assert res.y.dtype == complex
        assert np.allclose(res.y[:, -1], np.asarray(y0) * np.exp(-1j), atol=1e-6)


def test_solve_dae_y0_and_tolerance_forms_identical():
    def F(t, y, yp):
        return yp + y

    ref = mbint.solve_dae(F, (0, 1), np.array([1.0, 0.5]), rtol=1e-6, atol=1e-9)
    for y0, atol in (([1.0, 0.5], 1e-9), (np.array([1.0, 0.5], np.float32), [1e-9, 1e-9])):
        res = mbint.solve_dae(F, (0, 1), y0, rtol=1e-6, atol=atol)
        same(ref, res)
        assert res.yp.tobytes() == ref.yp.tobytes()


def test_no_warning_on_the_common_path():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mbint.solve_ivp(decay, (0, 1), np.array(Y0), rtol=1e-6, atol=1e-9)


def _dense_by_segment(t0, h, t_end, deg, off, c, n):
    """The coefficient array and records of DenseOutput, built segment by segment."""
    deg, off, c = np.asarray(deg), np.asarray(off), np.asarray(c, float)
    C = np.zeros((len(h), max(int(deg.max()), 0) + 1, n))
    records = {}
    ends = np.append(off[1:], len(c))
    for k in range(len(h)):
        d = int(deg[k])
        if d < 0:
            records[k] = c[off[k]:ends[k]]
        else:
            C[k, : d + 1] = c[off[k]: off[k] + (d + 1) * n].reshape(d + 1, n)
    return C, records


def test_dense_output_gathers_every_segment():
    # segments of mixed degree and dense records (degree -1, as llm writes), in an
    # arbitrary order: the gathered coefficients are those of each segment
    rng = np.random.default_rng(3)
    n, deg = 2, [3, 4, -1, 3, 0, 4, -1, 2, 3]
    off, c = [], []
    for d in deg:
        off.append(len(c))
        c.extend(rng.standard_normal(5 if d < 0 else (d + 1) * n))
    t0 = np.arange(len(deg), dtype=float)
    h = np.ones(len(deg))
    sol = mbint.DenseOutput(t0, h, float(len(deg)), deg, off, c, n, method="llm")
    C, records = _dense_by_segment(t0, h, len(deg), deg, off, c, n)
    assert sol.C.tobytes() == C.tobytes()
    assert sorted(sol.records) == sorted(records)
    for k in records:
        assert sol.records[k].tobytes() == records[k].tobytes()


@pytest.mark.parametrize("method", ["dopri5", "radau_iia", "cvode_bdf", "adams", "llm"])
def test_dense_output_of_a_run_matches_its_steps(method):
    res = mbint.solve_ivp(decay, (0, 2), Y0, method=method, dense_output=True, rtol=1e-8,
                          atol=1e-10)
    # at the end of every step the continuous solution is the step's solution
    assert np.allclose(res.sol(res.t), res.y, rtol=1e-10, atol=1e-12)
