"""Command line of mbint (``python -m mbint`` or the console script ``mbint``).

Subcommands (each with ``--help``):

- ``demo [--out DIR] [--quick]``: the lecture notes' examples and the papers' models;
- ``run MODEL [--method M] [--t-end T] [--rtol R] [--atol A] [--out FILE]``: simulate
  a model of :mod:`mbint.models`, write the NetCDF result (:meth:`Trajectory.save`)
  and its plots (coordinates, energy, constraint violation) beside it;
- ``bench [--members N] [--workers W]``: an ensemble of the stiff double pendulum
  serially and on local pools, with the speed-ups;
- ``methods``: the table of methods.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _parser():
    parser = argparse.ArgumentParser(prog="mbint",
                                     description="mbint: integrators for multibody dynamics.")
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    p_demo = sub.add_parser("demo", help="reproduce the lecture notes' examples into --out",
                            description="Reproduce the lecture notes' examples: figures, "
                                        "summary.md and summary.csv.")
    p_demo.add_argument("--out", default="out", help="output directory (default: out)")
    p_demo.add_argument("--quick", action="store_true",
                        help="smaller settings, a few seconds (used by the tests)")

    from .models import PAPER_MODELS

    p_run = sub.add_parser("run", help="simulate a model of mbint.models into a NetCDF file",
                           description="Simulate a model of mbint.models; write the result "
                                       "(NetCDF-4, readable by xarray without mbint) and PNG "
                                       "plots of its coordinates, energy and constraint "
                                       "violation beside it.")
    p_run.add_argument("model", choices=sorted(PAPER_MODELS), metavar="MODEL",
                       help="one of: " + ", ".join(sorted(PAPER_MODELS)))
    p_run.add_argument("--method", default="radau_iia", help="a method of `mbint methods` "
                       "(default radau_iia)")
    p_run.add_argument("--t-end", type=float, default=None,
                       help="end time in s (default: the end of the model's t_span)")
    p_run.add_argument("--rtol", type=float, default=None,
                       help="relative tolerance (default: the model's setting)")
    p_run.add_argument("--atol", type=float, default=None,
                       help="absolute tolerance (default: the model's setting)")
    p_run.add_argument("--h", type=float, default=None, help="fixed step in s")
    p_run.add_argument("--out", default=None,
                       help="result file (default out/<model>_<method>.nc)")
    p_run.add_argument("--no-plots", action="store_true", help="write the NetCDF file only")
    p_run.add_argument("--progress", action="store_true", help="show a progress bar")

    p_bench = sub.add_parser("bench", help="ensemble speed-up on this machine",
                             description="An ensemble of the stiff double pendulum (RN 5.1) "
                                         "with k2 varied: serially, on a process pool and a "
                                         "thread pool; wall times, speed-ups, and whether the "
                                         "members equal the serial runs to the bit.  The full "
                                         "benchmark (with Dask) is `make bench`.")
    p_bench.add_argument("--members", type=int, default=32, help="ensemble size (default 32)")
    p_bench.add_argument("--workers", type=int, default=None,
                         help="pool size (default: the number of cores)")
    p_bench.add_argument("--t-end", type=float, default=5.0, help="simulated time in s")

    sub.add_parser("methods", help="the table of methods",
                   description="Every method: order, step control, implicit, Jacobian, "
                               "mass matrix, backend.")
    return parser


def _run(args):
    import mbint
    from mbint import models

    m = models.PAPER_MODELS[args.model]()
    t0, tf = m.t_span if m.t_span is not None else (0.0, 1.0)
    if args.t_end is not None:
        tf = args.t_end
    out = Path(args.out) if args.out else Path("out") / f"{args.model}_{args.method}.nc"
    t = time.perf_counter()
    traj = mbint.simulate(m, (t0, tf), method=args.method, rtol=args.rtol, atol=args.atol,
                          h=args.h, dense_output=True, progress=args.progress)
    wall = time.perf_counter() - t
    path = traj.save(out)
    print(f"{traj!r}\n  {traj.stats}\n  wall time {wall:.3f} s\n  written {path}")
    if not args.no_plots:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        for what, fig in (("q", traj.plot("q")), ("energy", traj.plot_energy()),
                          ("violation", traj.plot_violation() if m.nc else None)):
            if fig is None:
                continue
            png = path.with_name(f"{path.stem}_{what}.png")
            fig.savefig(png, dpi=110)
            plt.close(fig)
            print(f"  written {png}")
    return 0 if traj.success else 1


def _bench(args):
    import os

    import numpy as np

    import mbint
    from mbint import models

    n = args.members
    if n < 1:
        raise SystemExit("bench: --members must be positive")
    workers = args.workers or os.cpu_count() or 1
    task = mbint.SimulationTask(models.stiff_double_pendulum, (0.0, args.t_end),
                                method="radau_iia", rtol=1e-8, atol=1e-10,
                                t_eval=np.linspace(0.0, args.t_end, 201))
    params = [{"k2": float(k)} for k in np.geomspace(1e3, 3e5, n)]
    t = time.perf_counter()
    serial = [task(p) for p in params]
    base = time.perf_counter() - t
    print(f"{n} members of the stiff double pendulum (radau_iia, rtol 1e-8, t_end "
          f"{args.t_end:g} s) on {os.cpu_count()} cores")
    print(f"{'configuration':<18} {'wall [s]':>9} {'speed-up':>9}  bit-identical")
    print(f"{'serial loop':<18} {base:9.3f} {1.0:9.2f}  yes")
    for backend in ("processes", "threads"):
        res = mbint.ensemble(task, params, n_workers=workers, backend=backend, progress=False)
        same = all(np.array_equal(a.q, b.q) and np.array_equal(a.lam, b.lam)
                   for a, b in zip(serial, res))
        print(f"{backend + f' x {workers}':<18} {res.wall_time:9.3f} "
              f"{base / res.wall_time:9.2f}  {'yes' if same else 'NO'}")
    return 0


def _methods():
    import mbint

    rows = [("name", "order", "step control", "implicit", "Jacobian", "mass", "backend")]
    for info in mbint.methods():
        rows.append((info.name, str(info.order), info.adaptive if not info.fixed_step or
                     info.adaptive else "fixed", "yes" if info.implicit else "",
                     "yes" if info.needs_jacobian else "", "yes" if info.mass_matrix else "",
                     info.backend))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))
    return 0


def main(argv=None):
    """Entry point of ``python -m mbint`` and of the console script ``mbint``.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status (``run``: 1 when the integration failed).
    """
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from .demo import demo

        demo(args.out, quick=args.quick)
        return 0
    if args.command == "run":
        return _run(args)
    if args.command == "bench":
        return _bench(args)
    return _methods()


if __name__ == "__main__":
    sys.exit(main())
