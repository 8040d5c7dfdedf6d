"""tools/bench_summary.py (the README's summary figure): its table reader on the
formats the benches write, and the figure with some inputs missing (the chain
bench, bench_chain_sparse.py, may not exist)."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_summary", ROOT / "tools" / "bench_summary.py")
summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summary)

ANCHOR_MD = """# The anchor

| contender | tol | error | time [ms] | spread | steps | nfev | njev | nlu |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
| C CVODE (CV_NORMAL) | 1.00e-03 | 2.00e-02 | 1.500 | 0.10 | 100 | 120 | 5 | 10 |
| C CVODE (CV_NORMAL) | 1.00e-06 | 3.00e-05 | 4.000 | 0.10 | 300 | 360 | 9 | 30 |
| mbint bdf | 1.00e-03 | 1.00e-02 | 2.000 | 0.10 | 90 | 100 | 4 | 9 |

## Time at matched error

| contender | t(2e-05) [ms] | / anchor at 2e-05 |
|---|---:|---:|
| mbint bdf | 3.0 | 0.9 |
"""

CHAIN_MD = """# chain

| N | nq | mode | f [ms] | jac [ms] | step [ms] | q'' rel. diff |
|---|---|---|---|---|---|---|
| 10 | 30 | sparse | 0.01 | 0.05 | 0.1 | 1.0e-15 |
| 10 | 30 | dense | 0.008 | 0.04 | 0.08 | - |
| 100 | 300 | sparse | 0.1 | 0.5 | 1.0 | 2.0e-15 |
"""


def test_md_tables_reads_every_table():
    tables = summary.md_tables(ANCHOR_MD)
    assert [len(rows) for _, rows in tables] == [3, 1]
    assert tables[0][0][:4] == ["contender", "tol", "error", "time [ms]"]


def test_anchor_rows_in_seconds(tmp_path):
    (tmp_path / "a.md").write_text(ANCHOR_MD)
    rows = summary.anchor_rows(tmp_path / "a.md")
    assert len(rows) == 3
    assert rows[1] == dict(name="C CVODE (CV_NORMAL)", tol=1e-6, error=3e-5, time=4e-3)
    (tmp_path / "b.md").write_text(CHAIN_MD)
    with pytest.raises(ValueError):
        summary.anchor_rows(tmp_path / "b.md")


def test_chain_rows_in_seconds(tmp_path):
    (tmp_path / "c.md").write_text(CHAIN_MD)
    rows, quantities = summary.chain_rows(tmp_path / "c.md")
    assert quantities == ["f", "jac", "step"]
    assert rows[2]["N"] == 100 and rows[2]["mode"] == "sparse"
    assert abs(rows[2]["step"] - 1e-3) < 1e-15 and abs(rows[1]["f"] - 8e-6) < 1e-18


def test_figure_without_the_chain_bench(tmp_path, capsys):
    (tmp_path / "bench_anchor.md").write_text(ANCHOR_MD)
    png = tmp_path / "fig.png"
    assert summary.main(["--outdir", str(tmp_path), "--out", str(png)]) == png
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    err = capsys.readouterr().err
    assert "chain-scaling panel left out" in err and "regression panel left out" in err
    (tmp_path / "bench_chain_sparse.md").write_text(CHAIN_MD)
    summary.main(["--outdir", str(tmp_path), "--out", str(png)])
    assert "chain-scaling panel left out" not in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert summary.main(["--outdir", str(empty), "--out", str(empty / "x.png")]) is None
    assert not (empty / "x.png").exists()
