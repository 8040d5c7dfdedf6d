"""Benchmark of the singular-perturbation scheme (issue 12; SP paper: Gil, Sanfelice,
Nikravesh, DETC2013): work against precision on the paper's pendulum with a particle
(``models.pendulum_particle()``: m1 = 100, J1 = 100, L = 1, m2 = 1e-5, k = 5; fast
mode sqrt(k / m2) = 707 rad/s), t in (0, 5).

Contenders (``mbint.simulate``, index-1 formulation, analytic Jacobian in C):

- ``singular_perturbation`` with a fixed step h (the paper's run: h = 0.005) and
  adaptive (rtol sweep, atol = rtol / 100), fast = (r2, r2') (SP eq 65);
- ``dopri5`` (ode45 in the paper), ``llm`` fixed h and adaptive, ``radau_iia``,
  ``cvode_bdf`` (atol = rtol / 100), ``rk4`` with fixed h (stable below
  h = 2.83 / 707 = 0.004 only).

Accuracy of a run, on the output grid t = 0, 0.025, ..., 5 (t_eval, 201 points):

- energy: max_k |E(t_k) - E(0)| with E of SP eq 68 (``model.reference_energy``) [J];
- slow: max_k max_i |x_i(t_k) - x_ref,i(t_k)| over the slow variables x = (r1, theta,
  r1', theta') of SP eq 65 (m, rad, m/s, rad/s), against ``dop853`` at rtol = atol =
  1e-13.

Matched accuracy: each contender's runs form a work-precision curve, whose lower
envelope is interpolated in log-log (:func:`mbint.benchmarks.at_error`; ``*``: the cheapest
run is already more accurate than the target).  Targets: the errors of the fixed-step
``singular_perturbation`` runs (the paper's h = 0.005 first).

Timing: the median of ``ROUNDS`` CPU times per run, the rounds interleaved (every
run once per round), so that load on a shared machine is spread over all
contenders alike.

``make bench`` runs it as ``python tests/benchmarks/bench_sp.py [--quick] [--json PATH]``
(writes out/bench_sp.md); ``notebooks/07_singular_perturbation.ipynb`` runs a short
version.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .. import models
from ..mbs import simulate
from ..methods import methods
from . import at_error

PROBLEM = "pendulum_particle"
SPAN = (0.0, 5.0)
T_EVAL = np.linspace(0.0, 5.0, 201)
FAST = ["particle.x", "particle.y"]           # SP eq 65; the velocities follow
SLOW = [0, 1, 2, 6, 7, 8]                      # r1, theta, r1', theta' in y = (q, q')
ROUNDS = 7
CONTENDERS = ("sp", "sp adaptive", "dopri5", "llm", "llm adaptive", "radau_iia", "cvode_bdf",
              "rk4")


def sweeps(quick=False):
    """{contender: its settings}: fixed steps h [s] or tolerances (fewer when ``quick``)."""
    s = {
        "sp": [0.05, 0.02, 0.01, 0.005, 0.0025, 0.00125],
        "sp adaptive": [1e-2, 1e-3, 1e-4, 1e-5],
        "dopri5": [1e-2, 5e-3, 3e-3, 2e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9],
        "llm": [0.02, 0.01, 0.005, 0.0025, 0.00125, 0.000625],
        "llm adaptive": [1e-2, 1e-3, 1e-4, 1e-5, 1e-6],
        "radau_iia": [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9],
        "cvode_bdf": [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9],
        "rk4": [0.005, 0.003, 0.002, 0.001, 0.0005],
    }
    if quick:
        s = {k: v[::2] if len(v) > 3 else v for k, v in s.items()}
        s["sp"] = [0.02, 0.005]
        s["rk4"] = [0.005, 0.002]
        s["dopri5"] = [1e-2, 3e-3, 1e-3, 1e-5, 1e-7]
    return s


def runner(model, contender, setting):
    """A callable doing one run; returns the Trajectory."""
    kw = dict(t_eval=T_EVAL)
    if contender == "sp":
        kw.update(method="singular_perturbation", h=setting, fast=FAST)
    elif contender == "sp adaptive":
        kw.update(method="singular_perturbation", rtol=setting, atol=setting / 100, fast=FAST)
    elif contender in ("llm", "rk4"):
        kw.update(method=contender, h=setting)
    elif contender == "llm adaptive":
        kw.update(method="llm", rtol=setting, atol=setting / 100)
    else:
        kw.update(method=contender, rtol=setting, atol=setting / 100)
    return lambda: simulate(model, SPAN, **kw)


def measure(model, ref, tr):
    """(energy variation [J], slow-variable error) of a run on T_EVAL."""
    if not tr.success or len(tr.t) != len(T_EVAL):
        return math.inf, math.inf
    E = model.reference_energy(tr.q, tr.qd)
    y = np.r_[tr.q, tr.qd]
    with np.errstate(invalid="ignore", over="ignore"):
        e = float(np.max(np.abs(E - E[0])))
        s = float(np.max(np.abs(y[SLOW] - ref[SLOW])))
    return (e if np.isfinite(e) else math.inf), (s if np.isfinite(s) else math.inf)


def run(quick=False, progress=print, rounds=None, contenders=CONTENDERS):
    """Every contender over its sweep: a list of row dicts (median time of the rounds)."""
    rounds = rounds or (3 if quick else ROUNDS)
    model = models.pendulum_particle()
    r = simulate(model, SPAN, method="dop853", rtol=1e-13, atol=1e-13, t_eval=T_EVAL)
    ref = np.r_[r.q, r.qd]
    available = {m.name for m in methods()}
    rows, fns = [], []
    for contender, settings in sweeps(quick).items():
        if contender not in contenders:
            continue
        base = {"sp": "singular_perturbation", "sp adaptive": "singular_perturbation",
                "llm adaptive": "llm"}.get(contender, contender)
        if base not in available:
            continue
        for s in settings:
            fn = runner(model, contender, s)
            tr = fn()
            energy, slow = measure(model, ref, tr)
            rows.append(dict(problem=PROBLEM, contender=contender, setting=float(s),
                             energy=energy, slow=slow,
                             ok=bool(tr.success and math.isfinite(energy)),
                             status=int(tr.status), message=tr.message, t_end=float(tr.t[-1]),
                             times=[],
                             **{k: int(tr.stats.get(k, 0)) for k in
                                ("nfev", "njev", "nlu", "nsteps", "nreject")}))
            fns.append(fn)
            progress(f"{contender:13s} {s:8.2g}: energy {energy:.2e} J, slow {slow:.2e}, "
                     f"steps {rows[-1]['nsteps']}, {'ok' if rows[-1]['ok'] else tr.message}")
    for k in range(rounds):
        for row, fn in zip(rows, fns):     # interleaved: every run once per round
            t0 = time.process_time()
            fn()
            row["times"].append(time.process_time() - t0)
        progress(f"timing round {k + 1} of {rounds} done")
    for row in rows:
        row["time"] = float(np.median(row["times"]))
    return rows


def targets(rows):
    """[(label, metric, target)] from the fixed-step SP runs, the paper's h first."""
    sp = sorted((r for r in rows if r["contender"] == "sp" and r["ok"]),
                key=lambda r: (not math.isclose(r["setting"], 0.005), -r["setting"]))
    out = []
    for r in sp:
        tag = " (the paper's run)" if math.isclose(r["setting"], 0.005) else ""
        out.append((f"energy of sp h = {r['setting']:g}{tag}", "energy", r["energy"]))
        out.append((f"slow error of sp h = {r['setting']:g}{tag}", "slow", r["slow"]))
    return out


def ratio(rows, contender, target, metric, against):
    """(time(contender) / time(against) at the error ``target``, both at_error dicts)."""
    a = at_error(rows, PROBLEM, contender, target, metric)
    b = at_error(rows, PROBLEM, against, target, metric)
    if a is None or b is None or b["time"] == 0:
        return float("nan"), a, b
    return a["time"] / b["time"], a, b


def _fmt(x, cheapest=False):
    if x is None or not np.isfinite(x):
        return "-"
    return (f"{x:.2f}" if x >= 0.095 else f"{x:.3f}") + ("*" if cheapest else "")


def paper_point(rows):
    """The paper's run (sp, h = 0.005) itself against each contender at its energy and
    slow-variable errors: {metric: {contender: time(contender) / time(sp run)}}."""
    sp = next((r for r in rows if r["contender"] == "sp" and math.isclose(r["setting"], 0.005)
               and r["ok"]), None)
    out = {}
    if sp is None:
        return out
    for metric in ("energy", "slow"):
        out[metric] = {}
        for c in dict.fromkeys(r["contender"] for r in rows):
            a = at_error(rows, PROBLEM, c, sp[metric], metric)
            out[metric][c] = (float("nan") if a is None else a["time"] / sp["time"],
                              a is not None and a["cheapest"])
    return out


def report(rows):
    """The runs of :func:`run` and the ratios at matched error as a Markdown text."""
    present = [c for c in CONTENDERS if any(r["contender"] == c for r in rows)]
    L = ["# The singular-perturbation scheme: work against precision (SP paper, Figs 7-8)", "",
         "The pendulum with a particle (m2 = 1e-5, k = 5: 707 rad/s), t in (0, 5), through "
         "`mbint.simulate` (C right-hand side and analytic Jacobian). Output grid of 201 "
         "points. energy: max |E(t_k) - E(0)| of eq 68 [J]; slow: max error of (r1, theta, "
         "r1', theta') against dop853 at 1e-13. Adaptive runs: atol = rtol / 100. Time: "
         "median of interleaved rounds. Time ratios at matched error from each contender's "
         "lower work-precision envelope (log-log interpolation); `*`: its cheapest run is "
         "already more accurate; `-`: not reached.", "",
         "## The paper's run (h = 0.005) itself", "",
         "time(contender at the run's error) / time(sp, h = 0.005); above 1: the paper's run "
         "is faster.", "",
         "| error matched | " + " | ".join(present) + " |", "|---|" + "---:|" * len(present)]
    for metric, d in paper_point(rows).items():
        L.append(f"| {metric} | " + " | ".join(_fmt(*d.get(c, (float('nan'), False)))
                                              for c in present) + " |")
    L += ["", "## Time / dopri5 at the errors of the fixed-step sp runs (sp: its envelope)", "",
         "| target | " + " | ".join(present) + " |", "|---|" + "---:|" * len(present)]
    for label, metric, tgt in targets(rows):
        cells = []
        for c in present:
            rt, a, _ = ratio(rows, c, tgt, metric, "dopri5")
            cells.append(_fmt(rt, a is not None and a["cheapest"]))
        L.append(f"| {label}: {tgt:.2e} | " + " | ".join(cells) + " |")
    L += ["", "## Time / sp (fixed h) at the same errors", "",
          "| target | " + " | ".join(present) + " |", "|---|" + "---:|" * len(present)]
    for label, metric, tgt in targets(rows):
        cells = []
        for c in present:
            rt, a, _ = ratio(rows, c, tgt, metric, "sp")
            cells.append(_fmt(rt, a is not None and a["cheapest"]))
        L.append(f"| {label}: {tgt:.2e} | " + " | ".join(cells) + " |")
    L += ["", "## Every run", "",
          "| contender | h or tol | time [ms] | energy [J] | slow | nfev | njev | nlu | steps | "
          "rejected | ok |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        L.append(f"| {r['contender']} | {r['setting']:g} | {r['time'] * 1e3:.2f} | "
                 f"{r['energy']:.2e} | {r['slow']:.2e} | {r['nfev']} | {r['njev']} | "
                 f"{r['nlu']} | {r['nsteps']} | {r['nreject']} | "
                 f"{'yes' if r['ok'] else 'no: ' + r['message'][:60]} |")
    return "\n".join(L) + "\n"
