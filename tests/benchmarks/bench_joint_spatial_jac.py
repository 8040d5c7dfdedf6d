"""Per-call CPU cost of the Jacobian of formulation="joint" on a SpatialModel rope
(issue 23; csrc/mbs/joint_spatial_deriv.c): the exact Jacobian (what the formulation
uses) against forward differences of f (2 m + 1 evaluations of the forward kinematics,
the forces and the ABA: the former Jacobian), and one f, through ``_core.form_probe``
(C, no Python in the loop) on a rope of N rods on ball joints (m = 4 N joint
coordinates), N = 10, 30, 100, at a random bent moving state.  CPU time
(time.process_time), ROUNDS interleaved rounds, medians; the ratio exact / differences
is the number to read (the machine may be shared).

Run: ``python tests/benchmarks/bench_joint_spatial_jac.py``."""
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's mbint and test models
from mbint import _core  # noqa: E402
from mbint.mbs.joint import SpatialJointTree  # noqa: E402
from test_joint_spatial import rope  # noqa: E402

ROUNDS = 7


def per_call(N, rounds=ROUNDS, seed=0):
    """Median CPU seconds of one exact Jacobian, one difference Jacobian and one f."""
    m = rope(N)
    tree = SpatialJointTree(m)
    h = m._linalg_handle()
    rng = np.random.default_rng(seed)
    Y = 0.1 * rng.standard_normal((1, 2 * tree.nz))
    Y[:, 0:4 * N:4] += 1.0
    reps = {"jac": max(1, 2000 // N ** 2), "jac_fd": max(1, 2000 // N ** 2)}
    reps["rhs"] = 50 * reps["jac"]
    t = {k: [] for k in reps}
    for _ in range(rounds):
        for what, r in reps.items():
            c = time.process_time()
            _core.form_probe(h, "joint", Y, what, tree=tree._handle, reps=r)
            t[what].append((time.process_time() - c) / r)
    return {k: float(np.median(v)) for k, v in t.items()}


def main():
    print("N    m     exact [ms]  differences [ms]  exact/differences  exact/f")
    for N in (10, 30, 100):
        c = per_call(N)
        print(f"{N:<4d} {4 * N:<5d} {c['jac'] * 1e3:10.3f}  {c['jac_fd'] * 1e3:16.3f}  "
              f"{c['jac'] / c['jac_fd']:17.2f}  {c['jac'] / c['rhs']:7.0f}")


if __name__ == "__main__":
    main()
