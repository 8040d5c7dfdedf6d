"""Regression table of the small models (issue 13: "nothing slower than today on
the small models of mbint.models"): the CURRENT build against a BASELINE build of
an earlier commit, timed in the same run.

Baseline: the commit named by the environment variable ``MBINT_BASELINE`` (any
git revision), else the one in ``baseline_commit.txt`` beside this file (0e9fcc5,
the state before issue 13's work).  It is exported with ``git archive`` into
``out/baseline-<sha>/`` and its extension built there once with
``python setup.py build_ext --inplace`` (the same interpreter as this one); later
runs reuse it.  No git, or the commit not in the history (a shallow clone, an
unpacked archive): :class:`BaselineUnavailable` with the reason, and the bench
is skipped.

Timing: one worker process per build (``python bench_regression.py --worker
ROOT``, ROOT first on sys.path, so ``import mbint`` takes that build's package;
the worker checks ``mbint.__file__``), fed job by job through a pipe, so
interpreter start-up and imports are not timed.  The model is built once per job
in the worker; a measurement repeats ``mbint.simulate`` (``mbint.solve_ivp`` for
the plain ODE ``bouncing_balls_ode``) until ``MIN_S`` seconds have passed (at
least once) and takes the mean per run.  After one warm-up run per job and build
(which also returns the final state), ``REPS`` repetitions: in each, every job
is measured on both builds back to back, the order of the two builds alternating
between repetitions (so a change of machine load hits both).  Only one worker
runs at a time.  Per row: the median and the interquartile range (IQR) of each
build's times; the ratio current / baseline as the median of the per-repetition
(paired) ratios, with their IQR, and, for information, the ratio of the two
medians.  The paired ratio is the measure: on the shared 2-core machine the load
drifts between repetitions, and an A/A run (two builds of the same code) gave
ratios of the medians of 0.72-1.43 where the paired medians stayed within
0.94-1.11 and no lower quartile of them exceeded 1.04 (another, with the load
average rising from 3 to 5.6 during the run: paired medians 0.79-1.19, four rows
flagged, none consistently slower).  A row is flagged when the ratio exceeds ``FLAG`` (1.10), and
"consistently slower" when even the lower quartile of the paired ratios does.

Results: the final state y(tf) = (q, q') of the two builds is compared at the
level of the tolerance, not the bits: ``max_i |y_cur,i - y_base,i| / (atol +
rtol |y_i|)`` with the run's rtol and atol (the model's ``settings`` unless the
job gives its own; fixed-step jobs use them too, as a scale), which must stay
below ``AGREE`` (100: two correct runs of one method at one tolerance differ by
the global error, usually a small multiple of the tolerance), or, when it does not,
below twice the larger of the two builds' own global errors against a tight reference
(radau_iia at 1e-12; a long or chaotic run can be a thousand tolerances off).

Jobs: every model of :mod:`mbint.models`: the planar ``PAPER_MODELS``, the plain
ODE ``bouncing_balls_ode`` and the spatial ``hmmwv`` (over 0.5 s of its 5 s, ~0.1 s
a run of the 14-body vehicle; its whole span costs 2-7 s); the default method ``dopri5``
where the model is not stiff (the stiff double pendulum takes 60000 dopri5
steps, the vehicle 6000 a second of its motion), ``bdf``, ``radau_iia``, ``rodas4``
(the vehicle: ``bdf`` only) and the model's paper method with the paper's settings
(``llm``, ``singular_perturbation``, ``rosenbrock_nystrom``, ``lstable_block``, and
``cvode_bdf`` for the RN anchor).  The whole bench took
105 s on 2 cores at load 5 after the baseline was built (43 s, once).

Run ``python tests/benchmarks/bench_regression.py`` (writes
out/bench_regression.md and .json) or ``make bench``
(test_bench_regression.py).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT_MD = ROOT / "out" / "bench_regression.md"
OUT_JSON = ROOT / "out" / "bench_regression.json"
BASELINE_FILE = HERE / "baseline_commit.txt"
REPS = 9
MIN_S = 0.15
FLAG = 1.10
AGREE = 100.0

SP_FAST = ["particle.x", "particle.y"]
RN_INDEPENDENT = ["body1.theta", "body2.theta"]

#: (model, method, options); options may hold "t_span" (else the model's own)
JOBS = [
    ("double_pendulum_stiff_spring", "dopri5", {}),
    ("double_pendulum_stiff_spring", "bdf", {}),
    ("double_pendulum_stiff_spring", "radau_iia", {}),
    ("double_pendulum_stiff_spring", "rodas4", {}),
    ("double_pendulum_stiff_spring", "llm", {"h": 0.02}),
    ("bouncing_balls", "dopri5", {}),
    ("bouncing_balls", "bdf", {}),
    ("bouncing_balls", "radau_iia", {}),
    ("bouncing_balls", "llm", {"h": 0.005}),
    ("bouncing_balls_ode", "dopri5", {}),
    ("bouncing_balls_ode", "radau_iia", {}),
    ("stiff_double_pendulum", "bdf", {}),
    ("stiff_double_pendulum", "radau_iia", {}),
    ("stiff_double_pendulum", "rodas4", {}),
    ("stiff_double_pendulum", "cvode_bdf", {}),
    ("stiff_double_pendulum", "rosenbrock_nystrom",
     {"formulation": "state_space", "independent": RN_INDEPENDENT}),
    ("pendulum_particle", "dopri5", {}),
    ("pendulum_particle", "radau_iia", {}),
    ("pendulum_particle", "rodas4", {}),
    ("pendulum_particle", "singular_perturbation", {"h": 0.005, "fast": SP_FAST}),
    ("two_link_manipulator", "dopri5", {}),
    ("two_link_manipulator", "bdf", {}),
    ("two_link_manipulator", "radau_iia", {}),
    ("two_link_manipulator", "rodas4", {}),
    ("two_link_manipulator", "lstable_block",
     {"formulation": "index3", "h": 0.01, "r": 4, "nodes": "chebyshev", "t_span": [0.0, 1.0]}),
    ("mass_spring_damper", "dopri5", {}),
    ("mass_spring_damper", "bdf", {}),
    ("mass_spring_damper", "radau_iia", {}),
    ("mass_spring_damper", "rodas4", {}),
    ("hmmwv", "rosenbrock_nystrom", {"formulation": "state_space", "t_span": [0.0, 0.5]}),
    ("hmmwv", "bdf", {"t_span": [0.0, 0.5]}),
]


class BaselineUnavailable(RuntimeError):
    """No git, or the baseline commit is not in the history: the bench cannot run."""


def _git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True
                          ).stdout.strip()


def baseline_commit():
    """The full sha of the baseline (MBINT_BASELINE, else baseline_commit.txt)."""
    rev = os.environ.get("MBINT_BASELINE") or BASELINE_FILE.read_text().split()[0]
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except FileNotFoundError as exc:
        raise BaselineUnavailable(f"git is not installed: no baseline build ({exc})") from exc
    except subprocess.CalledProcessError as exc:
        raise BaselineUnavailable(
            f"baseline commit {rev!r} not found in the git history of {ROOT} (no .git, a "
            "shallow clone or an archive?); set MBINT_BASELINE to a commit that exists") from exc


def current_commit():
    """HEAD's sha, with "+dirty" when the working tree differs from it."""
    try:
        sha = _git("rev-parse", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (FileNotFoundError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("+dirty" if dirty else "")


def build_baseline(sha, out=ROOT / "out", python=sys.executable):
    """Export commit `sha` into out/baseline-<sha[:12]>/ and build its extension in
    place (once: a stamp file marks a finished build).  Returns the directory."""
    dest = Path(out) / f"baseline-{sha[:12]}"
    stamp = dest / ".mbint-built"
    if stamp.exists():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    tar = dest.with_suffix(".tar")
    with open(tar, "wb") as fh:
        subprocess.run(["git", "archive", "--format=tar", sha], cwd=ROOT, stdout=fh, check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(dest, filter="data")
    tar.unlink()
    print(f"building the baseline {sha[:12]} in {dest} ...", file=sys.stderr, flush=True)
    subprocess.run([python, "setup.py", "-q", "build_ext", "--inplace"], cwd=dest, check=True,
                   stdout=subprocess.DEVNULL)
    stamp.write_text(sha + "\n")
    return dest


# ---------------------------------------------------------------- the worker side

def _worker(root):
    """Serve jobs from stdin (one JSON line each) with the mbint of `root`."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    sys.stdout = sys.stderr           # nothing else may write to the pipe
    sys.path.insert(0, str(root))
    import numpy as np

    import mbint
    from mbint import models

    cache = {}

    def setup(job):
        name, method, opts = job
        key = json.dumps(job, sort_keys=True)
        if key in cache:
            return cache[key]
        opts = dict(opts)
        span = opts.pop("t_span", None)
        if name == "bouncing_balls_ode":
            ode = models.bouncing_balls_ode()
            kw = {**ode.settings, **opts}
            span = tuple(span or ode.t_span)

            def call():
                res = mbint.solve_ivp(ode.fun, span, ode.y0, method=method, jac=ode.jac,
                                      events=ode.events, **kw)
                return res.y[:, -1], bool(res.success), int(res.t.size - 1)
        else:
            m = getattr(models, name)()
            kw = {**m.settings, **opts}
            span = tuple(span or m.t_span)

            def call():
                tr = mbint.simulate(m, span, method=method, **opts)
                return (np.concatenate([tr.q[:, -1], tr.qd[:, -1]]), bool(tr.success),
                        int(tr.stats["nsteps"]))
        cache[key] = (call, kw.get("rtol", 1e-6), kw.get("atol", 1e-6))
        return cache[key]

    out.write(json.dumps({"mbint": mbint.__file__}) + "\n")
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            call, rtol, atol = setup(tuple(cmd["job"]))
            if cmd["op"] == "run":
                y, ok, nsteps = call()
                reply = dict(y=[float(v) for v in y], ok=ok, nsteps=nsteps, rtol=rtol, atol=atol)
            else:
                t0, k = time.perf_counter(), 0
                while k == 0 or time.perf_counter() - t0 < cmd["min_s"]:
                    call()
                    k += 1
                reply = dict(sec=(time.perf_counter() - t0) / k, n=k)
        except Exception as exc:  # reported in the table, the other jobs go on
            reply = dict(error=f"{type(exc).__name__}: {exc}")
        out.write(json.dumps(reply) + "\n")


class Worker:
    """A worker process serving one build (root: the directory holding mbint/)."""

    def __init__(self, root, python=sys.executable):
        self.root = Path(root).resolve()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.proc = subprocess.Popen([python, str(Path(__file__).resolve()), "--worker",
                                      str(self.root)], cwd=self.root, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     bufsize=1)
        hello = json.loads(self.proc.stdout.readline())
        if Path(hello["mbint"]).resolve().parent.parent != self.root:
            self.close()
            raise RuntimeError(f"the worker for {self.root} imported {hello['mbint']}")

    def ask(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker for {self.root} died")
        return json.loads(line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


# ---------------------------------------------------------------- the parent side

def _quartiles(xs):
    import numpy as np
    q1, q2, q3 = np.percentile(xs, [25, 50, 75])
    return float(q1), float(q2), float(q3)


def scaled_difference(y_cur, y_base, rtol, atol):
    """max_i |y_cur,i - y_base,i| / (atol + rtol max(|y_cur,i|, |y_base,i|))."""
    import numpy as np
    a, b = np.asarray(y_cur, float), np.asarray(y_base, float)
    if a.shape != b.shape:
        return float("inf")
    scale = atol + rtol * np.maximum(np.abs(a), np.abs(b))
    return float(np.max(np.abs(a - b) / scale)) if a.size else 0.0


def summarize(job, base_run, cur_run, base_times, cur_times):
    """One row of the table from the two builds' warm-up runs and times."""
    name, method, opts = job
    row = dict(model=name, method=method,
               options={k: v for k, v in opts.items()}, base=base_run, cur=cur_run)
    err = base_run.get("error") or cur_run.get("error")
    if err or not base_times or not cur_times:
        row.update(ok=False, error=err or "no times")
        return row
    b1, bm, b3 = _quartiles(base_times)
    c1, cm, c3 = _quartiles(cur_times)
    p1, ratio, p3 = _quartiles([c / b for c, b in zip(cur_times, base_times)])
    diff = scaled_difference(cur_run["y"], base_run["y"], cur_run["rtol"], cur_run["atol"])
    row.update(ok=bool(base_run["ok"] and cur_run["ok"]), base_median=bm, base_iqr=b3 - b1,
               cur_median=cm, cur_iqr=c3 - c1, ratio=ratio, ratio_q1=p1, ratio_q3=p3,
               ratio_of_medians=cm / bm,
               flagged=ratio > FLAG, consistently_slower=p1 > FLAG, difference=diff,
               agree=diff <= AGREE, base_times=base_times, cur_times=cur_times)
    return row


def run(reps=REPS, min_s=MIN_S, jobs=JOBS, baseline=None, log=sys.stderr):
    """Build (or reuse) the baseline, time every job on both builds; returns
    (meta, rows).  Raises BaselineUnavailable without git history."""
    sha = baseline or baseline_commit()
    base_root = build_baseline(sha)
    meta = dict(baseline=sha, baseline_dir=str(base_root), current=current_commit(),
                current_dir=str(ROOT), reps=reps, min_s=min_s, flag=FLAG, agree=AGREE,
                python=platform.python_version(), machine=platform.machine(),
                cpus=os.cpu_count(), load_before=os.getloadavg()[0],
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    workers = {"base": Worker(base_root), "cur": Worker(ROOT)}
    try:
        runs = {b: [w.ask(op="run", job=list(j)) for j in jobs] for b, w in workers.items()}
        times = {b: [[] for _ in jobs] for b in workers}
        for rep in range(reps):
            order = ("cur", "base") if rep % 2 == 0 else ("base", "cur")
            for i, job in enumerate(jobs):
                for b in order:
                    if "error" in runs[b][i]:
                        continue
                    r = workers[b].ask(op="time", job=list(job), min_s=min_s)
                    if "error" in r:
                        runs[b][i] = r
                    else:
                        times[b][i].append(r["sec"])
            print(f"repetition {rep + 1}/{reps} done", file=log, flush=True)
        meta["load_after"] = os.getloadavg()[0]
        rows = [summarize(job, runs["base"][i], runs["cur"][i], times["base"][i],
                          times["cur"][i]) for i, job in enumerate(jobs)]
        for row, job in zip(rows, jobs):
            if row.get("ok") and not row["agree"]:
                ref = workers["cur"].ask(op="run", job=list(reference_job(job)))
                if "error" not in ref:
                    judge_by_reference(row, ref["y"])
    finally:
        for w in workers.values():
            w.close()
    return meta, rows


def reference_job(job):
    """The job's problem solved tightly (radau_iia, rtol = atol = 1e-12, the same span)."""
    name, _, opts = job
    ref = {"rtol": 1e-12, "atol": 1e-12}
    if "t_span" in opts:
        ref["t_span"] = opts["t_span"]
    return (name, "radau_iia", ref)


def judge_by_reference(row, y_ref):
    """A difference above AGREE is still agreement when it is no larger than twice the
    builds' own global errors against a tight reference (a long or chaotic run: the
    stiff-spring double pendulum's bdf at rtol 1e-6 is 1100 tolerances off the exact
    solution, so two correct builds may differ by hundreds)."""
    rtol, atol = row["cur"]["rtol"], row["cur"]["atol"]
    e_cur = scaled_difference(row["cur"]["y"], y_ref, rtol, atol)
    e_base = scaled_difference(row["base"]["y"], y_ref, rtol, atol)
    row.update(error_cur=e_cur, error_base=e_base,
               agree=row["difference"] <= 2.0 * max(e_cur, e_base))


def _opts(o):
    return ", ".join(f"{k}={v}" for k, v in o.items()).replace("'", "") or "-"


def report(meta, rows):
    lines = ["# Regression table: the small models of mbint.models, current vs baseline", "",
             f"baseline {meta['baseline'][:12]} (built in out/), current {meta['current'][:12]}"
             f"{' (+ uncommitted changes)' if meta['current'].endswith('+dirty') else ''}; "
             f"{meta['date']}, Python {meta['python']}, {meta['cpus']} CPUs, load average "
             f"{meta['load_before']:.1f} before / {meta['load_after']:.1f} after.", "",
             f"Time: one run of `mbint.simulate` (`solve_ivp` for bouncing_balls_ode) over the "
             f"model's t_span unless given; median over {meta['reps']} interleaved repetitions "
             f"(builds alternating, each measurement >= {meta['min_s']} s of repeated runs), "
             "IQR in brackets.  ratio = median of the per-repetition ratios current / "
             "baseline (the two builds timed back to back), IQR = their IQR, of medians = "
             "the ratio of the two medians (load drift between repetitions shows here).  diff = max |y_cur - y_base| / (atol + rtol |y|) at "
             f"tf (agree: <= {meta['agree']:g}).  FLAG: ratio > {meta['flag']:.2f} "
             "(SLOWER: also the lower quartile of the paired ratios).", "",
             "| model | method | options | baseline [ms] | current [ms] | ratio | IQR | "
             "of medians | steps base / cur | diff | |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        head = f"| {r['model']} | {r['method']} | {_opts(r['options'])} |"
        if "ratio" not in r:
            lines.append(head + f" - | - | - | - | - | - | - | FAILED: {r['error']} |")
            continue
        flag = ("SLOWER" if r["consistently_slower"] else "FLAG" if r["flagged"] else "")
        if not r["agree"]:
            flag += " RESULTS DIFFER"
        elif "error_cur" in r:
            flag += (f" within the global errors ({r['error_cur']:.0f} / {r['error_base']:.0f}"
                     " against a 1e-12 reference)")
        if not r["ok"]:
            flag += " run failed"
        lines.append(
            head + f" {r['base_median'] * 1e3:.2f} ({r['base_iqr'] * 1e3:.2f}) | "
            f"{r['cur_median'] * 1e3:.2f} ({r['cur_iqr'] * 1e3:.2f}) | {r['ratio']:.3f} | "
            f"{r['ratio_q1']:.2f}-{r['ratio_q3']:.2f} | {r['ratio_of_medians']:.2f} | "
            f"{r['base']['nsteps']} / "
            f"{r['cur']['nsteps']} | {r['difference']:.1e} | {flag.strip()} |")
    timed = [r for r in rows if "ratio" in r]
    if timed:
        import numpy as np
        g = float(np.exp(np.mean(np.log([r["ratio"] for r in timed]))))
        lines += ["", f"- geometric mean of the ratios over {len(timed)} rows: {g:.3f}; "
                  f"range {min(r['ratio'] for r in timed):.3f} ... "
                  f"{max(r['ratio'] for r in timed):.3f}",
                  f"- flagged (> {meta['flag']:.2f}): "
                  + (", ".join(f"{r['model']}/{r['method']} {r['ratio']:.2f}"
                               for r in timed if r["flagged"]) or "none"),
                  "- consistently slower: "
                  + (", ".join(f"{r['model']}/{r['method']}" for r in timed
                               if r["consistently_slower"]) or "none"),
                  "- results differing beyond the tolerance level: "
                  + (", ".join(f"{r['model']}/{r['method']}" for r in timed if not r["agree"])
                     or "none")]
    failed = [r for r in rows if "ratio" not in r]
    if failed:
        lines.append("- failed: " + ", ".join(f"{r['model']}/{r['method']}" for r in failed))
    return "\n".join(lines) + "\n"


def write(meta, rows):
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    text = report(meta, rows)
    OUT_MD.write_text(text)
    OUT_JSON.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    return text


def main():
    try:
        meta, rows = run()
    except BaselineUnavailable as exc:
        print(f"bench_regression skipped: {exc}")
        return None
    text = write(meta, rows)
    print(text)
    print(f"written to {OUT_MD} and {OUT_JSON}")
    return rows


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        _worker(sys.argv[2])
    else:
        main()
