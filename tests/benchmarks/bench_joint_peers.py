"""mbint's joint coordinates against MuJoCo and Exudyn's kinematic tree (issue 23).

The spatial hinge chain of ``tests/urdf_chains.py`` (``rod_chain``: N rods of 0.1 m and
0.1 kg, hinge axes y, x, y, ...), N = 10, 30, 100, 300, 1000, 1 s under gravity from the
bent pose x_k = 0.3 sin(k + 1) rad at rest.  The error is the max-norm error of the tip
(the end of the last rod, m) at 1 s against a tight mbint reference (``"joint"``, dop853,
rtol = atol = 1e-12), itself checked against a second one (``"index1"`` dop853 at 1e-11
for N <= 30, else ``"joint"`` dopri5 at 1e-11).

* mbint: ``formulation="joint"`` and ``"index1"`` (linear_algebra "auto": sparse from
  :data:`mbint.SPARSE_MIN_NQ`), dop853 and dopri5 at rtol = atol = 1e-3, 10^-3.5, ...,
  1e-10 (``--ladder coarse``: 1e-4, 1e-6, 1e-8, 1e-10), and ``"joint"`` with the
  classical RK4 (``rk4``, no error control) on MuJoCo's steps; CPU of
  the whole ``simulate`` call (set-up included; ``t_eval=[1 s]``: the final state only,
  as the peers give it).  The chain is not stiff
  (dop853's steps grow only from 244 to 667 from N = 100 to 1000), so no implicit method.
* MuJoCo: the same chain built with its model-building API (``mujoco.MjSpec``: nested
  bodies, explicit inertia, hinge joints, contacts off); RK4, Euler (semi-implicit),
  implicit and implicitfast, steps h = 2e-2 / 2^(k/2) (``--ladder coarse``: 1e-2 / 2^k);
  CPU of
  ``mj_step(nstep=...)`` only (the model compiled beforehand).
* Exudyn: ``ObjectKinematicTree`` (minimal coordinates, one GenericODE2 node); RK44,
  GeneralizedAlpha and TrapezoidalIndex2 on the same ladder, DOPRI5 with automatic steps
  at mbint's tolerances; CPU of ``SolveDynamic`` only; the tip from its final
  joint angles by mbint's forward kinematics (the same for every code).

The fine ladders gain a similar factor in error a rung in every code (3x for a
tolerance, 4x for a fourth-order step), so that the table at matched error is not
decided by where each code's grid happens to fall.  A ladder stops where the error is
below 1e-9 m or stops falling (above 0.85 of the previous rung's; coarse: 0.7), or
where its finer settings (each dearer) can take no cell of the table any more (its code
already meets every target it misses for less CPU), and a setting is skipped (printed
with the reason) when a pilot run over T/20 predicts more than CAP = 20 s.  Then 2 more
rounds of the settings within 2x of their code's cheapest at a target (those over 5 s
are timed once); medians of the rounds; at each target tip error (1e-4, 1e-6, 1e-8 m)
the cheapest setting of each code whose error is at most the target.

Run ``python tests/benchmarks/bench_joint_peers.py [--quick] [--sizes 10,30] [--rounds 3]
[--cap 20] [--ladder fine|coarse]`` (Markdown tables on stdout, each size's on stderr as
it ends; ``--json FILE`` writes the rows).  Not part of the test suite
(``test_bench_joint_peers.py`` runs ``--quick`` sizes).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE.parent), str(HERE)]  # mbint; tests/urdf_chains.py; _report

from _report import have  # noqa: E402

SIZES, QUICK_SIZES = (10, 30, 100, 300, 1000), (4, 8)
L, MASS, T_END, G = 0.1, 0.1, 1.0, 9.81
TARGETS = (1e-4, 1e-6, 1e-8)
TOLS = (1e-4, 1e-6, 1e-8, 1e-10)
H0, LADDER = 1e-2, 10  # steps H0 / 2^k, k < LADDER
#: the ladders of ``--ladder``: "coarse" (the runs before 2026-11-28 02:30: mbint's tolerances
#: TOLS, steps H0 / 2^k) or "fine" (tolerances 10^(-3 - k/2) down to 1e-10, steps
#: T / round(50 2^(k/2)), about 2 H0 / 2^(k/2) and dividing T: each rung gains a similar
#: factor in error, 3-4x, in every code, so that the cheapest setting meeting a target is
#: not decided by the grid); a ladder has stopped falling after ``patience`` rungs in a
#: row whose error is above ``floor`` times the best before (the error of an adaptive
#: method at loose tolerances is not monotone)
LADDERS = dict(
    coarse=dict(tols=TOLS, steps=tuple(H0 / 2 ** k for k in range(LADDER)), floor=0.7,
                patience=1),
    fine=dict(tols=tuple(10.0 ** (-3 - k / 2) for k in range(15)),
              steps=tuple(T_END / round(50 * 2 ** (k / 2)) for k in range(2 * LADDER + 2)),
              floor=0.85, patience=2))
CAP, ONCE, PILOT = 20.0, 5.0, 20


def q_init(n):
    return 0.3 * np.sin(np.arange(n) + 1.0)


# ------------------------------------------------------------------ the three codes
def mbint_chain(d, n):
    """The chain from URDF: (model, tip(q) -> (3,), the JointTree)."""
    import mbint
    from mbint.mbs.joint import JointTree
    from urdf_chains import rod_chain
    m = mbint.load_urdf(rod_chain(pathlib.Path(d), n, length=L, mass=MASS, axes="yx"),
                        q=q_init(n))
    tree = JointTree(m)
    F = tree.link_frames(q_init(n))
    tip0 = F["o"][-1] + F["A"][-1] @ np.array([0.0, 0.0, -L])
    last = m.bodies[-1]
    s = last.to_body(tip0)  # the tip in the last body's frame
    tip = (lambda q: np.asarray(last.point(s, q), float))
    return m, tip, tree


def mbint_run(model, tip, form, meth, tol, t_end=T_END, h=None):
    """CPU of the whole ``simulate`` call and the tip at ``t_end``: ``meth`` at
    rtol = atol = ``tol``, or (``h`` given) at the fixed step ``h`` (s)."""
    import mbint
    opts = dict(rtol=tol, atol=tol) if h is None else dict(h=h)
    t0 = time.process_time()
    tr = mbint.simulate(model, (0.0, t_end), meth, formulation=form, t_eval=[t_end],
                        **opts)  # the final state only, as the peers give
    cpu = time.process_time() - t0
    if not tr.success:
        raise RuntimeError(f"mbint {form} {meth} {tol if h is None else h:g}: {tr.message}")
    return cpu, tip(tr.q[:, -1])


def mujoco_model(n, integrator, h):
    """The chain built with MuJoCo's model-building API (MjSpec)."""
    import mujoco
    inertia = MASS * L ** 2 / 12
    spec = mujoco.MjSpec()
    spec.option.integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper())
    spec.option.timestep = h
    spec.option.gravity = [0.0, 0.0, -G]
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    parent = spec.worldbody
    for k in range(n):
        b = parent.add_body(pos=[0.0, 0.0, 0.0 if k == 0 else -L], mass=MASS,
                            ipos=[0.0, 0.0, -L / 2], explicitinertial=True,
                            inertia=[inertia, inertia, 1e-4 * inertia])
        b.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE,
                    axis=[0.0, 1.0, 0.0] if k % 2 == 0 else [1.0, 0.0, 0.0])
        parent = b
    parent.add_site(name="tip", pos=[0.0, 0.0, -L])
    return spec.compile()


def mujoco_run(n, integrator, h, t_end=T_END):
    import mujoco
    model = mujoco_model(n, integrator, h)
    data = mujoco.MjData(model)
    data.qpos[:] = q_init(n)
    nstep = int(round(t_end / h))
    t0 = time.process_time()
    mujoco.mj_step(model, data, nstep=nstep)
    cpu = time.process_time() - t0
    mujoco.mj_kinematics(model, data)
    return cpu, data.site_xpos[0].copy()


def exudyn_run(n, solver, par, fk, t_end=T_END):
    """Exudyn's ObjectKinematicTree; ``par`` the step (fixed-step solvers) or the tolerance
    (DOPRI5, automatic steps); ``fk`` maps the final joint angles to the tip."""
    import exudyn as exu
    from exudyn.itemInterface import NodeGenericODE2, ObjectKinematicTree
    inertia = np.diag([1.0, 1.0, 1e-4]) * MASS * L ** 2 / 12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mbs = exu.SystemContainer().AddSystem()
        nd = mbs.AddNode(NodeGenericODE2(referenceCoordinates=[0.0] * n,
                                         initialCoordinates=list(q_init(n)),
                                         initialCoordinates_t=[0.0] * n,
                                         numberOfODE2Coordinates=n))
        T, off, com, J = (exu.Matrix3DList(), exu.Vector3DList(), exu.Vector3DList(),
                          exu.Matrix3DList())
        for k in range(n):
            T.Append(np.eye(3))
            off.Append([0.0, 0.0, 0.0 if k == 0 else -L])
            com.Append([0.0, 0.0, -L / 2])
            J.Append(inertia)
        kinds = [exu.JointType.RevoluteY if k % 2 == 0 else exu.JointType.RevoluteX
                 for k in range(n)]
        mbs.AddObject(ObjectKinematicTree(
            nodeNumber=nd, jointTypes=kinds, linkParents=[k - 1 for k in range(n)],
            jointTransformations=T, jointOffsets=off, linkInertiasCOM=J, linkCOMs=com,
            linkMasses=[MASS] * n, baseOffset=[0.0, 0.0, 0.0], gravity=[0.0, 0.0, -G]))
        mbs.Assemble()
        s = exu.SimulationSettings()
        s.timeIntegration.endTime = t_end
        s.timeIntegration.verboseMode = 0
        s.solutionSettings.writeSolutionToFile = False
        s.solutionSettings.sensorsWritePeriod = 1e9
        s.displayStatistics = False
        s.displayComputationTime = False
        if solver == "DOPRI5":
            s.timeIntegration.numberOfSteps = max(1, int(round(10 * t_end)))  # h_max 0.1 s
            s.timeIntegration.automaticStepSize = True
            s.timeIntegration.relativeTolerance = par
            s.timeIntegration.absoluteTolerance = par
        else:
            s.timeIntegration.numberOfSteps = int(round(t_end / par))
            s.timeIntegration.automaticStepSize = False
        kind = getattr(exu.DynamicSolverType, solver)
        t0 = time.process_time()
        ok = mbs.SolveDynamic(s, solverType=kind)
        cpu = time.process_time() - t0
    if ok is False:
        raise RuntimeError(f"Exudyn {solver} {par:g} failed")
    return cpu, fk(np.array(mbs.GetNodeOutput(nd, exu.OutputVariableType.Coordinates)))


# ------------------------------------------------------------------ the settings
class Setting:
    """One setting of one code: ``run(t_end) -> (cpu, tip)``; its times and error."""

    def __init__(self, code, label, run, ladder=None, n=None):
        self.code, self.label, self.run, self.ladder, self.n = code, label, run, ladder, n
        self.cpu, self.err, self.skipped = [], None, None

    @property
    def median(self):
        return float(np.median(self.cpu)) if self.cpu else float("inf")


def settings(n, peers, model, tip, fk, ladder="fine"):
    """Every setting at N = n: mbint's, MuJoCo's and Exudyn's (ladders flagged) on the
    ``ladder`` of :data:`LADDERS`."""
    out = []
    tols, steps = LADDERS[ladder]["tols"], LADDERS[ladder]["steps"]
    for form in ("joint", "index1"):
        for meth in ("dop853", "dopri5"):
            for tol in tols:
                out.append(Setting("mbint", f"{form} {meth} tol={tol:.3g}",
                                   lambda te, f=form, m=meth, t=tol: mbint_run(model, tip, f, m,
                                                                              t, te),
                                   ladder=f"mbint {form} {meth}"))
    for h in steps:  # mbint's classical RK4 at MuJoCo's steps: the same method
        out.append(Setting("mbint", f"joint rk4 h={h:.3g}",
                           lambda te, h=h: mbint_run(model, tip, "joint", "rk4", None, te, h),
                           ladder="mbint joint rk4"))
    if "mujoco" in peers:
        for integ in ("RK4", "Euler", "implicit", "implicitfast"):
            for h in steps:
                out.append(Setting("mujoco", f"{integ} h={h:.3g}",
                                   lambda te, i=integ, h=h: mujoco_run(n, i, h, te),
                                   ladder=f"mujoco {integ}"))
    if "exudyn" in peers:
        for solver in ("RK44", "GeneralizedAlpha", "TrapezoidalIndex2"):
            for h in steps:
                out.append(Setting("exudyn", f"{solver} h={h:.3g}",
                                   lambda te, s=solver, h=h: exudyn_run(n, s, h, fk, te),
                                   ladder=f"exudyn {solver}"))
        for tol in tols:
            out.append(Setting("exudyn", f"DOPRI5 tol={tol:.3g}",
                               lambda te, t=tol: exudyn_run(n, "DOPRI5", t, fk, te),
                               ladder="exudyn DOPRI5"))
    return out


def first_round(sets, ref, cap, log, over=None, floor=0.7, patience=1):
    """Round 1: each ladder from coarse to fine, pilot-checked against ``cap``; a ladder
    ends below 1e-9 m, where its error stops falling, or at the cap.  ``over``: the
    ladders whose coarsest setting was over the cap at a smaller N (skipped: every cost
    here grows with N), updated; ``floor``, ``patience``: a ladder whose last
    ``patience`` rungs each have an error above ``floor`` times the best before it has
    stopped falling."""
    over = {} if over is None else over
    stopped = {k: f"its coarsest setting was over the cap at N = {v}" for k, v in over.items()}
    for k in stopped:
        log(f"  skip {k}: {stopped[k]}")
    for s in sets:
        if s.ladder in stopped:
            s.skipped = stopped[s.ladder]
            continue
        try:
            pilot = s.run(T_END / PILOT)[0] * PILOT
            if pilot > cap:
                s.skipped = f"pilot over T/{PILOT} predicts {pilot:.0f} s > {cap:g} s"
                stopped[s.ladder] = "a coarser setting hit the cap"
                if not any(o.ladder == s.ladder and o.err is not None for o in sets):
                    over[s.ladder] = n_of(sets)
                log(f"  skip {s.code} {s.label}: {s.skipped}")
                continue
            cpu, x = s.run(T_END)
        except Exception as e:  # a peer's failure (instability, ...) is a row, not a crash
            s.skipped = f"failed: {e}"[:80]
            log(f"  skip {s.code} {s.label}: {s.skipped}")
            continue
        err = float(np.abs(x - ref).max())
        prev = [o for o in sets if o.ladder == s.ladder and o.err is not None]
        s.cpu.append(cpu)
        s.err = err if np.isfinite(err) else float("inf")
        if s.err < 1e-9 or (s.err < 1e-2 and stalled(prev + [s], floor, patience)):
            stopped[s.ladder] = "a coarser setting already reached its floor"
        elif dominated(sets, s):
            stopped[s.ladder] = "dominated: its code meets every target left for less"


def stalled(ladder, floor, patience):
    """Whether each of the last ``patience`` rungs of ``ladder`` (settings with errors,
    coarse to fine) has an error above ``floor`` times the smallest one before it."""
    errs = [s.err for s in ladder]
    if len(errs) <= patience:
        return False
    return all(errs[k] > floor * min(errs[:k]) for k in range(len(errs) - patience,
                                                                len(errs)))


def n_of(sets):
    return sets[0].n if sets else None


def dominated(sets, s):
    """Whether finer settings of ``s``'s ladder (each costing more than ``s``) can no
    longer take a cell of the table: for every target ``s`` misses, a setting of the same
    code already meets it for at most ``s``'s CPU time."""
    for target in TARGETS:
        if s.err <= target:
            continue
        ok = [o.cpu[0] for o in sets if o.code == s.code and o.err is not None
              and o.err <= target]
        if not ok or min(ok) > s.cpu[0]:
            return False
    return True


def candidates(sets):
    """The settings timed again: those within 2x of their code's cheapest at a target
    (round 1) and not over ONCE s, so that the medians decide the table's cells."""
    keep = []
    for code in {s.code for s in sets}:
        for target in TARGETS:
            ok = [s for s in sets if s.code == code and s.err is not None and s.err <= target]
            if ok:
                best = min(s.cpu[0] for s in ok)
                keep += [s for s in ok if s.cpu[0] <= 2 * best and s.cpu[0] <= ONCE]
    return [s for s in sets if any(s is k for k in keep)]


def timed_rounds(n, peers, rounds, cap=CAP, log=print, over=None, ladder="fine"):
    """All settings at N = n, interleaved; the reference and its check."""
    with tempfile.TemporaryDirectory() as d:
        model, tip, tree = mbint_chain(d, n)

        def fk(x):
            F = tree.link_frames(x)
            return F["o"][-1] + F["A"][-1] @ np.array([0.0, 0.0, -L])
        mbint_run(model, tip, "joint", "dopri5", 1e-3, 0.01)  # warm-up
        ref = mbint_run(model, tip, "joint", "dop853", 1e-12)[1]
        check = ("index1", "dop853") if n <= 30 else ("joint", "dopri5")
        ref2 = mbint_run(model, tip, *check, 1e-11)[1]
        sets = settings(n, peers, model, tip, fk, ladder)
        for s in sets:
            s.n = n
        first_round(sets, ref, cap, log, over, LADDERS[ladder]["floor"],
                    LADDERS[ladder]["patience"])
        again = candidates(sets)
        for _ in range(rounds - 1):
            for s in again:
                s.cpu.append(s.run(T_END)[0])
    return dict(N=n, ref_check=dict(against=" ".join(check) + " 1e-11",
                                    diff=float(np.abs(ref2 - ref).max())),
                rows=[dict(code=s.code, setting=s.label, cpu=s.median if s.cpu else None,
                           runs=len(s.cpu), err=s.err, skipped=s.skipped) for s in sets])


def matched(rows, target, code=None, prefix=""):
    """The cheapest row of ``code`` (setting starting with ``prefix``) with err <= target."""
    ok = [r for r in rows if r["cpu"] is not None and r["err"] is not None
          and r["err"] <= target and r["code"] == code and r["setting"].startswith(prefix)]
    return min(ok, key=lambda r: r["cpu"]) if ok else None


def table(results, peers):
    """The Markdown tables of :func:`timed_rounds`' results."""
    cell = (lambda r: f"{r['setting']}: {1e3 * r['cpu']:.3g}" if r else "not reached")
    ratio = (lambda a, b: f"{a['cpu'] / b['cpu']:.2f}" if a and b else "-")
    lines = ["| N | tip error <= (m) | mbint best: setting, CPU (ms) | MuJoCo best | "
             "Exudyn best | MuJoCo / mbint | Exudyn / mbint | index1 / joint |",
             "|---|---|---|---|---|---|---|---|"]
    for res in results:
        rows = res["rows"]
        for target in TARGETS:
            mb = matched(rows, target, "mbint")
            mj = matched(rows, target, "mujoco") if "mujoco" in peers else None
            ex = matched(rows, target, "exudyn") if "exudyn" in peers else None
            jo, ix = (matched(rows, target, "mbint", "joint"),
                      matched(rows, target, "mbint", "index1"))
            lines.append(f"| {res['N']} | {target:g} | {cell(mb)} | {cell(mj)} | {cell(ex)} | "
                         f"{ratio(mj, mb)} | {ratio(ex, mb)} | {ratio(ix, jo)} |")
    return "\n".join(lines)


def details(results):
    lines = []
    for res in results:
        c = res["ref_check"]
        lines.append(f"\nN = {res['N']}: reference (joint dop853 1e-12) against {c['against']}:"
                     f" {c['diff']:.1e} m")
        for r in res["rows"]:
            if r["cpu"] is not None:
                lines.append(f"  {r['code']:6s} {r['setting']:34s} CPU {1e3 * r['cpu']:10.2f} ms"
                             f" ({r['runs']} runs)  tip error {r['err']:.1e} m")
            elif r["skipped"] and "coarser" not in r["skipped"]:
                lines.append(f"  {r['code']:6s} {r['setting']:34s} skipped: {r['skipped']}")
    return "\n".join(lines)


def run(sizes=SIZES, rounds=3, cap=CAP, log=print, over=None, ladder="fine"):
    peers = [p for p in ("mujoco", "exudyn") if have(p)]
    results = []
    over = dict(over or {})
    for n in sizes:
        log(f"N = {n} ...")
        results.append(timed_rounds(n, peers, rounds, cap, log, over, ladder))
        log(table(results[-1:], peers))  # each size as it ends
    return dict(peers=peers, sizes=list(sizes), results=results, ladder=ladder)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 4, 8, one round, 2 s cap")
    ap.add_argument("--sizes", help="comma-separated N (default 10,30,100,300,1000)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cap", type=float, default=CAP, help="skip a setting predicted over "
                    "this many CPU seconds (default %(default)s)")
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--ladder", choices=sorted(LADDERS), default="fine",
                    help="the settings' ladders (default %(default)s; see LADDERS)")
    ap.add_argument("--over", default="", help="LADDER=N,...: ladders whose coarsest "
                    "setting was over the cap at a smaller N in an earlier run (skipped)")
    a = ap.parse_args(argv)
    sizes = QUICK_SIZES if a.quick else SIZES
    if a.sizes:
        sizes = tuple(int(v) for v in a.sizes.split(","))
    over = dict((k, int(v)) for k, v in (x.split("=") for x in a.over.split(",") if x))
    out = run(sizes, 1 if a.quick else a.rounds, 2.0 if a.quick else a.cap,
              log=lambda s: print(s, file=sys.stderr, flush=True), over=over,
              ladder=a.ladder)
    if not out["peers"]:
        print("Neither MuJoCo nor Exudyn is installed (pip install mbint[bench]): mbint only.")
    print(table(out["results"], out["peers"]))
    print(details(out["results"]))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
