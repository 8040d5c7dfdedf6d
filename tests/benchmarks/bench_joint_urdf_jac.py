"""The exact Jacobian of formulation="joint" on fixed-base URDF trees (issue 23;
csrc/mbs/joint_tree_deriv.c, O(n^2)), measured.

1. Per-call CPU cost of one Jacobian (d q''/dq, d q''/dq') on a chain of N rods with
   alternating joint axes (y, x), N = 10, 30, 100, 300, 1000: the O(n^2) exact one
   (mb_jtree_d_derivatives, what form_joint.c uses now), central differences of the
   ABA (4 N ABA calls) and the former exact one (mb_jtree_aba_derivatives: M^-1 by a
   dense Cholesky factor, O(N^3); form_joint.c used it up to 400 joints, differences
   above), timed in C (``joint_deriv_percall.c``, built here with ``cc -O2``,
   CLOCK_PROCESS_CPUTIME_ID, the three interleaved, medians of 5 rounds).  Exponents:
   slopes of log(cost) over log(N) from 100 to 1000 (the issue's target: <= 2.1).
2. radau_iia and bdf on formulation="joint", before (the main checkout's build,
   ``BEFORE``, default /work/main) and after (this checkout): UR5 and Panda, 1 s under
   gravity from a random pose at rest, and a chain of 450 rods (0.1 m, 0.1 kg; 0.05 s),
   where "before" took central differences (above 400 joints; TOLS[0] only).  rtol = atol = TOL;
   the error is the max-norm error of the final body coordinates against dop853 at
   rtol = atol = 1e-12 (1e-10 for the chain); CPU of the simulate call in a fresh
   process a run (repeated there until MIN_CPU, the mean), before and after
   interleaved, medians of ROUNDS.

Run ``python tests/benchmarks/bench_joint_urdf_jac.py`` (prints Markdown tables).  Not
part of the test suite.
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BEFORE = pathlib.Path(os.environ.get("BEFORE", "/work/main"))
SIZES = (10, 30, 100, 300, 1000)
ROUNDS, TOLS, MIN_CPU = 5, (1e-6, 1e-8), 0.3
CASES = [("ur5", "ur_description/urdf/ur5_robot.urdf", 1.0),
         ("panda", "panda_description/urdf/panda.urdf", 1.0),
         ("chain450", 450, 0.05)]


def build(outdir):
    exe = pathlib.Path(outdir) / "joint_deriv_percall"
    cc = os.environ.get("CC", "cc")
    mbs = ROOT / "csrc" / "mbs"
    subprocess.run([cc, "-std=c11", "-O2", f"-I{mbs}", f"-I{ROOT / 'csrc' / 'core'}",
                    str(HERE / "joint_deriv_percall.c"), str(mbs / "joint_tree.c"),
                    str(mbs / "joint_tree_deriv.c"), "-lm", "-o", str(exe)], check=True)
    return exe


def per_call(exe, sizes=SIZES, budget=1.0):
    rows = []
    for n in sizes:
        out = subprocess.run([str(exe), str(n), str(budget)], check=True, capture_output=True,
                             text=True).stdout.split()
        rows.append([int(out[0])] + [float(v) for v in out[1:]])
    return rows


def slope(rows, col, lo=100, hi=1000):
    d = {r[0]: r[col] for r in rows}
    return math.log(d[hi] / d[lo]) / math.log(hi / lo)


def _model(case, tmp):
    import mbint
    sys.path.insert(0, str(ROOT / "tests"))
    name, what, _ = case
    if name.startswith("chain"):
        from urdf_chains import rod_chain
        return mbint.load_urdf(rod_chain(pathlib.Path(tmp), what, length=0.1, mass=0.1,
                                         axes="yx"), q=0.3 * np.sin(np.arange(what) + 1.0))
    from robots import ROBOTS
    path = str(ROBOTS / what)
    n = len(mbint.load_urdf(path).joint_names)
    q = np.random.default_rng(7).uniform(-0.5, 0.5, n)
    if name == "panda":
        q[-2:] = 0.02  # the fingers inside their range
    return mbint.load_urdf(path, q=q)


def worker(case_name, method, tol):
    """One simulate call in this process (the mbint on sys.path): JSON of CPU, final q."""
    import mbint
    case = next(c for c in CASES if c[0] == case_name)
    with tempfile.TemporaryDirectory() as d:
        m = _model(case, d)
        mbint.simulate(m, (0, 0.001), method, formulation="joint")  # warm-up
        reps, t0 = 0, time.process_time()
        while reps == 0 or time.process_time() - t0 < MIN_CPU:  # short runs: repeated
            tr = mbint.simulate(m, (0, case[2]), method, formulation="joint", rtol=tol,
                                atol=tol)
            reps += 1
        cpu = (time.process_time() - t0) / reps
    return dict(cpu=cpu, q=tr.q[:, -1].tolist(), njev=tr.stats.get("njev", 0),
                nsteps=tr.stats["nsteps"], mbint=mbint.__file__)


def _run(root, *args):
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, __file__, "--worker", *map(str, args)], env=env,
                         check=True, capture_output=True, text=True, cwd=str(root)).stdout
    return json.loads(out.strip().splitlines()[-1])


def sim_compare():
    rows = []
    for case in [c for c in CASES if c[0] in os.environ.get("CASES", c[0]).split(",")]:
        ref = np.array(_run(ROOT, case[0], "dop853", 1e-10 if case[0].startswith("chain")
                            else 1e-12)["q"])
        for method in ("radau_iia", "bdf"):
            for tol in TOLS[:1] if case[0].startswith("chain") else TOLS:
                res = {"before": [], "after": []}
                for _ in range(ROUNDS):
                    for which, root in (("before", BEFORE), ("after", ROOT)):
                        r = _run(root, case[0], method, tol)
                        assert pathlib.Path(r["mbint"]).is_relative_to(root), r["mbint"]
                        res[which].append(r)
                row = [case[0], method, tol]
                for which in ("before", "after"):
                    err = max(float(np.abs(np.array(r["q"]) - ref).max()) for r in res[which])
                    cpu = float(np.median([r["cpu"] for r in res[which]]))
                    row += [err, cpu, res[which][0]["njev"]]
                rows.append(row)
    return rows


def main():
    with tempfile.TemporaryDirectory() as d:
        rows = per_call(build(d))
    print("| N | exact O(N^2) (ms) | central differences (ms) | former exact, Cholesky (ms) | "
          "exact / differences | exact / former |")
    print("|---|---|---|---|---|---|")
    for n, ex, fd, ch, _ in rows:
        print(f"| {n} | {ex / 1e6:.3f} | {fd / 1e6:.3f} | {ch / 1e6:.3f} | {ex / fd:.2f} | "
              f"{ex / ch:.2f} |")
    print(f"\nexponents 100 -> 1000: exact {slope(rows, 1):.2f}, differences {slope(rows, 2):.2f}, "
          f"former exact {slope(rows, 3):.2f}; largest |exact - differences| / max "
          f"{max(r[4] for r in rows):.1e}\n")
    print(f"| model | method | tol | error before | CPU before (s) | njev | error after | "
          f"CPU after (s) | njev | after / before |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c, meth, tol, eb, tb, jb, ea, ta, ja in sim_compare():
        print(f"| {c} | {meth} | {tol:g} | {eb:.1e} | {tb:.4f} | {jb} | {ea:.1e} | {ta:.4f} | "
              f"{ja} | {ta / tb:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3], float(sys.argv[4]))))
    else:
        main()
