"""The stiff problems of the Test Set for IVP Solvers (tests/testset.py: E5, ROBER, OREGO,
HIRES, VDPOLM with their published references) against the Rosenbrock family: ros4, ros2,
rodas4, w2 and auto (whose stiff phases are rodas4), with radau_iia, bdf and cvode_bdf as
controls.  A run that reports success (status 0) must end within FACTOR = 100 times its
tolerance of the reference, max over the compared quantities of
|y - ref| / (atol + rtol |ref|) (the weights of the driver's error norm; atol as the test
set's runs scale it, testset.Problem.atol); a run that cannot must say so (status < 0 and a
message).

E5 (the issue's call, atol 1e-26): the Rosenbrock methods moved the invariant
y2 - y3 - y4 = 0 by the rounding of the Jacobian (csrc/methods/rosenbrock.c, "Rounding the
error estimate cannot see"), and y2 + y3 ended 25 % (rodas4, rtol 1e-6) off with status 0.
The published E5 reference is partly garbled; test_e5_reference derives what is compared.

The default run takes the tolerances 1e-4, 1e-7 and 1e-10 where a run costs under a
second or two; the full sweep (every problem, method and rtol 1e-4 .. 1e-10, with the
work) is tests/benchmarks/test_bench_testset.py (make bench).
"""
import math

import numpy as np
import pytest

pytest.importorskip("mbint._core")

import mbint  # noqa: E402
import testset as TS  # noqa: E402

RTOLS = [1e-4, 1e-7, 1e-10]
# the default run's tolerances per method (the full sweep has them all): w2 (order-1
# estimate) and ros2 (order 2) reach 1e6 steps at tight tolerances
METHOD_RTOLS = {"ros4": RTOLS, "rodas4": RTOLS, "auto": RTOLS, "ros2": [1e-4, 1e-7],
                "w2": [1e-4, 1e-6], "radau_iia": RTOLS, "bdf": RTOLS, "cvode_bdf": RTOLS}
# controls whose accuracy is asserted: they show the criterion can be met; cvode_bdf is
# reported only (what its tolerance means is CVODE's: OREGO at 1e-8 ends 134x off)
ASSERTED_CONTROLS = {"radau_iia", "bdf"}
# Known and not the rounding of this fix: ros2 (ode23s) advances with its order-2 formula
# and estimates that formula's own local error, so on the relaxation oscillation OREGO
# its local errors accumulate, global ~ N tol (steps N ~ tol^-1/3): 98, 269, 764 and 2760
# times the tolerance at rtol 1e-4, 1e-6, 1e-8, 1e-10 (true local errors measured <= the
# tolerance; bdf, 87x, and cvode_bdf, 134x, show the same growth).  Asserted to still
# fail, so that a fix shows.
KNOWN = {("OREGO", "ros2", 1e-7): "ros2's order-2 local errors accumulate on OREGO"}
# left to the full sweep: over 5 s each (ros4 on E5 at 1e-10 takes 3e5 steps)
SLOW = {("E5", "ros4", 1e-10)}


def run(p, method, rtol, atol):
    # a trial stage of a step that is then rejected may overflow E5's f (the driver rejects
    # a non-finite f and retries smaller): no warning for that
    with np.errstate(over="ignore", invalid="ignore"):
        return mbint.solve_ivp(p.f, (0.0, p.t_end), p.y0, method=method, rtol=rtol,
                               atol=atol, jac=p.jac)


@pytest.mark.parametrize("name", list(TS.PROBLEMS))
def test_accuracy_or_failure(name):
    """status 0 -> error <= 100 x tolerance; otherwise status < 0 with a message"""
    p = TS.PROBLEMS[name]
    rows, bad = [], []
    for method in TS.ROSENBROCK + TS.CONTROLS:
        row = []
        for rtol in METHOD_RTOLS[method]:
            if (name, method, rtol) in SLOW:
                continue
            atol = p.atol(rtol)
            r = run(p, method, rtol, atol)
            err = p.error(r.y[:, -1], rtol, atol) if r.status == 0 else math.nan
            row.append(f"{rtol:.0e}: " + (f"{err:8.3g}" if r.status == 0 else
                                          f"status {r.status}") + f" ({r.nsteps} steps)")
            asserted = method in TS.ROSENBROCK or method in ASSERTED_CONTROLS
            known = KNOWN.get((name, method, rtol))
            if r.status != 0:
                if r.status > 0 or not r.message:
                    bad.append(f"{method} rtol {rtol:.0e}: status {r.status} {r.message!r}")
            elif known:
                if err <= TS.FACTOR:
                    bad.append(f"{method} rtol {rtol:.0e}: known failure ({known}) now passes "
                               f"({err:.3g}): drop it from KNOWN")
            elif asserted and not err <= TS.FACTOR:
                bad.append(f"{method} rtol {rtol:.0e}: status 0 with error {err:.3g} x "
                           f"tolerance")
        rows.append(f"{method:9s} " + "  ".join(row))
    print(f"\n{name} ({p.notes or 'all components'}): error / tolerance\n" + "\n".join(rows))
    assert not bad, "; ".join(bad)


@pytest.mark.parametrize("method,rtol", [("rodas4", 1e-6), ("rodas4", 1e-8), ("ros4", 1e-6),
                                         ("ros4", 1e-8), ("auto", 1e-6), ("auto", 1e-8),
                                         ("ros2", 1e-6), ("w2", 1e-6)])
def test_e5_issue_call(method, rtol):
    """The call of the issue: y2 + y3 was 25 % (rodas4) and 2.4 % (ros4) off at rtol 1e-6,
    3.9 % (rodas4) at 1e-8, with status 0; now within 100 (2 atol + rtol s) of s."""
    p = TS.E5
    r = mbint.solve_ivp(p.f, (0, 1e13), [1.76e-3, 0, 0, 0], method=method, rtol=rtol,
                        atol=TS.ATOL_E5_ISSUE, jac=p.jac)
    assert r.status == 0, r.message
    y = r.y[:, -1]
    rel = abs(y[1] + y[2] - TS.E5_SUM) / TS.E5_SUM
    print(f"\n{method} rtol {rtol:.0e}: y2 + y3 off by {rel:.2e}, y2 - y3 - y4 = "
          f"{y[1] - y[2] - y[3]:.2e}, {r.nsteps} steps")
    assert p.error(y, rtol, TS.ATOL_E5_ISSUE) <= TS.FACTOR, rel


def e5_reduced(t, z):
    """E5 with y3 = y2 - y4 substituted: z = (y1, y2, y4), the invariant exact"""
    y1, y2, y4 = z
    y3 = y2 - y4
    p1, p2, p3, p4 = TS.E5_A * y1, TS.E5_B * y1 * y3, TS.E5_MC * y2 * y3, TS.E5_C * y4
    return np.array([-p1 - p2, p1 - p3, p2 - p4])


def e5_reduced_jac(t, z):
    A, B, C, MC = TS.E5_A, TS.E5_B, TS.E5_C, TS.E5_MC
    y1, y2, y4 = z
    y3 = y2 - y4
    return np.array([[-A - B * y3, -B * y1, B * y1],
                     [A, -MC * (y3 + y2), MC * y2],
                     [B * y3, B * y1, -B * y1 - C]])


def test_e5_reference():
    """What of the published E5 reference is compared, and why (testset.py).

    - f conserves y2 - y3 - y4 (w.f = 0 up to the rounding of f3 = f2 - f4), and y4 =
      B y1 y3 / C ~ 0 at t = 1e13, so y2 = y3 there; the published y2, y3 differ by
      1.28e-25, 1.45e-3 of y2: an invariant drift of the reference run.
    - y1' <= -A y1 bounds y1(1e13) by 1.76e-3 exp(-7890), zero in double; the published
      1.15e-290 is not the solution.
    - With the invariant substituted, radau_iia and rodas4 agree on s = y2 + y3 with the
      derived E5_SUM; the published sum is 1.75e-7 above it (its drift d enters s through
      d^2 only)."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        y = rng.uniform(0.0, 1.0, 4) * np.array([1e-3, 1e-10, 1e-11, 1e-10])
        f = TS.e5_f(0.0, y)
        assert abs(f[1] - f[2] - f[3]) <= 4 * np.finfo(float).eps * np.max(np.abs(f))
    ref = TS.E5_PUBLISHED
    drift = ref[1] - ref[2] - ref[3]
    assert 1.2e-25 < drift < 1.3e-25 and drift / ref[1] > 1e-3
    assert 1.76e-3 * math.exp(-TS.E5_A * 1e13) == 0.0 and ref[0] > 0.0
    sums = {}
    for method, rtol in [("radau_iia", 1e-11), ("rodas4", 1e-10)]:
        r = mbint.solve_ivp(e5_reduced, (0, 1e13), [1.76e-3, 0.0, 0.0], method=method, rtol=rtol,
                            atol=1e-40, jac=e5_reduced_jac)
        assert r.status == 0, r.message
        sums[method] = 2.0 * r.y[1, -1] - r.y[2, -1]
    print(f"\nE5 y2 + y3 at 1e13: invariant exact {sums}; derived {TS.E5_SUM:.11e}; "
          f"published {ref[1] + ref[2]:.11e}")
    for s in sums.values():
        assert abs(s - TS.E5_SUM) <= 1e-9 * TS.E5_SUM
    assert 1.5e-7 < (ref[1] + ref[2] - TS.E5_SUM) / TS.E5_SUM < 2.0e-7


@pytest.mark.parametrize("name", ["ROBER", "OREGO", "HIRES", "VDPOLM"])
def test_published_references(name):
    """the problems as written here reproduce the published references (radau_iia at rtol
    1e-12), and the Jacobians match central differences"""
    p = TS.PROBLEMS[name]
    y = p.y0 + np.random.default_rng(2).uniform(0.01, 0.1, p.y0.size) * np.maximum(
        np.abs(p.y0), 1e-3)
    d = 1e-7 * np.maximum(np.abs(y), 1e-3)
    fd = np.column_stack([(p.f(0.0, y + dj * e) - p.f(0.0, y - dj * e)) / (2.0 * dj)
                          for dj, e in zip(d, np.eye(y.size))])
    J = p.jac(0.0, y)
    assert np.max(np.abs(fd - J)) <= 1e-6 * np.max(np.abs(J))
    rtol = 1e-12
    r = run(p, "radau_iia", rtol, p.atol(rtol))
    assert r.status == 0, r.message
    assert p.error(r.y[:, -1], rtol, p.atol(rtol)) <= 10.0
