"""The stiff problems of the Test Set for IVP Solvers (tests/testset.py: E5, ROBER, OREGO,
HIRES, VDPOLM; E5 also with the atol 1e-26 of the issue that found the Rosenbrock
methods' invariant drift) against every Rosenbrock method and radau_iia, bdf, cvode_bdf
at rtol 1e-4 .. 1e-10: status, error in units of the tolerance at the end (max over the
compared quantities of |y - ref| / (atol + rtol |ref|)), steps, f evaluations, CPU time.

Run: ``python tests/benchmarks/bench_testset.py`` (writes out/bench_testset.md) or
``make bench`` (tests/benchmarks/test_bench_testset.py asserts on the same rows).
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import mbint  # noqa: E402
import testset as TS  # noqa: E402

OUT_MD = ROOT / "out" / "bench_testset.md"
RTOLS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
VARIANTS = ("E5", "E5/atol 1e-26", "ROBER", "OREGO", "HIRES", "VDPOLM")
METHODS = tuple(TS.ROSENBROCK) + tuple(TS.CONTROLS)


def one(variant, method, rtol):
    p = TS.PROBLEMS[variant.split("/")[0]]
    atol = TS.ATOL_E5_ISSUE if variant.endswith("1e-26") else p.atol(rtol)
    t0 = time.process_time()
    r = mbint.solve_ivp(p.f, (0.0, p.t_end), p.y0, method=method, rtol=rtol, atol=atol,
                        jac=p.jac)
    cpu = time.process_time() - t0
    err = p.error(r.y[:, -1], rtol, atol) if r.status == 0 else math.nan
    return {"problem": variant, "method": method, "rtol": rtol, "status": int(r.status),
            "message": r.message, "err": err, "nsteps": int(r.nsteps), "nfev": int(r.nfev),
            "cpu": cpu}


def run(variants=VARIANTS, methods=METHODS, rtols=RTOLS):
    return [one(v, m, rtol) for v in variants for m in methods for rtol in rtols]


def report(rows):
    lines = ["# The stiff problems of the IVP test set", "",
             "error / tolerance at t_end (status < 0: the run said it failed), steps, "
             "CPU seconds", ""]
    rtols = sorted({r["rtol"] for r in rows}, reverse=True)
    for variant in dict.fromkeys(r["problem"] for r in rows):
        lines += [f"## {variant}", "", "| method | " + " | ".join(f"{t:.0e}" for t in rtols)
                  + " |", "|---" * (len(rtols) + 1) + "|"]
        for method in dict.fromkeys(r["method"] for r in rows if r["problem"] == variant):
            cells = []
            for t in rtols:
                r = next(x for x in rows if x["problem"] == variant and x["method"] == method
                         and x["rtol"] == t)
                e = f"{r['err']:.3g}" if r["status"] == 0 else f"status {r['status']}"
                cells.append(f"{e} ({r['nsteps']}, {r['cpu']:.2f} s)")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    text = report(run())
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(text)
    print(text)
    print(f"written to {OUT_MD}")
