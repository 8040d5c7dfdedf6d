"""The RN section of the demo (mbint.demo.rn.section_rn) in quick mode: the files it
writes, and Tables 1-2 of the RN paper reproduced: Delta(k) of theta1 and of its
rate within a factor 10 of the printed values for k = -2, -3, -4 (quick mode; the
full demo adds k = -5), with both the partition of full pivoting and the body
angles as independent coordinates."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

pytest.importorskip("mbint._core")

from mbint.demo.rn import PAPER_TABLE1, PAPER_TABLE2, section_rn  # noqa: E402


class Collect:
    def __init__(self):
        self.rows, self.md, self.tables = [], [], []

    def add(self, section, method, quantity, value, h=None, rtol=None):
        self.rows.append(dict(section=section, method=method, quantity=quantity,
                              value=float(value), rtol=rtol))

    def text(self, *lines):
        self.md.extend(lines)

    def table(self, header, rows):
        self.tables.append((tuple(header), [tuple(r) for r in rows]))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo_rn")
    s = Collect()
    tabs = section_rn(out, s, quick=True, progress=lambda msg: None)
    return out, s, tabs


def test_files(demo):
    out, s, _ = demo
    for f in ("fig2_theta1.png", "work_precision.png", "rn.md"):
        assert (out / "rn" / f).stat().st_size > 1000, f
    text = (out / "rn" / "rn.md").read_text()
    assert "['body1.theta', 'body2.y']" in text and "Table 1" in text and "Table 2" in text


@pytest.mark.parametrize("partition", ["full pivoting", "angles"])
def test_tables_1_and_2(demo, partition):
    _, _, tabs = demo
    tab = tabs[partition]
    for which, paper in (("theta1", PAPER_TABLE1), ("dtheta1", PAPER_TABLE2)):
        for k, (t_star, delta, rel, mean) in tab[which].items():
            ratio = delta / paper[k][1]
            assert 0.1 <= ratio <= 10, (partition, which, k, delta, paper[k][1])
            assert 0 <= t_star <= 2 and mean <= delta
        # the error falls with the tolerance
        ks = sorted(tab[which], reverse=True)
        assert all(tab[which][a][1] > tab[which][b][1] for a, b in zip(ks, ks[1:]))
