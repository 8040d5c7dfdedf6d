"""Joint coordinates of a hand-built :class:`~mbint.SpatialModel` that is a tree:
:class:`SpatialJointTree` (``formulation="joint"``, issues 22 and 23).

The model's revolute, translational and spherical joints, each body reached from the
ground by exactly one path, become the tables of the C tree (``csrc/mbs/joint_spatial.c``
over an ``mb_jtree`` with ``mech_forces``): one coordinate a revolute joint (rad) or a
translational one (m), and for a spherical joint the four Euler parameters of the
relative rotation (their rates p' in the velocity part of the state: p'' = G^T w'/2 -
|p'|^2 p keeps the system second order, as the floating base of a URDF tree).  The
forces are the model's own (gravity, spring-dampers, bushings, tires, Python and C
forces): its force kernel at the body coordinates of the forward kinematics, without
the quadratic-velocity rows of the Euler parameters (the articulated-body algorithm has
its own gyroscopic terms), as body wrenches of a world-coordinate articulated-body
algorithm.

Each body's link frame has the body's axes and its origin at the point of the joint to
its parent; the joint frames are the relative poses at the model's initial
configuration, so every joint coordinate is 0 there (a spherical joint's p = (1, 0, 0,
0)).
"""
from __future__ import annotations

import numpy as np

from .. import _core
from ._rotations import matrix_from_quat, quat_from_matrix

__all__ = ["SpatialJointTree"]

#: joints of a SpatialModel that the tree holds, with the engine's joint type
_TREE_JOINTS = {"revolute": 0, "translational": 1, "spherical": 3}
_HINT = "; use formulation='index1'."


def _G(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def _rot(k, th):
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


def _order(model):
    """(child, parent, element) of every body, breadth-first from the ground."""
    name = model.name
    for e in model.joint_elements:
        if e.kind not in _TREE_JOINTS:
            raise ValueError(f"formulation='joint': {name}: {e.kind} {e.name!r} is not a joint "
                             f"of a tree (revolute, translational and spherical joints only, "
                             f"no drivers){_HINT}")
    if not model.bodies:
        raise ValueError(f"formulation='joint': {name} has no bodies{_HINT}")
    return breadth_first(model, _HINT)


def breadth_first(model, hint):
    """(child, parent, joint element) of every body of a planar or spatial model whose
    joints form a tree, breadth-first from the ground (parent -1); ValueError naming the
    joint that closes a loop or the bodies no joint reaches (``hint`` ends the message)."""
    name = model.name
    adj = {}
    for e in model.joint_elements:
        adj.setdefault(e.i, []).append(e)
        adj.setdefault(e.j, []).append(e)
    order, seen, used, frontier = [], {-1}, set(), [-1]
    while frontier:
        nxt = []
        for b in frontier:
            for e in adj.get(b, ()):
                if e.name in used:
                    continue
                used.add(e.name)
                other = e.j if e.i == b else e.i
                if other in seen:
                    raise ValueError(f"formulation='joint': {name}: joint {e.name!r} closes a "
                                     f"kinematic loop; the joint formulation takes trees{hint}")
                seen.add(other)
                order.append((other, b, e))
                nxt.append(other)
        frontier = nxt
    if len(order) != len(model.bodies):
        lost = [bd.name for bd in model.bodies if bd.index not in seen]
        raise ValueError(f"formulation='joint': {name}: bodies {lost} are not reached from the "
                         f"ground by joints{hint}")
    return order


def _joint_geometry(e, normal):
    """(point on the parent, point on the child, unit axis in the child's frame) of a
    joint element; ``normal``: the parent is the joint's body i."""
    P = e.prims
    if e.kind == "translational":
        pt = P[2]
        axis = P[0]["aj"] if normal else np.cross(P[0]["ai"], P[1]["ai"])
    elif e.kind == "revolute":
        pt = P[0]
        axis = P[1]["aj"] if normal else np.cross(P[1]["ai"], P[2]["ai"])
    else:
        pt, axis = P[0], np.array([1.0, 0.0, 0.0])
    si, sj = np.asarray(pt["si"], float), np.asarray(pt["sj"], float)
    axis = np.asarray(axis, float)
    return (si, sj, axis / np.linalg.norm(axis)) if normal else (sj, si, axis / np.linalg.norm(axis))


class SpatialJointTree:
    """The kinematic tree of a :class:`~mbint.SpatialModel` in joint coordinates.

    Parameters
    ----------
    model : SpatialModel
        Its joints must be revolute, translational or spherical and form a tree from the
        ground (each body reached by exactly one path); any force elements.

    Raises
    ------
    TypeError
        ``model`` is not a SpatialModel.
    ValueError
        A joint of another kind (universal, cylindrical, fixed, a primitive, a driver),
        a kinematic loop or a body not reached from the ground; the message names the
        element and suggests ``formulation="index1"``.

    Attributes
    ----------
    n : int
        Number of joints (= bodies).
    nz : int
        Number of joint coordinates (1 a revolute or translational joint, 4 a spherical).
    joint_names : list of str
        The rows of ``traj.x_joint``: a joint's name, or ``"<name>.e0"`` ..
        ``"<name>.e3"`` for a spherical joint, joints in the model's order.
    """

    def __init__(self, model):
        from .spatial import SpatialModel
        if not isinstance(model, SpatialModel):
            raise TypeError(f"model: a SpatialModel, got {type(model).__name__}.")
        order = _order(model)
        n = len(order)
        pos = {b: k for k, (b, _, _) in enumerate(order)}
        parent = np.array([pos.get(p, -1) for _, p, _ in order], np.intc)
        typ = np.array([_TREE_JOINTS[e.kind] for _, _, e in order], np.intc)
        frame, axis, inertia = np.zeros((n, 12)), np.zeros((n, 3)), np.zeros((n, 10))
        A0 = {-1: np.eye(3)}
        for bd in model.bodies:
            A0[bd.index] = matrix_from_quat(np.asarray(bd.p0, float) /
                                            np.linalg.norm(bd.p0))
        for k, (b, p, e) in enumerate(order):
            s_par, s_child, ax = _joint_geometry(e, e.i == p)
            c_par = inertia[parent[k], 1:4] if parent[k] >= 0 else np.zeros(3)
            frame[k, :9] = (A0[p].T @ A0[b]).reshape(9)
            frame[k, 9:] = s_par + c_par  # the parent's link origin is at -c_par
            axis[k] = ax
            bd = model.bodies[b]
            J = np.asarray(bd.inertia, float)
            J = np.diag(J) if J.shape == (3,) else J.reshape(3, 3)
            inertia[k] = [bd.mass, *(-s_child), J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2],
                          J[1, 2]]
        self.model = model
        self.n = n
        self.floating = False
        self.body = np.array([b for b, _, _ in order], np.intc)
        self._parent, self._typ, self._frame = parent, typ, frame
        self._axis, self._com = axis, inertia[:, 1:4].copy()
        dof = np.where(typ == 3, 4, 1)
        self._off = np.concatenate([[0], np.cumsum(dof)])
        self.nz = int(self._off[-1])
        names = [e.name for e in model.joint_elements]
        eng = {e.name: k for k, (_, _, e) in enumerate(order)}
        rows, labels = [], []
        for nm in names:
            k = eng[nm]
            rows += list(range(self._off[k], self._off[k + 1]))
            labels += [nm] if dof[k] == 1 else [f"{nm}.e{c}" for c in range(4)]
        #: rows[r]: the engine's coordinate of row r of x_joint
        self.rows = np.array(rows, np.intp)
        self.joint_names = labels
        self._handle = _core.jtree_new(parent, typ, frame, axis, inertia, np.zeros(n),
                                       np.zeros((n, 6)), np.zeros(3), self.body,
                                       mech_forces=True)

    def _body_state_tree(self, z, zd):
        """(q, qd) of the model's bodies (centre of mass, Euler parameters with e0 >= 0)
        of a joint state in the engine's order: forward kinematics in Python, by point
        velocities (an implementation apart from the C one, which uses motion vectors)."""
        z, zd = np.asarray(z, float), np.asarray(zd, float)
        q, qd = np.zeros(self.model.nq), np.zeros(self.model.nq)
        fr = [None] * self.n
        for i, b in enumerate(self.body):
            p = self._parent[i]
            Ap, op, wp, vp = fr[p] if p >= 0 else (np.eye(3), np.zeros(3), np.zeros(3),
                                                   np.zeros(3))
            AJ = Ap @ self._frame[i, :9].reshape(3, 3)
            o = op + Ap @ self._frame[i, 9:]
            k, sl = self._axis[i], slice(self._off[i], self._off[i + 1])
            zi, zdi = z[sl], zd[sl]
            w, v = wp.copy(), vp + np.cross(wp, o - op)
            if self._typ[i] == 0:
                A = AJ @ _rot(k, zi[0])
                w = w + AJ @ k * zdi[0]
            elif self._typ[i] == 1:
                A = AJ
                o = o + AJ @ k * zi[0]
                v = vp + np.cross(wp, o - op) + AJ @ k * zdi[0]
            else:
                ph = zi / np.linalg.norm(zi)
                A = AJ @ matrix_from_quat(ph)
                w = w + A @ (2 * _G(ph) @ zdi)
            fr[i] = (A, o, w, v)
            s = A @ self._com[i]
            pb = quat_from_matrix(A, tol=1e-6)
            q[7 * b:7 * b + 3], q[7 * b + 3:7 * b + 7] = o + s, pb
            qd[7 * b:7 * b + 3] = v + np.cross(w, s)
            qd[7 * b + 3:7 * b + 7] = 0.5 * _G(pb).T @ (A.T @ w)
        return q, qd

    def body_state(self, x, xd):
        """Body coordinates and velocities (q, qd, each (nq,)) of a joint state ``x``,
        ``xd`` (nz,) in the order of :attr:`joint_names` (rad, m, Euler parameters; their
        rates)."""
        def tree(what, v):
            v = np.asarray(v, float).reshape(-1)
            if v.size != self.nz or not np.all(np.isfinite(v)):
                raise ValueError(f"{what} must be {self.nz} finite joint values (the rows "
                                 f"{self.joint_names}), got {v.size}.")
            out = np.empty(self.nz)
            out[self.rows] = v
            return out
        return self._body_state_tree(tree("x", x), tree("xd", xd))

    def attach(self, traj, out):
        """What a run on formulation="joint" adds to its Trajectory: ``traj.x_joint``,
        ``traj.xd_joint`` (nz, m) in the rows of :attr:`joint_names`, Euler parameters of
        the bodies made continuous in time, and a dense output of the body state
        (``traj.sol``; the integrator's own over the joint state in the engine's order is
        ``traj.sol_joint``)."""
        from .joint import _JointDense, _continuous_quats
        nz, m = self.nz, len(traj.t)
        y = np.asarray(out["ss_y"], float).reshape(m, 2 * nz)
        traj.x_joint, traj.xd_joint = y[:, self.rows].T.copy(), y[:, nz + self.rows].T.copy()
        traj.joint_names = list(self.joint_names)
        _continuous_quats(traj, self.body)
        if traj.sol is not None:
            traj.sol_joint = traj.sol
            traj.sol = _JointDense(traj.sol, self)
