"""The LLM section of the demo (mbint.demo.llm.section_llm) in quick mode: the files it
writes and the facts its summary reports (LLM paper Figs 2, 5, 6, 7)."""
import math

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

pytest.importorskip("mbint._core")

from mbint.demo.llm import section_llm  # noqa: E402

PNGS = ("fig2_double_pendulum.png", "fig5_bouncing_balls.png", "fig6_error_estimate.png",
        "fig7_adaptive.png")


class Collect:
    """The demo's summary interface: add(), text(), table()."""

    def __init__(self):
        self.rows, self.md, self.tables = [], [], []

    def add(self, section, method, quantity, value, h=None, rtol=None):
        self.rows.append(dict(section=section, method=method, quantity=quantity,
                              value=float(value), h=h, rtol=rtol))

    def text(self, *lines):
        self.md.extend(lines)

    def table(self, header, rows):
        self.tables.append((tuple(header), [tuple(r) for r in rows]))

    def value(self, method, quantity):
        hits = [r["value"] for r in self.rows if r["method"] == method
                and r["quantity"] == quantity]
        assert len(hits) == 1, (method, quantity, hits)
        return hits[0]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo_llm")
    s = Collect()
    messages = []
    result = section_llm(out, s, quick=True, progress=messages.append)
    return out, s, result, messages


def test_files(demo):
    out, s, result, messages = demo
    for name in PNGS:
        data = (out / "llm" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        assert len(data) > 5000, name
        assert f"](llm/{name})" in "\n".join(s.md)
    md = (out / "llm" / "llm.md").read_text()
    assert md.startswith("## The Local Linearization Method")
    assert "| figure | method | steps |" in md and "](fig2_double_pendulum.png)" in md
    assert {p.name for p in result["files"]} == set(PNGS) | {"llm.md"}
    assert any("wrote" in m for m in messages)
    assert s.tables and s.tables[0][0][0] == "figure"


def test_bouncing_balls_energy_exact_with_llm(demo):
    _, s, _, _ = demo
    e_llm = s.value("bouncing_balls/llm h=0.005 (restarts)", "energy_rel_error")
    e_d5 = s.value("bouncing_balls/dopri5 (ode45)", "energy_rel_error")
    assert e_llm < 1e-8
    assert e_d5 > 1e3 * e_llm


def test_other_figures_facts(demo):
    _, s, _, _ = demo
    assert 0.5 < s.value("eq35/llm", "estimate_ratio_min") <= \
        s.value("eq35/llm", "estimate_ratio_max") < 2.0
    for tol in ("0.1", "0.05"):
        assert s.value(f"double_pendulum/llm EPUS tol={tol}", "max_estimated_error") <= \
            float(tol) * (1 + 1e-12)
    assert s.value("double_pendulum/llm EPUS tol=0.05", "nsteps") > \
        s.value("double_pendulum/llm EPUS tol=0.1", "nsteps")
    llm = s.value("double_pendulum/llm h=0.02", "energy_error")
    assert math.isfinite(llm) and s.value("double_pendulum/llm h=0.02", "nsteps") == 100
