"""The mechanism drawn over time: :meth:`mbint.Trajectory.animate` and :class:`Animation`.

A frame is the configuration q at one time, resampled uniformly (from the dense
output when the run has one) and drawn by the model's kind: a
:class:`~mbint.PlanarModel` draws its bodies (lines from each centre of mass to the
points its elements use, circles of its contacts, ground points and contact lines),
a :class:`~mbint.SpatialModel` its orthographic projection (``draw_shapes``), a
:class:`~mbint.MechanicalSystem` the polylines of its user-given ``geometry``.

matplotlib (and pillow for GIFs) are imported inside the functions, as in
:mod:`mbint.plot`; this module does not import :mod:`mbint.mbs.trajectory` (which
imports it lazily).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

# a Trajectory (mbint/mbs/trajectory.py, which calls this module: not imported)
Trajectory = Any

__all__ = ["Animation", "animate"]


def animate(traj: Trajectory, path: str | os.PathLike[str] | None = None, fps: float = 25,
            max_frames: int = 250, size: tuple[float, float] = (5.0, 5.0), dpi: int = 80,
            trace: Sequence[Any] | None = None) -> list[Path] | Animation:
    """The body of :meth:`mbint.Trajectory.animate` (see there)."""
    if len(traj.t) < 1:
        raise ValueError("animate: the trajectory is empty.")
    fps = float(fps)
    if not fps > 0:
        raise ValueError("animate: fps must be positive.")
    if path is None:
        return Animation(traj, fps=fps, max_frames=max_frames, size=size, dpi=dpi,
                         trace=trace)
    return _write_animation(traj, Path(path), fps, max_frames, size, dpi, trace)


def _frames_q(traj, fps, max_frames):
    """Frame times (n,) and the coordinates there, shape (nq, n)."""
    t0, t1 = traj.t[0], traj.t[-1]
    n = int(min(max_frames, max(2, round((t1 - t0) * fps) + 1)))
    ts = np.linspace(t0, t1, n)
    if traj.sol is not None:
        q = traj.state(ts)[0]
    else:
        q = np.vstack([np.interp(ts, traj.t, traj.q[k]) for k in range(traj.model.nq)])
    return ts, q.reshape(traj.model.nq, n)


def _shapes(m, q):
    """Polylines, circles (center, radius) and ground markers at one configuration
    q of shape (nq,) of the model m."""
    if m.kind == "spatial":  # projected 3-D (the extra polylines: frame_drawer)
        return m.draw_shapes(q)[:4]
    if m.kind == "planar":
        pts, ground, circles, lines = m.geometry()
        polys = []
        for b, P in zip(m.bodies, pts):
            G = b.point((0.0, 0.0), q)  # centre of mass
            for s in P[1:]:
                polys.append(np.vstack([G, b.point(s, q)]))
            if len(P) == 1:
                polys.append(G[None, :])
        circ = []
        for bi, s, r in circles:
            if r > 0:
                b = m.body(bi)
                circ.append((b.point(s, q), r))
        return polys, circ, ground, lines
    geom = getattr(m, "geometry_fn", None)  # a MechanicalSystem's optional geometry
    if geom is None:
        raise ValueError("animate: this MechanicalSystem has no geometry; pass "
                         "geometry=geometry(q) -> list of (k, 2) polylines.")
    return [np.asarray(p, float).reshape(-1, 2) for p in geom(q)], [], np.zeros((0, 2)), []


def _limits(shapes):
    """Half the side of the square view and its x and y limits, enclosing every frame."""
    allpts = [p for polys, circ, g, _ in shapes for p in polys] + \
             [np.array([[c[0] - r, c[1] - r], [c[0] + r, c[1] + r]]) for _, circ, _, _ in shapes
              for c, r in circ] + [shapes[0][2]] + [p0[None, :] for p0, _ in shapes[0][3]]
    P = np.vstack([p for p in allpts if len(p)])
    lo, hi = P.min(axis=0), P.max(axis=0)
    span = max(hi - lo) * 0.55 + 1e-9
    mid = (lo + hi) / 2
    return span, (mid[0] - span, mid[0] + span), (mid[1] - span, mid[1] + span)


def _frame_drawer(traj, fps, max_frames, size, dpi, trace):
    """(figure, number of frames, draw(k)) for the animation."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    model = traj.model
    ts, Q = _frames_q(traj, fps, int(max_frames))
    shapes = [_shapes(model, Q[:, k]) for k in range(Q.shape[1])]
    span, xl, yl = _limits(shapes)
    tr = None
    spatial = model.kind == "spatial"
    extras = [model.draw_shapes(Q[:, k])[4] if spatial else [] for k in range(len(ts))]
    if trace is not None:
        b = model.body(trace)
        tr = model.project(b.point(np.zeros(3), Q)) if spatial else \
            b.point((0.0, 0.0), Q)  # (2, n)

    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)

    def draw(k):
        t = ts[k]
        polys, circ, ground, lines = shapes[k]
        ax.clear()
        ax.set_xlim(*xl)
        ax.set_ylim(*yl)
        ax.set_aspect("equal")
        ax.grid(True, alpha=0.3)
        xlab, ylab = getattr(model, "screen_labels", ("x [m]", "y [m]"))
        ax.set_xlabel(xlab)
        ax.set_ylabel(ylab)
        for p, style in extras[k]:
            ax.plot(p[:, 0], p[:, 1], "-", **style)
        for p0, nrm in lines:
            d = np.array([nrm[1], -nrm[0]])
            seg = np.array([p0 - 3 * span * d, p0 + 3 * span * d])
            ax.plot(seg[:, 0], seg[:, 1], color="0.3", lw=2)
        if len(ground):
            ax.plot(ground[:, 0], ground[:, 1], "k^", ms=8)
        for p in polys:
            ax.plot(p[:, 0], p[:, 1], "o-", color="C0", lw=3, ms=4)
        for c, r in circ:
            ax.add_patch(Circle(c, r, fill=False, color="C1", lw=1.5))
        if tr is not None:
            ax.plot(tr[0, :k + 1], tr[1, :k + 1], "-", color="C3", lw=1)
        ax.set_title(f"{model.name}   t = {t:.3f} s")
        return []

    return fig, len(ts), draw


def _write_animation(traj, path, fps, max_frames, size, dpi, trace):
    """Draw every frame into ``path``: an MP4, a GIF, or PNG frames; the written files."""
    fig, n, draw = _frame_drawer(traj, fps, max_frames, size, dpi, trace)
    suffix = path.suffix.lower()
    if suffix == ".mp4":
        return _write_mp4(fig, n, draw, path, fps, dpi)
    written = []
    gif = suffix == ".gif"
    images = []
    if not gif:
        pattern = str(path)
        if "{" not in pattern and "%" not in pattern:
            path.mkdir(parents=True, exist_ok=True)
            pattern = str(path / "frame_{:04d}.png")
        else:
            Path(pattern).parent.mkdir(parents=True, exist_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        draw(k)
        fig.canvas.draw()
        if gif:
            images.append(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy())
        else:
            name = pattern.format(k) if "{" in pattern else pattern % k
            fig.savefig(name)
            written.append(Path(name))
    if gif:
        from PIL import Image

        frames = [Image.fromarray(a).convert("P", palette=Image.Palette.ADAPTIVE)
                  for a in images]
        frames[0].save(os.fspath(path), save_all=True, append_images=frames[1:],
                       duration=max(1, int(round(1000.0 / fps))), loop=0)
        written.append(path)
    return written


def _write_mp4(fig, n, draw, path, fps, dpi):
    """The n frames as H.264 video through ffmpeg."""
    from matplotlib.animation import FFMpegWriter

    exe = _ffmpeg()
    path.parent.mkdir(parents=True, exist_ok=True)
    import matplotlib

    with matplotlib.rc_context({"animation.ffmpeg_path": exe}):
        writer = FFMpegWriter(fps=fps, codec="libx264",
                              extra_args=["-pix_fmt", "yuv420p"])
        with writer.saving(fig, os.fspath(path), dpi):
            for k in range(n):
                draw(k)
                writer.grab_frame()
    return [path]


def _ffmpeg():
    """The ffmpeg executable: on PATH, else the one of the imageio-ffmpeg package."""
    import shutil

    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        raise ValueError("animate: writing MP4 needs ffmpeg (on PATH, or pip install "
                         "imageio-ffmpeg); write a GIF or show it inline (path=None) "
                         "instead.") from None


class Animation:
    """An animation of a trajectory that Jupyter shows inline.

    Returned by :meth:`Trajectory.animate` without a path.  In Jupyter it renders
    as a JavaScript player (``to_jshtml``: every frame embedded as PNG, no ffmpeg),
    or as an HTML5 video with ``html="video"`` (needs ffmpeg).

    Attributes
    ----------
    trajectory : Trajectory
    fps : float
    n_frames : int
    html : {"jshtml", "video"}
    """

    def __init__(self, trajectory: Trajectory, fps: float = 25, max_frames: int = 250,
                 size: tuple[float, float] = (5.0, 5.0), dpi: int = 80,
                 trace: Sequence[Any] | None = None, html: str = "jshtml") -> None:
        self.trajectory = trajectory
        self.fps = float(fps)
        self._args = (self.fps, max_frames, size, dpi, trace)
        self.n_frames = _frames_q(trajectory, self.fps, int(max_frames))[0].size
        if html not in ("jshtml", "video"):
            raise ValueError(f"html must be 'jshtml' or 'video', got {html!r}.")
        self.html = html

    def _animation(self):
        from matplotlib.animation import FuncAnimation

        fig, n, draw = _frame_drawer(self.trajectory, *self._args)
        return FuncAnimation(fig, draw, frames=n, interval=1000.0 / self.fps, blit=False)

    def to_jshtml(self) -> str:
        """The animation as an HTML page fragment with a JavaScript player."""
        return self._animation().to_jshtml(fps=self.fps)

    def to_html5_video(self) -> str:
        """The animation as an HTML5 ``<video>`` tag (H.264, needs ffmpeg)."""
        import matplotlib

        with matplotlib.rc_context({"animation.ffmpeg_path": _ffmpeg()}):
            return self._animation().to_html5_video()

    def _repr_html_(self):
        return self.to_html5_video() if self.html == "video" else self.to_jshtml()

    def save(self, path: str | os.PathLike[str]) -> list[Path]:
        """Write the animation to ``path`` (GIF, MP4 or PNG frames, as
        :meth:`Trajectory.animate`)."""
        return _write_animation(self.trajectory, Path(path), *self._args)

    def __repr__(self):
        return (f"<Animation of {self.trajectory.model.name!r}: {self.n_frames} frames at "
                f"{self.fps:g} fps>")
