"""Ensemble benchmark: 64 members of the RN paper's stiff double pendulum with k2
varied, serially, on a local process pool and a thread pool of 1 and 2 workers, and
on a Dask LocalCluster (loopback) of 1 and 2 worker processes.

Every configuration is timed in each of ``ROUNDS`` interleaved rounds; the report
gives the median wall time and CPU time (this process's, every thread, plus the
process pool's workers', from /proc on Linux; the Dask workers' CPU is not counted),
the speed-up against the serial loop, CPU over the serial loop's, the members' own
time on a CPU, waiting for a CPU (the machine's other work) and blocked (the GIL),
the load average, and whether every member equals the serial run to the bit.  The
process pool is started once per session and reused: its first call (the fork
server and the workers importing mbint) is timed apart, as is the Dask cluster's
start-up (a user's cluster is running already).

Run by ``make bench`` (tests/benchmarks/test_bench_ensemble.py); writes
``out/bench_ensemble.md``.
"""
from __future__ import annotations

import operator
import os
import statistics
import time
from pathlib import Path

import numpy as np

import mbint
from mbint import _pools, models
from mbint.__main__ import _Probed, _timed

N_MEMBERS = 64
ROUNDS = 3
T_SPAN = (0.0, 10.0)
OPTIONS = dict(method="radau_iia", rtol=1e-8, atol=1e-10, t_eval=np.linspace(0.0, 10.0, 501))
K2 = np.geomspace(1e3, 3e5, N_MEMBERS)
OUT_MD = Path(__file__).resolve().parents[2] / "out" / "bench_ensemble.md"


def task(reduced=False):
    """The member: simulate; reduced: keep only the relative angle (501 floats) instead of
    the Trajectory (its arrays, model and statistics travel back from the worker)."""
    reduce = operator.methodcaller("output", "relative_angle") if reduced else None
    return mbint.SimulationTask(models.stiff_double_pendulum, T_SPAN, reduce=reduce, **OPTIONS)


def params():
    return [{"k2": float(k)} for k in K2]


def identical(a, b):
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("t", "q", "qd", "qdd", "lam"))


def run_all(rounds=ROUNDS):
    """Time every configuration; returns a dict with rows and the reference runs."""
    import distributed

    tk, ps = task(), params()
    t = time.perf_counter()
    serial = [tk(p) for p in ps]
    first_serial = time.perf_counter() - t
    tr = task(reduced=True)
    ptk, ptr = _Probed(tk), _Probed(tr)
    load = [os.getloadavg()[0]]

    def run_config(kind, n, client=None):
        if kind.startswith("serial"):
            return [ptk(p) for p in ps]
        t_ = ptr if "reduced" in kind else ptk
        if kind.startswith("dask"):
            return mbint.ensemble(t_, ps, client=client, progress=False)
        return mbint.ensemble(t_, ps, n_workers=n, backend=kind.split(",")[0], progress=False)

    def check(kind, res):
        res = [r for r, _ in res]
        if "reduced" in kind:
            ok = all(np.array_equal(a.output("relative_angle"), b) for a, b in zip(serial, res))
        else:
            ok = all(identical(a, b) for a, b in zip(serial, res))
        return len(res) == len(serial) and ok

    def timed(kind, n, client=None):
        """(result, [wall, CPU or None, members' wall, on CPU, waiting for a CPU])"""
        pids = _pools._POOL.pids if kind.startswith("processes") else None
        res, wall, cpu = _timed(lambda: run_config(kind, n, client), pids)
        if kind.startswith("dask"):
            cpu = None  # the workers' CPU is not counted
        return res, [wall, cpu, *np.array([m for _, m in res]).sum(axis=0)]

    # phase 1: the local pools, no Dask client in this process; phase 2: with the
    # clusters running (their clients' event loop shares this process), each phase
    # against its own serial loop
    local = [("serial loop", None), ("processes", 1), ("processes", 2), ("threads", 1),
             ("threads", 2), ("processes, reduced", 2)]
    remote = [("serial loop (Dask clients open)", None), ("dask", 1), ("dask", 2),
              ("dask, reduced", 2)]
    times = {c: [] for c in local + remote}
    same = {c: True for c in local + remote}
    # the pool's first call of a session: the fork server and the workers start
    _pools.shutdown_pool()
    _, pool_start = timed("processes", 2)
    for _ in range(rounds):
        for kind, n in local:
            res, row = timed(kind, n)
            times[(kind, n)].append(row)
            same[(kind, n)] &= check(kind, res)
    # the pool's fixed cost per call, once started: an ensemble of two trivial members
    t = time.perf_counter()
    mbint.ensemble(abs, [1, 2], n_workers=2, backend="processes", progress=False)
    pool_overhead = time.perf_counter() - t
    clusters = {}
    startup = {}
    try:
        for n in (1, 2):
            t = time.perf_counter()
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                               processes=True, host="127.0.0.1",
                                               dashboard_address=None,
                                               worker_dashboard_address=None)
            clusters[n] = (cluster, distributed.Client(cluster))
            startup[n] = time.perf_counter() - t
        for _ in range(rounds):
            for kind, n in remote:
                res, row = timed(kind, n, clusters[n][1] if n else None)
                times[(kind, n)].append(row)
                same[(kind, n)] &= check(kind, res)
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()
    configs = local + remote
    load.append(os.getloadavg()[0])

    def med(c, i):
        v = [r[i] for r in times[c] if r[i] is not None]
        return statistics.median(v) if v else float("nan")

    base = {True: ("serial loop", None), False: ("serial loop (Dask clients open)", None)}
    rows = []
    for k, n in configs:
        b = base[(k, n) in local]
        w, c, mw, mrun, mwait = (med((k, n), i) for i in range(5))
        rows.append(dict(config=f"{k}" + ("" if n is None else f" x {n}"), median=w, cpu=c,
                         speedup=med(b, 0) / w, cpu_ratio=c / med(b, 1),
                         on_cpu=mrun / mw, wait_cpu=mwait / mw, blocked=(mw - mrun - mwait) / mw,
                         identical=same[(k, n)], times=[r[0] for r in times[(k, n)]]))
    base_local = med(base[True], 0)
    return dict(rows=rows, serial=serial, per_member=base_local / N_MEMBERS,
                cpu_per_member=med(base[True], 1) / N_MEMBERS, first_serial=first_serial,
                dask_startup=startup, pool_overhead=pool_overhead, pool_start=pool_start,
                cores=os.cpu_count(), load=load)


def write_report(res):
    def pct(x):
        return f"{100 * x:.0f}"

    lines = [f"# Ensemble: {N_MEMBERS} members, stiff double pendulum (RN 5.1), k2 from "
             f"{K2[0]:g} to {K2[-1]:g}",
             "",
             f"{OPTIONS['method']}, rtol {OPTIONS['rtol']:g}, t in {T_SPAN}, 501 output points; "
             f"{res['cores']} cores (load average {res['load'][0]:.1f} before, "
             f"{res['load'][1]:.1f} after: the machine is shared); median of {ROUNDS} "
             f"interleaved rounds; one member {1e3 * res['per_member']:.1f} ms wall, "
             f"{1e3 * res['cpu_per_member']:.1f} ms CPU serially.  "
             f"'reduced': each member returns its relative angle (501 floats) instead of "
             f"the Trajectory.  The Dask rows are measured after the local ones, with the "
             f"clusters running, against a serial loop timed then.  CPU: this process's "
             f"(every thread) and the process pool's workers' (the Dask workers' is not "
             f"counted: n/a).  Members: the share of their threads' time on a CPU, runnable "
             f"but waiting for a CPU (the machine's other work), and blocked (the GIL, I/O); "
             f"a speed-up below the worker count with CPU near the serial loop's and members "
             f"waiting for a CPU means the cores were busy with other work.",
             "",
             "| configuration | wall time [s] | speed-up vs serial | CPU [s] | CPU / serial "
             "| members on CPU [%] | waiting for a CPU [%] | blocked [%] "
             "| bit-identical to serial |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        cpu = "n/a" if r["cpu"] != r["cpu"] else f"{r['cpu']:.3f}"
        ratio = "n/a" if r["cpu"] != r["cpu"] else f"{r['cpu_ratio']:.2f}"
        lines.append(f"| {r['config']} | {r['median']:.3f} | {r['speedup']:.2f} | {cpu} | "
                     f"{ratio} | {pct(r['on_cpu'])} | {pct(r['wait_cpu'])} | "
                     f"{pct(r['blocked'])} | {'yes' if r['identical'] else 'NO'} |")
    ps = res["pool_start"]
    lines += ["",
              f"Process pool: its first call of a session (the fork server and the workers "
              f"start and import mbint) {ps[0]:.2f} s wall; once started, a call of two "
              f"trivial members {res['pool_overhead']:.3f} s.  Dask LocalCluster start-up "
              f"(not in the times): 1 worker {res['dask_startup'][1]:.2f} s, 2 workers "
              f"{res['dask_startup'][2]:.2f} s."]
    text = "\n".join(lines) + "\n"
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    return text


if __name__ == "__main__":
    print(write_report(run_all()))
