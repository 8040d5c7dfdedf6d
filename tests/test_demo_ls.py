"""The LS section of the demo (mbint.demo.ls) and the paper's Tables 1-7 (Li, Ding, Li
2019): the columns a formulation does not enforce (energy error, the other constraint
levels) against the printed numbers, at the paper's 10 s and h = 0.01."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from mbint.demo import ls  # noqa: E402
from test_demo_llm import Collect  # noqa: E402


def test_section_ls_quick(tmp_path):
    s = Collect()
    res = ls.section_ls(tmp_path, s, quick=True, progress=lambda m: None)
    assert (tmp_path / "ls" / "tables.md").exists() and (tmp_path / "ls" / "fig2_7.png").exists()
    assert sorted(res) == [1, 2, 3, 4, 5, 6, 7]
    status = {(k, name): ours["status"] for k, rows in res.items() for name, ours, _ in rows}
    assert all(v == 0 for key, v in status.items() if key != (6, "index-3 A-stable"))


# (table, row, columns compared with the paper's print: 1 max|eH|, 2 position, 3 velocity,
# 4 acceleration); the level a formulation enforces is a Newton residual, left out
ROWS = [(2, "r=3", (1, 2, 3)), (4, "index-1", (1, 2, 3)), (4, "index-2", (1, 2, 4)),
        (4, "index-3", (1, 3, 4)), (5, "chebyshev", (1, 3, 4)), (5, "legendre", (1, 3, 4)),
        (6, "index-2 A-stable", (1, 2, 4)), (3, "ERK4", (1, 2, 3))]


def test_tables_against_the_paper():
    res = ls.tables(T=10.0, which={2, 3, 4, 5, 6})
    got = {(k, name): ours for k, rows in res.items() for name, ours, _ in rows}
    for k, name, cols in ROWS:
        ours = got[(k, name)]
        assert ours["status"] == 0
        paper = ls.PAPER[k][name]
        for c in cols:
            # printed with 2-5 significant digits
            assert ours[ls.COLUMNS[c]] == pytest.approx(paper[c], rel=0.03), (k, name, c)
        # the enforced level: a converged Newton
        assert min(ours["position"], ours["velocity"], ours["acceleration"]) < 1e-9
    # Table 6: the A-stable method fails on the index-3 DAE (the paper: "Singular")
    a3 = got[(6, "index-3 A-stable")]
    assert a3["status"] == -1 and "Newton did not converge" in a3["message"]
    # Table 3: ERK4's energy error is 3700 times the L-stable method's
    assert got[(3, "ERK4")]["max_eH"] > 1e3 * got[(3, "L")]["max_eH"]
