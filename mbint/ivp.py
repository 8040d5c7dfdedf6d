"""``mbint.solve_ivp``: SciPy's signature over mbint's C driver."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from . import _core, _status
from . import _ivp_sens
from ._ivp_sens import Sensitivities
from . import _validate as check
from ._interrupt import raise_if_interrupted
from .dense import DenseOutput
from .methods import method_info, resolve
from .methods import methods as mbint_methods
from .progress import run_cancel, run_progress
from ._typing import ArrayLike, Events, Progress, RhsFun, TSpan

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


def solve_ivp(fun: RhsFun, t_span: TSpan, y0: ArrayLike, method: str | type = "dopri5",
              t_eval: ArrayLike | None = None, dense_output: bool = False, events: Events = None,
              vectorized: bool = False, args: Sequence[Any] | None = None, *, rtol: float = 1e-3,
              atol: ArrayLike = 1e-6, first_step: float | None = None, max_step: float = np.inf,
              min_step: float = 0.0, max_steps: int | None = None, h: float | None = None,
              jac: ArrayLike | RhsFun | None = None, jac_sparsity: ArrayLike | None = None,
              mass: ArrayLike | None = None, dfdt: RhsFun | None = None, autonomous: bool = False,
              controller: str | None = None, error_per_unit_step: bool = False,
              safety: float | None = None, fac_min: float | None = None,
              fac_max: float | None = None, nq: int | None = None, progress: Progress = False,
              sensitivities: Any = None, **method_options: Any) -> OdeResult:
    """Solve an initial value problem ``y' = fun(t, y)`` with a method of mbint.

    Arguments and result mirror :func:`scipy.integrate.solve_ivp`, so a script
    comparing against SciPy changes one word.

    Parameters
    ----------
    fun : callable or scipy.LowLevelCallable
        ``fun(t, y, *args) -> array_like, shape (n,)``, or a LowLevelCallable (or ctypes
        function) ``int f(double t, const double *y, double *ydot, void *user_data)`` or
        ``int f(int n, double t, const double *y, double *ydot, void *user_data)``: no
        Python per step, the GIL released; it returns 0 on success, > 0 to ask for a
        smaller step, < 0 to stop.
    t_span : 2-sequence of float
        ``(t0, tf)``; tf < t0 integrates backwards.
    y0 : array_like, shape (n,)
    method : str
        One of :func:`mbint.methods` (``"dopri5"`` default; aliases ``"RK45"``, ``"RK23"``,
        ``"ode45"``, ``"ode23"``, ``"ode113"``).  The SUNDIALS methods (``cvode_bdf``,
        ``cvode_adams``, ``ida``, ``arkode_erk``, ``arkode_dirk``) run their own step-size
        control (``controller``, ``error_per_unit_step``, ``safety``, ``fac_min``,
        ``fac_max``: ValueError), ignore ``jac_sparsity`` and default ``max_steps`` to 10**6.
    t_eval : array_like or None
        Times at which to store the solution (from the dense output); otherwise every
        accepted step is stored.
    dense_output : bool
        Return ``sol``, the continuous solution.
    events : callable or list of callables
        ``g(t, y, *args)`` with SciPy's attributes ``terminal`` (bool, or the number of
        occurrences after which to stop) and ``direction``; roots are located on the dense
        output by Brent's method.  ``switching = True`` marks a change of the dynamics (a
        contact closing or opening, where ``fun`` switches branches; LLM paper section 3;
        not with the SUNDIALS methods) that no step straddles: a step in which it changes
        sign is retried to end just before the root t* (on the dense output; for ``llm``
        the continuous solution of eq 18), a short step crosses t* and is cut there, t* is
        in ``t_events``, and the method restarts from t* re-initialized (a new Jacobian, no
        multistep history); retries count in ``nreject``, restarts in ``nrestart``; a
        fixed step ``h`` keeps its grid.
    vectorized : bool
        Accepted for SciPy compatibility; mbint calls ``fun`` with 1-D ``y``.
    args : tuple, optional
        Extra arguments to ``fun``, events (and ``jac``).
    rtol, atol : float, array_like
        Tolerances: weighted RMS norm, ``sc_i = atol_i + rtol * max(|y_i|, |y_new_i|)``.
    first_step, max_step, min_step : float
        Step-size bounds; ``first_step=None``: automatic (Hairer-Norsett-Wanner).
    max_steps : int, optional
        Stop with ``status = -1`` after this many step attempts.
    h : float, optional
        Fixed step size: no error control (every method except ``adams``).  Methods
        without an embedded estimate (euler, heun, rk4, nystrom_midpoint) are adaptive by
        step doubling when ``h`` is None.
    jac : callable, array_like or scipy.LowLevelCallable, optional
        Jacobian df/dy, ``jac(t, y, *args) -> (n, n)``, a constant (n, n) matrix, or a C
        function ``int jac(double t, const double *y, double *J, void *user_data)`` writing
        J column-major (``J[j*n + i] = df_i/dy_j``).  Used by methods that need a Jacobian
        (else finite differences), ignored by the others.
    jac_sparsity : array_like, shape (n, n), optional
        Nonzero pattern of df/dy: finite differences perturb independent columns together.
    dfdt : callable, optional
        ``dfdt(t, y, *args) -> (n,)``, the partial derivative df/dt, for methods that use
        it (Rosenbrock, ``llm``); otherwise a forward difference.
    autonomous : bool
        f does not depend on t explicitly: df/dt = 0 without evaluating f.
    mass : array_like, shape (n, n), optional
        Constant (possibly singular) M of ``M y' = f(t, y)`` (methods with ``mass_matrix``).
    controller : {None, "pi", "i", "predictive"}
        Step-size controller: PI (Gustafsson; LLM paper eq 40), elementary (eq 38) or
        Gustafsson's predictive controller (RADAU5); None: the method's own
        (:attr:`MethodInfo.controller`: ``"predictive"`` for ``radau_iia``, else ``"pi"``).
    error_per_unit_step : bool
        Control the error per unit step (EPUS, LLM eq 39) instead of per step.
    safety, fac_min, fac_max : float, optional
        Controller safety factor and bounds of h_new / h (RN paper eq 16).
    nq : int, optional
        For second-order methods: number of coordinates q in y = (q, q') (default n // 2).
    progress : bool or callable
        True: a progress bar (tqdm; a widget in Jupyter) of the simulated time for runs
        over a second.  A callable ``progress(t)`` gets the time [s] of the next step
        attempt at most every 0.1 s of wall time (from C; with a C right-hand side the GIL
        is taken only then; :mod:`mbint.progress`); what it raises stops the run.
    sensitivities : True, sequence of int, dict or :class:`~mbint.ivp.Sensitivities`
        dy/dp of ``p = args[0]`` and of initial values (:class:`~mbint.ivp.Sensitivities`).
    **method_options
        Options of the chosen method alone (SciPy's ``**options``), listed by
        :attr:`MethodInfo.options`; any other keyword is a ValueError naming the method and
        the options it takes.

    Returns
    -------
    OdeResult
        A callback that raises stops the run: its exception propagates with the result
        so far as ``exc.result`` (Ctrl-C: :class:`mbint.IntegrationInterrupted`).
    """
    mname, info = _method(method)
    t0, tf = check.t_span(t_span, allow_infinite_end=True)
    steps = dict(first_step=first_step, max_step=max_step, min_step=min_step, max_steps=max_steps,
                 h=h, controller=controller, error_per_unit_step=error_per_unit_step,
                 safety=safety, fac_min=fac_min, fac_max=fac_max)
    y0a = _as_array(y0)
    if y0a is not None and y0a.dtype.kind == "c":
        if _ivp_sens.wanted(sensitivities):
            raise ValueError("sensitivities: complex y0 is not supported; split y0 in two.")
        return _solve_complex(fun, (t0, tf), y0a, mname, t_eval=t_eval, dense_output=dense_output,
                              events=events, args=args, rtol=rtol, atol=atol, jac=jac,
                              jac_sparsity=jac_sparsity, mass=mass, dfdt=dfdt,
                              autonomous=autonomous, nq=nq, **steps, progress=progress,
                              **method_options)
    y0a = check.float_vector("y0", y0 if y0a is None else y0a, allow_empty=True)
    n = y0a.size
    if _ivp_sens.wanted(sensitivities):
        return _solve_sens(_ivp_sens.parse(sensitivities), mname, info, fun, t0, tf, y0a, rtol,
                           atol, t_eval, events, args, jac, jac_sparsity, mass, dfdt, autonomous,
                           nq, steps, method_options, bool(dense_output), progress)
    rtol, atol_a, cfun, kw = _solve_args(info, mname, fun, t0, tf, y0a, rtol, atol, t_eval,
                                         events, args, jac, jac_sparsity, mass, dfdt,
                                         autonomous, nq, steps, method_options)
    if n == 0:  # nothing to integrate (as SciPy: the empty solution at t0 and tf)
        return _empty_result(t0, tf, kw["t_eval"], mname, bool(dense_output), kw["events"])
    return _run(mname, cfun, t0, tf, y0a, atol_a, rtol, kw, bool(dense_output), progress)


def _solve_args(info, mname, fun, t0, tf, y0a, rtol, atol, t_eval, events, args, jac,
                jac_sparsity, mass, dfdt, autonomous, nq, steps, method_options, pieces=False):
    """The checked arguments of ``_core.solve`` (also of ``_core.OdeStepper``, the run in
    pieces of :class:`mbint.OdeSimulator`): rtol, atol, the right-hand side and the
    keywords."""
    n = y0a.size
    rtol, atol_a = check.tolerances(rtol, atol, n, y0a, stacklevel=4)  # the caller's line
    kw = _step_kw(info, mname, t0, tf, method_options, steps)  # kw of _core.solve
    cfun, call = _calls(info, mname, fun, t0, tf, n, t_eval, args, events, pieces)
    kw.update(call, **_matrices(info, mname, n, jac, mass, dfdt, autonomous, jac_sparsity),
              nq=_second_order_nq(info, mname, n, nq))
    return rtol, atol_a, cfun, kw


#: (canonical name, MethodInfo) by the name given as method= (only names that resolve)
_METHODS: dict[str, Any] = {}

#: the checked step options (keywords of _core.solve) of a call that leaves every step
#: option at its default, by method: they depend on the method alone
_DEFAULT_STEPS: dict[str, Any] = {}


def _method(method):
    """(canonical name, MethodInfo) of method= (:func:`mbint.methods.resolve`)."""
    got = _METHODS.get(method) if type(method) is str else None
    if got is None:
        mname = resolve(method)
        got = (mname, method_info(mname))
        if type(method) is str:
            _METHODS[method] = got
    return got


def _as_array(y0):
    """y0 as an ndarray (itself when it is one), or None when NumPy cannot make one
    (a ragged nested sequence: check.float_vector reports it)."""
    if type(y0) is np.ndarray:
        return y0
    try:
        return np.asarray(y0)
    except ValueError:
        return None


def _step_kw(info, mname, t0, tf, method_options, steps):
    """:func:`_step_options` as a new dict; a call that leaves every step option at its
    default (the common case) takes the result checked once per method."""
    if (not method_options and steps["first_step"] is None and steps["h"] is None
            and steps["max_steps"] is None and steps["controller"] is None
            and steps["error_per_unit_step"] is False and steps["safety"] is None
            and steps["fac_min"] is None and steps["fac_max"] is None
            and type(steps["max_step"]) is float and steps["max_step"] == math.inf
            and type(steps["min_step"]) is float and steps["min_step"] == 0.0
            and math.copysign(1.0, steps["min_step"]) == 1.0):
        kw = _DEFAULT_STEPS.get(mname)
        if kw is None:  # not cached when the check raises
            kw = _DEFAULT_STEPS[mname] = _step_options(info, mname, t0, tf, {}, **steps)
        return dict(kw)
    return _step_options(info, mname, t0, tf, method_options, **steps)


def _step_options(info, mname, t0, tf, method_options, *, first_step, max_step, min_step,
                  max_steps, h, controller, error_per_unit_step, safety, fac_min, fac_max):
    """The checked step-size control, method options and step bounds of a run."""
    if info.backend == "sundials":
        for name, value, default in (("controller", controller, None),
                                     ("error_per_unit_step", error_per_unit_step, False),
                                     ("safety", safety, None), ("fac_min", fac_min, None),
                                     ("fac_max", fac_max, None)):
            if value != default:
                raise ValueError(f"{name}: method {mname!r} (SUNDIALS) uses its own step-size "
                                 f"control; {name} does not apply to it.")
    control = check.step_control(info, mname, h, controller, error_per_unit_step, safety,
                                 fac_min, fac_max)
    control["method_options"] = check.method_options(info, method_options)
    bounds = check.step_bounds(first_step, max_step, min_step, max_steps)
    check.first_step_within(bounds["first_step"], t0, tf)
    check.fixed_steps(control["h"], t0, tf, bounds["max_steps"])
    return {**control, **bounds}


def _calls(info, mname, fun, t0, tf, n, t_eval, args, events, pieces=False):
    """The checked right-hand side, and the output times, extra arguments and events
    (pieces: a run in pieces, whose caller ends it, may have an infinite end)."""
    te = check.t_eval(t_eval, t0, tf)
    args = check.args_tuple(args)
    cfun = check.callable_or_capsule(fun, args, "fun must be callable or a scipy.LowLevelCallable.")
    ev, terminal, evdir = check.check_events(events)
    switching = check.switching_flags(ev, info, mname)
    if math.isinf(tf) and n > 0 and not pieces and (ev is None or not terminal.any()):
        raise ValueError("t_span: an infinite end time needs a terminal event to end the run.")
    return cfun, dict(t_eval=te, events=ev, terminal=terminal, direction=evdir, args=args,
                      switching=switching)


def _matrices(info, mname, n, jac, mass, dfdt, autonomous, jac_sparsity):
    """The checked Jacobian, mass matrix, df/dt and Jacobian sparsity of a run."""
    jac_arg = None
    if jac is not None and info.needs_jacobian:
        cap = check.as_capsule(jac)
        if cap is not None:
            jac_arg = cap
        elif callable(jac):
            jac_arg = jac
        else:
            jac_arg = check.square_matrix("jac", jac, n)
    mass_arg = None
    if mass is not None:
        if not info.mass_matrix:
            raise ValueError(f"mass: method {mname!r} does not accept a mass matrix; use one of "
                             f"{[m.name for m in mbint_methods() if m.mass_matrix]}.")
        mass_arg = np.asfortranarray(check.square_matrix("mass", mass, n))
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
        sp_arg = np.asfortranarray(check.square_matrix("jac_sparsity", jac_sparsity, n,
                                                       finite=False) != 0, dtype=np.uint8)
    return dict(jac=jac_arg, mass=mass_arg, dfdt=dfdt_arg, jac_sparsity=sp_arg)


def _second_order_nq(info, mname, n, nq):
    """nq of y = (q, q') (default n // 2 for an even n, else 0); checked for the
    second-order methods."""
    if nq is None:
        nq = n // 2 if n % 2 == 0 else 0
    if info.second_order and (2 * int(nq) != n or n == 0):
        raise ValueError(f"nq: method {mname!r} integrates y = (q, q') and needs an even state size "
                         f"n = 2 nq (got n = {n}, nq = {nq}).")
    return int(nq)


def _run(mname, cfun, t0, tf, y0a, atol_a, rtol, kw, dense_output, progress):
    """Integrate the checked problem ``kw`` in C and make the result."""
    report, close = run_progress(progress, t0, tf, f"solve_ivp {mname}")
    try:
        out = _core.solve(mname, cfun, t0, tf, y0a, atol_a, rtol, **kw,
                          dense_output=dense_output, progress=report, cancel=run_cancel())
    finally:
        close()
    res = _make_result(out, mname, y0a.size, dense_output, kw["events"] is not None, y0=y0a,
                       t_eval=kw["t_eval"])
    raise_if_interrupted(out, res)
    return res


def _solve_sens(s, mname, info, fun, t0, tf, y0a, rtol, atol, t_eval, events, args, jac,
                jac_sparsity, mass, dfdt, autonomous, nq, steps, method_options, dense_output,
                progress):
    """solve_ivp with sensitivities (mbint._ivp_sens): the augmented run and its split."""
    n = y0a.size
    if n == 0:
        raise ValueError("sensitivities: y0 is empty.")
    rtol, atol_a, cfun, kw = _solve_args(info, mname, fun, t0, tf, y0a, rtol, atol, t_eval,
                                         events, args, jac, jac_sparsity, mass, dfdt,
                                         autonomous, nq, steps, method_options)
    st = _ivp_sens.setup(s, mname, info, not callable(cfun), kw["args"], y0a, rtol, atol_a,
                         kw["nq"], kw["events"], kw["jac"] is not None)
    kw["args"] = st.args
    report, close = run_progress(progress, t0, tf, f"solve_ivp {mname}")
    try:
        out = _core.solve(mname, cfun, t0, tf, st.y0, st.atol, st.rtol, **kw,
                          dense_output=dense_output, progress=report, cancel=run_cancel(),
                          sens=st.sens)
    finally:
        close()
    res = _make_result(out, mname, st.y0.size, dense_output, False, y0=st.y0,
                       t_eval=kw["t_eval"])
    raise_if_interrupted(out, res)
    index = out["sens_index"]
    Y = res.y
    res.y = Y[index[0]]
    res.sens = np.moveaxis(Y[index[1:]], 0, 1)  # (n, np, n_points)
    res.nfev_base, res.njev_base = out["nfev_base"], out["njev_base"]
    res.sens_sol = None
    if res.sol is not None:
        res.sens_sol = _ivp_sens.SensDense(res.sol, index)
        res.sol = _ivp_sens.BaseDense(res.sol, index)
    return res


def _empty_result(t0, tf, te, mname, dense_output, ev):
    """The result of a run with an empty state (n = 0)."""
    t = np.array([t0] if np.isinf(tf) else [t0, tf]) if te is None else te
    return OdeResult(
        t=t, y=np.zeros((0, t.size)),
        sol=DenseOutput.constant(t0, np.zeros(0)) if dense_output else None,
        t_events=None if ev is None else [np.zeros(0) for _ in ev],
        y_events=None if ev is None else [np.zeros(0) for _ in ev],
        nfev=0, njev=0, nlu=0, status=0, message=_status.MESSAGES[_status.MB_OK], success=True,
        nsteps=0, nreject=0, nfail=0, nrestart=0, t_steps=np.zeros(0), h_steps=np.zeros(0),
        err_steps=np.zeros(0), method=mname, status_code=_status.MB_OK)


def _solve_complex(fun, t_span, y0, mname, *, t_eval, dense_output, events, args, rtol, atol,
                   jac, jac_sparsity, mass, dfdt, autonomous, nq, **options):
    """solve_ivp for complex y0: the state is integrated as real pairs z = (Re y, Im y)
    of size 2n; a complex Jacobian J (f holomorphic) becomes [[Re J, -Im J], [Im J,
    Re J]].  The result has complex y, sol and y_events."""
    y0c = np.asarray(y0, dtype=complex)
    if y0c.ndim != 1:
        raise ValueError(f"y0 must be 1-dimensional, got shape {y0c.shape}.")
    n = y0c.size
    if check.as_capsule(fun) is not None:
        raise ValueError("y0: a C right-hand side (LowLevelCallable) takes a real state; "
                         "complex y0 needs a Python fun.")
    if mass is not None or nq is not None:
        raise ValueError("y0: complex states are integrated as real pairs (Re y, Im y); mass= "
                         "and nq= are not supported with them.")
    args = check.args_tuple(args)

    def to_c(z):
        return z[:n] + 1j * z[n:]

    def to_r(y):
        y = np.asarray(y).reshape(-1)
        return np.concatenate([y.real, y.imag]).astype(float)

    def fr(t, z, *a):
        return to_r(fun(t, to_c(z), *a))

    def real_jac(J):
        if hasattr(J, "toarray"):
            J = J.toarray()
        J = np.asarray(J, dtype=complex).reshape(n, n)
        return np.block([[J.real, -J.imag], [J.imag, J.real]])

    jr = None
    if jac is not None:
        if check.as_capsule(jac) is not None:
            raise ValueError("jac: a C Jacobian takes a real state; complex y0 needs a Python "
                             "jac.")
        jr = (lambda t, z, *a: real_jac(jac(t, to_c(z), *a))) if callable(jac) else real_jac(jac)
    sp = None
    if jac_sparsity is not None:
        P = check.square_matrix("jac_sparsity", jac_sparsity, n, finite=False) != 0
        sp = np.block([[P, P], [P, P]])
    dfr = (lambda t, z, *a: to_r(dfdt(t, to_c(z), *a))) if callable(dfdt) else dfdt
    evr = None
    if events is not None:
        evr = []
        for g in ([events] if callable(events) else list(events)):
            def gr(t, z, *a, g=g):
                return g(t, to_c(z), *a)
            for attr in ("terminal", "direction", "switching"):
                if hasattr(g, attr):
                    setattr(gr, attr, getattr(g, attr))
            evr.append(gr)

    def pairs(v, name):
        a = np.asarray(v, float)
        if a.ndim == 0:
            return float(a)
        if a.shape != (n,):
            raise ValueError(f"{name} must be a scalar or have shape ({n},), got {a.shape}.")
        return np.concatenate([a, a])

    if options.get("fast") is not None and not (isinstance(options["fast"], str)
                                                and options["fast"] == "auto"):
        # singular_perturbation: y_i is (Re y_i, Im y_i)
        fast = check.fast_indices(options["fast"], n)
        options["fast"] = np.concatenate([fast, fast + n])
    res = solve_ivp(fr, t_span, to_r(y0c), method=mname, t_eval=t_eval,
                    dense_output=dense_output, events=evr, args=args, rtol=pairs(rtol, "rtol"),
                    atol=pairs(atol, "atol"), jac=jr, jac_sparsity=sp, dfdt=dfr,
                    autonomous=autonomous, **options)
    res.y = res.y[:n] + 1j * res.y[n:]
    if res.y_events is not None:
        res.y_events = [ye[..., :n] + 1j * ye[..., n:] if ye.size else ye for ye in res.y_events]
    if res.sol is not None:
        res.sol = _ComplexDense(res.sol, n)
    return res


class _ComplexDense:
    """The dense output of a complex state integrated as real pairs."""

    def __init__(self, sol, n):
        self._sol, self.n = sol, n

    def __call__(self, t):
        z = self._sol(t)
        return z[: self.n] + 1j * z[self.n:]

    def __getattr__(self, name):
        # only for attributes not found on self; "_sol" itself is never delegated, so
        # that an instance being unpickled (no _sol yet) does not recurse
        if name.startswith("__") or name == "_sol":
            raise AttributeError(name)
        return getattr(self._sol, name)


def _make_result(out, mname, n, dense_output, has_events, y0=None, t_eval=None):
    code = out["status"]
    status = _STATUS_PUBLIC.get(code, -1)
    sol = None
    t, y = out["t"], np.ascontiguousarray(out["y"].T)
    if dense_output:
        if len(out["dense_t"]):
            t_end = out["hist_t"][-1]
            sol = DenseOutput(out["dense_t"], out["dense_h"], t_end, out["dense_deg"],
                              out["dense_off"], out["dense_c"], n, method=mname)
        elif y0 is not None and len(t) and len(out["hist_t"]) == 0:
            sol = DenseOutput.constant(t[0], y0)  # no step taken (t0 == tf)
    if t_eval is None and len(t) == 1 and len(out["hist_t"]) == 0 and code == _status.MB_OK:
        # t0 == tf: the initial point at both ends, as SciPy
        t, y = np.repeat(t, 2), np.repeat(y, 2, axis=1)
    t_events = y_events = None
    if has_events:
        t_events = out["t_events"]
        # as SciPy: an event that never fired has y_events entry of shape (0,)
        y_events = [ye if len(te) else np.zeros(0) for te, ye in zip(t_events, out["y_events"])]
    return OdeResult(
        t=t, y=y, sol=sol, t_events=t_events, y_events=y_events,
        nfev=out["nfev"], njev=out["njev"], nlu=out["nlu"],
        status=status, message=out["message"], success=status >= 0,
        nsteps=out["nsteps"], nreject=out["nreject"], nfail=out["nfail"],
        nrestart=out["nrestart"], nswitch=out["nswitch"],
        t_steps=out["hist_t"], h_steps=out["hist_h"], err_steps=out["hist_err"],
        method=mname, status_code=code)
