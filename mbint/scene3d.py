"""An interactive 3-D view of a mechanism and its motion: :func:`view3d` (also
:meth:`mbint.Trajectory.view3d`).

The scene is built here in NumPy and handed to K3D-jupyter (``k3d`` on PyPI, MIT,
three.js inside), which draws it in Jupyter and writes it as one standalone HTML file:
K3D's ``get_snapshot`` inlines its own JavaScript (three.js, the viewer, its controls),
so the page needs no network.  Every body is a triangle mesh fixed in its body frame,
and its motion is the mesh's model matrix as a K3D *time series* (one 4 x 4 matrix
[A r; 0 1] per frame): the viewer's panel ("Controls") has the time slider and
"Play loop", the mouse orbits, pans and zooms.

What is drawn
-------------
* a :class:`~mbint.SpatialModel` body: its *inertia box*, the uniform box of the
  body's mass and principal moments (sides a_i^2 = 6 (J_j + J_k - J_i) / m along the
  principal axes; translucent), links (cylinders) from its centre of mass to every
  point its joints and forces use, and for a tire with a wheel radius the wheel (a
  cylinder about the body's axis of largest moment, in place of the box);
* a :class:`~mbint.PlanarModel` body, in the z = 0 plane: links from its centre of
  mass to its points, a sphere at the centre of mass, its contact circles as discs;
* joints as small dark spheres at their points (static ones on the ground);
  spring-dampers and distance constraints as lines between their two points;
* the road under every tire (its profile, bumps included), a planar model's contact
  lines, and K3D's grid with axes in m.

``k3d`` is imported only when a view is made (``pip install mbint[view3d]``).
:meth:`View3D.screenshot` renders the page with a headless Chromium (Debian's
``chromium``) to a PNG.
"""
from __future__ import annotations

import html as _html
import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["view3d", "View3D", "find_browser", "PALETTE"]

#: body colours in the order of the bodies (matplotlib's tab10 without its grey), 0xRRGGBB
PALETTE = (0x1F77B4, 0xFF7F0E, 0x2CA02C, 0xD62728, 0x9467BD, 0x8C564B, 0xE377C2,
           0xBCBD22, 0x17BECF)
JOINT_COLOR = 0x333333   # joint markers
GROUND_COLOR = 0x555555  # ground points and contact lines
ROAD_COLOR = 0x9A9A9A
SPRING_COLOR = 0x444444
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


# ---------------------------------------------------------------- triangle meshes
def _outward(V, F, center):
    """Faces F (k, 3) of a convex solid wound counter-clockwise seen from outside."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    n = np.cross(b - a, c - a)
    flip = np.einsum("ij,ij->i", n, (a + b + c) / 3 - center) < 0
    F = F.copy()
    F[flip] = F[flip][:, [0, 2, 1]]
    return F


def _box(half, axes=None, center=(0.0, 0.0, 0.0)):
    """A box of half sides ``half`` (3,) along the columns of ``axes`` (3, 3)."""
    axes = np.eye(3) if axes is None else np.asarray(axes, float)
    c = np.asarray(center, float)
    s = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    V = c + (s * np.asarray(half, float)) @ axes.T
    quads = [(0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5)]
    F = np.array([t for a, b, cc, d in quads for t in ((a, b, cc), (a, cc, d))])
    return V, _outward(V, F, c)


def _perp(u):
    """Unit f, g completing the unit vector u to an orthonormal basis."""
    e = np.eye(3)[int(np.argmin(np.abs(u)))]
    f = np.cross(u, e)
    f /= np.linalg.norm(f)
    return f, np.cross(u, f)


def _cylinder(p0, p1, radius, n=14):
    """A closed cylinder from p0 to p1 (3,) of the given radius."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    u = p1 - p0
    u /= np.linalg.norm(u)
    f, g = _perp(u)
    phi = 2 * np.pi * np.arange(n) / n
    ring = radius * (np.cos(phi)[:, None] * f + np.sin(phi)[:, None] * g)
    V = np.vstack([p0 + ring, p1 + ring, p0, p1])
    k = np.arange(n)
    k1 = (k + 1) % n
    F = np.vstack([np.c_[k, k1, n + k1], np.c_[k, n + k1, n + k],
                   np.c_[np.full(n, 2 * n), k, k1], np.c_[np.full(n, 2 * n + 1), n + k, n + k1]])
    return V, _outward(V, F, (p0 + p1) / 2)


def _sphere(center, radius, nlat=7, nlon=12):
    """A UV sphere."""
    c = np.asarray(center, float)
    th = np.pi * np.arange(1, nlat) / nlat
    ph = 2 * np.pi * np.arange(nlon) / nlon
    ring = np.stack([np.sin(th)[:, None] * np.cos(ph), np.sin(th)[:, None] * np.sin(ph),
                     np.cos(th)[:, None] * np.ones_like(ph)], axis=-1).reshape(-1, 3)
    V = c + radius * np.vstack([ring, [[0, 0, 1], [0, 0, -1]]])
    top, bot = len(ring), len(ring) + 1
    F = []
    for j in range(nlon):
        j1 = (j + 1) % nlon
        F.append((top, j, j1))
        F.append((bot, (nlat - 2) * nlon + j, (nlat - 2) * nlon + j1))
        for i in range(nlat - 2):
            a, b = i * nlon + j, i * nlon + j1
            F += [(a, b, b + nlon), (a, b + nlon, a + nlon)]
    return V, _outward(V, np.array(F), c)


def _inertia_box(mass, J):
    """Half sides (3,) and axes (3, 3) (columns) of the uniform box with the body's
    mass [kg] and centroidal inertia J (3, 3) [kg m^2]: J_i = m (a_j^2 + a_k^2) / 12
    gives a_i^2 = 6 (J_j + J_k - J_i) / m (clamped to 1 % of the largest side)."""
    lam, W = np.linalg.eigh(np.asarray(J, float))
    s2 = 6.0 * (lam.sum() - 2 * lam) / mass
    side = np.sqrt(np.maximum(s2, 0.0))
    side = np.maximum(side, 0.01 * side.max())
    return side / 2, W


@dataclass
class _Part:
    """A triangle mesh fixed on one body (-1: the ground), in the body frame."""

    body: int
    V: np.ndarray
    F: np.ndarray
    color: int
    opacity: float = 1.0


def _merge(parts):
    """One (vertices, faces, per-vertex colours) of several parts."""
    Vs, Fs, Cs, off = [], [], [], 0
    for p in parts:
        Vs.append(p.V)
        Fs.append(p.F + off)
        Cs.append(np.full(len(p.V), p.color, np.uint32))
        off += len(p.V)
    return np.vstack(Vs), np.vstack(Fs), np.concatenate(Cs)


# ---------------------------------------------------------------- what a model draws
def _frames(obj, max_frames, fps):
    """(model, frame times (n,), coordinates (nq, n)) of a trajectory or a model."""
    kind = getattr(obj, "kind", None)
    if kind in ("planar", "spatial"):
        return obj, np.zeros(1), np.asarray(obj.q0, float)[:, None]
    model = getattr(obj, "model", None)
    if model is None or not hasattr(obj, "t"):
        raise TypeError(f"view3d: obj must be a Trajectory or a PlanarModel/SpatialModel, "
                        f"got {type(obj).__name__}.")
    if getattr(model, "kind", None) not in ("planar", "spatial"):
        raise ValueError(f"view3d: a model of kind {getattr(model, 'kind', None)!r} has no "
                         f"bodies to draw (a PlanarModel or SpatialModel has).")
    if len(obj.t) < 1:
        raise ValueError("view3d: the trajectory is empty.")
    from .animation import _frames_q

    ts, Q = _frames_q(obj, fps, max_frames)
    return model, ts, Q


def _poses(model, Q):
    """Rotation matrices (nb, n, 3, 3) and positions (nb, n, 3) of every body."""
    nb, n = len(model.bodies), Q.shape[1]
    R, r = np.zeros((nb, n, 3, 3)), np.zeros((nb, n, 3))
    if model.kind == "spatial":
        for k in range(nb):
            r[k] = Q[7 * k:7 * k + 3].T
            p = Q[7 * k + 3:7 * k + 7]
            e0, e1, e2, e3 = p / np.linalg.norm(p, axis=0)  # dense output: |p| = 1 to its error
            R[k] = np.stack([
                [e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
                [2 * (e1 * e2 + e0 * e3), e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3, 2 * (e2 * e3 - e0 * e1)],
                [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3],
            ]).transpose(2, 0, 1)
    else:
        for k in range(nb):
            x, y, th = Q[3 * k:3 * k + 3]
            c, s = np.cos(th), np.sin(th)
            r[k] = np.stack([x, y, np.zeros_like(x)], axis=1)
            R[k, :, 0, 0], R[k, :, 0, 1], R[k, :, 1, 0], R[k, :, 1, 1] = c, -s, s, c
            R[k, :, 2, 2] = 1.0
    return R, r


def _spatial_items(model):
    """Points (body, s) of the bodies, joints as (body, s), lines as ((b, s), (b, s)),
    tires as (body, s, params)."""
    pts = [[] for _ in model.bodies]
    joints, lines, tires = [], [], []

    def add(b, s):
        s = np.asarray(s, float)
        if b >= 0 and not any(np.allclose(s, x) for x in pts[b]):
            pts[b].append(s)

    for e in model.joint_elements:
        for pr in e.prims:
            for key, b in (("si", e.i), ("sj", e.j)):
                if key in pr:
                    add(b, pr[key])
                    joints.append((b, np.asarray(pr[key], float)))
            if pr["type"] == "dist":
                lines.append(((e.i, np.asarray(pr["si"], float)), (e.j, np.asarray(pr["sj"], float))))
    for e in model.force_elements:
        for pr in e.prims:
            for key, b in (("si", e.i), ("sj", e.j)):
                if key in pr:
                    add(b, pr[key])
            if pr["type"] == "tsda":
                lines.append(((e.i, np.asarray(pr["si"], float)), (e.j, np.asarray(pr["sj"], float))))
            if pr["type"] == "tire":
                tires.append((e.i, np.asarray(pr["si"], float), pr))
        if e.kind in ("python", "cforce"):
            add(e.i, e.point)
    return pts, joints, lines, tires


def _planar_items(model):
    """As :func:`_spatial_items` for a planar model (points in the z = 0 plane), with its
    contact circles (body, s, r) and contact lines (p0, normal) in place of tires."""
    pts, ground, circles, clines = model.geometry()
    pts = [[np.r_[s, 0.0] for s in P if np.any(s)] for P in pts]
    joints, lines = [], []
    for e in model.joint_elements:
        p = e.params
        if "si_x" not in p or e.kind.startswith("driver"):
            continue
        si, sj = np.array([p["si_x"], p["si_y"], 0.0]), np.array([p["sj_x"], p["sj_y"], 0.0])
        if e.kind == "distance":
            lines.append(((e.i, si), (e.j, sj)))
        joints += [(e.i, si), (e.j, sj)]
    for e in model.force_elements:
        p = e.params
        if e.kind == "tsda":
            lines.append(((e.i, np.array([p["si_x"], p["si_y"], 0.0])),
                          (e.j, np.array([p["sj_x"], p["sj_y"], 0.0]))))
    circles = [(b, np.r_[s, 0.0], r) for b, s, r in circles if r > 0]
    return pts, joints, lines, circles, clines


def _world(R, r, b, s):
    """Global positions (n, 3) of the body point s over the frames (b < 0: the ground)."""
    if b < 0:
        return np.repeat(np.asarray(s, float)[None, :], R.shape[1], axis=0)
    return r[b] + R[b] @ np.asarray(s, float)


def _size(model, R, r, pts, joints):
    """The scene's extent: the bounding box (lo, hi) of every drawn point over the frames."""
    P = [r.reshape(-1, 3)] + [_world(R, r, b, s) for b, s in joints]
    P += [_world(R, r, b, s) for b, ss in enumerate(pts) for s in ss]
    P = np.vstack(P)
    return P.min(axis=0), P.max(axis=0)


def _body_parts(model, pts, tires, circles, rad, opacity, colors):
    """The parts fixed on each body: boxes (translucent) and links, wheels, markers."""
    parts = []
    spatial = model.kind == "spatial"
    wheels = {b for b, s, pr in tires if pr.get("wheel_r", 0.0) > 0}
    for k, b in enumerate(model.bodies):
        col = colors[k % len(colors)]
        for s in pts[k]:
            if np.linalg.norm(s) > rad:
                parts.append(_Part(k, *_cylinder(np.zeros(3), s, rad), col))
        if spatial and k not in wheels:
            half, W = _inertia_box(b.mass, b.inertia)
            parts.append(_Part(k, *_box(half, W), col, opacity))
        if not spatial:
            parts.append(_Part(k, *_sphere(np.zeros(3), 2 * rad), col))
    for bi, s, pr in tires:
        R = pr.get("wheel_r", 0.0)
        if R > 0:
            lam, W = np.linalg.eigh(model.bodies[bi].inertia)
            ax = W[:, -1] * 0.25 * R   # the wheel's axle: the body's axis of largest moment
            parts.append(_Part(bi, *_cylinder(s - ax, s + ax, R, n=28), colors[bi % len(colors)]))
    for bi, s, rc in circles:
        dz = np.array([0.0, 0.0, rad])
        parts.append(_Part(bi, *_cylinder(s - dz, s + dz, rc, n=28), colors[bi % len(colors)],
                           opacity))
    return parts


def _road_parts(R, r, tires, rad):
    """The road under every tire: a strip along x over the tire's travel, its profile
    sampled finely (the bump's edges exactly)."""
    from .mbs._spatial_elements import _road

    parts = []
    for bi, s, pr in tires:
        P = _world(R, r, bi, s)
        Rw = max(pr.get("wheel_r", 0.0), 10 * rad)
        x0, x1 = P[:, 0].min() - 2 * Rw, P[:, 0].max() + 2 * Rw
        xs = np.linspace(x0, x1, 400)
        if pr.get("bump_r", 0.0) > 0:
            S = pr["wheel_r"] + pr["bump_r"]
            half = math.sqrt(S * S - pr["wheel_r"] ** 2)
            xs = np.union1d(xs, pr["bump_x"] + half * np.linspace(-1, 1, 81))
            xs = xs[(xs >= x0) & (xs <= x1)]
        z = np.array([_road(pr, x)[0] for x in xs]) - 0.002 * Rw
        y, w = P[:, 1].mean(), 0.6 * Rw
        V = np.vstack([np.c_[xs, np.full_like(xs, y - w), z], np.c_[xs, np.full_like(xs, y + w), z]])
        m = len(xs)
        k = np.arange(m - 1)
        F = np.vstack([np.c_[k, k + 1, m + k + 1], np.c_[k, m + k + 1, m + k]])
        parts.append(_Part(-1, V, F, ROAD_COLOR))
    return parts


def _ground_parts(joints, clines, lo, hi, rad):
    """Static parts: joint markers on the ground and a planar model's contact lines."""
    parts = [_Part(-1, *_sphere(s, 2.2 * rad), GROUND_COLOR) for b, s in joints if b < 0]
    span = float(np.max(hi - lo)) + 1.0
    for p0, nrm in clines:
        d = np.array([nrm[1], -nrm[0], 0.0])
        n3 = np.array([nrm[0], nrm[1], 0.0])
        axes = np.column_stack([d, n3, [0.0, 0.0, 1.0]])
        parts.append(_Part(-1, *_box((span, rad, 4 * rad), axes, np.r_[p0, 0.0] - rad * n3),
                           GROUND_COLOR))
    return parts


# ---------------------------------------------------------------- the view
def view3d(obj: Any, path: str | os.PathLike | None = None, *, max_frames: int = 150,
           fps: float = 25.0, colors: Sequence[int] | None = None, opacity: float = 0.45,
           radius: float | None = None, follow: Any = None,
           view: Sequence[float] | None = None, camera_fov: float = 45.0,
           grid: bool = True, height: int = 520) -> View3D:
    """An interactive 3-D view of a mechanism or of its motion (K3D / three.js).

    Parameters
    ----------
    obj : Trajectory, SpatialModel or PlanarModel
        A trajectory (its frames resampled uniformly, from the dense output when the
        run has one) or a model (its initial configuration).  A planar model is
        drawn in the z = 0 plane.
    path : str or path-like, optional
        Also write the standalone HTML page there (as ``View3D.save``).
    max_frames : int
        At most this many frames (the file holds one 4 x 4 matrix per body and frame).
    fps : float
        Frames per second of simulated time before ``max_frames`` caps them; also
        the viewer's playback rate.
    colors : sequence of int, optional
        Body colours 0xRRGGBB, cycled (default ``mbint.scene3d.PALETTE``).
    opacity : float
        Opacity of the inertia boxes and contact discs, 0..1 (links, wheels and
        joints are opaque).
    radius : float, optional
        Radius of the links in m; the joint markers are 2.2 times it.  Default: 0.6 %
        of the mechanism's size (the diagonal of its bounding box at the first frame).
    follow : body or str, optional
        The camera follows this body's centre of mass (a vehicle leaving the view).
    view : (float, float), optional
        Azimuth and elevation of the camera in degrees (default: a spatial model's
        ``view``, as its animation; a planar model from +z).
    camera_fov : float
        Vertical field of view of the camera, degrees.
    grid : bool
        Draw K3D's grid with axes labelled in m.
    height : int
        Height in pixels of the view in a notebook.

    Returns
    -------
    View3D
        Shown by Jupyter (an iframe with the standalone page); ``.save(path)``,
        ``.screenshot(png)``, ``.plot`` (the K3D widget).

    Raises
    ------
    ImportError
        Without ``k3d`` (``pip install mbint[view3d]``).
    ValueError, TypeError
        For a model without bodies (a MechanicalSystem, a loaded model) or bad options.
    """
    max_frames = _positive_int("max_frames", max_frames)
    fps = _positive("fps", fps)
    opacity = float(opacity)
    if not 0.0 <= opacity <= 1.0:
        raise ValueError(f"view3d: opacity must be in [0, 1], got {opacity!r}.")
    camera_fov = _positive("camera_fov", camera_fov)
    if camera_fov >= 180:
        raise ValueError(f"view3d: camera_fov must be below 180 degrees, got {camera_fov!r}.")
    if view is not None:
        try:
            view = tuple(float(a) for a in view)
        except (TypeError, ValueError):
            view = ()
        if len(view) != 2 or not all(map(math.isfinite, view)):
            raise ValueError("view3d: view must be (azimuth, elevation) in degrees, two "
                             "finite numbers.")
    model, times, Q = _frames(obj, max_frames, fps)
    if not model.bodies:
        raise ValueError("view3d: the model has no bodies.")
    colors = PALETTE if colors is None else tuple(int(c) for c in colors)
    if not colors or any(not 0 <= c <= 0xFFFFFF for c in colors):
        raise ValueError("view3d: colors must be a non-empty sequence of 0xRRGGBB integers.")
    v = View3D(model, times, Q, colors=colors, opacity=opacity, radius=radius, follow=follow,
               view=view, camera_fov=camera_fov, grid=bool(grid), fps=fps, height=int(height))
    if path is not None:
        v.save(path)
    return v


def _positive(name, x):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"view3d: {name} must be a number, got {x!r}.") from None
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"view3d: {name} must be positive and finite, got {x!r}.")
    return x


def _positive_int(name, x):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"view3d: {name} must be an integer, got {x!r}.")
    if x < 1:
        raise ValueError(f"view3d: {name} must be at least 1, got {x}.")
    return int(x)


def _require_k3d():
    import importlib

    try:   # import_module: k3d ships no type information, and it stays optional
        k3d = importlib.import_module("k3d")
    except ImportError:
        raise ImportError("mbint.view3d needs K3D-jupyter: pip install k3d "
                          "(or pip install mbint[view3d]).") from None
    return k3d


def _time_keys(times):
    """K3D's time-series keys (strings), distinct for distinct times."""
    for digits in (12, 17):
        keys = [f"{t:.{digits}g}" for t in times]
        if len(set(keys)) == len(keys):
            return keys
    raise ValueError("view3d: the frame times are not distinct.")


class View3D:
    """A 3-D scene of a mechanism over time, drawn by K3D (three.js).

    Made by :func:`mbint.view3d`.  Jupyter shows it as an iframe holding the standalone
    page (no widget extension needed); ``plot`` is the K3D widget itself.

    Attributes
    ----------
    model : SpatialModel or PlanarModel
    times : ndarray, shape (n,)
        Frame times in s.
    rotations : ndarray, shape (nb, n, 3, 3)
        Rotation matrices (body to global) of every body at every frame.
    positions : ndarray, shape (nb, n, 3)
        Centres of mass in m.
    camera : ndarray, shape (9,)
        Camera position, target and up vector (m) at the first frame.
    camera_fov : float
        Vertical field of view, degrees.
    radius : float
        Radius of the links, m.
    plot : k3d.plot.Plot
    """

    def __init__(self, model: Any, times: ArrayLike, Q: ArrayLike, *, colors: Sequence[int] | None,
                 opacity: float, radius: float | None, follow: Any, view: Sequence[float] | None,
                 camera_fov: float, grid: bool, fps: float, height: int) -> None:
        k3d = _require_k3d()
        self.model, self.times = model, np.asarray(times, float)
        self.camera_fov, self.height, self.colors = camera_fov, height, colors
        self.rotations, self.positions = _poses(model, Q)
        R, r = self.rotations, self.positions
        spatial = model.kind == "spatial"
        if spatial:
            pts, joints, lines, tires = _spatial_items(model)
            circles, clines = [], []
        else:
            pts, joints, lines, circles, clines = _planar_items(model)
            tires = []
        lo, hi = _size(model, R, r, pts, joints)
        if radius is None:   # from the mechanism's size at the first frame, not its travel
            lo0, hi0 = _size(model, R[:, :1], r[:, :1], pts, joints)
            radius = 0.006 * max(float(np.linalg.norm(hi0 - lo0)), 1e-3)
        self.radius = rad = _positive("radius", radius)
        parts = _body_parts(model, pts, tires, circles, rad, opacity, colors)
        parts += [_Part(b, *_sphere(s, 2.2 * rad), JOINT_COLOR)  # type: ignore[call-arg]
                  for b, s in joints if b >= 0]
        static = _ground_parts(joints, clines, lo, hi, rad) + _road_parts(R, r, tires, rad)
        keys = _time_keys(self.times)
        self.plot = k3d.plot(camera_auto_fit=False, grid_auto_fit=True, grid_visible=grid,
                             camera_fov=camera_fov, time=float(self.times[0]), fps=fps,
                             axes=["x\\,[m]", "y\\,[m]", "z\\,[m]"], height=height,
                             name=model.name, background_color=0xFFFFFF)
        self._add_bodies(k3d, parts, keys)
        if static:
            V, F, C = _merge(static)
            self.plot += k3d.mesh(V.astype(np.float32), F.astype(np.uint32), colors=C,
                                  name="ground", flat_shading=True)
        for k, (a, b) in enumerate(lines):
            A, B = _world(R, r, *a), _world(R, r, *b)
            verts = {key: np.stack([A[i], B[i]]).astype(np.float32) for i, key in enumerate(keys)}
            self.plot += k3d.line(verts, shader="mesh", width=0.8 * rad, color=SPRING_COLOR,
                                  name=f"line {k}")
        self.plot += k3d.text2d({key: f"{model.name}   t = {t:.3f} s" for key, t in
                                 zip(keys, self.times)}, position=(0.01, 0.01), is_html=True,
                                color=0x222222, size=0.8, label_box=False, name="time")
        self._set_camera(follow, view, lo, hi, keys)

    def _add_bodies(self, k3d, parts, keys):
        """One opaque and one translucent mesh per body, moved by model matrices."""
        R, r = self.rotations, self.positions
        for k, body in enumerate(self.model.bodies):
            M = np.zeros((len(keys), 4, 4), np.float32)
            M[:, :3, :3], M[:, :3, 3], M[:, 3, 3] = R[k], r[k], 1.0
            mm = {key: M[i] for i, key in enumerate(keys)}
            for translucent in (False, True):
                mine = [p for p in parts if p.body == k and (p.opacity < 1) == translucent]
                if not mine:
                    continue
                V, F, C = _merge(mine)
                mesh = k3d.mesh(V.astype(np.float32), F.astype(np.uint32), colors=C,
                                opacity=mine[0].opacity, flat_shading=True,
                                name=body.name + (" box" if translucent else ""))
                mesh.model_matrix = mm   # a time series: set after the factory's transform
                self.plot += mesh

    def _set_camera(self, follow, view, lo, hi, keys):
        """The camera from (azimuth, elevation), at a distance that holds the scene (or
        the first frame around the followed body) in the field of view."""
        m = self.model
        if view is None:
            view = m.view if m.kind == "spatial" else None
        if view is None:
            n, up = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
        else:
            az, el = np.radians(np.asarray(view, float))
            n = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
            up = np.array([0.0, 0.0, 1.0]) if abs(math.cos(el)) > 1e-6 else \
                np.array([-math.cos(az), -math.sin(az), 0.0])
        if follow is not None:
            b = m.body(follow)
            if b.is_ground:
                raise ValueError("view3d: follow must be a body, not the ground.")
            c = self.positions[b.index]
            lo0, hi0 = _size(m, self.rotations[:, :1], self.positions[:, :1],
                             *(_spatial_items(m)[:2] if m.kind == "spatial" else _planar_items(m)[:2]))
            radius = 0.5 * float(np.linalg.norm(hi0 - lo0))
            target = c + ((lo0 + hi0) / 2 - c[0])
        else:
            radius = 0.5 * float(np.linalg.norm(hi - lo))
            target = np.repeat(((lo + hi) / 2)[None, :], len(self.times), axis=0)
        dist = max(radius, 1e-3) / math.sin(math.radians(self.camera_fov) / 2) * 1.1
        cams = np.hstack([target + dist * n, target, np.repeat(up[None, :], len(target), axis=0)])
        self._cameras = cams
        self.camera = cams[0].copy()
        self.plot.camera = cams[0].tolist()
        if follow is not None and len(keys) > 1:
            self.plot.camera_animation = {key: cams[i].tolist() for i, key in enumerate(keys)}

    # ------------------------------------------------------------ output
    @property
    def n_frames(self) -> int:
        """The number of frames."""
        return self.times.size

    def to_html(self, time: float | None = None) -> str:
        """The standalone page (str): K3D's JavaScript inlined, no network needed.

        Parameters
        ----------
        time : float, optional
            The time in s shown when the page opens (default: the first frame).
        """
        t_old, cam_old = self.plot.time, self.plot.camera
        if time is not None:
            time = float(time)
            self.plot.time = time
            # the camera where the (followed) scene is then: K3D plays its camera
            # animation only when the time changes in the page
            cams = self._cameras
            self.plot.camera = [float(np.interp(time, self.times, cams[:, i]))
                                for i in range(9)]
        try:
            return self.plot.get_snapshot(additional_js_code=_READY_JS)
        finally:
            self.plot.time, self.plot.camera = t_old, cam_old

    def save(self, path: str | os.PathLike, time: float | None = None) -> Path:
        """Write the standalone HTML page to ``path`` (parents created); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_html(time), encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        doc = _html.escape(self.to_html(), quote=True)
        return (f'<iframe srcdoc="{doc}" style="width: 100%; height: {self.height}px; '
                f'border: 0" allowfullscreen></iframe>')

    def screenshot(self, path: str | os.PathLike, size: tuple[int, int] = (800, 600),
                   time: float | None = None, browser: str | None = None,
                   timeout: float = 120.0) -> Path:
        """Render the page in a headless Chromium to a PNG.

        Parameters
        ----------
        path : str or path-like
            The PNG to write (parents created).
        size : (int, int)
            Window width and height in pixels.
        time : float, optional
            The time in s to show (default: the first frame).
        browser : str, optional
            A Chromium executable (default: ``mbint.scene3d.find_browser()``).
        timeout : float
            Seconds before the browser is given up (wall time).

        Returns
        -------
        pathlib.Path

        Raises
        ------
        FileNotFoundError
            Without a Chromium (Debian: ``apt-get install chromium``).
        RuntimeError
            If the browser fails or writes no image.

        Notes
        -----
        WebGL runs on SwiftShader, Chromium's software renderer
        (``--use-angle=swiftshader --enable-unsafe-swiftshader``: no GPU needed), the
        sandbox off (``--no-sandbox``: it runs as root in containers).  The browser is
        driven through the DevTools protocol on a pipe: the capture waits for the page's
        own signal that K3D has loaded the scene and drawn two frames
        (``window.mbintViewReady``), not for a fixed time.
        """
        exe = browser or find_browser()
        if exe is None:
            raise FileNotFoundError("screenshot: no Chromium found (install Debian's "
                                    "chromium, or pass browser=).")
        w, h = (int(v) for v in size)
        if w < 16 or h < 16:
            raise ValueError(f"screenshot: size must be at least 16 x 16 pixels, got {size!r}.")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="mbint-view3d-") as tmp:
            page = Path(tmp) / "view.html"
            self.save(page, time=time)
            png = _cdp_screenshot(exe, page.as_uri(), w, h, float(timeout), tmp)
        path.write_bytes(png)
        return path

    def __repr__(self) -> str:
        return (f"<View3D of {self.model.name!r}: {len(self.model.bodies)} bodies, "
                f"{self.n_frames} frames, t = {self.times[0]:g}..{self.times[-1]:g} s>")


_READY_JS = ("requestAnimationFrame(function () { requestAnimationFrame(function () "
             "{ window.mbintViewReady = true; }); });")


class _Pipe:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages ended by NUL,
    commands written to the browser's fd 3, answers and events read from its fd 4."""

    def __init__(self, write_fd, read_fd, deadline):
        self.w, self.r, self.deadline, self.buf, self.n = write_fd, read_fd, deadline, b"", 0

    def call(self, method, session=None, **params):
        import json

        self.n += 1
        msg = dict(id=self.n, method=method, params=params)
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buf:
                self.buf += self._read()
            raw, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.n:
                if "error" in reply:
                    raise RuntimeError(f"screenshot: {method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self):
        import select
        import time

        left = self.deadline - time.monotonic()
        if left <= 0 or not select.select([self.r], [], [], left)[0]:
            raise RuntimeError("screenshot: the browser did not answer in time.")
        chunk = os.read(self.r, 1 << 20)
        if not chunk:
            raise RuntimeError("screenshot: the browser closed its DevTools pipe.")
        return chunk


def _browser_env(home):
    """The browser's environment: ours with its own HOME, without the preloaded libraries
    of this process (``LD_PRELOAD``: ``make asan`` preloads libasan into the Python it
    tests, which must not reach Chromium)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    env["HOME"] = home
    return env


def _cdp_screenshot(exe, url, w, h, timeout, tmp):
    """PNG bytes of the page at ``url`` once it has set ``window.mbintViewReady``."""
    import base64
    import time

    import fcntl

    to_browser, from_browser = os.pipe(), os.pipe()
    # the browser reads commands on its fd 3 and answers on its fd 4: bash moves
    # the pipe's ends there (first lifted above 9, so that moving one cannot close the other)
    rfd = fcntl.fcntl(to_browser[0], fcntl.F_DUPFD_CLOEXEC, 10)
    wfd = fcntl.fcntl(from_browser[1], fcntl.F_DUPFD_CLOEXEC, 10)
    for fd in (to_browser[0], from_browser[1]):
        os.close(fd)
    cmd = [exe, "--headless", "--no-sandbox", "--use-angle=swiftshader",
           "--enable-unsafe-swiftshader", "--hide-scrollbars", "--no-first-run", "--mute-audio",
           "--remote-debugging-pipe", f"--user-data-dir={tmp}/profile",
           f"--window-size={w},{h}", "about:blank"]
    shell = f'exec "$0" "$@" 3<&{rfd} 4>&{wfd} {rfd}<&- {wfd}>&-'
    proc = subprocess.Popen([shutil.which("bash") or "/bin/bash", "-c", shell] + cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            pass_fds=(rfd, wfd), env=_browser_env(tmp))
    os.close(rfd)
    os.close(wfd)
    cdp = _Pipe(to_browser[1], from_browser[0], time.monotonic() + timeout)
    try:
        target = cdp.call("Target.createTarget", url="about:blank")
        sid = cdp.call("Target.attachToTarget", targetId=target["targetId"],
                       flatten=True)["sessionId"]
        cdp.call("Emulation.setDeviceMetricsOverride", sid, width=w, height=h,
                 deviceScaleFactor=1, mobile=False)
        cdp.call("Page.navigate", sid, url=url)
        while not cdp.call("Runtime.evaluate", sid, expression="window.mbintViewReady === true",
                           returnByValue=True)["result"].get("value"):
            if time.monotonic() > cdp.deadline:
                raise RuntimeError(f"screenshot: the page did not finish loading within "
                                   f"{timeout:g} s.")
            time.sleep(0.1)
        data = cdp.call("Page.captureScreenshot", sid, format="png")["data"]
        try:
            cdp.call("Browser.close")
        except RuntimeError:
            pass
        return base64.b64decode(data)
    finally:
        for fd in (to_browser[1], from_browser[0]):
            os.close(fd)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def find_browser() -> str | None:
    """The path of a Chromium on PATH (``chromium``, ``chromium-browser``,
    ``google-chrome``), or None."""
    for name in BROWSERS:
        exe = shutil.which(name)
        if exe:
            return exe
    return None
