"""The joint and force elements of :class:`~mbint.SpatialModel`: the ``add_*`` builders
of the constraint primitives (dot-1, dot-2, point, distance; RN section 3), of the joints
made of them and of the drivers, and of the force elements (TSDA, RSDA, bushing, tire,
point forces from a function), as the mixin :class:`SpatialElements`.

Each builder takes its points and axes in the global frame at the model's initial
configuration or each in its body's frame (``frame``; see :mod:`mbint.mbs.spatial`),
checks them, turns them into body-frame vectors once and appends a
:class:`SpatialElement` (the rows of the C tables before packing) to the model's
``joint_elements`` or ``force_elements``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .. import _core
from .._typing import ArrayLike, FloatArray, TimeFn
from .._validate import as_capsule
from ._checks import _finite, _perp_basis, _unit  # noqa: F401 (re-exported)
from ._checks import _vec as _planar_vec
from .planar import _timefn

# a SpatialBody (spatial.py, which builds on this module: not imported), its name or index
SpatialBody = Any
SpatialBodyRef = Any

__all__ = ["SpatialElements", "SpatialElement"]


@lru_cache(maxsize=None)
def _layout():
    L = _core.spatial_layout()
    L["con_index"] = {c: k for k, c in enumerate(L["con"])}
    L["force_index"] = {c: k for k, c in enumerate(L["force"])}
    return L


def _vec(where: str, what: str, v: Any, n: int = 3) -> FloatArray:
    """``v`` as n finite floats (ValueError naming ``where`` and ``what``)."""
    return _planar_vec(where, what, v, n)


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


class SpatialElements:
    """The ``add_*`` element builders of :class:`~mbint.SpatialModel` (a mixin: the model
    provides ``_name``, ``_pair``, ``_body``, ``ground``, ``joint_elements``,
    ``force_elements`` and ``_compiled``)."""

    if TYPE_CHECKING:  # what the host model provides (declared for the type checker)
        ground: SpatialBody
        joint_elements: list[SpatialElement]
        force_elements: list[SpatialElement]
        _compiled: Any

        def _name(self, kind: str, name: str | None, pool: Any = None) -> str: ...
        def _pair(self, where: str, bi: Any, bj: Any) -> tuple[SpatialBody, SpatialBody]: ...
        def _body(self, where: str, ref: Any, role: str) -> SpatialBody: ...
        def _add_driver_output(self, e: SpatialElement) -> None: ...

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
    def add_dot1(self, body_i: SpatialBodyRef, a_i: ArrayLike, body_j: SpatialBodyRef,
                 a_j: ArrayLike, frame: str = "global", value: float = 0.0,
                 name: str | None = None) -> SpatialElement:
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

    def add_dot2(self, body_i: SpatialBodyRef, a_i: ArrayLike, s_i: ArrayLike,
                 body_j: SpatialBodyRef, s_j: ArrayLike, frame: str = "global", value: float = 0.0,
                 name: str | None = None) -> SpatialElement:
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

    def add_point(self, body_i: SpatialBodyRef, s_i: ArrayLike, body_j: SpatialBodyRef,
                  s_j: ArrayLike | None = None, frame: str = "global",
                  name: str | None = None) -> SpatialElement:
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

    def add_distance(self, body_i: SpatialBodyRef, s_i: ArrayLike, body_j: SpatialBodyRef,
                     s_j: ArrayLike, length: float | None = None, frame: str = "global",
                     name: str | None = None) -> SpatialElement:
        """Distance primitive Phi^dist: ``|P_j - P_i|`` = length, written (d.d - L^2)/2 = 0
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
    def add_spherical(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef, point: ArrayLike,
                      frame: str = "global", name: str | None = None) -> SpatialElement:
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

    def add_revolute(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef, point: ArrayLike,
                     axis: ArrayLike, frame: str = "global",
                     name: str | None = None) -> SpatialElement:
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

    def add_universal(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef, point: ArrayLike,
                      axis_i: ArrayLike, axis_j: ArrayLike, frame: str = "global",
                      name: str | None = None) -> SpatialElement:
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

    def add_cylindrical(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef, point: ArrayLike,
                        axis: ArrayLike, frame: str = "global",
                        name: str | None = None) -> SpatialElement:
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

    def add_translational(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef, point: ArrayLike,
                          axis: ArrayLike, frame: str = "global",
                          name: str | None = None) -> SpatialElement:
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

    def add_fixed(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef,
                  point: ArrayLike | None = None, frame: str = "global",
                  name: str | None = None) -> SpatialElement:
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

    def add_driver(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef, kind: str,
                   point: ArrayLike, axis: ArrayLike, f: TimeFn = None, *,
                   point_j: ArrayLike | None = None, frame: str = "global", name: str | None = None,
                   **coefficients: float) -> SpatialElement:
        """Prescribe a relative coordinate in time (1 row).

        ``kind="rotation"``: the angle theta of body_j relative to body_i about
        ``axis`` (right-handed, 0 at the initial configuration) is f(t), written
        cos f (g_i . f_j) - sin f (f_i . f_j) = 0 (use it with a revolute or
        cylindrical joint on the same axis).  ``kind="translation"``: the offset
        axis . (P_j - P_i) = f(t) (m), P_i = ``point`` on body_i, P_j =
        ``point_j`` (default ``point``) on body_j (with a translational or
        cylindrical joint).  f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi), given as
        in :meth:`PlanarModel.add_driver`; a missing c0 holds the initial value.

        The driver is a motor: the model gets the output ``"<name>.torque"`` (N m,
        rotation) or ``"<name>.force"`` (N, translation), listed in
        ``output_units``: the torque it applies to body_j about ``axis`` (right-handed)
        or the force along it, so that effort times the rate of f is its power in W;
        body_i receives the opposite (:func:`mbint.mbs.reactions.driver_effort`).
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
        e = self._joint("driver", name, bi, bj, [prim])
        self._add_driver_output(e)
        return e

    # ---------------------------------------------------------------- forces
    def _force(self, kind, name, bi, bj, prims, fn=None, point=(0.0, 0.0, 0.0)):
        e = SpatialElement(kind, name, bi.index, bj.index, prims, fn=fn, point=tuple(point))
        self.force_elements.append(e)
        self._compiled = None
        return e

    def add_spring_damper(self, body_i: SpatialBodyRef, point_i: ArrayLike, body_j: SpatialBodyRef,
                          point_j: ArrayLike, k: float, c: float = 0.0,
                          length0: float | None = None, actuator: TimeFn = 0.0,
                          frame: str = "global", name: str | None = None) -> SpatialElement:
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

    def add_rotational_spring_damper(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef,
                                     axis: ArrayLike, k: float, c: float = 0.0, angle0: float = 0.0,
                                     actuator: TimeFn = 0.0, frame: str = "global",
                                     name: str | None = None) -> SpatialElement:
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

    def add_bushing(self, body_i: SpatialBodyRef, body_j: SpatialBodyRef, point: ArrayLike,
                    k: float, c: float = 0.0, axes: ArrayLike | None = None, frame: str = "global",
                    name: str | None = None) -> SpatialElement:
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

    def add_tire(self, body: SpatialBodyRef, point: ArrayLike, k: float, c: float = 0.0,
                 length0: float | None = None, *, road_height: float = 0.0,
                 bump_x: float | None = None, bump_radius: float = 0.0, wheel_radius: float = 0.0,
                 unilateral: bool = False, frame: str = "global",
                 name: str | None = None) -> SpatialElement:
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

    def add_force(self, body: SpatialBodyRef,
                  fn: Callable[[float, FloatArray, FloatArray], ArrayLike] | Any,
                  point: ArrayLike = (0.0, 0.0, 0.0), frame: str = "global",
                  name: str | None = None) -> SpatialElement:
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


def _fa(fa):
    return {"fa_" + k: v for k, v in fa.items()}


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
