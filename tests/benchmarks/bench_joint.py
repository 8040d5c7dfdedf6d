"""The joint-coordinate engine and formulation="joint" (issue 23), first measurements.

1. Per-call CPU cost of the C engine (csrc/mbs/joint_tree.c) on a chain of N rods with
   alternating joint axes (y, x), N = 10, 100, 1000: one ABA, RNEA, CRBA call, one
   Jacobian of the ABA by central differences (4 N ABA calls) and one exact Jacobian
   (mb_jtree_aba_derivatives: 2 N tangent RNEA passes, Cholesky of M, 2 N solves; what
   form_joint.c used before the O(n^2) one of joint_tree_deriv.c: bench_joint_urdf_jac.py), timed
   in C (``joint_percall.c``, built here with ``cc -O2``; CLOCK_PROCESS_CPUTIME_ID, one
   core).  The exponents are the slopes of log(cost) over log(N) from 100 to 1000 (the
   issue's targets: <= 1.1 for ABA, <= 2.1 for a Jacobian; the exact Jacobian's M^-1 by
   a dense Cholesky factor is O(N^3)).
2. ``mbint.simulate`` on the same chain from URDF (rods of 0.1 m, 0.1 kg), 1 s from
   rest at a bent pose, dop853 at rtol = atol = 1e-8: ``formulation="joint"`` against
   the body-coordinate ``"index1"`` (CPU time of the call, f evaluations, and the
   largest difference of the body positions at the end, m).

3. Against MuJoCo (``pip install mbint[bench]``), a first comparison (RK4 only, from
   h = 2e-3; the full one, N = 10 ... 1000 against all of MuJoCo's integrators and
   Exudyn's kinematic tree, is ``bench_joint_peers.py``): the same chain of
   N = 10, 30, 100 rods on hinge joints (MJCF: nested bodies, explicit ``<inertial>``,
   contacts off, ``integrator="RK4"``, ``mj_step(nstep=...)``), 1 s from the bent pose
   at rest; the error is the max-norm error of the tip (the end of the last rod, m) at
   1 s against mbint's dop853 on "joint" at rtol = atol = 1e-12 (also compared with
   MuJoCo's finest step).  mbint: ``formulation="joint"`` with dop853 and dopri5 at
   rtol = atol = 1e-4 ... 1e-10 (CPU of the whole simulate call); MuJoCo: RK4 at
   h = 2e-3 ... 1.25e-4.  ROUNDS interleaved rounds, medians; at each target error the
   cheapest setting of each code whose error is at most the target.

4. URDF robots of example-robot-data (UR5, Panda fixed; solo12, talos_reduced on a
   floating base), 1 s under gravity from a random pose (joints uniform in +-0.5 rad)
   at rest, dop853 at rtol = atol = 1e-8: CPU of ``"joint"`` and of ``"index1"``
   (medians of 3) and the largest difference of the final body coordinates.

Run ``python tests/benchmarks/bench_joint.py`` (prints Markdown tables).  Not part of
the test suite.
"""
from __future__ import annotations

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
sys.path.insert(0, str(HERE.parent))  # tests/urdf_chains.py

SIZES = (10, 100, 1000)
SIM_SIZES = (10, 30, 100)
MJ_SIZES = (10, 30, 100)
L, MASS, T_END, ROUNDS = 0.1, 0.1, 1.0, 3
MB_SETTINGS = [(meth, tol) for meth in ("dop853", "dopri5") for tol in (1e-4, 1e-6, 1e-8,
                                                                         1e-10)]
MJ_STEPS = (2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4)
TARGETS = (1e-4, 1e-6, 1e-8)


def _q0(n):
    return 0.3 * np.sin(np.arange(n) + 1.0)


def mbint_chain(d, n):
    """The chain from URDF and a function running it: (solve(method, tol) -> (cpu, tip))."""
    import mbint
    from mbint.mbs.joint import JointTree
    from urdf_chains import rod_chain
    m = mbint.load_urdf(rod_chain(pathlib.Path(d), n, length=L, mass=MASS, axes="yx"),
                        q=_q0(n))
    tree = JointTree(m)

    def solve(method, tol):
        t0 = time.process_time()
        tr = mbint.simulate(m, (0, T_END), method, formulation="joint", rtol=tol, atol=tol)
        cpu = time.process_time() - t0
        F = tree.link_frames(tr.x_joint[:, -1])
        return cpu, F["o"][-1] + F["A"][-1] @ np.array([0.0, 0.0, -L])
    return solve


def mujoco_chain(n, h):
    """The chain in MuJoCo (hinges about y, x, y, ...; RK4): (cpu, tip)."""
    import mujoco
    I = MASS * L ** 2 / 12
    body = ""
    for k in reversed(range(n)):
        pos = "0 0 0" if k == 0 else f"0 0 {-L!r}"
        axis = "0 1 0" if k % 2 == 0 else "1 0 0"
        site = f'<site name="tip" pos="0 0 {-L!r}"/>' if k == n - 1 else ""
        body = (f'<body pos="{pos}"><joint type="hinge" axis="{axis}"/><inertial '
                f'pos="0 0 {-L / 2!r}" mass="{MASS!r}" diaginertia="{I!r} {I!r} {1e-4 * I!r}"/>'
                f'{site}{body}</body>')
    xml = (f'<mujoco><option integrator="RK4" timestep="{h!r}" gravity="0 0 -9.81">'
           f'<flag contact="disable"/></option><worldbody>{body}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    nstep = int(round(T_END / h))
    t0 = time.process_time()
    mujoco.mj_resetData(model, data)
    data.qpos[:] = _q0(n)
    mujoco.mj_step(model, data, nstep=nstep)
    mujoco.mj_kinematics(model, data)
    return time.process_time() - t0, data.site_xpos[0].copy()


def mujoco_compare(sizes=MJ_SIZES):
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return None
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            solve = mbint_chain(d, n)
            solve("dopri5", 1e-3)  # warm-up
            ref = solve("dop853", 1e-12)[1]
            mj_fine = mujoco_chain(n, MJ_STEPS[-1] / 4)[1]
            runs = {}
            for _ in range(ROUNDS):
                for meth, tol in MB_SETTINGS:
                    runs.setdefault(("mbint", f"{meth} tol={tol:g}"), []).append(solve(meth, tol))
                for h in MJ_STEPS:
                    runs.setdefault(("mujoco", f"RK4 h={h:g}"), []).append(mujoco_chain(n, h))
            rows = []
            for (code, setting), rs in runs.items():
                cpu = float(np.median([r[0] for r in rs]))
                err = float(np.abs(rs[0][1] - ref).max())
                rows.append((code, setting, cpu, err))
            out[n] = dict(rows=rows, ref_vs_mujoco=float(np.abs(mj_fine - ref).max()))
    return out


ROBOTS = [("ur_description/urdf/ur5_robot.urdf", False),
          ("panda_description/urdf/panda.urdf", False),
          ("solo_description/robots/solo12.urdf", True),
          ("talos_data/robots/talos_reduced.urdf", True)]


def robots_compare():
    import importlib.metadata
    import mbint
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    urdf = [pathlib.Path(f.locate()) for f in files if str(f).endswith(".urdf")]
    if not urdf:
        return None
    root = urdf[0]
    while root.name != "robots":
        root = root.parent
    rng = np.random.default_rng(7)
    rows = []
    for rel, floating in ROBOTS:
        path = str(root / rel)
        n = len(mbint.load_urdf(path, floating_base=floating).joint_names)
        q = rng.uniform(-0.5, 0.5, n)
        if "panda" in rel:
            q[-2:] = 0.02  # the fingers inside their range
        m = mbint.load_urdf(path, floating_base=floating, q=q)
        res = {}
        for form in ("joint", "index1"):
            mbint.simulate(m, (0, 0.01), "dop853", formulation=form)  # warm-up
            ts = []
            for _ in range(3):
                t0 = time.process_time()
                tr = mbint.simulate(m, (0, 1.0), "dop853", formulation=form, rtol=1e-8,
                                    atol=1e-8)
                ts.append(time.process_time() - t0)
            res[form] = (float(np.median(ts)), tr)
        d = float(np.abs(res["joint"][1].q[:, -1] - res["index1"][1].q[:, -1]).max())
        rows.append((pathlib.Path(rel).stem, floating, n, res["joint"][0], res["index1"][0], d))
    return rows


def matched(rows, target):
    best = {}
    for code, setting, cpu, err in rows:
        if err <= target and (code not in best or cpu < best[code][1]):
            best[code] = (setting, cpu)
    return best


def build(outdir):
    exe = pathlib.Path(outdir) / "joint_percall"
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-std=c11", "-O2", f"-I{ROOT / 'csrc' / 'mbs'}",
                    f"-I{ROOT / 'csrc' / 'core'}", str(HERE / "joint_percall.c"),
                    str(ROOT / "csrc" / "mbs" / "joint_tree.c"), "-lm", "-o", str(exe)],
                   check=True)
    return exe


def per_call(exe, sizes=SIZES, budget=0.5):
    rows = []
    for n in sizes:
        out = subprocess.run([str(exe), str(n), str(budget)], check=True, capture_output=True,
                             text=True).stdout.split()
        rows.append([int(out[0])] + [float(v) for v in out[1:]])
    return rows


def slope(rows, col, lo=100, hi=1000):
    d = {r[0]: r[col] for r in rows}
    return math.log(d[hi] / d[lo]) / math.log(hi / lo)


def sim_compare(sizes=SIM_SIZES):
    import mbint
    from urdf_chains import rod_chain
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            q0 = 0.3 * np.sin(np.arange(n) + 1.0)
            m = mbint.load_urdf(rod_chain(pathlib.Path(d), n, length=0.1, mass=0.1, axes="yx"),
                                q=q0)
            res = {}
            for form in ("joint", "index1"):
                mbint.simulate(m, (0, 0.01), "dop853", formulation=form)  # warm-up
                t0 = time.process_time()
                tr = mbint.simulate(m, (0, 1.0), "dop853", formulation=form, rtol=1e-8,
                                    atol=1e-8)
                res[form] = (time.process_time() - t0, tr)
            pos = np.concatenate([np.arange(7 * b.index, 7 * b.index + 3) for b in m.bodies])
            diff = np.abs(res["joint"][1].q[pos, -1] - res["index1"][1].q[pos, -1]).max()
            rows.append((n, res["joint"][0], res["joint"][1].stats["nfev"], res["index1"][0],
                         res["index1"][1].stats["nfev"], diff))
    return rows


def main():
    with tempfile.TemporaryDirectory() as d:
        rows = per_call(build(d))
    print("| N | ABA (us) | RNEA (us) | CRBA (us) | Jacobian by differences (ms) | exact "
          "Jacobian (ms) |")
    print("|---|---|---|---|---|---|")
    for n, a, r, c, j, d in rows:
        print(f"| {n} | {a / 1e3:.2f} | {r / 1e3:.2f} | {c / 1e3:.1f} | {j / 1e6:.2f} | "
              f"{d / 1e6:.2f} |")
    print(f"\nexponents 100 -> 1000: ABA {slope(rows, 1):.2f}, RNEA {slope(rows, 2):.2f}, "
          f"CRBA {slope(rows, 3):.2f}, Jacobian by differences {slope(rows, 4):.2f}, exact "
          f"Jacobian {slope(rows, 5):.2f}\n")
    print("| N | joint: CPU (s) | nfev | index1: CPU (s) | nfev | max position difference (m) |")
    print("|---|---|---|---|---|---|")
    for n, tj, fj, ti, fi, diff in sim_compare():
        print(f"| {n} | {tj:.3f} | {fj} | {ti:.3f} | {fi} | {diff:.1e} |")
    rob = robots_compare()
    if rob:
        print("\n| robot | base | joints | joint: CPU (s) | index1: CPU (s) | max difference |")
        print("|---|---|---|---|---|---|")
        for name, floating, n, tj, ti, d in rob:
            print(f"| {name} | {'floating' if floating else 'fixed'} | {n} | {tj:.3f} | "
                  f"{ti:.3f} | {d:.1e} |")
    res = mujoco_compare()
    if res is None:
        print("\nMuJoCo is not installed (pip install mbint[bench]): no comparison.")
        return
    print("\n| N | target tip error (m) | mbint joint: setting, CPU (ms) | MuJoCo: setting, "
          "CPU (ms) | MuJoCo / mbint |")
    print("|---|---|---|---|---|")
    for n, r in res.items():
        for target in TARGETS:
            b = matched(r["rows"], target)
            mb, mj = b.get("mbint"), b.get("mujoco")
            cell = (lambda x: f"{x[0]}, {1e3 * x[1]:.2f}" if x else "not reached")
            ratio = f"{mj[1] / mb[1]:.2f}" if mb and mj else "-"
            print(f"| {n} | {target:g} | {cell(mb)} | {cell(mj)} | {ratio} |")
    for n, r in res.items():
        print(f"\nN = {n}: reference vs MuJoCo RK4 at h = {MJ_STEPS[-1] / 4:g}: "
              f"{r['ref_vs_mujoco']:.1e} m")
        for code, setting, cpu, err in sorted(r["rows"]):
            print(f"  {code:6s} {setting:22s} CPU {1e3 * cpu:8.2f} ms  tip error {err:.1e} m")


if __name__ == "__main__":
    main()
