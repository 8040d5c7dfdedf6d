"""mbint.ensemble: the same members, in the same order, bit-identical to a serial
loop on every backend (process pool, threads, a Dask LocalCluster on loopback);
a failing member is reported with its message and the others complete."""
import os
import time

import numpy as np
import pytest

import mbint
from mbint import models

T_EVAL = np.linspace(0.0, 0.5, 11)
K2 = np.geomspace(1e3, 3e5, 16)
PARAMS = [{"k2": float(k)} for k in K2]


def pendulum_task():
    return mbint.SimulationTask(models.stiff_double_pendulum, (0.0, 0.5), method="rodas4",
                                rtol=1e-6, t_eval=T_EVAL)


def fragile_model(k2):
    if k2 < 0:
        raise ValueError(f"k2 must be non-negative, got {k2}")
    return models.stiff_double_pendulum(k2=k2)


@pytest.fixture(scope="module")
def serial():
    """The reference: a plain loop, no ensemble machinery."""
    task = pendulum_task()
    return [task(p) for p in PARAMS]


def same(a, b):
    for k in ("t", "q", "qd", "qdd", "lam"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.stats == b.stats


@pytest.mark.parametrize("backend,n", [("serial", 1), ("processes", 2), ("threads", 2)])
def test_ensemble_is_bit_identical_to_serial_runs(serial, backend, n):
    res = mbint.ensemble(pendulum_task(), PARAMS, n_workers=n, backend=backend, progress=False)
    assert len(res) == 16 and res.failed == [] and res.backend == backend
    for a, b in zip(serial, res):
        same(a, b)
    # the stiffness reached the model: softer springs bend the pendulum more
    rel = [r.output("relative_angle")[-1] for r in res]
    assert rel[0] != rel[-1]


def test_failing_member_is_reported_and_the_others_complete(serial):
    params = PARAMS[:5] + [{"k2": -1.0}] + PARAMS[5:8]
    task = mbint.SimulationTask(fragile_model, (0.0, 0.5), method="rodas4", rtol=1e-6,
                                t_eval=T_EVAL)
    res = mbint.ensemble(task, params, n_workers=2, progress=False)
    assert res.failed == [5]
    err = res[5]
    assert isinstance(err, mbint.MemberError) and not err.success and err.status == -1
    assert err.message == "ValueError: k2 must be non-negative, got -1.0"
    assert "fragile_model" in err.traceback and err.params == {"k2": -1.0}
    for a, b in zip(serial[:8], res[:5] + res[6:]):
        same(a, b)


def test_lambdas_travel_to_the_process_pool_and_results_reduce():
    offset = 0.25
    res = mbint.ensemble(lambda x: x ** 2 + offset, [1.0, 2.0, 3.0], n_workers=2,
                         progress=True)
    assert list(res) == [1.25, 4.25, 9.25]
    task = mbint.SimulationTask(models.mass_spring_damper, (0, 1), method="radau_iia",
                                reduce=lambda traj: {"x_end": traj.output("x")[-1]})
    res = mbint.ensemble(task, [{"k": 10.0}, {"k": 20.0}], n_workers=2, progress=False)
    ds = res.to_xarray()
    assert ds["x_end"].dims == ("member",) and list(ds["k"].values) == [10.0, 20.0]


def test_dataset_has_a_member_dimension_and_marks_failures(serial):
    params = PARAMS[:3] + [{"k2": -1.0}]
    task = mbint.SimulationTask(fragile_model, (0.0, 0.5), method="rodas4", rtol=1e-6,
                                t_eval=T_EVAL)
    ds = mbint.ensemble(task, params, n_workers=1, progress=False, dataset=True)
    assert ds["q"].dims == ("member", "coordinate", "time")
    assert list(ds["k2"].values) == [p["k2"] for p in params]
    assert list(ds["success"].values) == [True, True, True, False]
    for k in range(3):
        assert np.array_equal(ds["q"].values[k], serial[k].q)
    assert np.all(np.isnan(ds["q"].values[3]))


def test_ensemble_validates_its_arguments():
    with pytest.raises(ValueError, match="task must be callable"):
        mbint.ensemble(3, [1])
    with pytest.raises(ValueError, match="n_workers"):
        mbint.ensemble(abs, [1], n_workers=0)
    with pytest.raises(ValueError, match="backend"):
        mbint.ensemble(abs, [1], backend="gpu")
    with pytest.raises(ValueError, match="common t_eval"):
        task = mbint.SimulationTask(models.stiff_double_pendulum, (0, 0.5), method="rodas4")
        mbint.ensemble(task, PARAMS[:2], n_workers=1, progress=False, dataset=True)


# ---------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       worker_dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_dask_ensemble_is_bit_identical_and_reports_failures(client, serial):
    res = mbint.ensemble(pendulum_task(), PARAMS, client=client, progress=False)
    assert res.backend == "dask" and res.failed == []
    for a, b in zip(serial, res):
        same(a, b)
    task = mbint.SimulationTask(fragile_model, (0.0, 0.5), method="rodas4", rtol=1e-6,
                                t_eval=T_EVAL)
    res = mbint.ensemble(task, PARAMS[:2] + [{"k2": -1.0}], client=client, progress=False)
    assert res.failed == [2] and "non-negative" in res[2].message
    same(res[1], serial[1])


def test_dask_dataset_is_lazy_and_equal_to_the_local_one(client, serial):
    import dask.array as da

    ds = mbint.ensemble(pendulum_task(), PARAMS[:6], client=client, dataset=True)
    assert isinstance(ds["q"].data, da.Array) and ds["q"].data.numblocks[0] == 6
    local = mbint.ensemble(pendulum_task(), PARAMS[:6], n_workers=1, progress=False,
                           dataset=True)
    computed = ds.compute()
    for name in ("q", "lam", "total_energy", "success"):
        assert np.array_equal(computed[name].values, local[name].values), name
    assert np.array_equal(computed["k2"].values, local["k2"].values)


def test_import_mbint_does_not_import_dask():
    import subprocess
    import sys

    code = "import sys, mbint; print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- failure modes
GUARDED = '''
import os
import time

import numpy as np
import mbint

def main():
    res = mbint.ensemble(abs, [-1.0, -2.0, -3.0], n_workers=2, progress=False)
    print("RESULT", list(res), flush=True)
'''


@pytest.mark.parametrize("guard", [False, True])
def test_a_script_without_the_main_guard_is_told_why(tmp_path, guard):
    """The README's sweep pasted into a script without `if __name__ == "__main__":`
    failed every member with BrokenProcessPool and said nothing of the cause (the
    workers import the script again and start an ensemble of their own)."""
    import subprocess
    import sys

    script = tmp_path / "sweep.py"
    script.write_text(GUARDED + ('if __name__ == "__main__":\n    main()\n' if guard else "main()\n"))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    if guard:
        assert p.returncode == 0 and "RESULT [1.0, 2.0, 3.0]" in p.stdout, p.stderr
    else:
        assert p.returncode != 0 and "RESULT" not in p.stdout
        assert 'if __name__ == "__main__":' in p.stderr and "sweep.py" in p.stderr, p.stderr


def crash_on_three(x):
    if x == 3:
        os._exit(7)
    return 2 * x


def test_a_member_that_kills_its_worker_fails_alone():
    """os._exit in one member failed every pending member (BrokenProcessPool)."""
    res = mbint.ensemble(crash_on_three, list(range(6)), n_workers=2, progress=False)
    assert res.failed == [3]
    assert "worker process" in res[3].message and "died" in res[3].message
    assert "exit code 7" in res[3].message and res[3].params == 3
    assert [r for k, r in enumerate(res) if k != 3] == [0, 2, 4, 8, 10]


def slow_rhs(t, y):
    time.sleep(0.002)
    return -y


def hang_in(x):
    """x = "python": hangs in Python; "run": in a (very long) mbint run; else returns x."""
    if x == "python":
        time.sleep(600)
    if x == "run":
        mbint.solve_ivp(slow_rhs, (0, 1e9), [1.0], rtol=1e-12, atol=1e-14, t_eval=[0.0, 1e9])
    return x


class SlowToLoad:
    """A task whose unpickling takes 2.5 s (as importing a heavy module in a fresh
    worker does); each member returns at once."""

    def __init__(self):
        self.factor = 2  # a state, so that unpickling calls __setstate__

    def __call__(self, x):
        return self.factor * x

    def __setstate__(self, state):
        time.sleep(2.5)
        self.__dict__.update(state)


def test_loading_the_task_is_not_the_members_run():
    """Regression: a process worker's member timeout ran from the moment the task was
    sent, so the worker's loading of it counted: under load a fresh worker's imports
    took longer than timeout = 1.5 s and a member that returns at once timed out."""
    res = mbint.ensemble(SlowToLoad(), [1, 2, 3], n_workers=2, backend="processes",
                         timeout=1.0, progress=False)
    assert res.failed == [] and list(res) == [2, 4, 6]


@pytest.mark.parametrize("backend", ["processes", "threads", "serial"])
def test_a_member_that_hangs_times_out_alone(backend):
    """A member that hangs hung the ensemble forever; there was no timeout."""
    import threading

    params = [1, "run", 2, 3] + ([] if backend == "serial" else ["python", 4])
    n_threads = threading.active_count()
    t0 = time.monotonic()
    res = mbint.ensemble(hang_in, params, n_workers=2, backend=backend, timeout=1.5,
                         progress=False)
    assert time.monotonic() - t0 < 60
    hung = [k for k, p in enumerate(params) if isinstance(p, str)]
    assert res.failed == hung
    for k in hung:
        assert res[k].error == "TimeoutError" and "timeout = 1.5 s" in res[k].message
    assert [r for k, r in enumerate(res) if k not in hung] == \
        [p for p in params if not isinstance(p, str)]
    if backend == "threads":  # the run was stopped through the driver's monitor
        assert "stopped" in res[1].message and "left running" in res[4].message
        assert threading.active_count() <= n_threads + 1   # only the one in time.sleep


CTRL_C_CHILD = '''
import sys, time
import mbint

def slow_rhs(t, y):
    time.sleep(0.002)
    return -y

def member(x):
    if x < 2:
        return x
    r = mbint.solve_ivp(slow_rhs, (0, 1e9), [1.0], rtol=1e-12, atol=1e-14, t_eval=[0.0, 1e9])
    return r.status

class Counter:
    """stands in for the progress bar: says on stdout how many members have finished"""
    n = 0

    def update(self, k):
        self.n += k
        print("DONE", self.n, flush=True)

    def close(self):
        pass


if __name__ == "__main__":
    import mbint.progress
    mbint.progress.bar = lambda **kw: Counter()
    print("START", flush=True)
    try:
        mbint.ensemble(member, [0, 1, 2, 3, 4], n_workers=2, backend=sys.argv[1],
                       progress=True)
        print("FINISHED", flush=True)
    except KeyboardInterrupt as exc:
        res = getattr(exc, "result", None)
        kinds = None if res is None else [r if isinstance(r, int) else type(r).__name__
                                          for r in res]
        print("INTERRUPTED", repr(time.monotonic()), type(exc).__name__, kinds, flush=True)
'''


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_ctrl_c_stops_the_members_and_hands_back_the_finished_ones(backend, tmp_path):
    """Ctrl-C on a thread-backed ensemble waited until the running members ended (42 s
    measured; here they would run for days), and the finished members were lost."""
    import signal
    import subprocess
    import sys

    script = tmp_path / "child.py"
    script.write_text(CTRL_C_CHILD)
    p = subprocess.Popen([sys.executable, str(script), backend], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "START"
        # the two quick members are back (not a fixed wait: a loaded machine takes seconds
        # to start a process pool), then three runs are going
        assert p.stdout.readline().split() == ["DONE", "1"]
        assert p.stdout.readline().split() == ["DONE", "2"]
        time.sleep(1.0)
        t_sig = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    words = out.split(maxsplit=3)
    assert words and words[0] == "INTERRUPTED", out + err
    assert float(words[1]) - t_sig < 2.0
    assert words[2] == "EnsembleInterrupted"
    assert words[3].strip() == "[0, 1, 'MemberError', 'MemberError', 'MemberError']"
