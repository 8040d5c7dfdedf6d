"""Benchmark of the papers' mechanisms: the C kernels against the NumPy oracle,
and ``mbint.simulate`` against ``scipy.integrate.solve_ivp``.

For every model of :data:`mbint.models.PAPER_MODELS`:

(i) f(t, y) of the index-1 formulation (q'' and lambda from the saddle-point
    system, LLM eq 9).  C: ``model.rhs`` on one state (one Python call: argument
    handling, workspace set-up, the evaluation), and ``model.rhs`` on a batch of
    ``BATCH`` distinct states divided by ``BATCH`` (a loop inside C: the cost of
    the evaluation itself).  NumPy: :class:`mbint.testing.reference.NumpyReference`
    ``rhs`` on one state, and on the same batch divided by ``BATCH`` (vectorized
    over the states, for information).  The ratio of the issue ("f in C at least
    50x faster than the NumPy version") is NumPy on one state over C per state in
    the batch; the ratio over one C call from Python is printed beside it.
(ii) df/dy.  C: the analytic Jacobian (LLM eqs 10-15), ``model.jacobian``, one
    call and per state in a batch.  NumPy: ``NumpyReference.jacobian``, central
    differences of the NumPy f with the 4 nq perturbed states evaluated in one
    vectorized call (the fastest NumPy Jacobian we have; there is no NumPy
    version of eqs 10-15).
(iii) a whole run over the model's ``t_span`` at rtol = 1e-6 (atol and max_step
    from the model's ``settings``, the same for both): ``mbint.simulate(model,
    t_span, method="dopri5")`` (C f, no Python per step; PI controller, and the
    elementary controller ``[I]``, with which dopri5 is SciPy's RK45 step for
    step) against ``scipy.integrate.solve_ivp(method="RK45")`` calling
    ``model.rhs`` (the C f, through Python at every evaluation).  Final error:
    max norm of y(tf) minus a reference from SciPy's DOP853 at rtol = atol = 1e-12
    (also through ``model.rhs``); the difference between that reference and
    mbint dopri5 at 1e-12 is reported as the reference's own uncertainty.

Timing: best CPU time (``time.process_time``) over interleaved rounds
(``ROUNDS`` for the kernels, ``RUN_ROUNDS`` plus the warm-up for whole runs); in
each round every contender runs for about ``ROUND_S`` (``RUN_ROUND_S``) seconds,
at least once, so that a change of machine load hits both sides.

Run ``python tests/benchmarks/bench_models.py`` or ``make bench``; the table is
printed and written to ``out/bench_models.md``.
"""
from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy
from scipy.integrate import solve_ivp as scipy_solve_ivp

import mbint
from mbint import models
from mbint.testing.reference import NumpyReference

RTOL = 1e-6
REF_TOL = 1e-12
BATCH = 1000         # states in a C (and NumPy) batch evaluation
SINGLE = 50          # distinct states cycled through by the one-state timings
ROUNDS = 5
ROUND_S = 0.05
RUN_ROUNDS = 2       # whole runs: the warm-up run and two rounds
RUN_ROUND_S = 0.2
OUT_MD = Path(__file__).resolve().parents[2] / "out" / "bench_models.md"


def best_time(runs, rounds=ROUNDS, round_s=ROUND_S):
    """Best CPU time of each callable of ``runs`` over interleaved rounds.

    Parameters
    ----------
    runs : dict of str -> (callable, int)
        The callable and the number of evaluations one call of it makes; the
        result is per evaluation.
    rounds : int
    round_s : float
        A callable taking t seconds runs ``ceil(round_s / t)`` times per round
        (at least once).  The first (warm-up) call is timed too: it can only be
        slower, and it saves a run of the long ones.

    Returns
    -------
    best : dict of str -> float
        Seconds per evaluation.
    last : dict of str -> object
        What each callable returned last.
    """
    reps, best, last = {}, {}, {}
    for key, (run, n) in runs.items():
        t = time.process_time()
        last[key] = run()
        dt = time.process_time() - t
        best[key] = dt / n
        reps[key] = max(1, math.ceil(round_s / max(dt, 1e-9)))
    for _ in range(rounds):
        for key, (run, n) in runs.items():
            for _ in range(reps[key]):
                t = time.process_time()
                last[key] = run()
                best[key] = min(best[key], (time.process_time() - t) / n)
    return best, last


def states(model, n, seed=0):
    """n distinct random states near the initial one: times (n,), y (2 nq, n) (one column
    per state, the layout of the batch kernels)."""
    rng = np.random.default_rng(seed)
    q = model.q0 + 0.05 * rng.standard_normal((n, model.nq))
    qd = model.qd0 + 0.5 * rng.standard_normal((n, model.nq))
    return rng.uniform(0.0, 1.0, n), np.concatenate([q, qd], 1).T


def _loop(fun, t, Y):
    def run():
        for k in range(len(t)):
            fun(t[k], Y[:, k])
    return run


@dataclass
class KernelRow:
    """Seconds per evaluation of f or df/dy of one model."""

    model: str
    what: str             # "f" or "df/dy"
    n: int                # 2 nq
    c_call: float         # C, one state per Python call
    c_batch: float        # C, per state of a batch of BATCH
    np_call: float        # NumPy, one state per call
    np_batch: float       # NumPy, per state of a vectorized batch (f only; nan for df/dy)
    max_rel_diff: float   # max |C - NumPy| / max(1, |NumPy|) on the timed states

    @property
    def ratio(self):
        """NumPy (one state) over C (per state in the batch): the issue's ratio."""
        return self.np_call / self.c_batch

    @property
    def ratio_call(self):
        """NumPy (one state) over C (one state per Python call)."""
        return self.np_call / self.c_call


def bench_kernels(name, model):
    """(i) and (ii) for one model: two KernelRow."""
    ref = NumpyReference(model)
    tb, Yb = states(model, BATCH, seed=1)
    ts, Ys = tb[:SINGLE], Yb[:, :SINGLE]
    tj, Yj = tb[:10], Yb[:, :10]
    runs = {
        "f C call": (_loop(model.rhs, ts, Ys), SINGLE),
        "f C batch": (lambda: model.rhs(tb, Yb), BATCH),
        "f np call": (_loop(ref.rhs, ts, Ys), SINGLE),
        "f np batch": (lambda: ref.rhs(tb, Yb), BATCH),
        "J C call": (_loop(model.jacobian, tj, Yj), len(tj)),
        "J C batch": (lambda: model.jacobian(tb, Yb), BATCH),
        "J np call": (_loop(ref.jacobian, tj, Yj), len(tj)),
    }
    best, _ = best_time(runs)
    f_c, f_r = model.rhs(tb, Yb), ref.rhs(tb, Yb)
    df = max(float(np.abs(f_c[:, k] - f_r[:, k]).max() / max(1.0, np.abs(f_r[:, k]).max()))
             for k in range(BATCH))
    dj = max(float(np.abs(model.jacobian(tj[k], Yj[:, k]) - ref.jacobian(tj[k], Yj[:, k])).max()
                   / max(1.0, np.abs(ref.jacobian(tj[k], Yj[:, k])).max()))
             for k in range(len(tj)))
    n = 2 * model.nq
    return [KernelRow(name, "f", n, best["f C call"], best["f C batch"], best["f np call"],
                      best["f np batch"], df),
            KernelRow(name, "df/dy", n, best["J C call"], best["J C batch"], best["J np call"],
                      math.nan, dj)]


@dataclass
class RunRow:
    """One whole run of a model."""

    model: str
    solver: str           # "mbint dopri5", "mbint dopri5 [I]", "scipy RK45"
    time_s: float
    nfev: int
    error: float          # max |y(tf) - y_ref|
    status: int
    speedup: float = math.nan   # SciPy RK45's time over time_s


@dataclass
class RunResult:
    model: str
    t_span: tuple
    options: dict
    rows: list = field(default_factory=list)
    ref_uncertainty: float = math.nan


def bench_run(name, model):
    """(iii) for one model."""
    t_span = tuple(model.t_span)
    opts = dict(rtol=RTOL, atol=model.settings.get("atol", 1e-8))
    if "max_step" in model.settings:
        opts["max_step"] = model.settings["max_step"]
    y0 = np.concatenate([model.q0, model.qd0])

    def fun(t, y):
        return model.rhs(t, y)

    ms = opts.get("max_step", np.inf)
    ref = scipy_solve_ivp(fun, t_span, y0, method="DOP853", rtol=REF_TOL, atol=REF_TOL,
                          max_step=ms)
    y_ref = ref.y[:, -1]
    tr = mbint.simulate(model, t_span, method="dopri5", rtol=REF_TOL, atol=REF_TOL, max_step=ms)
    out = RunResult(name, t_span, opts,
                    ref_uncertainty=float(np.abs(np.concatenate([tr.q[:, -1], tr.qd[:, -1]])
                                                 - y_ref).max()))
    runs = {
        "scipy RK45": (lambda: scipy_solve_ivp(fun, t_span, y0, method="RK45", **opts), 1),
        "mbint dopri5": (lambda: mbint.simulate(model, t_span, method="dopri5", **opts), 1),
        "mbint dopri5 [I]": (lambda: mbint.simulate(model, t_span, method="dopri5",
                                                    controller="i", **opts), 1),
    }
    best, last = best_time(runs, rounds=RUN_ROUNDS, round_s=RUN_ROUND_S)
    for solver, res in last.items():
        if solver.startswith("scipy"):
            yT, nfev, status = res.y[:, -1], int(res.nfev), int(res.status)
        else:
            yT, nfev, status = np.concatenate([res.q[:, -1], res.qd[:, -1]]), res.stats["nfev"], \
                int(res.status)
        out.rows.append(RunRow(name, solver, best[solver], nfev,
                               float(np.abs(yT - y_ref).max()), status))
    for r in out.rows:
        r.speedup = out.rows[0].time_s / r.time_s
    return out


@dataclass
class Results:
    kernels: list         # KernelRow, two per model
    runs: list            # RunResult, one per model


def run_all(names=None):
    """Run the whole benchmark (every paper model, or those of ``names``)."""
    names = list(models.PAPER_MODELS) if names is None else list(names)
    kernels, runs = [], []
    for name in names:
        kernels += bench_kernels(name, models.PAPER_MODELS[name]())
        runs.append(bench_run(name, models.PAPER_MODELS[name]()))
    return Results(kernels, runs)


def find_kernel(res, model, what):
    for r in res.kernels:
        if (r.model, r.what) == (model, what):
            return r
    raise KeyError((model, what))


def find_run(res, model, solver):
    for rr in res.runs:
        for r in rr.rows:
            if (r.model, r.solver) == (model, solver):
                return r
    raise KeyError((model, solver))


def report(res):
    """The Markdown report."""
    us = 1e6
    lines = [
        "# Paper models: C kernels vs NumPy, mbint.simulate vs SciPy",
        "",
        f"Python {platform.python_version()}, NumPy {np.__version__}, SciPy {scipy.__version__}, "
        f"{platform.machine()}. Best CPU time over {ROUNDS} interleaved rounds "
        f"(kernels; whole runs: the warm-up and {RUN_ROUNDS} rounds).",
        "",
        "## (i) f(t, y) and (ii) df/dy: microseconds per evaluation",
        "",
        "C batch: `model.rhs` / `model.jacobian` on a batch of "
        f"{BATCH} distinct states (a loop in C), per state. C call: one state per Python call. "
        "NumPy: `mbint.testing.reference.NumpyReference` on one state (f: saddle-point solve with "
        "`numpy.linalg.solve`; df/dy: central differences of the NumPy f, the 4 nq perturbed "
        "states in one vectorized call); NumPy batch: the NumPy f vectorized over the same "
        f"{BATCH} states, per state. Ratio = NumPy (one state) / C batch (the issue's target "
        "for f: >= 50x); ratio/call = NumPy (one state) / C call. max rel diff: largest "
        "|C - NumPy| / max(1, |NumPy|) on the timed states (df/dy: against differences).",
        "",
        "| model | n | what | C batch [us] | C call [us] | NumPy [us] | NumPy batch [us] | "
        "ratio | ratio/call | max rel diff |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res.kernels:
        npb = "-" if math.isnan(r.np_batch) else f"{r.np_batch * us:.2f}"
        lines.append(f"| {r.model} | {r.n} | {r.what} | {r.c_batch * us:.3f} | "
                     f"{r.c_call * us:.2f} | {r.np_call * us:.1f} | {npb} | {r.ratio:.0f}x | "
                     f"{r.ratio_call:.1f}x | {r.max_rel_diff:.1e} |")
    lines += [
        "",
        "## (iii) whole runs: mbint.simulate(dopri5) vs scipy.integrate.solve_ivp(RK45)",
        "",
        f"rtol = {RTOL:g}; atol and max_step from the model's `settings`, the same for both. "
        "SciPy calls `model.rhs` (the C f, through Python, once per evaluation); mbint runs "
        "the C f with no Python per step. [I]: mbint with the elementary controller (SciPy's "
        "RK45 step for step). Final error: max norm of y(tf) - reference (SciPy DOP853 at "
        f"rtol = atol = {REF_TOL:g}); ref. unc.: that reference minus mbint dopri5 at "
        f"{REF_TOL:g}.",
        "",
        "| model | t_span | atol | solver | time [ms] | nfev | final error | ref. unc. | "
        "speed-up vs SciPy RK45 |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for rr in res.runs:
        for r in rr.rows:
            status = "" if r.status == 0 else f" (status {r.status})"
            lines.append(f"| {r.model} | ({rr.t_span[0]:g}, {rr.t_span[1]:g}) | "
                         f"{rr.options['atol']:g} | {r.solver}{status} | {r.time_s * 1e3:.2f} | "
                         f"{r.nfev} | {r.error:.2e} | {rr.ref_uncertainty:.1e} | "
                         f"{r.speedup:.1f}x |")
    lines += ["", "## Summary", "",
              "| model | f: NumPy / C | df/dy: NumPy / C | simulate: SciPy RK45 / mbint dopri5 |",
              "|---|---:|---:|---:|"]
    for rr in res.runs:
        f = find_kernel(res, rr.model, "f").ratio
        j = find_kernel(res, rr.model, "df/dy").ratio
        s = find_run(res, rr.model, "mbint dopri5").speedup
        lines.append(f"| {rr.model} | {f:.0f}x | {j:.0f}x | {s:.1f}x |")
    return "\n".join(lines) + "\n"


def write_report(res, path=OUT_MD):
    """Write :func:`report` of ``res`` to ``path`` (creating its directory); returns the text."""
    text = report(res)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text


if __name__ == "__main__":
    print(write_report(run_all()))
    print(f"written to {OUT_MD}")
