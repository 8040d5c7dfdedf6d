"""Cost of forward sensitivities (issue 26): CPU time of a run with np sensitivities over
the plain run, np = 1, 2, 5, for bdf and radau_iia on a stiff problem (Robertson's
kinetics, CVODES' cvsRoberts_FSA: k1, k2, k3 and the initial values y1(0), y2(0) as
parameters), medians of interleaved repetitions (the plain and the sensitivity runs
alternate, so that the machine's load hits both alike).

Both runs get the analytic Jacobian; the sensitivity right-hand side is then J s_k (the
user's jac, once a right-hand side) plus a centred difference of f in p_k (2 f a
parameter of p; none for an initial value), or the analytic df/dp (``dfdp`` rows).  The
issue's target is ratio <= 1 + 0.5 np.  The f, J and LU counts are printed with the
times: the cost of a run here is dominated by its Python calls (f, jac).

Run: ``python tests/benchmarks/bench_sens.py [--json FILE] [--reps N]`` (writes
out/bench_sens.md)."""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import time

import numpy as np

import mbint

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_sens.md"
P0 = np.array([0.04, 3e7, 1e4])
Y0 = [1.0, 0.0, 0.0]
ATOL = np.array([1e-8, 1e-12, 1e-8])
RTOL = 1e-6
T_END = 40.0
METHODS = ("bdf", "radau_iia")
NPS = (1, 2, 5)


def rhs(t, y, p):
    k1, k2, k3 = p
    return [-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2,
            k2 * y[1] ** 2]


def jac(t, y, p):
    k1, k2, k3 = p
    return [[-k1, k3 * y[2], k3 * y[1]],
            [k1, -k3 * y[2] - 2 * k2 * y[1], -k3 * y[1]],
            [0.0, 2 * k2 * y[1], 0.0]]


def dfdp_full(t, y, p):
    return np.array([[-y[0], 0.0, y[1] * y[2]], [y[0], -y[1] ** 2, -y[1] * y[2]],
                     [0.0, y[1] ** 2, 0.0]])


def request(npar, analytic):
    """np = 1: k1; 2: k1, k2; 5: k1, k2, k3, y1(0), y2(0)"""
    params = list(range(min(npar, 3)))
    initial = [0, 1][:max(0, npar - 3)]
    s = {"params": params, "initial": initial}
    if analytic:
        s["dfdp"] = lambda t, y, p: dfdp_full(t, y, p)[:, params]
    return s


def one(method, sens):
    p = P0.copy()
    t0 = time.process_time()
    r = mbint.solve_ivp(rhs, (0.0, T_END), Y0, method=method, args=(p,), rtol=RTOL, atol=ATOL,
                        jac=jac, sensitivities=sens)
    dt = time.process_time() - t0
    assert r.status == 0, r.message
    return dt, r


def call_costs(m=2000):
    """CPU seconds of one call of f, jac and the analytic dfdp (np = 5 columns), each with
    the conversion of its result to a float array (what the binding does)"""
    from mbint._ivp_sens import _dfdp
    p, y = P0.copy(), np.array([0.9, 3e-5, 0.1])
    dfdp = _dfdp(request(5, True)["dfdp"], 3, 3, 5, [0, 1, 2])
    out = []
    for fn in (rhs, jac, dfdp):
        t0 = time.process_time()
        for _ in range(m):
            np.asarray(fn(0.0, y, p), dtype=float)
        out.append((time.process_time() - t0) / m)
    return out


def measure(reps=7):
    rows = []
    cf, cj, cd = call_costs()
    for method in METHODS:
        for analytic in (False, True):
            for npar in NPS:
                sens = request(npar, analytic)
                tp, ts = [], []
                for _ in range(reps):  # interleaved
                    a, rp = one(method, None)
                    b, rs = one(method, sens)
                    tp.append(a)
                    ts.append(b)
                ratio = statistics.median(s / p for s, p in zip(ts, tp))
                rows.append(dict(method=method, np=npar, dfdp=analytic, ratio=ratio,
                                 target=1 + 0.5 * npar, t_plain=statistics.median(tp),
                                 t_sens=statistics.median(ts), nfev_plain=rp.nfev,
                                 njev_plain=rp.njev, nsteps_plain=rp.nsteps,
                                 nfev_base=rs.nfev_base, njev_base=rs.njev_base,
                                 nfev_aug=rs.nfev, nsteps_sens=rs.nsteps, nlu_plain=rp.nlu,
                                 nlu_sens=rs.nlu, cost_f=cf, cost_jac=cj, cost_dfdp=cd))
    return rows


def table(rows):
    lines = ["| method | np | df/dp | CPU ratio | target 1 + np/2 | steps plain / sens | "
             "f plain / sens | J plain / sens | LU plain / sens |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['method']} | {r['np']} | {'analytic' if r['dfdp'] else 'DQ'} | "
                     f"{r['ratio']:.2f} | {r['target']:.1f} | {r['nsteps_plain']} / "
                     f"{r['nsteps_sens']} | {r['nfev_plain']} / {r['nfev_base']} | "
                     f"{r['njev_plain']} / {r['njev_base']} | {r['nlu_plain']} / {r['nlu_sens']} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    rows = measure(a.reps)
    md = table(rows)
    print(md)
    OUT_MD.parent.mkdir(exist_ok=True)
    OUT_MD.write_text("# Forward sensitivities: CPU time over the plain run\n\n"
                      f"Robertson, rtol {RTOL}, t in [0, {T_END}], analytic J; "
                      f"medians of {a.reps} interleaved repetitions.\n\n" + md + "\n")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
