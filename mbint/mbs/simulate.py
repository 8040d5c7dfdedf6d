"""``mbint.simulate``: run a mechanism with any method of :func:`mbint.methods`.

The mechanism (a :class:`PlanarModel` or a :class:`MechanicalSystem`) becomes the
index-1 ODE in y = (q, q') of csrc/mbs/index1.c: q'' and lambda from the
saddle-point system

    [ M      Phi_q^T ] [ q''    ]   [ Q                                ]
    [ Phi_q  0       ] [ lambda ] = [ gamma - 2 alpha Phi' - beta^2 Phi ]

(LLM paper eq 9, optional Baumgarte terms) with the analytic Jacobian of LLM
eqs 10-15, and runs through the same C driver as :func:`mbint.solve_ivp`, with
the same options; optionally q and q' are projected back onto Phi = 0 and
Phi_q q' + Phi_t = 0 after every accepted step.

With ``formulation="state_space"`` the mechanism becomes the reduced ODE of its
independent coordinates (RN paper eqs 4-10, csrc/mbs/statespace.c; see
:class:`mbint.StateSpace`), and the trajectory is mapped back to the full q, qd, lam.
"""
from __future__ import annotations

import numpy as np

from .. import _core
from .. import _validate as check
from .._interrupt import raise_if_interrupted
from ..methods import method_info, methods as _all_methods, resolve
from ..multirate import fast_state_indices
from ..progress import run_progress
from ._kernels import baumgarte_pair, linalg_code
from .trajectory import Trajectory

__all__ = ["simulate", "check_initial_conditions", "FORMULATIONS", "DAE_FORMULATIONS",
           "supported_formulations", "SETTINGS_KEYS", "DEFAULTS"]

#: formulations :func:`simulate` can build
FORMULATIONS = ("index1", "state_space", "index1_dae", "index2", "index3", "ggl")

# ---- DAE formulations (LS paper; csrc/mbs/dae.c) ----
#: the DAE formulations and their codes in ``_core.mech_simulate``: y = (q, v, lambda)
#: (GGL: (q, v, lambda, mu)) with M_p y' = f, M_p = diag(I, I, 0)
DAE_FORMULATIONS = {"index1_dae": 1, "index2": 2, "index3": 3, "ggl": 4}


def supported_formulations(method):
    """The formulations :func:`simulate` runs with a method.

    Every method integrates the index-1 ODE (``"index1"``).  The methods with a
    mass matrix (``MethodInfo.mass_matrix``) also solve the index-1 DAE
    (``"index1_dae"``, lambda an algebraic variable); those that solve DAEs of
    index 2 and 3 (``MethodInfo.dae``: ``radau_iia``, ``bdf``, the fixed-step
    ``radau_ia*``, ``radau_iia*``, ``lobatto_iiic*``, ``lstable_block``,
    ``astable_block``) also ``"index2"``, ``"index3"`` and ``"ggl"``; SUNDIALS
    ``ida`` solves ``"index1_dae"`` and ``"ggl"`` (index-2 multipliers left out of
    its error test).

    Parameters
    ----------
    method : str or MethodInfo

    Returns
    -------
    tuple of str
    """
    info = method if hasattr(method, "backend") else method_info(method)
    out = ["index1"]
    if info.backend == "mbint" and info.mass_matrix:
        out.append("index1_dae")
    if info.backend == "mbint" and getattr(info, "dae", False):
        out += ["index2", "index3", "ggl"]
    if info.name == "ida":
        out += ["index1_dae", "ggl"]
    return tuple(out)


def _check_formulation(formulation, info, mname):
    """ValueError naming the method and what it supports when it cannot run the
    formulation."""
    if formulation in DAE_FORMULATIONS:
        ok = supported_formulations(info)
        if formulation not in ok:
            able = [m.name for m in _all_methods() if formulation in supported_formulations(m)]
            raise ValueError(f"formulation={formulation!r}: method {mname!r} does not solve it; "
                             f"{mname!r} supports {ok}.  Methods that solve {formulation!r}: "
                             f"{', '.join(able)}.")
# ---- end DAE formulations ----

#: the options of :func:`simulate` a model may recommend in ``model.settings``
SETTINGS_KEYS = ("rtol", "atol", "first_step", "max_step", "min_step", "max_steps")

#: values of those options when neither the caller nor the model gives one (those of
#: :func:`mbint.solve_ivp`: first_step None = automatic, max_step inf = no bound,
#: max_steps None = the driver's 10**6)
DEFAULTS = dict(rtol=1e-3, atol=1e-6, first_step=None, max_step=np.inf, min_step=0.0,
                max_steps=None)


def _resolve_options(model, given, fixed_step=False):
    """The step and tolerance options of a run: the caller's, else the model's
    recommended setting, else :data:`DEFAULTS`.

    Parameters
    ----------
    model : PlanarModel or MechanicalSystem
    given : dict
        The caller's values of :data:`SETTINGS_KEYS` (None: not given).
    fixed_step : bool
        A fixed-step run (``h`` given): the model's step bounds (``first_step``,
        ``max_step``, ``min_step``) concern step selection and are not applied.

    Returns
    -------
    dict
        One value per key of :data:`SETTINGS_KEYS`.

    Raises
    ------
    ValueError
        ``model.settings`` holds a key simulate cannot apply.
    """
    settings = dict(getattr(model, "settings", None) or {})
    unknown = sorted(set(settings) - set(SETTINGS_KEYS))
    if unknown:
        raise ValueError(f"{getattr(model, 'name', 'model')}: model.settings has {unknown}, which "
                         f"simulate does not apply; settings may recommend {SETTINGS_KEYS}.")
    if fixed_step:
        for k in ("first_step", "max_step", "min_step"):
            settings.pop(k, None)
    out = {}
    for k in SETTINGS_KEYS:
        if given.get(k) is not None:
            out[k] = given[k]
        elif settings.get(k) is not None:
            out[k] = settings[k]
        else:
            out[k] = DEFAULTS[k]
    return out


def _dependent_rows(P, tol):
    """Rows of P that are (numerically) combinations of earlier rows."""
    dep, basis = [], np.zeros((0, P.shape[1]))
    scale = max(1.0, np.abs(P).max()) if P.size else 1.0
    for r in range(P.shape[0]):
        trial = np.vstack([basis, P[r]])
        s = np.linalg.svd(trial, compute_uv=False)
        if s.size and s[-1] <= tol * scale:
            dep.append(r)
        else:
            basis = trial
    return dep


def _full_row_rank_sparse(P, rtol, min_rows=60):
    """A sufficient test of full row rank for a large, sparse Phi_q (nc x nq): the
    pivots of a sparse symmetric factorization of the Gram matrix P P^T (SuperLU with
    diagonal pivoting, fill-reducing order) all exceed rtol times the largest.
    The pivots of an SPD matrix are at least its smallest eigenvalue s_min^2, so a
    (numerically) rank-deficient P makes some pivot tiny or the factorization fail;
    the converse does not hold, so False only means "not shown": the caller then
    takes the dense SVD, which also names the dependent rows.  O(nnz) for a chain,
    where the SVD of a 2000 x 3000 Phi_q takes tens of seconds.  Small P: False."""
    if P.shape[0] < min_rows:
        return False
    import scipy.sparse as sp
    from scipy.sparse.linalg import splu
    A = sp.csr_matrix(P)
    G = (A @ A.T).tocsc()
    try:
        lu = splu(G, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                  options={"SymmetricMode": True})
    except RuntimeError:  # exactly singular
        return False
    d = np.abs(lu.U.diagonal())
    return bool(d.size and d.min() > rtol * d.max())


def check_initial_conditions(model, q0=None, qd0=None, t0=0.0, tol=None):
    """Residuals of the initial state and the rank of the constraint Jacobian.

    Parameters
    ----------
    model : PlanarModel or MechanicalSystem
    q0, qd0 : array_like, shape (nq,), optional
        Default: the model's initial state.
    t0 : float
        Initial time [s].
    tol : float, optional
        Tolerance of the consistency test (default ``1e-8 * max(1, |q0|, |qd0|)``).

    Returns
    -------
    dict
        ``position`` = max |Phi(t0, q0)|, ``velocity`` = max |Phi_q qd0 + Phi_t|,
        ``tol``, ``consistent`` (bool), ``rank`` of Phi_q, ``dependent``: names
        of the constraint rows that depend on earlier rows (redundant
        constraints or a singular configuration).
    """
    q0 = model.q0 if q0 is None else np.asarray(q0, float)
    qd0 = model.qd0 if qd0 is None else np.asarray(qd0, float)
    if tol is None:
        tol = 1e-8 * max(1.0, float(np.abs(q0).max(initial=0)), float(np.abs(qd0).max(initial=0)))
    out = dict(position=0.0, velocity=0.0, tol=float(tol), consistent=True, rank=0, dependent=[])
    if model.nc == 0:
        return out
    P = np.asarray(model.constraint_jacobian(t0, q0))
    phi = np.asarray(model.phi(t0, q0))
    vel = P @ qd0 + np.asarray(model.phi_t(t0, q0))
    out["position"] = float(np.abs(phi).max())
    out["velocity"] = float(np.abs(vel).max())
    out["consistent"] = out["position"] <= tol and out["velocity"] <= tol
    rtol = 1e-10
    if _full_row_rank_sparse(P, rtol):
        out["rank"] = model.nc
        return out
    s = np.linalg.svd(P, compute_uv=False)
    out["rank"] = int(np.sum(s > rtol * max(1.0, s.max(initial=0))))
    if out["rank"] < model.nc:
        names = model.constraint_names
        out["dependent"] = [names[r] for r in _dependent_rows(P, rtol)]
    return out


def _wrap_event(g, nq):
    """g(t, q, qd) as the g(t, y) of the driver, keeping terminal and direction."""
    if not callable(g):
        raise ValueError(f"events: every event must be callable g(t, q, qd), got {g!r}.")

    def gy(t, y):
        return g(t, y[:nq], y[nq:2 * nq])  # (q, v) also of a DAE state (q, v, lambda...)

    for attr in ("terminal", "direction", "switching"):
        if hasattr(g, attr):
            setattr(gy, attr, getattr(g, attr))
    gy.__name__ = getattr(g, "__name__", "event")
    return gy


def simulate(model, t_span, method="dopri5", formulation="index1", q0=None, qd0=None,
             project=False, baumgarte=None, consistent="check", *, t_eval=None,
             dense_output=False, events=None, rtol=None, atol=None, h=None, first_step=None,
             max_step=None, min_step=None, max_steps=None, controller=None,
             error_per_unit_step=False, safety=None, fac_min=None, fac_max=None,
             tol=None, proj_tol=None, proj_max_iter=None, contact_switching=True,
             independent=None, progress=False, linear_algebra=None, **method_options):
    """Simulate a mechanism with a method of :func:`mbint.methods`.

    Parameters
    ----------
    model : PlanarModel or MechanicalSystem
    t_span : 2-sequence of float
        ``(t0, tf)``.
    method : str
        Any name of :func:`mbint.methods` (aliases as in :func:`mbint.solve_ivp`).
    formulation : {"index1", "state_space", "index1_dae", "index2", "index3", "ggl"}
        ``"index1"``: the index-1 ODE in y = (q, q') (LLM eqs 9-15).  The DAEs in
        y = (q, v, lambda), ``M_p y' = f`` with M_p = diag(I, I, 0) (LS paper eqs
        1-4; csrc/mbs/dae.c, exact Jacobians): ``"index3"`` the position
        constraint Phi = 0, ``"index2"`` the velocity constraint Phi_q v + Phi_t =
        0, ``"index1_dae"`` the acceleration constraint Phi_q v' = gamma with
        lambda an algebraic variable, ``"ggl"`` the stabilized index-2 form of Gear,
        Gupta and Leimkuhler (both constraints, y = (q, v, lambda, mu),
        q' = v - Phi_q^T mu).  lambda(t0) is computed from the saddle-point
        system; (q0, qd0) are checked or projected as set by ``consistent``.
        Which methods solve which: :func:`supported_formulations` (a ValueError
        names them otherwise).  ``traj.lam`` is then the integrated lambda and
        ``traj.qdd`` = M^-1 (Q - Phi_q^T lambda), so ``traj.violation()`` shows
        the error of the DAE solution at all three levels.
        ``"index1"``: the index-1 ODE in y = (q, q') (LLM eqs 9-15).
        ``"state_space"``: the reduced ODE M^(v) v'' = Q^(t, v, v') of the
        independent coordinates v (RN paper eqs 4-10; :class:`mbint.StateSpace`),
        chosen by Gauss-Jordan elimination with full pivoting and re-chosen when
        cond(Phi_u) grows by more than 25 % (``stats["nrepartition"]``,
        ``traj.partitions``); the dependent coordinates are recovered by Newton
        to ``proj_tol`` (default 1e-10) after every step, so the trajectory always
        satisfies the constraints.  The second-order view of the reduced ODE has
        the analytic Jacobians J1, J2 of RN eqs 26-35.  Every method of mbint's
        driver runs on it (SUNDIALS methods do not: they run their own step loop);
        ``rosenbrock_nystrom`` is the RN paper's method for it.  ``atol`` given per
        coordinate is applied to the coordinates that are independent.
    q0, qd0 : array_like, shape (nq,), optional
        Initial state (default: the model's).
    project : bool
        Project q and q' onto the position and velocity constraints after every
        accepted step (minimum-norm Newton correction).  Not available with the
        SUNDIALS methods, which run their own step loop.
    baumgarte : float or (alpha, beta), optional
        Baumgarte stabilization gamma - 2 alpha Phi' - beta^2 Phi (a number a
        means alpha = beta = a); index-1 ODE only.
    consistent : {"check", "project", "ignore"}
        Initial conditions: ``"check"`` raises ValueError stating the residuals
        when |Phi(t0, q0)| or |Phi_q qd0 + Phi_t| exceeds ``tol``; ``"project"``
        moves (q0, qd0) onto the constraints first; ``"ignore"`` starts as given.
        Redundant constraints or a singular configuration (rank-deficient
        Phi_q(q0)) raise ValueError naming the dependent rows in every mode.
    rtol, atol, first_step, max_step, min_step, max_steps : optional
        As in :func:`mbint.solve_ivp` (``atol`` a scalar or 2 nq entries, q
        then q'; for a DAE formulation a scalar or one entry per component of
        (q, v, lambda[, mu]); with ``ida`` on ``"ggl"`` a scalar atol applies
        to mu as max(atol, 1): mu, zero in the exact solution, is outside IDA's
        error test and only its Newton test sees it; steps in s).  None (the
        default) takes the model's recommended value from ``model.settings``
        when it has one, else the
        default of :func:`mbint.solve_ivp` (:data:`DEFAULTS`: rtol 1e-3,
        atol 1e-6, automatic first step, no max_step, min_step 0, max_steps
        10**6); a value given here always wins.  With a fixed step ``h`` the
        model's step bounds (first_step, max_step, min_step) are not applied.
        The values used are in ``Trajectory.options``.
    t_eval, dense_output, h, controller, error_per_unit_step, safety, fac_min, fac_max
        As in :func:`mbint.solve_ivp`.
    events : callable or list of callables
        ``g(t, q, qd)`` with the attributes ``terminal``, ``direction`` and
        ``switching`` of :func:`mbint.solve_ivp` (:meth:`PlanarModel.contact_events`
        gives the contact instants of a model with penalty contacts).
    tol : float, optional
        Tolerance of the initial-condition check (see
        :func:`check_initial_conditions`).
    proj_tol, proj_max_iter : optional
        Tolerance (max-norm of Phi and Phi') and iteration limit of the projection;
        with ``formulation="state_space"`` those of Newton for the dependent
        coordinates (max-norm of Phi; default 1e-10 and 10 iterations).
    contact_switching : bool
        For a :class:`PlanarModel` with penalty contacts and a method of mbint's
        driver (not SUNDIALS): the contact gap functions Psi (LLM eqs 17-19, in C)
        are switching events, so that every step that closes or opens a contact
        ends at the contact instant t* (found on the continuous solution, eq 18)
        and the integration restarts there with a new Jacobian (LLM section 3;
        with ``llm`` the piecewise-linear bouncing balls are then integrated
        exactly).  The instants are returned in ``t_contacts``.
    progress : bool or callable
        As in :func:`mbint.solve_ivp`: True shows a progress bar of simulated
        time when the run lasts longer than a second; a callable
        ``progress(t)`` is called at most every 0.1 s of wall time.
    independent : sequence of int or str, optional
        ``formulation="state_space"`` only: coordinates (indices or names) to keep
        independent where the configuration allows; Gauss-Jordan ranks their
        pivots 10 times lower, at the start and at every repartition.  The choice
        matters for Rosenbrock methods: a stiff force that is linear in the
        preferred coordinates (a torsional spring on joint angles) stays linear in
        v, while in Cartesian independent coordinates it becomes nonlinear and the
        linearly implicit stages lose accuracy (on the RN double pendulum the body
        angles need 3-40 times fewer steps (rtol 1e-3 ... 1e-9) than the choice of full
        pivoting).
    linear_algebra : {"auto", "dense", "sparse"}, optional
        Linear algebra of the index-1 formulation for this run (default: the
        model's :attr:`~mbint.PlanarModel.linear_algebra`, "auto": sparse KLU for a
        planar model with at least :data:`mbint.SPARSE_MIN_NQ` coordinates, dense
        below).  With "sparse" the implicit methods of ``MethodInfo.sparse`` never
        form an n x n matrix; the other implicit methods get the dense Jacobian.
        The DAE and state-space formulations are dense.  The one used is
        ``traj.options["linear_algebra"]``.
    **method_options
        Options of the chosen method alone, as in :func:`mbint.solve_ivp`.  The
        ``fast=`` of ``singular_perturbation`` takes bodies (objects or names),
        coordinate names or coordinate indices into q; the velocities of the fast
        coordinates are fast too (:func:`mbint.multirate.fast_state_indices`);
        ``fast="auto"`` takes the split of :func:`mbint.multirate.propose_split` at t0.

    Returns
    -------
    Trajectory
        Time series component-major (``traj.q`` of shape (nq, m)); the options
        used in ``traj.options``.  With ``contact_switching`` on a model with
        contacts also ``t_contacts``
        (list of arrays, one per contact in the order of ``model.contacts``: the
        instants where its gap changed sign); with switching events (contacts or
        the user's) ``stats["nrestart"]``, the number of restarts.

    Raises
    ------
    ValueError
        Bad arguments, inconsistent initial conditions (with ``"check"``), or
        redundant / singular constraints.
    """
    if not hasattr(model, "_mech_handle"):
        raise ValueError(f"model must be a PlanarModel or a MechanicalSystem, "
                         f"got {type(model).__name__}.")
    mname = resolve(method)
    info = method_info(mname)
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation: {formulation!r} is not available; simulate builds "
                         f"{FORMULATIONS}.")
    _check_formulation(formulation, info, mname)
    dae_code = DAE_FORMULATIONS.get(formulation, 0)
    if dae_code and getattr(model, "dim", 2) == 3:  # issue 10: Euler-parameter M is singular
        raise ValueError(f"formulation={formulation!r}: the DAE formulations factor M(q) "
                         f"alone, and a SpatialModel's mass matrix is singular (4 G^T J G p = 0 "
                         f"for the Euler parameters p); use formulation='index1' or "
                         f"'state_space'.")
    if dae_code and model.nc == 0:
        raise ValueError(f"formulation={formulation!r}: {model.name} has no constraints; the "
                         f"DAE formulations need some (use formulation='index1').")
    if dae_code and baumgarte is not None:
        raise ValueError(f"baumgarte: Baumgarte stabilization belongs to the index-1 ODE, not "
                         f"to formulation={formulation!r}.")
    if consistent not in ("check", "project", "ignore"):
        raise ValueError(f"consistent must be 'check', 'project' or 'ignore', got {consistent!r}.")
    alpha, beta = baumgarte_pair(baumgarte)
    state_space = formulation == "state_space"
    prefer = None
    if independent is not None:
        if not state_space:
            raise ValueError("independent: only with formulation='state_space'.")
        names = list(model.coordinate_names)
        try:
            prefer = [names.index(c) if isinstance(c, str) else int(c) for c in independent]
        except ValueError:
            raise ValueError(f"independent: unknown coordinate in {list(independent)!r}; the "
                             f"model has {names}.") from None
        if any(not 0 <= i < model.nq for i in prefer):
            raise ValueError(f"independent: indices must be in [0, {model.nq}).")
    if state_space:  # issue 9
        if project:
            raise ValueError("project: the state-space formulation satisfies the constraints "
                             "by construction (dependent coordinates by Newton after every "
                             "step); leave project=False.")
        if baumgarte is not None:
            raise ValueError("baumgarte: not used by the state-space formulation, which "
                             "satisfies the constraints by construction.")
        if info.backend != "mbint":
            raise ValueError(f"method: {mname!r} cannot run on the state-space formulation: "
                             f"it is a SUNDIALS method with its own step loop, and the "
                             f"formulation must recover the dependent coordinates and check "
                             f"the partition after every accepted step (use one of mbint's "
                             f"own methods, e.g. 'rosenbrock_nystrom' or 'bdf').")

    # ---- t_span, state ----
    t0, tf = check.t_span(t_span)
    nq = model.nq
    handle = model._linalg_handle() if hasattr(model, "_linalg_handle") else model._mech_handle()
    linalg = -1 if linear_algebra is None else linalg_code(linear_algebra)
    if linear_algebra == "sparse" and formulation != "index1":
        raise ValueError(f"linear_algebra='sparse' serves the index-1 formulation only, "
                         f"not {formulation!r}.")

    def state(name, v, default):
        a = np.array(default if v is None else v, dtype=float).reshape(-1)
        if a.size != nq:
            raise ValueError(f"{name} must have nq = {nq} entries, got {a.size}.")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite.")
        return a

    q0 = state("q0", q0, model.q0)
    qd0 = state("qd0", qd0, model.qd0)

    # ---- consistent initial conditions ----
    chk = check_initial_conditions(model, q0, qd0, t0, tol)
    if chk["dependent"]:
        raise ValueError(
            f"{model.name}: the constraints are redundant or the configuration is singular at "
            f"q0: Phi_q has rank {chk['rank']} < nc = {model.nc}; rows depending on earlier "
            f"rows: {', '.join(chk['dependent'])}.  Remove the redundant joints, or move q0 away "
            f"from the singular configuration.")
    initial = dict(chk)
    if not chk["consistent"] and consistent == "check":
        raise ValueError(
            f"{model.name}: inconsistent initial conditions at t0 = {t0:g}: "
            f"max |Phi(q0)| = {chk['position']:.3e}, max |Phi_q qd0 + Phi_t| = "
            f"{chk['velocity']:.3e} (tolerance {chk['tol']:.1e}).  Pass consistent='project' "
            f"to project them onto the constraints, or fix q0 and qd0.")
    if consistent == "project" and model.nc > 0:
        ptol = 0.0 if proj_tol is None else check.positive("proj_tol", proj_tol)
        try:
            q0, qd0, rp, rv = _core.mech_project(handle, t0, q0, qd0, ptol,
                                                 0 if proj_max_iter is None else int(proj_max_iter))
        except RuntimeError as exc:
            raise ValueError(f"{model.name}: projecting the initial conditions failed: "
                             f"{exc}") from exc
        initial.update(position=rp, velocity=rv, consistent=True, projected=True)
    initial.update(q0=q0.copy(), qd0=qd0.copy())

    # ---- options (as solve_ivp): the caller's, else the model's settings, else defaults ----
    n = 2 * nq if not dae_code else 2 * nq + model.nc * (2 if formulation == "ggl" else 1)
    opts = _resolve_options(model, dict(rtol=rtol, atol=atol, first_step=first_step,
                                       max_step=max_step, min_step=min_step,
                                       max_steps=max_steps), fixed_step=h is not None)
    rtol = check.positive("rtol", opts["rtol"])
    mu = ", mu" if formulation == "ggl" else ""
    atol_a = check.atol_vector(opts["atol"], n, entries=f"2 nq = {n} entries" if not dae_code
                               else f"{n} entries (q, v, lambda{mu})")
    if formulation == "ggl" and mname == "ida" and np.ndim(opts["atol"]) == 0:
        # mu = 0 in the exact solution and is left out of IDA's error test: its atol
        # enters only IDA's Newton convergence test, where the q-level atol fails the
        # iteration at IDA's first steps (~1e-9 s at atol 1e-8; tests/test_dae.py)
        atol_a = np.array(atol_a, float)
        atol_a[2 * nq + model.nc:] = np.maximum(atol_a[2 * nq + model.nc:], 1.0)
    control = check.step_control(info, mname, h, controller, error_per_unit_step, safety,
                                 fac_min, fac_max)
    control["method_options"] = check.method_options(info, method_options)
    fast = (control["method_options"] or {}).get("fast")  # singular_perturbation
    if fast is not None and not (isinstance(fast, str) and fast == "auto"):
        control["method_options"]["fast"] = fast_state_indices(model, fast)
    bounds = check.step_bounds(opts["first_step"], opts["max_step"], opts["min_step"],
                               opts["max_steps"])
    options = dict(opts, rtol=rtol, h=h)
    te = check.t_eval(None if t_eval is None else np.asarray(t_eval, dtype=float).reshape(-1),
                      t0, tf)
    if events is not None and callable(events):
        events = [events]
    wrapped = None if events is None else [_wrap_event(g, nq) for g in events]
    ev, terminal, evdir = check.check_events(wrapped)
    switching = check.switching_flags(ev, info, mname)
    n_contacts = len(getattr(model, "contacts", ()))
    contact_sw = bool(contact_switching) and n_contacts > 0 and info.backend == "mbint"

    report, close = run_progress(progress, t0, tf, f"{model.name} {mname}")
    try:
        out = _core.mech_simulate(
            handle, mname, t0, tf, np.concatenate([q0, qd0]), atol_a, rtol, **control,
            **bounds, t_eval=te, dense_output=bool(dense_output), events=ev,
            terminal=terminal, direction=evdir, alpha=alpha, beta=beta, project=bool(project),
            proj_tol=0.0 if proj_tol is None else check.positive("proj_tol", proj_tol),
            proj_max_iter=0 if proj_max_iter is None else int(proj_max_iter),
            switching=switching, contact_switching=contact_sw, progress=report,
            independent=prefer, formulation=_core.formulations()[formulation],
            linalg=linalg)
    finally:
        close()
    out["n_state"] = n
    options["linear_algebra"] = out.get("linear_algebra", "dense")
    if dae_code:
        initial.update(lam0=np.asarray(out["y0"][2 * nq:2 * nq + model.nc], float).copy())
    t_contacts = None
    if contact_sw:  # the contact events follow the user's: split them off
        n_user = 0 if ev is None else len(ev)
        t_contacts = list(out["t_events"][n_user:])
        out["t_events"] = out["t_events"][:n_user]
        out["y_events"] = out["y_events"][:n_user]
    traj = Trajectory(model, out, method=mname, formulation=formulation,
                      baumgarte=(alpha, beta), projected=bool(project), initial=initial,
                      dense_output=bool(dense_output), has_events=ev is not None,
                      options=options)
    if contact_sw or switching is not None:
        traj.stats["nrestart"] = int(out["nrestart"])
    if state_space:
        traj._set_state_space(out, handle, proj_tol, proj_max_iter)
    if traj.sol is not None:
        traj.sol.method = mname  # evaluates dense records (llm)
    if t_contacts is not None:
        traj.t_contacts = t_contacts
    raise_if_interrupted(out, traj)
    return traj
