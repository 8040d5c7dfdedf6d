"""The model :func:`mbint.load_urdf` returns: :class:`UrdfModel`, a
:class:`~mbint.SpatialModel` that knows the robot's moving joints (:class:`UrdfJoint`):
forward kinematics from joint coordinates to body coordinates, joint coordinates,
rates and accelerations of a body state, joint torques and dampers, and one named
output per joint coordinate.

Identities used (:mod:`mbint.mbs.spatial`): the angular velocity in the global frame is
omega = 2 E(p) p', its derivative alpha = 2 E(p) p'' (E(p') p' = 0), and p' = E(p)^T
omega / 2 on |p| = 1.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .._typing import ArrayLike, FloatArray
from .planar import _timefn
from ._rotations import _E, matrix_from_quat, quat_from_matrix
from .spatial import SpatialModel
from ._spatial_elements import _perp_basis

__all__ = ["UrdfModel", "UrdfJoint"]


def _rot(axis, angle):
    """Rotation matrix by ``angle`` (rad) about the unit ``axis`` (Rodrigues)."""
    a = np.asarray(axis, float)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


@dataclass(eq=False)
class UrdfJoint:
    """A moving joint of a :class:`UrdfModel`.

    Attributes
    ----------
    name, type : str
        As in the file (``revolute``, ``continuous`` or ``prismatic``).
    parent, child : int
        Group indices (the group of the parent link and of the child link).
    R, t : ndarray
        The joint frame in the parent group's frame: rotation (3, 3) and origin (3,) m.
    axis : ndarray, shape (3,)
        Unit axis in the joint frame.
    damping : float
        ``<dynamics damping>``: N m s/rad (revolute) or N s/m (prismatic); 0 if absent.
    lower, upper : float or None
        ``<limit>`` (rad or m); enforced only by :meth:`UrdfModel.set_joint_limits`.
    """

    name: str
    type: str
    parent: int
    child: int
    R: np.ndarray
    t: np.ndarray
    axis: np.ndarray
    damping: float = 0.0
    lower: float | None = None
    upper: float | None = None

    @property
    def revolute(self) -> bool:
        return self.type != "prismatic"

    def motion(self, x: float) -> tuple[FloatArray, FloatArray]:
        """Child frame in the joint frame at coordinate x: (R, t)."""
        if self.revolute:
            return _rot(self.axis, x), np.zeros(3)
        return np.eye(3), x * self.axis


def _Ex(p, x):
    """E(p) x for p, x of shape (4, m): shape (3, m)."""
    e0, e1, e2, e3 = p
    x0, x1, x2, x3 = x
    return np.array([-e1 * x0 + e0 * x1 - e3 * x2 + e2 * x3,
                     -e2 * x0 + e3 * x1 + e0 * x2 - e1 * x3,
                     -e3 * x0 - e2 * x1 + e1 * x2 + e0 * x3])


def _dot(a, b):
    return np.einsum("i...,i...->...", a, b)


def _mv(A, x):
    """A x for A (3, 3, m) and x (3,) or (3, m)."""
    return np.einsum("ijm,jm->im", A, x) if np.ndim(x) == 2 else np.einsum("ijm,j->im", A, x)


class _Frame:
    """A group's link frame at m points: rotation A (3, 3, m), origin o, angular velocity
    w, origin velocity v, angular acceleration al, origin acceleration a (each (3, m);
    the rates None when not given)."""

    def __init__(self, A, o, w=None, v=None, al=None, a=None):
        self.A, self.o, self.w, self.v, self.al, self.a = A, o, w, v, al, a


class _Output:
    """The output ``what`` ("x", "xd" or "xdd") of joint k of a UrdfModel, fn(t, q, qd)."""

    def __init__(self, model, k, what):
        self.model, self.k, self.what = model, k, what

    def __call__(self, t, q, qd):
        m = self.model
        if self.what == "xdd":
            qdd = m.accelerations(t, q, qd)[0]
            return m.joint_state(q, qd, qdd, unwrap=True, joints=[self.k])[2][self.k]
        return m.joint_state(q, qd, unwrap=True, joints=[self.k])[0 if self.what == "x"
                                                                   else 1][self.k]


class _Drive:
    """Torque (revolute) or force (prismatic) of a joint from a Python function f(t) and
    its damper, as the callback force fn(t, q, qd) -> (F, n) of the child body
    (``side=1``) or of the parent body (``side=-1``, the reaction)."""

    def __init__(self, model, k, f, c, side, law=None):
        self.model, self.k, self.f, self.c, self.side, self.law = model, k, f, c, side, law

    def __call__(self, t, q, qd):
        m = self.model
        j = m.urdf_joints[self.k]
        x, xd = (float(v[self.k]) for v in m.joint_state(q, qd, joints=[self.k])[:2])
        u = (float(self.f(t)) if callable(self.f) else 0.0) - self.c * xd
        if self.law is not None:
            u += self.law(x, xd)
        fr = m._frames(np.asarray(q, float)[:, None], groups={j.parent, j.child})
        a = _mv(fr[j.parent].A, j.R @ j.axis)[:, 0]
        out = np.zeros(6)
        if j.revolute:
            out[3:] = self.side * u * a
            return out
        F = u * a
        if self.side > 0:
            out[:3] = F
            return out
        rc = m._com(fr, j.child)[:, 0]
        rp = m._com(fr, j.parent)[:, 0]
        out[:3] = -F
        out[3:] = np.cross(rc - rp, -F)
        return out


class UrdfModel(SpatialModel):
    """A :class:`~mbint.SpatialModel` built from a URDF file by :func:`mbint.load_urdf`.

    Attributes
    ----------
    urdf_path : str
    urdf_joints : list of UrdfJoint
        The moving joints kept, in the file's order (the order of joint vectors).
    dropped_joints : list of str
        Joints of massless leaf links that were left out.
    floating_base : bool
    output_units : dict
        Unit of every named output: ``"<joint>.angle"`` rad, ``".rate"`` rad/s,
        ``".accel"`` rad/s^2 (revolute, continuous), ``".position"`` m,
        ``".velocity"`` m/s, ``".acceleration"`` m/s^2 (prismatic).
    """

    def _setup(self, path, groups, joints, dropped, floating_base):
        self.urdf_path = str(path)
        self._groups = groups
        self.urdf_joints = joints
        self.dropped_joints = list(dropped)
        self.floating_base = bool(floating_base)
        self._drives = {}
        self.output_units = {}

    # ---------------------------------------------------------------- joint vectors
    @property
    def joint_names(self) -> list[str]:
        """Names of the moving joints, in the order of joint vectors."""
        return [j.name for j in self.urdf_joints]

    @property
    def joint_units(self) -> list[str]:
        """``"rad"`` (revolute, continuous) or ``"m"`` (prismatic) per joint."""
        return ["rad" if j.revolute else "m" for j in self.urdf_joints]

    def _joint_vector(self, what: str, x: Any) -> FloatArray:
        n = len(self.urdf_joints)
        if x is None:
            return np.zeros(n)
        if isinstance(x, Mapping):
            unknown = sorted(set(x) - set(self.joint_names))
            if unknown:
                raise ValueError(f"{self.name}: {what}: unknown joints {unknown}; the moving "
                                 f"joints are {self.joint_names}.")
            return np.array([float(x.get(nm, 0.0)) for nm in self.joint_names])
        v = np.asarray(x, float).reshape(-1)
        if v.size != n or not np.all(np.isfinite(v)):
            raise ValueError(f"{self.name}: {what} must be {n} finite joint values (the "
                             f"joints {self.joint_names}) or a dict by name, got {v.size}.")
        return v

    # ---------------------------------------------------------------- kinematics
    def _fk(self, qj, qdj, base_pose=None, base_velocity=None):
        """Forward kinematics: per group the centre of mass r, rotation A, centre-of-mass
        velocity v and angular velocity w (global frame)."""
        R0, o0 = np.eye(3), np.zeros(3)
        v0, w0 = np.zeros(3), np.zeros(3)
        if base_pose is not None or base_velocity is not None:
            if not self.floating_base:
                raise ValueError(f"{self.name}: base_pose and base_velocity need "
                                 f"floating_base=True.")
        if base_pose is not None:
            o0, Rp = np.asarray(base_pose[0], float).reshape(3), np.asarray(base_pose[1], float)
            R0 = matrix_from_quat(Rp / np.linalg.norm(Rp)) if Rp.shape == (4,) \
                else matrix_from_quat(quat_from_matrix(Rp))
        if base_velocity is not None:
            v0, w0 = (np.asarray(x, float).reshape(3) for x in base_velocity)
        Rs, os_, vs, ws = [R0], [o0], [v0], [w0]
        for j in self._tree_joints():
            x, xd = self._xk(j, qj, qdj)
            Rp, op, vp, wp = Rs[j.parent], os_[j.parent], vs[j.parent], ws[j.parent]
            RJ, oJ = Rp @ j.R, op + Rp @ j.t
            ag = RJ @ j.axis
            Rm, tm = j.motion(x)
            Rk, ok = RJ @ Rm, oJ + RJ @ tm
            vk = vp + np.cross(wp, ok - op)
            if j.revolute:
                wk = wp + xd * ag
            else:
                wk, vk = wp, vk + xd * ag
            Rs.append(Rk), os_.append(ok), vs.append(vk), ws.append(wk)
        r = [o + R @ g.com for o, R, g in zip(os_, Rs, self._groups)]
        v = [vo + np.cross(w, R @ g.com) for vo, w, R, g in zip(vs, ws, Rs, self._groups)]
        return r, Rs, v, ws

    def _tree_joints(self):
        """Every moving joint of the tree in the order of the groups (dropped ones too)."""
        return [g.parent_joint for g in self._groups[1:]]

    def _xk(self, j, qj, qdj):
        k = self.joint_names.index(j.name) if j.name in self.joint_names else None
        if k is None:  # a dropped joint: at 0
            return 0.0, 0.0
        return float(qj[k]), float(qdj[k])

    def body_state(self, q_joint: Mapping[str, float] | ArrayLike | None = None,
                   qd_joint: Mapping[str, float] | ArrayLike | None = None,
                   base_pose: tuple[ArrayLike, ArrayLike] | None = None,
                   base_velocity: tuple[ArrayLike, ArrayLike] | None = None) -> tuple[FloatArray, FloatArray]:
        """Body coordinates and velocities of a joint state (forward kinematics).

        Parameters
        ----------
        q_joint, qd_joint : dict or array_like, optional
            Joint coordinates (rad, m) and rates (rad/s, m/s), as ``q`` and ``qd`` of
            :func:`mbint.load_urdf`.
        base_pose, base_velocity : optional
            The floating base's pose and velocity, as in :func:`mbint.load_urdf`.

        Returns
        -------
        q, qd : ndarray, shape (nq,)
            Consistent: Phi(q) = 0 and Phi_q qd = 0 to round-off.
        """
        qj, qdj = self._joint_vector("q", q_joint), self._joint_vector("qd", qd_joint)
        r, A, v, w = self._fk(qj, qdj, base_pose, base_velocity)
        q, qd = np.zeros(self.nq), np.zeros(self.nq)
        for k, g in enumerate(self._groups):
            b = g.body
            if b is None or b.is_ground:
                continue
            p = quat_from_matrix(A[k])
            o = 7 * b.index
            q[o:o + 3], q[o + 3:o + 7] = r[k], p
            qd[o:o + 3], qd[o + 3:o + 7] = v[k], 0.5 * _E(p).T @ w[k]
        return q, qd

    def set_joint_state(self, q_joint: Mapping[str, float] | ArrayLike | None = None,
                        qd_joint: Mapping[str, float] | ArrayLike | None = None,
                        base_pose: tuple[ArrayLike, ArrayLike] | None = None,
                        base_velocity: tuple[ArrayLike, ArrayLike] | None = None) -> None:
        """Make a joint state the initial state (:meth:`body_state`, then
        :meth:`set_initial`)."""
        self.set_initial(*self.body_state(q_joint, qd_joint, base_pose, base_velocity))

    def _frames(self, q, qd=None, qdd=None, groups=None):
        """The link frame of every group with a body (or the ground) at the points of
        q (nq, m), or of the groups listed."""
        m = q.shape[1]
        out = {}
        for k, g in enumerate(self._groups):
            b = g.body
            if b is None or (groups is not None and k not in groups):
                continue
            if b.is_ground:
                z = np.zeros((3, m))
                out[k] = _Frame(np.repeat(np.eye(3)[:, :, None], m, axis=2), z, z, z, z, z)
                continue
            o = 7 * b.index
            p = q[o + 3:o + 7]
            A = matrix_from_quat(p)
            s = _mv(A, -g.com)  # from the centre of mass to the link frame's origin
            f = _Frame(A, q[o:o + 3] + s)
            if qd is not None:
                f.w = 2 * _Ex(p, qd[o + 3:o + 7])
                f.v = qd[o:o + 3] + np.cross(f.w, s, axis=0)
            if qdd is not None:
                f.al = 2 * _Ex(p, qdd[o + 3:o + 7])
                f.a = (qdd[o:o + 3] + np.cross(f.al, s, axis=0)
                       + np.cross(f.w, np.cross(f.w, s, axis=0), axis=0))
            out[k] = f
        return out

    def _com(self, fr, k):
        return fr[k].o + _mv(fr[k].A, self._groups[k].com)

    def joint_state(self, q: ArrayLike, qd: ArrayLike | None = None, qdd: ArrayLike | None = None,
                    unwrap: bool = False,
                    joints: Sequence[int] | None = None) -> tuple[Any, ...]:
        """Joint coordinates, rates and accelerations of a body state.

        Revolute and continuous joints: the angle theta (rad) of the child link about
        the axis relative to the joint frame, from the relative rotation, in
        (-pi, pi]; its rate axis . (omega_child - omega_parent) (rad/s) and the rate's
        derivative axis . (alpha_child - alpha_parent) + (omega_parent x axis) .
        (omega_child - omega_parent) (rad/s^2; the second term vanishes on the
        constraints).  Prismatic joints: d = axis . (o_child - o_joint) (m) and its
        first and second time derivatives (m/s, m/s^2), o the link frames' origins.

        Parameters
        ----------
        q, qd, qdd : array_like, shape (nq,) or (nq, m)
            Body coordinates, velocities and accelerations (qd, qdd optional).
        unwrap : bool
            Unwrap the angles along the last axis (a trajectory).
        joints : list of int, optional
            Indices of the joints to evaluate (default: all; the others are 0).

        Returns
        -------
        x, xd, xdd : ndarray, shape (n,) or (n, m)
            Per joint of :attr:`joint_names`; xd, xdd None when qd, qdd are.
        """
        one = np.ndim(q) == 1

        def pts(x):
            return None if x is None else (np.asarray(x, float)[:, None] if one
                                           else np.asarray(x, float))

        Q, QD, QDD = pts(q), pts(qd), pts(qdd)
        n, m = len(self.urdf_joints), Q.shape[1]
        ks = range(n) if joints is None else joints
        js = [self.urdf_joints[k] for k in ks]
        fr = self._frames(Q, QD, QDD, None if joints is None else
                          {g for j in js for g in (j.parent, j.child)})
        x, xd, xdd = np.zeros((n, m)), np.zeros((n, m)), np.zeros((n, m))
        for k, j in zip(ks, js):
            fi, fj = fr[j.parent], fr[j.child]
            ag = _mv(fi.A, j.R @ j.axis)
            if j.revolute:
                u, w = _perp_basis(j.axis)
                uj = _mv(fj.A, u)
                x[k] = np.arctan2(_dot(_mv(fi.A, j.R @ w), uj), _dot(_mv(fi.A, j.R @ u), uj))
                if unwrap and m > 1:
                    x[k] = np.unwrap(x[k])
                if QD is not None:
                    dw = fj.w - fi.w
                    xd[k] = _dot(ag, dw)
                if QDD is not None:
                    xdd[k] = _dot(ag, fj.al - fi.al) + _dot(np.cross(fi.w, ag, axis=0), dw)
                continue
            sJ = _mv(fi.A, j.t)
            D = fj.o - (fi.o + sJ)
            x[k] = _dot(ag, D)
            if QD is not None:
                agd = np.cross(fi.w, ag, axis=0)
                Dd = fj.v - (fi.v + np.cross(fi.w, sJ, axis=0))
                xd[k] = _dot(agd, D) + _dot(ag, Dd)
            if QDD is not None:
                agdd = np.cross(fi.al, ag, axis=0) + np.cross(fi.w, agd, axis=0)
                aJ = fi.a + np.cross(fi.al, sJ, axis=0) + np.cross(fi.w, np.cross(fi.w, sJ, axis=0),
                                                                  axis=0)
                xdd[k] = _dot(agdd, D) + 2 * _dot(agd, Dd) + _dot(ag, fj.a - aJ)
        res = [x, None if QD is None else xd, None if QDD is None else xdd]
        return tuple(r if r is None or not one else r[:, 0] for r in res)

    def base_acceleration(self, q: ArrayLike, qd: ArrayLike,
                          qdd: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """The floating base's link frame: acceleration (3,) of its origin in m/s^2 and
        angular acceleration (3,) in rad/s^2, global frame."""
        if not self.floating_base:
            raise ValueError(f"{self.name}: base_acceleration needs floating_base=True.")
        f = self._frames(*(np.asarray(x, float)[:, None] for x in (q, qd, qdd)))[0]
        return f.a[:, 0], f.al[:, 0]

    def joint_accelerations(self, q_joint: Mapping[str, float] | ArrayLike | None,
                            qd_joint: Mapping[str, float] | ArrayLike | None,
                            tau: Mapping[str, float] | ArrayLike | None, t: float = 0.0,
                            base_pose: tuple[ArrayLike, ArrayLike] | None = None,
                            base_velocity: tuple[ArrayLike, ArrayLike] | None = None) -> FloatArray:
        """Joint accelerations of the model under joint torques: forward kinematics
        (:meth:`body_state`), the index-1 accelerations q'' of the model
        (:meth:`accelerations`: the saddle-point system with M(q), Phi_q and gamma, in C)
        with ``tau`` applied as by :meth:`set_joint_torques`, and :meth:`joint_state`.

        Parameters
        ----------
        q_joint, qd_joint : dict or array_like
            Joint coordinates (rad, m) and rates (rad/s, m/s).
        tau : dict or array_like
            Joint torques (N m) or forces (N), constant; the model's own joint inputs
            are replaced during the call and restored after it (its dampers stay).
        t : float
            Time, s.
        base_pose, base_velocity : optional
            The floating base's state (:func:`mbint.load_urdf`).

        Returns
        -------
        ndarray, shape (n,) or (6 + n,)
            rad/s^2 and m/s^2 per joint; with a floating base first the base origin's
            acceleration (m/s^2) and angular acceleration (rad/s^2), global frame.
        """
        q, qd = self.body_state(q_joint, qd_joint, base_pose, base_velocity)
        tau = self._joint_vector("tau", tau)
        saved = dict(self._torques)
        self.set_joint_torques(dict(zip(self.joint_names, tau)))
        try:
            qdd = self.accelerations(t, q, qd)[0]
        finally:
            self.set_joint_torques(saved)
        xdd = self.joint_state(q, qd, qdd)[2]
        if self.floating_base:
            return np.concatenate([*self.base_acceleration(q, qd, qdd), xdd])
        return xdd

    # ---------------------------------------------------------------- inputs, outputs
    def set_joint_torques(self, torques: Mapping[str, Any] | None,
                          damping: bool | None = None) -> None:
        """Replace the joint torques (revolute, N m) and forces (prismatic, N).

        Each acts on the child link about (along) the joint axis, its reaction on
        the parent.  A number or time function (c0, c1, c2, a, w, psi) of a revolute
        joint becomes the actuator of a rotational spring-damper with k = 0 (C); a
        callable ``f(t)`` or a prismatic joint's input is a pair of callback forces
        (:meth:`add_force`), which call Python at every evaluation of the forces (a UR5
        runs about ten times slower with one than with a time function).  The damper of
        ``<dynamics damping>`` is part of the same element.

        Parameters
        ----------
        torques : dict or array_like
            By joint name (missing: none), or one value per joint.
        damping : bool, optional
            Joint dampers on or off (default: as before; on when loaded with
            ``damping=True``).
        """
        if not isinstance(torques, Mapping):
            torques = dict(zip(self.joint_names, self._joint_vector("torques", torques)))
        unknown = sorted(set(torques) - set(self.joint_names))
        if unknown:
            raise ValueError(f"{self.name}: set_joint_torques: unknown joints {unknown}.")
        if damping is not None:
            self._damping_on = bool(damping)
        names = {f"{nm}.drive" for nm in self.joint_names} | {f"{nm}.reaction"
                                                               for nm in self.joint_names}
        self.force_elements = [e for e in self.force_elements if e.name not in names]
        self._compiled = None
        self._torques = dict(torques)
        for k, j in enumerate(self.urdf_joints):
            spec = torques.get(j.name)
            c = j.damping if getattr(self, "_damping_on", True) else 0.0
            if spec is None and c == 0:
                continue
            bi, bj = self._groups[j.parent].body, self._groups[j.child].body
            where = f"set_joint_torques {j.name!r}"
            if not callable(spec):
                fa = _timefn(where, 0.0 if spec is None else spec, {})
            if j.revolute and not callable(spec):
                act = (-fa["c0"], -fa["c1"], -fa["c2"], -fa["a"], fa["w"], fa["psi"])
                self.add_rotational_spring_damper(bi, bj, j.R @ j.axis, k=0.0, c=c, actuator=act,
                                                  frame="body", name=f"{j.name}.drive")
                continue
            f = spec if callable(spec) else _TimeFunction(fa)
            self.add_force(bj, _Drive(self, k, f, c, 1), point=(0, 0, 0), frame="body",
                           name=f"{j.name}.drive")
            if not bi.is_ground:
                self.add_force(bi, _Drive(self, k, f, c, -1), point=(0, 0, 0), frame="body",
                               name=f"{j.name}.reaction")

    def set_joint_limits(self, k: float, c: float = 0.0) -> None:
        """Enforce the ``<limit lower upper>`` of the revolute and prismatic joints by
        one-sided penalty torques (forces): past a limit by delta, -k delta - c x'
        (N m with k in N m/rad and c in N m s/rad; N, N/m, N s/m for prismatic joints),
        never pulling back toward the limit.  Callback forces (:meth:`add_force`),
        replacing earlier ones; ``k=0`` and ``c=0`` remove them.  Angles are measured
        in (-pi, pi]: a limit beyond pi is never reached.

        Parameters
        ----------
        k : float
            Penalty stiffness, N m/rad or N/m.
        c : float
            Penalty damping, N m s/rad or N s/m.
        """
        names = {f"{nm}.limit" for nm in self.joint_names} | {f"{nm}.limit_reaction"
                                                               for nm in self.joint_names}
        self.force_elements = [e for e in self.force_elements if e.name not in names]
        self._compiled = None
        k, c = float(k), float(c)
        if not (math.isfinite(k) and math.isfinite(c) and k >= 0 and c >= 0):
            raise ValueError(f"{self.name}: set_joint_limits: k and c must be finite and "
                             f"non-negative, got {k}, {c}.")
        if k == 0 and c == 0:
            return
        for n, j in enumerate(self.urdf_joints):
            if j.lower is None and j.upper is None:
                continue
            bi, bj = self._groups[j.parent].body, self._groups[j.child].body
            law = _Limit(j.lower, j.upper, k, c)
            self.add_force(bj, _Drive(self, n, None, 0.0, 1, law), point=(0, 0, 0),
                           frame="body", name=f"{j.name}.limit")
            if not bi.is_ground:
                self.add_force(bi, _Drive(self, n, None, 0.0, -1, law), point=(0, 0, 0),
                               frame="body", name=f"{j.name}.limit_reaction")

    def _add_outputs(self):
        for k, j in enumerate(self.urdf_joints):
            names = ("angle", "rate", "accel") if j.revolute else ("position", "velocity",
                                                                   "acceleration")
            units = ("rad", "rad/s", "rad/s^2") if j.revolute else ("m", "m/s", "m/s^2")
            for what, nm, u in zip(("x", "xd", "xdd"), names, units):
                self.add_output(f"{j.name}.{nm}", _Output(self, k, what))
                self.output_units[f"{j.name}.{nm}"] = u


class _Limit:
    """One-sided penalty of a joint limit: past ``upper`` the torque (force)
    min(0, -k (x - upper) - c x'), below ``lower`` max(0, k (lower - x) - c x')."""

    def __init__(self, lower, upper, k, c):
        self.lower, self.upper, self.k, self.c = lower, upper, k, c

    def __call__(self, x, xd):
        if self.upper is not None and x > self.upper:
            return min(0.0, -self.k * (x - self.upper) - self.c * xd)
        if self.lower is not None and x < self.lower:
            return max(0.0, self.k * (self.lower - x) - self.c * xd)
        return 0.0


class _TimeFunction:
    """f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi)."""

    def __init__(self, fa):
        self.fa = dict(fa)

    def __call__(self, t):
        f = self.fa
        return f["c0"] + f["c1"] * t + f["c2"] * t * t + f["a"] * math.sin(f["w"] * t + f["psi"])
