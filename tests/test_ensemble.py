"""mbint.ensemble: the same members, in the same order, bit-identical to a serial
loop on every backend (process pool, threads, a Dask LocalCluster on loopback);
a failing member is reported with its message and the others complete."""
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
