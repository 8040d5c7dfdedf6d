"""Record, then compare bit for bit, the results of a fixed matrix of runs.

A refactoring that promises "behaviour unchanged" is checked with it: record on the
commit before the change, compare on the change.

    python tools/golden.py record out/golden.json     # on the old tree
    python tools/golden.py compare out/golden.json    # on the new tree

Every run stores sha256 digests of its arrays (t, y or q/qd/qdd/lam, the events, the
dense output at a few points) and its statistics; ``compare`` lists every case whose
digests or statistics differ, with the largest relative difference of the arrays
(when the old arrays were kept with ``--keep``), and exits 1 when any differs.

The matrix: every registered method on a small stiff ODE (fixed-step methods with
``h=``), ``solve_dae`` with ida; every planar paper model on the index-1 formulation
with a stiff and a non-stiff method; the state-space and the four DAE formulations
with the methods that solve them; projection, Baumgarte terms, switching contacts,
user events, t_eval and dense output; a sparse chain; a spatial model on index1 and
state_space; a MechanicalSystem with Python kernels.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time

import numpy as np


def _digest(a):
    a = np.ascontiguousarray(np.asarray(a, dtype=float))
    return hashlib.sha256(a.tobytes() + str(a.shape).encode()).hexdigest()[:16]


def _stats(d):
    return {k: int(v) for k, v in sorted(d.items()) if isinstance(v, (int, np.integer))}


def _ivp_record(res):
    out = {"t": _digest(res.t), "y": _digest(res.y), "status": int(res.status),
           "nfev": int(res.nfev), "njev": int(res.njev), "nlu": int(res.nlu)}
    if res.sol is not None:
        ts = np.linspace(res.t[0], res.t[-1], 7)
        out["sol"] = _digest(res.sol(ts))
    if res.t_events is not None:
        out["t_events"] = _digest(np.concatenate([np.ravel(x) for x in res.t_events] or [[]]))
    return out, {"y": np.asarray(res.y)[:, -1].tolist()}


def _traj_record(tr):
    out = {"t": _digest(tr.t), "q": _digest(tr.q), "qd": _digest(tr.qd), "qdd": _digest(tr.qdd),
           "lam": _digest(tr.lam), "status": int(tr.status_code), "stats": _stats(tr.stats)}
    if tr.sol is not None:
        ts = np.linspace(tr.t[0], tr.t[-1], 7)
        out["sol"] = _digest(tr.sol(ts))
    if tr.t_events is not None:
        out["t_events"] = _digest(np.concatenate([np.ravel(x) for x in tr.t_events] or [[]]))
    tc = getattr(tr, "t_contacts", None)
    if tc:
        out["t_contacts"] = _digest(np.concatenate([np.ravel(x) for x in tc]))
    return out, {"q": tr.q[:, -1].tolist(), "qd": tr.qd[:, -1].tolist()}


def cases():
    """(name, thunk) pairs; each thunk returns (record, final values)."""
    import mbint
    from mbint import models, problems

    out = []
    vdp = problems.van_der_pol
    for info in mbint.methods():
        name = info.name
        kw = dict(rtol=1e-6, atol=1e-8)
        if not getattr(info, "adaptive", True) or "none" in str(getattr(info, "error_estimate", "")):
            kw = dict(h=1e-3)
        if name in ("radau_ia2", "radau_ia3", "radau_ia4", "radau_iia2", "radau_iia3",
                    "radau_iia4", "lobatto_iiic2", "lobatto_iiic3", "lobatto_iiic4"):
            kw = dict(h=1e-3, rtol=1e-6, atol=1e-8)
        if name == "ida":
            continue

        def run(name=name, kw=kw):
            return _ivp_record(mbint.solve_ivp(vdp, (0, 0.5), problems.VDP_Y0, method=name,
                                               dense_output=True, **kw))
        out.append((f"ivp/vdp/{name}", run))

    def arenstorf():
        return _ivp_record(mbint.solve_ivp(problems.arenstorf, (0, problems.ARENSTORF_T),
                                           problems.ARENSTORF_Y0, method="dop853", rtol=1e-9,
                                           atol=1e-12, dense_output=True))
    out.append(("ivp/arenstorf/dop853", arenstorf))

    def events():
        def g(t, y):
            return y[0]
        g.terminal = False
        return _ivp_record(mbint.solve_ivp(vdp, (0, 3), problems.VDP_Y0, method="rodas4",
                                           events=[g], rtol=1e-6, atol=1e-8))
    out.append(("ivp/vdp/events/rodas4", events))

    # ---- mechanisms ----
    def sim(model_fn, method, span=None, **kw):
        def run():
            m = model_fn()
            t_span = span or m.t_span
            return _traj_record(mbint.simulate(m, t_span, method=method, **kw))
        return run

    stiff = ["radau_iia", "bdf", "rodas4", "cvode_bdf", "llm"]
    for mname, fn in models.PAPER_MODELS.items():
        span = (0.0, 0.3)
        for meth in ["dopri5"] + stiff:
            out.append((f"sim/{mname}/index1/{meth}", sim(fn, meth, span)))
    sdp = models.stiff_double_pendulum
    span = (0.0, 0.5)
    for meth in ["rosenbrock_nystrom", "w_nystrom", "radau_iia", "bdf", "rodas4", "ros4", "w2",
                 "dopri5", "llm", "adams", "auto", "singular_perturbation"]:
        out.append((f"sim/sdp/state_space/{meth}", sim(sdp, meth, span, formulation="state_space",
                                                       dense_output=True)))
    out.append(("sim/sdp/state_space/rn_prefer", sim(sdp, "rosenbrock_nystrom", span,
                                                     formulation="state_space",
                                                     independent=[2, 5])))
    for form in ("index1_dae", "index2", "index3", "ggl"):
        for meth in ("radau_iia", "bdf"):
            out.append((f"sim/sdp/{form}/{meth}", sim(sdp, meth, span, formulation=form,
                                                      dense_output=True)))
        out.append((f"sim/sdp/{form}/lstable_block", sim(sdp, "lstable_block", (0, 0.05),
                                                         formulation=form, h=1e-3)))
    for form in ("index1_dae", "ggl"):
        out.append((f"sim/sdp/{form}/ida", sim(sdp, "ida", span, formulation=form)))
    out.append(("sim/sdp/index1_dae/rodas4", sim(sdp, "rodas4", span, formulation="index1_dae")))
    out.append(("sim/sdp/index1/project", sim(sdp, "dopri5", span, project=True)))
    out.append(("sim/sdp/index1/baumgarte", sim(sdp, "dopri5", span, baumgarte=5.0)))
    out.append(("sim/sdp/index1/t_eval", sim(sdp, "radau_iia", span,
                                            t_eval=np.linspace(0, 0.5, 11), dense_output=True)))
    out.append(("sim/sdp/index1/rosenbrock_nystrom", sim(sdp, "rosenbrock_nystrom", span)))
    out.append(("sim/tlm/index1/lstable", sim(models.two_link_manipulator, "lstable_block",
                                             (0, 0.1), h=1e-3)))
    out.append(("sim/pp/index1/sp", sim(models.pendulum_particle, "singular_perturbation",
                                       (0, 0.2), h=0.005, fast="auto")))
    balls = models.bouncing_balls
    for meth in ("llm", "dopri5", "radau_iia", "cvode_bdf"):
        out.append((f"sim/balls/index1/{meth}", sim(balls, meth, (0, 1.0))))
    out.append(("sim/balls/state_space/bdf", sim(balls, "bdf", (0, 0.5), formulation="state_space")))

    def user_events():
        m = sdp()

        def g(t, q, qd):
            return q[2] - 3.5
        g.terminal = False
        return _traj_record(mbint.simulate(m, (0, 0.5), method="radau_iia", events=[g]))
    out.append(("sim/sdp/index1/events", user_events))
    out.append(("sim/sdp/state_space/events", lambda: _traj_record(mbint.simulate(
        sdp(), (0, 0.5), method="bdf", formulation="state_space",
        events=[lambda t, q, qd: q[2] - 3.5]))))

    def chain(meth, la):
        def run():
            m = models.pendulum_chain(25, k=50.0, c=0.5)
            return _traj_record(mbint.simulate(m, (0, 0.05), method=meth, rtol=1e-6, atol=1e-8,
                                               linear_algebra=la))
        return run
    for meth in ("radau_iia", "bdf", "rodas4", "cvode_bdf", "dopri5"):
        out.append((f"sim/chain25/sparse/{meth}", chain(meth, "sparse")))
    out.append(("sim/chain25/dense/radau_iia", chain("radau_iia", "dense")))

    def spatial(form, meth):
        def run():
            m = mbint.SpatialModel(gravity=(0, 0, -9.81))
            b1 = m.add_body(mass=2.0, inertia=(0.1, 0.2, 0.15), r=(0.5, 0, 0))
            b2 = m.add_body(mass=1.0, inertia=(0.05, 0.05, 0.02), r=(1.5, 0, 0))
            m.add_spherical(m.ground, b1, point=(0, 0, 0))
            m.add_revolute(b1, b2, point=(1.0, 0, 0), axis=(0, 1, 0))
            return _traj_record(mbint.simulate(m, (0, 0.3), method=meth, formulation=form,
                                               rtol=1e-6, atol=1e-8))
        return run
    for form, meth in (("index1", "radau_iia"), ("index1", "dopri5"), ("index1", "cvode_bdf"),
                       ("state_space", "bdf"), ("state_space", "rosenbrock_nystrom")):
        out.append((f"sim/spatial_dp/{form}/{meth}", spatial(form, meth)))

    def system():
        # a pendulum as a MechanicalSystem with Python kernels (x, y of a point mass)
        L, g = 1.0, 9.81

        mass = np.eye(2)

        def forces(t, q, qd):
            return np.array([0.0, -g])

        def phi(t, q):
            return np.array([q[0] ** 2 + q[1] ** 2 - L ** 2])

        def phi_q(t, q):
            return np.array([[2 * q[0], 2 * q[1]]])

        def gamma(t, q, qd):
            return np.array([-2 * (qd[0] ** 2 + qd[1] ** 2)])

        s = mbint.MechanicalSystem(mass, forces, phi, phi_q, gamma, q0=[L, 0.0],
                                   qd0=[0.0, 0.0])
        return _traj_record(mbint.simulate(s, (0, 0.5), method="radau_iia", rtol=1e-6,
                                           atol=1e-8))
    out.append(("sim/system/index1/radau_iia", system))

    def hmmwv(form, meth):
        def run():
            m = models.hmmwv()
            return _traj_record(mbint.simulate(m, (0, 0.05), method=meth, formulation=form))
        return run
    out.append(("sim/hmmwv/index1/radau_iia", hmmwv("index1", "radau_iia")))
    out.append(("sim/hmmwv/state_space/rosenbrock_nystrom", hmmwv("state_space",
                                                                  "rosenbrock_nystrom")))

    def robertson_c(meth):
        def run():
            return _ivp_record(mbint.solve_ivp(problems.c_rhs("robertson"), (0, 40.0),
                                               [1.0, 0.0, 0.0], method=meth, rtol=1e-6,
                                               atol=1e-10, jac=problems.c_jac("robertson")))
        return run
    for meth in ("radau_iia", "bdf", "rodas4", "cvode_bdf", "arkode_dirk", "ida"):
        out.append((f"ivp/robertson_c/{meth}", robertson_c(meth)))

    def dae():
        def res(t, y, yp):
            return np.array([yp[0] + 0.04 * y[0] - 1e4 * y[1] * y[2],
                             yp[1] - 0.04 * y[0] + 1e4 * y[1] * y[2] + 3e7 * y[1] ** 2,
                             y[0] + y[1] + y[2] - 1.0])
        r = mbint.solve_dae(res, (0, 10.0), [1.0, 0.0, 0.0], algebraic_vars=[False, False, True], rtol=1e-6,
                            atol=1e-10)
        return _ivp_record(r)
    out.append(("dae/robertson/ida", dae))
    return out


def record(path, keep=True):
    res, t0 = {}, time.process_time()
    for name, thunk in cases():
        try:
            rec, final = thunk()
        except Exception as exc:  # a case that fails is recorded as its error
            rec, final = {"error": f"{type(exc).__name__}: {exc}"}, {}
        if keep:
            rec["final"] = final
        res[name] = rec
    with open(path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    print(f"{len(res)} cases recorded in {path} ({time.process_time() - t0:.1f} s CPU)")


def compare(path):
    with open(path) as f:
        old = json.load(f)
    new_path = path + ".new"
    record(new_path)
    with open(new_path) as f:
        new = json.load(f)
    bad = 0
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            print(f"{name}: only in {'new' if a is None else 'old'}")
            bad += 1
            continue
        fa = a.pop("final", {})
        fb = b.pop("final", {})
        if a != b:
            bad += 1
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            rel = []
            for k in fa:
                if k in fb and len(fa[k]) == len(fb[k]) and fa[k]:
                    x, y = np.asarray(fa[k]), np.asarray(fb[k])
                    rel.append(float(np.max(np.abs(x - y) / np.maximum(np.abs(x), 1e-300))))
            print(f"{name}: differs in {keys}; final values max rel diff "
                  f"{max(rel) if rel else float('nan'):.3g}")
            for k in keys:
                if k in ("stats", "error", "status"):
                    print(f"    {k}: {a.get(k)} -> {b.get(k)}")
    print(f"{len(new)} cases, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("record", "compare"):
        print(__doc__)
        sys.exit(2)
    if sys.argv[1] == "record":
        record(sys.argv[2])
    else:
        sys.exit(compare(sys.argv[2]))
