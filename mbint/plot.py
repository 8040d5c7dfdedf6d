"""Plots of solutions, step sizes, stability regions and error studies.

Every function draws on ``ax`` (a new figure when ``ax`` is None) and returns
the :class:`matplotlib.figure.Figure`.  matplotlib is imported inside the
functions, so ``import mbint`` does not need it and does not choose a backend.

References
----------
.. [1] A. L. Schwab and G. M. J. Delhaes, Lecture Notes Multibody Dynamics B,
   wb1413, chapter 7, TU Delft, 2009 (figures 7.4-7.14).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# a Trajectory (mbint/mbs/trajectory.py, which calls this module: not imported)
Trajectory = Any

__all__ = ["plot_solution", "plot_step_sizes", "plot_stability_regions",
           "plot_error_vs_step", "plot_work_precision", "error_slopes"]


_FIGURE_CLASS = None


def _figure_class():
    """A matplotlib Figure that Jupyter shows once.

    A pyplot figure is shown by the inline backend when the cell ends; when it is
    also the cell's value, Jupyter would show it a second time.  This class shows
    itself when displayed (as the cell's value, by the inline backend, or as ``fig``
    in a later cell) and then leaves pyplot, so that nothing shows it again.
    """
    global _FIGURE_CLASS
    if _FIGURE_CLASS is None:
        from matplotlib.figure import Figure

        class MbintFigure(Figure):
            def _ipython_display_(self):
                import io

                import matplotlib.pyplot as plt
                from IPython.display import Image, display

                buf = io.BytesIO()
                self.savefig(buf, format="png", bbox_inches="tight")
                display(Image(buf.getvalue()))
                if getattr(self, "number", None) is not None and plt.fignum_exists(self.number):
                    plt.close(self)  # shown: the inline backend must not show it again

        _FIGURE_CLASS = MbintFigure
    return _FIGURE_CLASS


def _axes(ax):
    """(figure, axes): a new pair when ``ax`` is None."""
    if ax is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained",
                               FigureClass=_figure_class())
        return fig, ax
    return ax.figure, ax


_LINESTYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "v", "D", "x", "+", "*")


def line_style(k: int, n_points: int) -> dict[str, Any]:
    """Keyword arguments that tell curve k apart from the others on one axes even
    where they overlap: colour, line style and a sparse marker (about 10 per curve,
    offset between curves).

    Parameters
    ----------
    k : int
        Index of the curve on the axes.
    n_points : int
        Number of points of the curve.

    Returns
    -------
    dict
        ``color``, ``linestyle``, ``marker``, ``markevery``, ``markersize``.
    """
    every = max(1, int(n_points) // 10)
    return dict(color=f"C{k % 10}", linestyle=_LINESTYLES[k % len(_LINESTYLES)],
                marker=_MARKERS[k % len(_MARKERS)],
                markevery=(min(k * max(1, every // 4), every - 1) if every > 1 else 0, every),
                markersize=4, markerfacecolor="none")


def _as_list(obj, single):
    """``[obj]`` when ``single(obj)``, else ``list(obj)``."""
    return [obj] if single(obj) else list(obj)


def _labels(labels, items, default):
    if labels is None:
        return [default(i, x) for i, x in enumerate(items)]
    if isinstance(labels, str):
        labels = [labels]
    labels = list(labels)
    if len(labels) != len(items):
        raise ValueError(f"labels: expected {len(items)} labels, got {len(labels)}.")
    return labels


def plot_solution(res: Any, components: int | Sequence[int] | None = None,
                  labels: str | Sequence[str] | None = None, ax: Axes | None = None,
                  n_dense: int = 500) -> Figure:
    """Plot the components of a solution against time.

    The stored points (every accepted step, or ``t_eval``) are drawn as
    markers; when the result carries a dense output ``res.sol`` it is drawn as
    a line through them, so the interpolant between the steps is visible.

    Parameters
    ----------
    res : OdeResult
        Result of :func:`mbint.solve_ivp`.
    components : int or sequence of int, optional
        Indices into ``res.y`` to plot (default: all).
    labels : str or sequence of str, optional
        One label per component (default ``"<method> y[i]"``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure when None.
    n_dense : int
        Number of points at which the dense output is evaluated.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _axes(ax)
    y = np.atleast_2d(np.asarray(res.y, dtype=float))
    t = np.asarray(res.t, dtype=float)
    if components is None:
        components = list(range(y.shape[0]))
    elif np.isscalar(components):
        components = [int(components)]  # type: ignore[arg-type]
    components = [int(i) for i in components]  # type: ignore[union-attr]
    for i in components:
        if not -y.shape[0] <= i < y.shape[0]:
            raise ValueError(f"components: index {i} out of range for a state of size "
                             f"{y.shape[0]}.")
    method = getattr(res, "method", None) or ""
    labels = _labels(labels, components, lambda _, i: f"{method} y[{i}]".strip())
    sol = getattr(res, "sol", None)
    tt = yy = None
    if sol is not None and len(t) > 1:
        tt = np.linspace(t[0], t[-1], max(int(n_dense), 2))
        yy = np.atleast_2d(sol(tt))
    marker_size = 4 if len(t) <= 200 else 2
    for k, (i, lab) in enumerate(zip(components, labels)):
        ls = _LINESTYLES[k % len(_LINESTYLES)]
        if yy is not None:
            (line,) = ax.plot(tt, yy[i], ls, lw=1.2, label=lab)  # type: ignore[arg-type]
            ax.plot(t, y[i], _MARKERS[k % len(_MARKERS)], ms=marker_size, mfc="none",
                    color=line.get_color())
        else:
            ax.plot(t, y[i], ls, marker=_MARKERS[k % len(_MARKERS)], mfc="none",
                    ms=marker_size * 1.5, lw=1.0, label=lab)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("y")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def plot_step_sizes(res_or_list: Any, labels: str | Sequence[str] | None = None,
                    ax: Axes | None = None) -> Figure:
    """Plot the accepted step size against time on a logarithmic axis.

    Parameters
    ----------
    res_or_list : OdeResult or sequence of OdeResult
        Results of :func:`mbint.solve_ivp`; ``t_steps`` (end of each accepted
        step) and ``h_steps`` (its size) are plotted.
    labels : str or sequence of str, optional
        One label per result (default: the method name).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _axes(ax)
    results = _as_list(res_or_list, lambda r: isinstance(r, Mapping))
    labels = _labels(labels, results, lambda i, r: getattr(r, "method", None) or f"run {i}")
    for r, lab in zip(results, labels):
        ts = np.asarray(r.t_steps, dtype=float)
        hs = np.abs(np.asarray(r.h_steps, dtype=float))
        if ts.size == 0:
            continue
        ax.semilogy(ts, hs, ".-", ms=3, lw=1.0, label=f"{lab} ({ts.size} steps)")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("accepted step size h [s]")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    return fig


def plot_stability_regions(methods: str | Sequence[str], re: tuple[float, float] = (-5.0, 1.0),
                           im: tuple[float, float] = (-4.0, 4.0), ax: Axes | None = None,
                           n: int = 401) -> Figure:
    """Fill the stability regions {z : |R(z)| <= 1} of one or more methods.

    Parameters
    ----------
    methods : str or sequence of str
        Method names (see :func:`mbint.methods`) with a stability function in
        :func:`mbint.stability.amplification`.
    re, im : 2-tuple of float
        Ranges of Re z and Im z, z = h lambda.
    ax : matplotlib.axes.Axes, optional
    n : int
        Grid points per axis.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Each region is filled translucently and outlined by the level set
    |R(z)| = 1; where regions overlap the fills add up.  For
    ``nystrom_midpoint`` R is the dominant eigenvalue of the step matrix on the
    oscillator with eigenvalues z and conj(z) (LN eq 7.13).
    """
    from matplotlib.patches import Patch

    from .stability import region

    fig, ax = _axes(ax)
    methods = [methods] if isinstance(methods, str) else list(methods)
    colors = [f"C{i % 10}" for i in range(len(methods))]
    handles = []
    for name, color in zip(methods, colors):
        X, Y, absR = region(name, re=re, im=im, n=n)
        absR = np.where(np.isfinite(absR), absR, np.inf)
        ax.contourf(X, Y, absR, levels=[0.0, 1.0], colors=[color], alpha=0.2)
        ax.contour(X, Y, absR, levels=[1.0], colors=[color], linewidths=1.5)
        handles.append(Patch(facecolor=color, edgecolor=color, alpha=0.5, label=name))
    ax.axhline(0.0, color="k", lw=0.6)
    ax.axvline(0.0, color="k", lw=0.6)
    ax.set_xlim(*re)
    ax.set_ylim(*im)
    ax.set_aspect("equal")
    ax.set_xlabel(r"Re $h\lambda$")
    ax.set_ylabel(r"Im $h\lambda$")
    ax.set_title(r"stability regions $|R(h\lambda)| \leq 1$")
    ax.legend(handles=handles, loc="upper left", fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def error_slopes(study: Mapping[str, Any], n_fit: int = 6) -> dict[str, Any]:
    """Slopes of the truncation and round-off branches of a step-size study.

    The global error behaves as E = C1 h^p + C2 / h (LN section 7.5): on a
    log-log plot the truncation branch (large h) has slope p and the round-off
    branch (small h) a negative slope.

    Parameters
    ----------
    study : dict
        Output of :func:`mbint.errors.step_size_study`; its ``error`` is used
        when present, otherwise the successive differences ``D``.
    n_fit : int
        Number of points of the truncation branch used for the fit: those with
        the smallest h whose error is still 100 times above the minimum, or
        simply the finest ones when the error still falls at the smallest h.

    Returns
    -------
    dict
        ``truncation``: fitted slope p of the truncation branch.
        ``roundoff``: fitted slope of the round-off branch, the points from
        the first one (below the truncation fit) whose error exceeds twice the
        extrapolated truncation line; NaN when the minimum lies at the
        smallest h (round-off not reached) or the branch has < 3 points.
        ``h_min``, ``e_min``: step size and value of the smallest error.
        ``h_fit``, ``e_fit``: the finest point of the truncation fit.
        ``h_floor``, ``e_floor``: the largest h of the round-off branch and
        the geometric mean of its errors.  ``n_roundoff``: its point count.
    """
    h = np.asarray(study["h"], dtype=float)
    e = np.asarray(study["error"] if "error" in study else study["D"], dtype=float)
    ok = np.isfinite(e) & (e > 0)
    h, e = h[ok], e[ok]
    out = {"truncation": np.nan, "roundoff": np.nan, "h_min": np.nan, "e_min": np.nan,
           "h_fit": np.nan, "e_fit": np.nan, "h_floor": np.nan, "e_floor": np.nan,
           "n_roundoff": 0}
    if h.size < 2:
        return out
    order = np.argsort(h)[::-1]          # from coarse to fine
    h, e = h[order], e[order]
    i_min = int(np.argmin(e))
    out["h_min"], out["e_min"] = float(h[i_min]), float(e[i_min])
    if i_min == h.size - 1:              # still falling at the finest h: all truncation
        trunc = np.arange(h.size)
    else:
        trunc = np.nonzero((np.arange(h.size) <= i_min) & (e >= 100.0 * e[i_min]))[0]
    trunc = trunc[-int(n_fit):]
    if trunc.size >= 2:
        out["truncation"] = float(np.polyfit(np.log(h[trunc]), np.log(e[trunc]), 1)[0])
        out["h_fit"], out["e_fit"] = float(h[trunc[-1]]), float(e[trunc[-1]])
    if i_min < h.size - 1 and np.isfinite(out["truncation"]):
        # the round-off branch starts where the error first exceeds twice the
        # extrapolated truncation line C1 h^p
        line = out["e_fit"] * (h / out["h_fit"]) ** out["truncation"]
        above = np.nonzero((h < out["h_fit"]) & (e > 2.0 * line))[0]
        ro = np.arange(above[0], h.size) if above.size else np.arange(0)
        if ro.size >= 3:
            out["roundoff"] = float(np.polyfit(np.log(h[ro]), np.log(e[ro]), 1)[0])
            out["n_roundoff"] = int(ro.size)
            out["h_floor"] = float(h[ro[0]])
            out["e_floor"] = float(np.exp(np.mean(np.log(e[ro]))))
    return out


def _reference_line(ax, h_range, h0, e0, slope, color, label, e_floor=0.0):
    """Dotted line e0 (h / h0)^slope over ``h_range``, cut where it drops below e_floor."""
    hh = np.geomspace(np.min(h_range), np.max(h_range), 50)
    ee = e0 * (hh / h0) ** slope
    keep = ee >= e_floor
    if np.count_nonzero(keep) >= 2:
        ax.loglog(hh[keep], ee[keep], ":", color=color, lw=1.2, label=label)


def plot_error_vs_step(study_or_list: Any, labels: str | Sequence[str] | None = None,
                       ax: Axes | None = None, orders: Sequence[float] | None = None) -> Figure:
    """Global error and successive differences against step size (log-log).

    Reproduces LN figures 7.11-7.14: the true error (when the study has an
    exact value) as solid lines with circles, the successive differences
    D_n = |y_n - y_{n-1}| (LN section 7.6) as dashed lines with crosses, and
    dotted reference lines of slope p (truncation, E = C1 h^p) through the
    truncation branch and of slope -1 (round-off, E = C2 / h) from the start
    of the round-off floor.

    Parameters
    ----------
    study_or_list : dict or sequence of dict
        Outputs of :func:`mbint.errors.step_size_study`.
    labels : str or sequence of str, optional
        One label per study (default ``"study i"``).
    ax : matplotlib.axes.Axes, optional
    orders : sequence of float, optional
        Slopes of the truncation reference lines, one per study (default: the
        fitted slope of :func:`error_slopes`, rounded to an integer).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _axes(ax)
    studies = _as_list(study_or_list, lambda s: isinstance(s, Mapping))
    labels = _labels(labels, studies, lambda i, _: f"study {i}")
    if orders is not None and len(orders) != len(studies):
        raise ValueError(f"orders: expected {len(studies)} values, got {len(orders)}.")
    for k, (s, lab) in enumerate(zip(studies, labels)):
        color = f"C{k % 10}"
        h = np.asarray(s["h"], dtype=float)
        if "error" in s:
            ax.loglog(h, np.asarray(s["error"], dtype=float), "o-", color=color, ms=4, lw=1.2,
                      label=f"{lab}: error")
        ax.loglog(h, np.asarray(s["D"], dtype=float), "x--", color=color, ms=5, lw=1.0,
                  label=f"{lab}: D")
        sl = error_slopes(s)
        p = orders[k] if orders is not None else (
            round(sl["truncation"]) if np.isfinite(sl["truncation"]) else None)
        if p is not None and np.isfinite(sl["h_fit"]):
            _reference_line(ax, h, sl["h_fit"], sl["e_fit"], p, color, f"slope {p:g}",
                            e_floor=0.1 * sl["e_min"])
        if np.isfinite(sl["roundoff"]):
            _reference_line(ax, h[h <= sl["h_floor"]], sl["h_floor"], sl["e_floor"], -1.0, color,
                            "slope -1 (C2/h)")
    ax.set_xlabel("step size h [s]")
    ax.set_ylabel("global error at t_end")
    ax.legend(loc="best", fontsize="x-small", ncol=2)
    ax.grid(True, which="both", alpha=0.3)
    return fig


def plot_work_precision(rows: Sequence[Mapping[str, Any]], ax: Axes | None = None,
                        x: str = "nfev") -> Figure:
    """Error against cost for benchmark runs, one line per method.

    Parameters
    ----------
    rows : sequence of mapping
        Each with keys ``"method"``, ``"error"`` and the cost key ``x``
        (``"nfev"`` or ``"time"``, in seconds).  Points of one method are
        joined in order of increasing cost.
    ax : matplotlib.axes.Axes, optional
    x : {"nfev", "time"}
        The cost on the horizontal axis.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if x not in ("nfev", "time"):
        raise ValueError(f"x must be 'nfev' or 'time', got {x!r}.")
    fig, ax = _axes(ax)
    by_method: dict[str, Any] = {}
    for r in rows:
        by_method.setdefault(str(r["method"]), []).append((float(r[x]), float(r["error"])))
    for k, (name, pts) in enumerate(by_method.items()):
        pts = sorted(p for p in pts if p[0] > 0 and np.isfinite(p[1]) and p[1] > 0)
        if not pts:
            continue
        c, e = np.array(pts).T
        ax.loglog(c, e, "o-", color=f"C{k % 10}", ms=4, lw=1.2, label=name)
    ax.set_xlabel("function evaluations" if x == "nfev" else "time [s]")
    ax.set_ylabel("error")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    return fig


# ---------------------------------------------------------------- trajectories
# the pictures of mbint.Trajectory (its plot, plot_energy and plot_violation delegate here)
def _row_units(traj, quantity):
    """Unit of every row of q/qd/qdd/lam ("" when unknown)."""
    m = traj.model
    if quantity == "lam":
        ku = list(getattr(m, "constraint_units", [""] * m.nc))
        return [{"m": "N", "rad": "N m", "m^2": "N/m"}.get(u, "") for u in ku]
    cu = list(getattr(m, "coordinate_units", [""] * m.nq))
    suffix = {"q": "", "qd": "/s", "qdd": "/s^2"}[quantity]
    return [u + suffix if u else "" for u in cu]


def plot_trajectory(traj: Trajectory, quantity: str = "q",
                    bodies: Sequence[str | int] | None = None, coords: Sequence[str] | None = None,
                    ax: Axes | None = None) -> Figure:
    """The body of :meth:`mbint.Trajectory.plot`: ``quantity`` (coordinates, velocities,
    multipliers or a named output) of ``traj`` against time (see there).  Curves of
    different units go to panels of their own (one axis per unit, a shared time axis)
    unless ``ax`` is given, where they share it with the units in the legend."""
    m = traj.model
    n = len(traj.t)
    curves = []  # (values, label, unit)
    if quantity in ("x", "y", "theta") or (quantity in ("z", "e0", "e1", "e2", "e3")
                                            and m.kind == "spatial"):
        if m.kind not in ("planar", "spatial"):
            raise ValueError(f"plot: {quantity!r} needs a PlanarModel; use 'q' with coords.")
        bl = m.bodies if bodies is None else [m.body(b) for b in bodies]
        unit = {"theta": "rad", "x": "m", "y": "m", "z": "m"}.get(quantity, "")
        curves = [(traj.coordinate(b, quantity), f"{quantity} {b.name}", unit) for b in bl]
    elif quantity in ("q", "qd", "qdd", "lam"):
        data = getattr(traj, quantity)
        names = m.constraint_names if quantity == "lam" else m.coordinate_names
        units = _row_units(traj, quantity)
        if coords is None:
            idx = list(range(data.shape[0]))
        else:
            idx = [names.index(c) if isinstance(c, str) else int(c) for c in coords]
        curves = [(data[i], f"{quantity} {names[i]}", units[i]) for i in idx]
    else:
        v = traj.output(quantity)
        unit = (getattr(m, "output_units", None) or {}).get(quantity, "")
        if v.ndim == 1:
            curves = [(v, quantity, unit)]
        else:
            v = v.reshape(-1, n)
            curves = [(v[k], f"{quantity}[{k}]", unit) for k in range(v.shape[0])]
    units = sorted({u for _, _, u in curves if u})
    symbol = {"lam": "multipliers lambda", "q": "q", "qd": "dq/dt",
              "qdd": "d2q/dt2"}.get(quantity, quantity)
    if ax is None and len(units) > 1:  # m and rad never on one axis
        import matplotlib.pyplot as plt

        groups = units + ([""] if any(not u for _, _, u in curves) else [])
        fig, axes = plt.subplots(len(groups), 1, sharex=True, layout="constrained",
                                 figsize=(6.4, 2.4 + 1.8 * len(groups)),
                                 FigureClass=_figure_class())
        for a, u in zip(axes, groups):
            mine = [(k, c) for k, c in enumerate(curves) if c[2] == u]
            for k, (v, label, _) in mine:
                a.plot(traj.t, v, label=label, **line_style(k, n))
            a.set_ylabel(f"{symbol} [{u}]" if u else symbol)
            a.legend(fontsize="small")
            a.grid(True, alpha=0.3)
        axes[0].set_title(f"{m.name}: {traj.method}")
        axes[-1].set_xlabel("t [s]")
        return fig
    fig, ax = _axes(ax)
    mixed = len(units) > 1
    for k, (v, label, unit) in enumerate(curves):
        ax.plot(traj.t, v, label=f"{label} [{unit}]" if mixed and unit else label,
                **line_style(k, n))
    ax.set_ylabel(f"{symbol} [{', '.join(units)}]" if units else symbol)
    ax.set_xlabel("t [s]")
    ax.set_title(f"{m.name}: {traj.method}")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def plot_energy(traj: Trajectory, ax: Axes | None = None, relative: bool = False) -> Figure:
    """The body of :meth:`mbint.Trajectory.plot_energy`: the energies of ``traj`` (and
    the dissipated work, with dampers) against time (see there)."""
    fig, ax = _axes(ax)
    E = traj.energy()
    W = traj.dissipated_work()
    n = len(traj.t)
    if relative:
        if W is None:
            ax.plot(traj.t, E.total - E.total[0], label="E - E(t0)", **line_style(0, n))
            ax.set_ylabel("total energy drift E - E(t0) [J]")
        else:
            ax.plot(traj.t, E.total + W - E.total[0],
                    label="E + W_dissipated - E(t0)", **line_style(0, n))
            ax.set_ylabel("drift of E + dissipated work [J]")
    else:
        curves = [(E.kinetic, "kinetic T"), (E.potential, "potential V"),
                  (E.total, "total E = T + V")]
        if W is not None:
            curves += [(W, "dissipated work W (dampers)"),
                       (E.total + W, "E + W (constant without actuators)")]
        for k, (v, label) in enumerate(curves):
            ax.plot(traj.t, v, label=label, **line_style(k, n))
        ax.set_ylabel("energy [J]")
    ax.set_xlabel("t [s]")
    ax.set_title(f"{traj.model.name}: energy ({traj.method})")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def violation_lines(ax: Axes, traj: Trajectory,
                    levels: Sequence[str] = ("position", "velocity", "acceleration"),
                    prefix: str = "", style: Callable[..., dict[str, Any]] | None = None) -> bool:
    """Draw the constraint violation of ``traj`` at ``levels`` on ``ax`` (log scale
    wanted): exact zeros are left out (a log axis cannot show them; the legend counts
    them) instead of being clipped to the smallest float; units in the labels when the
    model's constraint rows share one.  ``style(k)`` gives the line style of level k
    (default :func:`line_style`).  Returns whether any curve was drawn."""
    V = traj.violation()
    n = len(traj.t)
    ku = sorted({u for u in getattr(traj.model, "constraint_units", []) if u})
    unit = ", ".join(ku)
    suffix = {"position": "", "velocity": "/s", "acceleration": "/s^2"}
    style = style or (lambda k: line_style(k, n))
    drawn = False
    for k, name in enumerate(levels):
        v = np.asarray(getattr(V, name), float)
        zero = v == 0
        label = prefix + name + (f" [{unit}{suffix[name]}]" if unit and len(ku) == 1 else "")
        if zero.all():
            ax.plot([], [], label=f"{label}: exactly 0 everywhere", **style(k))
            continue
        if zero.any():
            label += f" (exactly 0 at {int(zero.sum())} of {n} points)"
        ax.plot(traj.t, np.where(zero, np.nan, v), label=label, **style(k))
        drawn = True
    return drawn


def plot_violation(traj: Trajectory, ax: Axes | None = None) -> Figure:
    """The body of :meth:`mbint.Trajectory.plot_violation`: the constraint violation of
    ``traj`` on a log axis (see there)."""
    fig, ax = _axes(ax)
    ku = sorted({u for u in getattr(traj.model, "constraint_units", []) if u})
    drawn = violation_lines(ax, traj)
    if drawn:
        ax.set_yscale("log")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("max |residual|" + (" (units in the legend)" if len(ku) == 1 else ""))
    ax.set_title(f"{traj.model.name}: constraint violation ({traj.method})")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3, which="both")
    return fig
