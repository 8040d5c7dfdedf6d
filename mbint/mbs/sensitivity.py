"""Forward parameter sensitivities of a mechanism's run: ``simulate(..., sensitivities=...)``
(issue 26).

A parameter is named by a string:

``"<element>.<column>"``
    A column of the C table row of a named element of a :class:`~mbint.PlanarModel` or
    :class:`~mbint.SpatialModel` (the column names of ``_core.planar_layout()`` /
    ``_core.spatial_layout()``): a body's ``mass`` and ``inertia`` (spatial: ``mass``,
    ``Jxx`` .. ``Jyz``); a force element's ``k``, ``c``, ``L0`` (aliases ``length0``,
    ``angle0``), its actuator's time function ``fa_c0``, ``fa_c1``, ``fa_c2``, ``fa_a``
    (alias ``amplitude``), ``fa_w``, ``fa_psi``, a contact's ``K``, ``cd``; a joint's
    location ``si_x``, ``si_y`` (``sj_*``, spatial ``*_z``), a distance joint's ``L``, a
    driver's time function ``c0``, ``c1``, ``c2``, ``a`` (alias ``amplitude``), ``w``,
    ``psi``.  A spatial element of several C rows takes ``"<element>[r].<column>"``.
``"q0[i]"``, ``"qd0[i]"``
    An initial coordinate or velocity, by index or by coordinate name
    (``"q0[body1.theta]"``).

``sensitivities`` is a sequence of names, or a mapping of names to the absolute tolerance
of each parameter's sensitivities (in [unit of y]/[unit of p]; None: the run's atol / |p|,
CVODES' choice, and for the index-1 multipliers of ``index1_dae`` at least
1e-10 max|lambda(t0)| / |p|; ``math.inf``: out of the error test, CVODES' ``errconS`` off).  The default
can be too strict where a parameter moves the state little: the stiff double pendulum's
``rsda2.k`` at rtol 1e-7, atol 1e-9 made bdf's Newton fail (s = dq/dk ~ 1e-9 rad/(N m/rad)
held to 3e-15) where ``{"rsda2.k": 1e-12}`` runs in 264 steps.

The sensitivities are those of the run :func:`~mbint.simulate` makes: an initial state
is consistent, so a parameter that moves the constraints (a joint's location, a q0
entry) moves (q0, qd0) as ``consistent="project"`` does, to first order the
minimum-norm corrections of :mod:`mbint.mbs` ``project.h``:

    s_q(t0)  = P e_i (q0[i]),   -Phi_q^+ Phi_p (a model parameter),
    s_q'(t0) = -Phi_q^+ (D s_q + (Phi_q q' + Phi_t)_p)    (+ P e_i for qd0[i]),

with Phi_q^+ = Phi_q^T (Phi_q Phi_q^T)^-1, P = I - Phi_q^+ Phi_q and D the derivative
of Phi_q q' + Phi_t in q (centred differences of the kernels); the C side then carries
them into the formulation's own state (its lambda(t0) by differences of its initial
state, ``csrc/python/sens_mech.c``).

How: core/sens.h's augmented problem over the formulation's, integrated by the run's
method on the same steps, the sensitivities in the error test with atol / |p| (CVODES'
convention; ``traj.sens_y`` holds those of the formulation's state, the DAEs' lambda
included).  J s with the formulation's Jacobian (:data:`JAC_RHS`); df/dp by a centred
difference in p alone (exact for a force element's k, c and actuator coefficients, in
which f is linear).  :data:`NEWTON_METHODS` factor one n x n matrix for y and every s
(:data:`BLOCK_MODE`); the other implicit methods take the exact dense Jacobian of the
augmented problem, the explicit ones none.

Supported: ``"index1"``, ``"index3"``, ``"index2"``, ``"index1_dae"``, ``"ggl"`` and
``"joint"`` (on ``"joint"`` not a body's mass or inertia nor a joint's entry: the tree
copies them when it opens), mbint's own methods, dense linear algebra.  Refused with a
ValueError naming the reason: ``"state_space"`` (it changes coordinates during the run),
``project=True``, SUNDIALS methods, sparse linear algebra, events, dense output.  Known
limit: ``"index1_dae"`` with bdf collapses its steps on the stiff double pendulum
(tests/test_sens_mech_fd.py, xfail; radau_iia passes).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import _core
from ._kernels import linalg_code

#: methods that factor the problem's structured iteration matrices (linsys.h) for a
#: Newton iteration: they converge on the block-diagonal matrices of sens.h (one n x n
#: LU for y and every s_k, CVODES' simultaneous corrector); every other method takes the
#: exact dense Jacobian of the augmented problem (the Rosenbrock methods, whose stages
#: are linear in it, the LLM, the fixed-step collocation methods) or none (explicit ones)
NEWTON_METHODS = frozenset({"bdf", "radau_iia", "lstable_block"})
#: sens.h's block_newton for them (1: block diagonal; 2: with the B_k blocks, the exact
#: iteration matrix by forward substitution over one n x n LU) and jac_rhs (J s with the
#: formulation's Jacobian, only df/dp differenced).  Measured on the stiff double
#: pendulum (k2, c2, theta1(0); t <= 0.3 s): with differences for J s, bdf at rtol 1e-7,
#: atol 1e-9 and radau_iia at rtol 1e-9, atol 1e-11 stopped at max_steps (Newton failures:
#: the round-off of the differences); with jac_rhs they run in 341 and 808 steps, the
#: sensitivities within 1.1e-6 of the differences' oracle; block mode 2 took radau_iia from
#: 0.118 to 0.074 s there.
BLOCK_MODE = 2
JAC_RHS = True

#: force elements whose generalized force is linear in k, c and the actuator's c0, c1, c2, a
_LINEAR_KINDS = frozenset({"tsda", "rsda", "generalized"})
_ALIASES = {"length0": "L0", "angle0": "L0", "amplitude": None}
_TABLES = ("body", "joint", "force")
_NAME = re.compile(r"^(?P<el>.+?)(\[(?P<r>\d+)\])?\.(?P<col>[A-Za-z_][A-Za-z_0-9]*)$")
_IC = re.compile(r"^(?P<which>qd?0)\[(?P<i>.+)\]$")


@dataclass
class Parameter:
    """One parameter of a sensitivity run: its name, value and unit, where it lives
    (``table`` 0 bodies, 1 joints, 2 forces, with its row and column; -1 for an initial
    condition, ``index`` its coordinate)."""

    name: str
    value: float
    unit: str
    table: int = -1
    row: int = -1
    column: str = ""
    index: int = -1
    linear: bool = False  # f is linear in it (a force element's k, c, actuator coefficient)
    atol: float | None = None  # of its sensitivities; None: the run's atol / |value| (module doc)


@dataclass
class Sensitivities:
    """The parameters of a run and the argument of ``_core.mech_simulate(sens=...)``."""

    parameters: list = field(default_factory=list)
    s0: Any = None
    block_newton: int = 0  # sens.h: 1 block-diagonal, 2 with the B_k blocks
    forward: bool = False
    jac_rhs: bool = False  # sens.h: J s with the base's Jacobian (only df/dp differenced)

    def core_arg(self) -> tuple:
        specs = [(p.table, p.row, p.column, abs(p.value) if p.value != 0 else 1.0, p.linear,
                  0.0 if p.atol is None else p.atol) for p in self.parameters]
        return (specs, np.ascontiguousarray(self.s0, float).reshape(-1),
                int(self.block_newton), int(self.forward), int(self.jac_rhs))


def _coord_index(model, where, text):
    names = list(model.coordinate_names)
    if text in names:
        return names.index(text)
    try:
        i = int(text)
    except ValueError:
        raise ValueError(f"sensitivities: {where}: unknown coordinate {text!r}; the model's "
                         f"are {', '.join(names)} (or an index 0..{len(names) - 1}).") from None
    if not 0 <= i < len(names):
        raise ValueError(f"sensitivities: {where}: index {i} out of range 0..{len(names) - 1}.")
    return i


def _spatial_rows(elements, skip=()):
    """{name: (first row, rows)} of a spatial model's elements in their C table."""
    rows, r = {}, 0
    for e in elements:
        if e.kind in skip:
            continue
        rows[e.name] = (r, e, len(e.prims))
        r += len(e.prims)
    return rows


def _element_row(model, name, el, r):
    """(table, row, element) of an element name (bodies, joints, forces)."""
    spatial = model.kind == "spatial"
    for b in model.bodies:
        if b.name == el:
            return 0, b.index, b
    if spatial:
        tables = ((1, _spatial_rows(model.joint_elements)),
                  (2, _spatial_rows(model.force_elements, ("python", "cforce"))))
        for table, rows in tables:
            if el in rows:
                first, e, n = rows[el]
                if n > 1 and r is None:
                    raise ValueError(f"sensitivities: {name!r}: element {el!r} has {n} C rows; "
                                     f"name one as '{el}[r].<column>' (r < {n}).")
                if (r or 0) >= n:
                    raise ValueError(f"sensitivities: {name!r}: row {r} of {el!r} (it has {n}).")
                return table, first + (r or 0), e
    else:
        for row, e in enumerate(model.joint_elements):
            if e.name == el:
                return 1, row, e
        for row, e in enumerate([e for e in model.force_elements if e.kind != "python"]):
            if e.name == el:
                return 2, row, e
    known = [b.name for b in model.bodies] + [e.name for e in model.joint_elements] + [
        e.name for e in model.force_elements]
    raise ValueError(f"sensitivities: {name!r}: no body, joint or force element {el!r} in the "
                     f"model; it has {', '.join(known)}.")


def _column(table, e, col):
    if col in _ALIASES:
        alias = _ALIASES[col]
        if alias is None:  # amplitude: of the driver's or the actuator's time function
            return "a" if table == 1 else "fa_a"
        return alias
    return col


def _unit(model, table, e, col):
    """The SI unit of a table entry (where known; "" otherwise)."""
    spatial = model.kind == "spatial"
    if table == 0:
        return "kg" if col == "mass" else "kg*m**2"
    if re.match(r"^(si|sj|p0)_[xyz]$", col) or col in ("ri", "rj", "L", "z0", "bump_x",
                                                       "bump_r", "wheel_r"):
        return "m"
    if re.match(r"^(ni|nrm|ai|bi|aj|bj)_[xyz]$", col) or col == "e":
        return "1"
    rot = getattr(e, "kind", "") == "rsda"
    if table == 2 and col in ("k", "c", "L0"):
        return {"k": "N*m/rad" if rot else "N/m", "c": "N*m*s/rad" if rot else "N*s/m",
                "L0": "rad" if rot else "m"}[col]
    if col in ("K", "cd"):
        return "N/m" if col == "K" else "N*s/m"
    if col == "phi0":
        return "rad"
    base = col[3:] if col.startswith("fa_") else col
    if base in ("w", "psi"):
        return "rad/s" if base == "w" else "rad"
    if base in ("c0", "c1", "c2", "a"):
        if table == 2:
            u = "N*m" if rot else "N"
            if getattr(e, "kind", "") == "generalized" and not spatial:
                u = "N*m" if int(e.params.get("coord", 0)) % 3 == 2 else "N"
        else:
            coord = int(getattr(e, "params", {}).get("coord", 2)) if not spatial else 0
            u = "rad" if e.kind == "driver_angle" or coord % 3 == 2 else "m"
        return {"c0": u, "c1": f"{u}/s", "c2": f"{u}/s**2", "a": u}[base]
    return ""


def parameter(model, handle, name, q0, qd0) -> Parameter:
    """The :class:`Parameter` of a name (the module's spelling), its value read from the
    C tables of ``handle`` (or q0, qd0)."""
    if not isinstance(name, str):
        raise TypeError(f"sensitivities: a parameter is named by a string, got {name!r}.")
    m = _IC.match(name)
    if m:
        i = _coord_index(model, name, m.group("i"))
        unit = model.coordinate_units[i] or "1"
        qd = m.group("which") == "qd0"
        return Parameter(name, float((qd0 if qd else q0)[i]), f"{unit}/s" if qd else unit,
                         index=i + (model.nq if qd else 0))
    m = _NAME.match(name)
    if getattr(model, "kind", None) not in ("planar", "spatial") or m is None:
        raise ValueError(f"sensitivities: {name!r}: a parameter is 'q0[i]', 'qd0[i]' or "
                         f"'<element>.<column>' of a PlanarModel or SpatialModel.")
    r = None if m.group("r") is None else int(m.group("r"))
    table, row, e = _element_row(model, name, m.group("el"), r)
    col = _column(table, e, m.group("col"))
    try:
        value = _core.mech_param(handle, table, row, col)
    except ValueError as exc:
        raise ValueError(f"sensitivities: {name!r}: {exc}") from None
    linear = (table == 2 and getattr(e, "kind", "") in _LINEAR_KINDS
              and col in ("k", "c", "fa_c0", "fa_c1", "fa_c2", "fa_a"))
    return Parameter(name, float(value), _unit(model, table, e, col), table, row, col, linear)


def own_handle(model, handle):
    """A handle of the run's own (the model's C tables built anew): the sensitivities
    perturb its entries during the run (and restore them), which must not reach another
    run of the same model in another thread.  A MechanicalSystem's handle is its own
    kernels (only initial conditions are its parameters): the same handle."""
    kind = getattr(model, "kind", None)
    if kind == "planar":
        c = model.compile()
        py = [e for e in model.force_elements if e.kind == "python"]
        extra = model._python_forces(py) if py else None
        own = _core.mech_planar(c.bodies, c.gravity, c.joints, np.array(c.forces), c.nc, extra)
        _core.mech_set_linalg(own, linalg_code(model._linear_algebra))
        return own
    if kind == "spatial":
        own = copy.copy(model)  # the same elements, packed into tables of its own
        own._compiled = None
        return own._linalg_handle()
    return handle


def _pinv_apply(P, r):
    """Phi_q^+ r = Phi_q^T (Phi_q Phi_q^T)^-1 r."""
    return P.T @ np.linalg.solve(P @ P.T, r)


def _vel_residual(handle, t0, q, qd):
    P = np.asarray(_core.mech_eval(handle, "phi_q", t0, q), float)
    return P @ qd + np.asarray(_core.mech_eval(handle, "phi_t", t0, q), float)


def _initial(model, handle, p, t0, q0, qd0):
    """(s_q, s_qd) at t0 of one parameter (module docstring)."""
    nq = model.nq
    sq, sqd = np.zeros(nq), np.zeros(nq)
    if model.nc == 0:
        if p.table < 0:
            (sq if p.index < nq else sqd)[p.index % nq] = 1.0
        return sq, sqd
    P = np.asarray(_core.mech_eval(handle, "phi_q", t0, q0), float)
    e = 6e-6 * max(abs(p.value), 1.0)
    res_p = np.zeros(model.nc)
    if p.table < 0:
        ei = np.zeros(nq)
        ei[p.index % nq] = 1.0
        proj = ei - _pinv_apply(P, P @ ei)
        if p.index < nq:
            sq = proj
        else:
            sqd = proj
    elif p.table == 1:  # a joint's entry moves Phi and Phi_t: derivatives in p
        old = _core.mech_param(handle, p.table, p.row, p.column)
        try:
            _core.mech_param(handle, p.table, p.row, p.column, old + e)
            phi_p = np.asarray(_core.mech_eval(handle, "phi", t0, q0), float)
            vp = _vel_residual(handle, t0, q0, qd0)
            _core.mech_param(handle, p.table, p.row, p.column, old - e)
            phi_m = np.asarray(_core.mech_eval(handle, "phi", t0, q0), float)
            vm = _vel_residual(handle, t0, q0, qd0)
        finally:
            _core.mech_param(handle, p.table, p.row, p.column, old)
        sq = -_pinv_apply(P, (phi_p - phi_m) / (2 * e))
        res_p = (vp - vm) / (2 * e)
    if np.any(sq):
        h = 6e-6 * max(np.linalg.norm(q0), 1.0) / np.linalg.norm(sq)
        D = (_vel_residual(handle, t0, q0 + h * sq, qd0) -
             _vel_residual(handle, t0, q0 - h * sq, qd0)) / (2 * h)
        sqd = sqd - _pinv_apply(P, D + res_p)
    elif np.any(res_p):
        sqd = sqd - _pinv_apply(P, res_p)
    return sq, sqd


def setup(run, names, t0, q0, qd0, forward=False) -> Sensitivities:
    """The :class:`Sensitivities` of a run: the parameters, their consistent initial
    sensitivities and how the method integrates them."""
    if isinstance(names, str):
        names = [names]
    atols = dict(names) if isinstance(names, dict) else {}
    names = list(names)
    if not names:
        raise ValueError("sensitivities: name at least one parameter.")
    if len(set(names)) != len(names):
        raise ValueError(f"sensitivities: a parameter named twice in {names}.")
    model, handle = run.model, run.handle
    params = [parameter(model, handle, n, q0, qd0) for n in names]
    for p in params:
        a = atols.get(p.name)
        if a is not None:
            a = float(a)
            if not a > 0:
                raise ValueError(f"sensitivities: the atol of {p.name!r} must be positive (inf: "
                                 f"out of the error test), got {a}.")
            p.atol = min(a, 1e300)  # inf: weights 0 in every norm of the run
    s0 = np.zeros((len(params), 2 * model.nq))
    for k, p in enumerate(params):
        sq, sqd = _initial(model, handle, p, t0, q0, qd0)
        s0[k, :model.nq], s0[k, model.nq:] = sq, sqd
    return Sensitivities(params, s0, BLOCK_MODE if run.mname in NEWTON_METHODS else 0,
                         bool(forward), JAC_RHS)


def prepare(run, sensitivities, events, dense_output, opts, t0, q0, qd0):
    """(run, Sensitivities) of ``simulate(..., sensitivities=...)``: the request checked,
    the run on a handle of its own (:func:`own_handle`); (run, None) without."""
    if sensitivities is None:
        return run, None
    check_run(events, dense_output, opts["rtol"], sensitivities)
    run = replace(run, handle=own_handle(run.model, run.handle))
    return run, setup(run, sensitivities, t0, q0, qd0)


def check_run(events, dense_output, rtol, sensitivities) -> None:
    """What a sensitivity run does not take: ValueError naming it."""
    if sensitivities is None:
        return
    if events is not None:
        raise ValueError("sensitivities: events are not supported with sensitivities (their "
                         "roots would move with the parameters); run without events.")
    if dense_output:
        raise ValueError("sensitivities: dense_output is not supported with sensitivities; "
                         "use t_eval.")
    if np.ndim(rtol) != 0:
        raise ValueError("sensitivities: rtol must be a scalar with sensitivities.")


def attach(traj, out, sens: Sensitivities | None) -> None:
    """The sensitivities of the run's dict onto the Trajectory: ``sens_q``, ``sens_qd``
    (nq, np, nt), ``sens_y`` (the formulation's state), ``parameters``."""
    if sens is None:
        return
    traj.sens_q = np.asarray(out["sens_q"])
    traj.sens_qd = np.asarray(out["sens_qd"])
    traj.sens_y = np.asarray(out["sens_y"])
    traj.parameters = [dict(name=p.name, value=p.value, unit=p.unit) for p in sens.parameters]
    traj.stats["sens_nf_base"] = int(out["sens_nf_base"])
    traj.stats["sens_njac_base"] = int(out["sens_njac_base"])
