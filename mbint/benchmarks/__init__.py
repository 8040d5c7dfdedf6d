"""Measuring integrators: CPU timing on a shared machine and comparisons at matched error.

What the benchmarks of ``make bench`` (``tests/benchmarks/``) and the notebooks share,
installed with the package so that a notebook runs outside the checkout:

- timing (``time.process_time``: CPU seconds; wall time on a shared machine measures the
  neighbours): :func:`best_time`, :func:`cpu_time`, :func:`median_times`,
  :func:`interleaved_best`;
- matched accuracy: :func:`envelope`, :func:`at_error` (the work of a contender at a given
  error, interpolated log-log along its lower work-precision envelope) and
  :func:`matched_ratio` (median time ratio at the reference's errors);
- :func:`c_wrappers`: a problem's C right-hand side and Jacobian as Python callables (what
  SciPy's solvers, which cannot take a C function, are given);
- the benchmark drivers themselves: :mod:`mbint.benchmarks.stiff` (Van der Pol and
  Robertson), :mod:`mbint.benchmarks.nonstiff` (the Arenstorf orbit and a mass-spring-damper)
  and :mod:`mbint.benchmarks.sp` (the SP paper's pendulum with a particle).

Nothing here is imported by ``import mbint``.
"""
from __future__ import annotations

import ctypes
import math
import time

import numpy as np

from .. import problems

__all__ = ["best_time", "cpu_time", "median_times", "interleaved_best", "envelope", "at_error",
           "matched_ratio", "c_wrappers"]


# ---------------------------------------------------------------- timing

def best_time(run, budget=0.4, reps=2):
    """The best CPU time of repeated calls of ``run``.

    Parameters
    ----------
    run : callable
        Called without arguments.
    budget : float
        CPU seconds of repetitions (at most 50 calls); a first call longer than 2 s is
        not repeated.
    reps : int
        Calls at least.

    Returns
    -------
    best : float
        The shortest CPU time of one call [s].
    out : object
        The last call's result.
    """
    t0 = time.process_time()
    out = run()
    best = time.process_time() - t0
    if best > 2.0:        # a long run: once is enough, its noise is relatively small
        return best, out
    n, t_end = 1, time.process_time() + budget
    while n < reps or (time.process_time() < t_end and n < 50):
        t0 = time.process_time()
        out = run()
        best = min(best, time.process_time() - t0)
        n += 1
    return best, out


def cpu_time(run, round_s=0.15):
    """The mean CPU time of one call of ``run`` over at least ``round_s`` seconds.

    Parameters
    ----------
    run : callable
        Called without arguments.
    round_s : float
        CPU seconds to spend, at least one call [s].

    Returns
    -------
    t : float
        CPU seconds per call.
    res : object
        The last call's result.
    """
    t0, k = time.process_time(), 0
    while k == 0 or time.process_time() - t0 < round_s:
        res = run()
        k += 1
    return (time.process_time() - t0) / k, res


def median_times(runs, rounds=5, round_s=0.15):
    """The median CPU time of each contender over interleaved rounds.

    Parameters
    ----------
    runs : dict
        key -> callable.  A key whose first item is ``"C"`` names an external program:
        its callable takes ``round_s`` and returns a result carrying its own ``time``.
    rounds : int
        Rounds; the order of the contenders rotates from round to round.
    round_s : float
        CPU seconds per contender and round (:func:`cpu_time`).

    Returns
    -------
    dict
        key -> (median CPU seconds per run, the last result).
    """
    keys, times, last = list(runs), {k: [] for k in runs}, {}
    for r in range(rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            if k[0] == "C":
                res = runs[k](round_s)
                times[k].append(res.time)
            else:
                t, res = cpu_time(runs[k], round_s)
                times[k].append(t)
            last[k] = res
    return {k: (float(np.median(times[k])), last[k]) for k in keys}


def interleaved_best(runs, rounds=7, round_s=0.03, min_reps=3):
    """Best CPU time of each callable in ``runs``, timed in interleaved rounds.

    Parameters
    ----------
    runs : dict of str -> callable
        The contenders, called without arguments (each once as a warm-up).
    rounds : int
        Rounds; every contender runs in each.
    round_s : float
        A callable taking t seconds runs ``ceil(round_s / t)`` times per round ...
    min_reps : int
        ... but at least this often.

    Returns
    -------
    best : dict of str -> float
        Seconds.
    n_runs : dict of str -> int
        Timed calls of each.
    """
    reps = {}
    for key, run in runs.items():   # warm-up, and the repetitions per round
        run()
        t = time.process_time()
        run()
        reps[key] = max(min_reps, math.ceil(round_s / max(time.process_time() - t, 1e-9)))
    best = {key: math.inf for key in runs}
    for _ in range(rounds):
        for key, run in runs.items():
            for _ in range(reps[key]):
                t = time.process_time()
                run()
                best[key] = min(best[key], time.process_time() - t)
    return best, {key: rounds * reps[key] for key in runs}


# ---------------------------------------------------------------- matched accuracy

def envelope(rows, problem, contender, metric="error"):
    """The lower work-precision envelope of a contender's runs.

    Parameters
    ----------
    rows : list of dict
        Runs with the keys ``problem``, ``contender``, ``ok``, ``time``, ``nfev``,
        ``njev``, ``nlu`` and ``metric``.
    problem, contender : str
        The runs to take.
    metric : str
        The key of the error.

    Returns
    -------
    ndarray, shape (k, 5)
        Rows (error, time, nfev, njev, nlu), error ascending and time descending: the
        runs no more accurate run is cheaper than.
    """
    pts = sorted((r[metric], r["time"], r["nfev"], r["njev"], r["nlu"]) for r in rows
                 if r["problem"] == problem and r["contender"] == contender and r["ok"]
                 and np.isfinite(r[metric]) and r[metric] > 0)
    env = []
    for p in pts:                       # error ascending: keep p if it is cheaper than all
        if not env or p[1] < env[-1][1]:  # more accurate runs kept so far
            env.append(p)
    return np.array(env, float).reshape(-1, 5)


def at_error(rows, problem, contender, target, metric="error"):
    """The work of ``contender`` to reach the error ``target``.

    Parameters
    ----------
    rows : list of dict
        Runs, as for :func:`envelope`.
    problem, contender : str
        The runs to take.
    target : float
        The error to reach (in the unit of ``metric``).
    metric : str
        The key of the error.

    Returns
    -------
    dict or None
        ``dict(time, nfev, njev, nlu, cheapest)`` interpolated log-log along the envelope,
        ``cheapest`` True when the contender's cheapest run is already more accurate than
        the target (its work is then an upper bound); None when no run reaches the target.
    """
    env = envelope(rows, problem, contender, metric)
    if len(env) == 0 or target < env[0, 0] * (1 - 1e-12):
        return None
    if target >= env[-1, 0]:
        e = env[-1]
        return dict(time=e[1], nfev=e[2], njev=e[3], nlu=e[4], cheapest=target > e[0] * 1.0001)
    le = np.log(env[:, 0])
    k = int(np.searchsorted(le, math.log(target)))
    k = min(max(k, 1), len(env) - 1)
    w = (math.log(target) - le[k - 1]) / (le[k] - le[k - 1]) if le[k] > le[k - 1] else 0.0

    def lin(col):
        a, b = env[k - 1, col], env[k, col]
        if a > 0 and b > 0:
            return math.exp((1 - w) * math.log(a) + w * math.log(b))
        return (1 - w) * a + w * b
    return dict(time=lin(1), nfev=lin(2), njev=lin(3), nlu=lin(4), cheapest=False)


def matched_ratio(rows, problem, method, against):
    """The median time ratio of two solvers at equal error.

    Parameters
    ----------
    rows : list of dict
        Runs with the keys ``problem``, ``method``, ``ok``, ``error`` and ``time``.
    problem : str
        The runs to take.
    method : str
        The solver whose time is divided ...
    against : str
        ... by this one's: at each of its points, ``method``'s time at the same error is
        read off ``method``'s curve (log time linear in log error).

    Returns
    -------
    float
        The median ratio over ``against``'s points inside ``method``'s error range; nan
        when there is none.
    """
    def curve(m):
        pts = sorted((r["error"], r["time"]) for r in rows
                     if r["problem"] == problem and r["method"] == m and r["ok"] and r["error"] > 0)
        return np.array(pts)
    a, b = curve(method), curve(against)
    if len(a) < 2 or len(b) < 1:
        return np.nan
    la, lt = np.log(a[:, 0]), np.log(a[:, 1])
    order = np.argsort(la)
    ratios = []
    for e, t in b:
        le = np.log(e)
        if la.min() <= le <= la.max():
            ratios.append(np.exp(np.interp(le, la[order], lt[order])) / t)
    return float(np.median(ratios)) if ratios else np.nan


# ---------------------------------------------------------------- C functions from Python

def _capsule_pointer(llc):
    cap = tuple.__getitem__(llc, 0)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    getname = ctypes.pythonapi.PyCapsule_GetName
    getname.restype = ctypes.c_char_p
    getname.argtypes = [ctypes.py_object]
    return get(cap, getname(cap))


def c_wrappers(cname, n):
    """A problem's C right-hand side and Jacobian as Python callables.

    Parameters
    ----------
    cname : str
        The name of the C problem (``mbint.problems.c_rhs(cname)``, ``c_jac(cname)``).
    n : int
        Its dimension.

    Returns
    -------
    fun, jac : callable
        ``fun(t, y) -> ndarray, shape (n,)`` and ``jac(t, y) -> ndarray, shape (n, n)``,
        each one ctypes call of the compiled function.
    """
    dp = ctypes.POINTER(ctypes.c_double)
    rhs_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, dp, dp, ctypes.c_void_p)
    jac_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, dp, dp, ctypes.c_long, ctypes.c_void_p)
    frhs = rhs_t(_capsule_pointer(problems.c_rhs(cname)))
    fjac = jac_t(_capsule_pointer(problems.c_jac(cname)))

    def fun(t, y):
        y = np.ascontiguousarray(y, dtype=float)
        out = np.empty(n)
        frhs(t, y.ctypes.data_as(dp), out.ctypes.data_as(dp), None)
        return out

    def jac(t, y):
        y = np.ascontiguousarray(y, dtype=float)
        J = np.empty((n, n), order="F")
        fjac(t, y.ctypes.data_as(dp), J.ctypes.data_as(dp), n, None)
        return J

    return fun, jac
