"""Demo section: a parameter sweep with :func:`mbint.ensemble`, saved as NetCDF.

The stiff double pendulum of the RN paper (section 5.1) with its link spring k2 varied:
the largest bend of the lower link after the first quarter of the run (the
initial bend, -pi/12, is the same for every k2) against k2, one run per value on a local process
pool (serially with ``quick``), the stacked Dataset written to ``sweep/sweep.nc``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["section_sweep"]


def section_sweep(out, summary, quick, progress=print):
    """A k2 sweep of the stiff double pendulum (ensemble, NetCDF, a plot)."""
    import matplotlib.pyplot as plt

    import mbint
    from mbint import models

    from ..plot import _axes, line_style

    d = out / "sweep"
    d.mkdir(parents=True, exist_ok=True)
    n = 4 if quick else 16
    t_end = 0.5 if quick else 2.0
    task = mbint.SimulationTask(models.stiff_double_pendulum, (0.0, t_end), method="radau_iia",
                                rtol=1e-6, atol=1e-8, t_eval=np.linspace(0.0, t_end, 101))
    params = [{"k2": float(k)} for k in np.geomspace(1e3, 3e5, n)]
    res = mbint.ensemble(task, params, n_workers=1 if quick else 2, progress=False)
    progress(f"sweep: {res}")
    ds = res.to_xarray()
    ds.to_netcdf(d / "sweep.nc")
    late = ds["time"] >= t_end / 4
    bend = np.abs(ds["output_relative_angle"].where(late, drop=True)).max("time").values
    fig, ax = _axes(None)
    ax.plot(ds["k2"].values, bend, label=f"{len(params)} runs, radau_iia", **line_style(0, n))
    ax.set_xscale("log")
    ax.set_xlabel("link spring k2 [N m/rad]")
    ax.set_yscale("log")
    ax.set_ylabel(f"largest |theta2 - theta1| for t >= {t_end / 4:g} s [rad]")
    ax.set_title(f"stiff double pendulum (RN 5.1), t in [0, {t_end:g}] s")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3, which="both")
    fig.savefig(d / "bend_vs_k2.png", dpi=110)
    plt.close(fig)
    summary.text("## A sweep (mbint.ensemble)", "",
                 f"{len(params)} runs of the stiff double pendulum, k2 from {params[0]['k2']:g} "
                 f"to {params[-1]['k2']:g} N m/rad, on {res.backend} x {res.n_workers} in "
                 f"{res.wall_time:.2f} s; the Dataset is in `sweep/sweep.nc`.", "")
    summary.table(("k2 [N m/rad]", f"largest bend for t >= {t_end / 4:g} s [rad]"),
                  [(f"{p['k2']:.3g}", f"{b:.4g}") for p, b in zip(params, bend)])
    summary.text("![bend against k2](sweep/bend_vs_k2.png)", "")
    for p, b in zip(params, bend):
        summary.add("sweep", "radau_iia", f"max_bend_k2={p['k2']:.3g}", float(b))
