"""URDF import: a robot description file as a :class:`~mbint.SpatialModel`.

:func:`load_urdf` parses the file with the PyPI parser ``yourdfpy`` (an optional
dependency: ``pip install mbint[urdf]``; ``import mbint`` does not import it) and
builds a :class:`UrdfModel`, a :class:`SpatialModel` that also knows the robot's
joints: their names, the forward kinematics from joint coordinates to body
coordinates, the joint coordinates of a body state and named outputs per joint.

The tree is reduced as Pinocchio's URDF parser reduces it
-------------------------------------------------------------
- Links joined by a **fixed** joint are merged into their parent: the masses add,
  the centre of mass is the mass-weighted mean and the inertia tensors are moved to
  it by the parallel-axis theorem, all in the frame of the link that starts the
  merged group (the link at the end of a moving joint, or the root link).
- One :class:`SpatialBody` per merged group with positive mass.  Its frame is the
  **centre of mass** with the **axes of the group's link frame** (the inertia of
  every ``<inertial>`` is rotated from its ``origin rpy`` frame into the link frame:
  J_link = R J_urdf R^T).
- ``revolute`` and ``continuous`` joints become :meth:`~SpatialModel.add_revolute`
  (5 rows), ``prismatic`` joints :meth:`~SpatialModel.add_translational` (5 rows: no
  relative rotation, no transverse translation).  ``planar`` and ``floating`` joints
  inside the tree are not supported: a ValueError names the joint (a floating base is
  ``floating_base=True``).  Mimic tags are ignored (the joint is an
  independent joint, as Pinocchio's default).
- The root link is the ground (welded to it) unless ``floating_base=True``: then
  the root group is a free body.
- A massless group at the end of a moving joint is an error, except a **leaf**
  (nothing moving below it) without mass and without rotational inertia: it and its
  joint are dropped (listed in :attr:`UrdfModel.dropped_joints`), since it changes no
  motion.  A link's rotational inertia counts even when its mass is 0 (as in Pinocchio).
- The bodies are numbered depth first from the root (parents before children); joint
  vectors follow the file's order of the kept moving joints (:attr:`UrdfModel.joint_names`).

Joint angle conventions follow URDF: the child frame is
``parent * origin(xyz, rpy) * motion``, the motion a rotation by theta about the
(normalized) axis or a translation by d along it, both in the joint frame.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ._urdf_model import UrdfJoint, UrdfModel
from .._typing import ArrayLike

__all__ = ["load_urdf", "UrdfModel", "UrdfJoint"]

_MOVING = ("revolute", "continuous", "prismatic")


def _require_yourdfpy():
    try:
        import yourdfpy
    except ImportError as exc:
        raise ImportError("mbint.load_urdf needs the URDF parser yourdfpy: "
                          "pip install mbint[urdf]") from exc
    return yourdfpy


def _same_name(fname):
    return fname


def _tf(T):
    """A 4x4 homogeneous transform (None: the identity) as (R, t)."""
    if T is None:
        return np.eye(3), np.zeros(3)
    T = np.asarray(T, float)
    return T[:3, :3].copy(), T[:3, 3].copy()


@dataclass
class _Group:
    """Links rigidly attached to one frame (the first link of the group)."""

    link: str
    parent_joint: object = None          # UrdfJoint that moves the group (None: root)
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    frames: dict = field(default_factory=dict)   # link -> (R, t) in the group frame
    body: object = None                  # SpatialBody, or the ground
    moving_below: bool = False

    def add_link(self, link, R, t):
        """Merge a link at pose (R, t) in the group frame (parallel-axis theorem)."""
        self.frames[link.name] = (R, t)
        ine = link.inertial
        if ine is None:
            return
        m = 0.0 if ine.mass is None else float(ine.mass)
        if m < 0 or not np.isfinite(m):
            raise ValueError(f"link {link.name!r}: the mass must be non-negative, got {m}.")
        Ri, ti = _tf(ine.origin)
        J = np.zeros((3, 3)) if ine.inertia is None else np.asarray(ine.inertia, float)
        c = R @ ti + t                    # the link's centre of mass in the group frame
        Jc = (R @ Ri) @ J @ (R @ Ri).T    # its inertia about it, group axes
        M = self.mass + m
        if M == 0:  # a massless link's rotational inertia counts (as in Pinocchio)
            self.inertia = self.inertia + Jc
            return
        com = (self.mass * self.com + m * c) / M
        self.inertia = (_steiner(self.inertia, self.mass, self.com - com)
                        + _steiner(Jc, m, c - com))
        self.mass, self.com = M, com


def _steiner(J, m, d):
    """Inertia J about a centre of mass moved to a point at -d: J + m (|d|^2 I - d d^T)."""
    d = np.asarray(d, float)
    return J + m * ((d @ d) * np.eye(3) - np.outer(d, d))


def _parse_tree(robot, path):
    """Groups (root first, parents before children) and moving joints (file order)."""
    links = {lk.name: lk for lk in robot.links}
    children, is_child = {}, set()
    for j in robot.joints:
        if j.parent not in links or j.child not in links:
            raise ValueError(f"load_urdf {path}: joint {j.name!r} joins unknown links "
                             f"{j.parent!r} -> {j.child!r}.")
        children.setdefault(j.parent, []).append(j)
        is_child.add(j.child)
    roots = [lk.name for lk in robot.links if lk.name not in is_child]
    if len(roots) != 1:
        raise ValueError(f"load_urdf {path}: the links must form one tree; root links: {roots}.")
    groups, joints = [], []

    # depth first from the root, children in the file's order (an explicit stack: a chain
    # of 1000 links would exceed Python's recursion limit); a fixed joint's child joins its
    # parent's group, a moving joint's child starts a group
    stack = []

    def visit(gi, link, R, t):
        groups[gi].add_link(links[link], R, t)
        stack.extend((gi, j, R, t) for j in reversed(children.get(link, [])))

    groups.append(_Group(roots[0]))
    visit(0, roots[0], np.eye(3), np.zeros(3))
    while stack:
        gi, j, R, t = stack.pop()
        Ro, to = _tf(j.origin)
        Rj, tj = R @ Ro, R @ to + t
        if j.type == "fixed":
            visit(gi, j.child, Rj, tj)
            continue
        if j.type not in _MOVING:
            raise ValueError(
                f"load_urdf {path}: joint {j.name!r} is of type {j.type!r}; only revolute, "
                f"continuous, prismatic and fixed joints are supported inside the tree "
                f"(a floating base: floating_base=True).")
        ax = np.asarray(j.axis if j.axis is not None else (1.0, 0.0, 0.0), float)
        if not np.linalg.norm(ax) > 0:
            raise ValueError(f"load_urdf {path}: joint {j.name!r} has a zero axis.")
        lim = j.limit
        uj = UrdfJoint(j.name, j.type, gi, len(groups), Rj, tj, ax / np.linalg.norm(ax),
                       float(getattr(j.dynamics, "damping", None) or 0.0),
                       None if lim is None or j.type == "continuous" else lim.lower,
                       None if lim is None or j.type == "continuous" else lim.upper)
        joints.append(uj)
        groups.append(_Group(j.child, parent_joint=uj))
        visit(len(groups) - 1, j.child, np.eye(3), np.zeros(3))
    for g in groups[1:]:
        groups[g.parent_joint.parent].moving_below = True
    order = {j.name: k for k, j in enumerate(robot.joints)}
    return groups, sorted(joints, key=lambda j: order[j.name])


def _drop_massless_leaves(groups, joints, path):
    """Drop massless leaf groups and their joints; a massless group that moves something
    is an error."""
    dropped = []
    for k, g in enumerate(groups):
        if k == 0 or g.mass > 0:
            continue
        if g.moving_below or np.abs(g.inertia).max() > 0:
            raise ValueError(
                f"load_urdf {path}: link {g.link!r} at the end of the moving joint "
                f"{g.parent_joint.name!r} has no mass (with the links fixed to it) but "
                f"{'moves other links' if g.moving_below else 'has a rotational inertia'}; a "
                f"massless body at the end of a moving joint is not supported (give it a "
                f"mass and inertia).")
        dropped.append(g.parent_joint.name)
    return dropped, [j for j in joints if j.name not in dropped]


def load_urdf(path: str | os.PathLike[str], *, q: Mapping[str, float] | ArrayLike | None = None,
              qd: Mapping[str, float] | ArrayLike | None = None, floating_base: bool = False,
              base_pose: tuple[ArrayLike, ArrayLike] | None = None,
              base_velocity: tuple[ArrayLike, ArrayLike] | None = None,
              gravity: Sequence[float] = (0.0, 0.0, -9.81), damping: bool = True,
              torques: Mapping[str, Any] | None = None, limits: bool | tuple[float, float] = False,
              name: str | None = None) -> UrdfModel:
    """Load a URDF file as a :class:`UrdfModel` (a :class:`~mbint.SpatialModel`).

    Parameters
    ----------
    path : str or path-like
        The URDF file.  Meshes are not loaded (``package://`` paths may point nowhere).
    q : dict or array_like, optional
        Initial joint coordinates: rad (revolute, continuous) or m (prismatic), a dict
        by joint name (missing joints: 0) or an array in the file's order of the kept
        moving joints (:attr:`UrdfModel.joint_names`).  Default: all 0.
    qd : dict or array_like, optional
        Initial joint rates, rad/s or m/s, likewise.  Default: at rest.
    floating_base : bool
        The root link is a free body (otherwise it is the ground).
    base_pose : (r, R) or (r, p), optional
        With ``floating_base``: the root link frame's origin (3,) in m and its rotation
        matrix (3, 3) or Euler parameters (4,).  Default: at the origin, unrotated.
    base_velocity : (v, omega), optional
        With ``floating_base``: the velocity (3,) in m/s of the root link frame's origin
        and the angular velocity (3,) in rad/s, both in the global frame.
    gravity : array_like, shape (3,)
        m/s^2.
    damping : bool
        Joint damping from ``<dynamics damping=...>`` (N m s/rad, N s/m) as a damper
        on each joint.
    torques : dict, optional
        Joint torque (N m) or force (N) per joint name, acting on the child link and its
        reaction on the parent: a number, a time function (c0, c1, c2, a, w, psi) as in
        :meth:`~SpatialModel.add_driver`, or a callable ``f(t)``; see
        :meth:`UrdfModel.set_joint_torques`.
    limits : bool or (k, c)
        Enforce the joints' ``<limit lower upper>`` by one-sided penalty torques
        (:meth:`UrdfModel.set_joint_limits`): ``True`` with k = 1e4 N m/rad (N/m) and
        c = 10 N m s/rad (N s/m), or the pair (k, c).  Default: not enforced.
    name : str, optional
        Default: the robot's name.

    Returns
    -------
    UrdfModel

    Raises
    ------
    ImportError
        yourdfpy is missing (``pip install mbint[urdf]``).
    FileNotFoundError
        No file at ``path``.
    ValueError
        A planar or floating joint inside the tree (not supported), a massless
        link that moves others, a non positive definite inertia, a configuration
        of the wrong size.
    """
    yourdfpy = _require_yourdfpy()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_urdf: no URDF file at {path!r}.")
    try:  # meshes are never opened: their file names stay as written (package://...)
        urdf = yourdfpy.URDF.load(path, build_scene_graph=False,
                                  build_collision_scene_graph=False, load_meshes=False,
                                  load_collision_meshes=False, filename_handler=_same_name)
    except Exception as exc:  # lxml and yourdfpy errors: name the file
        raise ValueError(f"load_urdf {path}: yourdfpy cannot read the file: "
                         f"{type(exc).__name__}: {exc}") from exc
    groups, joints = _parse_tree(urdf.robot, path)
    dropped, joints = _drop_massless_leaves(groups, joints, path)
    if floating_base and not groups[0].mass > 0:
        raise ValueError(f"load_urdf {path}: the root link {groups[0].link!r} (with the links "
                         f"fixed to it) has no mass; it cannot be a floating base.")
    model = UrdfModel(gravity=gravity, name=name or urdf.robot.name or "robot")
    model._setup(path, groups, joints, dropped, floating_base)
    qj, qdj = model._joint_vector("q", q), model._joint_vector("qd", qd)
    r, A, v, w = model._fk(qj, qdj, base_pose, base_velocity)
    for k, g in enumerate(groups):
        if k == 0 and not floating_base:
            g.body = model.ground
        elif g.mass > 0:
            try:
                g.body = model.add_body(g.mass, g.inertia, r=r[k], R=A[k], v=v[k],
                                        omega=w[k], name=g.link)
            except ValueError as exc:
                raise ValueError(f"load_urdf {path}: link {g.link!r}: {exc}") from None
    if not model.bodies:
        raise ValueError(f"load_urdf {path}: no link moves (the root link is the ground and no "
                         f"moving joint carries a mass); floating_base=True makes the root free.")
    for j in joints:
        bi, bj = groups[j.parent].body, groups[j.child].body
        si = j.t - groups[j.parent].com if j.parent or floating_base else j.t
        add = model.add_revolute if j.revolute else model.add_translational
        add(bi, bj, si, j.R @ j.axis, frame="body", name=j.name)
    model._add_outputs()
    model.set_joint_torques(torques or {}, damping=damping)
    if limits is not False and limits is not None:
        model.set_joint_limits(*((1e4, 10.0) if limits is True else limits))
    return model

