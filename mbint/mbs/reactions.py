"""Joint reactions and driver efforts of a :class:`~mbint.PlanarModel` or
:class:`~mbint.SpatialModel` (a URDF model included) from its Lagrange multipliers.

The equations of motion are ``M q'' + Phi_q^T lam = Q``, so the rows of one joint exert
the generalized constraint force ``Q_c = -Phi_q[rows]^T lam[rows]`` on the coordinates of
its two bodies.  Per body:

- planar, q_k = (x, y, theta) of the centre of mass: ``Q_c`` is the force (F_x, F_y)
  and the moment M_z about the centre of mass;
- spatial, q_k = (r, p) (centre of mass, Euler parameters): the force is the r-part
  F = Q_r and the torque about the centre of mass in the body frame is
  ``n' = G(p) Q_p / 2`` (virtual work: with p'^T p = 0, p' = G(p)^T omega' / 2, so
  Q_p . dp = (G(p) Q_p / 2) . dpi' for a virtual rotation dpi'; G p = 0 drops the part
  of Q_p along p that the normalization row carries), in the global frame n = A(p) n'.

The torque is then moved to the joint's point P on the body (s_P = A s'_P from the centre
of mass): ``n_P = n - s_P x F``.  The ground has no coordinates: the wrench on the ground
side of a joint is reported as the negative of the wrench on the moving body, moved to
the ground's joint point (Newton's third law, exact for every joint: a joint row does
no work on a rigid motion of the pair and the ground does not move).

Units: forces in N, torques in N m, points in m, times in s.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from ._rotations import matrix_from_quat
from .._typing import ArrayLike, FloatArray, FloatOrArray

# a PlanarModel or SpatialModel, and a Trajectory: the models and trajectory.py use this
# module (driver efforts, reactions), so it does not import them
BodyModel = Any
Trajectory = Any

__all__ = ["BodyWrench", "JointReaction", "DriverEffort", "joint_reactions",
           "driver_effort", "driver_quantity", "UNITS"]

#: units of the fields of :class:`JointReaction` and :class:`BodyWrench`
UNITS = {"t": "s", "force": "N", "torque": "N m", "point": "m"}

_CHUNK = 4_000_000  # doubles of Phi_q evaluated at once (32 MB)


@dataclass(frozen=True, eq=False)
class BodyWrench:
    """The force and torque one joint applies to one of its bodies.

    Attributes
    ----------
    body : str
        The body's name (``"ground"`` for the ground side).
    force : ndarray, shape (2, m) (planar) or (3, m) (spatial)
        Force in N, in the frame of :attr:`JointReaction.frame`.
    torque : ndarray, shape (m,) (planar: the z-moment) or (3, m) (spatial)
        Torque in N m about the joint's point on the body (:attr:`point`).
    point : ndarray, shape (2,) or (3,)
        That point in m, in the body's frame (the ground's: the global frame); the
        centre of mass (zeros) for a joint without points (drivers, dot-1 rows).
    ground : bool
        True for the ground side: the negative of the wrench on the other body,
        moved to :attr:`point` (Newton's third law).
    units : dict
        ``{"force": "N", "torque": "N m", "point": "m"}``.
    """

    body: str
    force: np.ndarray
    torque: np.ndarray
    point: np.ndarray
    ground: bool = False
    units: dict = field(default_factory=lambda: dict(force="N", torque="N m", point="m"))

    def __repr__(self):
        m = np.shape(self.force)[-1]
        side = ", ground side" if self.ground else ""
        return (f"<BodyWrench on {self.body!r}{side}: force {np.shape(self.force)} [N], "
                f"torque {np.shape(self.torque)} [N m] about {np.round(self.point, 6).tolist()} "
                f"[m], {m} times>")


@dataclass(frozen=True, eq=False)
class JointReaction:
    """The reactions of one joint on its two bodies at the output times.

    Arrays are component-major as ``traj.q``: components first, time along the last axis.

    Attributes
    ----------
    joint : str
        The joint's name.
    kind : str
        Its kind (``"revolute"``, ``"spherical"``, ``"driver_angle"``, ...).
    frame : {"ground", "body"}
        ``"ground"``: force and torque in global components; ``"body"``: each in the
        frame of the body it acts on (the ground side stays global).
    t : ndarray, shape (m,)
        Times in s.
    on_i, on_j : BodyWrench
        The wrench on body_i and on body_j of the joint (as it was added: for
        ``PlanarModel.add_driver(body, ...)`` without ``relative_to``, body_i is the
        driven body and body_j the ground).
    units : dict
        :data:`UNITS`.
    """

    joint: str
    kind: str
    frame: str
    t: np.ndarray
    on_i: BodyWrench
    on_j: BodyWrench
    units: dict = field(default_factory=lambda: dict(UNITS))

    def __repr__(self):
        return (f"<JointReaction {self.joint!r} ({self.kind}, frame {self.frame!r}, "
                f"{len(self.t)} times): on {self.on_i.body!r} and {self.on_j.body!r}>")

    def on(self, body: Any) -> BodyWrench:
        """The :class:`BodyWrench` on ``body`` (its name, or a Body of the model)."""
        name = getattr(body, "name", body)
        for w in (self.on_i, self.on_j):
            if w.body == name:
                return w
        raise ValueError(f"reactions: joint {self.joint!r} acts on {self.on_i.body!r} and "
                         f"{self.on_j.body!r}, not on {name!r}.")


# ---------------------------------------------------------------- geometry
def _dim(model):
    return 2 if model.kind == "planar" else 3


def _cross2(s, F):
    """z-component of s x F for s, F of shape (2, m)."""
    return s[0] * F[1] - s[1] * F[0]


def _rot2(theta):
    """Planar rotation matrices, shape (2, 2, m)."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def _G(p):
    """G(p) (3, 4, m) of Euler parameters p (4, m) (spatial.py, spatial.h)."""
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def _joint_points(model, e):
    """(s'_i, s'_j): the joint's point on body_i and on body_j in their frames (the
    ground's in the global frame); the centre of mass where the joint has none."""
    d = _dim(model)
    if model.kind == "planar":
        p = e.params
        si = np.array([p["si_x"], p["si_y"]]) if "si_x" in p else np.zeros(2)
        sj = np.array([p["sj_x"], p["sj_y"]]) if "sj_x" in p else np.zeros(2)
        return si, sj
    si = next((np.asarray(pr["si"], float) for pr in e.prims if "si" in pr), np.zeros(d))
    sj = next((np.asarray(pr["sj"], float) for pr in e.prims if "sj" in pr), np.zeros(d))
    return si, sj


# ---------------------------------------------------------------- per body
def _body_wrench(model, body, Qb, qb):
    """Force and torque about the centre of mass, global, from the body's part of Q_c.

    Returns F (dim, m), n ((m,) planar, (3, m) spatial) and the rotation A (dim, dim, m).
    """
    if model.kind == "planar":
        return Qb[:2], Qb[2], _rot2(qb[2])

    p = qb[3:7]
    A = matrix_from_quat(p)
    n_body = 0.5 * np.einsum("ijm,jm->im", _G(p), Qb[3:7])
    return Qb[:3], np.einsum("ijm,jm->im", A, n_body), A


def _moment_about(model, n, s, F):
    """n - s x F (planar: scalars (m,); spatial: (3, m))."""
    return n - (_cross2(s, F) if model.kind == "planar" else np.cross(s, F, axis=0))


def _to_frame(model, A, F, n):
    """Force and torque in the body frame: A^T F, A^T n (planar: n unchanged)."""
    Ft = np.einsum("jim,jm->im", A, F)
    if model.kind == "planar":
        return Ft, n
    return Ft, np.einsum("jim,jm->im", A, n)


def _constraint_forces(model, elements, t, q, lam):
    """Per joint, Q_c = -Phi_q[rows]^T lam[rows] on the coordinates of its bodies:
    a dict name -> {body index: (ncoord, m)}.  Phi_q is evaluated in chunks of time."""
    m = q.shape[1]
    nb_coord = 3 if model.kind == "planar" else 7
    cols = {e.name: {b: np.arange(nb_coord * b, nb_coord * b + nb_coord)
                     for b in (e.i, e.j) if b >= 0} for e in elements}
    out = {e.name: {b: np.empty((nb_coord, m)) for b in cols[e.name]} for e in elements}
    step = max(1, _CHUNK // max(1, model.nc * model.nq))
    for k0 in range(0, m, step):
        k1 = min(m, k0 + step)
        P = model.constraint_jacobian(t[k0:k1], q[:, k0:k1])
        P = P.reshape(model.nc, model.nq, k1 - k0)
        for e in elements:
            rows = slice(e.row, e.row + e.rows)
            for b, c in cols[e.name].items():
                out[e.name][b][:, k0:k1] = -np.einsum("rck,rk->ck", P[rows][:, c],
                                                      lam[rows, k0:k1])
    return out


def _reaction(model, e, Qc, q, t, frame):
    """The :class:`JointReaction` of joint ``e`` from its Q_c on its bodies."""
    dim = _dim(model)
    si, sj = _joint_points(model, e)
    sides = {}
    for side, b, s in (("i", e.i, si), ("j", e.j, sj)):
        if b < 0:
            continue
        body = model.bodies[b]
        F, n, A = _body_wrench(model, body, Qc[b], q[body.coords])
        sP = np.einsum("ijm,j->im", A, s)             # from the centre of mass to P
        nP = _moment_about(model, n, sP, F)
        P = q[body.coords][:dim] + sP                 # the joint point, global
        sides[side] = (body.name, F, nP, A, P, s)
    for side, other, s in (("i", "j", si), ("j", "i", sj)):
        if side in sides:
            continue
        name, F, nP, A, P, _ = sides[other]
        # the ground side: the opposite wrench, moved from P (other body) to the ground's s
        Fg = -F
        ng = _moment_about(model, -nP, P - s[:, None], F)  # -nP - (P - P_g) x F
        ground_R = np.broadcast_to(np.eye(dim)[:, :, None], (dim, dim, len(t)))
        sides[side] = ("ground", Fg, ng, ground_R, None, s)
    wrenches = {}
    for side, (name, F, nP, A, _, s) in sides.items():
        if frame == "body":
            F, nP = _to_frame(model, A, F, nP)
        wrenches[side] = BodyWrench(name, np.ascontiguousarray(F), np.ascontiguousarray(nP),
                                    np.array(s, float), ground=(name == "ground"))
    return JointReaction(e.name, e.kind, frame, t, wrenches["i"], wrenches["j"])


@overload
def joint_reactions(model: BodyModel, t: ArrayLike, q: ArrayLike, lam: ArrayLike, joint: str,
                    frame: str = ...) -> JointReaction: ...
@overload
def joint_reactions(model: BodyModel, t: ArrayLike, q: ArrayLike, lam: ArrayLike,
                    joint: None = ..., frame: str = ...) -> dict[str, JointReaction]: ...
def joint_reactions(model: BodyModel, t: ArrayLike, q: ArrayLike, lam: ArrayLike,
                    joint: str | None = None,
                    frame: str = "ground") -> JointReaction | dict[str, JointReaction]:
    """The reaction of one joint or of every joint on its two bodies.

    Parameters
    ----------
    model : PlanarModel or SpatialModel
    t : ndarray, shape (m,)
        Times in s.
    q : ndarray, shape (nq, m)
        Coordinates.
    lam : ndarray, shape (nc, m)
        Multipliers of ``M q'' + Phi_q^T lam = Q``.
    joint : str, joint element or None
        One joint (its name); None: every joint.
    frame : {"ground", "body"}

    Returns
    -------
    JointReaction, or dict of str to JointReaction (every joint, by name)
    """
    if getattr(model, "kind", None) not in ("planar", "spatial"):
        raise ValueError(f"reactions: joints and bodies exist in a PlanarModel or a "
                         f"SpatialModel only, not in {type(model).__name__}; use traj.lam.")
    if frame not in ("ground", "body"):
        raise ValueError(f"reactions: frame must be 'ground' or 'body', got {frame!r}.")
    model.compile()  # sets every joint's first row
    if joint is None:
        elements = list(model.joint_elements)
    else:
        name = getattr(joint, "name", joint)
        elements = [e for e in model.joint_elements if e.name == name]
        if not elements:
            raise ValueError(f"reactions: no joint {name!r}; the model has "
                             f"{[e.name for e in model.joint_elements]}.")
    t = np.atleast_1d(np.asarray(t, float))
    q = np.asarray(q, float).reshape(model.nq, -1)
    lam = np.asarray(lam, float).reshape(model.nc, -1)
    Qc = _constraint_forces(model, elements, t, q, lam)
    out = {e.name: _reaction(model, e, Qc[e.name], q, t, frame) for e in elements}
    return out if joint is None else out[elements[0].name]


# ---------------------------------------------------------------- drivers
def _driver(model, driver):
    e = next((e for e in model.joint_elements if e.name == getattr(driver, "name", driver)),
             None)
    if e is None or not e.kind.startswith("driver"):
        raise ValueError(f"driver_effort: {driver!r} is not a driver of the model "
                         f"(drivers: {[d.name for d in model.joint_elements if d.kind.startswith('driver')]}).")
    return e


def driver_quantity(model: BodyModel, driver: str) -> str:
    """``"torque"`` (N m) for a driver of an angle, ``"force"`` (N) for one of a
    position (planar ``driver_coord`` of x or y, spatial ``kind="translation"``)."""
    e = _driver(model, driver)
    if model.kind == "planar":
        rotational = e.kind == "driver_angle" or int(e.params.get("coord", 2)) == 2
    else:
        rotational = e.prims[0]["type"] == "angle"
    return "torque" if rotational else "force"


def driver_effort(model: BodyModel, driver: str, t: ArrayLike, q: ArrayLike,
                  lam: ArrayLike) -> FloatArray:
    """The effort of a driver (a motor) on the body it drives, from its multiplier.

    The sign convention: the torque (N m) or force (N) the driver applies to the
    driven body, positive in the positive sense of the driven coordinate, so that
    ``effort * (rate of the driven coordinate)`` is the power the driver puts in (W):

    - planar ``add_driver(body, coord)``: the generalized force on that coordinate of
      ``body`` (F_x, F_y in N, or the torque in N m, counter-clockwise positive);
      it is ``-lam`` of the driver row;
    - planar ``add_driver(body, "theta", relative_to=other)``: the torque on ``body``
      (body_j), counter-clockwise positive; ``other`` receives its negative;
    - spatial ``add_driver(body_i, body_j, "rotation", ...)``: the torque on body_j
      about the driver's axis (right-handed, the axis fixed in body_i);
      ``"translation"``: the force on body_j along the axis.

    Parameters
    ----------
    model : PlanarModel or SpatialModel
    driver : str
        The driver's name.
    t : ndarray, shape (m,)
    q : ndarray, shape (nq, m)
    lam : ndarray, shape (nc, m)

    Returns
    -------
    ndarray, shape (m,)
    """
    e = _driver(model, driver)
    r = joint_reactions(model, t, q, lam, e.name, frame="ground")
    rotational = driver_quantity(model, e) == "torque"
    if model.kind == "planar":
        if e.kind == "driver_coord":
            c = int(e.params.get("coord", 2))
            return r.on_i.torque if c == 2 else r.on_i.force[c]
        return r.on_j.torque  # a relative angle: the torque on the driven body_j
    pr = e.prims[0]
    axis = np.cross(pr["ai"], pr["bi"]) if rotational else np.asarray(pr["ai"], float)
    if e.i >= 0:  # the axis is fixed in body_i
        bi = model.bodies[e.i]
        axis = np.einsum("ijm,j->im", bi.rotation(np.asarray(q, float).reshape(model.nq, -1)),
                         axis)
    else:
        axis = np.repeat(axis[:, None], len(r.t), axis=1)
    w = r.on_j.torque if rotational else r.on_j.force
    return np.einsum("im,im->m", axis, w)


class DriverEffort:
    """The named output ``"<driver>.torque"`` or ``"<driver>.force"`` of a driver
    (:func:`driver_effort`: the effort the driver applies to the body it drives).

    Called as an output ``fn(t, q, qd)`` at any state it takes the multipliers of the
    index-1 system (``model.accelerations``); :meth:`Trajectory.output` calls
    :meth:`from_trajectory` instead, which takes the trajectory's own ``lam`` (the
    integrated multipliers of a DAE formulation).  Pickles with its model.

    Parameters
    ----------
    model : PlanarModel or SpatialModel
    driver : str
        The driver's name.
    """

    def __init__(self, model: BodyModel, driver: str) -> None:
        self.model = model
        self.driver = str(driver)

    @property
    def quantity(self) -> str:
        """``"torque"`` or ``"force"``."""
        return driver_quantity(self.model, self.driver)

    @property
    def unit(self) -> str:
        """``"N m"`` or ``"N"``."""
        return "N m" if self.quantity == "torque" else "N"

    def __call__(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> FloatOrArray:
        q = np.asarray(q, float)
        one = q.ndim == 1
        lam = self.model.accelerations(t, q, qd)[1]
        tt = np.broadcast_to(np.asarray(t, float), q.shape[1:] if not one else ())
        v = driver_effort(self.model, self.driver, np.atleast_1d(tt), q.reshape(q.shape[0], -1),
                          np.asarray(lam).reshape(self.model.nc, -1))
        return float(v[0]) if one else v

    def from_trajectory(self, traj: Trajectory) -> FloatArray:
        """The effort at the trajectory's output points from its ``lam``, shape (m,)."""
        return driver_effort(self.model, self.driver, traj.t, traj.q, traj.lam)

    def __repr__(self):
        return f"DriverEffort({self.driver!r})"
