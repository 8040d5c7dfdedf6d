"""``mbint.simulate``: run a mechanism with any method of :func:`mbint.methods`.

A call reads as four phases: :func:`_validate` (the model, the method and the
formulation's rules from :mod:`mbint.mbs.formulations`), :func:`_initial_state` (the
consistency check and projection of (q0, qd0)), :func:`_run` (the options of
:func:`mbint.solve_ivp` and one call of the C core, ``_core.mech_simulate``, over the
formulation interface of csrc/mbs/formulation.h) and :func:`_trajectory` (the result).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np

from .. import _core
from .. import _validate as check
from .._interrupt import raise_if_interrupted
from ..methods import method_info, resolve
from ..multirate import fast_state_indices
from ..progress import run_cancel, run_progress
from ._kernels import baumgarte_pair, linalg_code
from .formulations import (TABLE, auto_formulation, formulation as _formulation,
                           supported_formulations)
from . import sensitivity
from .trajectory import Trajectory
from .._typing import ArrayLike, Events, Progress, TSpan
from ._model_types import Model

__all__ = ["simulate", "check_initial_conditions", "FORMULATIONS", "DAE_FORMULATIONS",
           "supported_formulations", "SETTINGS_KEYS", "DEFAULTS"]

#: formulations :func:`simulate` can build (:mod:`mbint.mbs.formulations`)
FORMULATIONS = tuple(TABLE)

#: the DAE formulations (y = (q, v, lambda[, mu]), M_p y' = f) and their codes
DAE_FORMULATIONS = {name: f.code for name, f in TABLE.items() if f.dae}

#: the options of :func:`simulate` a model may recommend in ``model.settings``
SETTINGS_KEYS = ("rtol", "atol", "first_step", "max_step", "min_step", "max_steps")

#: values of those options when neither the caller nor the model gives one (those of
#: :func:`mbint.solve_ivp`: first_step None = automatic, max_step inf = no bound,
#: max_steps None = the driver's 10**6)
DEFAULTS = dict(rtol=1e-3, atol=1e-6, first_step=None, max_step=np.inf, min_step=0.0,
                max_steps=None)


def _positive(name, v, allow_inf=False):
    """:func:`mbint._validate.positive` with a short path for a plain float."""
    if type(v) is float and v > 0 and (allow_inf or v < math.inf):
        return v
    return check.positive(name, v, allow_inf)


def _t_span(span):
    """:func:`mbint._validate.t_span` with a short path for a tuple or list of two plain
    finite floats or ints."""
    if type(span) in (tuple, list) and len(span) == 2:
        t0, tf = span
        if (type(t0) in (float, int) and type(tf) in (float, int)
                and math.isfinite(t0) and math.isfinite(tf)):
            return float(t0), float(tf)
    return check.t_span(span)


#: the C entry points' step bounds for DEFAULTS (what check.step_bounds makes of them)
_DEFAULT_BOUNDS = dict(first_step=0.0, max_step=0.0, min_step=0.0, max_steps=0)


def _step_bounds(opts):
    """:func:`mbint._validate.step_bounds` of the options, without the checks when they
    are the :data:`DEFAULTS`."""
    fs, ms, mn, msteps = (opts["first_step"], opts["max_step"], opts["min_step"],
                          opts["max_steps"])
    if (fs is None and msteps is None and type(ms) is float and ms == math.inf
            and type(mn) is float and mn == 0.0):
        return dict(_DEFAULT_BOUNDS)
    return check.step_bounds(fs, ms, mn, msteps)


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


#: relative tolerance of the rank of Phi_q by the SVD (nq < mbint.SPARSE_MIN_NQ):
#: singular values at most RANK_RTOL * max(1, s_max) count as zero
RANK_RTOL = 1e-10

#: tolerance of the sparse rank test (nq >= mbint.SPARSE_MIN_NQ): a row of Phi_q within
#: the angle asin(sqrt(GRAM_RTOL2)) = 1e-6 rad of the span of the earlier independent
#: rows is dependent (its pivot in the LDL^T of Phi_q Phi_q^T at most GRAM_RTOL2 times
#: its squared norm); an exactly dependent row has a pivot of order 1e-16 of it
GRAM_RTOL2 = 1e-12


def _sparse_phi_q(model, handle, t0, q0):
    """Phi_q(t0, q0) as a CSR matrix: from the mechanism's sparse kernels in O(nnz),
    else (no sparse kernels: the model's own kernel is dense) from the dense matrix."""
    import scipy.sparse as sp
    trip = _core.mech_phi_q_sparse(handle, float(t0), q0)
    if trip is None:
        return sp.csr_matrix(np.asarray(model.constraint_jacobian(t0, q0)))
    rows, cols, vals = trip
    return sp.csr_matrix((vals, (rows, cols)), shape=(model.nc, model.nq))  # sums repeats


def _phi_q_times(model, handle, t0, q0, v):
    """Phi_q(t0, q0) v (nc,) from the mechanism's sparse triplets (repeats summed) in
    O(nnz), else from the dense matrix."""
    trip = _core.mech_phi_q_sparse(handle, float(t0), q0)
    if trip is None:
        return np.asarray(model.constraint_jacobian(t0, q0)) @ v
    rows, cols, vals = trip
    return np.bincount(np.asarray(rows, np.intp), weights=np.asarray(vals) * v[cols],
                       minlength=model.nc)


def _first_columns(A, empty):
    """The first column of every row of the CSR matrix A (``empty`` for an empty row)."""
    if not A.nnz:
        return np.full(A.shape[0], empty)
    first = np.minimum.reduceat(A.indices, np.minimum(A.indptr[:-1], A.nnz - 1))
    return np.where(np.diff(A.indptr) > 0, first, empty)


def _envelope(G):
    """The size of the lower envelope of the symmetric CSR matrix G (envelope.h)."""
    i = np.arange(G.shape[0])
    return int((i - np.minimum(_first_columns(G, G.shape[0]), i)).sum())


def _dependent_rows_sparse(P):
    """(rank, indices of the rows of the CSR matrix P that depend on earlier rows) by the
    envelope LDL^T of P P^T (``_core.gram_dependent``, csrc/linalg/envelope.h): O(nnz)
    memory and time for a chain or tree whose joints are numbered along its bodies.  The
    rows are taken in their natural order, or, when that gives G a larger envelope, by
    their first column (a spatial model's normalization rows come first, one per body,
    and would couple with every joint row after them)."""
    G = (P @ P.T).tocsr()
    G.sum_duplicates()
    order = np.arange(P.shape[0])
    by_col = np.argsort(_first_columns(P, P.shape[1]), kind="stable")
    Gs = G[by_col][:, by_col].tocsr()
    if _envelope(Gs) < _envelope(G):
        order, G = by_col, Gs
    dep, rank = _core.gram_dependent(G.indptr.astype(np.intp), G.indices.astype(np.intp),
                                     G.data, GRAM_RTOL2)
    return rank, sorted(order[np.flatnonzero(dep)].tolist())


def check_initial_conditions(model: Model, q0: ArrayLike | None = None,
                             qd0: ArrayLike | None = None, t0: float = 0.0,
                             tol: float | None = None) -> dict[str, Any]:
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

    Notes
    -----
    Below :data:`mbint.SPARSE_MIN_NQ` coordinates the rank is that of the SVD of the
    dense Phi_q (singular values above :data:`RANK_RTOL` ``* max(1, s_max)``) and a row
    is dependent when appending it to the earlier independent rows adds a singular value
    at most :data:`RANK_RTOL` ``* max(1, max |Phi_q|)``.  From SPARSE_MIN_NQ on, Phi_q is
    sparse (the model's sparse kernels where it has them) and a row is dependent when it
    lies within the angle ``asin(sqrt(GRAM_RTOL2))`` = 1e-6 rad of the span of the
    earlier independent rows (the envelope LDL^T of Phi_q Phi_q^T, no nq x nq array):
    memory and time linear in nq for chains and trees whose joints are numbered along
    their bodies; the rank is nc minus the number of dependent rows.
    """
    return _check_initial(model, q0, qd0, t0, tol)


def _check_initial(model, q0, qd0, t0, tol, tree=False):
    """:func:`check_initial_conditions`; ``tree``: the joints form a kinematic tree
    (formulation="joint" took them), so Phi_q has full row rank at every configuration
    (each joint's rows have a nonsingular block in its child's coordinates) and the
    sparse rank test, O(nnz) but most of a short run's set-up, is not run."""
    q0 = model.q0 if q0 is None else np.asarray(q0, float)
    qd0 = model.qd0 if qd0 is None else np.asarray(qd0, float)
    nq, nc = model.nq, model.nc
    handle = model._linalg_handle()
    if nq < _core.MB_INDEX1_SPARSE_MIN_NQ:  # mbint.SPARSE_MIN_NQ
        # the residuals, the scale of tol and the rank of the dense Phi_q in one C call
        scale, pos, vel, rank, _ = _core.mech_initial_check(handle, float(t0), q0, qd0,
                                                            RANK_RTOL)
        dep = []
        if rank < nc:
            dep = _dependent_rows(np.asarray(model.constraint_jacobian(t0, q0)), RANK_RTOL)
    else:
        scale = max(float(np.abs(q0).max(initial=0)), float(np.abs(qd0).max(initial=0)))
        pos = vel = 0.0
        rank, dep = 0, []
        if nc:
            pos = float(np.abs(np.asarray(model.phi(t0, q0))).max())
            vel = np.asarray(model.phi_t(t0, q0)).copy()
            if tree:  # no rank test: Phi_q qd0 from the triplets, without a CSR matrix
                vel += _phi_q_times(model, handle, t0, q0, qd0)
                rank, dep = nc, []
            else:
                P = _sparse_phi_q(model, handle, t0, q0)
                vel += P @ qd0
                rank, dep = _dependent_rows_sparse(P)
            vel = float(np.abs(vel).max())
    tol = 1e-8 * max(1.0, scale) if tol is None else float(tol)
    out = dict(position=pos, velocity=vel, tol=tol, consistent=pos <= tol and vel <= tol,
               rank=rank, dependent=[])
    if dep:
        names = model.constraint_names
        out["dependent"] = [names[r] for r in dep]
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




@dataclass
class _Setup:
    """What :func:`_validate` settles: the model's handle, the method and the
    formulation (a row of :data:`~mbint.mbs.formulations.TABLE`) with its options, and
    the sizes nq, nc and n (the formulation's integrated state)."""

    model: object
    mname: str
    info: object
    form: object
    alpha: float
    beta: float
    prefer: list
    handle: object
    linalg: int
    nq: int
    nc: int
    n: int
    tree: object = None  # formulation="joint": the model's JointTree
    auto: str | None = None  # formulation="auto": the rule that chose form


def _independent_indices(model, independent):
    """``independent=`` (indices or names) as coordinate indices; ``"pivoting"`` as is."""
    if isinstance(independent, str):
        if independent != "pivoting":
            raise ValueError(f"independent: a sequence of coordinates, 'pivoting' or None, "
                             f"got {independent!r}.")
        return independent
    names = list(model.coordinate_names)
    try:
        prefer = [names.index(c) if isinstance(c, str) else int(c) for c in independent]
    except ValueError:
        raise ValueError(f"independent: unknown coordinate in {list(independent)!r}; the "
                         f"model has {names}.") from None
    if any(not 0 <= i < model.nq for i in prefer):
        raise ValueError(f"independent: indices must be in [0, {model.nq}).")
    return prefer


def _validate(model, method, formulation, baumgarte, project, independent, linear_algebra,
              consistent):
    """The model, method and formulation of a run, each option checked against the
    formulation's row of the table; ValueError naming the argument otherwise."""
    if getattr(model, "kind", None) not in ("planar", "spatial", "system"):
        raise ValueError(f"model must be a PlanarModel or a MechanicalSystem, "
                         f"got {type(model).__name__}.")
    mname = resolve(method)
    info = method_info(mname)
    auto = tree = None
    if isinstance(formulation, str) and formulation == "auto":
        formulation, auto, tree = auto_formulation(model, info, baumgarte, project,
                                                   independent, linear_algebra)
    form = _formulation(formulation)
    if not form.solves(info):
        ok = supported_formulations(info)
        raise ValueError(f"formulation={form.name!r}: method {mname!r} does not solve it; "
                         f"{mname!r} supports {ok}.  Methods that solve {form.name!r}: "
                         f"{', '.join(form.methods())}.")
    where = f"formulation={form.name!r}"
    if mname == "astable_block" and form.name == "index3":
        warnings.warn("astable_block on formulation='index3': its R(inf) = 1 (the diagonal Pade "
                      "approximant) leaves the multipliers' error undamped, so q is accurate "
                      "but lam and the acceleration level are not (the LS paper's Table 6 "
                      "reports this case 'Singular'); use lstable_block or another index.",
                      RuntimeWarning, stacklevel=3)
    nq, nc = model.nq, model.nc
    if form.dae and nc == 0:
        raise ValueError(f"{where}: {model.name} has no constraints; the DAE formulations need "
                         f"some (use formulation='index1').")
    if baumgarte is not None and not form.baumgarte:
        raise ValueError(f"baumgarte: Baumgarte stabilization belongs to the index-1 ODE, not "
                         f"to {where}, which " + ("satisfies the constraints by construction."
                                                  if not form.dae else "is a DAE."))
    if project and not form.project:
        raise ValueError(f"project: {where} satisfies the constraints by construction ("
                         + ("dependent coordinates by Newton after every step"
                            if form.independent else "joint coordinates") + "); leave "
                         "project=False.")
    if independent is not None and not form.independent:
        raise ValueError("independent: only with formulation='state_space'.")
    if linear_algebra == "sparse" and not (form.sparse or form.sparse_dae):
        raise ValueError(f"linear_algebra='sparse' serves the index1, state_space and DAE "
                         f"formulations only, not {form.name!r}.")
    if consistent not in ("check", "project", "ignore"):
        raise ValueError(f"consistent must be 'check', 'project' or 'ignore', got {consistent!r}.")
    alpha, beta = baumgarte_pair(baumgarte)
    prefer = None if independent is None else _independent_indices(model, independent)
    handle = model._linalg_handle()
    linalg = -1 if linear_algebra is None else linalg_code(linear_algebra)
    if form.sparse:
        _check_sparse_kernels(model, handle, linear_algebra)
        linalg = _state_space_linalg(model, info, form, linear_algebra, linalg)
    elif form.dae:
        linalg = _dae_linalg(model, mname, form, handle, linear_algebra, linalg)
    if form.tree and tree is None:
        tree = _joint_tree(model)
    return _Setup(model, mname, info, form, alpha, beta, prefer, handle, linalg, nq, nc,
                  2 * nq + form.multipliers * nc, tree, auto)  # form.size(model)


def _joint_tree(model):
    """The joint tree of a run on formulation="joint" (ValueError for other models)."""
    from .joint import joint_tree
    return joint_tree(model)


def _state_space_linalg(model, info, form, linear_algebra, linalg):
    """The ``linalg`` code of a run on the state-space formulation: its sparse mode
    (csrc/mbs/statespace_sparse.c) makes v'' O(nnz) but forms J1, J2 by differences of
    v'' (O(nd) evaluations), so "auto" takes it for the methods without a Jacobian only;
    an explicit ``linear_algebra="sparse"`` (or the model's) takes it for every method."""
    if form.name != "state_space" or not info.needs_jacobian:
        return linalg
    if (linear_algebra or getattr(model, "linear_algebra", None)) == "sparse":
        return linalg
    return linalg_code("dense")


def _dae_linalg(model, mname, form, handle, linear_algebra, linalg):
    """The ``linalg`` code of a run on a DAE formulation: its sparse mode (KLU, iteration
    matrices a M - J through the problem) serves only the methods flagged MB_LINSYS_MASS
    (bdf, radau_iia); for the others "auto" (and a model's own "sparse") is dense, and an explicit
    ``linear_algebra="sparse"`` a ValueError."""
    flags = next(d["flags"] for d in _core.methods() if d["name"] == mname)
    takes = form.sparse_dae and bool(flags & _core.MB_LINSYS_MASS)
    if linear_algebra == "sparse":
        if not takes:
            able = ", ".join(d["name"] for d in _core.methods()
                             if d["flags"] & _core.MB_LINSYS_MASS)
            on = ", ".join(f.name for f in TABLE.values() if f.sparse_dae)
            raise ValueError(f"linear_algebra='sparse' on formulation={form.name!r}: only "
                             f"{able} take the sparse DAE (on {on}), not "
                             f"{mname!r}; use linear_algebra='dense' or 'auto'.")
        _check_sparse_kernels(model, handle, linear_algebra)
        return linalg
    return linalg if takes else linalg_code("dense")


def _block_linalg(run, linear_algebra, method_options):
    """lstable_block takes the sparse DAE mode through its split Newton system only (r <= 4,
    newton="split": block_lstable.c): with other options "auto" (or a model's "sparse") is
    dense, and an explicit linear_algebra="sparse" a ValueError."""
    if run.mname != "lstable_block" or not run.form.dae or linear_algebra == "dense":
        return run
    r, newton = method_options.get("r"), method_options.get("newton")
    if not ((isinstance(r, int) and r > 4) or newton == "full"):
        return run
    if linear_algebra == "sparse":
        raise ValueError(f"linear_algebra='sparse': lstable_block solves the sparse DAE through "
                         f"its Newton system split into at most two n x n systems, which needs "
                         f"r <= 4 and newton='split' (got r={r!r}, newton={newton!r}).")
    return replace(run, linalg=linalg_code("dense"))


def _check_sparse_kernels(model, handle, linear_algebra):
    """ValueError when the run asks for the sparse index-1 solver (``linear_algebra``,
    else the model's setting) and the mechanism has no sparse kernels."""
    where = "linear_algebra" if linear_algebra is not None else "model.linear_algebra"
    if (linear_algebra or getattr(model, "linear_algebra", None)) != "sparse":
        return
    if _core.mech_info(handle)["sparse"]:
        return
    kind = {"planar": "a PlanarModel with Python forces (add_force)",
            "spatial": "a SpatialModel with callback forces (add_force: their derivatives are "
                       "differences over the whole state)",
            "system": "a MechanicalSystem"}[model.kind]
    raise ValueError(f"{where}='sparse': {model.name!r} is {kind}, which has no sparse kernels; "
                     f"only PlanarModels and SpatialModels without callback forces have them.  "
                     f"Use linear_algebra='dense' or 'auto'.")


def _state(model, name, v, default):
    """q0 or qd0 of a run as a float array of nq entries of its own (the caller's
    ``v`` copied; ``default`` the model's property, a new array each time)."""
    a = getattr(model, default) if v is None else np.array(v, dtype=float).reshape(-1)
    nq = model.nq
    if a.size != nq:
        raise ValueError(f"{name} must have nq = {nq} entries, got {a.size}.")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite.")
    return a


def _initial_state(run, t0, q0, qd0, consistent, tol, proj_tol, proj_max_iter):
    """(q0, qd0) of the run, checked (and projected with ``consistent="project"``), and
    the ``initial`` record of the trajectory (which holds the run's own q0, qd0)."""
    model = run.model
    q0 = _state(model, "q0", q0, "q0")
    qd0 = _state(model, "qd0", qd0, "qd0")
    initial = _check_initial(model, q0, qd0, t0, tol, tree=run.tree is not None)
    if initial["dependent"]:
        raise ValueError(
            f"{model.name}: the constraints are redundant or the configuration is singular at "
            f"q0: Phi_q has rank {initial['rank']} < nc = {model.nc}; rows depending on earlier "
            f"rows: {', '.join(initial['dependent'])}.  Remove the redundant joints, or move q0 "
            f"away from the singular configuration.")
    if not initial["consistent"] and consistent == "check":
        raise ValueError(
            f"{model.name}: inconsistent initial conditions at t0 = {t0:g}: "
            f"max |Phi(q0)| = {initial['position']:.3e}, max |Phi_q qd0 + Phi_t| = "
            f"{initial['velocity']:.3e} (tolerance {initial['tol']:.1e}).  Pass "
            f"consistent='project' to project them onto the constraints, or fix q0 and qd0.")
    if consistent == "project" and model.nc > 0:
        ptol = 0.0 if proj_tol is None else _positive("proj_tol", proj_tol)
        try:
            q0, qd0, rp, rv = _core.mech_project(run.handle, t0, q0, qd0, ptol,
                                                 0 if proj_max_iter is None else int(proj_max_iter))
        except RuntimeError as exc:
            raise ValueError(f"{model.name}: projecting the initial conditions failed: "
                             f"{exc}") from exc
        initial.update(position=rp, velocity=rv, consistent=True, projected=True)
    initial["q0"], initial["qd0"] = q0, qd0  # the run copies them into its y0
    return q0, qd0, initial


def _atol(run, atol):
    """atol over the formulation's integrated state ((q, qd), or the DAE's y)."""
    form, n = run.form, run.n
    if type(atol) is float and 0 <= atol < math.inf:  # as check.atol_vector
        atol_a = np.full(n, atol)
    else:
        mu = ", mu" if form.multipliers == 2 else ""
        atol_a = check.atol_vector(atol, n, entries=f"2 nq = {n} entries" if not form.dae
                                   else f"{n} entries (q, v, lambda{mu})")
    if form.multipliers == 2 and run.mname == "ida" and np.ndim(atol) == 0:
        # mu = 0 in the exact solution and is left out of IDA's error test: its atol
        # enters only IDA's Newton convergence test, where the q-level atol fails the
        # iteration at IDA's first steps (~1e-9 s at atol 1e-8; tests/test_dae.py)
        atol_a = np.array(atol_a, float)
        k = 2 * run.nq + run.nc
        atol_a[k:] = np.maximum(atol_a[k:], 1.0)
    return atol_a


def _check_relative_control(run, atol, q0, qd0):
    """ValueError for pure relative error control (atol 0) on a component of (q0, qd0)
    that is 0, or on the multipliers of a DAE formulation (computed in the run; mu is
    identically 0)."""
    if atol.all():  # no entry 0 (atol_vector: all >= 0): nothing to refuse
        return
    names = list(run.model.coordinate_names)
    nq = len(names)
    check.relative_control_weights(atol[:2 * nq], np.concatenate([q0, qd0]),
                                   names + [f"d/dt {c}" for c in names])
    if run.form.dae and np.any(atol[2 * nq:] == 0):
        raise ValueError(f"atol: the entries of the multipliers (lambda, mu) must be positive "
                         f"for formulation={run.form.name!r}: pure relative error control "
                         f"cannot weigh a multiplier that is zero.")


def _core_args(run, t0, tf, q0, qd0, opts, control, t_eval, dense_output, events, project,
               proj_tol, proj_max_iter, contact_switching, sens=None):
    """The options of a run checked and converted for the C core: the positional and
    keyword arguments of ``_core.mech_simulate`` (also of ``_core.MechStepper``, the
    run in pieces of :class:`mbint.Simulator`) and what the result needs of them."""
    model, info, mname = run.model, run.info, run.mname
    rtol = _positive("rtol", opts["rtol"])
    control["method_options"] = check.method_options(info, control.pop("method_options"))
    fast = (control["method_options"] or {}).get("fast")  # singular_perturbation
    if fast is not None and not (isinstance(fast, str) and fast == "auto"):
        control["method_options"]["fast"] = fast_state_indices(model, fast, t0, q0, qd0)
    bounds = _step_bounds(opts)
    check.fixed_steps(control["h"], t0, tf, bounds["max_steps"])
    atol = _atol(run, opts["atol"])
    _check_relative_control(run, atol, q0, qd0)
    te = check.t_eval(None if t_eval is None else np.asarray(t_eval, dtype=float).reshape(-1),
                      t0, tf)
    if events is not None and callable(events):
        events = [events]
    wrapped = None if events is None else [_wrap_event(g, model.nq) for g in events]
    ev, terminal, evdir = check.check_events(wrapped)
    switching = check.switching_flags(ev, info, mname)
    contact_sw = (bool(contact_switching) and len(getattr(model, "contacts", ())) > 0
                  and info.backend == "mbint")
    args = (run.handle, mname, t0, tf, np.concatenate([q0, qd0]), atol, rtol)
    kwargs = dict(**control, **bounds, t_eval=te, dense_output=bool(dense_output), events=ev,
                  terminal=terminal, direction=evdir, formulation=run.form.code,
                  alpha=run.alpha, beta=run.beta, project=bool(project),
                  proj_tol=0.0 if proj_tol is None else _positive("proj_tol", proj_tol),
                  proj_max_iter=0 if proj_max_iter is None else int(proj_max_iter),
                  switching=switching, contact_switching=contact_sw, independent=run.prefer,
                  linalg=run.linalg)
    if run.tree is not None:
        kwargs["tree"] = run.tree._handle
    if sens is not None:
        kwargs["sens"] = sens.core_arg()
    meta = dict(n_state=run.n, n_user_events=0 if ev is None else len(ev),
                contact_switching=contact_sw, switching=switching is not None, rtol=rtol)
    return args, kwargs, meta


def _with_meta(out, meta, opts, h):
    """The C core's dict with what :func:`_trajectory` needs of the options, and the
    options used."""
    for k in ("n_state", "n_user_events", "contact_switching", "switching"):
        out[k] = meta[k]
    return out, dict(opts, rtol=meta["rtol"], h=h, linear_algebra=out["linear_algebra"])


def _run(run, t0, tf, q0, qd0, opts, h, control, t_eval, dense_output, events, project,
         proj_tol, proj_max_iter, contact_switching, progress, sens=None):
    """One call of the C core; returns its dict and the options used."""
    args, kwargs, meta = _core_args(run, t0, tf, q0, qd0, opts, control, t_eval, dense_output,
                                    events, project, proj_tol, proj_max_iter, contact_switching,
                                    sens)
    report, close = run_progress(progress, t0, tf, f"{run.model.name} {run.mname}")
    try:
        out = _core.mech_simulate(*args, **kwargs, progress=report, cancel=run_cancel())
    finally:
        close()
    return _with_meta(out, meta, opts, h)


def _trajectory(run, out, options, initial, dense_output, project, proj_tol, proj_max_iter):
    """The Trajectory of a run: the contacts' instants split from the user's events, the
    DAE's lambda(t0), the state space's partitions and full-state dense output."""
    model, form = run.model, run.form
    if form.dae:
        k = 2 * model.nq
        initial.update(lam0=np.asarray(out["y0"][k:k + model.nc], float).copy())
    t_contacts = None
    if out["contact_switching"]:  # the contact events follow the user's: split them off
        n_user = out["n_user_events"]
        t_contacts = list(out["t_events"][n_user:])
        out["t_events"] = out["t_events"][:n_user]
        out["y_events"] = out["y_events"][:n_user]
    traj = Trajectory(model, out, method=run.mname, formulation=form.name,
                      baumgarte=(run.alpha, run.beta), projected=bool(project), initial=initial,
                      dense_output=bool(dense_output), has_events=out["n_user_events"] > 0,
                      options=options)
    if out["contact_switching"] or out["switching"]:
        traj.stats["nrestart"] = int(out["nrestart"])
    if form.independent:  # the state space
        traj._set_state_space(out, run.handle, proj_tol, proj_max_iter)
    if form.tree:  # joint coordinates
        run.tree.attach(traj, out)
    if t_contacts is not None:
        traj.t_contacts = t_contacts
    raise_if_interrupted(out, traj)
    return traj


def simulate(model: Model, t_span: TSpan, method: str | type = "dopri5",
             formulation: str = "index1", q0: ArrayLike | None = None,
             qd0: ArrayLike | None = None, project: bool = False,
             baumgarte: float | tuple[float, float] | None = None, consistent: str = "check", *,
             t_eval: ArrayLike | None = None, dense_output: bool = False, events: Events = None,
             rtol: float | None = None, atol: ArrayLike | None = None, h: float | None = None,
             first_step: float | None = None, max_step: float | None = None,
             min_step: float | None = None, max_steps: int | None = None,
             controller: str | None = None, error_per_unit_step: bool = False,
             safety: float | None = None, fac_min: float | None = None,
             fac_max: float | None = None, tol: float | None = None,
             proj_tol: float | None = None, proj_max_iter: int | None = None,
             contact_switching: bool = True, independent: Sequence[int | str] | None = None,
             progress: Progress = False, linear_algebra: str | None = None,
             sensitivities: Sequence[str] | Mapping[str, float | None] | None = None,
             **method_options: Any) -> Trajectory:
    """Simulate a mechanism with a method of :func:`mbint.methods`.

    Parameters
    ----------
    model : PlanarModel, SpatialModel or MechanicalSystem
    t_span : 2-sequence of float
        ``(t0, tf)`` [s].
    method : str
        Any name of :func:`mbint.methods` (aliases as in :func:`mbint.solve_ivp`).
    formulation : str
        How the mechanism is presented to the method (:func:`mbint.formulations`, whose
        ``solves`` says which methods take which): ``"index1"`` the index-1 ODE in
        y = (q, q') (LLM eqs 9-15); ``"state_space"`` the reduced ODE of the independent
        coordinates (RN eqs 4-10; ``traj.partitions``; mbint's own methods); the DAEs
        ``"index1_dae"``, ``"index2"``, ``"index3"`` (LS eqs 1-4) and ``"ggl"`` in
        y = (q, v, lambda[, mu]), from the consistent lambda(t0), ``traj.lam`` the
        integrated lambda; ``"joint"`` the joint coordinates of a
        :class:`~mbint.mbs.urdf.UrdfModel`'s tree or of a PlanarModel that is a tree of
        revolute and translational joints, y = (x, x') with x'' by the articulated-body
        algorithm (:mod:`mbint.mbs.joint`; the trajectory in body coordinates,
        ``traj.x_joint``, ``traj.xd_joint``; ``traj.lam`` the mechanism's multipliers at
        each output's (q, q'), from its index-1 saddle-point system).  ``"auto"``
        picks one by a measured rule (:func:`mbint.mbs.formulations.auto_formulation`,
        docs/choosing.md): ``"joint"`` for a tree that it accepts of at most
        :data:`~mbint.mbs.formulations.AUTO_JOINT_MAX` joints (explicit methods; 200 spatial, 50 planar
        for implicit ones, whose Jacobian on "joint" is dense), else ``"index1"``; the choice
        is ``traj.formulation``, the rule ``traj.options["formulation_rule"]``.  The
        default stays ``"index1"``.
    q0, qd0 : array_like, shape (nq,), optional
        Initial state (default: the model's) [m, rad; m/s, rad/s].
    project : bool
        Project q, q' onto the position and velocity constraints after every accepted
        step (not with SUNDIALS methods, nor the state space).
    baumgarte : float or (alpha, beta), optional
        Baumgarte terms gamma - 2 alpha Phi' - beta^2 Phi (index-1 ODE only).
    consistent : {"check", "project", "ignore"}
        ``"check"`` raises ValueError stating the residuals of inconsistent (q0, qd0);
        ``"project"`` projects them first; redundant constraints or a singular
        configuration raise ValueError naming the rows in every mode.
    rtol, atol, first_step, max_step, min_step, max_steps : optional
        As in :func:`mbint.solve_ivp`; ``atol`` a scalar or one entry per component of
        the formulation's state over (q, q') (2 nq; the state space maps it to its
        coordinates), or (q, v, lambda[, mu]) for a DAE.  None takes
        ``model.settings``, else :data:`DEFAULTS`; the values used are in
        ``traj.options``.
    t_eval, dense_output, h, controller, error_per_unit_step, safety, fac_min, fac_max
        As in :func:`mbint.solve_ivp`.
    events : callable or list of callables
        ``g(t, q, qd)`` with ``terminal``, ``direction`` and ``switching`` attributes.
    tol : float, optional
        Tolerance of the initial-condition check (:func:`check_initial_conditions`).
    proj_tol, proj_max_iter : optional
        Tolerance (max norm of Phi, Phi') and iterations of the projection; with the
        state space those of Newton for the dependent coordinates (1e-10, 10).
    contact_switching : bool
        Penalty contacts of a :class:`PlanarModel` become switching events (LLM section
        3): steps end at the contact instants (``traj.t_contacts``) and restart there.
    independent : sequence of int or str, or "pivoting", optional
        State space only: coordinates to keep independent where the configuration
        allows (joint angles: fewer steps for Rosenbrock methods on stiff springs).
        None (default): those in which the stiff force elements act, measured at t0 from
        the diagonals of the force Jacobians (a force linear in them stays linear in the
        integrated coordinates); ``"pivoting"``: the RN paper's Gauss-Jordan full pivoting
        alone.
    progress : bool or callable
        A progress bar, or ``progress(t)`` at most every 0.1 s of wall time.
    linear_algebra : {"auto", "dense", "sparse"}, optional
        The saddle-point and Newton systems by sparse KLU ("auto": from
        :data:`mbint.SPARSE_MIN_NQ` coordinates); ``traj.options["linear_algebra"]``.
        On ``"index1"`` for every method; on ``"index3"``, ``"index1_dae"``, and on
        ``"index2"`` and ``"ggl"`` of models without drivers, for ``bdf`` (the methods that
        take the sparse DAE mode); other methods are dense there ("sparse" a ValueError).
        On ``"state_space"`` the partition, Phi_u and v'' are sparse for every method
        ("auto": for methods without a Jacobian only; the implicit methods' Jacobian in
        the independent coordinates stays dense, by differences of v'').
    **method_options
        The chosen method's own options; ``fast=`` of ``singular_perturbation`` takes
        bodies (the coordinates a force or constraint acts on:
        :func:`mbint.multirate.fast_state_indices`), coordinate names or indices, or
        "auto".
    sensitivities : sequence of str or mapping of str to atol, optional
        Parameters (``"spring.k"``, ``"q0[i]"``: :mod:`mbint.mbs.sensitivity`): ``traj.sens_q``.

    Returns
    -------
    Trajectory
        Time series component-major (``traj.q`` of shape (nq, m)).

    Raises
    ------
    ValueError
        Bad arguments (also a fixed step needing more than ``max_steps`` steps, as in
        :func:`mbint.solve_ivp`; atol 0 on a component that is 0; a sparse solver for a
        model without sparse kernels), inconsistent initial conditions (with
        ``"check"``), or redundant / singular constraints.
    Exception
        A Python callback (a force, an event, a kernel) that raises stops the run: its
        exception propagates with the trajectory so far as ``exc.result``.
    """
    run = _validate(model, method, formulation, baumgarte, project, independent,
                    linear_algebra, consistent)
    run = _block_linalg(run, linear_algebra, method_options)
    t0, tf = _t_span(t_span)
    q0, qd0, initial = _initial_state(run, t0, q0, qd0, consistent, tol, proj_tol,
                                      proj_max_iter)
    opts = _resolve_options(model, dict(rtol=rtol, atol=atol, first_step=first_step,
                                       max_step=max_step, min_step=min_step,
                                       max_steps=max_steps), fixed_step=h is not None)
    control = check.step_control(run.info, run.mname, h, controller, error_per_unit_step,
                                 safety, fac_min, fac_max)
    control["method_options"] = method_options
    run, sens = sensitivity.prepare(run, sensitivities, events, dense_output, opts, t0, q0, qd0)
    out, options = _run(run, t0, tf, q0, qd0, opts, h, control, t_eval, dense_output, events,
                        project, proj_tol, proj_max_iter, contact_switching, progress, sens)
    traj = _trajectory(run, out, options, initial, dense_output, project, proj_tol,
                       proj_max_iter)
    sensitivity.attach(traj, out, sens)
    if run.auto is not None:  # formulation="auto": traj.formulation is the one it took
        traj.options.update(formulation_requested="auto", formulation_rule=run.auto)
    return traj
