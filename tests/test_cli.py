"""The command line: python -m mbint {demo, run, bench, methods}, each with --help."""
import subprocess
import sys

import numpy as np
import pytest

import mbint
from mbint.__main__ import main


@pytest.mark.parametrize("command", ["demo", "run", "bench", "methods"])
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: mbint " + command in capsys.readouterr().out


def test_run_writes_the_result_and_its_plots(tmp_path, capsys):
    out = tmp_path / "msd.nc"
    assert main(["run", "mass_spring_damper", "--method", "rodas4", "--t-end", "0.5",
                 "--rtol", "1e-8", "--out", str(out)]) == 0
    traj = mbint.load(out)
    assert traj.method == "rodas4" and traj.t[-1] == 0.5 and traj.options["rtol"] == 1e-8
    ref = mbint.simulate(mbint.models.mass_spring_damper(), (0, 0.5), method="rodas4",
                         rtol=1e-8, dense_output=True)
    assert np.array_equal(ref.q, traj.q)
    for what in ("q", "energy", "violation"):
        assert (tmp_path / f"msd_{what}.png").stat().st_size > 1000
    assert "written" in capsys.readouterr().out


def test_methods_lists_every_method(capsys):
    assert main(["methods"]) == 0
    text = capsys.readouterr().out
    for info in mbint.methods():
        assert f"\n{info.name} " in text
    # regression: the aliases were missing, and the block methods' order read "10" (the
    # largest r's), where their default r = 4 gives 6 (tests/test_block.py measures it)
    lines = {ln.split()[0]: ln for ln in text.splitlines() if ln.strip()}
    assert "ode45" in lines["dopri5"] and "rk45" in lines["dopri5"]
    assert "ode15s" in lines["bdf"] and "lsoda" in lines["auto"]
    assert lines["lstable_block"].split()[1:3] == ["6", "(r=4)"]


def test_module_entry_point_and_bad_model():
    r = subprocess.run([sys.executable, "-m", "mbint", "run", "no_such_model"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice" in r.stderr
