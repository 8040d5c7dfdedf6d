"""Write notebooks/10_identification.ipynb (issue 26: identification with sensitivities).

    python tools/make_identification_notebook.py
    python tools/run_notebooks.py notebooks/10_identification.ipynb   # store its outputs

The cells are kept here as text so that the notebook's source is reviewable as a diff.
"""
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "notebooks" / "10_identification.ipynb"

INTRO = """\
# 10 — Identification: the stiffness and damping of the stiff double pendulum's spring

The RN paper's double pendulum (section 5.1) has a rotational spring-damper `rsda2`
between its links, k2 = 3e5 N m/rad and c2 = 5e4 N m s/rad.  Here those two numbers are
treated as unknown and recovered from "measurements": a simulated run with the true values,
both absolute angles theta1, theta2 sampled every 10 ms over 0.5 s, plus Gaussian noise of
sigma = 1e-5 rad (a fixed seed; about a 19-bit encoder).

The fit is `scipy.optimize.least_squares` on the residuals (model - measurements) / sigma
at the sample times, twice from the same wrong start (k2, c2) = (1.5e5, 1e5):

- with `jac=` the forward sensitivities d theta / d(k2, c2) of
  `mbint.simulate(..., sensitivities=["rsda2.k", "rsda2.c"])` (`traj.sens_q`, shape
  (nq, np, n_t)): one run gives the residuals and the Jacobian;
- with least_squares' own finite-difference Jacobian (`jac="2-point"`): one extra run a
  parameter at every Jacobian.

The unknowns are log k2 and log c2 (both positive, of very different sizes), so the
Jacobian is d theta / d p times p.  Both fits use the same integrator and tolerances
(bdf, rtol 1e-8, atol 1e-9)."""

SETUP = """\
import math
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.optimize import least_squares

import mbint
from mbint.models import rn

QUICK = os.environ.get("MBINT_NB_QUICK") == "1"
REPEATS = 3 if QUICK else 9          # timing repetitions of each fit (interleaved)
T_END = 0.5                          # [s]
T = np.linspace(0.0, T_END, 51)      # sample times [s]
NAMES = ["rsda2.k", "rsda2.c"]       # the parameters, as mbint.mbs.sensitivity names them
TRUE = np.array([3e5, 5e4])          # k2 [N m/rad], c2 [N m s/rad]
START = np.array([1.5e5, 1e5])       # the wrong start
SIGMA = 1e-5                         # measurement noise [rad]
ANGLES = [2, 5]                      # theta1, theta2 in q = (x1, y1, theta1, x2, y2, theta2)
OPTS = dict(method="bdf", rtol=1e-8, atol=1e-9, t_eval=T)

def run(p, sens=None):
    \"\"\"One run of the pendulum with (k2, c2) = p; with sens (the `sensitivities`
    argument), d q / d(k2, c2) as well.\"\"\"
    model = rn.stiff_double_pendulum(k2=p[0], c2=p[1])
    extra = dict(sensitivities=sens) if sens else {}
    tr = mbint.simulate(model, (0.0, T_END), **OPTS, **extra)
    assert tr.success, tr.message
    return tr

truth = run(TRUE)
rng = np.random.default_rng(2026)
measured = truth.q[ANGLES] + SIGMA * rng.standard_normal((len(ANGLES), T.size))
measured.shape"""

FUNS_MD = """\
The residuals and the two Jacobians.  With sensitivities, one run at x gives both the
residuals and the Jacobian; least_squares asks for `jac(x)` after `fun(x)` at the same x,
so the Jacobian of the last run is kept (and recomputed should x differ).  `runs` counts
the simulations each fit makes, the finite-difference ones included (least_squares'
`nfev` leaves those out)."""

FUNS = """\
class Fit:
    \"\"\"Residuals (model - measured) / sigma in x = log(k2, c2), and their Jacobian.\"\"\"

    def __init__(self, sens):
        self.sens, self.runs, self.x, self.J = sens, 0, None, None   # sens: as run()

    def fun(self, x):
        self.runs += 1
        p = np.exp(x)
        tr = run(p, self.sens)
        if self.sens:          # d theta / d log p = d theta / d p * p, rows in fun's order
            S = tr.sens_q[ANGLES] * p[None, :, None]          # (angle, parameter, time)
            self.x, self.J = x.copy(), S.transpose(0, 2, 1).reshape(-1, len(p)) / SIGMA
        return (tr.q[ANGLES] - measured).ravel() / SIGMA

    def jac(self, x):
        if self.x is None or not np.array_equal(x, self.x):
            self.fun(x)
        return self.J


def fit(sens):
    \"\"\"least_squares from START; sens None: the 2-point Jacobian.\"\"\"
    f = Fit(sens)
    t0 = time.process_time()
    r = least_squares(f.fun, np.log(START), jac=f.jac if sens else "2-point")
    return r, f.runs, time.process_time() - t0"""

RUN = """\
MODES = {"sensitivities": NAMES,        # in the error test (the default, CVODES' errconS)
         "sensitivities, out of the error test": {n: math.inf for n in NAMES},
         "finite differences (2-point)": None}
cpu, one_run, result = ({m: [] for m in MODES}, {m: [] for m in MODES}, {})
for _ in range(REPEATS):                  # interleaved: the machine's load hits all alike
    for mode, sens in MODES.items():
        r, runs, dt = fit(sens)
        cpu[mode].append(dt)
        result[mode] = (r, runs)
        t0 = time.process_time()
        run(TRUE, sens)
        one_run[mode].append(time.process_time() - t0)

plain = np.median(one_run["finite differences (2-point)"])
rows = {}
for mode in MODES:
    r, runs = result[mode]
    p = np.exp(r.x)
    rows[mode] = {"nfev": r.nfev, "njev": r.njev, "simulate runs": runs,
                   "CPU time [s] (median)": np.median(cpu[mode]),
                   "CPU of one run / plain run": np.median(one_run[mode]) / plain,
                   "k2 [N m/rad]": p[0], "c2 [N m s/rad]": p[1],
                   "k2 rel. error": p[0] / TRUE[0] - 1, "c2 rel. error": p[1] / TRUE[1] - 1,
                   "cost": r.cost, "status": r.status}
table = pd.DataFrame(rows).T
fd = np.median(cpu["finite differences (2-point)"])
for mode in list(MODES)[:2]:
    print(f"CPU time of a fit, finite differences / {mode}: {fd / np.median(cpu[mode]):.2f}")
print(f"(medians of {REPEATS} interleaved fits each)")
pd.set_option("display.width", 120)
table"""

PLOT = """\
r_s = result["sensitivities"][0]
fitted = run(np.exp(r_s.x))
fig, axes = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
for i, (k, name) in enumerate(zip(ANGLES, ["theta1", "theta2"])):
    axes[0].plot(T, measured[i], ".", ms=4, label=f"{name} measured")
    axes[0].plot(T, fitted.q[k], "-", lw=1, label=f"{name} fitted (sensitivities)")
    axes[1].plot(T, (fitted.q[k] - measured[i]) * 1e6, ".-", ms=3, lw=0.5, label=name)
axes[0].set_ylabel("angle [rad]")
axes[0].legend(fontsize=8)
axes[1].set_ylabel("fitted - measured [µrad]")
axes[1].set_xlabel("t [s]")
axes[1].axhline(0.0, color="k", lw=0.5)
axes[1].legend(fontsize=8)
fig.suptitle("Stiff double pendulum: measured angles and the fit")
fig.tight_layout()"""

COV_MD = """\
How well are k2 and c2 determined?  The Gauss-Newton covariance (J^T J)^-1 of the
log-parameters at the fit (sigma already divided out) gives their standard deviations and
correlation.  The two are strongly correlated: over the first half second the angles see
mostly the ratio k2/c2 (the relaxation rate of the stiff joint) and only weakly each value
(the static bending, torque/k2, is of the order of 1e-5 rad, the noise).  With a noise of
1e-3 rad instead, both fits stop at a (k2, c2) of the right ratio but the wrong size."""

COV = """\
J = Fit(NAMES)
J.fun(r_s.x)
cov = np.linalg.inv(J.J.T @ J.J)
sd = np.sqrt(np.diag(cov))
print("standard deviation of log k2, log c2 (= relative sd):", np.round(sd, 5))
print(f"1 - correlation: {1 - cov[0, 1] / (sd[0] * sd[1]):.1e}")"""

END_MD = """\
**What the numbers show** (the table and the ratios printed above; CPU times are of one
loaded machine: in the runs made while writing this notebook the fit-time ratio of the
default row moved between 0.9 and 1.1).

- *Iterations*: with the sensitivities as Jacobian least_squares takes about half the
  function evaluations and fewer Jacobians than with finite differences (12 and 9 against
  24 and 15 in the stored run), and 4-5 times fewer simulations (12 against 54: every
  difference Jacobian costs two more runs).
- *CPU time*: no clear winner with the default settings.  One run with the two
  sensitivities costs about 3.5-5 plain runs here (column "CPU of one run / plain run",
  the model's construction included), which eats up the fewer runs: the two fits take
  about the same time.  With the sensitivities out of the error test (`{name: math.inf}`:
  the steps are chosen for the state alone, enough for a Jacobian) the fit was about 1.3
  times faster than with differences.  So the sensitivities win clearly on iterations and
  runs, and on time only modestly and only out of the error test; a cheaper sensitivity
  run (issue 26 asks for at most 1 + 0.5 p = 2 plain runs for p = 2) would turn the
  fewer runs into time.
- *Recovered values*: all fits end within about 2 % of the true (k2, c2), the two
  methods within 0.6 % of each other and with nearly equal cost; the error is of the size
  of the noise's standard deviation (about 1.2 % for each parameter, above), not of the
  method.  The two parameters are correlated to 1 - 1e-6: the data fix k2/c2 far better
  than either, and the fits stop (least_squares' xtol) at slightly different points of
  that valley."""


def main():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(INTRO), nbformat.v4.new_code_cell(SETUP),
                nbformat.v4.new_markdown_cell(FUNS_MD), nbformat.v4.new_code_cell(FUNS),
                nbformat.v4.new_code_cell(RUN), nbformat.v4.new_code_cell(PLOT),
                nbformat.v4.new_markdown_cell(COV_MD), nbformat.v4.new_code_cell(COV),
                nbformat.v4.new_markdown_cell(END_MD)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, OUT)
    print(OUT)


if __name__ == "__main__":
    main()
