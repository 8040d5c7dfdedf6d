"""Command line of mbint (``python -m mbint`` or the console script ``mbint``).

Subcommands (each with ``--help``):

- ``demo [--out DIR] [--quick]``: the lecture notes' examples and the papers' models;
- ``run MODEL [--method M] [--t-end T] [--rtol R] [--atol A] [--out FILE]``: simulate
  a model of :mod:`mbint.models`, write the NetCDF result (:meth:`Trajectory.save`)
  and its plots (coordinates, energy, constraint violation) beside it;
- ``bench [--members N] [--workers W] [--t-end T] [--rtol R] [--repeat K]``: an
  ensemble of the stiff double pendulum serially, on threads and on the process
  pool: wall and CPU times, speed-ups, the load average;
- ``methods``: the table of methods.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _parser():
    parser = argparse.ArgumentParser(prog="mbint",
                                     description="mbint: integrators for multibody dynamics.")
    sub = parser.add_subparsers(dest="command", metavar="command", required=True)
    p_demo = sub.add_parser("demo", help="reproduce the five papers' examples into --out",
                            description="Reproduce the examples, figures and tables of the "
                                        "five source papers (the lecture notes (LN), the "
                                        "local linearization method (LLM), the Rosenbrock-"
                                        "Nystrom paper (RN, with its HMMWV), the singular-"
                                        "perturbation scheme (SP), the L-stable block method "
                                        "(LS)), the mechanism gallery and a parameter sweep: "
                                        "figures, summary.md and summary.csv in --out.")
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
                                         "with k2 varied: serially, on threads and on the "
                                         "process pool (its first call, which starts the "
                                         "pool, apart), in interleaved rounds; the median "
                                         "wall and CPU times (the process pool's: its "
                                         "workers' too, from /proc on Linux), the speed-ups, "
                                         "the load average, and whether the members equal "
                                         "the serial runs to the bit.  The defaults make "
                                         "members of about 0.1 s.  The full benchmark (with "
                                         "Dask) is `make bench`.")
    p_bench.add_argument("--members", type=int, default=32, help="ensemble size (default 32)")
    p_bench.add_argument("--workers", type=int, default=None,
                         help="pool size (default: the number of cores)")
    p_bench.add_argument("--t-end", type=float, default=10.0,
                         help="simulated time in s (default 10)")
    p_bench.add_argument("--rtol", type=float, default=1e-10,
                         help="relative tolerance (default 1e-10; atol = rtol / 100)")
    p_bench.add_argument("--repeat", type=int, default=3,
                         help="rounds of every configuration (default 3; medians)")

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


def _cpu_of(pids):
    """CPU seconds (user + system) of the processes pids, from /proc/<pid>/stat (Linux;
    None elsewhere or when one cannot be read)."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for pid in pids:
            with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        return total
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _timed(run, pool_pids=None):
    """(result, wall s, CPU s) of run(): this process's CPU (every thread), plus the
    pool workers' CPU (pool_pids: the pool's workers, before and after) if given."""
    before = {p: _cpu_of([p]) for p in pool_pids()} if pool_pids else {}
    c, t = time.process_time(), time.perf_counter()
    res = run()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    if pool_pids:
        after = {p: _cpu_of([p]) for p in pool_pids()}
        if any(v is None for v in after.values()) or len(after) < len(before):
            return res, wall, None  # a worker could not be read, or did not come back
        cpu += sum(v - (before.get(p) or 0.0) for p, v in after.items())
    return res, wall, cpu


def _schedstat():
    """(seconds on a CPU, seconds runnable but waiting for a CPU) of the calling thread,
    from /proc/thread-self/schedstat (Linux; NaN elsewhere)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as fh:
            run, wait = fh.read().split()[:2]
        return int(run) * 1e-9, int(wait) * 1e-9
    except (OSError, ValueError):
        return float("nan"), float("nan")


class _Probed:
    """task(p) and the member's own times: (result, (wall, on a CPU, waiting for a CPU))
    of the thread that ran it; what is left of its wall time it was blocked (the GIL,
    I/O)."""

    def __init__(self, task):
        self.task = task

    def __call__(self, p):
        run0, wait0 = _schedstat()
        t = time.perf_counter()
        res = self.task(p)
        wall = time.perf_counter() - t
        run1, wait1 = _schedstat()
        return res, (wall, run1 - run0, wait1 - wait0)


def _bench(args):
    import statistics

    import numpy as np

    import mbint
    from mbint import _pools, models
    from mbint.ensemble import _local_setup

    n = args.members
    if n < 1 or args.repeat < 1:
        raise SystemExit("bench: --members and --repeat must be positive")
    workers = args.workers or os.cpu_count() or 1
    task = mbint.SimulationTask(models.stiff_double_pendulum, (0.0, args.t_end),
                                method="radau_iia", rtol=args.rtol, atol=args.rtol / 100,
                                t_eval=np.linspace(0.0, args.t_end, 201))
    probed = _Probed(task)
    params = [{"k2": float(k)} for k in np.geomspace(1e3, 3e5, n)]
    load = os.getloadavg()
    serial = [task(p) for p in params]  # the reference (and a warm-up)

    def ens(backend):
        return lambda: mbint.ensemble(probed, params, n_workers=workers, backend=backend,
                                      progress=False)

    configs = [("serial loop", lambda: [probed(p) for p in params], None),
               (f"threads x {workers}", ens("threads"), None),
               (f"processes x {workers}", ens("processes"), _pools._POOL.pids)]
    default = _local_setup(workers, None, None, task, params)[1]
    _pools.shutdown_pool()  # the first call starts the pool: timed apart
    _, cold_wall, cold_cpu = _timed(ens("processes"), _pools._POOL.pids)
    rows = {name: [] for name, _, _ in configs}
    identical = {name: True for name, _, _ in configs}
    for _ in range(args.repeat):
        for name, run, pids in configs:
            res, wall, cpu = _timed(run, pids)
            members = np.array([m for _, m in res]).sum(axis=0)  # wall, on CPU, waiting
            rows[name].append((wall, cpu, *members))
            identical[name] &= len(res) == n and all(
                np.array_equal(a.q, b.q) and np.array_equal(a.lam, b.lam)
                for a, (b, _) in zip(serial, res))
    load_after = os.getloadavg()

    def med(name, i):
        v = [r[i] for r in rows[name] if r[i] is not None]
        return statistics.median(v) if v else float("nan")

    base_wall, base_cpu = med("serial loop", 0), med("serial loop", 1)
    print(f"{n} members of the stiff double pendulum (radau_iia, rtol {args.rtol:g}, t_end "
          f"{args.t_end:g} s): one member {base_cpu / n:.3f} s CPU, {base_wall / n:.3f} s wall "
          f"serially; {os.cpu_count()} cores, load average {load[0]:.2f} before, "
          f"{load_after[0]:.2f} after; median of {args.repeat} rounds")
    print(f"{'':<24} {'':>9} {'':>8} {'':>9} {'':>10}  {'members: time [%]':^26}")
    print(f"{'configuration':<24} {'wall [s]':>9} {'CPU [s]':>8} {'speed-up':>9} "
          f"{'CPU/serial':>10}  {'on CPU':>8} {'wait CPU':>8} {'blocked':>8}  bit-identical")
    for name, _, _ in configs:
        w, c, mw, mrun, mwait = (med(name, i) for i in range(5))
        tag = " (default)" if name.startswith(default) else ""
        print(f"{name + tag:<24} {w:9.3f} {c:8.3f} {base_wall / w:9.2f} {c / base_cpu:10.2f}  "
              f"{100 * mrun / mw:8.1f} {100 * mwait / mw:8.1f} "
              f"{100 * (mw - mrun - mwait) / mw:8.1f}  {'yes' if identical[name] else 'NO'}")
    cold = "n/a" if cold_cpu is None else f"{cold_cpu:.3f}"
    print(f"{'processes, pool start':<24} {cold_wall:9.3f} {cold:>8} {base_wall / cold_wall:9.2f}"
          f"  (the first call of a session: the fork server and the workers start)")
    print("CPU: this process's (all threads) and the pool workers' (from /proc).  Members: "
          "the time of the threads that ran them on a CPU, runnable but waiting for a CPU "
          "(other work on the machine), and blocked (the GIL, I/O); the kernel books these "
          "times at context switches, so each member's split is off by up to a time slice "
          "(a few ms: a few % of 0.1 s, more on a loaded machine).  A speed-up below the "
          "worker count with CPU/serial near 1 and members waiting for a CPU means the cores "
          "were busy with other work (see the load average), not that the runs serialize.")
    return 0


def _order(info):
    """The order column: the block methods' order depends on r (and nodes, pade): the
    order of their default r, said so."""
    if "r" not in info.options:
        return str(info.order)
    from mbint.stability import block_coefficients

    c = block_coefficients(info.name)
    return f"{c['order']} (r={c['r']})"


def _methods():
    import mbint
    from mbint.methods import ALIASES

    rows = [("name", "order", "step control", "implicit", "Jacobian", "mass", "backend",
             "aliases (SciPy, MATLAB)")]
    for info in mbint.methods():
        aliases = sorted(a for a, m in ALIASES.items() if m == info.name and a != info.name)
        rows.append((info.name, _order(info), info.adaptive if not info.fixed_step or
                     info.adaptive else "fixed", "yes" if info.implicit else "",
                     "yes" if info.needs_jacobian else "", "yes" if info.mass_matrix else "",
                     info.backend, ", ".join(aliases)))
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
