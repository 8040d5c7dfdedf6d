"""Assertions on the ensemble benchmark (``bench_ensemble.py``); run by ``make bench`` only.

* every configuration (process pool, threads, Dask LocalCluster, 1 and 2 workers,
  whole trajectories or reduced outputs) returns the 64 members equal to the serial
  runs to the bit;
* two pool processes are faster than one (the members are independent; the
  measured speed-ups are printed and written to out/bench_ensemble.md, not
  asserted beyond this: the machine has 2 cores and is shared).
"""
from __future__ import annotations

import pytest

import bench_ensemble as bench


@pytest.fixture(scope="module")
def results():
    res = bench.run_all()
    print("\n" + bench.write_report(res))
    print(f"written to {bench.OUT_MD}")
    return res


def test_every_configuration_is_bit_identical_to_serial(results):
    assert len(results["serial"]) == bench.N_MEMBERS
    assert all(r.status == 0 for r in results["serial"])
    for row in results["rows"]:
        assert row["identical"], row["config"]


def test_two_pool_workers_beat_one(results):
    med = {r["config"]: r["median"] for r in results["rows"]}
    assert med["processes x 2"] < med["processes x 1"]
