"""Demo of the singular-perturbation scheme (SP paper: Gil, Sanfelice, Nikravesh,
DETC2013): figures in the style of the paper's Figs 2-3, 4-5, 7 and 8 and a summary
table under ``<out>/sp/``.

:func:`section_sp` has the signature of the sections of ``python -m mbint demo``
(``section(out, summary, quick)``).  It writes

- ``sp/fig2_3_stability.png``: the regions rho(M) <= 1 of eqs 55-58 in the plane of
  xi = h lambda_s, for alpha = 10, 100, 1000 (beta = 0.1) and beta = 0, 0.1, 0.3, 0.5
  (alpha = 100), with RK4's region;
- ``sp/fig4_5_local_error.png``: local error of one step on the test system (eq 50,
  lambda_s = -1 + i, x(0) = z(0) = 1) against h, with RK4's;
- ``sp/fig7_8_pendulum.png``: the pendulum with a particle at h = 0.005: the bar's
  angle by the scheme, RK4 (diverging) and dopri5 (ode45); the energy variation of
  eq 68 by the scheme and dopri5;
- ``sp/sp.md``: the summary table (also added to the demo's summary).

Summary rows (section ``"sp"``): ``real_axis_limit`` per (alpha, beta);
``local_error_slope`` (non-stiff and stiff h ranges); per pendulum run ``status``,
``nsteps``, ``energy_error`` [J], ``theta_error`` [rad] (against dop853 at 1e-13),
``time_s``.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from .. import models, stability
from ..ivp import solve_ivp
from ..mbs.simulate import simulate
from ..multirate import propose_split

__all__ = ["section_sp"]

LS = -1.0 + 1.0j        # lambda_s of SP eq 62
SPAN = (0.0, 5.0)
FAST = ["particle.x", "particle.y"]


def _system(alpha, beta):
    lf = alpha * LS
    return np.array([[LS, beta * LS], [beta * lf, lf]])


def _local_errors(alpha, beta, hs):
    from scipy.linalg import expm

    A = _system(alpha, beta)
    sp, rk = [], []
    for h in hs:
        ye = expm(A * h) @ [1.0, 1.0]
        r = solve_ivp(lambda t, y: A @ y, (0.0, h), np.array([1.0, 1.0], complex),
                      method="singular_perturbation", fast=[1], h=h, jac=lambda t, y: A)
        sp.append(abs(r.y[0, -1] - ye[0]))
        Z = A * h
        R = np.eye(2) + Z + Z @ Z / 2 + Z @ Z @ Z / 6 + Z @ Z @ Z @ Z / 24
        rk.append(abs((R @ [1.0, 1.0])[0] - ye[0]))
    return np.array(sp), np.array(rk)


def _save(fig, path, progress):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100)
    plt.close(fig)
    progress(f"wrote {path}")


def section_sp(out, summary, quick, progress=None):
    """The SP paper's Figs 2-5, 7 and 8 and a summary table under ``out/sp``.

    Parameters
    ----------
    out : pathlib.Path or str
        Demo output directory.
    summary : object
        Collector with ``add(section, method, quantity, value, h=None, rtol=None)``,
        ``text(*lines)`` and ``table(header, rows)``.
    quick : bool
        Coarser grids and fewer timing repetitions.
    progress : callable, optional
        ``progress(message)``; default prints.

    Returns
    -------
    dict
        ``rows`` (the pendulum runs), ``limits`` ({(alpha, beta): stability interval}),
        ``slopes`` ({(alpha, beta): (non-stiff, stiff)}), ``files``.
    """
    if progress is None:
        def progress(msg):
            print(f"[mbint demo] {msg}", flush=True)
    out = Path(out) / "sp"
    out.mkdir(parents=True, exist_ok=True)
    files = []
    limits, p = _fig2_3_stability(out, quick, summary, progress)
    files.append(p)
    slopes, p = _fig4_5_local_error(out, quick, summary, progress)
    files.append(p)
    m = models.pendulum_particle()
    rows, res = _pendulum_runs(m, quick, summary)
    files.append(_fig7_8_pendulum(out, m, res, progress))
    _write_summary(out, summary, m, rows, limits, slopes)
    return dict(rows=rows, limits=limits, slopes=slopes, files=files)


def _fig2_3_stability(out, quick, summary, progress):
    """Figs 2 and 3: the stability regions; the stability intervals on the negative real
    axis ({(alpha, beta): limit}) and the figure's path."""
    import matplotlib.pyplot as plt

    n = 121 if quick else 301
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    X, Y, Rk = stability.region("rk4", re=(-4, 1), im=(0, 4), n=n)
    limits = {}
    for ax, params, title in ((axes[0], [(10, 0.1), (100, 0.1), (1000, 0.1)], "Fig 2: beta = 0.1"),
                              (axes[1], [(100, 0.0), (100, 0.1), (100, 0.3), (100, 0.5)],
                               "Fig 3: alpha = 100")):
        ax.contour(X, Y, Rk, levels=[1], colors="k", linestyles=":")
        ax.plot([], [], "k:", label="RK4")
        for (alpha, beta), c in zip(params, ("C0", "C1", "C2", "C3")):
            Xs, Ys, rho = stability.sp_region(alpha, beta, re=(-4, 1), im=(0, 4), n=n)
            ax.contour(Xs, Ys, rho, levels=[1], colors=c)
            ax.plot([], [], c, label=f"alpha = {alpha:g}, beta = {beta:g}")
            limits[(alpha, beta)] = stability.sp_real_axis_limit(alpha, beta)
        ax.set(title=title, xlabel="Re(h lambda_s)")
        ax.set_aspect("equal")
        ax.legend(loc="upper left", fontsize=8)
    axes[0].set_ylabel("Im(h lambda_s)")
    p = out / "fig2_3_stability.png"
    _save(fig, p, progress)
    for (alpha, beta), v in limits.items():
        summary.add("sp", f"stability/alpha={alpha:g},beta={beta:g}", "real_axis_limit", v)
    return limits, p


def _fig4_5_local_error(out, quick, summary, progress):
    """Figs 4 and 5: the local error against h; the slopes ({(alpha, beta): (non-stiff,
    stiff)}) and the figure's path."""
    import matplotlib.pyplot as plt

    hs = np.logspace(-4, 0, 13 if quick else 33)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    slopes = {}
    for ax, params, title in ((axes[0], [(10, 0.1), (100, 0.1), (1000, 0.1)], "Fig 4: beta = 0.1"),
                              (axes[1], [(100, 0.01), (100, 0.1), (100, 0.5)],
                               "Fig 5: alpha = 100")):
        for (alpha, beta), c in zip(params, ("C0", "C1", "C2")):
            sp, rk = _local_errors(alpha, beta, hs)
            ax.loglog(hs, sp, c, label=f"SP, alpha = {alpha:g}, beta = {beta:g}")
            ax.loglog(hs, np.maximum(rk, 1e-18), c + ":", label="RK4")
            lf = abs(alpha * LS)
            small, stiff = hs * lf < 0.05, (hs * lf > 5) & (hs < 0.05)
            fit = [float(np.polyfit(np.log(hs[k]), np.log(sp[k]), 1)[0]) if k.sum() > 1
                   else float("nan") for k in (small, stiff)]
            slopes[(alpha, beta)] = tuple(fit)
        ax.set(title=title, xlabel="h", ylim=(1e-16, 1e2))
        ax.legend(fontsize=7)
    axes[0].set_ylabel("local error of x")
    p = out / "fig4_5_local_error.png"
    _save(fig, p, progress)
    for (alpha, beta), (a, b) in slopes.items():
        for label, v in (("local_error_slope_nonstiff", a), ("local_error_slope_stiff", b)):
            if math.isfinite(v):
                summary.add("sp", f"accuracy/alpha={alpha:g},beta={beta:g}", label, v)
    return slopes, p


def _pendulum_runs(m, quick, summary):
    """The pendulum with a particle by the scheme, RK4 and dopri5 against dop853 at 1e-13:
    the rows of the table and the trajectories by label."""
    ref = simulate(m, SPAN, method="dop853", rtol=1e-13, atol=1e-13, dense_output=True)
    runs = {"singular_perturbation h=0.005": dict(method="singular_perturbation", h=0.005,
                                                  fast=FAST),
            "singular_perturbation h=0.02": dict(method="singular_perturbation", h=0.02,
                                                 fast=FAST),
            "rk4 h=0.005": dict(method="rk4", h=0.005),
            "dopri5 (ode45)": dict(method="dopri5", rtol=1e-3, atol=1e-6)}
    reps = 2 if quick else 7
    rows, res = [], {}
    for label, kw in runs.items():
        best = math.inf
        for _ in range(reps):
            t0 = time.perf_counter()
            tr = simulate(m, SPAN, **kw)
            best = min(best, time.perf_counter() - t0)
        res[label] = tr
        with np.errstate(invalid="ignore", over="ignore"):  # rk4 diverges by design
            E = m.reference_energy(tr.q, tr.qd)
            dE = float(np.nanmax(np.abs(E - E[0])))
            th = float(np.nanmax(np.abs(tr.q[2] - ref.sol(tr.t)[2])))
        row = dict(method=label, status=int(tr.status), nsteps=int(tr.stats["nsteps"]),
                   t_end=float(tr.t[-1]), energy_error=dE, theta_error=th, time_s=best)
        rows.append(row)
        for q in ("status", "nsteps", "energy_error", "theta_error", "time_s"):
            summary.add("sp", f"pendulum_particle/{label}", q, row[q], h=kw.get("h"),
                        rtol=kw.get("rtol"))
    return rows, res


def _fig7_8_pendulum(out, m, res, progress):
    """Figs 7 and 8: the bar's angle and the energy variation of the runs ``res``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for label, tr in res.items():
        ok = np.all(np.isfinite(tr.q), axis=0) & (np.abs(tr.q[2]) < 10)
        axes[0].plot(tr.t[ok], tr.q[2, ok], label=label)
        if tr.success:
            E = m.reference_energy(tr.q, tr.qd)
            axes[1].semilogy(tr.t, np.maximum(np.abs(E - E[0]), 1e-16), label=label)
    axes[0].set(xlabel="t [s]", ylabel="theta [rad]", title="Fig 7: pendulum with a particle")
    axes[1].set(xlabel="t [s]", ylabel="|E - E(0)| [J]", title="Fig 8: energy variation (eq 68)")
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=8)
    p = out / "fig7_8_pendulum.png"
    _save(fig, p, progress)
    return p


def _write_summary(out, summary, m, rows, limits, slopes):
    """``sp/sp.md`` and the demo's summary: intervals, slopes, the split, the runs."""
    proposal = propose_split(m)
    t_d5 = next(r["time_s"] for r in rows if r["method"] == "dopri5 (ode45)")
    table = [(r["method"], r["status"], r["nsteps"], f"{r['t_end']:.3f}",
              f"{r['energy_error']:.2e}", f"{r['theta_error']:.1e}",
              f"{r['time_s'] * 1e3:.2f}", f"{r['time_s'] / t_d5:.2f}") for r in rows]
    header = ("run", "status", "steps", "t_end [s]", "max |dE| [J]", "theta error [rad]",
              "time [ms]", "time / dopri5")
    lines = ["# The singular-perturbation scheme (SP paper)", "",
             "Stability interval on the negative real axis of h lambda_s: " + ", ".join(
                 f"alpha {a:g} beta {b:g}: {v:.3f}" for (a, b), v in limits.items())
             + " (RK4: 2.785).", "",
             "Local-error slopes (non-stiff, stiff): " + ", ".join(
                 f"alpha {a:g} beta {b:g}: {s[0]:.2f}, {s[1]:.2f}" for (a, b), s in slopes.items())
             + ".", "",
             f"Proposed split of the pendulum with a particle: {', '.join(proposal.names)} "
             f"(time-scale ratio {proposal.ratio:.3g}).", ""]
    md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in table]
    (out / "sp.md").write_text("\n".join(lines + md) + "\n")
    summary.text("## The singular-perturbation scheme (SP paper)", "", *lines)
    summary.table(header, table)
