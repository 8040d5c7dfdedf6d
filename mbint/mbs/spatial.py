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

The ``add_*`` builders of the joints, drivers and forces are in
:mod:`mbint.mbs._spatial_elements` (the mixin ``SpatialElements`` of
:class:`SpatialModel`); this module holds the rotations, the bodies, compiling,
energies, drawing and the description.  Compiled tables: see
csrc/python/spatial_py.c (the column names come from ``mbint._core.spatial_layout()``).

References
----------
.. [1] E. J. Haug, Computer-Aided Kinematics and Dynamics of Mechanical Systems,
   Vol. I, Allyn and Bacon, 1989, chs. 9-11.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Sequence, Union

import numpy as np

from .._typing import ArrayLike, FloatArray, FloatOrArray
from .. import _core
from .._validate import as_capsule
from ._bodymodel import BodyModel
from ._rotations import _E, _G, matrix_from_quat, quat_from_axis_angle, quat_from_matrix  # noqa: F401
from .sensors import describe_sensors, load_sensors
from ._description import check_spatial
from ._spatial_elements import SpatialElement, SpatialElements, _layout, _road, _vec
from .planar import _finite

__all__ = ["SpatialModel", "SpatialBody", "SpatialElement", "quat_from_matrix",
           "matrix_from_quat", "quat_from_axis_angle", "COORDS"]

#: coordinate names of a body, in the order of q
COORDS = ("x", "y", "z", "e0", "e1", "e2", "e3")

_CON_UNITS = {"dot1": ["rad"], "dot2": ["m"], "point": ["m", "m", "m"], "dist": ["m^2"],
              "angle": ["rad"]}


# ---------------------------------------------------------------- bodies
#: a body of a SpatialModel: the SpatialBody, its name or index
SpatialBodyRef = Union["SpatialBody", str, int]


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

    def __init__(self, model: SpatialModel, index: int, name: str, mass: float, inertia: ArrayLike,
                 r0: ArrayLike, p0: ArrayLike, v0: ArrayLike, pd0: ArrayLike) -> None:
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
    def is_ground(self) -> bool:
        return self.index < 0

    @property
    def q0(self) -> FloatArray:
        """Initial (x, y, z, e0, e1, e2, e3), shape (7,)."""
        return np.concatenate([self.r0, self.p0])

    @property
    def qd0(self) -> FloatArray:
        """Initial rates, shape (7,)."""
        return np.concatenate([self.v0, self.pd0])

    @property
    def coords(self) -> list[int]:
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

    def rotation(self, q: ArrayLike | None = None) -> FloatArray:
        """Rotation matrix A (body to global) at q: (3, 3), or (3, 3, m) for q (nq, m)."""
        r, p = self._rp(q)
        if p is None:
            return np.eye(3) if q is None or np.ndim(q) == 1 else \
                np.repeat(np.eye(3)[:, :, None], np.shape(q)[-1], axis=2)
        return matrix_from_quat(p)

    def point(self, s: ArrayLike, q: ArrayLike | None = None) -> FloatArray:
        """Global position in m of the body point s' (3,) at q: shape (3,) or (3, m)."""
        s = np.asarray(s, float)
        r, p = self._rp(q)
        if p is None:
            return s.copy() if q is None or np.ndim(q) == 1 else \
                np.repeat(s[:, None], np.shape(q)[-1], axis=1)
        A = matrix_from_quat(p)
        return r + np.einsum("ij...,j->i...", A, s)

    def omega(self, q: ArrayLike | None = None, qd: ArrayLike | None = None) -> FloatArray:
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

    def to_body(self, P: ArrayLike) -> FloatArray:
        """The global point P at the initial configuration in this body's frame."""
        P = np.asarray(P, float)
        if self.is_ground:
            return P.copy()
        return matrix_from_quat(self.p0).T @ (P - self.r0)

    def vector_to_body(self, a: ArrayLike) -> FloatArray:
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
class CompiledSpatial:
    """The packed tables of a :class:`SpatialModel` and the C handle made from them."""

    bodies: np.ndarray
    gravity: np.ndarray
    cons: np.ndarray
    forces: np.ndarray
    nc: int
    handle: object


class SpatialModel(SpatialElements, BodyModel):
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
        Named outputs ``fn(t, q, qd)`` (vectorized like :class:`PlanarModel`'s);
        every driver adds ``"<driver>.torque"`` or ``"<driver>.force"``.
    output_units : dict
        The unit of an output by name, where known (``"N m"``, ``"N"``, ...).
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

    def __init__(self, gravity: Sequence[float] = (0.0, 0.0, -9.81), name: str = "model") -> None:
        self.name = str(name)
        self.gravity = _vec("SpatialModel", "gravity", gravity)
        self.ground = SpatialBody(self, -1, "ground", math.nan, np.full((3, 3), np.nan),
                                  (0, 0, 0), (1, 0, 0, 0), (0, 0, 0), (0, 0, 0, 0))
        self._init_elements()
        self.view = (-60.0, 20.0)

    # ---------------------------------------------------------------- sizes
    @property
    def nq(self) -> int:
        return 7 * len(self.bodies)

    @property
    def nc(self) -> int:
        return len(self.bodies) + sum(e.rows for e in self.joint_elements)

    @property
    def ndof(self) -> int:
        """nq - nc: the degrees of freedom when the constraints are independent."""
        return self.nq - self.nc


    @property
    def coordinate_units(self) -> list[str]:
        """``"m"`` for positions, ``""`` (dimensionless) for Euler parameters."""
        return ["m", "m", "m", "", "", "", ""] * len(self.bodies)

    @property
    def constraint_names(self) -> list[str]:
        """One name per row of Phi: ``"<body>.norm"`` (the normalizations), then
        ``"<joint>[r]"`` for the rows of a joint of several rows and the joint's name
        alone for a one-row joint (a driver ``"motor"``, not ``"motor[0]"``)."""
        return [f"{b.name}.norm" for b in self.bodies] + self._joint_row_names()

    @property
    def constraint_units(self) -> list[str]:
        """Unit of every row of Phi: ``""`` (normalizations), ``"rad"`` (dot-1 rows of
        unit vectors and prescribed angles), ``"m"`` (points, dot-2 rows) or ``"m^2"``
        (distances, (d.d - L^2)/2)."""
        units = [""] * len(self.bodies)
        for e in self.joint_elements:
            for pr in e.prims:
                units += _CON_UNITS[pr["type"]]
        return units

    @property
    def contacts(self) -> list[Any]:
        """Penalty contacts with switching events: none (the tire is a smooth force)."""
        return []

    def coordinate_index(self, body: SpatialBodyRef, coord: str | int) -> int:
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

    def set_initial(self, q: ArrayLike | None = None, qd: ArrayLike | None = None) -> None:
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
    def add_body(self, mass: float, inertia: ArrayLike, r: ArrayLike = (0.0, 0.0, 0.0),
                 p: ArrayLike | None = None, *, R: ArrayLike | None = None,
                 axis_angle: tuple[ArrayLike, float] | None = None, v: ArrayLike = (0.0, 0.0, 0.0),
                 omega: ArrayLike = (0.0, 0.0, 0.0), name: str | None = None) -> SpatialBody:
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

    # ---------------------------------------------------------------- compile
    def compile(self) -> CompiledSpatial:
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
    def energy(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
               qd: ArrayLike | None = None) -> tuple[FloatOrArray, FloatOrArray]:
        """Kinetic and potential energy in J (gravity, springs, bushings, tires).

        Returns
        -------
        kinetic, potential : float, or ndarray of shape (m,) for m points
        """
        E = self._eval("energy", t, self._q(q), self._qd(qd))
        if E.ndim == 1:
            return float(E[0]), float(E[1])
        return E[0], E[1]

    def kinetic_potential(self, t: ArrayLike, q: ArrayLike,
                          qd: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Kinetic and potential energy in J at m points (used by :class:`Trajectory`)."""
        E = self._eval("energy", t, q, qd)
        if E.ndim == 1:
            E = E[:, None]
        return E[0], E[1]

    def mass_x_q(self, q: ArrayLike | None = None, x: ArrayLike | None = None) -> FloatArray:
        """(M(q) x)_q for a fixed vector x (the Euler-parameter blocks), shape (nq, nq)
        or (nq, nq, m)."""
        return self._eval("mass_x_q", 0.0, self._q(q), self._qd(x))

    def joint_of_row(self, r: int) -> SpatialElement | None:
        """The joint that owns row r of Phi (None for a normalization row)."""
        if 0 <= r < len(self.bodies):
            return None
        for e in self.joint_elements:
            if e.row <= r < e.row + e.rows:
                return e
        raise IndexError(f"row {r} is outside Phi (nc = {self.nc}).")

    # ---------------------------------------------------------------- drawing
    def project(self, P: ArrayLike, view: tuple[float, float] | None = None) -> FloatArray:
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

    def draw_shapes(self, q: ArrayLike, view: tuple[float, float] | None = None
                    ) -> tuple[list[FloatArray], list[Any], FloatArray, list[Any], list[Any]]:
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
    def describe(self) -> dict[str, Any]:
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
            description=self.description, reference=self.reference,
            sensors=describe_sensors(self))

    @classmethod
    def from_description(cls, d: dict[str, Any]) -> SpatialModel:
        """Rebuild a model from :meth:`describe` (without Python forces and outputs);
        ValueError for a description that lacks a field of a primitive or has one more
        (:mod:`mbint.mbs._description`)."""
        check_spatial(d)
        m = cls(gravity=d["gravity"], name=d["name"])
        for b in d["bodies"]:
            q0, qd0 = np.asarray(b["q0"], float), np.asarray(b["qd0"], float)
            body = m.add_body(b["mass"], b["inertia"], r=q0[:3], p=q0[3:], name=b["name"])
            body.v0, body.pd0 = qd0[:3].copy(), qd0[3:].copy()
        for e in d["joints"]:
            m.joint_elements.append(SpatialElement(e["kind"], e["name"], int(e["i"]), int(e["j"]),
                                                   [dict(p) for p in e["prims"]],
                                                   rows=int(e["rows"])))
            if e["kind"] == "driver":
                m._add_driver_output(m.joint_elements[-1])
        for e in d["forces"]:
            m.force_elements.append(SpatialElement(e["kind"], e["name"], int(e["i"]), int(e["j"]),
                                                   [dict(p) for p in e["prims"]]))
        m.settings = dict(d.get("settings") or {})
        m.t_span = None if d.get("t_span") is None else tuple(d["t_span"])
        m.description = d.get("description", "")
        m.reference = d.get("reference", "")
        load_sensors(m, d.get("sensors"))
        return m


    def __repr__(self):
        return (f"<SpatialModel {self.name!r}: {len(self.bodies)} bodies, "
                f"{len(self.joint_elements)} joints (nq = {self.nq}, nc = {self.nc}), "
                f"{len(self.force_elements)} forces>")


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
