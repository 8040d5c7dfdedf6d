"""Cost of simulate(..., sensitivities=...) (issue 26): CPU time of a run with three
parameters of the RN stiff double pendulum (rsda2.k, rsda2.c, q0[body1.theta]) over the
plain run, t in [0, 2] s, rtol = atol = 1e-6, medians of REPS interleaved repetitions
(time.process_time).  The issue's target for implicit methods: <= 1 + 0.5 p = 2.5.

    python tests/benchmarks/bench_sens_mech.py
"""
import time

import numpy as np

import mbint
from mbint.models import rn

REPS = 5
NAMES = ["rsda2.k", "rsda2.c", "q0[body1.theta]"]
CASES = [("index1", "bdf"), ("index1", "radau_iia"), ("index1", "rodas4"),
         ("index1", "dop853"), ("index3", "bdf"), ("joint", "radau_iia")]


def main():
    m = rn.stiff_double_pendulum()
    for form, meth in CASES:
        times = {None: [], True: []}
        for _ in range(REPS):
            for sens in (None, NAMES):
                t0 = time.process_time()
                tr = mbint.simulate(m, (0.0, 2.0), meth, formulation=form, rtol=1e-6,
                                    atol=1e-6, sensitivities=sens)
                times[None if sens is None else True].append(time.process_time() - t0)
                assert tr.success, tr.message
        ratio = np.median(times[True]) / np.median(times[None])
        print(f"{form:7s} {meth:9s} sens/plain {ratio:5.2f} (target {1 + 0.5 * len(NAMES)})"
              f"  plain {np.median(times[None]) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
