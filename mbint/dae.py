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

from typing import Any, Sequence

import numpy as np

from . import _core
from . import _validate as check
from ._interrupt import raise_if_interrupted
from .progress import run_cancel, run_progress
from .ivp import OdeResult, _make_result
from ._typing import ArrayLike, Events, FloatArray, Progress, RhsFun, TSpan
from .dense import DenseOutput


def _derivative(sol: DenseOutput, t: Any) -> FloatArray:
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


def solve_dae(residual: RhsFun, t_span: TSpan, y0: ArrayLike, yp0: ArrayLike | None = None,
              algebraic_vars: ArrayLike | None = None, t_eval: ArrayLike | None = None,
              dense_output: bool = False, events: Events = None, args: Sequence[Any] | None = None,
              *, rtol: float = 1e-3, atol: ArrayLike = 1e-6, jac: RhsFun | None = None,
              calc_ic: bool = True, first_step: float | None = None, max_step: float = np.inf,
              min_step: float = 0.0, max_steps: int | None = None,
              progress: Progress = False) -> OdeResult:
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
        differential components of yp0 (Brown, Hindmarsh and Petzold
        1998: IDACalcIC; see the module's references).
    first_step, max_step, min_step : float
        Step-size bounds for IDA.
    max_steps : int, optional
        Stop with ``status = -1`` after this many step attempts (default 10**6).
    progress : bool or callable
        As in :func:`mbint.solve_ivp` (a bar for runs longer than a second, or
        ``progress(t)`` at most every 0.1 s of wall time).

    Returns
    -------
    OdeResult
        As :func:`mbint.solve_ivp`, plus ``yp`` (ndarray, shape (n, n_points)):
        y' at the output points (``yp[:, 0]`` is the consistent y'(t0) when t0
        is an output point), and ``yp0``, the y'(t0) used.  A callback that raises
        stops the run: its exception propagates with this result as ``exc.result``.

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
    args = check.args_tuple(args)
    rfun = check.callable_or_capsule(residual, args, "residual must be callable residual(t, y, "
                                     "yp) or a scipy.LowLevelCallable.")
    t0, tf = check.t_span(t_span)
    y0a = check.float_vector("y0", y0)
    n = y0a.size
    yp0a = np.zeros(n) if yp0 is None else check.float_vector("yp0", yp0, n)
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
    rtol = check.positive("rtol", rtol)
    atol_a = check.atol_vector(atol, n)
    check.relative_control_weights(atol_a, y0a)
    bounds = check.step_bounds(first_step, max_step, min_step, max_steps)
    if jac is not None and not callable(jac):
        raise ValueError("jac must be callable jac(t, y, yp, cj) -> (n, n).")
    te = check.t_eval(t_eval, t0, tf)
    ev, terminal, evdir = check.check_events(events)

    # dense records are always kept: yp at the output points comes from them
    report, close = run_progress(progress, t0, tf, "solve_dae ida")
    try:
        out = _core.solve_dae(
            rfun, t0, tf, y0a, yp0a, atol_a, rtol, **bounds, t_eval=te, dense_output=True,
            events=ev, terminal=terminal, direction=evdir, args=args, algebraic=alg,
            calc_ic=bool(calc_ic), jac=jac, progress=report, cancel=run_cancel())
    finally:
        close()
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
    raise_if_interrupted(out, res)
    return res


__all__ = ["solve_dae"]
