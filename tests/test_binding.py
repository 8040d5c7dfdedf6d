"""The binding (csrc/python/module.c, problem_py.c) through ``mbint.solve_ivp``.

Checks: no memory growth and no reference-count drift over many calls; the
user's exceptions propagate from fun and from event functions; a non-finite
right-hand side ends the run with the trajectory so far; the return value of
fun (wrong size, list, in-place changes) and the arrays handed to it (kept by
the user: distinct, unchanged); C right-hand sides as ctypes functions and
LowLevelCallables (both signatures, user_data), also from two threads at once;
bad arguments raise ValueError naming the argument.  No wall-clock assertions.
"""
import ctypes
import gc
import os
import re
import sys
import threading
import tracemalloc

import numpy as np
import pytest
from scipy import LowLevelCallable

import mbint
from mbint import problems

DP = ctypes.POINTER(ctypes.c_double)
RHS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, DP, DP, ctypes.c_void_p)
RHS_N = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_double, DP, DP, ctypes.c_void_p)


def oscillator(t, y):
    return np.array([y[1], -y[0]])


@RHS
def oscillator_c(t, y, ydot, user_data):
    ydot[0] = y[1]
    ydot[1] = -y[0]
    return 0


@RHS_N
def oscillator_c_n(n, t, y, ydot, user_data):
    if n != 2:
        return -1
    ydot[0] = y[1]
    ydot[1] = -y[0]
    return 0


def rss_bytes():
    """Resident set size of this process (/proc/self/statm, second field)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def crossing(t, y):
    return y[0]


# ---------------------------------------------------------------- memory and references

LEAK_RUNS = 2000
LEAK_LIMIT = 4 * 2**20


def small_solve(fun):
    te = np.linspace(0.0, 4.0, 9)
    res = mbint.solve_ivp(fun, (0.0, 4.0), [1.0, 0.0], t_eval=te, dense_output=True,
                          events=crossing, rtol=1e-4, atol=1e-7)
    assert res.status == 0 and len(res.t_events[0]) == 1
    return res


def rss_growth(run, n=LEAK_RUNS, warmup=200):
    for _ in range(warmup):
        run()
    gc.collect()
    before = rss_bytes()
    for _ in range(n):
        run()
    gc.collect()
    return rss_bytes() - before


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm")
@pytest.mark.parametrize("kind", ["python", "LowLevelCallable"])
def test_repeated_calls_do_not_leak(kind):
    fun = oscillator if kind == "python" else problems.c_rhs("oscillator")
    res = small_solve(fun)
    np.testing.assert_allclose(res.t_events[0], [np.pi / 2], atol=1e-4)
    growth = rss_growth(lambda: small_solve(fun))
    assert growth < LEAK_LIMIT, f"RSS grew by {growth / 2**20:.1f} MB over {LEAK_RUNS} calls"


class Boom(Exception):
    pass


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm")
def test_failing_calls_do_not_leak():
    def fun(t, y):
        if t > 1.0:
            raise Boom("late")
        return np.array([y[1], -y[0]])

    def nan_fun(t, y):
        return np.array([y[1], np.nan if t > 1.0 else -y[0]])

    def run():
        with pytest.raises(Boom):
            mbint.solve_ivp(fun, (0.0, 4.0), [1.0, 0.0], dense_output=True, events=crossing)
        res = mbint.solve_ivp(nan_fun, (0.0, 4.0), [1.0, 0.0], dense_output=True,
                              t_eval=[0.5, 3.0], events=crossing)
        assert res.status == -1

    growth = rss_growth(run, n=LEAK_RUNS // 2)
    assert growth < LEAK_LIMIT, f"RSS grew by {growth / 2**20:.1f} MB"


@pytest.mark.parametrize("kind", ["python", "LowLevelCallable", "failing"])
def test_no_python_object_survives_a_call(kind):
    # tracemalloc sees every Python object and NumPy buffer: one object left behind per
    # call would add > 30 kB over 300 calls
    if kind == "failing":
        def run():
            try:
                mbint.solve_ivp(lambda t, y: (1 / (t < 1.0)) * y, (0.0, 2.0), [1.0, 0.0],
                                dense_output=True, t_eval=[0.5, 1.5], events=crossing)
            except ZeroDivisionError:
                pass
            else:
                raise AssertionError("ZeroDivisionError did not propagate")
            assert mbint.solve_ivp(decay_nan_after_1, (0.0, 2.0), [1.0], dense_output=True,
                                   t_eval=[0.5, 1.5], events=crossing).status == -1
    else:
        fun = oscillator if kind == "python" else problems.c_rhs("oscillator")

        def run():
            small_solve(fun)
    for _ in range(50):
        run()
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            run()
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert growth < 16 * 2**10, f"{growth} bytes left behind by 300 calls"


class Rate:
    """An argument object of its own, so that its reference count is ours alone."""

    def __init__(self, k):
        self.k = k


def test_reference_counts_unchanged():
    def fun(t, y, rate):
        return np.array([y[1], -rate.k * y[0]])

    def event(t, y, rate):
        return y[0]

    def raising(t, y, rate):
        if t > 1.0:
            raise Boom("from fun")
        return fun(t, y, rate)

    rate = Rate(1.0)
    args = (rate,)
    y0 = np.array([1.0, 0.0])
    te = np.linspace(0.0, 4.0, 9)
    llc = problems.c_rhs("oscillator")

    def run():
        res = mbint.solve_ivp(fun, (0.0, 4.0), y0, t_eval=te, dense_output=True, events=event,
                              args=args)
        assert res.status == 0
        res = mbint.solve_ivp(llc, (0.0, 4.0), y0, t_eval=te, dense_output=True, events=crossing)
        assert res.status == 0
        res = mbint.solve_ivp(oscillator_c, (0.0, 4.0), y0, t_eval=te)
        assert res.status == 0
        try:
            mbint.solve_ivp(raising, (0.0, 4.0), y0, t_eval=te, events=event, args=args)
        except Boom:
            pass
        else:
            raise AssertionError("Boom did not propagate")

    objs = {"fun": fun, "event": event, "raising": raising, "rate": rate, "args": args,
            "y0": y0, "t_eval": te, "llc": llc, "capsule": tuple.__getitem__(llc, 0),
            "crossing": crossing, "ctypes fun": oscillator_c}
    run()
    gc.collect()
    before = {name: sys.getrefcount(o) for name, o in objs.items()}
    for _ in range(300):
        run()
    gc.collect()
    after = {name: sys.getrefcount(o) for name, o in objs.items()}
    assert after == before


# ---------------------------------------------------------------- exceptions

def test_exception_in_fun_propagates():
    def fun(t, y):
        if t > 0.5:
            raise Boom("fun failed at t > 0.5")
        return np.array([y[1], -y[0]])

    with pytest.raises(Boom, match=r"^fun failed at t > 0\.5$"):
        mbint.solve_ivp(fun, (0.0, 2.0), [1.0, 0.0])


def test_exception_on_the_first_call_propagates():
    def fun(t, y):
        raise KeyError("first")

    with pytest.raises(KeyError, match="first"):
        mbint.solve_ivp(fun, (0.0, 1.0), [1.0])


def test_base_exception_propagates():
    class Stop(BaseException):
        pass

    def fun(t, y):
        if t > 0.1:
            raise Stop("stop now")
        return -y

    with pytest.raises(Stop, match="stop now"):
        mbint.solve_ivp(fun, (0.0, 1.0), [1.0])


@pytest.mark.parametrize("kind", ["python", "LowLevelCallable"])
def test_exception_in_event_propagates(kind):
    fun = oscillator if kind == "python" else problems.c_rhs("oscillator")

    def event(t, y):
        if t > 1.0:
            raise ZeroDivisionError("event failed after t = 1")
        return y[0]

    with pytest.raises(ZeroDivisionError, match="event failed after t = 1"):
        mbint.solve_ivp(fun, (0.0, 3.0), [1.0, 0.0], events=event, dense_output=True)


def test_event_returning_non_number_raises_type_error():
    def event(t, y):
        return "zero"

    with pytest.raises(TypeError):
        mbint.solve_ivp(oscillator, (0.0, 1.0), [1.0, 0.0], events=event)


def test_solver_works_after_an_exception():
    def fun(t, y):
        raise Boom("once")

    with pytest.raises(Boom):
        mbint.solve_ivp(fun, (0.0, 1.0), [1.0, 0.0])
    res = mbint.solve_ivp(oscillator, (0.0, 1.0), [1.0, 0.0], rtol=1e-8, atol=1e-10)
    assert res.success
    np.testing.assert_allclose(res.y[:, -1], [np.cos(1.0), -np.sin(1.0)], atol=1e-7)


# ---------------------------------------------------------------- non-finite values

def decay_nan_after_1(t, y):
    return np.array([np.nan if t > 1.0 else -y[0]])


@RHS
def decay_nan_after_1_c(t, y, ydot, user_data):
    ydot[0] = float("nan") if t > 1.0 else -y[0]
    return 0


def decay_inf_after_1(t, y):
    return np.array([np.inf if t > 1.0 else -y[0]])


@pytest.mark.parametrize("fun", [decay_nan_after_1, decay_nan_after_1_c, decay_inf_after_1],
                         ids=["nan", "nan-ctypes", "inf"])
def test_non_finite_rhs_stops_with_trajectory_so_far(fun):
    res = mbint.solve_ivp(fun, (0.0, 3.0), [1.0], rtol=1e-8, atol=1e-10, max_step=0.1)
    assert res.status == -1
    assert res.success is False
    assert "non-finite" in res.message
    assert res.t[0] == 0.0
    # every stage of an accepted step lies at t <= 1; the failed step is at most 0.1 long
    assert 0.9 < res.t[-1] <= 1.0
    assert np.all(np.diff(res.t) > 0)
    assert res.y.shape == (1, len(res.t))
    np.testing.assert_allclose(res.y[0], np.exp(-res.t), rtol=1e-6)


def test_non_finite_rhs_with_t_eval_keeps_points_before_the_failure():
    te = np.linspace(0.0, 3.0, 31)
    res = mbint.solve_ivp(decay_nan_after_1, (0.0, 3.0), [1.0], t_eval=te, rtol=1e-8,
                          atol=1e-10)
    assert res.status == -1
    assert len(res.t) > 1 and res.t[-1] <= 1.0
    np.testing.assert_array_equal(res.t, te[: len(res.t)])
    np.testing.assert_allclose(res.y[0], np.exp(-res.t), rtol=1e-6)


def test_c_fun_negative_return_stops_the_run():
    @RHS
    def fun(t, y, ydot, user_data):
        ydot[0] = -y[0]
        return -1 if t > 1.0 else 0

    res = mbint.solve_ivp(fun, (0.0, 3.0), [1.0], max_step=0.1)
    assert res.status == -1 and not res.success
    assert 0.9 < res.t[-1] <= 1.0


def test_c_fun_positive_return_retries_with_a_smaller_step():
    refusals = [0]

    @RHS
    def fun(t, y, ydot, user_data):
        ydot[0] = -y[0]
        if t > 1.0 and refusals[0] < 3:
            refusals[0] += 1
            return 1
        return 0

    res = mbint.solve_ivp(fun, (0.0, 3.0), [1.0], rtol=1e-8, atol=1e-10)
    assert refusals[0] == 3
    assert res.status == 0, res.message
    np.testing.assert_allclose(res.y[0, -1], np.exp(-3.0), rtol=1e-6)


# ---------------------------------------------------------------- what fun returns and receives

def test_wrong_size_raises_value_error():
    def fun(t, y):
        return np.array([y[1], -y[0], 0.0])

    with pytest.raises(ValueError, match=r"size 3.*size 2"):
        mbint.solve_ivp(fun, (0.0, 1.0), [1.0, 0.0])


def test_wrong_size_list_raises_value_error():
    with pytest.raises(ValueError, match="size 1"):
        mbint.solve_ivp(lambda t, y: [0.0], (0.0, 1.0), [1.0, 0.0])


@pytest.mark.parametrize("convert", [list, tuple, lambda a: np.asfortranarray(a.reshape(2, 1)),
                                     lambda a: np.repeat(a, 2)[::2], lambda a: a.tolist()[::-1][::-1]],
                         ids=["list", "tuple", "2-D Fortran", "strided", "list of floats"])
def test_fun_may_return_any_array_like(convert):
    ref = mbint.solve_ivp(oscillator, (0.0, 3.0), [1.0, 0.0], rtol=1e-8, atol=1e-10)
    res = mbint.solve_ivp(lambda t, y: convert(oscillator(t, y)), (0.0, 3.0), [1.0, 0.0],
                          rtol=1e-8, atol=1e-10)
    assert res.success and res.nfev == ref.nfev
    np.testing.assert_array_equal(res.y, ref.y)


def test_fun_may_return_float32():
    res = mbint.solve_ivp(lambda t, y: oscillator(t, y).astype(np.float32), (0.0, 3.0),
                          [1.0, 0.0], rtol=1e-8, atol=1e-10)
    assert res.success
    np.testing.assert_allclose(res.y[:, -1], [np.cos(3.0), -np.sin(3.0)], atol=1e-5)


def test_fun_returning_a_list_gives_the_same_run():
    ref = mbint.solve_ivp(oscillator, (0.0, 3.0), [1.0, 0.0], rtol=1e-8, atol=1e-10)
    res = mbint.solve_ivp(lambda t, y: [y[1], -y[0]], (0.0, 3.0), [1.0, 0.0], rtol=1e-8,
                          atol=1e-10)
    np.testing.assert_array_equal(res.t, ref.t)
    np.testing.assert_array_equal(res.y, ref.y)


@pytest.mark.parametrize("keep", ["every call", "every other call", "a view"])
def test_kept_y_arrays_are_distinct_and_unchanged(keep):
    kept = []
    calls = [0]

    def fun(t, y):
        calls[0] += 1
        if keep == "every call" or (keep == "every other call" and calls[0] % 2):
            kept.append((y, y.copy()))
        elif keep == "a view":
            kept.append((y[:], y.copy()))
        return np.array([y[1], -y[0]])

    ref = mbint.solve_ivp(oscillator, (0.0, 3.0), [1.0, 0.0], rtol=1e-6, atol=1e-9)
    res = mbint.solve_ivp(fun, (0.0, 3.0), [1.0, 0.0], rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(res.y, ref.y)
    assert len(kept) >= res.nfev // 2 > 10
    base = [a if a.base is None else a.base for a, _ in kept]
    assert len({id(b) for b in base}) == len(kept)
    for a, copy in kept:
        np.testing.assert_array_equal(a, copy)
    np.testing.assert_array_equal(kept[0][0], [1.0, 0.0])
    # values a fun sees lie on the circle |y| = 1 (to the tolerance), not stale or zero
    radii = np.array([np.hypot(*a) for a, _ in kept])
    np.testing.assert_allclose(radii, 1.0, atol=1e-3)


def test_fun_changing_y_in_place_does_not_change_the_run():
    def fun(t, y):
        f = np.array([y[1], -y[0]])
        y[:] = 1e9
        return f

    ref = mbint.solve_ivp(oscillator, (0.0, 3.0), [1.0, 0.0], rtol=1e-6, atol=1e-9)
    res = mbint.solve_ivp(fun, (0.0, 3.0), [1.0, 0.0], rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(res.y, ref.y)


def test_fun_and_events_get_a_float_and_a_float64_vector():
    seen = []

    def fun(t, y):
        seen.append(("fun", type(t), y.dtype, y.shape, y.flags.c_contiguous))
        return -y

    def event(t, y):
        seen.append(("event", type(t), y.dtype, y.shape, y.flags.c_contiguous))
        return y[0] - 0.5

    mbint.solve_ivp(fun, (0.0, 1.0), [1, 2, 3], events=event)
    assert set(seen) == {(who, float, np.dtype(float), (3,), True) for who in ("fun", "event")}


def test_nested_solves_inside_fun():
    # no hidden global state: fun runs two other solves (Python and C) on every call
    def fun(t, y):
        a = mbint.solve_ivp(lambda s, x: -x, (0.0, 0.1), [1.0]).y[0, -1]
        b = mbint.solve_ivp(problems.c_rhs("exp_decay"), (0.0, 0.1), [1.0]).y[0, -1]
        return -y * (a / b)

    res = mbint.solve_ivp(fun, (0.0, 1.0), [1.0], rtol=1e-8, atol=1e-10)
    assert res.success
    np.testing.assert_allclose(res.y[0, -1], np.exp(-1.0), rtol=1e-6)


def test_args_reach_fun_and_events():
    got = []

    def fun(t, y, a, b):
        got.append(("fun", a, b))
        return np.array([y[1], -a * y[0]])

    def event(t, y, a, b):
        got.append(("event", a, b))
        return y[0]

    res = mbint.solve_ivp(fun, (0.0, 3.0), [1.0, 0.0], events=event, args=(4.0, "x"),
                          rtol=1e-9, atol=1e-12)
    assert {g for g in got} == {("fun", 4.0, "x"), ("event", 4.0, "x")}
    np.testing.assert_allclose(res.t_events[0], [np.pi / 4, 3 * np.pi / 4], atol=1e-8)


def test_many_args_reach_fun():
    def fun(t, y, *rest):
        assert rest == tuple(range(20))
        return -y

    res = mbint.solve_ivp(fun, (0.0, 1.0), [1.0], args=tuple(range(20)), rtol=1e-8)
    np.testing.assert_allclose(res.y[0, -1], np.exp(-1.0), rtol=1e-6)


# ---------------------------------------------------------------- C right-hand sides

def test_scipy_signature_of_the_ctypes_function_is_accepted():
    assert LowLevelCallable(oscillator_c).signature == "int (double, double *, double *, void *)"
    assert LowLevelCallable(oscillator_c_n).signature == \
        "int (int, double, double *, double *, void *)"


@pytest.mark.parametrize("make", [lambda: oscillator_c, lambda: LowLevelCallable(oscillator_c),
                                  lambda: oscillator_c_n,
                                  lambda: LowLevelCallable(oscillator_c_n),
                                  lambda: problems.c_rhs("oscillator")],
                         ids=["ctypes", "llc(ctypes)", "ctypes-n", "llc(ctypes-n)", "built-in"])
def test_c_functions_agree_with_python_fun(make):
    kw = dict(rtol=1e-8, atol=1e-10, t_eval=np.linspace(0.0, 5.0, 11), dense_output=True)
    ref = mbint.solve_ivp(oscillator, (0.0, 5.0), [1.0, 0.0], **kw)
    res = mbint.solve_ivp(make(), (0.0, 5.0), [1.0, 0.0], **kw)
    assert res.success and res.nfev == ref.nfev
    np.testing.assert_allclose(res.y, ref.y, rtol=0, atol=1e-14)
    np.testing.assert_allclose(res.sol(2.5), ref.sol(2.5), rtol=0, atol=1e-14)


def test_c_arenstorf_agrees_with_python_arenstorf():
    kw = dict(rtol=1e-9, atol=1e-12)
    span = (0.0, problems.ARENSTORF_T)
    ref = mbint.solve_ivp(problems.arenstorf, span, problems.ARENSTORF_Y0, **kw)
    res = mbint.solve_ivp(problems.c_rhs("arenstorf"), span, problems.ARENSTORF_Y0, **kw)
    assert res.nfev == ref.nfev
    np.testing.assert_allclose(res.y[:, -1], ref.y[:, -1], atol=1e-8)


def test_low_level_callable_with_user_data():
    # user_data points at w; the same ctypes function gives different problems
    @RHS
    def fun(t, y, ydot, user_data):
        w = ctypes.cast(user_data, DP)[0]
        ydot[0] = y[1]
        ydot[1] = -w * w * y[0]
        return 0

    for w_value in (1.0, 3.0):
        w = ctypes.c_double(w_value)
        llc = LowLevelCallable(fun, ctypes.cast(ctypes.pointer(w), ctypes.c_void_p))
        res = mbint.solve_ivp(llc, (0.0, 2.0), [1.0, 0.0], rtol=1e-10, atol=1e-12)
        assert res.success
        np.testing.assert_allclose(res.y[0, -1], np.cos(2.0 * w_value), atol=1e-8)


def test_args_with_a_c_function_raise_value_error():
    with pytest.raises(ValueError, match="args"):
        mbint.solve_ivp(problems.c_rhs("oscillator"), (0.0, 1.0), [1.0, 0.0], args=(1.0,))


def test_unsupported_low_level_signature_raises_value_error():
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(lambda x: x)
    with pytest.raises(ValueError, match=re.escape("signature 'double (double)'")):
        mbint.solve_ivp(LowLevelCallable(f), (0.0, 1.0), [1.0])


@pytest.mark.parametrize("fun", [problems.c_rhs("arenstorf"), oscillator_c, problems.arenstorf],
                         ids=["built-in C", "ctypes", "python"])
def test_two_threads_at_once(fun):
    # the GIL is released around the driver for C functions (a ctypes callback takes it
    # back for each call); a Python fun keeps it, and the two runs take turns
    if fun is oscillator_c:
        y0, tf = np.array([1.0, 0.0]), 2 * np.pi
    else:
        y0, tf = problems.ARENSTORF_Y0, problems.ARENSTORF_T
    kw = dict(rtol=1e-10, atol=1e-12)
    ref = mbint.solve_ivp(fun, (0.0, tf), y0, **kw)
    out, errors = [None, None], []

    def work(i):
        try:
            for _ in range(3):
                out[i] = mbint.solve_ivp(fun, (0.0, tf), y0, **kw)
        except BaseException as exc:  # re-raised in the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not any(th.is_alive() for th in threads)
    assert not errors, errors
    for res in out:
        assert res.success
        np.testing.assert_array_equal(res.y, ref.y)
        # both problems are periodic with period tf
        np.testing.assert_allclose(res.y[:, -1], y0, atol=1e-5)


# ---------------------------------------------------------------- bad arguments

BASE = dict(fun=oscillator, t_span=(0.0, 1.0), y0=[1.0, 0.0])


@pytest.mark.parametrize("name, change", [
    ("y0", dict(y0=np.ones((2, 1)))),
    ("y0", dict(y0=[np.nan, 0.0])),
    ("y0", dict(y0=[np.inf, 0.0])),
    ("rtol", dict(rtol=0.0)),
    ("rtol", dict(rtol=-1e-6)),
    ("method", dict(method="no_such_method")),
    ("t_span", dict(t_span=(0.0, 1.0, 2.0))),
    ("atol", dict(atol=[1e-6, 1e-6, 1e-6])),
    ("atol", dict(atol=np.full((2, 2), 1e-6))),
    ("t_eval", dict(t_eval=[0.0, 0.5, 2.0])),
    ("t_eval", dict(t_eval=[-0.5, 0.5])),
    ("h", dict(h=0.0)),
    ("h", dict(h=-0.1)),
    ("fun", dict(fun=3.0)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_input_raises_value_error_naming_the_argument(name, change):
    kw = {**BASE, **change}
    fun, t_span, y0 = kw.pop("fun"), kw.pop("t_span"), kw.pop("y0")
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        mbint.solve_ivp(fun, t_span, y0, **kw)
