"""Demo of the Rosenbrock-Nystrom method on the state-space formulation (RN paper:
Sandu, Negrut, Haug, Potra, Sandu, section 5.1) under ``<out>/rn/``.

:func:`section_rn` has the signature of the sections of ``python -m mbint demo``.  It
writes

- ``rn/fig2_theta1.png``: theta1 (mod 2 pi, the paper's reading: it settles at
  3 pi/2) and its rate over [0, 2] s, the paper's Fig 2, with the step sizes of
  ``rosenbrock_nystrom`` at rtol = atol = 1e-4;
- ``rn/work_precision.png``: error of the positions at t = 2 s against run time for
  ``rosenbrock_nystrom`` (state space: full pivoting's partition and the body angles)
  and ``radau_iia``, ``rodas4``, ``cvode_bdf`` on the index-1 formulation;
- ``rn/rn.md``: the partition, Tables 1 and 2 next to the paper's numbers, the
  explicit ``adams`` on the state-space ODE (the paper's Algorithm 2) against
  ``rosenbrock_nystrom`` (steps and time per tolerance: the analogue of Tables 3-4),
  and the work-precision table (also added to the demo's summary).

:func:`error_table` computes the rows of Tables 1 and 2 (the paper's error analysis:
the error of theta1 or its rate at the accepted steps of a run against a reference,
its maximum Delta(k), the time t* where it occurs, the relative error
100 Delta / |E*| and the root mean square); :data:`PAPER_TABLE1` and
:data:`PAPER_TABLE2` hold the printed values.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from .. import models
from ..mbs.simulate import simulate
from ..mbs.statespace import StateSpace

__all__ = ["section_rn", "error_table", "PAPER_TABLE1", "PAPER_TABLE2", "ANGLES"]

SPAN = (0.0, 2.0)
ANGLES = ["body1.theta", "body2.theta"]

#: Table 1 of the paper (theta1): k -> (t*, Delta, RelErr [%], mean error)
PAPER_TABLE1 = {-2: (0.592127, 5.223e-2, 0.12126, 3.234e-3),
                -3: (0.599954, 4.198e-3, 0.00964, 2.631e-4),
                -4: (0.626135, 4.916e-4, 0.00108, 2.946e-5),
                -5: (1.065146, 1.902e-5, 0.00039, 9.868e-6)}
#: Table 2 of the paper (the rate of theta1)
PAPER_TABLE2 = {-2: (0.795548, 4.061e-2, 1.84434, 2.348e-2),
                -3: (0.373114, 3.792e-3, 0.12340, 2.181e-3),
                -4: (0.217757, 8.652e-4, 0.00922, 3.445e-4),
                -5: (0.186183, 2.343e-4, 0.00246, 9.357e-5)}


def reference(model, rtol=1e-13):
    """A run of ``radau_iia`` (index-1 formulation) with dense output at rtol = atol."""
    return simulate(model, SPAN, method="radau_iia", rtol=rtol, atol=rtol, dense_output=True)


def error_table(model, ref, ks=(-2, -3, -4, -5), method="rosenbrock_nystrom", **kw):
    """The rows of Tables 1 and 2 for rtol = atol = 10^k.

    The error at the accepted steps t_i of a run on ``formulation="state_space"``
    against the reference's dense output (the paper interpolates a fixed-step
    reference by cubic splines): Delta_i = |e(t_i) - E(t_i)| for e = theta1 (rad)
    and for its rate (rad/s).

    Returns
    -------
    dict
        ``{"theta1": {k: row}, "dtheta1": {k: row}}`` with row = (t* [s], Delta,
        RelErr [%], mean) where RelErr = 100 Delta / |E(t*)| (theta1 taken mod 2 pi,
        as the paper's Fig 2 reads it) and mean = sqrt(mean(Delta_i^2)); and
        ``"runs"``: k -> (nsteps, nreject, nrepartition, npartition_change).
    """
    out = {"theta1": {}, "dtheta1": {}, "runs": {}}
    for k in ks:
        tol = 10.0 ** k
        tr = simulate(model, SPAN, method=method, formulation="state_space", rtol=tol,
                      atol=tol, **kw)
        if not tr.success:
            raise RuntimeError(f"RN demo, k = {k}: {tr.message}")
        qr, qdr = ref.state(tr.t)
        for name, x, xr in (("theta1", tr.q[2], qr[2]), ("dtheta1", tr.qd[2], qdr[2])):
            d = np.abs(x - xr)
            i = int(np.argmax(d))
            E = np.mod(xr[i], 2 * np.pi) if name == "theta1" else abs(xr[i])
            out[name][k] = (float(tr.t[i]), float(d[i]), float(100 * d[i] / abs(E)),
                            float(np.sqrt(np.mean(d ** 2))))
        out["runs"][k] = (tr.stats["nsteps"], tr.stats["nreject"], tr.stats["nrepartition"],
                          tr.stats["npartition_change"])
    return out


def _save(fig, path, progress):
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100)
    plt.close(fig)
    progress(f"wrote {path}")


def _table_rows(tab, paper, which):
    rows = []
    for k in sorted(tab[which], reverse=True):
        t, d, rel, mean = tab[which][k]
        pt, pd, prel, pmean = paper[k]
        rows.append((k, f"{t:.3f}", f"{pt:.3f}", f"{d:.3e}", f"{pd:.3e}", f"{rel:.5f}",
                     f"{prel:.5f}", f"{mean:.3e}", f"{pmean:.3e}"))
    return rows


HEADER = ("k", "t*", "t* paper", "Delta", "Delta paper", "RelErr %", "RelErr % paper", "mean",
          "mean paper")


def section_rn(out, summary, quick, progress=print):
    """The RN paper's section 5: partition, Tables 1-2, Algorithm 2 against Algorithm 1,
    Fig 2, work-precision."""
    d = Path(out) / "rn"
    d.mkdir(parents=True, exist_ok=True)
    m = models.stiff_double_pendulum()
    md = ["# RN paper section 5.1: Rosenbrock-Nystrom on the state-space formulation", ""]
    md += _partition_lines(m)
    ref = reference(m, 1e-11 if quick else 1e-13)
    tabs, lines = _tables_1_2(m, ref, quick, summary)
    md += lines
    md += _algorithms(m, quick, summary)
    _fig2(m, d, progress)
    md += _work_precision(m, ref, quick, d, summary, progress)
    (d / "rn.md").write_text("\n".join(md) + "\n")
    progress(f"wrote {d / 'rn.md'}")
    return tabs


def _partition_lines(m):
    """The partitions of full pivoting and of the body angles, as Markdown lines."""
    S = StateSpace(m)
    Sa = StateSpace(m, independent=ANGLES)
    return [f"Full pivoting on Phi_q(q0) keeps {S.names} independent (cond_1(Phi_u) = "
            f"{S.cond:.2f}); preferring the body angles gives {Sa.names} (cond {Sa.cond:.2f}).",
            ""]


def _tables_1_2(m, ref, quick, summary):
    """Tables 1 and 2 for both partitions next to the paper's: the tables of
    :func:`error_table` by partition, and the Markdown lines."""
    ks = (-2, -3, -4) if quick else (-2, -3, -4, -5)
    tabs = {"full pivoting": error_table(m, ref, ks, independent="pivoting"),
            "angles": error_table(m, ref, ks, independent=ANGLES)}
    md = []
    for label, tab in tabs.items():
        for which, paper, title in (("theta1", PAPER_TABLE1, "Table 1 (theta1 [rad])"),
                                    ("dtheta1", PAPER_TABLE2, "Table 2 (rate of theta1 [rad/s])")):
            md += [f"## {title}, partition: {label}", ""]
            rows = _table_rows(tab, paper, which)
            md += ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
            md += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows] + [""]
            summary.text(f"### RN {title}, partition: {label}", "")
            summary.table(HEADER, rows)
            for k, row in tab[which].items():
                summary.add("rn", f"rosenbrock_nystrom ({label})", f"{which}_Delta", row[1],
                            rtol=10.0 ** k)
        md += [f"Runs ({label}): k -> steps, rejected, repartitions (Gauss-Jordan runs, "
               f"changes): " + ", ".join(f"{k}: {v}" for k, v in tab["runs"].items()), ""]
    return tabs, md


def _algorithms(m, quick, summary):
    """Algorithm 2 (explicit adams on the state-space ODE) against Algorithm 1, the
    analogue of Tables 3-4 (HMMWV there): the explicit code's steps do not follow the
    tolerance (stability bound), the Rosenbrock-Nystrom method's do.  Markdown lines."""
    span2 = (0.0, 0.5) if quick else SPAN
    ks2 = (-2, -4) if quick else (-2, -3, -4, -5)
    alg = []
    for label, kw in (("adams (Algorithm 2)", dict(method="adams", independent="pivoting")),
                      ("rosenbrock_nystrom (Algorithm 1)", dict(method="rosenbrock_nystrom",
                                                                independent="pivoting")),
                      ("rosenbrock_nystrom, angles", dict(method="rosenbrock_nystrom",
                                                          independent=ANGLES))):
        for k in ks2:
            t0 = time.perf_counter()
            r = simulate(m, span2, formulation="state_space", rtol=10.0 ** k, atol=10.0 ** k,
                         **kw)
            dt = time.perf_counter() - t0
            if not r.success:
                raise RuntimeError(f"RN demo, {label}, k = {k}: {r.message}")
            alg.append((label, k, f"{dt * 1e3:.1f}", r.stats["nsteps"],
                        f"{(span2[1] - span2[0]) / r.stats['nsteps']:.2e}"))
            summary.add("rn", label, "nsteps_state_space", r.stats["nsteps"], rtol=10.0 ** k)
    head = ("run", "k", "time [ms]", "steps", "mean h [s]")
    md = [f"## Algorithm 2 (explicit adams) against Algorithm 1, t in {list(span2)} s "
          f"(the analogue of Tables 3-4)", "", "| " + " | ".join(head) + " |",
          "|" + "---|" * len(head)]
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in alg] + [""]
    summary.text("### RN Algorithm 2 (adams) against Algorithm 1 (rosenbrock_nystrom)", "")
    summary.table(head, alg)
    return md


def _fig2(m, d, progress):
    """Fig 2 (theta1 mod 2 pi and its rate) and the step sizes with the partition changes."""
    import matplotlib.pyplot as plt

    tr = simulate(m, SPAN, method="rosenbrock_nystrom", formulation="state_space", rtol=1e-4,
                  atol=1e-4, dense_output=True, independent="pivoting")
    ts = np.linspace(*SPAN, 801)
    q, qd = tr.state(ts)
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    ax[0].plot(ts, np.mod(q[2], 2 * np.pi))
    ax[0].axhline(1.5 * np.pi, color="0.6", ls=":")
    ax[0].set(xlabel="t [s]", ylabel="theta1 mod 2 pi [rad]", title="Fig 2 (left)")
    ax[1].plot(ts, qd[2])
    ax[1].set(xlabel="t [s]", ylabel="theta1' [rad/s]", title="Fig 2 (right)")
    ax[2].semilogy(tr.t_steps, tr.h_steps, ".-", ms=3)
    for tp, _ in tr.partitions[1:]:
        ax[2].axvline(tp, color="C3", lw=0.8)
    ax[2].set(xlabel="t [s]", ylabel="step size [s]",
              title=f"rosenbrock_nystrom, tol 1e-4 ({tr.stats['npartition_change']} "
                    f"changes of partition)")
    for a in ax:
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    _save(fig, d / "fig2_theta1.png", progress)


def _work_precision(m, ref, quick, d, summary, progress):
    """Work-precision (best of a few runs; the benchmark has the medians): the figure, and
    the Markdown lines."""
    import matplotlib.pyplot as plt

    qref = ref.q[:, -1]
    runs = {"rosenbrock_nystrom (state space, full pivoting)": dict(
                method="rosenbrock_nystrom", formulation="state_space", independent="pivoting"),
            "rosenbrock_nystrom (state space, angles)": dict(
                method="rosenbrock_nystrom", formulation="state_space", independent=ANGLES),
            "radau_iia (index 1)": dict(method="radau_iia"),
            "rodas4 (index 1)": dict(method="rodas4"),
            "cvode_bdf (index 1)": dict(method="cvode_bdf")}
    tols = (1e-3, 1e-5, 1e-7) if quick else (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
    reps = 1 if quick else 3
    wp = []
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for label, kw in runs.items():
        pts = []
        for tol in tols:
            best = math.inf
            for _ in range(reps):
                t0 = time.perf_counter()
                r = simulate(m, SPAN, rtol=tol, atol=tol, **kw)
                best = min(best, time.perf_counter() - t0)
            err = float(np.abs(r.q[:, -1] - qref).max())
            pts.append((err, best))
            wp.append((label, f"{tol:.0e}", f"{err:.2e}", f"{best * 1e3:.2f}",
                       r.stats["nsteps"]))
            summary.add("rn", label, "time_s", best, rtol=tol)
            summary.add("rn", label, "error_q_2s", err, rtol=tol)
        e, t = np.array(pts).T
        ax.loglog(e, t * 1e3, "o-", label=label)
    ax.set(xlabel="max |q(2 s) - q_ref| [m, rad]", ylabel="time [ms]",
           title="RN stiff double pendulum")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    _save(fig, d / "work_precision.png", progress)
    md = ["## Work-precision (best of a few runs)", "",
          "| run | tol | error q(2 s) | time [ms] | steps |", "|---|---|---|---|---|"]
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in wp] + [""]
    summary.text("### RN work-precision", "")
    summary.table(("run", "tol", "error q(2 s)", "time [ms]", "steps"), wp)
    return md
