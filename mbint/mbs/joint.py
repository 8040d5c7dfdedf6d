"""Joint coordinates of a tree: :class:`JointTree`, the kinematic tree of a
:class:`~mbint.mbs.urdf.UrdfModel` packed into the tables of the C engine
``csrc/mbs/joint_tree.c`` (issue 23); :class:`PlanarJointTree` of a PlanarModel and
:class:`SpatialJointTree` of a hand-built SpatialModel (further down).

The engine works on one coordinate a joint: forward dynamics by Featherstone's
articulated-body algorithm (O(n) a call), inverse dynamics by the recursive
Newton-Euler algorithm and the joint-space mass matrix by the composite-rigid-body
algorithm; ``mbint.simulate(model, ..., formulation="joint")`` integrates
y = (q_joint, q_joint') with it and maps its outputs back to the body coordinates of
the model.  The tree is the UrdfModel's own: one body per group of links with mass
(:mod:`mbint.mbs.urdf`), the joint frames (R, t), axes and dampers of its
:class:`~mbint.mbs.urdf.UrdfJoint`, the inputs of :meth:`UrdfModel.set_joint_torques`
given as numbers or time functions (c0, c1, c2, a, w, psi), and the model's gravity.

Joint vectors are in the order of :attr:`UrdfModel.joint_names` (the file's order); the
engine's own order (parents before children) is internal.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _core
from ._rotations import matrix_from_quat, quat_from_matrix
from .planar import _timefn

__all__ = ["JointTree", "PlanarJointTree", "SpatialJointTree", "joint_tree"]

#: the model's force elements that the tree holds itself (:meth:`UrdfModel.set_joint_torques`)
_OWN_SUFFIXES = (".drive", ".reaction")


class JointTree:
    """The kinematic tree of a :class:`~mbint.mbs.urdf.UrdfModel` in joint coordinates
    (with a floating base: for ``formulation="joint"`` only; the evaluations below take a
    fixed base).

    Parameters
    ----------
    model : UrdfModel
        A model of :func:`mbint.load_urdf` (fixed or floating base).  Its joint torques
        must be numbers or time functions (a Python ``f(t)`` is refused), and it must have
        no force elements other than the joints' drives and dampers.

    Raises
    ------
    TypeError
        ``model`` is not a UrdfModel.
    ValueError
        A joint torque given as a Python function, joint limits or other
        force elements, bodies or joints added to the model after loading.

    Attributes
    ----------
    n : int
        Number of joints (= bodies).
    joint_names : list of str
        As the model's.
    """

    def __init__(self, model):
        from .urdf import UrdfModel
        if not isinstance(model, UrdfModel):
            raise TypeError(f"model: a UrdfModel of mbint.load_urdf, got {type(model).__name__}.")
        others = [e.name for e in model.force_elements
                  if not any(e.name == f"{nm}{s}" for nm in model.joint_names
                             for s in _OWN_SUFFIXES)]
        if others:
            raise ValueError(f"{model.name}: force elements {others} are not joint inputs; the "
                             f"joint tree holds only the joints' torques (numbers or time "
                             f"functions) and dampers (use formulation='index1').")
        extra = [e.name for e in model.joint_elements if e.name not in model.joint_names]
        if extra or len(model.joint_elements) != len(model.joint_names):
            raise ValueError(f"{model.name}: joints {extra} were added to the URDF tree; the "
                             f"joint tree holds the file's joints only (use "
                             f"formulation='index1').")
        floating = bool(model.floating_base)
        if len(model.bodies) != len(model.joint_names) + floating:
            raise ValueError(f"{model.name}: {len(model.bodies)} bodies for "
                             f"{len(model.joint_names)} moving joints; bodies were added to "
                             f"the URDF tree (use formulation='index1').")
        torques = getattr(model, "_torques", {})
        calls = sorted(nm for nm, f in torques.items() if callable(f))
        if calls:
            raise ValueError(f"{model.name}: the torques of {calls} are Python functions f(t); "
                             f"the joint tree takes numbers or time functions (c0, c1, c2, a, w, "
                             f"psi).")
        self.model = model
        self.joint_names = list(model.joint_names)
        groups = model._groups
        kept = {nm: k for k, nm in enumerate(self.joint_names)}
        # the engine's bodies: the floating base first (group 0, a free body), then the
        # groups at the end of the kept joints, parents first
        order = [k for k in range(1, len(groups)) if groups[k].parent_joint.name in kept]
        order = [0] * floating + order
        body_of = {g: i for i, g in enumerate(order)}
        n = len(order)
        parent = np.array([-1 if g == 0 else body_of.get(groups[g].parent_joint.parent, -1)
                           for g in order], np.intc)
        if any(g and groups[g].parent_joint.parent not in body_of
               and groups[g].parent_joint.parent != 0 for g in order):
            raise ValueError(f"{model.name}: a moving joint hangs from a group without a body.")
        damping_on = getattr(model, "_damping_on", True)
        typ = np.zeros(n, np.intc)
        frame, axis = np.zeros((n, 12)), np.zeros((n, 3))
        inertia, damping, inputs = np.zeros((n, 10)), np.zeros(n), np.zeros((n, 6))
        for i, g in enumerate(order):
            grp, j = groups[g], groups[g].parent_joint
            if g == 0:  # the floating base: a free body (joint_tree.h MB_JT_FREE)
                J = grp.inertia
                typ[i], frame[i, [0, 4, 8]], axis[i] = 2, 1.0, (1.0, 0.0, 0.0)
                inertia[i] = [grp.mass, *grp.com, J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2],
                              J[1, 2]]
                continue
            typ[i] = 0 if j.revolute else 1
            frame[i, :9], frame[i, 9:] = np.asarray(j.R, float).reshape(9), j.t
            axis[i] = j.axis
            J = grp.inertia
            inertia[i] = [grp.mass, *grp.com, J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2],
                          J[1, 2]]
            damping[i] = j.damping if damping_on else 0.0
            spec = torques.get(j.name)
            if spec is not None:
                fa = _timefn(f"joint torque {j.name!r}", spec, {})
                inputs[i] = [fa[k] for k in ("c0", "c1", "c2", "a", "w", "psi")]
        #: whether body 0 of the engine is a floating base
        self.floating = floating
        #: number of joints (the engine has one body more with a floating base)
        self.n = n - floating
        #: perm[i]: the index in joint_names of the engine's i-th joint body
        self.perm = np.array([kept[groups[g].parent_joint.name] for g in order[floating:]],
                             np.intp)
        self.groups = order
        #: body[i]: the index among the model's bodies of the engine's body i
        self.body = np.array([groups[g].body.index for g in order], np.intc)
        self._com = inertia[:, 1:4].copy()
        self._gravity = np.array(model.gravity, float)  # the engine's copy (joint_tree())
        self._handle = _core.jtree_new(parent, typ, frame, axis, inertia, damping, inputs,
                                       self._gravity, self.body)

    # ------------------------------------------------------------------ order
    def _to_tree(self, what, x):
        if x is None:
            return None
        v = np.asarray(x, float).reshape(-1)
        if v.size != self.n or not np.all(np.isfinite(v)):
            raise ValueError(f"{what} must be {self.n} finite joint values (the joints "
                             f"{self.joint_names}), got {v.size}.")
        return v[self.perm]

    def _from_tree(self, v):
        out = np.empty_like(v)
        out[self.perm] = v
        return out

    def _eval(self, what, q, qd=None, x=None, t=0.0, xname="x"):
        if self.floating:
            raise ValueError(f"{self.model.name}: a floating-base tree is integrated by "
                             f"mbint.simulate(..., formulation='joint'); the JointTree's "
                             f"evaluations take a fixed base.")
        return _core.jtree_eval(self._handle, what, self._to_tree("q", q),
                                self._to_tree("qd", qd), self._to_tree(xname, x), float(t))

    # ------------------------------------------------------------------ dynamics
    def aba(self, q, qd, tau=None):
        """Joint accelerations by the articulated-body algorithm, O(n).

        Parameters
        ----------
        q, qd : array_like, shape (n,)
            Joint coordinates (rad, m) and rates (rad/s, m/s).
        tau : array_like, shape (n,), optional
            Generalized joint forces (N m, N); default 0.  The model's own inputs and
            dampers are not added (:meth:`accelerations` adds them).

        Returns
        -------
        ndarray, shape (n,)
            rad/s^2, m/s^2.
        """
        return self._from_tree(self._eval("aba", q, qd, tau, xname="tau"))

    def aba_floating(self, base_R, base_o, base_w, base_v, q, qd, tau=None):
        """Forward dynamics of a floating-base tree (the ABA with a free root).

        Parameters
        ----------
        base_R : array_like, shape (3, 3)
            Rotation of the root's link frame (link to global).
        base_o : array_like, shape (3,)
            Its origin, m.
        base_w, base_v : array_like, shape (3,)
            Its angular velocity (rad/s) and its origin's velocity (m/s), both in link
            coordinates.
        q, qd, tau : array_like, shape (n,)
            Joint coordinates, rates and generalized forces (tau default 0), joint order.

        Returns
        -------
        a0 : ndarray, shape (6,)
            The root's angular acceleration (rad/s^2) and the acceleration of its origin
            minus omega x v (m/s^2: the derivative of the link-coordinate velocity), link
            coordinates, as Pinocchio's free-flyer (angular first here).
        qdd : ndarray, shape (n,)
            rad/s^2, m/s^2.
        """
        if not self.floating:
            raise ValueError(f"{self.model.name}: aba_floating needs a floating base.")
        root = np.concatenate([np.asarray(base_R, float).reshape(9), np.asarray(base_o, float),
                               np.asarray(base_w, float), np.asarray(base_v, float)])
        pad = (lambda what, v: None if v is None else np.concatenate(
            [[0.0], self._to_tree_any(what, v)]))
        out = _core.jtree_eval(self._handle, "aba_free", pad("q", q), pad("qd", qd),
                               pad("tau", tau), 0.0, root)
        return out[:6], self._from_tree(out[7:])

    def _to_tree_any(self, what, x):
        v = np.asarray(x, float).reshape(-1)
        if v.size != self.n or not np.all(np.isfinite(v)):
            raise ValueError(f"{what} must be {self.n} finite joint values, got {v.size}.")
        return v[self.perm]

    def accelerations(self, t, q, qd, tau=None):
        """Joint accelerations under the model's inputs at ``t`` [s] and dampers plus
        ``tau`` (N m, N; optional): :meth:`aba` of the sum."""
        u = self._from_tree(self._eval("input", q, qd, None, t))
        if tau is not None:
            u = u + np.asarray(tau, float).reshape(-1)
        return self.aba(q, qd, u)

    def aba_derivatives(self, q, qd, tau=None, t=0.0):
        """Exact derivatives of the joint accelerations of :meth:`accelerations`
        (inputs at ``t`` [s], dampers, plus ``tau``): d(x'')/dq (1/s^2) and d(x'')/dq'
        (1/s), each (n, n), by differentiating RNEA in forward mode (one O(n) tangent
        pass a column) and M^-1 by the Cholesky factor of CRBA's M."""
        D = self._eval("deriv", q, qd, tau, t, xname="tau")  # (2 n, n): columns as rows
        p = np.argsort(self.perm)
        n = self.n
        Aq, Av = D[:n].T, D[n:].T
        return Aq[np.ix_(p, p)], Av[np.ix_(p, p)]

    def rnea(self, q, qd, qdd, gravity=True):
        """Inverse dynamics M(q) q'' + C(q, q') (N m, N) by the recursive Newton-Euler
        algorithm; C holds gravity unless ``gravity=False``."""
        return self._from_tree(self._eval("rnea" if gravity else "rnea0", q, qd, qdd,
                                          xname="qdd"))

    def mass_matrix(self, q):
        """The joint-space mass matrix M(q), shape (n, n) (kg m^2, kg), by the
        composite-rigid-body algorithm."""
        M = self._eval("crba", q)
        p = np.argsort(self.perm)  # joint k is body p[k]
        return M[np.ix_(p, p)]

    def link_frames(self, q, qd=None, qdd=None):
        """Forward kinematics: per joint (order of :attr:`joint_names`) the child link
        frame's rotation A (3, 3), origin o (3,) m, angular velocity (rad/s), origin
        velocity (m/s), angular acceleration (rad/s^2) and origin acceleration (m/s^2),
        global frame, as a dict of arrays with a leading axis of n."""
        F = self._eval("fk", q, qd, qdd)
        F = F[np.argsort(self.perm)]
        return dict(A=F[:, :9].reshape(-1, 3, 3), o=F[:, 9:12], w=F[:, 12:15], v=F[:, 15:18],
                    alpha=F[:, 18:21], a=F[:, 21:24])

    # ------------------------------------------------------------------ body coordinates
    def _body_state_tree(self, xt, xdt):
        """(q, qd) of the model's bodies (centre of mass, Euler parameters with e0 >= 0)
        of a joint state in the engine's order."""
        F = _core.jtree_eval(self._handle, "fk", np.asarray(xt, float),
                             np.asarray(xdt, float))
        nq = self.model.nq
        q, qd = np.zeros(nq), np.zeros(nq)
        for i, b in enumerate(self.body):
            A = F[i, :9].reshape(3, 3)
            s = A @ self._com[i]
            w = F[i, 12:15]
            p = quat_from_matrix(A, tol=1e-6)
            e0, e1, e2, e3 = p
            E = np.array([[-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0]])
            o = 7 * b
            q[o:o + 3], q[o + 3:o + 7] = F[i, 9:12] + s, p
            qd[o:o + 3], qd[o + 3:o + 7] = F[i, 15:18] + np.cross(w, s), 0.5 * E.T @ w
        return q, qd

    def body_state(self, q, qd):
        """Body coordinates and velocities of the model (forward kinematics in C) of a
        joint state: q, qd of shape (nq,) (m, Euler parameters; m/s, 1/s)."""
        if self.floating:
            self._eval("fk", q)  # the ValueError of a floating base
        return self._body_state_tree(self._to_tree("q", q), self._to_tree("qd", qd))

    def attach(self, traj, out):
        """What a run on formulation="joint" adds to its Trajectory: the integrated joint
        coordinates ``traj.x_joint``, rates ``traj.xd_joint`` (n, m) in the order of
        :attr:`joint_names`, Euler parameters made continuous in time (p and -p are the
        same rotation: the first output takes the sign of q0, each later one the sign
        nearer the previous one, with p', p''),
        and a dense output of the body state (``traj.sol``; the integrator's own, over
        the joint state in the engine's order, is ``traj.sol_joint``)."""
        n, m = self.n, len(traj.t)
        off = 7 if self.floating else 0  # the floating base's (r, p) first
        k = n + off
        y = np.asarray(out["ss_y"], float).reshape(m, 2 * k)
        traj.x_joint, traj.xd_joint = np.empty((n, m)), np.empty((n, m))
        traj.x_joint[self.perm] = y[:, off:k].T
        traj.xd_joint[self.perm] = y[:, k + off:].T
        traj.joint_names = list(self.joint_names)
        _continuous_quats(traj, self.body)
        if traj.sol is not None:  # a floating base: over the integrated state only
            traj.sol_joint = traj.sol
            traj.sol = None if self.floating else _JointDense(traj.sol, self)


def _continuous_quats(traj, bodies):
    """Make the Euler parameters of ``bodies`` on ``traj`` continuous in time (p and -p
    are the same rotation: the first output takes the sign of the run's q0, each later
    one the sign nearer the previous one, with p', p'')."""
    q0 = (traj.initial or {}).get("q0")
    if len(traj.t) == 0 or len(bodies) == 0:
        return
    # all bodies at once: rows (nb, 4) of the Euler parameters
    rows = (7 * np.asarray(bodies, np.intp)[:, None] + np.arange(3, 7)).reshape(-1)
    P = traj.q[rows].reshape(len(bodies), 4, -1)
    # the first output takes the sign of the run's own q0 (its Euler parameters with e0
    # near 0 may come out of the forward kinematics with the other sign)
    s0 = np.ones(len(bodies))
    if q0 is not None:
        s0[np.einsum("bi,bi->b", P[:, :, 0], np.asarray(q0)[rows].reshape(-1, 4)) < 0] = -1.0
    flip = np.cumprod(np.where(np.einsum("bij,bij->bj", P[:, :, 1:], P[:, :, :-1]) < 0,
                               -1.0, 1.0), axis=1)
    sign = s0[:, None] * np.concatenate([np.ones((len(bodies), 1)), flip], axis=1)
    sign = np.repeat(sign, 4, axis=0)  # (4 nb, m), as rows
    # q'' only when the run gave it (after simulate it is solved on first use, from the
    # continuous q, q')
    for arr in (traj.q, traj.qd, traj.__dict__.get("_qdd")):
        if arr is not None:
            arr[rows] *= sign


class _JointDense:
    """Dense output of a joint-coordinate run as (q, qd) of the model's bodies, shape
    (2 nq,) or (2 nq, k): the integrator's dense output of the joint state mapped by
    forward kinematics (Euler parameters with e0 >= 0)."""

    def __init__(self, joint, tree):
        self.joint, self._tree = joint, tree
        self.model = tree.model
        self.t_min, self.t_max = getattr(joint, "t_min", None), getattr(joint, "t_max", None)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("joint", "_tree", "model"):
            raise AttributeError(name)
        return getattr(self.joint, name)

    def __getstate__(self):
        return dict(joint=self.joint, model=self.model, t_min=self.t_min, t_max=self.t_max)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._tree = None

    def __call__(self, t):
        if self._tree is None:
            self._tree = joint_tree(self.model)
        tree = self._tree
        n = getattr(tree, "nz", tree.n)  # a SpatialJointTree: its joint coordinates
        y = np.asarray(self.joint(t), float)
        if y.ndim == 1:
            return np.concatenate(tree._body_state_tree(y[:n], y[n:]))
        return np.stack([np.concatenate(tree._body_state_tree(c[:n], c[n:])) for c in y.T],
                        axis=1)


#: joints of a PlanarModel that a planar joint tree holds, with the engine's joint type
_PLANAR_TREE_JOINTS = {"revolute": 0, "translational": 1}
#: force elements of a PlanarModel that the planar joint tree cannot honour
_PLANAR_REFUSED_FORCES = ("contact_line", "contact_circles")


def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class PlanarJointTree:
    """The kinematic tree of a :class:`~mbint.mbs.planar.PlanarModel` in joint
    coordinates (``formulation="joint"``): one coordinate a joint, the relative angle of
    a revolute joint (rad) or the slide of a translational one along its axis (m).

    Each body is reached from the ground by exactly one path of revolute and
    translational joints (as many joints as bodies, no other joints, no drivers).  The
    engine (``csrc/mbs/joint_tree.c``) moves in the plane: a revolute joint turns about
    z at its pin, a translational one slides along its axis; the tree's link frame of a
    body has the body's axes and its origin at the body's joint point.  The model's
    forces (gravity, spring-dampers, generalized and Python forces: the same kernel as
    the body-coordinate formulations) are evaluated at the body coordinates given by the
    forward kinematics and enter a planar articulated-body algorithm (in C) as external
    body forces.  The Jacobian of the run is exact (``csrc/mbs/joint_planar.c``: the
    inverse dynamics differentiated with the model's own force derivatives); with
    Python forces it is forward differences of that x'' (``2 n + 1`` evaluations).

    Parameters
    ----------
    model : PlanarModel

    Raises
    ------
    TypeError
        ``model`` is not a PlanarModel.
    ValueError
        The model is not a tree of revolute and translational joints (a loop, a body
        not reached from the ground, a joint of another kind, a driver), or has contact
        elements; the message names the element and suggests ``formulation="index1"``.

    Attributes
    ----------
    n : int
        Number of joints (= bodies).
    joint_names : list of str
        The tree's joints in the model's order (the order of ``traj.x_joint``).
    """

    def __init__(self, model):
        from .planar import PlanarModel
        if not isinstance(model, PlanarModel):
            raise TypeError(f"model: a PlanarModel, got {type(model).__name__}.")
        hint = "; use formulation='index1'."
        name = model.name
        for e in model.joint_elements:
            if e.kind not in _PLANAR_TREE_JOINTS:
                raise ValueError(f"formulation='joint': {name}: {e.kind} {e.name!r} is not a "
                                 f"joint of a tree (revolute and translational joints only, no "
                                 f"drivers){hint}")
        for e in model.force_elements:
            if e.kind in _PLANAR_REFUSED_FORCES:
                raise ValueError(f"formulation='joint': {name}: the contact {e.name!r} needs "
                                 f"the contact step bound of the body-coordinate "
                                 f"formulations{hint}")
        nb = len(model.bodies)
        if nb == 0:
            raise ValueError(f"formulation='joint': {name} has no bodies{hint}")
        # breadth-first from the ground: each body's joint to its parent
        order = breadth_first(model, hint)
        self._build(model, order)

    def _build(self, model, order):
        """The engine's tables of the tree (bodies in breadth-first order)."""
        n = len(order)
        pos = {b: k for k, (b, _, _) in enumerate(order)}
        parent = np.array([pos.get(p, -1) for _, p, _ in order], np.intc)
        typ = np.zeros(n, np.intc)
        frame, axis, inertia = np.zeros((n, 12)), np.zeros((n, 3)), np.zeros((n, 10))
        for k, (b, p, e) in enumerate(order):
            P = e.params
            si, sj = (P["si_x"], P["si_y"]), (P["sj_x"], P["sj_y"])
            normal = e.i == p  # the parent is body i of the joint
            s_par, s_child = (si, sj) if normal else (sj, si)
            typ[k] = _PLANAR_TREE_JOINTS[e.kind]
            R, ax = np.eye(3), np.array([0.0, 0.0, 1.0])
            if e.kind == "translational":
                phi0, ni = P["phi0"], np.array([P["ni_x"], P["ni_y"], 0.0])
                # normal: the axis n_i is in the parent's frame; else in the child's
                R = _rz(phi0 if normal else -phi0)
                ax = _rz(-phi0) @ ni if normal else ni
            # the joint point in the parent's link frame (origin at its own joint point)
            t = np.asarray(s_par, float) + (inertia[parent[k], 1:3] if parent[k] >= 0 else 0.0)
            frame[k, :9], frame[k, 9:11] = R.reshape(9), t
            axis[k] = ax / np.linalg.norm(ax)
            body = model.bodies[b]
            J = body.inertia
            inertia[k] = [body.mass, -s_child[0], -s_child[1], 0.0, J, J, J, 0.0, 0.0, 0.0]
        names = [e.name for e in model.joint_elements]
        self.model = model
        self.n = n
        self.floating = False
        self.joint_names = list(names)
        #: perm[i]: the index in joint_names of the engine's i-th joint
        self.perm = np.array([names.index(e.name) for _, _, e in order], np.intp)
        #: body[i]: the model's body of the engine's body i
        self.body = np.array([b for b, _, _ in order], np.intc)
        self._parent, self._typ = parent, typ
        self._off = np.arctan2(frame[:, 3], frame[:, 0])
        self._com = inertia[:, 1:3].copy()
        self._handle = _core.jtree_new(parent, typ, frame, axis, inertia, np.zeros(n),
                                       np.zeros((n, 6)), np.zeros(3), self.body)

    def _body_state_tree(self, xt, xdt):
        """(q, qd) of the model's bodies (centre of mass, theta) of a joint state in the
        engine's order (forward kinematics in C)."""
        xt, xdt = np.asarray(xt, float), np.asarray(xdt, float)
        F = _core.jtree_eval(self._handle, "fk", xt, xdt)
        q, qd = np.zeros(self.model.nq), np.zeros(self.model.nq)
        th = np.zeros(self.n)
        for i, b in enumerate(self.body):
            p = self._parent[i]
            th[i] = (th[p] if p >= 0 else 0.0) + self._off[i] + (xt[i] if self._typ[i] == 0
                                                                 else 0.0)
            A = F[i, :9].reshape(3, 3)[:2, :2]
            s = A @ self._com[i]
            w = F[i, 14]
            q[3 * b:3 * b + 3] = [F[i, 9] + s[0], F[i, 10] + s[1], th[i]]
            qd[3 * b:3 * b + 3] = [F[i, 15] - w * s[1], F[i, 16] + w * s[0], w]
        return q, qd

    def body_state(self, x, xd):
        """Body coordinates and velocities (q, qd, each (nq,): m, rad; m/s, rad/s) of a
        joint state ``x`` (rad, m), ``xd`` (rad/s, m/s) in the order of
        :attr:`joint_names`."""
        def tree(what, v):
            v = np.asarray(v, float).reshape(-1)
            if v.size != self.n or not np.all(np.isfinite(v)):
                raise ValueError(f"{what} must be {self.n} finite joint values (the joints "
                                 f"{self.joint_names}), got {v.size}.")
            return v[self.perm]
        return self._body_state_tree(tree("x", x), tree("xd", xd))

    def attach(self, traj, out):
        """What a run on formulation="joint" adds to its Trajectory: ``traj.x_joint``,
        ``traj.xd_joint`` (n, m) in the order of :attr:`joint_names`, and a dense output
        of the body state (``traj.sol``; the integrator's own over the joint state in the
        engine's order is ``traj.sol_joint``)."""
        n, m = self.n, len(traj.t)
        y = np.asarray(out["ss_y"], float).reshape(m, 2 * n)
        traj.x_joint, traj.xd_joint = np.empty((n, m)), np.empty((n, m))
        traj.x_joint[self.perm] = y[:, :n].T
        traj.xd_joint[self.perm] = y[:, n:].T
        traj.joint_names = list(self.joint_names)
        if traj.sol is not None:
            traj.sol_joint = traj.sol
            traj.sol = _JointDense(traj.sol, self)


# ---- SpatialModel trees ----
# Joint coordinates of a hand-built :class:`~mbint.SpatialModel` that is a tree:
# :class:`SpatialJointTree` (``formulation="joint"``, issues 22 and 23).
#
# The model's revolute, translational and spherical joints, each body reached from the
# ground by exactly one path, become the tables of the C tree (``csrc/mbs/joint_spatial.c``
# over an ``mb_jtree`` with ``mech_forces``): one coordinate a revolute joint (rad) or a
# translational one (m), and for a spherical joint the four Euler parameters of the
# relative rotation (their rates p' in the velocity part of the state: p'' = G^T w'/2 -
# |p'|^2 p keeps the system second order, as the floating base of a URDF tree).  The
# forces are the model's own (gravity, spring-dampers, bushings, tires, Python and C
# forces): its force kernel at the body coordinates of the forward kinematics, without
# the quadratic-velocity rows of the Euler parameters (the articulated-body algorithm has
# its own gyroscopic terms), as body wrenches of a world-coordinate articulated-body
# algorithm.
#
# Each body's link frame has the body's axes and its origin at the point of the joint to
# its parent; the joint frames are the relative poses at the model's initial
# configuration, so every joint coordinate is 0 there (a spherical joint's p = (1, 0, 0,
# 0)).

#: joints of a SpatialModel that the tree holds, with the engine's joint type
_SPATIAL_TREE_JOINTS = {"revolute": 0, "translational": 1, "spherical": 3}
_SPATIAL_HINT = "; use formulation='index1'."


def _G(p):
    e0, e1, e2, e3 = p
    return np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])


def _rot(k, th):
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


def _spatial_order(model):
    """(child, parent, element) of every body, breadth-first from the ground."""
    name = model.name
    for e in model.joint_elements:
        if e.kind not in _SPATIAL_TREE_JOINTS:
            raise ValueError(f"formulation='joint': {name}: {e.kind} {e.name!r} is not a joint "
                             f"of a tree (revolute, translational and spherical joints only, "
                             f"no drivers){_SPATIAL_HINT}")
    if not model.bodies:
        raise ValueError(f"formulation='joint': {name} has no bodies{_SPATIAL_HINT}")
    return breadth_first(model, _SPATIAL_HINT)


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
        order = _spatial_order(model)
        n = len(order)
        pos = {b: k for k, (b, _, _) in enumerate(order)}
        parent = np.array([pos.get(p, -1) for _, p, _ in order], np.intc)
        typ = np.array([_SPATIAL_TREE_JOINTS[e.kind] for _, _, e in order], np.intc)
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
        nz, m = self.nz, len(traj.t)
        y = np.asarray(out["ss_y"], float).reshape(m, 2 * nz)
        traj.x_joint, traj.xd_joint = y[:, self.rows].T.copy(), y[:, nz + self.rows].T.copy()
        traj.joint_names = list(self.joint_names)
        _continuous_quats(traj, self.body)
        if traj.sol is not None:
            traj.sol_joint = traj.sol
            traj.sol = _JointDense(traj.sol, self)


def joint_tree(model):
    """The joint tree of a model for ``formulation="joint"``: a :class:`JointTree` of a
    UrdfModel, a :class:`SpatialJointTree` of another
    SpatialModel, a :class:`PlanarJointTree` of a PlanarModel (ValueError for other
    models and for models that are not trees)."""
    from .planar import PlanarModel
    from .spatial import SpatialModel
    from .urdf import UrdfModel
    if isinstance(model, UrdfModel):
        # built once per compiled model, as below (set_joint_torques and every added
        # element compile the model anew); gravity is read at the build, so a change of
        # model.gravity in place builds it anew too
        compiled = model.compile()
        tree = getattr(compiled, "_joint_tree", None)
        g = np.asarray(model.gravity, float)
        if tree is None or not np.array_equal(tree._gravity, g):
            tree = compiled._joint_tree = JointTree(model)
        return tree
    if isinstance(model, SpatialModel):
        compiled = model.compile()
        tree = getattr(compiled, "_joint_tree", None)
        if tree is None:
            tree = compiled._joint_tree = SpatialJointTree(model)
        return tree
    if isinstance(model, PlanarModel):
        # built once per compiled model (a change of the model compiles it anew)
        compiled = model.compile()
        tree = getattr(compiled, "_joint_tree", None)
        if tree is None:
            tree = compiled._joint_tree = PlanarJointTree(model)
        return tree
    raise ValueError(f"formulation='joint': {getattr(model, 'name', model)!r} is a "
                     f"{type(model).__name__}; the joint formulation takes the kinematic tree "
                     f"of a UrdfModel (mbint.load_urdf), a SpatialModel or a PlanarModel; use "
                     f"formulation='index1'.")
