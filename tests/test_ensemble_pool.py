"""mbint.ensemble on one machine (issue 21): threads by default for C-backed members,
whose runs release the GIL; one process pool per session, reused across calls and
rebuilt around a worker that dies; short members sent to the workers in chunks,
their results in the order of params; `mbint bench` reports wall and CPU time.

No assertion here is on wall-clock speed (the machine is shared): the speed-ups are
measured by `python -m mbint bench` and tests/benchmarks/bench_ensemble.py."""
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import mbint
from mbint import _core, _pools, models
from mbint.ensemble import _local_setup

PARAMS = [{"k2": float(k)} for k in np.geomspace(1e3, 3e5, 8)]


def pendulum_task(t_end=0.5, **options):
    options = dict(dict(method="rodas4", rtol=1e-6), **options)
    return mbint.SimulationTask(models.stiff_double_pendulum, (0.0, t_end),
                                t_eval=np.linspace(0.0, t_end, 11), **options)


def pushed_pendulum(k2):
    """The stiff double pendulum with a (zero) force computed in Python."""
    m = models.stiff_double_pendulum(k2=k2)
    m.add_force(None, lambda t, q, qd: np.zeros(m.nq), name="python push")
    return m


def same(a, b):
    for k in ("t", "q", "qd", "qdd", "lam"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.stats == b.stats


# ---------------------------------------------------------------- the default backend
def test_c_backed_members_run_on_threads_by_default_bit_identical_to_serial():
    """The default was a process pool for every task: 0.36x the serial loop for the
    short members of `mbint bench` (its start-up and the pickled Trajectories)."""
    task = pendulum_task()
    serial = [task(p) for p in PARAMS]
    res = mbint.ensemble(task, PARAMS, n_workers=2, progress=False)
    assert res.backend == "threads" and res.failed == []
    for a, b in zip(serial, res):
        same(a, b)


def test_members_that_run_python_go_to_processes_by_default():
    c_backed = pendulum_task()
    py_forces = mbint.SimulationTask(pushed_pendulum, (0.0, 0.1))
    py_events = pendulum_task(events=lambda t, q, qd: q[0])
    for task, params, backend in [(c_backed, PARAMS, "threads"),
                                  (py_forces, [1e4], "processes"),
                                  (py_events, PARAMS, "processes"),
                                  (abs, [1, 2], "processes"),
                                  (c_backed, PARAMS, "serial")]:
        n = 1 if backend == "serial" else 2
        assert _local_setup(n, None, None, task, params)[1] == backend, (task, backend)
    assert _local_setup(2, "processes", None, c_backed, PARAMS)[1] == "processes"


def test_the_threads_take_member_after_member(monkeypatch):
    """A thread was started for every member: 0.6 ms per member, measured on
    trivial ones (now about 0.02 ms)."""
    started = []

    class Counting(threading.Thread):
        def start(self):
            started.append(self.name)
            super().start()

    monkeypatch.setattr(_pools.threading, "Thread", Counting)
    res = mbint.ensemble(twice, list(range(50)), n_workers=2, backend="threads",
                         progress=False)
    assert list(res) == [2 * k for k in range(50)]
    assert len([n for n in started if n.startswith("mbint ensemble")]) == 2


def sleep_on_negative(x):
    if x < 0:
        time.sleep(600)  # in Python: cannot be stopped, its thread is left running
    return 2 * x


def test_threads_left_running_with_hung_members_are_replaced():
    """Both threads hang in members that cannot be stopped: fresh threads must take
    the other members (the ensemble runs in a helper thread, so that a failure here
    is a failed assertion and not a hung test)."""
    out = []
    helper = threading.Thread(target=lambda: out.append(mbint.ensemble(
        sleep_on_negative, [-1, -2, 1, 2, 3], n_workers=2, backend="threads", timeout=0.5,
        progress=False)), daemon=True)
    helper.start()
    helper.join(60)
    assert not helper.is_alive() and out
    res = out[0]
    assert res.failed == [0, 1] and all(res[k].error == "TimeoutError" for k in (0, 1))
    assert list(res[2:]) == [2, 4, 6]


# ---------------------------------------------------------------- the GIL
def test_a_c_backed_run_releases_the_gil_for_its_integration(monkeypatch):
    """A second Python thread counts while _core.mech_simulate runs in another thread.
    The switch interval is made huge, so the interpreter never takes the GIL from a
    thread that holds it: the counter advances only while the run has released it.
    A model with a Python force (the run holds the GIL) is the check that the probe
    sees a held GIL."""
    counts = {}
    count = [0]
    orig = _core.mech_simulate

    def probed(*args, **kw):
        c0 = count[0]
        try:
            return orig(*args, **kw)
        finally:
            counts.setdefault(threading.current_thread().name, []).append(count[0] - c0)

    monkeypatch.setattr(_core, "mech_simulate", probed)
    runs = {"c": (models.stiff_double_pendulum(k2=1e5), (0.0, 5.0), 1e-10),
            "python": (pushed_pendulum(1e5), (0.0, 0.05), 1e-6)}
    old = sys.getswitchinterval()
    try:
        for name, (model, span, rtol) in runs.items():
            def run(model=model, span=span, rtol=rtol):
                mbint.simulate(model, span, method="radau_iia", rtol=rtol, atol=rtol / 100)

            t = threading.Thread(target=run, name=name)
            sys.setswitchinterval(1000.0)
            t.start()
            while t.is_alive():
                count[0] += 1
                time.sleep(0)  # lets the run take the GIL back (its monitor, its end)
            sys.setswitchinterval(old)
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert len(counts["c"]) == 1 and counts["c"][0] >= 20, counts
    assert len(counts["python"]) == 1 and counts["python"][0] <= 2, counts


# ---------------------------------------------------------------- the process pool
def pid_of(x):
    return os.getpid()


def twice(x):
    return 2 * x


def crash_on(x, bad=(3,)):
    if x in bad:
        os._exit(7)
    return 2 * x


def crash_on_150(x):
    return crash_on(x, bad=(150,))


def hang_on_60(x):
    if x == 60:
        time.sleep(600)
    return 2 * x


def test_the_process_pool_is_started_once_and_reused():
    """Every process-backed ensemble started its own workers (about 0.1 s, and the
    first of a session 1.5 s)."""
    first = mbint.ensemble(pid_of, list(range(8)), n_workers=2, backend="processes",
                           progress=False)
    pool = set(_pools._POOL.pids())
    assert len(pool) == 2 and set(first) <= pool and os.getpid() not in pool
    second = mbint.ensemble(pid_of, list(range(8)), n_workers=2, backend="processes",
                            progress=False)
    assert set(second) <= pool and set(_pools._POOL.pids()) == pool


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_pool_survives_a_member_that_kills_its_worker():
    mbint.ensemble(pid_of, [0, 1], n_workers=2, backend="processes", progress=False)
    before = set(_pools._POOL.pids())
    res = mbint.ensemble(crash_on, list(range(6)), n_workers=2, backend="processes",
                         progress=False)
    assert res.failed == [3] and "died" in res[3].message and "exit code 7" in res[3].message
    assert [r for k, r in enumerate(res) if k != 3] == [0, 2, 4, 8, 10]
    after = set(_pools._POOL.pids())  # the survivor, and the fresh worker if one started
    assert after and all(alive(p) for p in after) and len(after & before) == 1
    again = mbint.ensemble(pid_of, list(range(8)), n_workers=2, backend="processes",
                           progress=False)
    rebuilt = set(_pools._POOL.pids())
    assert len(rebuilt) == 2 and after <= rebuilt and set(again) <= rebuilt


def test_a_worker_killed_while_idle_in_the_pool_is_replaced():
    mbint.ensemble(pid_of, [0, 1], n_workers=2, backend="processes", progress=False)
    victim = _pools._POOL.pids()[0]
    os.kill(victim, signal.SIGKILL)
    for _ in range(100):  # until it is gone
        try:
            os.waitpid(victim, os.WNOHANG)
        except ChildProcessError:
            pass
        if not any(w.proc.pid == victim and w.proc.is_alive() for w in _pools._POOL.idle):
            break
        time.sleep(0.05)
    res = mbint.ensemble(pid_of, list(range(8)), n_workers=2, backend="processes",
                         progress=False)
    assert res.failed == [] and victim not in res


def test_short_members_travel_in_chunks_and_return_in_params_order(monkeypatch):
    """One message per member made the round trips the cost of short members."""
    sent = []
    orig = _pools._send

    def counting(w, members, *args):
        sent.append(list(members))
        return orig(w, members, *args)

    monkeypatch.setattr(_pools, "_send", counting)
    params = list(range(400))
    res = mbint.ensemble(twice, params, n_workers=2, backend="processes", progress=False)
    assert list(res) == [2 * p for p in params]
    assert sorted(k for chunk in sent for k in chunk) == params
    assert len(sent) < len(params) / 4 and max(len(c) for c in sent) > 1


def test_a_member_that_kills_its_worker_inside_a_chunk_fails_alone():
    res = mbint.ensemble(crash_on_150, list(range(300)), n_workers=2, backend="processes",
                         progress=False)
    assert res.failed == [150] and "died" in res[150].message
    assert [r for k, r in enumerate(res) if k != 150] == [2 * k for k in range(300) if k != 150]


def test_a_member_that_hangs_inside_a_chunk_times_out_alone():
    res = mbint.ensemble(hang_on_60, list(range(120)), n_workers=2, backend="processes",
                         timeout=2.0, progress=False)
    assert res.failed == [60] and res[60].error == "TimeoutError"
    assert [r for k, r in enumerate(res) if k != 60] == [2 * k for k in range(120) if k != 60]


BIG_PARAMS = """
import numpy as np
import mbint

def echo(a):
    return a

if __name__ == "__main__":
    ps = [np.full(40_000, float(k)) for k in range(24)]   # 320 kB each way
    res = mbint.ensemble(echo, ps, n_workers=2, backend="processes", progress=False)
    print("OK" if all(np.array_equal(a, b) for a, b in zip(ps, res)) else "WRONG")
"""


def test_large_parameter_sets_and_results_do_not_deadlock_the_pool(tmp_path):
    """The next chunk sent ahead to a busy worker blocked the parent when it did not
    fit in the pipe, while the worker blocked sending its large result: a deadlock
    (in a subprocess here, with a time limit)."""
    import subprocess

    script = tmp_path / "big.py"
    script.write_text(BIG_PARAMS)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=240)
    assert p.returncode == 0 and p.stdout.strip() == "OK", p.stderr


# ---------------------------------------------------------------- mbint bench
def test_bench_reports_wall_and_cpu_time_and_the_load(capsys):
    from mbint.__main__ import main

    assert main(["bench", "--members", "4", "--workers", "2", "--t-end", "0.05",
                 "--rtol", "1e-6", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out and "CPU [s]" in out and "wall [s]" in out
    rows = {line.split(" x ")[0].split("  ")[0]: line for line in out.splitlines()}
    for name in ("serial loop", "threads", "processes"):
        assert name in rows and rows[name].rstrip().endswith("yes"), out
    assert "(default)" in rows["threads"]


def test_state_space_dense_trajectories_still_travel_through_the_process_pool():
    """tests/test_persistence.py checks this with the default backend, which is now
    threads for such a task (no pickling): the process pool keeps it here."""
    task = mbint.SimulationTask(models.stiff_double_pendulum, (0, 0.2),
                                method="rosenbrock_nystrom", formulation="state_space",
                                dense_output=True)
    ts = np.linspace(0, 0.2, 17)
    res = mbint.ensemble(task, [{"k2": 3e5}, {"k2": 1e5}], n_workers=2, backend="processes",
                         progress=False)
    assert res.failed == [] and np.array_equal(res[0].sol(ts), task({"k2": 3e5}).sol(ts))
