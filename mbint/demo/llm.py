"""Demo of the Local Linearization Method (LLM paper: Gil, Sanfelice, Nikravesh):
figures in the style of the paper's Figs 2, 5, 6 and 7 and a summary table under
``<out>/llm/``.

:func:`section_llm` has the signature of the sections of ``python -m mbint demo``
(``section(out, summary, quick)``).  It writes

- ``llm/fig2_double_pendulum.png``: the stiff-spring double pendulum (3000 N m/deg)
  by ``llm`` at h = 0.02 and by ``dopri5``, ``bdf``, ``ros2`` (the paper's ode45,
  ode15s, ode23s) at MATLAB's default tolerances: energy variation, constraint
  violation, wall time;
- ``llm/fig5_bouncing_balls.png``: two bouncing balls with penalty contacts: the
  LLM with contact restarts keeps the energy to rounding, ``dopri5`` without
  restarts drifts;
- ``llm/fig6_error_estimate.png``: estimated against exact local error of one LLM
  step of the test ODE of eq 35;
- ``llm/fig7_adaptive.png``: adaptive LLM (EPUS, k = 2, gamma = 0.9) with tol = 0.1
  and 0.05: step sizes and estimated errors;
- ``llm/llm.md``: the summary table (also added to the demo's summary).

Summary rows (section ``"llm"``): per run ``energy_error`` [J] (max over the steps of
|E - E(0)|), ``energy_rel_error`` (bouncing balls: divided by E(0)),
``violation_position``, ``violation_velocity``, ``time_s``, ``nsteps``, ``nfev``;
``estimate_ratio_min`` / ``estimate_ratio_max`` (Fig 6, h in [1e-3, 1e-1]);
``nsteps``, ``nreject``, ``max_estimated_error`` per tolerance (Fig 7).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from .. import models
from ..ivp import solve_ivp
from ..mbs.simulate import simulate

__all__ = ["section_llm"]

MATLAB = dict(rtol=1e-3, atol=1e-6)       # ode45 / ode15s / ode23s defaults
PEND_SPAN = (0.0, 2.0)
BALLS_SPAN = (0.0, 5.0)
BALLS_MAX_STEP = 0.005                    # below the 7 ms ball-ball contact


def _best_time(fn, reps):
    best, out = math.inf, None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _save(fig, path, progress):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100)
    plt.close(fig)
    progress(f"wrote {path}")


# ---------------------------------------------------------------- Fig 2

def _fig2(out, reps, progress):
    import matplotlib.pyplot as plt

    m = models.double_pendulum_stiff_spring()
    runs = {"llm h=0.02": dict(method="llm", h=0.02),
            "dopri5 (ode45)": dict(method="dopri5", **MATLAB),
            "bdf (ode15s)": dict(method="bdf", **MATLAB),
            "ros2 (ode23s)": dict(method="ros2", **MATLAB)}
    res = {}
    for label, kw in runs.items():
        t, tr = _best_time(lambda kw=kw: simulate(m, PEND_SPAN, **kw), reps)
        if not tr.success:
            raise RuntimeError(f"LLM demo, double pendulum, {label}: {tr.message}")
        E, V = tr.energy().total, tr.violation()
        res[label] = dict(traj=tr, time=t, E=E, V=V, dE=float(np.abs(E - E[0]).max()),
                          phi=float(V.position.max()), phid=float(V.velocity.max()))
    progress("llm: Fig 2, double pendulum (" + ", ".join(res) + ")")

    # the LLM's continuous solution (eq 18) between its steps, against a reference
    dense = simulate(m, PEND_SPAN, method="llm", h=0.02, dense_output=True)
    ref = simulate(m, PEND_SPAN, method="dopri5", rtol=1e-10, atol=1e-12, dense_output=True)
    fig, axs = plt.subplots(2, 3, figsize=(16, 8), layout="constrained")
    llm = res["llm h=0.02"]["traj"]
    axs[0, 0].plot(ref.t, np.degrees(ref.output("theta1")), color="0.6", lw=2.5,
                   label="reference (dopri5, rtol 1e-10)")
    axs[0, 0].plot(llm.t, np.degrees(llm.output("theta1")), "C0o", ms=3, label="llm, h = 0.02")
    axs[0, 0].set(xlabel="t [s]", ylabel="theta1 [deg]", title="upper link")
    axs[0, 0].legend(fontsize="small")
    tz = np.linspace(1.0, 1.04, 600)
    qr, _ = ref.state(tz)
    ql, _ = dense.state(tz)
    axs[0, 1].plot(tz, np.degrees(qr[5] - qr[2]), color="0.6", lw=2.5, label="reference")
    axs[0, 1].plot(tz, np.degrees(ql[5] - ql[2]), "C3--", lw=1.2,
                   label="llm continuous solution (eq 18)")
    on = (llm.t >= tz[0]) & (llm.t <= tz[-1])
    axs[0, 1].plot(llm.t[on], np.degrees(llm.output("relative_angle")[on]), "C3o", ms=6,
                   label="llm steps")
    axs[0, 1].set(xlabel="t [s]", ylabel="theta2 - theta1 [deg]",
                  title="spring deflection (240 Hz), zoom")
    axs[0, 1].legend(fontsize="small", loc="lower left")
    for label, r in res.items():
        axs[0, 2].plot(r["traj"].t, r["E"] - r["E"][0], lw=1, label=label)
        axs[1, 0].semilogy(r["traj"].t, np.maximum(r["V"].position, 1e-17), lw=1, label=label)
        axs[1, 1].semilogy(r["traj"].t, np.maximum(r["V"].velocity, 1e-17), lw=1, label=label)
    axs[0, 2].set(xlabel="t [s]", ylabel="E(t) - E(0) [J]", title="total energy variation")
    axs[1, 0].set(xlabel="t [s]", ylabel="max |Phi(q)| [m]",
                  title="constraint violation: positions")
    axs[1, 1].set(xlabel="t [s]", ylabel="max |Phi_q q'| [m/s]",
                  title="constraint violation: velocities")
    labels = list(res)
    axs[1, 2].bar(range(len(labels)), [res[k]["time"] * 1e3 for k in labels],
                  color=[f"C{i}" for i in range(len(labels))])
    axs[1, 2].set_xticks(range(len(labels)), [k.replace(" (", "\n(") for k in labels])
    axs[1, 2].set(ylabel="wall time [ms]", title="computation time (best of runs)")
    for ax in (axs[0, 2], axs[1, 0], axs[1, 1]):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle("LLM paper Fig 2: double pendulum, spring 3000 N m/deg (MATLAB default "
                 "tolerances for dopri5, bdf, ros2)")
    path = out / "fig2_double_pendulum.png"
    _save(fig, path, progress)
    return res, path


# ---------------------------------------------------------------- Fig 5

def _fig5(out, reps, progress):
    import matplotlib.pyplot as plt

    m = models.bouncing_balls()
    E0 = float(m.reference_energy(m.q0, m.qd0))
    runs = {"llm h=0.005 (restarts)": dict(method="llm", h=0.005),
            "dopri5 (ode45)": dict(method="dopri5", max_step=BALLS_MAX_STEP,
                                   contact_switching=False, **MATLAB),
            "ros2 (ode23s)": dict(method="ros2", max_step=BALLS_MAX_STEP,
                                  contact_switching=False, **MATLAB)}
    res = {}
    for label, kw in runs.items():
        t, tr = _best_time(lambda kw=kw: simulate(m, BALLS_SPAN, **kw), reps)
        if not tr.success:
            raise RuntimeError(f"LLM demo, bouncing balls, {label}: {tr.message}")
        E = m.reference_energy(tr.q, tr.qd)
        res[label] = dict(traj=tr, time=t, E=E, dE=float(np.abs(E - E0).max()),
                          rel=float(np.abs(E - E0).max() / E0))
    progress("llm: Fig 5, bouncing balls (" + ", ".join(res) + ")")

    fig, axs = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True, layout="constrained")
    for label, r in res.items():
        tr = r["traj"]
        axs[0].plot(tr.t, tr.output("height1"), lw=1, label=label)
        axs[1].semilogy(tr.t, np.maximum(np.abs(r["E"] - E0) / E0, 1e-17), lw=1, label=label)
    axs[0].set(ylabel="y1 [m]", title="LLM paper Fig 5: position of ball 1")
    axs[1].set(ylabel="|E(t) - E(0)| / E(0)", xlabel="t [s]", ylim=(1e-17, 1.0),
               title="total energy variation (the LLM with contact restarts: rounding)")
    for ax in axs:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    path = out / "fig5_bouncing_balls.png"
    _save(fig, path, progress)
    return res, E0, path


# ---------------------------------------------------------------- Fig 6

def _eq35():
    def f(t, x):
        return np.array([-x[1] / x[2] ** 2, x[0] / x[2] ** 2, 1.0])

    def jac(t, x):
        return np.array([[0.0, -1 / x[2] ** 2, 2 * x[1] / x[2] ** 3],
                         [1 / x[2] ** 2, 0.0, -2 * x[0] / x[2] ** 3],
                         [0.0, 0.0, 0.0]])

    def exact(t):
        return np.array([math.sin(1 / t), math.cos(1 / t), t])

    return f, jac, exact


def _fig6(out, quick, progress):
    import matplotlib.pyplot as plt

    f, jac, exact = _eq35()
    t0 = 1 / math.pi
    hs = np.logspace(-4, math.log10(0.3), 13 if quick else 25)
    est, exa = [], []
    for h in hs:
        # atol = 1, rtol = 1e-12 (~0 next to it): the step's normalized error is the RMS of the
        # estimate l
        r = solve_ivp(f, (t0, t0 + h), exact(t0), method="llm", first_step=h, rtol=1e-12,
                      atol=1.0, jac=jac)
        if not (r.success and r.nsteps == 1):
            raise RuntimeError(f"LLM demo, eq 35, h = {h:g}: {r.message}")
        est.append(r.err_steps[0])
        exa.append(float(np.sqrt(np.mean((exact(t0 + h) - r.y[:, -1]) ** 2))))
    est, exa = np.array(est), np.array(exa)
    ratio = est / exa
    inside = (hs >= 1e-3 * (1 - 1e-12)) & (hs <= 0.1 * (1 + 1e-12))
    progress("llm: Fig 6, local error estimate on eq 35")

    fig, axs = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    axs[0].loglog(hs, exa, "k-", lw=2, label="exact local error")
    axs[0].loglog(hs, est, "C3o", mfc="none", label="estimated (eqs 29-33)")
    axs[0].loglog(hs, exa[0] * (hs / hs[0]) ** 3, ":", color="0.5", label="slope 3")
    axs[0].set(xlabel="h", ylabel="RMS of the local error",
               title="LLM paper Fig 6: one step of eq 35 from t = 1/pi")
    axs[1].semilogx(hs, ratio, "C3o-")
    axs[1].axhspan(0.5, 2.0, color="C2", alpha=0.1, label="factor 2")
    axs[1].set(xlabel="h", ylabel="estimated / exact", ylim=(0, 2.2), title="ratio")
    for ax in axs:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    path = out / "fig6_error_estimate.png"
    _save(fig, path, progress)
    return dict(h=hs, est=est, exact=exa, ratio_min=float(ratio[inside].min()),
                ratio_max=float(ratio[inside].max())), path


# ---------------------------------------------------------------- Fig 7

def _fig7(out, progress):
    import matplotlib.pyplot as plt

    m = models.double_pendulum_stiff_spring()
    res = {}
    for tol in (0.1, 0.05):
        tr = simulate(m, PEND_SPAN, method="llm", controller="i", error_per_unit_step=True,
                      safety=0.9, atol=tol, rtol=1e-12)
        if not tr.success:
            raise RuntimeError(f"LLM demo, adaptive tol = {tol}: {tr.message}")
        res[tol] = dict(traj=tr, r=tr.err_steps * tol)
    progress("llm: Fig 7, adaptive steps (tol = 0.1, 0.05)")

    fig, axs = plt.subplots(2, 1, figsize=(11, 7), sharex=True, layout="constrained")
    for k, (tol, d) in enumerate(res.items()):
        tr = d["traj"]
        axs[0].step(tr.t_steps, np.abs(tr.h_steps), where="pre", color=f"C{k}",
                    label=f"tol = {tol}")
        axs[1].plot(tr.t_steps, d["r"], "o-", ms=3, lw=0.8, color=f"C{k}", label=f"tol = {tol}")
        axs[1].axhline(tol, color=f"C{k}", ls="--", lw=1)
    axs[0].set(ylabel="step size [s]",
               title="LLM paper Fig 7: EPUS, k = 2, gamma = 0.9 (double pendulum)")
    axs[1].set(ylabel="estimated error RMS(l) / h", xlabel="t [s]")
    for ax in axs:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    path = out / "fig7_adaptive.png"
    _save(fig, path, progress)
    return res, path


# ---------------------------------------------------------------- the section

def section_llm(out, summary, quick, progress=None):
    """The LLM paper's Figs 2, 5, 6, 7 and a summary table under ``out/llm``.

    Parameters
    ----------
    out : pathlib.Path or str
        Demo output directory.
    summary : object
        Collector with ``add(section, method, quantity, value, h=None, rtol=None)``,
        ``text(*lines)`` and ``table(header, rows)`` (the demo's ``_Summary``).
    quick : bool
        Fewer timing repetitions and a coarser h grid for Fig 6.
    progress : callable, optional
        ``progress(message)``; default prints.

    Returns
    -------
    dict
        The numbers of the summary table: ``rows`` (one dict per run) and ``files``
        (the PNGs written).
    """
    if progress is None:
        def progress(msg):
            print(f"[mbint demo] {msg}", flush=True)
    out = Path(out) / "llm"
    out.mkdir(parents=True, exist_ok=True)
    reps = 2 if quick else 7
    rows, table, files = [], [], []

    pend, p2 = _fig2(out, reps, progress)
    files.append(p2)
    t_d5 = pend["dopri5 (ode45)"]["time"]
    for label, r in pend.items():
        st = r["traj"].stats
        h = 0.02 if label.startswith("llm") else None
        rtol = None if h else MATLAB["rtol"]
        row = dict(figure="Fig 2", model="double_pendulum_stiff_spring", method=label,
                   nsteps=st["nsteps"], nfev=st["nfev"], time_s=r["time"],
                   energy_error=r["dE"], violation_position=r["phi"],
                   violation_velocity=r["phid"])
        rows.append(row)
        for q in ("nsteps", "nfev", "time_s", "energy_error", "violation_position",
                  "violation_velocity"):
            summary.add("llm", f"double_pendulum/{label}", q, row[q], h=h, rtol=rtol)
        table.append(("Fig 2 double pendulum", label, st["nsteps"], st["nfev"],
                      f"{r['dE']:.2e} J", f"{r['phi']:.1e}", f"{r['time'] * 1e3:.2f}",
                      f"{r['time'] / t_d5:.2f}"))

    balls, E0, p5 = _fig5(out, reps, progress)
    files.append(p5)
    t_d5 = balls["dopri5 (ode45)"]["time"]
    for label, r in balls.items():
        st = r["traj"].stats
        h = 0.005 if label.startswith("llm") else None
        rtol = None if h else MATLAB["rtol"]
        row = dict(figure="Fig 5", model="bouncing_balls", method=label, nsteps=st["nsteps"],
                   nfev=st["nfev"], time_s=r["time"], energy_error=r["dE"],
                   energy_rel_error=r["rel"], nrestart=st.get("nrestart", 0))
        rows.append(row)
        for q in ("nsteps", "nfev", "time_s", "energy_error", "energy_rel_error"):
            summary.add("llm", f"bouncing_balls/{label}", q, row[q], h=h, rtol=rtol)
        table.append(("Fig 5 bouncing balls", label, st["nsteps"], st["nfev"],
                      f"{r['rel']:.1e} (relative)", "", f"{r['time'] * 1e3:.2f}",
                      f"{r['time'] / t_d5:.2f}"))

    est, p6 = _fig6(out, quick, progress)
    files.append(p6)
    summary.add("llm", "eq35/llm", "estimate_ratio_min", est["ratio_min"])
    summary.add("llm", "eq35/llm", "estimate_ratio_max", est["ratio_max"])
    rows.append(dict(figure="Fig 6", model="eq 35", method="llm",
                     estimate_ratio_min=est["ratio_min"], estimate_ratio_max=est["ratio_max"]))

    adapt, p7 = _fig7(out, progress)
    files.append(p7)
    for tol, d in adapt.items():
        tr = d["traj"]
        st = tr.stats
        E = tr.energy().total
        row = dict(figure="Fig 7", model="double_pendulum_stiff_spring",
                   method=f"llm EPUS tol={tol:g}", nsteps=st["nsteps"], nreject=st["nreject"],
                   nfev=st["nfev"], max_estimated_error=float(d["r"].max()),
                   energy_error=float(np.abs(E - E[0]).max()))
        rows.append(row)
        for q in ("nsteps", "nreject", "max_estimated_error", "energy_error"):
            summary.add("llm", f"double_pendulum/llm EPUS tol={tol:g}", q, row[q], rtol=tol)
        table.append(("Fig 7 adaptive", f"llm EPUS tol = {tol:g}", st["nsteps"], st["nfev"],
                      f"{row['energy_error']:.2e} J", "", "", ""))

    header = ("figure", "method", "steps", "nfev", "energy error", "max |Phi|", "time [ms]",
              "time / dopri5")
    intro = [
        "## The Local Linearization Method (LLM paper, Figs 2, 5, 6, 7)", "",
        "`llm` at a fixed h against `dopri5`, `bdf`, `ros2` (the paper's ode45, ode15s, "
        "ode23s) at MATLAB's default tolerances (rtol 1e-3, atol 1e-6); bouncing balls over "
        f"{BALLS_SPAN[1]:g} s with max_step {BALLS_MAX_STEP} for the adaptive methods, the "
        "LLM restarting at every contact instant. Times: best wall time of "
        f"{reps} runs. Fig 6: estimated / exact local error of one LLM step of eq 35 for h in "
        f"[1e-3, 1e-1]: {est['ratio_min']:.3f} .. {est['ratio_max']:.3f}. Fig 7: adaptive "
        "LLM, error per unit step, elementary controller (k = 2, gamma = 0.9): "
        + "; ".join(f"tol = {tol:g}: {d['traj'].stats['nsteps']} steps "
                    f"({d['traj'].stats['nreject']} rejected), max estimated error "
                    f"{d['r'].max():.3f}" for tol, d in adapt.items()) + ".", ""]
    figs = [f"![{p.stem}](llm/{p.name})" for p in files]
    summary.text(*intro)
    summary.table(header, table)
    summary.text(*figs, "")

    def md_table(h, rs):
        def line(cells):
            return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
        return [line(h), "|" + "---|" * len(h)] + [line(r) for r in rs]

    (out / "llm.md").write_text("\n".join(
        intro + md_table(header, table) + [""] + [f.replace("](llm/", "](") for f in figs])
        + "\n")
    progress(f"wrote {out / 'llm.md'}")
    return dict(rows=rows, files=files + [out / "llm.md"])
