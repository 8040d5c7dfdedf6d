"""Every URDF file of example-robot-data, fixed and floating base: formulation="joint"
against "index1" (dop853 at rtol = atol = 1e-9, 0.05 s from the file's zero pose at rest),
the largest difference of the final body coordinates.  Files load_urdf refuses and runs
where "index1" fails are counted apart.  Run ``python tests/benchmarks/survey_joint_robots.py``
(several minutes); not part of the test suite."""
import importlib.metadata
import pathlib
import sys

import numpy as np

import mbint


def robots_dir():
    files = importlib.metadata.files("example-robot-data") or []
    for f in files:
        if str(f).endswith(".urdf"):
            p = pathlib.Path(f.locate())
            while p.name != "robots":
                p = p.parent
            return p
    return None


def main():
    root = robots_dir()
    if root is None:
        print("example-robot-data is not installed")
        return 1
    ok = bad = refused = index1_fails = 0
    for p in sorted(root.rglob("*.urdf")):
        for floating in (False, True):
            try:
                m = mbint.load_urdf(str(p), floating_base=floating)
            except Exception:
                refused += 1
                continue
            tj = mbint.simulate(m, (0, 0.05), "dop853", formulation="joint", rtol=1e-9,
                                atol=1e-9)
            ti = mbint.simulate(m, (0, 0.05), "dop853", formulation="index1", rtol=1e-9,
                                atol=1e-9, t_eval=tj.t)
            if not ti.success:
                index1_fails += 1
                print(f"index1 fails: {p.name} floating={floating}: {ti.message[:70]}")
                continue
            d = float(np.abs(tj.q[:, -1] - ti.q[:, -1]).max())
            if tj.success and d < 1e-6:
                ok += 1
            else:
                bad += 1
                print(f"DIFFERENT: {p.name} floating={floating}: {d:.1e} ({tj.message[:40]})")
    print(f"agree {ok}, differ {bad}, load_urdf refuses {refused}, index1 fails {index1_fails}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
