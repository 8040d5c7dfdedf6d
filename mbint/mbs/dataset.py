"""A :class:`Trajectory` as an ``xarray.Dataset``, saved to and loaded from NetCDF.

The file is plain NetCDF-4 (``netCDF4``): every number of the run is a variable
with its unit, every option an attribute, so ``xarray.open_dataset(path)`` (or any
NetCDF reader) reads it without mbint.  :func:`load` rebuilds the Trajectory: its
arrays, energies, violations and outputs from the file (bit for bit), the dense
output from its stored records (callable again), and a :class:`PlanarModel` from
its description (``PlanarModel.describe``).

Layout (dimensions in parentheses):

==========================  ============================================================
variable                    meaning
==========================  ============================================================
time (time)                 output times [s]
coordinate, constraint       names of the entries of q and of the rows of Phi
coordinate_unit, velocity_  (coordinate): the unit of each entry of q, qd, qdd
unit, acceleration_unit     (u, u/s, u/s**2; "1" for a dimensionless coordinate)
constraint_unit, constrai-  (constraint): the unit of each row of Phi, of its rate and
nt_rate_unit, constraint_   of its second derivative (the violations), and of its
acceleration_unit, lam_unit multiplier (J/u: N, N*m, N/m, J)
q, qd, qdd                  (coordinate, time); units per row: see units_variable
lam                         (constraint, time), Lagrange multipliers; units per row
kinetic_energy, potential_  (time) [J], when the model has energies
energy, total_energy
dissipated_work             (time) [J], work done against velocity-dependent forces
                            (left out for a t_eval grid without dense output)
violation_position, _velo-  (constraint, time): Phi, Phi_q qd + Phi_t, Phi_q qdd - gamma
city, _acceleration
output_<name>               (time) or (output_<name>_row, time): the model's outputs
sensor_<name>               (time, sensor_<name>_component): the model's sensors, with
                            the names of the components (x, y, z or value) and the unit
step_time, step_size,       (step): every accepted step
step_error
dense_t0, dense_h,          (segment), (dense_coefficient): the dense output's records
dense_degree, dense_offset,
dense_coefficients
event_time, event_index,    (occurrence), (coordinate, occurrence): events, flattened
event_q, event_qd
contact_time, contact_index (contact_occurrence): contact instants (simulate's t_contacts)
ss_log_time, ss_log_parti-  the state space with dense output: (ss_log), (ss_log,
tion, ss_log_state,         ss_state), (ss_partition, ss_independent): the run's log
ss_partitions               that maps the stored (v, v') records to (q, qd)
parameter, parameter_value, (parameter): ``simulate(sensitivities=...)``'s parameters, their
parameter_unit              values and SI units
sens_q, sens_qd             (coordinate, parameter, time): dq/dp, dq'/dp; the unit of each
                            entry in sens_q_unit, sens_qd_unit (coordinate, parameter)
==========================  ============================================================

Units: every ``units`` attribute is one SI unit string that pint (``pint.Unit``) and
UDUNITS parse (``"s"``, ``"J"``, ``"m/s**2"``, ``"N*m"``, ``"1"``).  A variable whose
rows have different units (q of a planar model: m, m, rad) has no ``units`` attribute
(CF allows one unit per variable); its attribute ``units_variable`` names the string
variable holding the unit of each row (itself of pint-parseable strings, ``""`` for a
row of unknown unit, as a MechanicalSystem without ``units=``).  When every row has
the same known unit the variable has ``units`` as well.

Attributes: ``mbint_version``, ``model_name``, ``model_class``, ``model_json``
(the description of a PlanarModel), ``method``, ``formulation``, ``status``,
``status_code``, ``message``, ``success``, ``stats_<name>``, ``options_json``,
``initial_json``, ``baumgarte_alpha``, ``baumgarte_beta``, ``projected``,
``ss_newton_tol``, ``ss_newton_max_iter`` (the state space).  A model description that
lacks a parameter of an element (or has one more) is refused on loading
(:mod:`mbint.mbs._description`).
"""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:  # annotations only
    from pathlib import Path

    import xarray

    from .trajectory import Trajectory

__all__ = ["to_xarray", "from_xarray", "save", "load", "StoredModel"]

_VIOL = ("position", "velocity", "acceleration")


def _json(obj):
    def default(o):
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, (np.floating, np.integer, np.bool_)):
            return o.item()
        return repr(o)

    return json.dumps(obj, default=default)


def _units(model, attr, n):
    """The unit of every row: ``model.<attr>``, with a body model's ``""`` (Euler
    parameters, normalization rows) written as ``"1"`` (dimensionless); ``""`` stays
    for a row whose unit is unknown (a MechanicalSystem without ``units=``)."""
    u = list(getattr(model, attr, [""] * n))
    if len(u) != n:
        return [""] * n
    if getattr(model, "kind", None) in ("planar", "spatial"):
        u = [v or "1" for v in u]
    return u


def _per(units, suffix):
    """``u + suffix`` (``"m/s"``; ``"1/s"`` for a dimensionless u), ``""`` when unknown."""
    return [(u + suffix) if u else "" for u in units]


def _lam_unit(u):
    """The unit of the multiplier of a row in unit u: J/u (N, N*m, N/m; J for a
    dimensionless row), ``""`` when u is unknown."""
    if not u:
        return ""
    return {"m": "N", "rad": "N*m", "m^2": "N/m", "1": "J"}.get(u, f"J/({u})")


def _unit_attrs(units, variable):
    """The unit attributes of a variable with one unit per row (``units``, kept in the
    coordinate variable ``variable``): ``units`` when every row has the same known unit,
    else no ``units`` (CF has one unit per variable) and ``units_variable`` naming the
    per-row units (each pint-parseable)."""
    same = set(units)
    if len(same) == 1 and "" not in same:
        return dict(units=units[0], units_variable=variable)
    return dict(units_variable=variable)


def to_xarray(traj: Trajectory, steps: bool = True, dense: bool = True,
              events: bool = True) -> xarray.Dataset:
    """The trajectory as an ``xarray.Dataset`` (see the module docstring).

    Parameters
    ----------
    traj : Trajectory
    steps, dense, events : bool
        Include the step history, the dense output's records, the events
        (their lengths differ between runs: :func:`mbint.ensemble` leaves them out).

    Returns
    -------
    xarray.Dataset
    """
    import xarray as xr

    m = traj.model
    cu = _units(m, "coordinate_units", m.nq)
    ku = _units(m, "constraint_units", m.nc)
    coords = {
        "time": ("time", np.asarray(traj.t, float), dict(units="s", long_name="time")),
        "coordinate": ("coordinate", np.array(list(m.coordinate_names), dtype=object)),
        "constraint": ("constraint", np.array(list(m.constraint_names), dtype=object)),
    }
    for name, dim, units in _row_units(cu, ku):
        coords[name] = (dim, np.array(units, dtype=object), dict(
            long_name=f"unit of each {dim} row of the variables naming it in units_variable"))
    data = _state_variables(traj, cu, ku)
    _add_energies(data, traj)
    _add_violations(data, traj, ku)
    _add_outputs(data, traj)
    _add_sensors(data, coords, traj)
    attrs = _attributes(traj)
    if steps:
        data["step_time"] = (("step",), np.asarray(traj.t_steps, float), dict(units="s"))
        data["step_size"] = (("step",), np.asarray(traj.h_steps, float), dict(units="s"))
        data["step_error"] = (("step",), np.asarray(traj.err_steps, float), dict(
            long_name="normalized error estimate of the step", units="1"))
    if dense and traj.sol is not None:
        _add_dense(data, attrs, traj)
    if events:
        _add_events(data, attrs, traj)
    _add_sensitivities(data, coords, traj, cu)
    ds = xr.Dataset({k: xr.Variable(*v) for k, v in data.items()},
                    coords={k: xr.Variable(*v) for k, v in coords.items()}, attrs=attrs)
    return ds


def _over(u, pu):
    """The unit of d(quantity in u)/d(parameter in pu), pint-parseable."""
    if not u or not pu:
        return ""
    return u if pu == "1" else f"{u}/({pu})"


def _add_sensitivities(data, coords, traj, cu):
    """sens_q, sens_qd with the parameter dimension (a run with sensitivities)."""
    params = getattr(traj, "parameters", None)
    if not params or getattr(traj, "sens_q", None) is None:
        return
    pu = [p["unit"] for p in params]
    coords["parameter"] = ("parameter", np.array([p["name"] for p in params], dtype=object))
    coords["parameter_value"] = ("parameter", np.array([p["value"] for p in params], float))
    coords["parameter_unit"] = ("parameter", np.array(pu, dtype=object))
    for name, units, what in (("sens_q", cu, "dq/dp"), ("sens_qd", _per(cu, "/s"), "dqd/dp")):
        table = np.array([[_over(u, p) for p in pu] for u in units], dtype=object)
        coords[f"{name}_unit"] = (("coordinate", "parameter"), table, dict(
            long_name=f"unit of each entry of {name}"))
        flat = set(table.reshape(-1))
        attrs = dict(long_name=f"forward sensitivities {what}", units_variable=f"{name}_unit")
        if len(flat) == 1 and "" not in flat:
            attrs["units"] = table.reshape(-1)[0]
        data[name] = (("coordinate", "parameter", "time"), np.asarray(getattr(traj, name)),
                      attrs)


def _row_units(cu, ku):
    """The per-row unit variables: (name, dimension, units)."""
    return [("coordinate_unit", "coordinate", cu),
            ("velocity_unit", "coordinate", _per(cu, "/s")),
            ("acceleration_unit", "coordinate", _per(cu, "/s**2")),
            ("constraint_unit", "constraint", ku),
            ("constraint_rate_unit", "constraint", _per(ku, "/s")),
            ("constraint_acceleration_unit", "constraint", _per(ku, "/s**2")),
            ("lam_unit", "constraint", [_lam_unit(u) for u in ku])]


def _state_variables(traj, cu, ku):
    """q, qd, qdd and lam with the unit of every row (``cu``, ``ku``)."""
    return {
        "q": (("coordinate", "time"), traj.q,
              dict(long_name="coordinates q", **_unit_attrs(cu, "coordinate_unit"))),
        "qd": (("coordinate", "time"), traj.qd,
               dict(long_name="velocities dq/dt",
                    **_unit_attrs(_per(cu, "/s"), "velocity_unit"))),
        "qdd": (("coordinate", "time"), traj.qdd,
                dict(long_name="accelerations d2q/dt2",
                     **_unit_attrs(_per(cu, "/s**2"), "acceleration_unit"))),
        "lam": (("constraint", "time"), traj.lam,
                dict(long_name="Lagrange multipliers lambda (M qdd + Phi_q^T lambda = Q)",
                     **_unit_attrs([_lam_unit(u) for u in ku], "lam_unit"))),
    }


def _add_energies(data, traj):
    """The energies and the dissipated work, when the model has energies."""
    try:
        E = traj.energy()
    except ValueError:  # a MechanicalSystem without an energy function
        return
    for name, v in zip(("kinetic_energy", "potential_energy", "total_energy"), E):
        data[name] = (("time",), np.asarray(v, float),
                      dict(units="J", long_name=name.replace("_", " ")))
    # accurate only from the dense output or at every step (not on a coarse t_eval)
    accurate = traj.sol is not None or len(traj.t) >= len(traj.t_steps) + 1
    W = traj.dissipated_work() if accurate else None
    if W is not None:
        data["dissipated_work"] = (("time",), W, dict(
            units="J", long_name="work done against velocity-dependent forces (dampers)",
            note="total_energy + dissipated_work is constant for a model without "
                 "actuators or driven joints"))


def _add_violations(data, traj, ku):
    """The constraint residuals at the three levels, every row."""
    V = traj.violation(per_row=True)
    for name, v in zip(_VIOL, V):
        suffix, var = {"position": ("", "constraint_unit"),
                       "velocity": ("/s", "constraint_rate_unit"),
                       "acceleration": ("/s**2", "constraint_acceleration_unit")}[name]
        data[f"violation_{name}"] = (("constraint", "time"), np.asarray(v, float), dict(
            long_name={"position": "Phi", "velocity": "Phi_q qd + Phi_t",
                       "acceleration": "Phi_q qdd - gamma"}[name],
            **_unit_attrs(_per(ku, suffix), var)))


def _add_outputs(data, traj):
    """The model's outputs that can be evaluated, and those a loaded trajectory stored."""
    units = getattr(traj.model, "output_units", {}) or {}  # e.g. a UrdfModel's joints
    for name in sorted(getattr(traj.model, "outputs", {}) or {}):
        try:
            v = np.asarray(traj.output(name), float)
        except Exception:  # an output that cannot be evaluated here is left out
            continue
        attrs = dict(long_name=name, **({"units": units[name]} if name in units else {}))
        if v.ndim == 1:
            data[f"output_{name}"] = (("time",), v, attrs)
        else:
            v = v.reshape(-1, len(traj.t))
            data[f"output_{name}"] = ((f"output_{name}_row", "time"), v, attrs)
    for name, v in getattr(traj, "_stored_outputs", {}).items():
        if f"output_{name}" not in data:
            dims = ("time",) if v.ndim == 1 else (f"output_{name}_row", "time")
            unit = getattr(traj, "_stored_output_units", {}).get(name)
            data[f"output_{name}"] = (dims, v, dict(long_name=name,
                                                    **({"units": unit} if unit else {})))


def _add_sensors(data, coords, traj):
    """The model's sensors (:meth:`Trajectory.sensor`), and those a loaded trajectory
    stored: ``sensor_<name>`` (time, sensor_<name>_component) with its unit."""
    sensors = getattr(traj.model, "sensors", {}) or {}
    for name, s in sensors.items():
        dim = f"sensor_{name}_component"
        coords[dim] = (dim, np.array(s.components, dtype=object))
        data[f"sensor_{name}"] = (("time", dim), np.asarray(traj.sensor(name), float), dict(
            long_name=f"{s.kind} sensor {name}", units=s.unit, sensor_kind=s.kind))
    for name, v in getattr(traj, "_stored_sensors", {}).items():
        if f"sensor_{name}" not in data:
            dim = f"sensor_{name}_component"
            meta = getattr(traj, "_stored_sensor_meta", {}).get(name, {})
            coords[dim] = (dim, np.array(meta.get("components", [str(k) for k in
                                                                  range(v.shape[1])]),
                                         dtype=object))
            attrs = {k: meta[k] for k in ("long_name", "units", "sensor_kind") if k in meta}
            data[f"sensor_{name}"] = (("time", dim), v, attrs)


def _attributes(traj):
    """The model, method, status, statistics, options and initial state as attributes."""
    from .. import __version__

    m = traj.model
    attrs = dict(
        title=f"{m.name}: simulated by mbint {traj.method}",
        mbint_version=__version__, model_name=m.name, model_class=type(m).__name__,
        model_description=getattr(m, "description", "") or "",
        model_reference=getattr(m, "reference", "") or "",
        method=traj.method, formulation=traj.formulation, status=int(traj.status),
        status_code=int(traj.status_code), message=traj.message, success=int(traj.success),
        baumgarte_alpha=float(traj.baumgarte[0]), baumgarte_beta=float(traj.baumgarte[1]),
        projected=int(bool(traj.projected)), options_json=_json(traj.options),
        initial_json=_json(traj.initial), nq=int(m.nq), nc=int(m.nc))
    for k, v in traj.stats.items():
        attrs[f"stats_{k}"] = int(v)
    if m.kind in ("planar", "spatial"):  # the models that describe themselves
        attrs["model_json"] = _json(m.describe())
    return attrs


def _add_dense(data, attrs, traj):
    """The records of the dense output ``traj.sol``."""
    s = traj.sol
    deg, off, c = _dense_records(s)
    data["dense_t0"] = (("segment",), s.t_min_step, dict(units="s"))
    data["dense_h"] = (("segment",), s.h, dict(units="s"))
    data["dense_degree"] = (("segment",), deg, dict(
        long_name="polynomial degree in theta = (t - t0)/h; -1: a method's dense record"))
    data["dense_offset"] = (("segment",), off)
    data["dense_coefficients"] = (("dense_coefficient",), c, dict(
        long_name="coefficients (theta power major, (deg+1) n per segment) or records"))
    attrs.update(dense_t_end=float(s.ts[-1]), dense_n=int(s.n),
                 dense_method=s.method or traj.method)
    if getattr(s, "reduced", None) is not None:  # the state space: records of (v, v')
        _add_state_space_log(data, attrs, s)


def _add_state_space_log(data, attrs, s):
    """The log that maps the state space's dense output (v, v') to (q, qd): the full
    state and partition at every accepted step, the partitions, Newton's settings."""
    log = s._log
    data["ss_log_time"] = (("ss_log",), np.asarray(log["log_t"], float), dict(units="s"))
    data["ss_log_partition"] = (("ss_log",), np.asarray(log["log_part"], np.int64))
    data["ss_log_state"] = (("ss_log", "ss_state"), np.asarray(log["log_y"], float), dict(
        long_name="(q, qd) at the start of each logged step"))
    data["ss_partitions"] = (("ss_partition", "ss_independent"),
                             np.asarray(log["parts"], np.int64), dict(
                                 long_name="independent coordinates of each partition"))
    attrs.update(ss_newton_tol=float(s._tol), ss_newton_max_iter=int(s._max_iter))


def _state_space_dense(ds, traj, nq):
    """The full-state dense output of a state-space run from the stored log: ``sol``
    maps the stored (v, v') records (now ``sol_reduced``) to (q, qd) as the run did."""
    from .trajectory import _FullStateDense

    a = ds.attrs
    nparts = ds.sizes.get("ss_independent", 0)
    log = dict(log_t=np.asarray(ds["ss_log_time"].values, float),
               log_part=np.asarray(ds["ss_log_partition"].values, np.intc),
               log_y=np.ascontiguousarray(np.asarray(ds["ss_log_state"].values, float)
                                          .reshape(-1, 2 * nq)),
               parts=np.ascontiguousarray(np.asarray(ds["ss_partitions"].values, np.intc)
                                          .reshape(-1, nparts)))
    traj.partition_log = log
    traj.sol_reduced = traj.sol
    traj.sol = _FullStateDense(traj.sol_reduced, traj.model, log,
                               float(a.get("ss_newton_tol", 0.0)),
                               int(a.get("ss_newton_max_iter", 0)), nq)


def _add_events(data, attrs, traj):
    """The events (flattened: time, index, states) and the contact instants, if any."""
    nq = traj.model.nq
    if traj.t_events is not None:
        te = [np.asarray(v, float) for v in traj.t_events]
        data["event_time"] = (("occurrence",), np.concatenate(te + [np.zeros(0)]),
                              dict(units="s"))
        data["event_index"] = (("occurrence",), np.concatenate(
            [np.full(len(v), k, np.int64) for k, v in enumerate(te)] + [np.zeros(0, np.int64)]))
        for key in ("q", "qd"):
            arrs = [np.asarray(v, float).reshape(nq, -1) for v in getattr(traj, f"{key}_events")]
            data[f"event_{key}"] = (("coordinate", "occurrence"),
                                    np.concatenate(arrs + [np.zeros((nq, 0))], axis=1))
        attrs["n_events"] = len(te)
    tc = getattr(traj, "t_contacts", None)
    if tc is not None:
        data["contact_time"] = (("contact_occurrence",), np.concatenate(
            [np.asarray(v, float) for v in tc] + [np.zeros(0)]), dict(units="s"))
        data["contact_index"] = (("contact_occurrence",), np.concatenate(
            [np.full(len(v), k, np.int64) for k, v in enumerate(tc)] + [np.zeros(0, np.int64)]))
        attrs["n_contacts"] = len(tc)


def _dense_records(s):
    """(deg, off, c) of a DenseOutput: the flat records it was made from."""
    deg, off, chunks, pos = [], [], [], 0
    for k in range(s.n_segments):
        rec = s.records.get(k)
        if rec is not None:
            deg.append(-1)
            flat = np.asarray(rec, float)
        else:
            d = int(s.deg[k])
            deg.append(d)
            flat = s.C[k, : d + 1].reshape(-1)
        off.append(pos)
        chunks.append(flat)
        pos += flat.size
    c = np.concatenate(chunks) if chunks else np.zeros(0)
    return np.array(deg, np.int64), np.array(off, np.int64), c


class StoredModel:
    """What a loaded trajectory knows of a model that was not a PlanarModel: its
    name, sizes, names and units (no kernels)."""

    kind = "stored"
    outputs: dict[str, Any]

    def __init__(self, name: str, nq: int, nc: int, coordinate_names: Sequence[str],
                 constraint_names: Sequence[str], coordinate_units: Sequence[str],
                 constraint_units: Sequence[str], description: str = "") -> None:
        self.name, self.nq, self.nc = name, int(nq), int(nc)
        self.coordinate_names = list(coordinate_names)
        self.constraint_names = list(constraint_names)
        self.coordinate_units = list(coordinate_units)
        self.constraint_units = list(constraint_units)
        self.description = description
        self.outputs = {}

    def __repr__(self):
        return f"<StoredModel {self.name!r}: nq = {self.nq}, nc = {self.nc} (no kernels)>"


def from_xarray(ds: xarray.Dataset) -> Trajectory:
    """Rebuild a :class:`Trajectory` from :func:`to_xarray`'s dataset.

    Parameters
    ----------
    ds : xarray.Dataset

    Returns
    -------
    Trajectory
        Its arrays, energies, violations and outputs are the stored ones; ``sol``
        the stored dense output; ``model`` a PlanarModel or SpatialModel rebuilt
        from its description (without Python forces and outputs), else a
        :class:`StoredModel`.
    """
    from ..dense import DenseOutput
    from .planar import PlanarModel
    from .trajectory import Energy, Trajectory, Violation

    a = ds.attrs
    names = [str(v) for v in ds["coordinate"].values]
    cnames = [str(v) for v in ds["constraint"].values]
    model: Any  # a PlanarModel, a SpatialModel or a StoredModel
    if "model_json" in a:
        d = json.loads(a["model_json"])
        if d.get("dim") == 3:
            from .spatial import SpatialModel

            model = SpatialModel.from_description(d)
        else:
            model = PlanarModel.from_description(d)
    else:
        model = StoredModel(a.get("model_name", "model"), a["nq"], a["nc"], names, cnames,
                            [str(v) for v in ds["coordinate_unit"].values],
                            [str(v) for v in ds["constraint_unit"].values],
                            a.get("model_description", ""))
    traj = Trajectory.__new__(Trajectory)
    traj.model = model
    traj.t = np.asarray(ds["time"].values, float)
    nq, nc, m = int(a["nq"]), int(a["nc"]), len(traj.t)
    traj.q = np.ascontiguousarray(ds["q"].values.reshape(nq, m))
    traj.qd = np.ascontiguousarray(ds["qd"].values.reshape(nq, m))
    traj.qdd = np.ascontiguousarray(ds["qdd"].values.reshape(nq, m))
    traj.lam = np.ascontiguousarray(ds["lam"].values.reshape(nc, m))
    traj.options = json.loads(a.get("options_json", "{}"))
    traj.method = a["method"]
    traj.formulation = a.get("formulation", "index1")
    traj.baumgarte = (float(a.get("baumgarte_alpha", 0.0)), float(a.get("baumgarte_beta", 0.0)))
    traj.projected = bool(a.get("projected", 0))
    initial = json.loads(a.get("initial_json", "{}"))
    for k in ("q0", "qd0"):
        if k in initial:
            initial[k] = np.asarray(initial[k], float)
    traj.initial = initial
    traj.status_code = int(a["status_code"])
    traj.status = int(a["status"])
    traj.message = str(a["message"])
    traj.success = bool(a["success"])
    traj.stats = {k[len("stats_"):]: int(v) for k, v in a.items() if k.startswith("stats_")}
    def var(name, default):
        return np.asarray(ds[name].values) if name in ds else default

    traj.t_steps = var("step_time", np.zeros(0))
    traj.h_steps = var("step_size", np.zeros(0))
    traj.err_steps = var("step_error", np.zeros(0))
    traj.sol = None
    if "dense_t0" in ds:
        traj.sol = DenseOutput(var("dense_t0", None), var("dense_h", None), float(a["dense_t_end"]),
                               var("dense_degree", None), var("dense_offset", None),
                               var("dense_coefficients", None), int(a["dense_n"]),
                               method=str(a["dense_method"]))
        if "ss_log_time" in ds:
            _state_space_dense(ds, traj, nq)
        elif traj.formulation == "joint":  # over the joint state (engine order): the
            traj.sol_joint, traj.sol = traj.sol, None  # tree is not stored with the model
    if "event_time" in ds:
        te, ti = var("event_time", None), var("event_index", None)
        eq, eqd = var("event_q", None).reshape(nq, -1), var("event_qd", None).reshape(nq, -1)
        k_ev = int(a["n_events"])
        traj.t_events = [te[ti == k] for k in range(k_ev)]
        traj.q_events = [np.ascontiguousarray(eq[:, ti == k]) for k in range(k_ev)]
        traj.qd_events = [np.ascontiguousarray(eqd[:, ti == k]) for k in range(k_ev)]
    else:
        traj.t_events = traj.q_events = traj.qd_events = None
    if "contact_time" in ds:
        tc, ci = var("contact_time", None), var("contact_index", None)
        traj.t_contacts = [tc[ci == k] for k in range(int(a["n_contacts"]))]
    traj.sens_q = traj.sens_qd = traj.sens_y = traj.parameters = None
    if "sens_q" in ds:
        traj.sens_q = np.ascontiguousarray(ds["sens_q"].values, float)
        traj.sens_qd = np.ascontiguousarray(ds["sens_qd"].values, float)
        traj.parameters = [dict(name=str(n), value=float(v), unit=str(u)) for n, v, u in zip(
            ds["parameter"].values, ds["parameter_value"].values, ds["parameter_unit"].values)]
    traj._energy = None
    if "total_energy" in ds:
        traj._energy = Energy(var("kinetic_energy", None), var("potential_energy", None),
                              var("total_energy", None))
    traj._dissipated = var("dissipated_work", None)
    traj._violation = Violation(*(var(f"violation_{k}", None).reshape(nc, m) for k in _VIOL))
    traj._stored_outputs, traj._stored_output_units = {}, {}
    traj._stored_sensors, traj._stored_sensor_meta = {}, {}
    for name in ds.data_vars:
        if str(name).startswith("output_"):
            key = str(name)[len("output_"):]
            traj._stored_outputs[key] = np.asarray(ds[name].values)
            if "units" in ds[name].attrs:
                traj._stored_output_units[key] = str(ds[name].attrs["units"])
        elif str(name).startswith("sensor_"):
            key = str(name)[len("sensor_"):]
            v = ds[name]
            traj._stored_sensors[key] = np.asarray(v.values, float).reshape(m, -1)
            meta = {k: v.attrs[k] for k in ("long_name", "units", "sensor_kind")
                    if k in v.attrs}
            meta["components"] = [str(c) for c in ds[f"sensor_{key}_component"].values]
            traj._stored_sensor_meta[key] = meta
    return traj


def save(traj: Trajectory, path: str | os.PathLike[str]) -> Path:
    """Write :func:`to_xarray` of the trajectory to a NetCDF-4 file.

    Parameters
    ----------
    traj : Trajectory
    path : str or path-like
        The file (conventionally ``*.nc``); overwritten if it exists.

    Returns
    -------
    pathlib.Path
    """
    from pathlib import Path

    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    ds = to_xarray(traj)
    ds.to_netcdf(os.fspath(path), engine="netcdf4", format="NETCDF4")
    return path


def load(path: str | os.PathLike[str]) -> Trajectory:
    """Read a trajectory written by :meth:`Trajectory.save`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    Trajectory
        See :func:`from_xarray`.
    """
    import xarray as xr

    if not os.path.exists(path):
        raise ValueError(f"path: no such file {os.fspath(path)!r}.")
    with xr.open_dataset(os.fspath(path), engine="netcdf4") as ds:
        ds = ds.load()
    if "q" not in ds or "method" not in ds.attrs:
        raise ValueError(f"path: {os.fspath(path)!r} is not a trajectory written by "
                         f"Trajectory.save.")
    return from_xarray(ds)
