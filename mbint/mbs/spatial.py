"""Spatial (3-D) multibody models with Euler parameters: ``mbint.SpatialModel``.

Every body k has the seven coordinates q_k = (x, y, z, e0, e1, e2, e3): the
position of its centre of mass and its Euler parameters (a unit quaternion), so
``q = (q_0, q_1, ...)`` has ``nq = 7 nb`` entries (RN paper eq 1; Haug [1]_).  Each
body brings the normalization constraint ``p^T p - 1 = 0``: the first ``nb`` rows
of Phi.  Joints are assembled from the four constraint primitives of RN section 3
(dot-1, dot-2, spherical point, distance) and two rheonomic rows (prescribed
angle, prescribed offset); the kernels (Phi, Phi_q, Phi_t, gamma, M(q), Q and every
derivative the index-1 and state-space formulations need, up to the third
derivatives of the primitives) are C (csrc/mbs/spatial.c, spatial_forces.c).

Where points and axes come from
-------------------------------
Every ``add_*`` method takes its points and axes in the **global frame at the
model's initial configuration** (``frame="global"``, the default: the bodies'
initial positions and orientations turn them into body-frame vectors once) or
each in its own **body frame** (``frame="body"``).  Add the bodies with their
initial positions first; changing them later with :meth:`SpatialModel.set_initial`
does not move what was attached.

Mass matrix and velocity terms
------------------------------
With the rotation matrix A(p) = E(p) G(p)^T (E = [-e, e~ + e0 I], G = [-e,
-e~ + e0 I]), the angular velocity in the body frame is omega' = 2 G(p) p', the
kinetic energy T = m/2 |r'|^2 + 2 p'^T G^T J' G p' and the equations of motion of
a body

    m r''                          + Phi_r^T lambda = m g + F
    4 G^T J' G p''                 + Phi_p^T lambda = 2 G^T n' + 8 G(p')^T J' G(p') p

(J' the body-frame inertia tensor, n' the body-frame torque): M(q) depends on p
(``mass_constant`` is 0; (M x)_q is analytic) and Q holds the quadratic velocity
term 8 G(p')^T J' G(p') p (its derivatives in q and q' are analytic too).

Compiled tables: see csrc/python/spatial_py.c (the column names come from
``mbint._core.spatial_layout()``).

References
----------
.. [1] E. J. Haug, Computer-Aided Kinematics and Dynamics of Mechanical Systems,
   Vol. I, Allyn and Bacon, 1989, chs. 9-11.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .. import _core
from .._validate import as_capsule
from ._bodymodel import BodyModel
from .planar import _finite, _timefn
from .planar import _vec as _planar_vec

__all__ = ["SpatialModel", "SpatialBody", "SpatialElement", "quat_from_matrix",
           "matrix_from_quat", "quat_from_axis_angle", "COORDS"]

#: coordinate names of a body, in the order of q
COORDS = ("x", "y", "z", "e0", "e1", "e2", "e3")

_CON_UNITS = {"dot1": ["rad"], "dot2": ["m"], "point": ["m", "m", "m"], "dist": ["m^2"],
              "angle": ["rad"]}


@lru_cache(maxsize=None)
def _layout():
    L = _core.spatial_layout()
    L["con_index"] = {c: k for k, c in enumerate(L["con"])}
    L["force_index"] = {c: k for k, c in enumerate(L["force"])}
    return L


# ---------------------------------------------------------------- rotations
def matrix_from_quat(p):
    """Rotation matrix of the Euler parameters p = (e0, e1, e2, e3), shape (3, 3)
    (or (3, 3, m) for p of shape (4, m)): A = (e0^2 - e.e) I + 2 e e^T + 2 e0 e~."""
    p = np.asarray(p, float)
    e0, e1, e2, e3 = p
    return np.array([
        [e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3]])


def quat_from_axis_angle(axis, angle):
    """Euler parameters of the rotation by ``angle`` (rad) about ``axis`` (3,)."""
    a = np.asarray(axis, float).reshape(-1)
    n = np.linalg.norm(a)
    if a.size != 3 or not n > 0 or not np.isfinite(n):
        raise ValueError(f"axis must be a finite non-zero 3-vector, got {axis!r}.")
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * a / n])


def quat_from_matrix(R, tol=1e-9):
    """Euler parameters (e0 >= 0) of a rotation matrix R (3, 3); ValueError when R is
    not orthonormal with determinant +1 to ``tol``."""
    R = np.asarray(R, float)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError("a rotation matrix must be a finite (3, 3) array.")
    if np.abs(R.T @ R - np.eye(3)).max() > tol or abs(np.linalg.det(R) - 1) > tol:
        raise ValueError("the matrix is not a rotation (R^T R = I, det R = +1).")
    tr = np.trace(R)
    # Shepperd's method: the largest of 4 e0^2, 4 e1^2, ... first
    d = np.array([tr, R[0, 0], R[1, 1], R[2, 2]])
    k = int(np.argmax(d))
    if k == 0:
        e0 = math.sqrt(1 + tr) / 2
        p = [e0, (R[2, 1] - R[1, 2]) / (4 * e0), (R[0, 2] - R[2, 0]) / (4 * e0),
             (R[1, 0] - R[0, 1]) / (4 * e0)]
    elif k == 1:
        e1 = math.sqrt(1 + 2 * R[0, 0] - tr) / 2
        p = [(R[2, 1] - R[1, 2]) / (4 * e1), e1, (R[0, 1] + R[1, 0]) / (4 * e1),
             (R[0, 2] + R[2, 0]) / (4 * e1)]
    elif k == 2:
        e2 = math.sqrt(1 + 2 * R[1, 1] - tr) / 2
        p = [(R[0, 2] - R[2, 0]) / (4 * e2), (R[0, 1] + R[1, 0]) / (4 * e2), e2,
             (R[1, 2] + R[2, 1]) / (4 * e2)]
    else:
        e3 = math.sqrt(1 + 2 * R[2, 2] - tr) / 2
        p = [(R[1, 0] - R[0, 1]) / (4 * e3), (R[0, 2] + R[2, 0]) / (4 * e3),
             (R[1, 2] + R[2, 1]) / (4 * e3), e3]
    p = np.array(p)
    return -p if p[0] < 0 else p


def _E(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])


def _G(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def _perp_basis(h):
    """Unit f, g with (f, g, h) right-handed and orthonormal (h a unit vector)."""
    e = np.eye(3)[int(np.argmin(np.abs(h)))]
    f = np.cross(h, e)
    f /= np.linalg.norm(f)
    return f, np.cross(h, f)


def _vec(where, what, v, n=3):
    """``v`` as n finite floats (ValueError naming ``where`` and ``what``)."""
    return _planar_vec(where, what, v, n)


def _unit(where, what, v):
    a = _vec(where, what, v)
    n = np.linalg.norm(a)
    if not n > 1e-300:
        raise ValueError(f"{where}: {what} must be a non-zero vector, got {a.tolist()}.")
    return a / n


# ---------------------------------------------------------------- bodies, elements
class SpatialBody:
    """A rigid body of a :class:`SpatialModel` (or its ground).

    Attributes
    ----------
    index : int
        Position in the model (0-based); -1 for the ground.
    name : str
    mass : float
        kg (``nan`` for the ground).
    inertia : ndarray, shape (3, 3)
        Centroidal inertia tensor in the body frame, kg m^2.
    r0, p0 : ndarray
        Initial position (3,) in m and Euler parameters (4,).
    v0, pd0 : ndarray
        Initial velocity (3,) in m/s and Euler-parameter rates (4,) in 1/s.
    """

    def __init__(self, model, index, name, mass, inertia, r0, p0, v0, pd0):
        self.model = model
        self.index = index
        self.name = name
        self.mass = mass
        self.inertia = inertia
        self.r0 = np.array(r0, float)
        self.p0 = np.array(p0, float)
        self.v0 = np.array(v0, float)
        self.pd0 = np.array(pd0, float)

    @property
    def is_ground(self):
        return self.index < 0

    @property
    def q0(self):
        """Initial (x, y, z, e0, e1, e2, e3), shape (7,)."""
        return np.concatenate([self.r0, self.p0])

    @property
    def qd0(self):
        """Initial rates, shape (7,)."""
        return np.concatenate([self.v0, self.pd0])

    @property
    def coords(self):
        """Indices of this body's seven coordinates in q (empty for the ground)."""
        return [] if self.is_ground else list(range(7 * self.index, 7 * self.index + 7))

    def _rp(self, q):
        if self.is_ground:
            return None, None
        if q is None:
            return self.r0, self.p0
        q = np.asarray(q, float)
        o = 7 * self.index
        return q[o:o + 3], q[o + 3:o + 7]

    def rotation(self, q=None):
        """Rotation matrix A (body to global) at q: (3, 3), or (3, 3, m) for q (nq, m)."""
        r, p = self._rp(q)
        if p is None:
            return np.eye(3) if q is None or np.ndim(q) == 1 else \
                np.repeat(np.eye(3)[:, :, None], np.shape(q)[-1], axis=2)
        return matrix_from_quat(p)

    def point(self, s, q=None):
        """Global position in m of the body point s' (3,) at q: shape (3,) or (3, m)."""
        s = np.asarray(s, float)
        r, p = self._rp(q)
        if p is None:
            return s.copy() if q is None or np.ndim(q) == 1 else \
                np.repeat(s[:, None], np.shape(q)[-1], axis=1)
        A = matrix_from_quat(p)
        return r + np.einsum("ij...,j->i...", A, s)

    def omega(self, q=None, qd=None):
        """Angular velocity in rad/s in the global frame, omega = 2 E(p) p'."""
        if self.is_ground:
            return np.zeros(3)
        if q is None:
            p, pd = self.p0, self.pd0
        else:
            o = 7 * self.index
            p, pd = np.asarray(q, float)[o + 3:o + 7], np.asarray(qd, float)[o + 3:o + 7]
        if p.ndim == 1:
            return 2 * _E(p) @ pd
        return 2 * np.einsum("ijm,jm->im", np.moveaxis(np.array([_E(p[:, k]) for k in
                                                                 range(p.shape[1])]), 0, -1), pd)

    def to_body(self, P):
        """The global point P at the initial configuration in this body's frame."""
        P = np.asarray(P, float)
        if self.is_ground:
            return P.copy()
        return matrix_from_quat(self.p0).T @ (P - self.r0)

    def vector_to_body(self, a):
        """The global vector a at the initial configuration in this body's frame."""
        a = np.asarray(a, float)
        if self.is_ground:
            return a.copy()
        return matrix_from_quat(self.p0).T @ a

    def __repr__(self):
        if self.is_ground:
            return "<ground>"
        return f"<SpatialBody {self.name!r} #{self.index}: mass {self.mass:g}>"


@dataclass
class SpatialElement:
    """A joint or force as described (before packing).

    Attributes
    ----------
    kind : str
        ``spherical``, ``universal``, ``revolute``, ``cylindrical``,
        ``translational``, ``fixed``, ``distance``, ``dot1``, ``dot2``, ``point``,
        ``driver``; ``tsda``, ``rsda``, ``bushing``, ``tire``, ``python``, ``cforce``.
    name : str
    i, j : int
        Body indices (-1: the ground).
    prims : list of dict
        Table rows (constraint primitives of a joint, or force rows): ``type`` (the
        name of the row type) and table fields in body frames.
    row : int
        First row of the joint in Phi (after the nb normalization rows; set by
        :meth:`SpatialModel.compile`); -1 for forces.
    rows : int
        Number of rows of a joint in Phi.
    """

    kind: str
    name: str
    i: int
    j: int
    prims: list = field(default_factory=list)
    row: int = -1
    rows: int = 0
    fn: object = None
    point: tuple = (0.0, 0.0, 0.0)


@dataclass
class CompiledSpatial:
    """The packed tables of a :class:`SpatialModel` and the C handle made from them."""

    bodies: np.ndarray
    gravity: np.ndarray
    cons: np.ndarray
    forces: np.ndarray
    nc: int
    handle: object


class SpatialModel(BodyModel):
    """A spatial multibody mechanism in Cartesian coordinates with Euler parameters.

    Parameters
    ----------
    gravity : array_like, shape (3,)
        Acceleration of gravity in m/s^2 (applied at every centre of mass).
    name : str

    Examples
    --------
    A spherical pendulum: a rod hanging from the ground by a ball joint.

    >>> m = SpatialModel()
    >>> rod = m.add_body(1.0, (0.1, 0.1, 0.01), r=(0, 0, -0.5))
    >>> m.add_spherical(m.ground, rod, point=(0, 0, 0))
    >>> (m.nq, m.nc)
    (7, 4)

    Attributes
    ----------
    ground : SpatialBody
    bodies : list of SpatialBody
    joint_elements, force_elements : list of SpatialElement
    outputs : dict
        Named outputs ``fn(t, q, qd)`` (vectorized like :class:`PlanarModel`'s).
    description, reference : str
    t_span : tuple or None
    settings : dict
        Recommended options of :func:`mbint.simulate` (as :class:`PlanarModel`).
    view : (float, float)
        Azimuth and elevation in degrees of the projection that
        :meth:`Trajectory.animate` draws.
    """

    _coords = COORDS
    _body_type = SpatialBody

    dim = 3
    kind = "spatial"

    def __init__(self, gravity=(0.0, 0.0, -9.81), name="model"):
        self.name = str(name)
        self.gravity = _vec("SpatialModel", "gravity", gravity)
        self.ground = SpatialBody(self, -1, "ground", math.nan, np.full((3, 3), np.nan),
                                  (0, 0, 0), (1, 0, 0, 0), (0, 0, 0), (0, 0, 0, 0))
        self._init_elements()
        self.view = (-60.0, 20.0)

    # ---------------------------------------------------------------- sizes
    @property
    def nq(self):
        return 7 * len(self.bodies)

    @property
    def nc(self):
        return len(self.bodies) + sum(e.rows for e in self.joint_elements)

    @property
    def ndof(self):
        """nq - nc: the degrees of freedom when the constraints are independent."""
        return self.nq - self.nc


    @property
    def coordinate_units(self):
        """``"m"`` for positions, ``""`` (dimensionless) for Euler parameters."""
        return ["m", "m", "m", "", "", "", ""] * len(self.bodies)

    @property
    def constraint_names(self):
        """One name per row of Phi: ``"<body>.norm"`` (the normalizations), then
        ``"<joint>[r]"``."""
        return [f"{b.name}.norm" for b in self.bodies] + self._joint_row_names()

    @property
    def constraint_units(self):
        """Unit of every row of Phi: ``""`` (normalizations), ``"rad"`` (dot-1 rows of
        unit vectors and prescribed angles), ``"m"`` (points, dot-2 rows) or ``"m^2"``
        (distances, (d.d - L^2)/2)."""
        units = [""] * len(self.bodies)
        for e in self.joint_elements:
            for pr in e.prims:
                units += _CON_UNITS[pr["type"]]
        return units

    @property
    def contacts(self):
        """Penalty contacts with switching events: none (the tire is a smooth force)."""
        return []

    def coordinate_index(self, body, coord):
        """Index in q of coordinate ``coord`` (a name of :data:`COORDS` or 0..6) of a body."""
        b = self.body(body)
        if b.is_ground:
            raise ValueError("coordinate: the ground has no coordinates.")
        if isinstance(coord, str):
            if coord not in COORDS:
                raise ValueError(f"coordinate: coord must be one of {COORDS}, got {coord!r}.")
            coord = COORDS.index(coord)
        if not (isinstance(coord, numbers.Integral) and 0 <= coord < 7):
            raise ValueError(f"coordinate: coord must be one of {COORDS} or 0..6, got {coord!r}.")
        return 7 * b.index + int(coord)

    def set_initial(self, q=None, qd=None):
        """Replace the initial coordinates and/or velocities of all bodies (elements
        already added keep their body-frame attachments)."""
        if q is not None:
            q = _vec(self.name, "q", q, self.nq)
            for b in self.bodies:
                b.r0, b.p0 = q[7 * b.index:7 * b.index + 3].copy(), q[7 * b.index + 3:7 * b.index + 7].copy()
        if qd is not None:
            qd = _vec(self.name, "qd", qd, self.nq)
            for b in self.bodies:
                b.v0, b.pd0 = qd[7 * b.index:7 * b.index + 3].copy(), qd[7 * b.index + 3:7 * b.index + 7].copy()
        self._compiled = None

    # ---------------------------------------------------------------- bodies
    def add_body(self, mass, inertia, r=(0.0, 0.0, 0.0), p=None, *, R=None, axis_angle=None,
                 v=(0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0), name=None):
        """Add a rigid body.

        Parameters
        ----------
        mass : float
            kg, positive.
        inertia : array_like, shape (3,) or (3, 3)
            Centroidal inertia in the body frame, kg m^2: principal moments
            (Jxx, Jyy, Jzz) or the symmetric positive definite tensor.
        r : array_like, shape (3,)
            Initial position of the centre of mass, m.
        p : array_like, shape (4,), optional
            Initial Euler parameters (e0, e1, e2, e3), a unit quaternion (to 1e-9;
            it is normalized).  Or give the orientation as ``R`` (a rotation matrix,
            body to global) or ``axis_angle=(axis, angle)`` (rad).  Default: the
            identity.
        v : array_like, shape (3,)
            Initial velocity of the centre of mass, m/s.
        omega : array_like, shape (3,)
            Initial angular velocity in the global frame, rad/s (p' = E(p)^T omega / 2).
        name : str, optional

        Returns
        -------
        SpatialBody
        """
        k = len(self.bodies)
        name, where, mass = self._new_body(name, mass)
        J = np.array(inertia, dtype=float)
        if J.shape == (3,):
            J = np.diag(J)
        if J.shape != (3, 3):
            raise ValueError(f"{where}: inertia must be 3 principal moments or a (3, 3) "
                             f"tensor, got shape {J.shape}.")
        if not np.all(np.isfinite(J)):
            raise ValueError(f"{where}: inertia must be finite.")
        if np.abs(J - J.T).max() > 1e-12 * max(1.0, np.abs(J).max()):
            raise ValueError(f"{where}: the inertia tensor must be symmetric.")
        J = 0.5 * (J + J.T)
        if not np.linalg.eigvalsh(J).min() > 0:
            raise ValueError(f"{where}: the inertia tensor must be positive definite, "
                             f"eigenvalues {np.linalg.eigvalsh(J).tolist()}.")
        r = _vec(where, "r", r)
        given = [x is not None for x in (p, R, axis_angle)]
        if sum(given) > 1:
            raise ValueError(f"{where}: give the orientation once: p, R or axis_angle.")
        if p is not None:
            p = _vec(where, "p", p, 4)
            n = np.linalg.norm(p)
            if not abs(n - 1) <= 1e-9:
                raise ValueError(f"{where}: p must be a unit quaternion (|p| = 1), "
                                 f"got |p| = {n:.17g}.")
            p = p / n
        elif R is not None:
            try:
                p = quat_from_matrix(R)
            except ValueError as exc:
                raise ValueError(f"{where}: R: {exc}") from None
        elif axis_angle is not None:
            try:
                ax, ang = axis_angle
                ang = _finite(where, "angle", ang)
                p = quat_from_axis_angle(ax, ang)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{where}: axis_angle must be (axis (3,), angle): {exc}") from None
        else:
            p = np.array([1.0, 0.0, 0.0, 0.0])
        v = _vec(where, "v", v)
        w = _vec(where, "omega", omega)
        pd = 0.5 * _E(p).T @ w
        b = SpatialBody(self, k, name, mass, J, r, p, v, pd)
        self.bodies.append(b)
        self._compiled = None
        return b

    # frame conversions: global (initial configuration) or body frame
    @staticmethod
    def _frame(where, frame):
        if frame not in ("global", "body"):
            raise ValueError(f"{where}: frame must be 'global' or 'body', got {frame!r}.")
        return frame

    def _pt(self, where, what, b, P, frame):
        P = _vec(where, what, P)
        return b.to_body(P) if frame == "global" else P

    def _ax(self, where, what, b, a, frame):
        a = _unit(where, what, a)
        return b.vector_to_body(a) if frame == "global" else a

    def _global_axis(self, where, what, b, a, frame):
        """A unit axis in global components at the initial configuration."""
        a = _unit(where, what, a)
        return b.rotation() @ a if frame == "body" else a

    def _global_point(self, where, what, b, P, frame):
        P = _vec(where, what, P)
        return b.point(P) if frame == "body" else P

    def _joint(self, kind, name, bi, bj, prims):
        rows = sum(_layout()["con_rows"][_layout()["con_types"][pr["type"]]] for pr in prims)
        e = SpatialElement(kind, name, bi.index, bj.index, prims, row=-1, rows=rows)
        self.joint_elements.append(e)
        self._compiled = None
        return e

    # ---------------------------------------------------------------- primitives
    def add_dot1(self, body_i, a_i, body_j, a_j, frame="global", value=0.0, name=None):
        """Dot-1 primitive (RN section 3): a_i . a_j = value (1 row; 0: perpendicular).

        Parameters
        ----------
        body_i, body_j : SpatialBody, name or index
        a_i, a_j : array_like, shape (3,)
            Unit vectors fixed in body_i and body_j (normalized).
        frame : {"global", "body"}
            Vectors in the global frame at the initial configuration, or each in
            its body's frame.
        """
        name = self._name("dot1", name)
        where = f"dot1 {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        ai = self._ax(where, "a_i", bi, a_i, frame)
        aj = self._ax(where, "a_j", bj, a_j, frame)
        return self._joint("dot1", name, bi, bj,
                           [dict(type="dot1", ai=ai, aj=aj, c0=_finite(where, "value", value))])

    def add_dot2(self, body_i, a_i, s_i, body_j, s_j, frame="global", value=0.0, name=None):
        """Dot-2 primitive: a_i . (P_j - P_i) = value (1 row, m), a_i a unit vector of
        body_i, P_i = s_i on body_i, P_j = s_j on body_j."""
        name = self._name("dot2", name)
        where = f"dot2 {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        return self._joint("dot2", name, bi, bj, [dict(
            type="dot2", ai=self._ax(where, "a_i", bi, a_i, frame),
            si=self._pt(where, "s_i", bi, s_i, frame), sj=self._pt(where, "s_j", bj, s_j, frame),
            c0=_finite(where, "value", value))])

    def add_point(self, body_i, s_i, body_j, s_j=None, frame="global", name=None):
        """Spherical (point) primitive Phi^s: P_j - P_i = 0 (3 rows).  With
        ``frame="global"`` s_j defaults to s_i (one global point)."""
        name = self._name("point", name)
        where = f"point {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        if s_j is None:
            if frame != "global":
                raise ValueError(f"{where}: give s_j in body_j's frame.")
            s_j = s_i
        return self._joint("point", name, bi, bj, [dict(
            type="point", si=self._pt(where, "s_i", bi, s_i, frame),
            sj=self._pt(where, "s_j", bj, s_j, frame))])

    def add_distance(self, body_i, s_i, body_j, s_j, length=None, frame="global", name=None):
        """Distance primitive Phi^dist: |P_j - P_i| = length, written (d.d - L^2)/2 = 0
        (1 row, m^2); default length: the initial distance."""
        name = self._name("distance", name)
        where = f"distance {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        si = self._pt(where, "s_i", bi, s_i, frame)
        sj = self._pt(where, "s_j", bj, s_j, frame)
        if length is None:
            length = float(np.linalg.norm(bj.point(sj) - bi.point(si)))
        length = _finite(where, "length", length)
        if length <= 0:
            raise ValueError(f"{where}: length must be positive, got {length}.")
        return self._joint("distance", name, bi, bj, [dict(type="dist", si=si, sj=sj, c0=length)])

    # ---------------------------------------------------------------- joints
    def add_spherical(self, body_i, body_j, point, frame="global", name=None):
        """Ball joint at ``point`` (3 rows: the point primitive)."""
        name = self._name("spherical", name)
        where = f"spherical {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P = self._global_point(where, "point", bi, point, frame)
        return self._joint("spherical", name, bi, bj,
                           [dict(type="point", si=bi.to_body(P), sj=bj.to_body(P))])

    def _axis_frame(self, where, bi, bj, point, axis, frame):
        P = self._global_point(where, "point", bi, point, frame)
        h = self._global_axis(where, "axis", bi, axis, frame)
        f, g = _perp_basis(h)
        return P, f, g, h

    def add_revolute(self, body_i, body_j, point, axis, frame="global", name=None):
        """Revolute joint (5 rows: point + 2 dot-1): body_j turns relative to body_i
        about ``axis`` through ``point`` (in body_i's frame with ``frame="body"``)."""
        name = self._name("revolute", name)
        where = f"revolute {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P, f, g, h = self._axis_frame(where, bi, bj, point, axis, frame)
        V = bi.vector_to_body
        return self._joint("revolute", name, bi, bj, [
            dict(type="point", si=bi.to_body(P), sj=bj.to_body(P)),
            dict(type="dot1", ai=V(f), aj=bj.vector_to_body(h)),
            dict(type="dot1", ai=V(g), aj=bj.vector_to_body(h))])

    def add_universal(self, body_i, body_j, point, axis_i, axis_j, frame="global", name=None):
        """Universal (Hooke) joint (4 rows: point + dot-1): body_i's ``axis_i`` and
        body_j's ``axis_j`` stay perpendicular (they must be at the initial
        configuration, to 1e-8)."""
        name = self._name("universal", name)
        where = f"universal {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P = self._global_point(where, "point", bi, point, frame)
        ai = self._global_axis(where, "axis_i", bi, axis_i, frame)
        aj = self._global_axis(where, "axis_j", bj, axis_j, frame)
        if abs(ai @ aj) > 1e-8:
            raise ValueError(f"{where}: axis_i and axis_j must be perpendicular, "
                             f"cos = {ai @ aj:.3e}.")
        return self._joint("universal", name, bi, bj, [
            dict(type="point", si=bi.to_body(P), sj=bj.to_body(P)),
            dict(type="dot1", ai=bi.vector_to_body(ai), aj=bj.vector_to_body(aj))])

    def add_cylindrical(self, body_i, body_j, point, axis, frame="global", name=None):
        """Cylindrical joint (4 rows: 2 dot-1 + 2 dot-2): body_j slides along and
        turns about the line through ``point`` along ``axis`` of body_i."""
        name = self._name("cylindrical", name)
        where = f"cylindrical {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P, f, g, h = self._axis_frame(where, bi, bj, point, axis, frame)
        return self._joint("cylindrical", name, bi, bj, self._cyl_prims(bi, bj, P, f, g, h))

    @staticmethod
    def _cyl_prims(bi, bj, P, f, g, h):
        V, hj = bi.vector_to_body, bj.vector_to_body(h)
        si, sj = bi.to_body(P), bj.to_body(P)
        return [dict(type="dot1", ai=V(f), aj=hj), dict(type="dot1", ai=V(g), aj=hj),
                dict(type="dot2", ai=V(f), si=si, sj=sj), dict(type="dot2", ai=V(g), si=si, sj=sj)]

    def add_translational(self, body_i, body_j, point, axis, frame="global", name=None):
        """Translational (prismatic) joint (5 rows: cylindrical + 1 dot-1 that stops
        the rotation about the axis): body_j slides along ``axis`` of body_i."""
        name = self._name("translational", name)
        where = f"translational {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P, f, g, h = self._axis_frame(where, bi, bj, point, axis, frame)
        prims = self._cyl_prims(bi, bj, P, f, g, h)
        prims.append(dict(type="dot1", ai=bi.vector_to_body(f), aj=bj.vector_to_body(g)))
        return self._joint("translational", name, bi, bj, prims)

    def add_fixed(self, body_i, body_j, point=None, frame="global", name=None):
        """Weld (6 rows: point + 3 dot-1) holding the initial relative pose; ``point``
        defaults to body_j's centre of mass."""
        name = self._name("fixed", name)
        where = f"fixed {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P = bj.point(np.zeros(3)) if point is None else \
            self._global_point(where, "point", bi, point, frame)
        e = np.eye(3)
        Vi, Vj = bi.vector_to_body, bj.vector_to_body
        return self._joint("fixed", name, bi, bj, [
            dict(type="point", si=bi.to_body(P), sj=bj.to_body(P)),
            dict(type="dot1", ai=Vi(e[0]), aj=Vj(e[1])),
            dict(type="dot1", ai=Vi(e[1]), aj=Vj(e[2])),
            dict(type="dot1", ai=Vi(e[2]), aj=Vj(e[0]))])

    def add_driver(self, body_i, body_j, kind, point, axis, f=None, *, point_j=None,
                   frame="global", name=None, **coefficients):
        """Prescribe a relative coordinate in time (1 row).

        ``kind="rotation"``: the angle theta of body_j relative to body_i about
        ``axis`` (right-handed, 0 at the initial configuration) is f(t), written
        cos f (g_i . f_j) - sin f (f_i . f_j) = 0 (use it with a revolute or
        cylindrical joint on the same axis).  ``kind="translation"``: the offset
        axis . (P_j - P_i) = f(t) (m), P_i = ``point`` on body_i, P_j =
        ``point_j`` (default ``point``) on body_j (with a translational or
        cylindrical joint).  f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi), given as
        in :meth:`PlanarModel.add_driver`; a missing c0 holds the initial value.
        """
        name = self._name("driver", name)
        where = f"driver {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P, fv, gv, h = self._axis_frame(where, bi, bj, point, axis, frame)
        if kind == "rotation":
            if point_j is not None:
                raise ValueError(f"{where}: point_j is for kind='translation'.")
            fc = _timefn(where, f, coefficients, default_c0=0.0)
            prim = dict(type="angle", ai=bi.vector_to_body(fv), bi=bi.vector_to_body(gv),
                        aj=bj.vector_to_body(fv), **fc)
        elif kind == "translation":
            Pj = P if point_j is None else self._global_point(where, "point_j", bj, point_j, frame)
            fc = _timefn(where, f, coefficients, default_c0=float(h @ (Pj - P)))
            prim = dict(type="dot2", ai=bi.vector_to_body(h), si=bi.to_body(P),
                        sj=bj.to_body(Pj), **fc)
        else:
            raise ValueError(f"{where}: kind must be 'rotation' or 'translation', got {kind!r}.")
        return self._joint("driver", name, bi, bj, [prim])

    # ---------------------------------------------------------------- forces
    def _force(self, kind, name, bi, bj, prims, fn=None, point=(0.0, 0.0, 0.0)):
        e = SpatialElement(kind, name, bi.index, bj.index, prims, fn=fn, point=tuple(point))
        self.force_elements.append(e)
        self._compiled = None
        return e

    def add_spring_damper(self, body_i, point_i, body_j, point_j, k, c=0.0, length0=None,
                          actuator=0.0, frame="global", name=None):
        """Translational spring-damper-actuator (TSDA) between two points: tension
        F = k (l - length0) + c l' + actuator(t) along the line (N; k in N/m, c in
        N s/m); length0 defaults to the initial distance; potential k/2 (l - L0)^2."""
        name = self._name("tsda", name)
        where = f"spring_damper {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        si = self._pt(where, "point_i", bi, point_i, frame)
        sj = self._pt(where, "point_j", bj, point_j, frame)
        k, c = _finite(where, "k", k), _finite(where, "c", c)
        if length0 is None:
            length0 = float(np.linalg.norm(bj.point(sj) - bi.point(si)))
        length0 = _finite(where, "length0", length0)
        if length0 < 0:
            raise ValueError(f"{where}: length0 must be non-negative, got {length0}.")
        fa = _timefn(where, actuator, {})
        return self._force("tsda", name, bi, bj, [dict(type="tsda", si=si, sj=sj, k=k, c=c,
                                                       L0=length0, **_fa(fa))])

    def add_rotational_spring_damper(self, body_i, body_j, axis, k, c=0.0, angle0=0.0,
                                     actuator=0.0, frame="global", name=None):
        """Rotational spring-damper-actuator (RSDA) about a revolute axis: torque
        T = k (theta - angle0) + c theta' + actuator(t) (N m) restoring the angle
        theta of body_j relative to body_i about ``axis`` (0 at the initial
        configuration; theta - angle0 wrapped to (-pi, pi])."""
        name = self._name("rsda", name)
        where = f"rotational_spring_damper {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        h = self._global_axis(where, "axis", bi, axis, frame)
        f, g = _perp_basis(h)
        k, c = _finite(where, "k", k), _finite(where, "c", c)
        fa = _timefn(where, actuator, {})
        return self._force("rsda", name, bi, bj, [dict(
            type="rsda", ai=bi.vector_to_body(f), bi=bi.vector_to_body(g),
            aj=bj.vector_to_body(f), k=k, c=c, L0=_finite(where, "angle0", angle0), **_fa(fa))])

    def add_bushing(self, body_i, body_j, point, k, c=0.0, axes=None, frame="global", name=None):
        """Bushing: a linear spring-damper in all six relative coordinates of two
        frames that coincide at the initial configuration (at ``point``, axes the
        rows of ``axes``, default the global axes): the displacement components
        e_k . (P_j - P_i) (m) and the small rotation angles
        (e3_i.e2_j - e2_i.e3_j)/2, ... (rad), each with F = k x + c x'.

        Parameters
        ----------
        k, c : float or array_like, shape (6,)
            Stiffness (N/m three times, then N m/rad) and damping (N s/m, N m s/rad).
        axes : array_like, shape (3, 3), optional
            Rows: the bushing's axes (orthonormal), global at the initial
            configuration (in body_i's frame with ``frame="body"``).
        """
        name = self._name("bushing", name)
        where = f"bushing {name!r}"
        frame = self._frame(where, frame)
        bi, bj = self._pair(where, body_i, body_j)
        P = self._global_point(where, "point", bi, point, frame)
        kv = np.broadcast_to(np.asarray(k, float), (6,)).copy()
        cv = np.broadcast_to(np.asarray(c, float), (6,)).copy()
        if not (np.all(np.isfinite(kv)) and np.all(np.isfinite(cv))):
            raise ValueError(f"{where}: k and c must be finite.")
        E = np.eye(3) if axes is None else np.array(axes, float)
        if E.shape != (3, 3) or np.abs(E @ E.T - np.eye(3)).max() > 1e-9:
            raise ValueError(f"{where}: axes must be 3 orthonormal rows.")
        if frame == "body" and axes is not None:
            E = (bi.rotation() @ E.T).T
        si, sj = bi.to_body(P), bj.to_body(P)
        Vi, Vj = bi.vector_to_body, bj.vector_to_body
        prims = [dict(type="bushing_t", ai=Vi(E[a]), si=si, sj=sj, k=kv[a], c=cv[a])
                 for a in range(3)]
        for a in range(3):  # theta_a = (e_{a+2}_i . e_{a+1}_j - e_{a+1}_i . e_{a+2}_j) / 2
            b1, b2 = E[(a + 1) % 3], E[(a + 2) % 3]
            prims.append(dict(type="bushing_r", bi=Vi(b2), aj=Vj(b1), ai=Vi(b1), bj=Vj(b2),
                              k=kv[3 + a], c=cv[3 + a]))
        return self._force("bushing", name, bi, bj, prims)

    def add_tire(self, body, point, k, c=0.0, length0=None, *, road_height=0.0, bump_x=None,
                 bump_radius=0.0, wheel_radius=0.0, unilateral=False, frame="global", name=None):
        """A vertical tire spring-damper between a body point (a spindle) and the
        road height under it (RN section 5.2).

        The spring length is x = z_P - h(x_P); F_z = -(k (x - length0) + c x')
        acts vertically at P (N; k in N/m, c in N s/m).  The road is flat at
        ``road_height`` with an optional half-cylinder bump of ``bump_radius``
        (its axis along y at road level, centred at ``bump_x``), followed by a
        wheel of ``wheel_radius``: h is the path of the wheel centre minus the
        radius, sqrt((R + r)^2 - (x - x_b)^2) - R over the bump, continuous with
        a kink where the wheel first touches it (``wheel_radius=0`` is the bare
        half-cylinder, whose slope is infinite at its edges).  length0 defaults to
        the initial length (no force).  ``unilateral``: no pull (F_z >= 0).
        The potential k/2 (x - L0)^2 is exact on the flat road only (over the
        bump the force stays vertical).
        """
        name = self._name("tire", name)
        where = f"tire {name!r}"
        frame = self._frame(where, frame)
        b = self._body(where, body, "body")
        if b.is_ground:
            raise ValueError(f"{where}: body must not be the ground.")
        si = self._pt(where, "point", b, point, frame)
        k, c = _finite(where, "k", k), _finite(where, "c", c)
        z0 = _finite(where, "road_height", road_height)
        br = _finite(where, "bump_radius", bump_radius)
        wr = _finite(where, "wheel_radius", wheel_radius)
        if br < 0 or wr < 0:
            raise ValueError(f"{where}: bump_radius and wheel_radius must be non-negative.")
        bx = 0.0 if bump_x is None else _finite(where, "bump_x", bump_x)
        if bump_x is None:
            br = 0.0
        prim = dict(type="tire", si=si, k=k, c=c, z0=z0, bump_x=bx, bump_r=br, wheel_r=wr,
                    unilateral=1.0 if unilateral else 0.0)
        if length0 is None:
            P = b.point(si)
            length0 = float(P[2] - _road(prim, P[0])[0])
        prim["L0"] = _finite(where, "length0", length0)
        return self._force("tire", name, b, self.ground, [prim])

    def add_force(self, body, fn, point=(0.0, 0.0, 0.0), frame="global", name=None):
        """A point force and torque from a function: ``fn(t, q, qd)`` returns
        (F_x, F_y, F_z, n_x, n_y, n_z) in the global frame (N, N m), F applied at
        ``point`` of ``body``.

        ``fn`` is a Python callable (the slow path: called at every evaluation of
        Q with the GIL held) or a C function: a ``scipy.LowLevelCallable`` or
        ctypes function of signature
        ``int f(void *user_data, double t, const double *q, const double *qd, double *out6)``
        (0 on success), which runs without Python.  Its derivatives for implicit
        methods are central differences in C; it does not enter the energy.
        """
        name = self._name("force", name)
        where = f"force {name!r}"
        frame = self._frame(where, frame)
        b = self._body(where, body, "body")
        if b.is_ground:
            raise ValueError(f"{where}: a force on the ground has no effect.")
        cap = as_capsule(fn)
        if cap is None and not callable(fn):
            raise ValueError(f"{where}: fn must be callable fn(t, q, qd) or a LowLevelCallable.")
        s = self._pt(where, "point", b, point, frame)
        return self._force("cforce" if cap is not None else "python", name, b, self.ground, [],
                           fn=fn, point=tuple(float(v) for v in s))

    # ---------------------------------------------------------------- compile
    def compile(self):
        """Pack the model into flat tables and build the C handle (cached).

        Returns
        -------
        CompiledSpatial
        """
        if self._compiled is not None:
            return self._compiled
        if not self.bodies:
            raise ValueError(f"SpatialModel {self.name!r}: add at least one body before "
                             f"compiling.")
        L = _layout()
        ci, fi = L["con_index"], L["force_index"]
        bodies = np.array([[b.mass, b.inertia[0, 0], b.inertia[1, 1], b.inertia[2, 2],
                            b.inertia[0, 1], b.inertia[0, 2], b.inertia[1, 2]]
                           for b in self.bodies])
        rows = []
        row = len(self.bodies)
        for e in self.joint_elements:
            e.row = row
            for pr in e.prims:
                x = np.zeros(len(L["con"]))
                x[ci["type"]] = L["con_types"][pr["type"]]
                x[ci["i"]], x[ci["j"]] = e.i, e.j
                x[ci["row"]] = row
                _pack(x, ci, pr)
                rows.append(x)
                row += L["con_rows"][L["con_types"][pr["type"]]]
        cons = np.array(rows).reshape(-1, len(L["con"]))
        frows, callbacks = [], []
        for e in self.force_elements:
            if e.kind in ("python", "cforce"):
                fn = e.fn if e.kind == "python" else as_capsule(e.fn)
                callbacks.append((e.i, np.array(e.point, float), fn))
                continue
            for pr in e.prims:
                x = np.zeros(len(L["force"]))
                x[fi["type"]] = L["force_types"][pr["type"]]
                x[fi["i"]], x[fi["j"]] = e.i, e.j
                _pack(x, fi, pr)
                frows.append(x)
        forces = np.array(frows).reshape(-1, len(L["force"]))
        handle = _core.mech_spatial(bodies, self.gravity, cons, forces, row, callbacks)
        self._compiled = CompiledSpatial(bodies, self.gravity.copy(), cons, forces, row, handle)
        return self._compiled

    # ---------------------------------------------------------------- energies
    def energy(self, t=0.0, q=None, qd=None):
        """Kinetic and potential energy in J (gravity, springs, bushings, tires).

        Returns
        -------
        kinetic, potential : float, or ndarray of shape (m,) for m points
        """
        E = self._eval("energy", t, self._q(q), self._qd(qd))
        if E.ndim == 1:
            return float(E[0]), float(E[1])
        return E[0], E[1]

    def kinetic_potential(self, t, q, qd):
        """Kinetic and potential energy in J at m points (used by :class:`Trajectory`)."""
        E = self._eval("energy", t, q, qd)
        if E.ndim == 1:
            E = E[:, None]
        return E[0], E[1]

    def mass_x_q(self, q=None, x=None):
        """(M(q) x)_q for a fixed vector x (the Euler-parameter blocks), shape (nq, nq)
        or (nq, nq, m)."""
        return self._eval("mass_x_q", 0.0, self._q(q), self._qd(x))

    def joint_of_row(self, r):
        """The joint that owns row r of Phi (None for a normalization row)."""
        if 0 <= r < len(self.bodies):
            return None
        for e in self.joint_elements:
            if e.row <= r < e.row + e.rows:
                return e
        raise IndexError(f"row {r} is outside Phi (nc = {self.nc}).")

    # ---------------------------------------------------------------- drawing
    def project(self, P, view=None):
        """Screen coordinates (2,) or (2, m) of global points P (3,) or (3, m) in the
        orthographic view (azimuth, elevation in degrees; default ``self.view``)."""
        az, el = np.radians(self.view if view is None else view)
        ex = np.array([-math.sin(az), math.cos(az), 0.0])
        ey = np.array([-math.sin(el) * math.cos(az), -math.sin(el) * math.sin(az), math.cos(el)])
        P = np.asarray(P, float)
        return np.stack([np.tensordot(ex, P, 1), np.tensordot(ey, P, 1)])

    screen_labels = ("screen x [m]", "screen y [m]")

    def _attachment_points(self):
        """Body-frame points each body's elements use (with the centre of mass first),
        the ground points, and the tires (body, s, element params)."""
        pts = [[np.zeros(3)] for _ in self.bodies]
        ground, tires = [], []

        def add(b, s):
            s = np.asarray(s, float)
            if b < 0:
                ground.append(s)
            elif not any(np.allclose(s, x) for x in pts[b]):
                pts[b].append(s)

        for e in self.joint_elements + self.force_elements:
            for pr in e.prims:
                if "si" in pr:
                    add(e.i, pr["si"])
                if "sj" in pr:
                    add(e.j, pr["sj"])
                if pr["type"] == "tire":
                    tires.append((e.i, np.asarray(pr["si"], float), pr))
            if e.kind in ("python", "cforce"):
                add(e.i, e.point)
        return pts, ground, tires

    def draw_shapes(self, q, view=None):
        """What :meth:`Trajectory.animate` draws at one configuration q (nq,):
        projected polylines from every centre of mass to the points its elements
        use, no circles, the ground points, no lines, and extra polylines (the road
        under the tires, a vertical tire line)."""
        q = np.asarray(q, float)
        pts, ground, tires = self._attachment_points()
        polys = []
        for b, P in zip(self.bodies, pts):
            G = b.point(np.zeros(3), q)
            for s in P[1:]:
                polys.append(self.project(np.stack([G, b.point(s, q)], axis=1)).T)
            if len(P) == 1:
                polys.append(self.project(G)[None, :])
        g2 = self.project(np.array(ground).T).T if ground else np.zeros((0, 2))
        extra = []
        for bi, s, pr in tires:
            P = self.bodies[bi].point(s, q)
            xs = np.linspace(P[0] - 1.0, P[0] + 1.0, 41)
            road = np.array([[x, P[1], _road(pr, x)[0]] for x in xs]).T
            extra.append((self.project(road).T, dict(color="0.4", lw=1.5)))
            h = _road(pr, P[0])[0]
            extra.append((self.project(np.array([P, [P[0], P[1], h]]).T).T,
                          dict(color="C1", lw=1.0)))
        return polys, [], g2, [], extra

    # ---------------------------------------------------------------- description
    def describe(self):
        """The model as plain data (JSON-serializable; Python and C forces are
        named in ``python_forces`` but cannot be described)."""
        def prim(pr):
            return {k: (v if isinstance(v, str) else np.asarray(v, float).tolist())
                    for k, v in pr.items()}

        def elem(e):
            return dict(kind=e.kind, name=e.name, i=int(e.i), j=int(e.j), rows=int(e.rows),
                        prims=[prim(p) for p in e.prims])

        return dict(
            name=self.name, gravity=self.gravity.tolist(), dim=3,
            bodies=[dict(name=b.name, mass=float(b.mass), inertia=b.inertia.tolist(),
                         q0=b.q0.tolist(), qd0=b.qd0.tolist()) for b in self.bodies],
            joints=[elem(e) for e in self.joint_elements],
            forces=[elem(e) for e in self.force_elements if e.kind not in ("python", "cforce")],
            python_forces=[e.name for e in self.force_elements if e.kind in ("python", "cforce")],
            settings={k: (None if v is None else float(v)) for k, v in self.settings.items()},
            t_span=None if self.t_span is None else [float(v) for v in self.t_span],
            description=self.description, reference=self.reference)

    @classmethod
    def from_description(cls, d):
        """Rebuild a model from :meth:`describe` (without Python forces and outputs)."""
        m = cls(gravity=d["gravity"], name=d["name"])
        for b in d["bodies"]:
            q0, qd0 = np.asarray(b["q0"], float), np.asarray(b["qd0"], float)
            body = m.add_body(b["mass"], b["inertia"], r=q0[:3], p=q0[3:], name=b["name"])
            body.v0, body.pd0 = qd0[:3].copy(), qd0[3:].copy()
        for e in d["joints"]:
            m.joint_elements.append(SpatialElement(e["kind"], e["name"], int(e["i"]), int(e["j"]),
                                                   [dict(p) for p in e["prims"]],
                                                   rows=int(e["rows"])))
        for e in d["forces"]:
            m.force_elements.append(SpatialElement(e["kind"], e["name"], int(e["i"]), int(e["j"]),
                                                   [dict(p) for p in e["prims"]]))
        m.settings = dict(d.get("settings") or {})
        m.t_span = None if d.get("t_span") is None else tuple(d["t_span"])
        m.description = d.get("description", "")
        m.reference = d.get("reference", "")
        return m

    def __repr__(self):
        return (f"<SpatialModel {self.name!r}: {len(self.bodies)} bodies, "
                f"{len(self.joint_elements)} joints (nq = {self.nq}, nc = {self.nc}), "
                f"{len(self.force_elements)} forces>")


def _fa(fa):
    return {"fa_" + k: v for k, v in fa.items()}


def _pack(x, index, pr):
    """Write the fields of a primitive dict into a table row."""
    for key, v in pr.items():
        if key == "type":
            continue
        if key in ("ai", "bi", "aj", "bj", "si", "sj"):
            v = np.asarray(v, float)
            for c, ax in enumerate("xyz"):
                x[index[f"{key}_{ax}"]] = v[c]
        else:
            x[index[key]] = float(v)


def _road(pr, x):
    """Road height h, h', h'' of a tire's parameters at x (spatial_forces.c)."""
    z0, r, R = pr.get("z0", 0.0), pr.get("bump_r", 0.0), pr.get("wheel_r", 0.0)
    if r > 0:
        S = R + r
        dx = x - pr.get("bump_x", 0.0)
        if abs(dx) < math.sqrt(S * S - R * R):
            s = math.sqrt(S * S - dx * dx)
            return z0 + s - R, -dx / s, -S * S / s ** 3
    return z0, 0.0, 0.0
