"""The vehicle section of the demo (mbint.demo.vehicle.section_vehicle) in quick mode:
the files it writes and the numbers it reports."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

pytest.importorskip("mbint._core")

from mbint.demo.vehicle import section_vehicle  # noqa: E402


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


def test_section_vehicle(tmp_path):
    s = Collect()
    res = section_vehicle(tmp_path, s, quick=True, progress=lambda msg: None)
    d = tmp_path / "vehicle"
    for name in ("fig5.png", "frame.png"):
        assert (d / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in d.iterdir()) == ["fig5.png", "frame.png", "vehicle.md"]
    md = (d / "vehicle.md").read_text()
    assert "98 coordinates, 80 constraint equations, 18 degrees of freedom" in md
    assert res["eigenvalue"].real < -1e4
    heights = {r["method"]: r["value"] for r in s.rows if r["quantity"] == "chassis_height_end"}
    assert set(heights) == {"rosenbrock_nystrom", "cvode_bdf"}
    assert all(abs(z - 0.71) < 0.01 for z in heights.values())
