"""Demo of the RN paper's 14-body HMMWV (section 5.2), a :class:`mbint.SpatialModel`,
under ``<out>/vehicle/``.

:func:`section_vehicle` has the signature of the sections of ``python -m mbint demo``.
It writes

- ``vehicle/fig5.png``: the chassis height and the step size of
  ``rosenbrock_nystrom`` on the state-space formulation at rtol = atol = 1e-3 over
  5 s (the paper's Fig 5), with the chassis height of ``cvode_bdf`` (index 1);
- ``vehicle/frame.png``: the vehicle on the bump (the animation's projection);
- ``vehicle/vehicle.md``: the counts, the dominant eigenvalue at t = 0 and the
  runs (also added to the demo's summary).

The full Tables 3-4 are the benchmark ``tests/benchmarks/bench_vehicle.py``.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .. import models
from ..mbs.simulate import simulate
from ..mbs.statespace import StateSpace

__all__ = ["section_vehicle"]


def section_vehicle(out, summary, quick, progress=print):
    """The RN paper's section 5.2: counts, eigenvalue, Fig 5."""
    import matplotlib.pyplot as plt

    d = Path(out) / "vehicle"
    d.mkdir(parents=True, exist_ok=True)
    m = models.hmmwv()
    T = 2.0 if quick else 5.0
    S = StateSpace(m)
    J1, J2 = S.jacobians()
    nd = len(S.v)
    w = np.linalg.eigvals(np.block([[np.zeros((nd, nd)), np.eye(nd)], [J1, J2]]))
    lam = w[np.argmax(np.abs(w))]
    md = ["# RN paper section 5.2: the HMMWV over a bump", "",
          f"{len(m.bodies)} bodies, {m.nq} coordinates, {m.nc} constraint equations, "
          f"{m.ndof} degrees of freedom (paper: 98, 80, 18; see models.hmmwv for the layout).", "",
          f"Dominant eigenvalue of the state-space ODE at t = 0: {lam.real:.4g} "
          f"(paper: about -2.6e5).", ""]
    summary.add("vehicle", "state_space", "dominant_eigenvalue_real", lam.real)
    runs = []
    trs = {}
    for method, form in (("rosenbrock_nystrom", "state_space"), ("cvode_bdf", "index1")):
        progress(f"vehicle: {method} ({form}), {T:g} s")
        t0 = time.perf_counter()
        tr = simulate(m, (0.0, T), method=method, formulation=form, rtol=1e-3, atol=1e-3)
        dt = time.perf_counter() - t0
        if not tr.success:
            raise RuntimeError(f"vehicle demo, {method}: {tr.message}")
        trs[method] = tr
        runs.append((method, form, f"{dt:.2f}", tr.stats["nsteps"], f"{tr.q[2, -1]:.4f}"))
        summary.add("vehicle", method, "nsteps", tr.stats["nsteps"], rtol=1e-3)
        summary.add("vehicle", method, "chassis_height_end", tr.q[2, -1], rtol=1e-3)
    head = ("method", "formulation", "time [s]", "steps", f"z({T:g} s) [m]")
    md += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in runs] + [""]
    summary.text("## RN section 5.2: the HMMWV", "", *md[2:5])
    summary.table(head, runs)

    tr = trs["rosenbrock_nystrom"]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(tr.t, tr.q[2], "C0-", label="rosenbrock_nystrom (state space)")
    cv = trs["cvode_bdf"]
    ax.plot(cv.t, cv.q[2], "C2--", label="cvode_bdf (index 1)")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("chassis height z [m]")
    ax.legend(loc="upper right")
    ax2 = ax.twinx()
    ax2.semilogy(tr.t[1:], np.diff(tr.t), "C1.", ms=3)
    ax2.set_ylabel("step size of rosenbrock_nystrom [s]", color="C1")
    ax.set_title("RN Fig. 5: HMMWV chassis height and step size (tol 1e-3)")
    fig.savefig(d / "fig5.png", dpi=100)
    plt.close(fig)
    # one frame of the animation (frames every 0.2 s): the front wheels on the bump
    frames = tr.animate(d / "frame_{:02d}.png", fps=5.0, trace="chassis")
    keep = frames[3]                                # t = 0.6 s
    for f in frames:
        if f != keep:
            Path(f).unlink()
    Path(keep).replace(d / "frame.png")
    (d / "vehicle.md").write_text("\n".join(md) + "\n")
    return dict(eigenvalue=lam, runs=runs)
