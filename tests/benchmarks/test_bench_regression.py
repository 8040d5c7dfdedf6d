"""make bench: the regression table of the small models (bench_regression.py), the
current build against the baseline commit (baseline_commit.txt or MBINT_BASELINE),
timed in the same run.  Writes out/bench_regression.md and .json.

Asserted: every job runs on both builds, the final states agree to the tolerance
level, and no row is consistently slower than 1.10x (the lower quartile of its
paired per-repetition ratios above 1.10: a single slow median on a shared machine
is flagged in the table, not failed).  Skipped when the git history (or git) is
missing."""
import numpy as np
import pytest

import bench_regression as bench


@pytest.fixture(scope="module")
def table():
    try:
        meta, rows = bench.run()
    except bench.BaselineUnavailable as exc:
        pytest.skip(f"bench_regression: {exc}")
    print(bench.write(meta, rows))
    return meta, rows


def test_scaled_difference():
    """The agreement measure: |difference| in units of atol + rtol |y|."""
    assert bench.scaled_difference([1.0, 2.0], [1.0, 2.0], 1e-6, 1e-8) == 0.0
    d = bench.scaled_difference([1.0, -200.0], [1.0 + 3e-6, -200.0], 1e-6, 1e-8)
    assert abs(d - 3e-6 / (1e-8 + 1e-6 * (1.0 + 3e-6))) < 1e-9
    assert bench.scaled_difference([1.0], [1.0, 2.0], 1e-6, 1e-8) == np.inf


def test_summary_flags_a_slower_row():
    """Medians, IQRs and the two flags from known times: current 1.25x slower in
    every repetition is flagged and consistently slower; 1.05x is neither."""
    run = dict(y=[1.0, 2.0], ok=True, nsteps=10, rtol=1e-6, atol=1e-8)
    base = [1.0, 1.1, 0.9, 1.0, 1.2]
    slow = bench.summarize(("m", "x", {}), run, run, base, [1.25 * b for b in base])
    assert slow["base_median"] == 1.0 and abs(slow["ratio"] - 1.25) < 1e-12
    assert abs(slow["ratio_of_medians"] - 1.25) < 1e-12
    assert abs(slow["base_iqr"] - 0.1) < 1e-12
    assert slow["flagged"] and slow["consistently_slower"] and slow["agree"]
    same = bench.summarize(("m", "x", {}), run, run, base, [1.05 * b for b in base])
    assert not same["flagged"] and not same["consistently_slower"]
    # a load drift: the medians' ratio is 2, but each back-to-back pair but one is equal
    drift = bench.summarize(("m", "x", {}), run, run, [1.0, 1.0, 1.0, 2.0, 2.0],
                            [1.0, 1.0, 2.0, 2.0, 2.0])
    assert drift["ratio"] == 1.0 and drift["ratio_of_medians"] == 2.0 and not drift["flagged"]
    failed = bench.summarize(("m", "x", {}), dict(error="ValueError: no"), run, [], [])
    assert not failed["ok"] and "ratio" not in failed


def test_all_jobs_ran_on_both_builds(table):
    _, rows = table
    bad = [(r["model"], r["method"], r.get("error")) for r in rows if not r["ok"]]
    assert not bad
    assert {r["model"] for r in rows} >= {"stiff_double_pendulum", "hmmwv", "bouncing_balls_ode"}


def test_results_agree_to_the_tolerance_level(table):
    _, rows = table
    for r in rows:
        print(f"{r['model']}/{r['method']}: scaled difference {r.get('difference')}")
    assert all(r.get("agree") for r in rows)


def test_nothing_consistently_slower(table):
    meta, rows = table
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    print(f"ratios current / baseline {meta['baseline'][:12]}: {min(ratios):.2f} ... "
          f"{max(ratios):.2f}; flagged: "
          + ", ".join(f"{r['model']}/{r['method']}" for r in rows if r.get("flagged")))
    assert not [r for r in rows if r.get("consistently_slower")]


def test_unknown_baseline_is_reported(monkeypatch):
    """A commit outside the history (or no git): BaselineUnavailable naming it, which
    the table fixture and main() turn into a skip with that message."""
    monkeypatch.setenv("MBINT_BASELINE", "no-such-revision-0123")
    with pytest.raises(bench.BaselineUnavailable, match="no-such-revision-0123"):
        bench.baseline_commit()
    monkeypatch.setenv("MBINT_BASELINE", "HEAD")
    assert len(bench.baseline_commit()) == 40


def test_judge_by_reference():
    """A difference above AGREE is agreement only within the builds' own global errors."""
    ref = [1.0, 2.0]
    row = dict(difference=160.0, agree=False,
               cur=dict(y=[1.0 + 1100e-6, 2.0], rtol=1e-6, atol=0.0),
               base=dict(y=[1.0 + 940e-6, 2.0], rtol=1e-6, atol=0.0))
    bench.judge_by_reference(row, ref)
    assert row["agree"] and 1000 < row["error_cur"] < 1200
    row = dict(difference=160.0, agree=False,
               cur=dict(y=[1.0 + 10e-6, 2.0], rtol=1e-6, atol=0.0),
               base=dict(y=[1.0 - 50e-6, 2.0], rtol=1e-6, atol=0.0))
    bench.judge_by_reference(row, ref)
    assert not row["agree"]
