"""``mbint.solve_dae``: implicit differential-algebraic equations F(t, y, y') = 0 with
SUNDIALS IDA (variable-order BDF, orders 1-5, dense direct linear solver).

The same result as :func:`mbint.solve_ivp` (``t, y, sol, t_events, y_events, nfev,
njev, nlu, status, message, nsteps, nreject, nfail, t_steps, h_steps, err_steps``)
plus ``yp``, the derivative y' at the output points, taken from IDA's interpolating
polynomial of the step that ends at (or contains) each point.

For an ODE or a mass-matrix problem ``M y' = f(t, y)`` use
``solve_ivp(..., method="ida", mass=M)``; ``solve_dae`` takes the fully implicit
form.

References
----------
.. [1] A. C. Hindmarsh et al., "SUNDIALS: Suite of nonlinear and
       differential/algebraic equation solvers", ACM TOMS 31 (2005) 363-396.
.. [2] P. N. Brown, A. C. Hindmarsh, L. R. Petzold, "Consistent initial condition
       calculation for differential-algebraic systems", SIAM J. Sci. Comput. 19
       (1998) 1495-1512 (IDACalcIC).
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _core
from .dense import DenseOutput
from .ivp import _as_capsule, _check_events, _make_result


def _float_vector(name, v, n=None):
    a = np.asarray(v)
    if np.iscomplexobj(a):
        raise ValueError(f"{name}: complex values are not supported.")
    try:
        a = np.array(a, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers.") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {a.shape}.")
    if n is None and a.size == 0:
        raise ValueError(f"{name} must not be empty.")
    if n is not None and a.size != n:
        raise ValueError(f"{name} must have the size of y0 ({n}), got {a.size}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no NaN or Inf).")
    return a


def _positive(name, v, allow_inf=False):
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive float.") from None
    if not v > 0 or (not allow_inf and not np.isfinite(v)):
        raise ValueError(f"{name} must be positive{'' if allow_inf else ' and finite'}, got {v}.")
    return v


def _derivative(sol, t):
    """dy/dt of the dense output at times t (shape (m,)), each from the step that
    ends at or contains t; returns shape (n, m)."""
    ends = sol.t_min_step + sol.h
    key, tk = (ends, t) if sol.ascending else (-ends, -t)
    k = np.clip(np.searchsorted(key, tk, side="left"), 0, sol.n_segments - 1)
    theta = (t - sol.t_min_step[k]) / sol.h[k]
    C = sol.C[k]                      # (m, deg + 1, n)
    dy = np.zeros((len(t), sol.n))
    for j in range(C.shape[1] - 1, 0, -1):
        dy = dy * theta[:, None] + j * C[:, j, :]
    return (dy / sol.h[k][:, None]).T


def solve_dae(residual, t_span, y0, yp0=None, algebraic_vars=None, t_eval=None,
              dense_output=False, events=None, args=None, *, rtol=1e-3, atol=1e-6,
              jac=None, calc_ic=True, first_step=None, max_step=np.inf, min_step=0.0,
              max_steps=None):
    """Solve the implicit DAE ``residual(t, y, y') = 0`` with SUNDIALS IDA.

    Parameters
    ----------
    residual : callable or scipy.LowLevelCallable
        ``residual(t, y, yp, *args) -> array_like, shape (n,)``.  A
        LowLevelCallable (or ctypes function) with C signature
        ``int F(double t, const double *y, const double *yp, double *r,
        void *user_data)`` runs with no Python per step and the GIL released
        (unless ``jac`` or ``events`` are Python); it returns 0 on success, > 0
        to ask for a smaller step, < 0 to stop.
    t_span : 2-sequence of float
        ``(t0, tf)``; tf < t0 integrates backwards.
    y0 : array_like, shape (n,)
        Initial state.  With ``calc_ic`` its algebraic components are corrected.
    yp0 : array_like, shape (n,), optional
        Initial derivative (zeros if None).  With ``calc_ic`` its differential
        components are corrected.
    algebraic_vars : array_like of bool, shape (n,), optional
        True for components whose derivative does not appear in F (algebraic
        variables).  Default: none.
    t_eval : array_like, optional
        Output times (from IDA's interpolant); otherwise every step is stored.
    dense_output : bool
        Return ``sol``, the continuous solution (IDA's polynomial of each step).
    events : callable or list of callables
        ``g(t, y, *args)`` with SciPy's ``terminal`` and ``direction``
        attributes; roots are located by IDA's root finding.
    args : tuple, optional
        Extra arguments to ``residual``, ``jac`` and the events.
    rtol, atol : float, array_like
        Tolerances of IDA's weighted RMS error test.
    jac : callable, optional
        ``jac(t, y, yp, cj, *args) -> (n, n)``, the iteration matrix
        ``dF/dy + cj dF/dy'``.  Default: IDA's difference quotients.
    calc_ic : bool
        Make the initial values consistent with IDACalcIC (IDA_YA_YDP_INIT):
        solve F(t0, y0, yp0) = 0 for the algebraic components of y0 and the
        differential components of yp0 [2]_.
    first_step, max_step, min_step : float
        Step-size bounds for IDA.
    max_steps : int, optional
        Stop with ``status = -1`` after this many step attempts (default 10**6).

    Returns
    -------
    OdeResult
        As :func:`mbint.solve_ivp`, plus ``yp`` (ndarray, shape (n, n_points)):
        y' at the output points (``yp[:, 0]`` is the consistent y'(t0) when t0
        is an output point), and ``yp0``, the y'(t0) used.

    Examples
    --------
    Robertson's kinetics with the conservation law as algebraic equation:

    >>> def F(t, y, yp):
    ...     return [yp[0] + 0.04 * y[0] - 1e4 * y[1] * y[2],
    ...             yp[1] - 0.04 * y[0] + 1e4 * y[1] * y[2] + 3e7 * y[1] ** 2,
    ...             y[0] + y[1] + y[2] - 1.0]
    >>> r = solve_dae(F, (0, 40), [1, 0, 0], [0, 0, 0], algebraic_vars=[0, 0, 1],
    ...               rtol=1e-6, atol=[1e-8, 1e-12, 1e-8])
    """
    # ---- residual ----
    if args is not None:
        if not isinstance(args, tuple):
            args = (args,)
    else:
        args = ()
    capsule = _as_capsule(residual)
    if capsule is not None:
        if args:
            raise ValueError("args: extra arguments go to Python callables only; pass user_data "
                             "to the LowLevelCallable instead.")
        rfun = capsule
    elif callable(residual):
        rfun = residual
    else:
        raise ValueError("residual must be callable residual(t, y, yp) or a "
                         "scipy.LowLevelCallable.")

    # ---- t_span, y0, yp0, algebraic_vars ----
    try:
        t_span = tuple(float(v) for v in t_span)
    except (TypeError, ValueError):
        raise ValueError("t_span must be a sequence of two floats (t0, tf).") from None
    if len(t_span) != 2:
        raise ValueError(f"t_span must have length 2, got {len(t_span)}.")
    t0, tf = t_span
    if not (np.isfinite(t0) and np.isfinite(tf)):
        raise ValueError("t_span must be finite.")
    y0a = _float_vector("y0", y0)
    n = y0a.size
    yp0a = np.zeros(n) if yp0 is None else _float_vector("yp0", yp0, n)
    alg = None
    if algebraic_vars is not None:
        av = np.asarray(algebraic_vars)
        if av.shape != (n,):
            raise ValueError(f"algebraic_vars must have shape ({n},), got {av.shape}.")
        if av.dtype != bool and not np.all(np.isin(av, (0, 1))):
            raise ValueError("algebraic_vars must hold booleans (True = algebraic).")
        alg = np.ascontiguousarray(av.astype(np.uint8))
    if not isinstance(calc_ic, (bool, np.bool_)):
        raise ValueError("calc_ic must be a bool.")

    # ---- tolerances and steps ----
    try:
        rtol = float(rtol)
    except (TypeError, ValueError):
        raise ValueError("rtol must be a positive float.") from None
    if not (rtol > 0) or not np.isfinite(rtol):
        raise ValueError(f"rtol must be positive and finite, got {rtol}.")
    try:
        atol_a = np.asarray(atol, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("atol must be a non-negative float or array.") from None
    if atol_a.ndim == 0:
        atol_a = np.full(n, float(atol_a))
    if atol_a.shape != (n,):
        raise ValueError(f"atol must be a scalar or have shape ({n},), got shape {atol_a.shape}.")
    if np.any(atol_a < 0) or not np.all(np.isfinite(atol_a)):
        raise ValueError("atol must be non-negative and finite.")
    fs = 0.0 if first_step is None else _positive("first_step", first_step)
    ms = _positive("max_step", max_step, allow_inf=True)
    try:
        min_step = float(min_step)
    except (TypeError, ValueError):
        raise ValueError("min_step must be a non-negative float.") from None
    if not min_step >= 0:
        raise ValueError("min_step must be non-negative.")
    if max_steps is not None and (not isinstance(max_steps, numbers.Integral) or max_steps <= 0):
        raise ValueError("max_steps must be a positive integer.")
    if jac is not None and not callable(jac):
        raise ValueError("jac must be callable jac(t, y, yp, cj) -> (n, n).")

    # ---- t_eval ----
    te = None
    if t_eval is not None:
        te = np.asarray(t_eval, dtype=float)
        if te.ndim != 1:
            raise ValueError("t_eval must be 1-dimensional.")
        lo, hi = min(t0, tf), max(t0, tf)
        if np.any(te < lo) or np.any(te > hi):
            raise ValueError("t_eval values must lie within t_span.")
        d = np.diff(te)
        if (tf >= t0 and np.any(d <= 0)) or (tf < t0 and np.any(d >= 0)):
            raise ValueError("t_eval must be strictly increasing (decreasing for tf < t0).")
        te = np.ascontiguousarray(te)

    ev, terminal, evdir = _check_events(events)

    # dense records are always kept: yp at the output points comes from them
    out = _core.solve_dae(
        rfun, t0, tf, y0a, yp0a, atol_a, rtol, first_step=fs,
        max_step=ms if np.isfinite(ms) else 0.0, min_step=min_step,
        max_steps=0 if max_steps is None else int(max_steps), t_eval=te, dense_output=True,
        events=ev, terminal=terminal, direction=evdir, args=args, algebraic=alg,
        calc_ic=bool(calc_ic), jac=jac)
    res = _make_result(out, "ida", n, True, ev is not None)
    t = np.asarray(res.t, float)
    yp = np.empty((n, len(t)))
    if len(t):
        at0 = t == t0
        yp[:, at0] = out["yp0"][:, None]
        if res.sol is not None and np.any(~at0):
            yp[:, ~at0] = _derivative(res.sol, t[~at0])
    res.yp = yp
    res.yp0 = out["yp0"]
    if not dense_output:
        res.sol = None
    return res


__all__ = ["solve_dae"]
