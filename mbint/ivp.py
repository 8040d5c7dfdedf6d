"""``mbint.solve_ivp``: SciPy's signature over mbint's C driver."""
from __future__ import annotations

import numpy as np

from . import _core, _status
from . import _validate as check
from .dense import DenseOutput
from .methods import method_info, resolve
from .methods import methods as mbint_methods

try:  # scipy is a dependency, but keep import errors readable
    from scipy.optimize import OptimizeResult
except ImportError as exc:  # pragma: no cover
    raise ImportError("mbint needs SciPy") from exc


class OdeResult(OptimizeResult):
    """Result of :func:`solve_ivp`, with SciPy's fields and a few more.

    Attributes
    ----------
    t : ndarray, shape (n_points,)
    y : ndarray, shape (n, n_points)
    sol : DenseOutput or None
    t_events, y_events : list of ndarray or None
    nfev, njev, nlu : int
    status : int
        -1 integration step failed, 0 reached the end, 1 a termination event.
    message : str
    success : bool
    nsteps, nreject, nfail : int
        Accepted steps, steps rejected by the error test, failed step attempts.
    nrestart : int
        Restarts at switching events.
    nswitch : int
        Switches between the non-stiff and the stiff sub-method of ``method="auto"``
        (0 for every other method).
    t_steps, h_steps, err_steps : ndarray
        End time, size and normalized error estimate of every accepted step.
    method : str
    """


_STATUS_PUBLIC = {_status.MB_OK: 0, _status.MB_TERMINATED: 1}


def solve_ivp(fun, t_span, y0, method="dopri5", t_eval=None, dense_output=False,
              events=None, vectorized=False, args=None, *, rtol=1e-3, atol=1e-6,
              first_step=None, max_step=np.inf, min_step=0.0, max_steps=None, h=None,
              jac=None, jac_sparsity=None, mass=None, dfdt=None, autonomous=False,
              controller="pi",
              error_per_unit_step=False, safety=None, fac_min=None, fac_max=None, nq=None):
    """Solve an initial value problem ``y' = fun(t, y)`` with a method of mbint.

    Arguments and result mirror :func:`scipy.integrate.solve_ivp`, so a script
    comparing against SciPy changes one word.

    Parameters
    ----------
    fun : callable or scipy.LowLevelCallable
        ``fun(t, y, *args) -> array_like, shape (n,)``.  A LowLevelCallable (or
        a ctypes function) with C signature
        ``int f(double t, const double *y, double *ydot, void *user_data)`` or
        ``int f(int n, double t, const double *y, double *ydot, void *user_data)``
        runs with no Python per step and the GIL released; it returns 0 on
        success, > 0 to ask for a smaller step, < 0 to stop.
    t_span : 2-sequence of float
        ``(t0, tf)``; tf < t0 integrates backwards.
    y0 : array_like, shape (n,)
    method : str
        One of :func:`mbint.methods` (``"dopri5"`` default; aliases ``"RK45"``,
        ``"RK23"``, ``"ode45"``, ``"ode23"``, ``"ode113"``).  The SUNDIALS
        methods (``backend == "sundials"``: ``cvode_bdf``, ``cvode_adams``,
        ``ida``, ``arkode_erk``, ``arkode_dirk``) run their own step-size control:
        ``controller``, ``error_per_unit_step``, ``safety``, ``fac_min`` and
        ``fac_max`` do not apply to them (ValueError), ``jac_sparsity`` is not
        used, and ``max_steps`` defaults to 10**6.
    t_eval : array_like or None
        Times at which to store the solution (from the dense output); otherwise
        every accepted step is stored.
    dense_output : bool
        Return ``sol``, the continuous solution.
    events : callable or list of callables
        ``g(t, y, *args)``; attributes ``terminal`` (bool, or the number of
        occurrences after which to stop) and ``direction`` as in SciPy.  Roots
        are located on the dense output by Brent's method.  An event with the
        attribute ``switching = True`` marks a change of the dynamics (a contact
        closing or opening, where ``fun`` switches branches; LLM paper section
        3): no step straddles its roots.  A step in which it changes sign is
        retried to end just before the root t* (located on the dense output;
        for ``llm`` the continuous solution of eq 18), a short step crosses t*
        and is cut there, the root is reported in ``t_events`` like any other,
        and the integration restarts from t* with the method re-initialized (a
        new Jacobian, no multistep history).  The retries count in ``nreject``,
        the restarts in ``nrestart``; a fixed step ``h`` keeps its grid.  Not
        available with the SUNDIALS methods.
    vectorized : bool
        Accepted for SciPy compatibility; mbint calls ``fun`` with 1-D ``y``.
    args : tuple, optional
        Extra arguments to ``fun``, events (and ``jac``).
    rtol, atol : float, array_like
        Tolerances of the weighted RMS error norm
        ``sc_i = atol_i + rtol * max(|y_i|, |y_new_i|)``.
    first_step, max_step, min_step : float
        Step-size bounds; ``first_step=None`` picks the initial step
        automatically (Hairer-Norsett-Wanner).
    max_steps : int, optional
        Stop with ``status = -1`` after this many step attempts.
    h : float, optional
        Fixed step size: no error control (every method except ``adams``).
        Methods without an embedded estimate (euler, heun, rk4,
        nystrom_midpoint) are adaptive by step doubling when ``h`` is None.
    jac : callable, array_like or scipy.LowLevelCallable, optional
        Jacobian df/dy, ``jac(t, y, *args) -> (n, n)``, a constant (n, n)
        matrix, or a C function ``int jac(double t, const double *y, double *J,
        void *user_data)`` writing J column-major (``J[j*n + i] = df_i/dy_j``).
        Used by methods that need a Jacobian; without it they use finite
        differences.  Methods that need none ignore it.
    jac_sparsity : array_like, shape (n, n), optional
        Nonzero pattern of df/dy: finite differences then perturb structurally
        independent columns together.
    dfdt : callable, optional
        ``dfdt(t, y, *args) -> (n,)``, the partial derivative df/dt, for methods
        that use it (Rosenbrock, ``llm``); otherwise a forward difference.
    autonomous : bool
        f does not depend on t explicitly: df/dt = 0 without evaluating f.
    mass : array_like, shape (n, n), optional
        Constant (possibly singular) mass matrix M of ``M y' = f(t, y)``, for the
        methods whose ``mass_matrix`` property is true.
    controller : {"pi", "i"}
        PI controller (Gustafsson; LLM paper eq 40) or elementary (eq 38).
    error_per_unit_step : bool
        Control the error per unit step (EPUS, LLM eq 39) instead of per step.
    safety, fac_min, fac_max : float, optional
        Controller safety factor and bounds of h_new / h (RN paper eq 16).
    nq : int, optional
        For second-order methods: number of coordinates q in y = (q, q')
        (default n // 2).

    Returns
    -------
    OdeResult
    """
    mname = resolve(method)
    info = method_info(mname)

    t0, tf = check.t_span(t_span)
    y0a = check.float_vector("y0", y0)
    n = y0a.size
    rtol = check.positive("rtol", rtol)
    atol_a = check.atol_vector(atol, n)
    if info.backend == "sundials":
        for name, value, default in (("controller", controller, "pi"),
                                     ("error_per_unit_step", error_per_unit_step, False),
                                     ("safety", safety, None), ("fac_min", fac_min, None),
                                     ("fac_max", fac_max, None)):
            if value != default:
                raise ValueError(f"{name}: method {mname!r} (SUNDIALS) uses its own step-size "
                                 f"control; {name} does not apply to it.")
    control = check.step_control(info, mname, h, controller, error_per_unit_step, safety,
                                 fac_min, fac_max)
    bounds = check.step_bounds(first_step, max_step, min_step, max_steps)
    te = check.t_eval(t_eval, t0, tf)
    args = check.args_tuple(args)
    cfun = check.callable_or_capsule(fun, args, "fun must be callable or a scipy.LowLevelCallable.")
    ev, terminal, evdir = check.check_events(events)
    switching = check.switching_flags(ev, info, mname)

    jac_arg = None
    if jac is not None and info.needs_jacobian:
        cap = check.as_capsule(jac)
        if cap is not None:
            jac_arg = cap
        elif callable(jac):
            jac_arg = jac
        else:
            jac_arg = np.asarray(jac, dtype=float)
            if jac_arg.shape != (n, n) or not np.all(np.isfinite(jac_arg)):
                raise ValueError(f"jac must be callable or a finite array of shape ({n}, {n}).")
    mass_arg = None
    if mass is not None:
        if not info.mass_matrix:
            raise ValueError(f"mass: method {mname!r} does not accept a mass matrix; use one of "
                             f"{[m.name for m in mbint_methods() if m.mass_matrix]}.")
        mass_arg = np.asfortranarray(mass, dtype=float)
        if mass_arg.shape != (n, n) or not np.all(np.isfinite(mass_arg)):
            raise ValueError(f"mass must be a finite array of shape ({n}, {n}).")
    dfdt_arg = None
    if autonomous:
        if dfdt is not None:
            raise ValueError("dfdt: give either dfdt or autonomous=True, not both.")
        dfdt_arg = "zero"
    elif dfdt is not None:
        if not callable(dfdt):
            raise ValueError("dfdt must be callable dfdt(t, y, *args).")
        dfdt_arg = dfdt
    sp_arg = None
    if jac_sparsity is not None:
        sp_arg = np.asfortranarray(np.asarray(jac_sparsity) != 0, dtype=np.uint8)
        if sp_arg.shape != (n, n):
            raise ValueError(f"jac_sparsity must have shape ({n}, {n}).")

    if nq is None:
        nq = n // 2 if n % 2 == 0 else 0
    if info.second_order and (2 * int(nq) != n):
        raise ValueError(f"nq: method {mname!r} integrates y = (q, q') and needs an even state size "
                         f"n = 2 nq (got n = {n}, nq = {nq}).")

    out = _core.solve(
        mname, cfun, t0, tf, y0a, atol_a, rtol, **control, **bounds,
        t_eval=te, dense_output=bool(dense_output), events=ev,
        terminal=terminal, direction=evdir, args=args, nq=int(nq), jac=jac_arg, mass=mass_arg,
        jac_sparsity=sp_arg, switching=switching, dfdt=dfdt_arg)
    return _make_result(out, mname, n, bool(dense_output), ev is not None)


def _make_result(out, mname, n, dense_output, has_events):
    code = out["status"]
    status = _STATUS_PUBLIC.get(code, -1)
    sol = None
    t = out["t"]
    if dense_output and len(out["dense_t"]):
        t_end = out["hist_t"][-1]
        sol = DenseOutput(out["dense_t"], out["dense_h"], t_end, out["dense_deg"],
                          out["dense_off"], out["dense_c"], n, method=mname)
    return OdeResult(
        t=t, y=np.ascontiguousarray(out["y"].T), sol=sol,
        t_events=out["t_events"] if has_events else None,
        y_events=out["y_events"] if has_events else None,
        nfev=out["nfev"], njev=out["njev"], nlu=out["nlu"],
        status=status, message=out["message"], success=status >= 0,
        nsteps=out["nsteps"], nreject=out["nreject"], nfail=out["nfail"],
        nrestart=out["nrestart"], nswitch=out["nswitch"],
        t_steps=out["hist_t"], h_steps=out["hist_h"], err_steps=out["hist_err"],
        method=mname, status_code=code)
