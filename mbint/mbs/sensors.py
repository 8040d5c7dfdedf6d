"""Sensors of a :class:`~mbint.PlanarModel` or :class:`~mbint.SpatialModel`: quantities
of the motion declared on the model (:meth:`add_sensor`) and evaluated in C at the
output times of a trajectory (``traj.sensor(name)``, ``traj.output(name)``).

A sensor is packed into one row of a float64 table (the columns of
``mbint._core.sensor_layout()``, csrc/mbs/sensors.h); :func:`evaluate` hands the table
and the trajectory's (t, q, q', q'') to ``_core.sensors_eval``, which evaluates every
sensor at every output time in one call.  Accelerations use the trajectory's q''.

Kinds, their components and SI units (pint-parseable strings):

=======================  ============================  =========  ==========
kind                     quantity                      components unit
=======================  ============================  =========  ==========
``position``             body point P = r + A s        x, y[, z]  m
``velocity``             its velocity                  x, y[, z]  m/s
``acceleration``         its acceleration              x, y[, z]  m/s**2
``angular_velocity``     of a body (planar: theta')    z / x,y,z  rad/s
``angular_acceleration`` of a body (planar: theta'')   z / x,y,z  rad/s**2
``relative_angle``       body ``other`` rel. to body   value      rad
``relative_rate``        its rate                      value      rad/s
``distance``             |P_j - P_i| of two points     value      m
``distance_rate``        its rate                      value      m/s
``force``                TSDA tension / RSDA torque    value      N / N*m
``contact``              contact normal force / tire   value      N
=======================  ============================  =========  ==========

Vector quantities are resolved in ``frame``: ``"ground"`` (global components) or a
body, whose axes then carry the ground-frame vector (``A_f^T v``: the inertial velocity
or acceleration as a body-fixed instrument reports it, not the derivative seen from
the moving frame); a position in a body frame is ``A_f^T (P - r_f)``.  Body points are
given in the body's frame (s').  A spatial ``relative_angle`` is the rotation of
``other`` relative to ``body`` about ``axis`` (global, at the initial configuration),
``atan2(a_j . b_i, a_j . a_i)`` in (-pi, pi] as for a revolute joint or an RSDA,
0 at the initial configuration; a planar one is theta_j - theta_i (not wrapped).
``joint=`` names a revolute joint instead: its two bodies (and, in 3-D, its axis).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .. import _core
from ._checks import _perp_basis, _unit, _vec

__all__ = ["Sensor", "SENSOR_UNITS", "evaluate"]

#: the unit of each kind (``force`` depends on the element: N or N*m)
SENSOR_UNITS = {"position": "m", "velocity": "m/s", "acceleration": "m/s**2",
                "angular_velocity": "rad/s", "angular_acceleration": "rad/s**2",
                "relative_angle": "rad", "relative_rate": "rad/s", "distance": "m",
                "distance_rate": "m/s", "force": "N", "contact": "N"}


@lru_cache(maxsize=None)
def _layout():
    L = _core.sensor_layout()
    return {c: k for k, c in enumerate(L["columns"])}, L["kinds"]


@dataclass
class Sensor:
    """A sensor as declared on a model.

    Attributes
    ----------
    name, kind : str
    unit : str
        SI unit, parseable by pint (``"m/s**2"``, ``"N*m"``).
    components : tuple of str
        Names of its components (``("x", "y")``, ``("value",)``).
    row : dict
        The fields of its row in the C table (body indices, body-frame points and
        vectors, an element's parameters).
    """

    name: str
    kind: str
    unit: str
    components: tuple
    row: dict = field(default_factory=dict)
    element: str | None = None   # the force element a force or contact sensor reads


def add_sensor(model, name, kind, body=None, point=None, *, frame="ground", other=None,
               other_point=None, element=None, axis=None, joint=None):
    """Implementation of :meth:`PlanarModel.add_sensor` / :meth:`SpatialModel.add_sensor`."""
    dim = 3 if model.kind == "spatial" else 2
    name = str(name)
    where = f"add_sensor {name!r}"
    if not name or "/" in name:
        raise ValueError(f"{where}: name must be non-empty and without '/' (it names a "
                         f"NetCDF variable of a saved trajectory).")
    if name in model.outputs or name in model.sensors:
        raise ValueError(f"{where}: the name is already used by an output or a sensor.")
    if not isinstance(kind, str) or kind not in SENSOR_UNITS:
        raise ValueError(f"{where}: kind must be one of {sorted(SENSOR_UNITS)}, got {kind!r}.")
    _, codes = _layout()
    xyz = ("x", "y", "z")[:dim]
    row = dict(dim=dim, i=-1, j=-1, frame=-1)
    unit = SENSOR_UNITS[kind]
    comps = ("value",)

    def pt(what, v):
        return np.zeros(dim) if v is None else _vec(where, what, v, dim)

    def put(prefix, v):
        for c, x in zip("xyz", v):
            row[f"{prefix}_{c}"] = float(x)

    def the_body(ref, role, ground_ok=False):
        if ref is None:
            raise ValueError(f"{where}: kind {kind!r} needs {role}.")
        b = model._body(where, ref, role)
        if b.is_ground and not ground_ok:
            raise ValueError(f"{where}: {role} must not be the ground.")
        return b

    def the_frame():
        if isinstance(frame, str) and frame in ("ground", "global"):
            return -1
        try:
            return model._body(where, frame, "frame").index
        except ValueError:
            raise ValueError(f"{where}: frame must be 'ground' or a body of the model, got "
                             f"{frame!r}.") from None

    if axis is not None and (dim == 2 or kind not in ("relative_angle", "relative_rate")):
        raise ValueError(f"{where}: axis is used by a spatial relative_angle or "
                         f"relative_rate only.")
    if kind in ("position", "velocity", "acceleration"):
        row["i"] = the_body(body, "body").index
        put("si", pt("point", point))
        row["frame"] = the_frame()
        code, comps = codes[kind], xyz
    elif kind in ("angular_velocity", "angular_acceleration"):
        row["i"] = the_body(body, "body").index
        if point is not None:
            raise ValueError(f"{where}: an angular quantity of a body takes no point.")
        row["frame"] = the_frame()
        code, comps = codes[kind], (("z",) if dim == 2 else xyz)
    elif kind in ("relative_angle", "relative_rate"):
        if joint is not None:
            body, other, axis = _revolute(model, where, joint, dim, body, other, axis)
        bi = the_body(body, "body", ground_ok=True)
        bj = the_body(other, "other", ground_ok=True)
        if bi is bj:
            raise ValueError(f"{where}: body and other are the same body {bi.name!r}.")
        row["i"], row["j"] = bi.index, bj.index
        if dim == 3:
            if axis is None:
                raise ValueError(f"{where}: a spatial {kind} needs axis (the rotation axis, "
                                 f"global at the initial configuration).")
            h = _unit(where, "axis", axis)
            f, g = _perp_basis(h)
            put("ai", bi.vector_to_body(f))
            put("bi", bi.vector_to_body(g))
            put("aj", bj.vector_to_body(f))
        code = codes[kind]
    elif kind in ("distance", "distance_rate"):
        bi = the_body(body, "body", ground_ok=True)
        bj = the_body(other, "other", ground_ok=True)
        row["i"], row["j"] = bi.index, bj.index
        put("si", pt("point", point))
        put("sj", pt("other_point", other_point))
        code = codes[kind]
    else:  # force, contact: read an element
        code, unit = _element_row(model, where, kind, element, row, codes, dim)
    for key, v in (("body", body if kind in ("force", "contact") else None),
                   ("point", point if kind not in ("position", "velocity", "acceleration",
                                                   "distance", "distance_rate") else None),
                   ("other", other if kind not in ("relative_angle", "relative_rate",
                                                   "distance", "distance_rate") else None),
                   ("other_point", other_point if kind not in ("distance", "distance_rate")
                    else None),
                   ("element", element if kind not in ("force", "contact") else None),
                   ("joint", joint if kind not in ("relative_angle", "relative_rate")
                    else None)):
        if v is not None:
            raise ValueError(f"{where}: {key} does not apply to kind {kind!r}.")
    if kind not in ("position", "velocity", "acceleration", "angular_velocity",
                    "angular_acceleration") and not (isinstance(frame, str) and
                                                     frame in ("ground", "global")):
        raise ValueError(f"{where}: frame applies to the vector kinds only, got {frame!r} "
                         f"for kind {kind!r}.")
    row["kind"] = code
    s = Sensor(name, kind, unit, tuple(comps), row,
               str(element) if kind in ("force", "contact") else None)
    model.sensors[name] = s
    model.output_units[name] = unit
    return s


def _revolute(model, where, joint, dim, body, other, axis):
    """(body_i, body_j, axis) of the revolute joint named ``joint``: a relative angle
    about its axis (global at the initial configuration)."""
    if body is not None or other is not None or axis is not None:
        raise ValueError(f"{where}: give either joint or body, other (and axis), not both.")
    e = next((j for j in model.joint_elements if j.name == str(joint)), None)
    if e is None:
        raise ValueError(f"{where}: joint {joint!r} is not a joint of the model (joints: "
                         f"{[j.name for j in model.joint_elements]}).")
    if e.kind != "revolute":
        raise ValueError(f"{where}: joint {e.name!r} is a {e.kind!r}; the relative angle of "
                         f"a joint needs a 'revolute'.")
    bi, bj = model._body(where, e.i, "body"), model._body(where, e.j, "other")
    if dim == 2:
        return bi, bj, None
    f_i, g_i = (np.asarray(e.prims[k]["ai"], float) for k in (1, 2))
    A = bi.rotation()
    return bi, bj, A @ np.cross(f_i, g_i)  # h = f x g, global at the initial configuration


def _element_row(model, where, kind, element, row, codes, dim):
    """The row of a ``force`` or ``contact`` sensor: the element's law and parameters."""
    if element is None:
        raise ValueError(f"{where}: kind {kind!r} needs element (the name of a force element).")
    e = next((f for f in model.force_elements if f.name == str(element)), None)
    if e is None:
        raise ValueError(f"{where}: element {element!r} is not a force element of the model "
                         f"(force elements: {[f.name for f in model.force_elements]}).")
    accepted = {"force": ("tsda", "rsda"),
                "contact": ("contact_line", "contact_circles") if dim == 2 else ("tire",)}[kind]
    if e.kind not in accepted:
        raise ValueError(f"{where}: element {e.name!r} is a {e.kind!r}; a {kind!r} sensor reads "
                         f"{' or '.join(repr(a) for a in accepted)} elements.")
    row["i"], row["j"] = e.i, e.j
    if dim == 2:
        p = dict(e.params)
        for key in ("k", "c", "L0", "wrap", "K", "cd", "e", "ri", "rj", "si_x", "si_y", "sj_x",
                    "sj_y", "p0_x", "p0_y", "nrm_x", "nrm_y"):
            if key in p:
                row[key] = float(p[key])
        for key in ("fa_c0", "fa_c1", "fa_c2", "fa_a", "fa_w", "fa_psi"):
            row[key] = float(p.get(key, 0.0))
        if e.kind.startswith("contact") and "e" not in p:
            row["e"] = 1.0
    else:
        p = dict(e.prims[0])
        for key in ("si", "sj", "ai", "bi", "aj"):
            if key in p:
                for c, x in zip("xyz", np.asarray(p[key], float)):
                    row[f"{key}_{c}"] = float(x)
        for key in ("k", "c", "L0", "fa_c0", "fa_c1", "fa_c2", "fa_a", "fa_w", "fa_psi", "z0",
                    "bump_x", "bump_r", "wheel_r", "unilateral"):
            if key in p:
                row[key] = float(p[key])
    unit = "N*m" if e.kind == "rsda" else "N"
    return codes[e.kind], unit


def sensor_table(model):
    """The packed table of the model's sensors, shape (ns, ncol) (sensors.h)."""
    cols, _ = _layout()
    T = np.zeros((len(model.sensors), len(cols)))
    for r, s in enumerate(model.sensors.values()):
        for key, v in s.row.items():
            T[r, cols[key]] = v
    return T


def evaluate(model, t, q, qd, qdd):
    """Every sensor of the model at the m times t in one C call.

    Parameters
    ----------
    model : PlanarModel or SpatialModel
    t : array_like, shape (m,)
        Times [s].
    q, qd, qdd : array_like, shape (nq, m)
        Coordinates, velocities, accelerations (component-major, as ``Trajectory.q``).

    Returns
    -------
    dict of str to ndarray
        Per sensor, shape (m, n_components), in the sensor's unit.
    """
    t = np.ascontiguousarray(t, float).reshape(-1)
    m = len(t)
    if not model.sensors:
        return {}
    nq = model.nq
    args = [np.ascontiguousarray(np.asarray(a, float).reshape(nq, m)) for a in (q, qd, qdd)]
    Y = _core.sensors_eval(sensor_table(model), t, *args)
    out, k = {}, 0
    for name, s in model.sensors.items():
        n = len(s.components)
        out[name] = np.ascontiguousarray(Y[k:k + n].T)
        k += n
    return out


def describe_sensors(model: Any) -> list[dict[str, Any]]:
    """The model's sensors as plain data (JSON-serializable) for ``describe()``: each
    one's name, kind, unit, components, element and its packed row (body indices,
    body-frame vectors, an element's law)."""
    return [dict(name=sn.name, kind=sn.kind, unit=sn.unit, components=list(sn.components),
                 element=sn.element,
                 row={k: (int(v) if isinstance(v, (int, np.integer)) else float(v))
                      for k, v in sn.row.items()})
            for sn in model.sensors.values()]


def load_sensors(model: Any, sensors: list[dict[str, Any]] | None) -> None:
    """Put the sensors of a description (:func:`describe_sensors`) on a rebuilt model."""
    for d in sensors or ():
        sn = Sensor(str(d["name"]), str(d["kind"]), str(d["unit"]), tuple(d["components"]),
                    dict(d["row"]), d.get("element"))
        model.sensors[sn.name] = sn
        model.output_units[sn.name] = sn.unit
