"""The cost of running a mechanism in pieces (mbint.Simulator) over one simulate call.

The model: the pendulum of tests/test_simulator.py (a rod on a revolute joint, index-1
formulation, 3 coordinates, 2 constraints), in C kernels.  Each measure is CPU time
(time.process_time), the minimum over ROUNDS rounds:

  B  one ``mbint.simulate`` call of N steps: the C step, per step (the slope over two
     N, which leaves out simulate's fixed cost per call);
  A  ``Simulator.advance(t_k)`` N times, each call one step of the method (rk4 with a
     fixed h on the grid t_k = k h; dopri5 adaptive with the t_k of its own steps is
     not possible, so for dopri5 ``step()``), per call;
  C  as A with ``set_input`` before every advance (a controller at 1/h Hz): the input
     change restarts the method at t_k (rk4: nothing to drop; f0 evaluated anew).

overhead = A - B per call: what one Python-level call costs over the C step it runs
(the binding, the GIL released and taken again, the Python method, the state copied
into two new arrays).

Run ``python tests/benchmarks/bench_stepping.py`` (writes out/bench_stepping.md) or
``make bench``."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import mbint

ROOT = Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_stepping.md"
H = 1e-4
N = (5000, 20000)
ROUNDS = 5


def pendulum():
    m = mbint.PlanarModel(gravity=(0.0, -9.81), name="pendulum")
    rod = m.add_body(1.0, 1.0 / 12.0, q=(0.5, 0.0, 0.0))
    m.add_revolute(m.ground, (0.0, 0.0), rod, (-0.5, 0.0))
    m.add_generalized_force(rod, "theta", 0.0, name="tau")
    return m


def _cpu(fn):
    best = np.inf
    for _ in range(ROUNDS):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def simulate_per_step(m, method, **kw):
    """CPU seconds per step inside one simulate call (slope over the two N)."""
    ts = []
    for n in N:
        tf = n * H
        opts = dict(h=H) if method == "rk4" else dict(max_step=H, first_step=H)
        ts.append(_cpu(lambda: mbint.simulate(m, (0.0, tf), method=method, **opts, **kw)))
    return (ts[1] - ts[0]) / (N[1] - N[0]), ts


def simulator_per_call(m, method, inputs=False, **kw):
    n = N[1]
    tf = n * H

    def run():
        if method == "rk4":
            sim = mbint.Simulator(m, method=method, h=H, t_end=tf, **kw)
            for k in range(1, n + 1):
                if inputs:
                    sim.set_input("tau", 0.1 * (k & 1))
                sim.advance(k * H)
        else:
            sim = mbint.Simulator(m, method=method, max_step=H, first_step=H, t_end=tf, **kw)
            for _ in range(n):
                if inputs:
                    sim.set_input("tau", 0.1 * (_ & 1))
                sim.step()
        return sim

    sim = run()
    assert sim.stats["nsteps"] >= n if method == "rk4" else True
    return _cpu(run) / n, sim.stats["nsteps"]


def ode_rows():
    """The same for mbint.OdeSimulator on the C right-hand side ``oscillator`` of
    mbint.problems (no Python per step: what a call costs over the C step alone)."""
    from mbint import problems
    f, y0 = problems.c_rhs("oscillator"), [1.0, 0.0]
    ts = [_cpu(lambda n=n: mbint.solve_ivp(f, (0.0, n * H), y0, method="rk4", h=H)) for n in N]
    b = (ts[1] - ts[0]) / (N[1] - N[0])
    n = N[1]

    def run():
        sim = mbint.OdeSimulator(f, 0.0, y0, method="rk4", h=H, t_end=n * H)
        for k in range(1, n + 1):
            sim.advance(k * H)

    a = _cpu(run) / n
    return dict(method="rk4 (OdeSimulator, C f)", B=b, A=a, C=float("nan"), overhead=a - b,
                overhead_input=float("nan"), steps_a=n, steps_c=0)


def run():
    m = pendulum()
    rows = []
    for method in ("rk4", "dopri5", "cvode_bdf"):
        b, _ = simulate_per_step(m, method)
        a, steps_a = simulator_per_call(m, method)
        c, steps_c = simulator_per_call(m, method, inputs=True)
        rows.append(dict(method=method, B=b, A=a, C=c, overhead=a - b, overhead_input=c - b,
                         steps_a=steps_a, steps_c=steps_c))
    rows.append(ode_rows())
    return rows


def report(rows):
    lines = ["# mbint.Simulator: cost per call over the C step (CPU time, pendulum, index1)",
             "",
             f"N = {N[1]} calls, h = {H:g} s; minimum of {ROUNDS} rounds.",
             "",
             "| method | C step in simulate (us) | advance/step per call (us) | overhead (us) "
             "| with set_input per call (us) | its overhead (us) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['method']} | {1e6 * r['B']:.2f} | {1e6 * r['A']:.2f} | "
                     f"{1e6 * r['overhead']:.2f} | {1e6 * r['C']:.2f} | "
                     f"{1e6 * r['overhead_input']:.2f} |")
    lines += ["", "rk4: one advance(k h) per grid step; dopri5 and cvode_bdf: one step() per call (max_step "
              "= h).  The issue's target: <= 5 us overhead per call.",
              "",
              "Read the last row for the cost of a call: with a C right-hand side and no "
              "outputs, B is the C step alone.  On the pendulum rows B also holds what "
              "simulate does per output point after the run (q'' and lambda by a saddle-point "
              "solve, Trajectory), which the Simulator does only in trajectory(), and A holds "
              "the Hermite dense output the Simulator builds for rk4 (one more f per step): "
              "their difference is not the call's cost alone."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    rows = run()
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(report(rows))
    print(report(rows))
