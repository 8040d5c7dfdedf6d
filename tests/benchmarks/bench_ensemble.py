"""Ensemble benchmark: 64 members of the RN paper's stiff double pendulum with k2
varied, serially, on a local process pool and a thread pool of 1 and 2 workers, and
on a Dask LocalCluster (loopback) of 1 and 2 worker processes.

Every configuration is timed in each of ``ROUNDS`` interleaved rounds; the report
gives the median wall time, the speed-up against the serial loop, and whether every
member equals the serial run to the bit.  The pool's start-up (a forkserver
importing mbint, once per ensemble call) is part of its time, as it is of a user's
call; the Dask cluster is started once before the rounds (a user's cluster is
running already) and its start-up is reported apart.

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
from mbint import models

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
    load = [os.getloadavg()[0]]

    def run_config(kind, n, client=None):
        if kind.startswith("serial"):
            return [tk(p) for p in ps]
        t_ = tr if "reduced" in kind else tk
        if kind.startswith("dask"):
            return mbint.ensemble(t_, ps, client=client, progress=False)
        return mbint.ensemble(t_, ps, n_workers=n, backend=kind.split(",")[0], progress=False)

    def check(kind, res):
        if "reduced" in kind:
            ok = all(np.array_equal(a.output("relative_angle"), b) for a, b in zip(serial, res))
        else:
            ok = all(identical(a, b) for a, b in zip(serial, res))
        return len(res) == len(serial) and ok

    # phase 1: the local pools, no Dask client in this process; phase 2: with the
    # clusters running (their clients' event loop shares this process), each phase
    # against its own serial loop
    local = [("serial loop", None), ("processes", 1), ("processes", 2), ("threads", 1),
             ("threads", 2), ("processes, reduced", 2)]
    remote = [("serial loop (Dask clients open)", None), ("dask", 1), ("dask", 2),
              ("dask, reduced", 2)]
    times = {c: [] for c in local + remote}
    same = {c: True for c in local + remote}
    for _ in range(rounds):
        for kind, n in local:
            t = time.perf_counter()
            res = run_config(kind, n)
            times[(kind, n)].append(time.perf_counter() - t)
            same[(kind, n)] &= check(kind, res)
    # the pool's fixed cost: an ensemble of two trivial members
    t = time.perf_counter()
    mbint.ensemble(abs, [1, 2], n_workers=2, progress=False)
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
                t = time.perf_counter()
                res = run_config(kind, n, clusters[n][1] if n else None)
                times[(kind, n)].append(time.perf_counter() - t)
                same[(kind, n)] &= check(kind, res)
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()
    configs = local + remote
    load.append(os.getloadavg()[0])
    med = {c: statistics.median(v) for c, v in times.items()}
    base_local = med[("serial loop", None)]
    base_remote = med[("serial loop (Dask clients open)", None)]
    rows = [dict(config=f"{k}" + ("" if n is None else f" x {n}"), median=med[(k, n)],
                 speedup=(base_local if (k, n) in local else base_remote) / med[(k, n)],
                 identical=same[(k, n)], times=times[(k, n)])
            for k, n in configs]
    base = base_local
    return dict(rows=rows, serial=serial, per_member=base / N_MEMBERS, first_serial=first_serial,
                dask_startup=startup, pool_overhead=pool_overhead, cores=os.cpu_count(), load=load)


def write_report(res):
    lines = [f"# Ensemble: {N_MEMBERS} members, stiff double pendulum (RN 5.1), k2 from "
             f"{K2[0]:g} to {K2[-1]:g}",
             "",
             f"{OPTIONS['method']}, rtol {OPTIONS['rtol']:g}, t in {T_SPAN}, 501 output points; "
             f"{res['cores']} cores (load average {res['load'][0]:.1f} before, "
             f"{res['load'][1]:.1f} after: the machine is shared); median of {ROUNDS} "
             f"interleaved rounds; one member {1e3 * res['per_member']:.1f} ms serially.  "
             f"'reduced': each member returns its relative angle (501 floats) instead of "
             f"the Trajectory.  The Dask rows are measured after the local ones, with the "
             f"clusters running, against a serial loop timed then.",
             "",
             "| configuration | wall time [s] | speed-up vs serial | bit-identical to serial |",
             "|---|---|---|---|"]
    for r in res["rows"]:
        lines.append(f"| {r['config']} | {r['median']:.3f} | {r['speedup']:.2f} | "
                     f"{'yes' if r['identical'] else 'NO'} |")
    lines += ["",
              f"Process pool fixed cost (forkserver start, mbint import, two trivial members): "
              f"{res['pool_overhead']:.2f} s.  Dask LocalCluster start-up (not in the times): "
              f"1 worker {res['dask_startup'][1]:.2f} s, 2 workers {res['dask_startup'][2]:.2f} s."]
    text = "\n".join(lines) + "\n"
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    return text


if __name__ == "__main__":
    print(write_report(run_all()))
