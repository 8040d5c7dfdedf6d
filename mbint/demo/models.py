"""Demo of the papers' mechanisms: each model of :mod:`mbint.models` simulated and
plotted (motion, energy, constraint violation) under ``<out>/models/``.

:func:`section_models` has the signature of the sections of ``python -m mbint
demo`` (``section(out, summary, quick)``); :func:`run` writes the figures and a
``models.md`` summary on its own.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from .. import models
from ..ivp import solve_ivp
from ..methods import methods
from ..mbs.simulate import simulate
from ..plot import violation_lines

__all__ = ["section_models", "run"]


def _implicit(preferred=("radau_iia", "bdf", "rodas4")):
    names = {m.name for m in methods()}
    for p in preferred:
        if p in names:
            return p
    return None


def _runs(quick):
    """(model name, [(label, simulate kwargs), ...], outputs to plot) per model."""
    imp = _implicit()
    dp = [("dopri5", dict(method="dopri5"))]
    if imp and not quick:
        dp.append((imp, dict(method=imp)))
    rn = [(imp, dict(method=imp))] if imp else [("dopri5", dict(method="dopri5"))]
    if not quick and imp:
        rn.append(("dopri5", dict(method="dopri5")))
    return [
        ("double_pendulum_stiff_spring", dp, ["theta1", "relative_angle"]),
        ("bouncing_balls", [("dopri5", dict(method="dopri5"))], ["height1", "height2"]),
        ("stiff_double_pendulum", rn, ["theta1", "relative_angle"]),
        ("pendulum_particle", [("dopri5", dict(method="dopri5"))], ["theta", "particle_offset"]),
        ("two_link_manipulator", [("dopri5", dict(method="dopri5")),
                                  ("dopri5 + projection", dict(method="dopri5", project=True))],
         ["tip_x", "tip_y"]),
        ("mass_spring_damper", [("dopri5", dict(method="dopri5"))], ["x"]),
    ]



def _save(fig, path, progress):
    fig.savefig(path, dpi=100)
    import matplotlib.pyplot as plt

    plt.close(fig)
    progress(f"wrote {path}")


def _simulate_model(name, runs, quick):
    model = models.PAPER_MODELS[name]()
    results = []
    for label, kw in runs:
        t_span = model.t_span
        if quick and name == "two_link_manipulator":
            t_span = (0.0, 5.0)
        t = time.perf_counter()
        # at the model's settings; the dense output draws the motion between the steps
        traj = simulate(model, t_span, dense_output=True, **kw)
        results.append((label, traj, time.perf_counter() - t))
    return model, results


def _dense_output(model, traj, name, n=1500):
    """Output ``name`` on a fine grid from the run's dense output (the steps' points
    included), so that the curve follows the motion between the steps rather than
    joining them by straight lines; the points alone when there is no dense output."""
    if traj.sol is None:
        return traj.t, traj.output(name)
    t = np.union1d(np.linspace(traj.t[0], traj.t[-1], n), traj.t)
    q, qd = traj.state(t)
    return t, np.asarray(model.outputs[name](t, q, qd))


def _plots(out, name, model, results, outputs, progress):
    import matplotlib.pyplot as plt

    paths = []
    # motion
    fig, axes = plt.subplots(len(outputs), 1, figsize=(7, 2.6 * len(outputs)), sharex=True,
                             layout="constrained", squeeze=False)
    for ax, o in zip(axes[:, 0], outputs):
        for label, traj, _ in results:
            t, y = _dense_output(model, traj, o)
            ax.plot(t, y, label=label, lw=1)
        unit = model.output_units.get(o)
        ax.set_ylabel(f"{o} [{unit}]" if unit else o)
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_title(f"{name}: motion")
    axes[-1, 0].set_xlabel("t [s]")
    axes[0, 0].legend(fontsize="small")
    paths.append(out / f"{name}_motion.png")
    _save(fig, paths[-1], progress)
    # energy
    fig, ax = plt.subplots(figsize=(7, 3.2), layout="constrained")
    for label, traj, _ in results:
        E = traj.energy().total
        ax.plot(traj.t, E - E[0], label=label, lw=1)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("E(t) - E(0) [J]")
    ax.set_title(f"{name}: total energy (kinetic + potential)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    paths.append(out / f"{name}_energy.png")
    _save(fig, paths[-1], progress)
    # violation
    if model.nc:
        fig, ax = plt.subplots(figsize=(7, 3.2), layout="constrained")
        for k, (label, traj, _) in enumerate(results):  # exact zeros left out, counted
            violation_lines(ax, traj, ("position", "velocity"), prefix=f"{label}: ",
                            style=lambda j, k=k: dict(color=f"C{k}", lw=1, ls="-:"[j]))
        ax.set_yscale("log")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("max |residual| (units in the legend)")
        ax.set_title(f"{name}: constraint violation")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize="small")
        paths.append(out / f"{name}_violation.png")
        _save(fig, paths[-1], progress)
    return paths


def _balls_ode_row(quick):
    """The paper's own ODE (eq 21) by dopri5, for the comparison row."""
    f = models.bouncing_balls_ode()
    res = solve_ivp(f.fun, f.t_span, f.y0, method="dopri5", **f.settings)
    E = f.energy(res.y)
    return res, float(np.abs(E - E[0]).max())


def section_models(out, summary, quick, progress=None):
    """Simulate and plot every paper model under ``out/models``.

    Parameters
    ----------
    out : pathlib.Path
        Demo output directory.
    summary : object
        Collector with ``add(section, method, quantity, value, h=None,
        rtol=None)``, ``text(*lines)`` and ``table(header, rows)`` (the demo's
        ``_Summary``).
    quick : bool
        Fewer runs (the implicit comparison runs and the animation are skipped).
    progress : callable, optional
        ``progress(message)``; default prints.

    Returns
    -------
    list of dict
        One row per run: model, method, steps, nfev, time, energy drift and
        violation.
    """
    if progress is None:
        def progress(msg):
            print(f"[mbint demo] {msg}", flush=True)
    out = Path(out) / "models"
    out.mkdir(parents=True, exist_ok=True)
    rows, table, figs = [], [], []
    for name, runs, outputs in _runs(quick):
        model, results = _simulate_model(name, runs, quick)
        for label, traj, dt in results:
            E = traj.energy().total
            V = traj.violation()
            row = dict(model=name, method=label, status=traj.status, nsteps=traj.stats["nsteps"],
                       nfev=traj.stats["nfev"], time=dt,
                       energy_drift=float(np.abs(E - E[0]).max()),
                       violation_position=float(V.position.max()) if model.nc else 0.0,
                       violation_velocity=float(V.velocity.max()) if model.nc else 0.0)
            rows.append(row)
            table.append((name, label, traj.stats["nsteps"], traj.stats["nfev"], f"{dt:.3f}",
                          f"{row['energy_drift']:.3e}", f"{row['violation_position']:.3e}",
                          f"{row['violation_velocity']:.3e}"))
            for q in ("nsteps", "nfev", "energy_drift", "violation_position"):
                summary.add("models", f"{name}/{label}", q, row[q])
        progress(f"models: {name} ({', '.join(r[0] for r in results)})")
        figs += _plots(out, name, model, results, outputs, progress)
    res, drift = _balls_ode_row(quick)
    table.append(("bouncing_balls_ode (eq 21)", "dopri5 (solve_ivp)", res.nsteps, res.nfev, "",
                  f"{drift:.3e}", "", ""))
    summary.add("models", "bouncing_balls_ode/dopri5", "energy_drift", drift)
    if not quick:
        traj = simulate(models.stiff_double_pendulum(), (0.0, 2.0),
                        method=_implicit() or "dopri5", rtol=1e-5, atol=1e-7, dense_output=True)
        gif = traj.animate(out / "stiff_double_pendulum.gif", fps=15)[0]
        progress(f"wrote {gif}")
        figs.append(gif)
    summary.text("## The papers' mechanisms (mbint.models)", "",
                 "Each model simulated with `mbint.simulate` at its suggested settings; energy "
                 "drift is max |E(t) - E(0)| (the RN pendulum and the mass-spring-damper are "
                 "damped, so theirs is dissipation), violation the max-norm of Phi and "
                 "Phi_q q' + Phi_t.", "")
    summary.table(("model", "method", "steps", "nfev", "time [s]", "energy drift",
                   "violation (position)", "violation (velocity)"), table)
    summary.text(*[f"![{p.stem}](models/{p.name})" for p in figs if p.suffix == ".png"], "")
    return rows


def run(out="out", quick=False):
    """Write the models' figures and ``models.md`` under ``out/models``.

    Returns
    -------
    list of dict
        The rows of :func:`section_models`.
    """
    if "MPLBACKEND" not in os.environ:
        import matplotlib

        matplotlib.use("Agg")

    class _Collect:
        def __init__(self):
            self.md = []

        def add(self, *args, **kwargs):
            pass

        def text(self, *lines):
            self.md.extend(lines)

        def table(self, header, rows):
            self.md.append("| " + " | ".join(header) + " |")
            self.md.append("|" + "---|" * len(header))
            self.md.extend("| " + " | ".join(str(c) for c in r) + " |" for r in rows)
            self.md.append("")

    s = _Collect()
    rows = section_models(Path(out), s, quick)
    (Path(out) / "models" / "models.md").write_text(
        "\n".join(line.replace("](models/", "](") for line in s.md) + "\n")
    return rows
