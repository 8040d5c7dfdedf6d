"""The lecture notes' sections of the demo (``python -m mbint demo``).

They reproduce the examples of the lecture notes (Schwab & Delhaes, chapter 7)
and write, under the output directory:

- ``msd_solution.png``, ``msd_step_sizes.png``: the mass-spring-damper of LN
  eq 7.7 by every explicit method, against its exact solution;
- ``pendulum_energy.png``: the undamped pendulum, where forward Euler gains
  energy and RK4, DOPRI5 and the Nystrom scheme keep it (LN figure 7.5);
- ``stability_regions.png``: |R(h lambda)| <= 1 for Euler, Heun, RK4 and the
  Nystrom scheme (LN figures 7.4, 7.6, 7.7, 7.9);
- ``error_vs_step.png``, ``richardson.png``: global error against step size,
  truncation and round-off (LN figures 7.11-7.14), and the Richardson
  estimate (LN eq 7.9) against the true error;
- ``work_precision.png``: error against function evaluations;
and their rows of ``summary.md`` and ``summary.csv`` (:mod:`mbint.demo`).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from .. import errors, problems, stability
from ..ivp import solve_ivp
from ..methods import method_info
from ._common import progress as _progress

MSD_T = 5.0                      # mass-spring-damper interval (0, MSD_T), from rest
PENDULUM_T = 20.0                # pendulum interval, theta0 = 1 rad, theta0' = 0
PENDULUM_Y0 = (1.0, 0.0)
ADAPTIVE_RTOL, ADAPTIVE_ATOL = 1e-6, 1e-9
STABILITY_METHODS = ("euler", "heun", "rk4", "nystrom_midpoint")
STUDY_METHODS = ("heun", "rk4")


def _e(x):
    """Format a number for the markdown tables."""
    return "nan" if not np.isfinite(x) else f"{x:.3e}"


def _setting(h, rtol):
    return f"h = {h:g}" if h is not None else f"rtol = {rtol:g}, atol = {ADAPTIVE_ATOL:g}"


def _save(fig, path):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    _progress(f"wrote {path}")


# ---------------------------------------------------------------------------
# (a) mass-spring-damper, LN eq 7.7
# ---------------------------------------------------------------------------

def _msd_runs(quick):
    runs = [("euler", 0.01, None), ("euler", 0.001, None), ("heun", 0.01, None),
            ("rk4", 0.01, None), ("nystrom_midpoint", 0.01, None),
            ("rk23", None, ADAPTIVE_RTOL), ("dopri5", None, ADAPTIVE_RTOL),
            ("adams", None, ADAPTIVE_RTOL)]
    if quick:
        runs.remove(("euler", 0.001, None))
    return runs


def section_msd(out, summary, quick):
    """Mass-spring-damper (LN eq 7.7) by every explicit method; exact solution known."""
    import matplotlib.pyplot as plt

    from ..plot import plot_solution, plot_step_sizes

    exact = problems.mass_spring_damper_exact
    t_grid = np.linspace(0.0, MSD_T, 2001)
    # eigenvalue of LN eq 7.11/7.12 with omega0^2 = k/m, 2 beta omega0 = c/m
    w0 = math.sqrt(problems.MSD_K / problems.MSD_M)
    a = problems.MSD_C / (2.0 * problems.MSD_M)
    lam = complex(-a, math.sqrt(w0 * w0 - a * a))
    runs = _msd_runs(quick)
    results, table, amps = [], [], {}
    for name, h, rtol in runs:
        kw = {"h": h} if h is not None else {"rtol": rtol, "atol": ADAPTIVE_ATOL}
        t0 = time.perf_counter()
        res = solve_ivp(problems.mass_spring_damper, (0.0, MSD_T), [0.0, 0.0], method=name,
                        dense_output=True, **kw)
        elapsed = time.perf_counter() - t0
        if not res.success:
            raise RuntimeError(f"mass-spring-damper, {name}: {res.message}")
        err = float(np.max(np.abs(res.y - exact(res.t))))
        err_dense = float(np.max(np.abs(res.sol(t_grid) - exact(t_grid))))
        results.append((name, h, rtol, res))
        for q, v in (("nfev", res.nfev), ("nsteps", res.nsteps), ("nreject", res.nreject),
                     ("max_error", err), ("max_error_dense", err_dense), ("time_s", elapsed)):
            summary.add("msd", name, q, v, h=h, rtol=rtol)
        amp = "-"
        if h is not None:
            R = abs(complex(stability.amplification(name, h * lam)))
            summary.add("msd", name, "abs_R_h_lambda", R, h=h)
            amps[(name, h)] = R
            amp = f"{R:.6f} (exact {math.exp(h * lam.real):.6f})"
        table.append((name, _setting(h, rtol), res.nfev, res.nsteps, res.nreject, _e(err),
                      _e(err_dense), amp, f"{1e3 * elapsed:.1f}"))
        _progress(f"(a) mass-spring-damper: {name:16s} {_setting(h, rtol):24s} "
                  f"nfev = {res.nfev:6d}  max error = {err:.2e}")

    summary.text("## (a) Mass-spring-damper (LN eq 7.7)", "",
                 f"m = {problems.MSD_M:g} kg, k = {problems.MSD_K:g} N/m, "
                 f"c = {problems.MSD_C:g} N s/m, g = {problems.G:g} m/s^2; from rest, "
                 f"t in (0, {MSD_T:g}) s. Errors are max over both components against the "
                 "exact solution, at the steps and of the dense output on 2001 points. "
                 f"|R(h lambda)| is the amplification per step for the eigenvalue lambda = "
                 f"{lam.real:g} + {lam.imag:.4f} i (LN eq 7.12) against the exact decay "
                 f"exp(h Re lambda) = {math.exp(0.01 * lam.real):.6f} at h = 0.01, where forward "
                 f"Euler has |R| = {amps[('euler', 0.01)]:.6f}: its oscillation hardly decays.", "")
    summary.table(("method", "h or tolerance", "nfev", "steps", "rejected", "max error (steps)",
                   "max error (dense)", "|R(h lambda)|", "time [ms]"), table)

    ncol = 2
    nrow = math.ceil(len(results) / ncol)
    fig, axs = plt.subplots(nrow, ncol, figsize=(11, 2.4 * nrow), sharex=True, sharey=True,
                            layout="constrained")
    axs = np.atleast_1d(axs).ravel()
    for k, (ax, (name, h, rtol, res)) in enumerate(zip(axs, results)):
        ax.plot(t_grid, exact(t_grid)[0], "--", color="0.4", lw=1.0, label="exact")
        plot_solution(res, components=[0], labels=[f"{name}, {_setting(h, rtol)}"], ax=ax)
        ax.set_ylabel("x [m]")
        ax.set_xlabel("t [s]" if k >= len(results) - ncol else "")
    for ax in axs[len(results):]:
        ax.set_visible(False)
    fig.suptitle("mass-spring-damper (LN eq 7.7): x(t); markers at the steps, line = dense output")
    _save(fig, out / "msd_solution.png")

    adaptive = [(f"{n} (rtol {rtol:g})", r) for n, h, rtol, r in results if h is None]
    fig = plot_step_sizes([r for _, r in adaptive], labels=[lab for lab, _ in adaptive])
    fig.axes[0].set_title("mass-spring-damper: accepted step sizes")
    _save(fig, out / "msd_step_sizes.png")
    summary.text("![solution](msd_solution.png)", "", "![step sizes](msd_step_sizes.png)", "")


# ---------------------------------------------------------------------------
# (b) undamped pendulum: Euler gains energy (LN figure 7.5)
# ---------------------------------------------------------------------------

def section_pendulum(out, summary, quick):
    """Undamped pendulum from theta0 = 1 rad: energy drift per method."""
    import matplotlib.pyplot as plt

    from ..plot import plot_solution

    runs = [("euler", 0.01, None), ("heun", 0.01, None), ("rk4", 0.01, None),
            ("dopri5", None, ADAPTIVE_RTOL), ("nystrom_midpoint", 0.01, None)]
    E = problems.pendulum_energy
    E0 = float(E(PENDULUM_Y0))
    results, table = [], []
    for name, h, rtol in runs:
        kw = {"h": h} if h is not None else {"rtol": rtol, "atol": ADAPTIVE_ATOL}
        res = solve_ivp(problems.pendulum, (0.0, PENDULUM_T), PENDULUM_Y0, method=name, **kw)
        if not res.success:
            raise RuntimeError(f"pendulum, {name}: {res.message}")
        rel = E(res.y) / E0 - 1.0
        results.append((name, h, rtol, res, rel))
        for q, v in (("nfev", res.nfev), ("nsteps", res.nsteps),
                     ("energy_rel_change_end", rel[-1]),
                     ("energy_rel_change_max", np.max(np.abs(rel)))):
            summary.add("pendulum", name, q, v, h=h, rtol=rtol)
        table.append((name, _setting(h, rtol), res.nfev, f"{rel[-1]:+.3e}",
                      _e(np.max(np.abs(rel))), f"{np.max(np.abs(res.y[0])):.3f}"))
        _progress(f"(b) pendulum: {name:16s} {_setting(h, rtol):24s} "
                  f"E(T)/E0 - 1 = {rel[-1]:+.2e}")

    summary.text("## (b) Undamped pendulum (LN figure 7.5)", "",
                 f"theta'' = -g sin(theta), L = 1 m, theta0 = {PENDULUM_Y0[0]:g} rad, "
                 f"theta0' = 0, t in (0, {PENDULUM_T:g}) s; E = theta'^2/2 + g (1 - cos theta), "
                 f"E0 = {E0:.4f} J/kg.", "")
    summary.table(("method", "h or tolerance", "nfev", "E(T)/E0 - 1", "max |E/E0 - 1|",
                   "max |theta| [rad]"), table)

    fig, axs = plt.subplots(3, 1, figsize=(8, 9), sharex=True, layout="constrained")
    for name, h, rtol, res, rel in results:
        if name in ("euler", "rk4"):
            plot_solution(res, components=[0], labels=[f"{name}, {_setting(h, rtol)}"], ax=axs[0])
        axs[1].plot(res.t, rel + 1.0, lw=1.2, label=f"{name}, {_setting(h, rtol)}")
        axs[2].semilogy(res.t, np.maximum(np.abs(rel), 1e-17), lw=1.0, label=name)
    axs[0].set_ylabel("theta [rad]")
    axs[0].set_xlabel("")
    axs[0].set_title("undamped pendulum: Euler blows up (LN figure 7.5)")
    axs[1].set_ylabel("E(t) / E0")
    axs[1].legend(fontsize="small")
    axs[1].grid(True, alpha=0.3)
    axs[2].set_ylabel("|E(t)/E0 - 1|")
    axs[2].set_ylim(bottom=1e-12)
    axs[2].set_xlabel("t [s]")
    axs[2].legend(fontsize="small", ncol=3)
    axs[2].grid(True, which="both", alpha=0.3)
    _save(fig, out / "pendulum_energy.png")
    summary.text("![pendulum energy](pendulum_energy.png)", "")


# ---------------------------------------------------------------------------
# (c) stability regions (LN figures 7.4, 7.6, 7.7, 7.9)
# ---------------------------------------------------------------------------

def section_stability(out, summary, quick):
    """Stability regions and the imaginary- and real-axis limits."""
    from ..plot import plot_stability_regions

    n = 201 if quick else 401
    table = []
    for name in STABILITY_METHODS:
        b = stability.imaginary_axis_limit(name, n=20001 if quick else 200001)
        a = stability.real_axis_limit(name, n=20001 if quick else 200001)
        summary.add("stability", name, "imag_axis_limit", b)
        summary.add("stability", name, "real_axis_limit", a)
        if b < 0.01:
            note = "|R(i s)| > 1 for every s > 0: unstable for pure oscillation"
        else:
            note = f"h omega0 < {b:.2f}, i.e. h < {b / (2 * math.pi):.2f} T0"
        table.append((name, method_info(name).order, f"{b:.4g}", f"{a:.4g}", note))
        _progress(f"(c) stability: {name:16s} imaginary-axis limit {b:.4f}, "
                  f"real-axis limit {a:.4f}")

    summary.text("## (c) Stability regions (LN figures 7.4, 7.6, 7.7, 7.9)", "",
                 "Imaginary-axis limit: largest b with |R(i s)| <= 1 for 0 <= s <= b (the notes' "
                 "RK4 bound h lambda < 2.8, figure 7.8); real-axis limit likewise on the negative "
                 "real axis. For the Nystrom scheme R is the dominant eigenvalue of its step "
                 "matrix on the oscillator of LN eq 7.13.", "")
    summary.table(("method", "order", "imaginary-axis limit", "real-axis limit", "note"), table)
    fig = plot_stability_regions(list(STABILITY_METHODS), re=(-3.5, 1.0), im=(-3.5, 3.5), n=n)
    _save(fig, out / "stability_regions.png")
    summary.text("![stability regions](stability_regions.png)", "")


# ---------------------------------------------------------------------------
# (d) global error against step size, Richardson (LN sections 7.5-7.6, eq 7.9)
# ---------------------------------------------------------------------------

def section_error_study(out, summary, quick):
    """Truncation versus round-off on the C mass-spring-damper, and Richardson's estimate."""
    import matplotlib.pyplot as plt

    from ..plot import error_slopes, plot_error_vs_step

    fun = problems.c_rhs("mass_spring_damper")
    t_span, y0 = (0.0, 1.0), [0.0, 0.0]
    y_end = problems.mass_spring_damper_exact(t_span[1])
    levels = range(4, 15) if quick else range(4, 21)
    studies, slope_rows = [], []
    for name in STUDY_METHODS:
        t0 = time.perf_counter()
        st = errors.step_size_study(fun, t_span, y0, name, levels=levels, exact=y_end)
        elapsed = time.perf_counter() - t0
        studies.append(st)
        sl = error_slopes(st)
        for h, e, D in zip(st["h"], st["error"], st["D"]):
            summary.add("error_study", name, "error", e, h=h)
            if np.isfinite(D):
                summary.add("error_study", name, "D", D, h=h)
        for q in ("truncation", "roundoff"):
            summary.add("error_study", name, f"slope_{q}", sl[q])
        summary.add("error_study", name, "h_min_error", sl["h_min"])
        summary.add("error_study", name, "min_error", sl["e_min"])
        ro = f"{sl['roundoff']:.2f}" if np.isfinite(sl["roundoff"]) else "not reached"
        slope_rows.append((name, method_info(name).order, f"{sl['truncation']:.3f}", ro,
                           f"{sl['h_min']:.3g}", _e(sl["e_min"]), f"{elapsed:.2f}"))
        _progress(f"(d) error vs h: {name:5s} h = 2^-{levels[0]} .. 2^-{levels[-1]}: truncation "
                  f"slope {sl['truncation']:.2f}, round-off slope {ro}, "
                  f"min error {sl['e_min']:.2e} at h = {sl['h_min']:.2e} ({elapsed:.2f} s)")

    summary.text("## (d) Global error against step size (LN sections 7.5-7.6, figures 7.11-7.14)",
                 "", f"C right-hand side of LN eq 7.7, t in (0, 1), y0 = (0, 0), h = 2^-k for "
                 f"k = {levels[0]}..{levels[-1]}; error = max over components at t = 1 against the "
                 "exact value; D_k = |y_k - y_(k-1)|. The truncation slope is fitted on the six "
                 "finest points still 100x above the minimum error (the six finest when the "
                 "error still falls at the smallest h); the round-off slope on the "
                 "points from the first one whose error exceeds twice the extrapolated "
                 "truncation line. "
                 "The notes' round-off model E = C2/h (slope -1) assumes the round-off of every "
                 "step adds up; the measured RK4 floor stays near 1e-14, about sqrt(N) eps |y| "
                 "for N = 2^20 steps, consistent with round-off errors of random sign.", "")
    summary.table(("method", "order p", "truncation slope", "round-off slope", "h at min error",
                   "min error", "time [s]"), slope_rows)
    header = ["h"] + [f"{n} {q}" for n in STUDY_METHODS for q in ("error", "D")]
    rows = []
    for i, h in enumerate(studies[0]["h"]):
        rows.append([f"{h:.3e}"] + [_e(st[q][i]) for st in studies for q in ("error", "D")])
    summary.table(header, rows)
    fig = plot_error_vs_step(studies, labels=list(STUDY_METHODS))
    fig.axes[0].set_title("global error at t = 1 against step size: truncation and round-off")
    _save(fig, out / "error_vs_step.png")
    summary.text("![error vs step](error_vs_step.png)", "")

    # Richardson, LN eq 7.9: estimate of the error of y_(h/2) from y_h and y_(h/2)
    ks = range(3, 9) if quick else range(3, 13)
    rich_rows = []
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    for j, name in enumerate(STUDY_METHODS):
        hs, est, true = [], [], []
        for k in ks:
            h = 2.0 ** -k
            y_half, e = errors.richardson(fun, t_span, y0, name, h)
            err = float(np.max(np.abs(y_half - y_end)))
            hs.append(h)
            est.append(float(np.max(e)))
            true.append(err)
            summary.add("richardson", name, "estimate", est[-1], h=h)
            summary.add("richardson", name, "true_error", err, h=h)
            rich_rows.append((name, f"2^-{k}", _e(est[-1]), _e(err), f"{est[-1] / err:.3f}"))
        ax.loglog(hs, true, "o-", color=f"C{j}", label=f"{name}: true error of y(h/2)")
        ax.loglog(hs, est, "x--", color=f"C{j}", ms=7, label=f"{name}: estimate (LN eq 7.9)")
        ratio = np.array(est) / np.array(true)
        _progress(f"(d) Richardson: {name:5s} estimate / true error from {ratio.min():.3f} "
                  f"to {ratio.max():.3f}")
    ax.set_xlabel("coarse step h")
    ax.set_ylabel("error at t = 1")
    ax.set_title("Richardson estimate |y(h/2) - y(h)| / (2^p - 1) against the true error")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    _save(fig, out / "richardson.png")
    summary.text("### Richardson estimate (LN eq 7.9)", "",
                 "E = |y(h/2) - y(h)| / (2^p - 1) (max over components) against the true error "
                 "of y(h/2) at t = 1.", "")
    summary.table(("method", "h", "estimate", "true error", "estimate / true"), rich_rows)
    summary.text("![Richardson](richardson.png)", "")


# ---------------------------------------------------------------------------
# (e) work against precision
# ---------------------------------------------------------------------------

def section_work_precision(out, summary, quick):
    """Error at the steps against function evaluations on the C mass-spring-damper."""
    from ..plot import plot_work_precision

    fun = problems.c_rhs("mass_spring_damper")
    exact = problems.mass_spring_damper_exact
    hs = (0.02, 0.01, 0.005) if quick else (0.04, 0.02, 0.01, 0.005, 0.0025, 0.00125)
    rtols = (1e-4, 1e-6, 1e-8) if quick else (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
    cases = [(m, h, None) for m in ("heun", "rk4") for h in hs]
    cases += [(m, None, r) for m in ("rk23", "dopri5", "adams") for r in rtols]
    rows, table = [], []
    for name, h, rtol in cases:
        kw = {"h": h} if h is not None else {"rtol": rtol, "atol": rtol * 1e-3}
        t0 = time.perf_counter()
        res = solve_ivp(fun, (0.0, MSD_T), [0.0, 0.0], method=name, **kw)
        elapsed = time.perf_counter() - t0
        err = float(np.max(np.abs(res.y - exact(res.t))))
        rows.append({"method": name, "nfev": res.nfev, "error": err, "time": elapsed})
        summary.add("work_precision", name, "nfev", res.nfev, h=h, rtol=rtol)
        summary.add("work_precision", name, "max_error", err, h=h, rtol=rtol)
        setting = f"h = {h:g}" if h is not None else f"rtol = {rtol:g}, atol = {rtol * 1e-3:g}"
        table.append((name, setting, res.nfev, _e(err)))
    _progress(f"(e) work-precision: {len(cases)} runs")
    summary.text("## (e) Work against precision", "",
                 f"C mass-spring-damper, t in (0, {MSD_T:g}); max error at the steps.", "")
    summary.table(("method", "h or tolerance", "nfev", "max error"), table)
    fig = plot_work_precision(rows)
    fig.axes[0].set_title("mass-spring-damper: error against function evaluations")
    _save(fig, out / "work_precision.png")
    summary.text("![work precision](work_precision.png)", "")


SECTIONS = (section_msd, section_pendulum, section_stability, section_error_study,
            section_work_precision)
