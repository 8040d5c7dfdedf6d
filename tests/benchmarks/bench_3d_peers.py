"""A 3-D rope at scale against Exudyn and MuJoCo (issue 22, item 5).

The mechanism, defined once in each code: a spatial chain of N identical rigid rods
(length L = 0.1 m, mass 0.1 kg, the inertia of a thin solid cylinder of radius 5 mm
about its centre: J_axis = m r^2 / 2, J_transverse = m (3 r^2 + L^2) / 12), joined by
spherical joints, the first to the ground at the origin; gravity (0, 0, -9.81).  At
t = 0 the chain lies straight along +x at rest; it falls and swings until T_END.

* mbint: :class:`mbint.SpatialModel` (7 coordinates per rod: centre of mass and Euler
  parameters, N normalizations + 3 N point rows), ``formulation="index1"``, dense
  linear algebra: ``linear_algebra="auto"``, the sparse index-1 path from nq = 60 (whether
  ``"sparse"`` is accepted for a SpatialModel is recorded in the report).
* mbint, ``formulation="joint"`` (issue 23): the same SpatialModel in joint coordinates
  (the Euler parameters of each ball joint's relative rotation and their rates, 8 N
  states, a world-coordinate articulated-body algorithm under the model's forces,
  ``csrc/mbs/joint_spatial.c``), explicit methods ("<method>/joint" rows); the table
  "at matched error" takes mbint's cheapest over both formulations.
* Exudyn: ``MainSystem.CreateRigidBody`` (Euler-parameter nodes) and
  ``CreateSphericalJoint``, ``SolveDynamic`` with generalized-alpha (spectral radius
  0.9) or the trapezoidal rule (index 2), fixed steps, ``EigenSparse`` linear solver,
  default Newton settings.  Exudyn's explicit solvers are not used: they do not take
  joints (algebraic constraints) except coordinate constraints (its documentation).
* MuJoCo: an MJCF string, nested bodies with ball joints and explicit ``<inertial>``,
  ``<option integrator="RK4">``, contacts disabled, ``mj_step(nstep=...)``.

Error measure: the tip (end point of the last rod) position at T_END, max-norm error
against a reference in m.  For N <= MBINT_MAX_N the reference is mbint's dop853 at
rtol = atol = 1e-11 (at N = 10 checked against radau_iia at 1e-10; at every N against
MuJoCo's finest RK4 step, an independent code in minimal coordinates).  Above, mbint is
not run (see below) and the reference is MuJoCo's RK4 at h = REF_H_MJ, its error
estimated by the Richardson difference to 2 h (over 15, fourth order).

Cost: CPU time (``time.process_time``) around the solve only, the model built
beforehand: ``mbint.simulate`` (the whole call: validation, the initial check, the run,
the Trajectory; the model already compiled by a warm-up call; "whole", measured in the first round
only, builds the model from nothing and then calls simulate), Exudyn's
``SolveDynamic`` (after ``Assemble``), MuJoCo's ``mj_step`` loop.  ROUNDS
interleaved rounds (every N, code and setting once per round), medians reported.  A
setting whose first run exceeds RUN_CAP s is not repeated, and the finer settings of the
same family at that N are skipped.

At matched error: for each target error, each code's cheapest measured setting whose
error is at most the target (no interpolation), and the ratios peer / mbint.

Sizes: mbint runs N <= MBINT_MAX_N on its sparse index-1 path (the dense one, before
it existed, cost 0.44 / 10 / 375 ms per f at N = 10 / 30 / 100, as N^3).  MuJoCo's chain is one
branch, its joint-space mass matrix dense (3 N), ~97 s for 500 RK4 steps at N = 300, and
its XML parser refuses the nesting depth of N = 1000: MuJoCo runs N <= MJ_MAX_N.  Exudyn
runs N <= EXU_MAX_N (at N = 300 without an error: no reference).

Run ``python tests/benchmarks/bench_3d_peers.py`` (out/bench_3d_peers.md and .json) or
``make bench`` (test_bench_3d_peers.py).  Needs ``pip install mbint[bench]``; a peer
that is not importable is skipped.
"""
from __future__ import annotations

import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import mbint
from mbint.mbs.spatial import SpatialModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import have, write_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT_MD = ROOT / "out" / "bench_3d_peers.md"
OUT_JSON = ROOT / "out" / "bench_3d_peers.json"

L, MASS, RADIUS = 0.1, 0.1, 0.005
J_AXIS = MASS * RADIUS ** 2 / 2
J_TRANS = MASS * (3 * RADIUS ** 2 + L ** 2) / 12
GRAVITY = (0.0, 0.0, -9.81)
T_END = 0.5

SIZES = (10, 30, 100, 300)
MBINT_MAX_N = 300
MJ_MAX_N = 100
EXU_MAX_N = 300
ROUNDS = 3
RUN_CAP = 60.0
TARGETS = (1e-3, 1e-5, 1e-7)
REF_TOL = 1e-11
REF_H_MJ = 1.25e-4

MBINT_SETTINGS = {10: [(m, tol) for m in ("dop853", "dopri5") for tol in (1e-3, 1e-5, 1e-7)]
                  + [(m, tol) for m in ("radau_iia", "rodas4") for tol in (1e-3, 1e-5, 1e-7)],
                  # N = 30: the implicit methods at 1e-3 only (at 1e-5 they took 11-12 s
                  # against dop853's 4.4 s at a smaller error; 2026-11-27), for the budget
                  30: [("dop853", 1e-3), ("dop853", 1e-5), ("dop853", 1e-7),
                       ("dopri5", 1e-3), ("dopri5", 1e-5), ("radau_iia", 1e-3),
                       ("rodas4", 1e-3)],
                  # the sparse index-1 path (linear_algebra="auto" from nq = 60): the
                  # explicit methods, whose f is O(N)
                  100: [(m, tol) for m in ("dop853", "dopri5") for tol in (1e-3, 1e-5, 1e-7)],
                  300: [(m, tol) for m in ("dop853", "dopri5") for tol in (1e-3, 1e-5, 1e-7)]}
#: formulation="joint" (explicit methods: the Jacobian of a SpatialModel tree is forward
#: differences of the ABA, 8 N columns)
JOINT_SETTINGS = [(m, tol) for m in ("dop853", "dopri5") for tol in (1e-3, 1e-5, 1e-7)]
EXU_STEPS = (50, 100, 200, 400, 800, 1600, 3200)   # N <= 30
EXU_STEPS_MID = (50, 200, 800, 3200)                # N = 100
EXU_STEPS_BIG = (50, 200, 800)                      # N = 300
MJ_H = (1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2.5e-4)
MJ_H_BIG = (1e-2, 5e-3, 2e-3, 1e-3, 5e-4)  # N = 100 (2.5e-4 is the reference's check run)


# ---------------------------------------------------------------- the three models
def mbint_chain(n):
    """The rope in mbint: (model, tip(q) -> (3,))."""
    m = SpatialModel(gravity=GRAVITY, name=f"rope{n}")
    prev, last = m.ground, None
    for k in range(n):
        last = m.add_body(MASS, (J_AXIS, J_TRANS, J_TRANS), r=((k + 0.5) * L, 0.0, 0.0),
                          name=f"rod{k}")
        m.add_spherical(prev, last, point=(k * L, 0.0, 0.0))
        prev = last

    def tip(q):
        return np.asarray(last.point((L / 2, 0.0, 0.0), q), float)
    return m, tip


def mbint_run(model, tip, method, tol, **kw):
    t0 = time.process_time()
    tr = mbint.simulate(model, (0.0, T_END), method, rtol=tol, atol=tol, **kw)
    cpu = time.process_time() - t0
    if not tr.success:
        raise RuntimeError(f"mbint {method} rtol {tol:g}: {tr.message}")
    return cpu, tip(tr.q[:, -1]), int(tr.stats["nsteps"])


def exudyn_chain(n, solver, nsteps):
    """The rope in Exudyn, assembled: (solve(), tip())."""
    import exudyn as exu
    from exudyn.utilities import RigidBodyInertia
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mbs = exu.SystemContainer().AddSystem()
        inertia = RigidBodyInertia(mass=MASS, inertiaTensor=np.diag([J_AXIS, J_TRANS, J_TRANS]))
        prev = mbs.CreateGround()
        last = None
        for k in range(n):
            last = mbs.CreateRigidBody(referencePosition=[(k + 0.5) * L, 0.0, 0.0],
                                       inertia=inertia, gravity=list(GRAVITY),
                                       nodeType=exu.NodeType.RotationEulerParameters)
            mbs.CreateSphericalJoint(bodyNumbers=[prev, last], position=[k * L, 0.0, 0.0],
                                     useGlobalFrame=True)
            prev = last
        mbs.Assemble()
        s = exu.SimulationSettings()
        s.timeIntegration.endTime = T_END
        s.timeIntegration.numberOfSteps = int(nsteps)
        s.timeIntegration.verboseMode = 0
        s.solutionSettings.writeSolutionToFile = False
        s.solutionSettings.sensorsWritePeriod = 1e9
        s.linearSolverType = exu.LinearSolverType.EigenSparse
        s.displayStatistics = False
        s.displayComputationTime = False
        if solver == "trapezoidal":
            kind = exu.DynamicSolverType.TrapezoidalIndex2
        else:
            kind = exu.DynamicSolverType.GeneralizedAlpha
            s.timeIntegration.generalizedAlpha.spectralRadius = 0.9

    def solve():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ok = mbs.SolveDynamic(s, solverType=kind)
        if ok is False:
            raise RuntimeError(f"Exudyn {solver} {nsteps} steps failed")

    def tip():
        return np.array(mbs.GetObjectOutputBody(last, exu.OutputVariableType.Position,
                                                localPosition=[L / 2, 0.0, 0.0]), float)
    return solve, tip


def mujoco_chain(n, h):
    """The rope in MuJoCo (MJCF, ball joints, RK4): (solve(), tip())."""
    import mujoco
    body = ""
    for k in reversed(range(n)):
        pos = "0 0 0" if k == 0 else f"{L!r} 0 0"
        site = f'<site name="tip" pos="{L!r} 0 0"/>' if k == n - 1 else ""
        body = (f'<body pos="{pos}"><joint type="ball"/><inertial pos="{L / 2!r} 0 0" '
                f'mass="{MASS!r}" diaginertia="{J_AXIS!r} {J_TRANS!r} {J_TRANS!r}"/>'
                f'{site}{body}</body>')
    g = " ".join(repr(x) for x in GRAVITY)
    xml = (f'<mujoco><option integrator="RK4" timestep="{h!r}" gravity="{g}">'
           f'<flag contact="disable"/></option><worldbody>{body}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    nstep = int(round(T_END / h))

    def solve():
        mujoco.mj_resetData(model, data)
        mujoco.mj_step(model, data, nstep=nstep)
        mujoco.mj_kinematics(model, data)

    def tip():
        return data.site_xpos[0].copy()
    return solve, tip


def timed(solve, tip):
    t0 = time.process_time()
    solve()
    return time.process_time() - t0, tip()


# ---------------------------------------------------------------- references
def references(sizes, peers, verbose=True):
    refs = {}
    for n in sizes:
        r = {}
        if n <= MBINT_MAX_N:
            model, tip = mbint_chain(n)
            cpu, x, ns = mbint_run(model, tip, "dop853", REF_TOL)
            r.update(source=f"mbint dop853 rtol=atol={REF_TOL:g}", tip=x.tolist(), cpu=cpu,
                     nsteps=ns)
            if n == 10:
                cpu2, x2, _ = mbint_run(model, tip, "radau_iia", 1e-10)
                r["check"] = {"against": "mbint radau_iia rtol=atol=1e-10",
                              "diff": float(np.abs(x2 - x).max()), "cpu": cpu2}
            else:
                cpu2, x2, _ = mbint_run(model, tip, "dop853", 1e-10)
                r["check"] = {"against": "mbint dop853 rtol=atol=1e-10",
                              "diff": float(np.abs(x2 - x).max()), "cpu": cpu2}
            if "mujoco" in peers and n <= MJ_MAX_N:  # the same physics: RK4 converging
                conv = []
                for h in (1e-3, 5e-4, 2.5e-4, REF_H_MJ):
                    conv.append([h, float(np.abs(timed(*mujoco_chain(n, h))[1] - x).max())])
                r["mujoco_convergence"] = conv
            if "exudyn" in peers:
                conv = []
                for ns_ in (800, 3200):
                    conv.append([T_END / ns_, float(np.abs(
                        timed(*exudyn_chain(n, "trapezoidal", ns_))[1] - x).max())])
                r["exudyn_convergence"] = conv
        elif "mujoco" in peers and n <= MJ_MAX_N:
            _, x = timed(*mujoco_chain(n, REF_H_MJ))
            _, x2 = timed(*mujoco_chain(n, 2 * REF_H_MJ))
            est = float(np.abs(x2 - x).max()) / 15
            r.update(source=f"MuJoCo RK4 h={REF_H_MJ:g} (Richardson error estimate {est:.1e})",
                     tip=x.tolist(), richardson=est)
            if "exudyn" in peers:
                _, x3 = timed(*exudyn_chain(n, "trapezoidal", 3200))
                r["check"] = {"against": "Exudyn trapezoidal h=T/3200",
                              "diff": float(np.abs(x3 - x).max())}
        else:
            r.update(source=None, tip=None)
        refs[n] = r
        if verbose:
            print(f"reference N={n}: {r}", flush=True)
    return refs


# ---------------------------------------------------------------- the sweep
def settings(n, peers):
    out = []
    if n <= MBINT_MAX_N:
        for m, tol in MBINT_SETTINGS[n]:
            out.append(("mbint", m, f"rtol=atol={tol:g}", tol))
        for m, tol in JOINT_SETTINGS:
            out.append(("mbint", f"{m}/joint", f"rtol=atol={tol:g}", tol))
    if "exudyn" in peers and n <= EXU_MAX_N:
        for solver in ("generalized-alpha", "trapezoidal"):
            for ns in (EXU_STEPS if n <= 30 else EXU_STEPS_MID if n <= 100 else EXU_STEPS_BIG):
                out.append(("exudyn", solver, f"h=T/{ns}", ns))
    if "mujoco" in peers and n <= MJ_MAX_N:
        for h in (MJ_H if n <= 30 else MJ_H_BIG):
            out.append(("mujoco", "RK4", f"h={h:g}", h))
    return out


def run_one(n, code, family, par, cache, whole=False):
    if code == "mbint":
        family, _, form = family.partition("/")
        kw = {"formulation": form} if form else {}
        if n not in cache:
            cache[n] = mbint_chain(n)
            mbint_run(*cache[n], "dop853", 1e-2)  # compile
        out = {}
        if whole:  # first round only: the model built from nothing + simulate
            t0 = time.process_time()
            m2, tip2 = mbint_chain(n)
            mbint_run(m2, tip2, family, par, **kw)
            out["whole"] = time.process_time() - t0
        cpu, x, ns = mbint_run(*cache[n], family, par, **kw)
        out.update(cpu=cpu, tip=x, nsteps=ns)
        return out
    if code == "exudyn":
        cpu, x = timed(*exudyn_chain(n, family, par))
        return {"cpu": cpu, "tip": x}
    cpu, x = timed(*mujoco_chain(n, par))
    return {"cpu": cpu, "tip": x}


def run_all(sizes=SIZES, rounds=ROUNDS, verbose=True):
    peers = [p for p in ("exudyn", "mujoco") if have(p)]
    res = {"sizes": list(sizes), "t_end": T_END, "rounds": rounds, "peers": peers,
           "versions": {"mbint": getattr(mbint, "__version__", "?")}}
    for p in peers:
        res["versions"][p] = __import__(p).__version__
    # sparse linear algebra on a SpatialModel?
    model, tip = mbint_chain(10)
    try:
        mbint_run(model, tip, "dop853", 1e-3, linear_algebra="sparse")
        res["sparse"] = "accepted"
    except ValueError as e:
        res["sparse"] = f"ValueError: {e}"
    t_ref = time.process_time()
    refs = references(sizes, peers, verbose)
    res["ref_cpu"] = time.process_time() - t_ref
    runs = {}
    skipped = set()
    for r in range(rounds):
        for n in sizes:
            cache = {}
            for code, family, label, par in settings(n, peers):
                key = (n, code, family, label)
                if key in skipped:
                    continue
                try:
                    out = run_one(n, code, family, par, cache, whole=(r == 0))
                except Exception as e:  # noqa: BLE001  a failed setting is a row, not a crash
                    out = {"cpu": math.nan, "tip": None, "error_msg": f"{type(e).__name__}: {e}"}
                runs.setdefault(key, []).append(out)
                if verbose:
                    print(f"round {r} N={n} {code} {family} {label}: {out['cpu']:.3f} s", flush=True)
                if r == 0 and not out["cpu"] < RUN_CAP:
                    skipped.add(key)
                    # the finer settings of this family at this N: skip them too
                    fam = [s for s in settings(n, peers) if s[0] == code and s[1] == family]
                    idx = [s[2] for s in fam].index(label)
                    for s in fam[idx + 1:]:
                        skipped.add((n, code, family, s[2]))
    rows = []
    for (n, code, family, label), outs in runs.items():
        ref = refs[n].get("tip")
        x = outs[0]["tip"]
        err = (float(np.abs(np.asarray(x) - np.asarray(ref)).max())
               if ref is not None and x is not None else None)
        cpus = [o["cpu"] for o in outs]
        row = {"N": n, "code": code, "method": family, "setting": label,
               "cpu": float(np.median(cpus)), "spread": float(np.ptp(cpus) / np.median(cpus))
               if len(cpus) > 1 else 0.0, "runs": len(cpus), "error": err,
               "tip": None if x is None else list(map(float, x))}
        if code == "mbint":
            row["whole"] = outs[0].get("whole")
            row["nsteps"] = outs[0]["nsteps"]
        if "error_msg" in outs[0]:
            row["failed"] = outs[0]["error_msg"]
        rows.append(row)
    res["rows"] = rows
    res["refs"] = {str(n): v for n, v in refs.items()}
    res["skipped"] = [list(k) for k in sorted(skipped)]
    res["matched"] = matched(rows, sizes)
    OUT_JSON.parent.mkdir(parents=True, exist_ok=True)
    OUT_JSON.write_text(json.dumps(res, indent=1, default=float))
    return res


def best(rows, n, code, target):
    ok = [r for r in rows if r["N"] == n and r["code"] == code and r["error"] is not None
          and r["error"] <= target and np.isfinite(r["cpu"])]
    return min(ok, key=lambda r: r["cpu"]) if ok else None


def matched(rows, sizes):
    out = []
    for n in sizes:
        for tgt in TARGETS:
            e = {"N": n, "target": tgt}
            for code in ("mbint", "exudyn", "mujoco"):
                b = best(rows, n, code, tgt)
                e[code] = None if b is None else {"setting": f"{b['method']} {b['setting']}",
                                                  "cpu": b["cpu"], "error": b["error"]}
            for code in ("exudyn", "mujoco"):
                e[f"{code}_over_mbint"] = (e[code]["cpu"] / e["mbint"]["cpu"]
                                           if e[code] and e["mbint"] else None)
            out.append(e)
    return out


# ---------------------------------------------------------------- the report
def _f(v, fmt):
    return "-" if v is None or (isinstance(v, float) and not np.isfinite(v)) else format(v, fmt)


def report(res):
    lines = [f"# A 3-D rope of N rods against Exudyn and MuJoCo (t in [0, {res['t_end']}] s)", "",
             "N rods of 0.1 m, 0.1 kg, thin-cylinder inertia (r = 5 mm), spherical joints, "
             "the first at the origin; horizontal along +x at rest, gravity -z.  Error: tip "
             "position at T_END, max norm, m, against the reference below.  CPU: "
             f"time.process_time of the solve only (model built beforehand), median of "
             f"{res['rounds']} interleaved rounds; mbint's 'whole' (first round only) adds building the model.  "
             f"Versions: {res['versions']}.", "",
             f"`linear_algebra=\"sparse\"` on a SpatialModel: {res['sparse']}", "",
             "## References", ""]
    for n in res["sizes"]:
        r = res["refs"][str(n)]
        lines.append(f"* N = {n}: {r.get('source') or 'none (errors not measured)'}")
        if r.get("check"):
            lines.append(f"  * against {r['check']['against']}: tip differs by "
                         f"{r['check']['diff']:.1e} m")
        for k, name in (("mujoco_convergence", "MuJoCo RK4"), ("exudyn_convergence",
                                                              "Exudyn trapezoidal")):
            if r.get(k):
                lines.append(f"  * {name} tip error vs the reference: " + ", ".join(
                    f"h={h:.3g}: {e:.1e}" for h, e in r[k]))
    lines += ["", "## Work-precision", "",
              "| N | code | method | setting | CPU [s] | mbint whole [s] | spread | tip error [m] |",
              "|---|---|---|---|---|---|---|---|"]
    for r in sorted(res["rows"], key=lambda r: (r["N"], r["code"], r["method"])):
        lines.append(f"| {r['N']} | {r['code']} | {r['method']} | {r['setting']} | "
                     f"{_f(r['cpu'], '.4f')} | {_f(r.get('whole'), '.4f')} | "
                     f"{_f(r['spread'], '.2f')} | {_f(r['error'], '.1e')} |"
                     + (f" failed: {r['failed']}" if r.get("failed") else ""))
    lines += ["", "## At matched error (cheapest measured setting with error <= target; "
                  "no interpolation)", "",
              "| N | target [m] | mbint | Exudyn | MuJoCo | Exudyn / mbint | MuJoCo / mbint |",
              "|---|---|---|---|---|---|---|"]

    def cell(c):
        return "-" if not c else f"{c['setting']}: {c['cpu']:.4f} s ({c['error']:.0e})"
    for e in res["matched"]:
        lines.append(f"| {e['N']} | {e['target']:.0e} | {cell(e['mbint'])} | {cell(e['exudyn'])} | "
                     f"{cell(e['mujoco'])} | {_f(e['exudyn_over_mbint'], '.2f')} | "
                     f"{_f(e['mujoco_over_mbint'], '.2f')} |")
    fall = [n for n in res["sizes"] if res["refs"][str(n)].get("tip") is not None
            and abs(res["refs"][str(n)]["tip"][2] + 0.5 * abs(GRAVITY[2]) * T_END ** 2) < 1e-9]
    if fall:
        lines += ["", f"At N = {', '.join(map(str, fall))} the reference tip's height is that of "
                      "free fall (z = -g T^2/2 to 1e-9 m): the rope has not yet pulled the tip "
                      "up by T_END, so the tip error there is that of its x coordinate "
                      "(the pull-in along the rope) alone."]
    lines += ["", "mbint's 'whole' is one run (first round) and can come out below the "
                  "median of the solve-only runs on this shared machine: read the two "
                  "columns as equal within the spread."]
    if res["skipped"]:
        lines += ["", f"Skipped after a first run over {RUN_CAP:g} s (with their finer "
                      "settings): " + "; ".join(" ".join(map(str, k)) for k in res["skipped"])]
    lines += ["", f"Not run: mbint above N = {MBINT_MAX_N} (dense spatial index-1 f, ~N^3), "
                  f"MuJoCo above N = {MJ_MAX_N} (dense 3N joint-space mass matrix of a "
                  f"single branch; XML nesting limit at N = 1000), Exudyn above N = "
                  f"{EXU_MAX_N} (time budget)."]
    return "\n".join(lines) + "\n"


def run(rounds=ROUNDS):
    res = run_all(rounds=rounds)
    write_report(sys.modules[__name__], report(res))
    return res


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--report":  # re-render the .md from a .json
        write_report(sys.modules[__name__], report(json.loads(Path(sys.argv[2]).read_text())))
    else:
        run(rounds=int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS)
