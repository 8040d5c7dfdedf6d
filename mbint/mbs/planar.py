"""Planar multibody models in body coordinates: ``mbint.PlanarModel``.

Every body k has the coordinates q_k = (x, y, theta) of its centre of mass and
its rotation, so ``q = (x_0, y_0, theta_0, x_1, ...)`` has ``nq = 3 nb`` entries
(Nikravesh's body-coordinate formulation [1]_).  Points on a body are given in its
frame (s'); points on the ground in the global frame.  The model is described
here in Python, packed once into flat tables by :meth:`PlanarModel.compile` and
evaluated by the C kernels of csrc/mbs (Phi, Phi_q, gamma, M, Q and their
derivatives); nothing in this module runs per integration step, except the
functions of :meth:`PlanarModel.add_force`.

Compiled tables (float64, one row per element; the column names come from
``mbint._core.planar_layout()`` so that Python and C share one definition,
documented in csrc/python/planar_py.h):

=========  ============  =====================================================
table      shape         columns
=========  ============  =====================================================
bodies     (nb, 2)       mass, inertia
gravity    (2,)          g_x, g_y
joints     (nj, 19)      type i j si_x si_y sj_x sj_y ni_x ni_y L phi0 coord
                         c0 c1 c2 a w psi row
forces     (nf, 27)      type i j si_x si_y sj_x sj_y k c L0 fa_c0 fa_c1 fa_c2
                         fa_a fa_w fa_psi wrap K cd e ri rj p0_x p0_y nrm_x
                         nrm_y coord
=========  ============  =====================================================

Body indices are 0-based, -1 is the ground; ``row`` is the first row of a joint
in Phi; time functions are f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi).

References
----------
.. [1] P. E. Nikravesh, Planar Multibody Dynamics: Formulation, Programming with
   MATLAB, and Applications, 2nd ed., CRC Press, 2018.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Sequence, Union

import numpy as np

from .._typing import ArrayLike, EventFun, FloatArray, FloatOrArray, TimeFn
from .. import _core
from ._bodymodel import BodyModel
from .sensors import describe_sensors, load_sensors
from ._description import check_planar
from ._checks import _finite, _vec

__all__ = ["PlanarModel", "Body", "Element", "CompiledModel"]

_TIMEFN_KEYS = ("c0", "c1", "c2", "a", "w", "psi")
_COORDS = {"x": 0, "y": 1, "theta": 2, "phi": 2, 0: 0, 1: 1, 2: 2}
#: units of the rows of each joint (csrc/mbs/planar.c: mb_joint_eval)
_JOINT_UNITS = {"revolute": ["m", "m"], "translational": ["rad", "m"], "distance": ["m^2"],
                "fixed": ["m", "m", "rad"], "driver_angle": ["rad"]}


@lru_cache(maxsize=None)
def _layout():
    """Table layout served by the C side (column names, type codes, rows per joint)."""
    L = _core.planar_layout()
    L["joint_index"] = {c: k for k, c in enumerate(L["joint"])}
    L["force_index"] = {c: k for k, c in enumerate(L["force"])}
    return L


def _force_value(e, r, nq):
    """What the function of Python force ``e`` returned, as a flat float array; a value
    that is not real numbers raises naming the force and the value (a TypeError, or a
    ValueError as NumPy's conversion raised, which becomes the cause)."""
    expected = f"{nq} real numbers" if e.i < 0 else "3 real numbers (f_x, f_y, torque)"
    if np.iscomplexobj(r):
        raise TypeError(f"force {e.name!r}: fn returned complex values; expected {expected}.")
    try:
        return np.asarray(r, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        kind = TypeError if isinstance(exc, TypeError) else ValueError
        raise kind(f"force {e.name!r}: fn returned {repr(r)[:80]} ({type(r).__name__}); "
                   f"expected {expected}.") from exc


#: a body of a PlanarModel: the Body, its name or index ("ground" / -1: the ground)
PlanarBody = Union["Body", str, int]


class Body:
    """A rigid body of a :class:`PlanarModel` (or its ground).

    Attributes
    ----------
    index : int
        Position in the model (0-based); -1 for the ground.
    name : str
    mass, inertia : float
        Mass and centroidal moment of inertia (``nan`` for the ground).
    q0, qd0 : ndarray, shape (3,)
        Initial (x, y, theta) and their rates.
    """

    def __init__(self, model: PlanarModel, index: int, name: str, mass: float, inertia: float,
                 q0: ArrayLike, qd0: ArrayLike) -> None:
        self.model = model
        self.index = index
        self.name = name
        self.mass = mass
        self.inertia = inertia
        self.q0 = np.array(q0, dtype=float)
        self.qd0 = np.array(qd0, dtype=float)

    @property
    def is_ground(self) -> bool:
        return self.index < 0

    @property
    def coords(self) -> list[int]:
        """Indices of (x, y, theta) of this body in q (empty for the ground)."""
        return [] if self.is_ground else [3 * self.index, 3 * self.index + 1, 3 * self.index + 2]

    def point(self, s: ArrayLike, q: ArrayLike | None = None) -> FloatArray:
        """Global position (x, y) in m of the body point s' at q (default: the initial q).

        Parameters
        ----------
        s : array_like, shape (2,)
            The point in the body frame [m] (on the ground: in the global frame).
        q : array_like, shape (nq,) or (nq, m), optional
            Coordinates of the model: one state, or m states along the last
            axis (a trajectory's ``traj.q``).

        Returns
        -------
        ndarray, shape (2,) or (2, m)
        """
        s = np.asarray(s, float)
        if self.is_ground:
            if q is None or np.ndim(q) == 1:
                return s.copy()
            return np.repeat(s[:, None], np.shape(q)[-1], axis=1)
        qk = self.q0 if q is None else np.asarray(q, float)[3 * self.index:3 * self.index + 3]
        c, sn = np.cos(qk[2]), np.sin(qk[2])
        return np.stack([qk[0] + c * s[0] - sn * s[1], qk[1] + sn * s[0] + c * s[1]])

    def __repr__(self):
        if self.is_ground:
            return "<ground>"
        return f"<Body {self.name!r} #{self.index}: mass {self.mass:g}, inertia {self.inertia:g}>"


@dataclass
class Element:
    """A joint or force element as described (before packing).

    Attributes
    ----------
    kind : str
        ``revolute``, ``translational``, ``distance``, ``fixed``,
        ``driver_coord``, ``driver_angle``, ``tsda``, ``rsda``, ``contact_line``,
        ``contact_circles``, ``generalized`` or ``python``.
    name : str
    i, j : int
        Body indices (-1: ground).
    params : dict
        Table fields (see the module docstring).
    row : int
        First row in Phi (joints); -1 for forces.
    rows : int
        Number of rows in Phi (joints).
    """

    kind: str
    name: str
    i: int
    j: int
    params: dict = field(default_factory=dict)
    row: int = -1
    rows: int = 0
    fn: object = None


@dataclass
class CompiledModel:
    """The packed tables of a :class:`PlanarModel` and the C handle made from them."""

    bodies: np.ndarray
    gravity: np.ndarray
    joints: np.ndarray
    forces: np.ndarray
    nc: int
    handle: object


def _timefn(where, f, kw, default_c0=0.0):
    """(c0, c1, c2, a, w, psi) from a number, a sequence, a mapping or keywords."""
    if f is not None and kw:
        raise ValueError(f"{where}: give the time function either as f or as keywords "
                         f"{_TIMEFN_KEYS}, not both.")
    if f is None or isinstance(f, Mapping):
        d = dict(kw if f is None else f)
        unknown = sorted(set(d) - set(_TIMEFN_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown time-function coefficients {unknown}; "
                             f"use {_TIMEFN_KEYS}.")
        vals = [d.get(k, 0.0) for k in _TIMEFN_KEYS]
        if "c0" not in d:
            vals[0] = default_c0
    elif isinstance(f, numbers.Real):
        vals = [f, 0.0, 0.0, 0.0, 0.0, 0.0]
    else:
        try:
            vals = list(f)
        except TypeError:
            raise ValueError(f"{where}: the time function must be a number, a sequence "
                             f"(c0, c1, c2, a, w, psi) or a mapping, got {f!r}.") from None
        if len(vals) > 6:
            raise ValueError(f"{where}: the time function has at most 6 coefficients "
                             f"(c0, c1, c2, a, w, psi), got {len(vals)}.")
        vals = vals + [0.0] * (6 - len(vals))
    return {k: _finite(where, k, v) for k, v in zip(_TIMEFN_KEYS, vals)}


class PlanarModel(BodyModel):
    """A planar multibody mechanism in body coordinates.

    Parameters
    ----------
    gravity : array_like, shape (2,)
        Acceleration of gravity (applied to every body's centre of mass).
    name : str

    Examples
    --------
    >>> m = PlanarModel(gravity=(0, -9.81))
    >>> b1 = m.add_body(mass=3.0, inertia=1.0, q=(1, 0, 0))
    >>> m.add_revolute(m.ground, (0, 0), b1, (-1, 0))
    >>> m.add_rotational_spring_damper(m.ground, b1, k=400, c=15, angle0=-np.pi / 2, wrap=True)

    Attributes
    ----------
    ground : Body
    bodies : list of Body
    joint_elements, force_elements : list of Element
    outputs : dict
        Named outputs ``fn(t, q, qd)`` of the model (vectorized: q, qd of shape
        (nq, m), t of shape (m,)); :meth:`Trajectory.output` evaluates them.
        Every driver adds ``"<driver>.torque"`` or ``"<driver>.force"``.
    output_units : dict
        The unit of an output by name, where known (``"N m"``, ``"N"``, ...).
    description, reference : str
        What the model is and where it comes from (set by :mod:`mbint.models`).
    t_span : tuple or None
        Suggested simulation interval.
    settings : dict
        Recommended step and tolerance options of :func:`mbint.simulate`
        (keys among ``rtol``, ``atol``, ``first_step``, ``max_step``,
        ``min_step``, ``max_steps``); simulate applies them to every option
        the caller does not give.
    reference_energy : callable or None
        The source's own energy formula ``E(q, qd)`` in J (q, qd of shape (nq,)
        or (nq, m); a float or shape (m,)), to check :meth:`energy` against.
    """

    _coords = ("x", "y", "theta")
    _body_type = Body

    kind = "planar"

    def __init__(self, gravity: Sequence[float] = (0.0, -9.81), name: str = "model") -> None:
        self.name = str(name)
        self.gravity = _vec("PlanarModel", "gravity", gravity)
        self.ground = Body(self, -1, "ground", math.nan, math.nan, (0, 0, 0), (0, 0, 0))
        self._init_elements()

    # ---------------------------------------------------------------- sizes
    @property
    def nq(self) -> int:
        return 3 * len(self.bodies)

    @property
    def nc(self) -> int:
        return sum(j.rows for j in self.joint_elements)

    @property
    def coordinate_units(self) -> list[str]:
        """Unit of every entry of q: ``"m"`` for x and y, ``"rad"`` for theta."""
        return ["m", "m", "rad"] * len(self.bodies)

    @property
    def constraint_units(self) -> list[str]:
        """Unit of every row of Phi: ``"m"`` (positions), ``"rad"`` (angles) or
        ``"m^2"`` (a distance joint's (d.d - L^2)/2); a multiplier of a row in unit
        u has unit J/u (N, N m or N/m)."""
        units = []
        for j in self.joint_elements:
            if j.kind == "driver_coord":
                units.append("rad" if int(j.params.get("coord", 0)) % 3 == 2 else "m")
            else:
                units += _JOINT_UNITS[j.kind]
        return units

    @property
    def constraint_names(self) -> list[str]:
        """One name per row of Phi: ``"<joint>[r]"`` (r = 0, 1, ...) for the rows of a
        joint of several rows, the joint's name alone for a one-row joint (a driver
        named ``"motor"`` has the row ``"motor"``, not ``"motor[0]"``)."""
        return self._joint_row_names()

    @property
    def contacts(self) -> list[Element]:
        """The contact elements, in the order of :meth:`contact_gaps`."""
        return [f for f in self.force_elements if f.kind in ("contact_line", "contact_circles")]

    def set_initial(self, q: ArrayLike | None = None, qd: ArrayLike | None = None) -> None:
        """Replace the initial coordinates and/or velocities of all bodies."""
        if q is not None:
            q = _vec(self.name, "q", q, self.nq)
            for b in self.bodies:
                b.q0 = q[3 * b.index:3 * b.index + 3].copy()
        if qd is not None:
            qd = _vec(self.name, "qd", qd, self.nq)
            for b in self.bodies:
                b.qd0 = qd[3 * b.index:3 * b.index + 3].copy()

    # ---------------------------------------------------------------- bodies
    def add_body(self, mass: float, inertia: float, q: ArrayLike = (0.0, 0.0, 0.0),
                 qd: ArrayLike = (0.0, 0.0, 0.0), name: str | None = None) -> Body:
        """Add a rigid body.

        Parameters
        ----------
        mass, inertia : float
            Mass and centroidal moment of inertia, both positive.
        q : array_like, shape (3,)
            Initial (x, y, theta) of the centre of mass and the rotation.
        qd : array_like, shape (3,)
            Initial rates.
        name : str, optional
            Unique name (default ``"body<k>"``).

        Returns
        -------
        Body
        """
        k = len(self.bodies)
        name, where, mass = self._new_body(name, mass)
        inertia = _finite(where, "inertia", inertia)
        if inertia <= 0:
            raise ValueError(f"{where}: inertia must be positive, got {inertia}.")
        b = Body(self, k, name, mass, inertia, _vec(where, "q", q, 3), _vec(where, "qd", qd, 3))
        self.bodies.append(b)
        self._compiled = None
        return b

    # ---------------------------------------------------------------- joints
    def _add_joint(self, kind, name, bi, bj, params):
        L = _layout()
        rows = L["joint_rows"][L["joint_types"][kind]]
        e = Element(kind, name, bi.index, bj.index, params, row=self.nc, rows=rows)
        self.joint_elements.append(e)
        self._compiled = None
        return e

    def add_revolute(self, body_i: PlanarBody, si: ArrayLike, body_j: PlanarBody, sj: ArrayLike,
                     name: str | None = None) -> Element:
        """Pin joint: point si of body_i coincides with point sj of body_j (2 rows)."""
        name = self._name("revolute", name, self.joint_elements)
        where = f"revolute {name!r}"
        bi, bj = self._pair(where, body_i, body_j)
        si, sj = _vec(where, "si", si), _vec(where, "sj", sj)
        return self._add_joint("revolute", name, bi, bj,
                               dict(si_x=si[0], si_y=si[1], sj_x=sj[0], sj_y=sj[1]))

    def add_translational(self, body_i: PlanarBody, si: ArrayLike, body_j: PlanarBody,
                          sj: ArrayLike, axis: ArrayLike = (1.0, 0.0), phi0: float | None = None,
                          name: str | None = None) -> Element:
        """Prismatic joint (2 rows): sj on body_j slides along the line through si of
        body_i with direction ``axis`` (in body_i's frame); the relative angle
        theta_j - theta_i stays ``phi0`` (default: its initial value)."""
        name = self._name("translational", name, self.joint_elements)
        where = f"translational {name!r}"
        bi, bj = self._pair(where, body_i, body_j)
        si, sj, ax = _vec(where, "si", si), _vec(where, "sj", sj), _vec(where, "axis", axis)
        nrm = math.hypot(*ax)
        if nrm == 0:
            raise ValueError(f"{where}: axis must be a non-zero vector.")
        ax = ax / nrm
        phi0 = bj.q0[2] - bi.q0[2] if phi0 is None else _finite(where, "phi0", phi0)
        return self._add_joint("translational", name, bi, bj,
                               dict(si_x=si[0], si_y=si[1], sj_x=sj[0], sj_y=sj[1],
                                    ni_x=ax[0], ni_y=ax[1], phi0=phi0))

    def add_distance(self, body_i: PlanarBody, si: ArrayLike, body_j: PlanarBody, sj: ArrayLike,
                     length: float | None = None, name: str | None = None) -> Element:
        """Rigid link of length ``length`` between si on body_i and sj on body_j
        (1 row; default length: the initial distance)."""
        name = self._name("distance", name, self.joint_elements)
        where = f"distance {name!r}"
        bi, bj = self._pair(where, body_i, body_j)
        si, sj = _vec(where, "si", si), _vec(where, "sj", sj)
        if length is None:
            length = float(np.linalg.norm(bj.point(sj) - bi.point(si)))
        length = _finite(where, "length", length)
        if length <= 0:
            raise ValueError(f"{where}: length must be positive, got {length}.")
        return self._add_joint("distance", name, bi, bj,
                               dict(si_x=si[0], si_y=si[1], sj_x=sj[0], sj_y=sj[1], L=length))

    def add_fixed(self, body_i: PlanarBody, si: ArrayLike, body_j: PlanarBody,
                  sj: ArrayLike = (0.0, 0.0), phi0: float | None = None,
                  name: str | None = None) -> Element:
        """Weld (3 rows): si on body_i coincides with sj on body_j and the relative
        angle stays phi0.  ``si=None`` takes the initial position of sj expressed in
        body_i's frame; phi0 defaults to the initial relative angle."""
        name = self._name("fixed", name, self.joint_elements)
        where = f"fixed {name!r}"
        bi, bj = self._pair(where, body_i, body_j)
        sj = _vec(where, "sj", sj)
        if si is None:
            p = bj.point(sj)
            if bi.is_ground:
                si = p
            else:
                c, s = math.cos(bi.q0[2]), math.sin(bi.q0[2])
                d = p - bi.q0[:2]
                si = np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])
        si = _vec(where, "si", si)
        phi0 = bj.q0[2] - bi.q0[2] if phi0 is None else _finite(where, "phi0", phi0)
        return self._add_joint("fixed", name, bi, bj,
                               dict(si_x=si[0], si_y=si[1], sj_x=sj[0], sj_y=sj[1], phi0=phi0))

    def add_driver(self, body: PlanarBody, coord: str | int = "theta", f: TimeFn = None, *,
                   relative_to: PlanarBody | None = None, name: str | None = None,
                   **coefficients: float) -> Element:
        """Prescribe a coordinate or a relative angle as a function of time (1 row).

        ``q[body, coord] = f(t)``, or with ``relative_to``:
        ``theta_body - theta_relative_to = f(t)``, where
        f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi).

        Parameters
        ----------
        body : Body
        coord : {"x", "y", "theta"} or {0, 1, 2}
            Driven coordinate (``"theta"`` only with ``relative_to``).
        f : float, sequence or mapping, optional
            The coefficients: a constant, ``(c0, c1, c2, a, w, psi)`` (shorter
            sequences are padded with zeros) or a mapping; or give them as
            keywords (``c1=2.0, a=0.1, w=3.0``).  Missing c0 holds the initial
            value, so ``add_driver(b, "theta", c1=1.0)`` turns b at 1 rad/s from
            where it starts.
        relative_to : Body, optional
            Drive theta_body - theta_relative_to instead (may be the ground).
        name : str, optional
            Default ``"driver<k>"``; its one row of Phi is named by it alone.

        Returns
        -------
        Element

        Notes
        -----
        The driver is a motor: the model gets the output ``"<name>.torque"`` (N m;
        ``coord="theta"``) or ``"<name>.force"`` (N; ``"x"``, ``"y"``), listed in
        :attr:`output_units`: the effort it applies to ``body`` in the positive
        sense of the driven coordinate (-lam of its row; with ``relative_to`` the
        torque on ``body``, ``relative_to`` receiving the opposite), so that effort
        times the coordinate's rate is its power in W
        (:func:`mbint.mbs.reactions.driver_effort`).
        """
        kind = "driver_angle" if relative_to is not None else "driver_coord"
        name = self._name("driver", name, self.joint_elements)
        where = f"driver {name!r}"
        if coord not in _COORDS:
            raise ValueError(f"{where}: coord must be 'x', 'y' or 'theta' (or 0, 1, 2), "
                             f"got {coord!r}.")
        c = _COORDS[coord]
        b = self._body(where, body, "body")
        if relative_to is not None:
            if c != 2:
                raise ValueError(f"{where}: a relative driver prescribes an angle; "
                                 f"coord must be 'theta'.")
            bi, bj = self._pair(where, relative_to, b)
            fcoef = _timefn(where, f, coefficients, default_c0=bj.q0[2] - bi.q0[2])
            e = self._add_joint("driver_angle", name, bi, bj, dict(fcoef))
        else:
            if b.is_ground:
                raise ValueError(f"{where}: the ground cannot be driven.")
            fcoef = _timefn(where, f, coefficients, default_c0=b.q0[c])
            e = self._add_joint(kind, name, b, self.ground, dict(fcoef, coord=c))
            e.j = -1
        self._add_driver_output(e)
        return e

    # ---------------------------------------------------------------- forces
    def _add_force(self, kind, name, bi, bj, params, fn=None):
        e = Element(kind, name, bi.index, bj.index, params, fn=fn)
        self.force_elements.append(e)
        self._compiled = None
        return e

    def add_spring_damper(self, body_i: PlanarBody, si: ArrayLike, body_j: PlanarBody,
                          sj: ArrayLike, k: float, c: float = 0.0, length0: float | None = None,
                          actuator: float = 0.0, name: str | None = None) -> Element:
        """Translational spring-damper-actuator (TSDA) between si on body_i and sj on
        body_j: tension F = k (l - length0) + c l' + actuator(t) along the line.

        length0 defaults to the initial distance; ``actuator`` is a time function
        (number, sequence or mapping, as in :meth:`add_driver`).  Potential energy
        k/2 (l - length0)^2.
        """
        name = self._name("tsda", name, self.force_elements)
        where = f"spring_damper {name!r}"
        bi, bj = self._pair(where, body_i, body_j)
        si, sj = _vec(where, "si", si), _vec(where, "sj", sj)
        k, c = _finite(where, "k", k), _finite(where, "c", c)
        if length0 is None:
            length0 = float(np.linalg.norm(bj.point(sj) - bi.point(si)))
        length0 = _finite(where, "length0", length0)
        if length0 < 0:
            raise ValueError(f"{where}: length0 must be non-negative, got {length0}.")
        fa = _timefn(where, actuator, {})
        return self._add_force("tsda", name, bi, bj,
                               dict(si_x=si[0], si_y=si[1], sj_x=sj[0], sj_y=sj[1], k=k, c=c,
                                    L0=length0, **{"fa_" + key: v for key, v in fa.items()}))

    def add_rotational_spring_damper(self, body_i: PlanarBody, body_j: PlanarBody, k: float,
                                     c: float = 0.0, angle0: float | None = None,
                                     wrap: bool = False, name: str | None = None) -> Element:
        """Rotational spring-damper (RSDA) between body_i (or the ground) and body_j:
        torque T = k (theta - angle0) + c theta', theta = theta_j - theta_i.

        Parameters
        ----------
        angle0 : float, optional
            Zero-tension angle (default: the initial relative angle).
        wrap : bool
            Use (theta - angle0) wrapped to (-pi, pi], so that angles that differ
            by full turns are the same spring state.
        """
        name = self._name("rsda", name, self.force_elements)
        where = f"rotational_spring_damper {name!r}"
        bi, bj = self._pair(where, body_i, body_j)
        k, c = _finite(where, "k", k), _finite(where, "c", c)
        angle0 = bj.q0[2] - bi.q0[2] if angle0 is None else _finite(where, "angle0", angle0)
        return self._add_force("rsda", name, bi, bj,
                               dict(k=k, c=c, L0=angle0, wrap=int(bool(wrap))))

    def add_force(self, body: PlanarBody | None,
                  fn: Callable[[float, FloatArray, FloatArray], ArrayLike],
                  name: str | None = None) -> Element:
        """A force computed by a Python function (slow path: called at every
        evaluation of Q, with the GIL held).

        Parameters
        ----------
        body : Body or None
            With a body, ``fn(t, q, qd)`` returns (f_x, f_y, torque) (N, N, N m)
            applied at the body's centre of mass; with ``None`` it returns the
            whole generalized force vector (nq,).  t is a float in s, q and qd
            the full state vectors (nq,) of one point.
        fn : callable

        Notes
        -----
        Its derivatives for the implicit and exponential methods are taken by
        central differences in C; it does not enter the potential energy.
        """
        name = self._name("force", name, self.force_elements)
        where = f"force {name!r}"
        if not callable(fn):
            raise ValueError(f"{where}: fn must be callable fn(t, q, qd).")
        b = self.ground if body is None else self._body(where, body, "body")
        if body is not None and b.is_ground:
            raise ValueError(f"{where}: a force on the ground has no effect; give a body or None.")
        return self._add_force("python", name, b, self.ground, {}, fn=fn)

    def add_generalized_force(self, body: PlanarBody, coord: str, f: TimeFn = None,
                              name: str | None = None, **coefficients: float) -> Element:
        """A prescribed generalized force Q[body, coord] += f(t), constant or harmonic:
        f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi) (given as in :meth:`add_driver`)."""
        name = self._name("generalized", name, self.force_elements)
        where = f"generalized_force {name!r}"
        b = self._body(where, body, "body")
        if b.is_ground:
            raise ValueError(f"{where}: body must not be the ground.")
        if coord not in _COORDS:
            raise ValueError(f"{where}: coord must be 'x', 'y' or 'theta', got {coord!r}.")
        fa = _timefn(where, f, coefficients)
        return self._add_force("generalized", name, b, self.ground,
                               dict(coord=3 * b.index + _COORDS[coord],
                                    **{"fa_" + key: v for key, v in fa.items()}))

    def add_contact(self, body: PlanarBody, point: ArrayLike = (0.0, 0.0), radius: float = 0.0, *,
                    other: PlanarBody | None = None, other_point: ArrayLike = (0.0, 0.0),
                    other_radius: float = 0.0, line_point: ArrayLike = (0.0, 0.0),
                    normal: ArrayLike = (0.0, 1.0), K: float, damping: float = 0.0,
                    exponent: float = 1.0, name: str | None = None) -> Element:
        """Penalty contact (LLM paper, section 3).

        Without ``other`` (or with the ground): the circle of ``radius`` (0: a
        point) centred at ``point`` on ``body`` against the ground line through
        ``line_point`` with unit ``normal`` (pointing out of the ground);
        penetration delta = radius - (P - line_point) . normal.  With ``other`` a
        body: circle against circle, delta = radius + other_radius - |P_j - P_i|.
        Normal force K delta^exponent + damping delta' when delta > 0 (never
        pulling); potential energy K delta^(e+1) / (e+1).
        """
        kind = "contact_line" if other is None or (isinstance(other, Body) and other.is_ground) \
            or other == "ground" else "contact_circles"
        name = self._name("contact", name, self.force_elements)
        where = f"contact {name!r}"
        bi = self._body(where, body, "body")
        if bi.is_ground:
            raise ValueError(f"{where}: body must not be the ground.")
        bj = self.ground if kind == "contact_line" else self._body(where, other, "other")
        if bj is bi:
            raise ValueError(f"{where}: a body cannot touch itself.")
        si = _vec(where, "point", point)
        ri = _finite(where, "radius", radius)
        K = _finite(where, "K", K)
        cd = _finite(where, "damping", damping)
        e = _finite(where, "exponent", exponent)
        if ri < 0:
            raise ValueError(f"{where}: radius must be non-negative, got {ri}.")
        if K <= 0:
            raise ValueError(f"{where}: K must be positive, got {K}.")
        if cd < 0:
            raise ValueError(f"{where}: damping must be non-negative, got {cd}.")
        if e <= 0:
            raise ValueError(f"{where}: exponent must be positive, got {e}.")
        params = dict(si_x=si[0], si_y=si[1], ri=ri, K=K, cd=cd, e=e)
        if kind == "contact_line":
            p0, n = _vec(where, "line_point", line_point), _vec(where, "normal", normal)
            nn = math.hypot(*n)
            if nn == 0:
                raise ValueError(f"{where}: normal must be a non-zero vector.")
            params.update(p0_x=p0[0], p0_y=p0[1], nrm_x=n[0] / nn, nrm_y=n[1] / nn)
        else:
            sj = _vec(where, "other_point", other_point)
            rj = _finite(where, "other_radius", other_radius)
            if rj < 0:
                raise ValueError(f"{where}: other_radius must be non-negative, got {rj}.")
            params.update(sj_x=sj[0], sj_y=sj[1], rj=rj)
        return self._add_force(kind, name, bi, bj, params)

    # ---------------------------------------------------------------- compile
    def compile(self) -> CompiledModel:
        """Pack the model into flat tables and build the C handle (cached).

        Returns
        -------
        CompiledModel

        Raises
        ------
        ValueError
            An empty model, or a parameter rejected by the C side.
        """
        if self._compiled is not None:
            return self._compiled
        if not self.bodies:
            raise ValueError(f"PlanarModel {self.name!r}: add at least one body before compiling.")
        L = _layout()
        jt, ft = L["joint_types"], L["force_types"]
        ji, fi = L["joint_index"], L["force_index"]
        bodies = np.array([[b.mass, b.inertia] for b in self.bodies], dtype=float)
        joints = np.zeros((len(self.joint_elements), len(L["joint"])))
        row = 0
        for r, e in enumerate(self.joint_elements):
            e.row = row
            row += e.rows
            joints[r, ji["type"]] = jt[e.kind]
            joints[r, ji["i"]], joints[r, ji["j"]] = e.i, e.j
            joints[r, ji["row"]] = e.row
            for key, v in e.params.items():
                joints[r, ji[key]] = v
        table_forces = [e for e in self.force_elements if e.kind != "python"]
        forces = np.zeros((len(table_forces), len(L["force"])))
        for r, e in enumerate(table_forces):
            forces[r, fi["type"]] = ft[e.kind]
            forces[r, fi["i"]], forces[r, fi["j"]] = e.i, e.j
            if e.kind.startswith("contact"):
                forces[r, fi["e"]] = 1.0
            for key, v in e.params.items():
                forces[r, fi[key]] = v
        py = [e for e in self.force_elements if e.kind == "python"]
        extra = self._python_forces(py) if py else None
        handle = _core.mech_planar(bodies, self.gravity, joints, forces, row, extra)
        self._compiled = CompiledModel(bodies, self.gravity.copy(), joints, forces, row, handle)
        return self._compiled

    def _python_forces(self, elements):
        nq = self.nq

        def extra(t, q, qd):
            Q = np.zeros(nq)
            for e in elements:
                v = _force_value(e, e.fn(t, q, qd), nq)
                if e.i < 0:
                    if v.size != nq:
                        raise ValueError(f"force {e.name!r}: fn returned {v.size} values, "
                                         f"expected the generalized force vector ({nq}).")
                    Q += v
                else:
                    if v.size != 3:
                        raise ValueError(f"force {e.name!r}: fn returned {v.size} values, "
                                         f"expected (f_x, f_y, torque).")
                    Q[3 * e.i:3 * e.i + 3] += v
            return Q

        return extra

    # ---------------------------------------------------------------- description
    def describe(self) -> dict[str, Any]:
        """The model as plain data (JSON-serializable): what :func:`mbint.load`
        rebuilds a model from.

        Returns
        -------
        dict
            ``name``, ``gravity``, ``bodies`` (name, mass, inertia, q0, qd0),
            ``joints`` and ``forces`` (kind, name, i, j, params), ``settings``,
            ``t_span``, ``description``, ``reference``, ``sensors`` (each with its
            packed row), and ``python_forces``:
            the names of the forces computed by Python functions, which plain
            data cannot hold (a model rebuilt from the description lacks them).
        """
        def elem(e):
            return dict(kind=e.kind, name=e.name, i=int(e.i), j=int(e.j),
                        params={k: float(v) for k, v in e.params.items()})

        return dict(
            name=self.name, gravity=[float(g) for g in self.gravity],
            bodies=[dict(name=b.name, mass=float(b.mass), inertia=float(b.inertia),
                         q0=[float(v) for v in b.q0], qd0=[float(v) for v in b.qd0])
                    for b in self.bodies],
            joints=[elem(e) for e in self.joint_elements],
            forces=[elem(e) for e in self.force_elements if e.kind != "python"],
            python_forces=[e.name for e in self.force_elements if e.kind == "python"],
            settings={k: (None if v is None else float(v)) for k, v in self.settings.items()},
            t_span=None if self.t_span is None else [float(v) for v in self.t_span],
            description=self.description, reference=self.reference,
            sensors=describe_sensors(self))

    @classmethod
    def from_description(cls, d: dict[str, Any]) -> PlanarModel:
        """Rebuild a model from :meth:`describe` (without Python forces and
        outputs, which plain data cannot hold).

        Parameters
        ----------
        d : dict

        Returns
        -------
        PlanarModel

        Raises
        ------
        ValueError
            A description that lacks a parameter of an element or has one more
            (:mod:`mbint.mbs._description`).
        """
        check_planar(d)
        m = cls(gravity=d["gravity"], name=d["name"])
        for b in d["bodies"]:
            m.add_body(b["mass"], b["inertia"], q=b["q0"], qd=b["qd0"], name=b["name"])
        L = _layout()
        for e in d["joints"]:
            rows = L["joint_rows"][L["joint_types"][e["kind"]]]
            m.joint_elements.append(Element(e["kind"], e["name"], int(e["i"]), int(e["j"]),
                                            dict(e["params"]), row=m.nc, rows=rows))
            if e["kind"].startswith("driver"):
                m._add_driver_output(m.joint_elements[-1])
        for e in d["forces"]:
            m.force_elements.append(Element(e["kind"], e["name"], int(e["i"]), int(e["j"]),
                                            dict(e["params"])))
        m.settings = {k: v for k, v in (d.get("settings") or {}).items()}
        m.t_span = None if d.get("t_span") is None else tuple(d["t_span"])
        m.description = d.get("description", "")
        m.reference = d.get("reference", "")
        load_sensors(m, d.get("sensors"))
        return m

    # ---------------------------------------------------------------- pickling
    def energy(self, t: ArrayLike = 0.0, q: ArrayLike | None = None,
               qd: ArrayLike | None = None) -> tuple[FloatOrArray, FloatOrArray]:
        """Kinetic and potential energy in J (gravity, springs, contacts).

        Parameters
        ----------
        t : float or array_like, shape (m,)
            Time [s].
        q, qd : array_like, shape (nq,) or (nq, m), optional
            Default: the initial state.

        Returns
        -------
        kinetic, potential : float, or ndarray of shape (m,) for m points
        """
        E = self._eval("energy", t, self._q(q), self._qd(qd))
        if E.ndim == 1:
            return float(E[0]), float(E[1])
        return E[0], E[1]

    def contact_gaps(self, q: ArrayLike | None = None) -> FloatArray:
        """Penetration in m of every contact (> 0 in contact; LLM eq 19), in the
        order of :attr:`contacts`.

        Parameters
        ----------
        q : array_like, shape (nq,) or (nq, m), optional

        Returns
        -------
        ndarray, shape (n_contacts,) or (n_contacts, m)
        """
        return self._eval("contact_gaps", 0.0, self._q(q))

    def contact_events(self, terminal: bool = False) -> list[EventFun]:
        """Event functions ``g(t, q, qd)`` (one per contact) whose zeros are the
        instants of first contact and separation (LLM eq 17-19), for
        :func:`mbint.simulate` ``events=``."""
        evs = []
        for k, e in enumerate(self.contacts):
            def g(t, q, qd, k=k):
                return float(self.contact_gaps(q)[k])
            g.terminal = terminal  # type: ignore[attr-defined]
            g.direction = 0  # type: ignore[attr-defined]
            g.__name__ = f"gap_{e.name}"
            evs.append(g)
        return evs

    def joint_of_row(self, r: int) -> Element:
        """The joint that owns row r of Phi."""
        for j in self.joint_elements:
            if j.row <= r < j.row + j.rows:
                return j
        raise IndexError(f"row {r} is outside Phi (nc = {self.nc}).")

    def geometry(self) -> tuple[list[FloatArray], FloatArray, list[Any], list[Any]]:
        """Points to draw: per body, the body-frame points its joints and forces
        use (always including the centre of mass), and the ground points.

        Returns
        -------
        points : list of ndarray, shape (k, 2) per body
        ground : ndarray, shape (g, 2)
        circles : list of (body index, s (2,), radius)
        lines : list of (p0 (2,), normal (2,))
        """
        pts = [[(0.0, 0.0)] for _ in self.bodies]
        ground, circles, lines = [], [], []

        def add(b, s):
            s = (float(s[0]), float(s[1]))
            if b < 0:
                ground.append(s)
            elif s not in pts[b]:
                pts[b].append(s)

        for e in self.joint_elements + self.force_elements:
            p = e.params
            if "si_x" in p and e.kind not in ("driver_coord", "driver_angle", "generalized"):
                add(e.i, (p["si_x"], p["si_y"]))
            if "sj_x" in p and e.kind not in ("contact_line",):
                add(e.j, (p["sj_x"], p["sj_y"]))
            if e.kind.startswith("contact"):
                circles.append((e.i, np.array([p["si_x"], p["si_y"]]), p["ri"]))
                if e.kind == "contact_circles":
                    sj = np.array([p.get("sj_x", 0.0), p.get("sj_y", 0.0)])
                    circles.append((e.j, sj, p["rj"]))
                else:
                    lines.append((np.array([p["p0_x"], p["p0_y"]]),
                                  np.array([p["nrm_x"], p["nrm_y"]])))
        return ([np.array(p) for p in pts], np.array(ground).reshape(-1, 2), circles, lines)

    def kinetic_potential(self, t: ArrayLike, q: ArrayLike,
                          qd: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Kinetic and potential energy in J at m points (used by :class:`Trajectory`).

        Parameters
        ----------
        t : float or array_like, shape (m,)
        q, qd : array_like, shape (nq,) or (nq, m)

        Returns
        -------
        kinetic, potential : ndarray, shape (m,) (m = 1 for one point)
        """
        E = self._eval("energy", t, q, qd)
        if E.ndim == 1:
            E = E[:, None]
        return E[0], E[1]

    def __repr__(self):
        return (f"<PlanarModel {self.name!r}: {len(self.bodies)} bodies, "
                f"{len(self.joint_elements)} joints "
                f"(nc = {self.nc}), {len(self.force_elements)} forces>")
