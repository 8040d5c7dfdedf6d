"""The sparse index-1 path of spatial models (csrc/mbs/spatial_sparse.c through
csrc/mbs/index1_sparse.c): KLU on the saddle-point matrix with the block-diagonal
M(q) of the Euler parameters, and the iteration matrices through the sparse
augmented system.

- f and the Jacobian (its dense form, 2 nq sparse solves) of every constraint element
  and force element, ground or not, with and without Baumgarte terms (a rheonomic
  angle row: Phi_tq), sparse against the dense path to round-off;
- the Jacobian of a 20-rod chain at a consistent state of a run against central
  differences of f (1e-6 relative);
- a spatial double pendulum and the 20-rod chain (spherical and revolute joints,
  rotational and translational spring-dampers) simulated sparse and dense with
  rodas4, radau_iia, bdf and dopri5: the runs agree to the tolerance level;
- a 200-rod chain runs sparse, and its memory grows like N: the Python-side peak
  (tracemalloc) against a 100-rod chain, and the whole process's peak RSS in a fresh
  interpreter (a dense path would hold several (2 nq)^2 arrays: 63 MB each);
- the choice: auto picks sparse from SPARSE_MIN_NQ coordinates; a model with callback
  forces refuses sparse with a message (auto: dense)."""
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import mbint
from mbint.mbs.simulate import check_initial_conditions
from mbint.testing.spatial_chain import spatial_chain
from test_spatial import ELEMENTS, FORCES, _double_pendulum, _two_bodies

ROOT = Path(__file__).resolve().parents[1]


def rel_err(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    return np.abs(A - B).max() / max(1.0, np.abs(B).max())


def _both(m, t, y, baumgarte=None):
    out = []
    for mode in ("dense", "sparse"):
        m.linear_algebra = mode
        out.append((m.rhs(t, y, baumgarte=baumgarte), m.jacobian(t, y, baumgarte=baumgarte)))
    m.linear_algebra = "auto"
    return out


def _random_state(m, seed, scale=0.05):
    rng = np.random.default_rng(seed)
    return np.concatenate([m.q0, m.qd0]) + scale * rng.standard_normal(2 * m.nq)


@pytest.mark.parametrize("ground", [False, True])
@pytest.mark.parametrize("kind", sorted(ELEMENTS))
def test_every_element_sparse_equals_dense(kind, ground):
    m, i, j = _two_bodies(ground)
    ELEMENTS[kind](m, i, j)
    for f in FORCES.values():
        f(m, i, j)
    m.compile()
    y = _random_state(m, 3)
    for bg in (None, (3.0, 5.0)):
        (fd, Jd), (fs, Js) = _both(m, 0.37, y, bg)
        assert rel_err(fs, fd) <= 1e-12, (kind, bg)
        assert rel_err(Js, Jd) <= 1e-11, (kind, bg)


@pytest.fixture(scope="module")
def chain20():
    return spatial_chain(20, spin=1.0)


def test_chain_jacobian_against_central_differences(chain20):
    m = chain20
    tr = mbint.simulate(m, (0.0, 0.05), "rodas4", rtol=1e-8, atol=1e-8, linear_algebra="sparse")
    y = np.concatenate([tr.q[:, -1], tr.qd[:, -1]])  # consistent: a state of the run
    m.linear_algebra = "sparse"
    n = y.size
    h = 1e-6 * np.maximum(1.0, np.abs(y))
    Y = np.concatenate([y[:, None] + np.diag(h), y[:, None] - np.diag(h)], 1)
    F = m.rhs(0.05, Y)
    J_fd = (F[:, :n] - F[:, n:]) / (2 * h)
    J = m.jacobian(0.05, y)
    m.linear_algebra = "auto"
    assert rel_err(J, J_fd) <= 1e-6
    (fd, Jd), (fs, Js) = _both(m, 0.05, y, (2.0, 4.0))
    assert rel_err(fs, fd) <= 1e-12 and rel_err(Js, Jd) <= 1e-10


def _agree(m, method, t_end, tol, **kw):
    runs = [mbint.simulate(m, (0.0, t_end), method, rtol=tol, atol=tol, linear_algebra=mode, **kw)
            for mode in ("dense", "sparse")]
    assert all(r.success for r in runs)
    assert [r.options["linear_algebra"] for r in runs] == ["dense", "sparse"]
    d, s = runs
    scale = max(1.0, np.abs(d.qd[:, -1]).max())
    assert np.abs(d.q[:, -1] - s.q[:, -1]).max() <= 100 * tol
    assert np.abs(d.qd[:, -1] - s.qd[:, -1]).max() <= 100 * tol * scale
    return runs


@pytest.mark.parametrize("method", ["rodas4", "radau_iia", "bdf", "dopri5"])
def test_double_pendulum_sparse_vs_dense(method):
    m = _double_pendulum()
    d, s = _agree(m, method, 1.0, 1e-8, consistent="project")
    e = s.energy()
    assert abs(e.total[-1] - e.total[0]) <= 1e-5 * max(1.0, float(np.abs(e.kinetic).max()))


@pytest.mark.parametrize("method", ["rodas4", "radau_iia", "bdf", "dopri5"])
def test_chain_sparse_vs_dense(chain20, method):
    _agree(chain20, method, 0.1, 1e-7)


def test_auto_is_sparse_for_large_models(chain20):
    assert chain20.nq >= mbint.SPARSE_MIN_NQ
    tr = mbint.simulate(chain20, (0.0, 0.01), "radau_iia")
    assert tr.options["linear_algebra"] == "sparse"
    small = _double_pendulum()
    tr = mbint.simulate(small, (0.0, 0.01), "radau_iia", consistent="project")
    assert tr.options["linear_algebra"] == "dense"


def test_callback_forces_refuse_sparse():
    m = spatial_chain(10)
    m.add_force(m.bodies[3], lambda t, q, qd: np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="linear_algebra='sparse'.*callback forces"):
        mbint.simulate(m, (0.0, 0.01), "radau_iia", linear_algebra="sparse")
    tr = mbint.simulate(m, (0.0, 0.01), "radau_iia")  # auto: dense
    assert tr.success and tr.options["linear_algebra"] == "dense"


def _traced_peak(n):
    m = spatial_chain(n)
    tracemalloc.start()
    tr = mbint.simulate(m, (0.0, 0.02), "radau_iia", rtol=1e-6, atol=1e-6,
                        linear_algebra="sparse", t_eval=np.linspace(0.0, 0.02, 5))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert tr.success
    return peak


def test_large_chain_memory_grows_linearly():
    p100, p200 = _traced_peak(100), _traced_peak(200)
    # O(N): about 2x; an (nq x nq) array anywhere would make it 4x (and 15 MB at N = 200)
    assert p200 <= 2.6 * p100, (p100, p200)
    assert p200 <= 3_000 * 7 * 200 * 8, p200


_RSS_SCRIPT = """
import json, sys, time
import numpy as np
import mbint
from mbint.mbs.simulate import check_initial_conditions
from mbint.testing.spatial_chain import spatial_chain

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0

m = spatial_chain(int(sys.argv[1]))
mbint.simulate(spatial_chain(3), (0.0, 0.01), "radau_iia")  # the libraries loaded
before = hwm()
tr = mbint.simulate(m, (0.0, 0.02), "radau_iia", rtol=1e-6, atol=1e-6, linear_algebra="sparse")
print(json.dumps({"before": before, "after": hwm(), "ok": bool(tr.success)}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM: Linux only")
def test_large_chain_peak_rss():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, "200"], env=env, check=True,
                         capture_output=True, text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["ok"]
    # the dense path at N = 200 holds S (2600^2) and J (2800^2): > 100 MB
    assert r["after"] - r["before"] <= 40.0, r


def test_rank_check_of_a_large_chain_names_the_redundant_joint():
    # from SPARSE_MIN_NQ on the rank test is the envelope LDL^T of Phi_q Phi_q^T; the
    # normalization rows come first in a spatial Phi_q, so its rows are taken by their
    # first column (O(N) envelope), and the dependent rows are reported in the model's
    # numbering
    m = spatial_chain(12)
    assert m.nq >= mbint.SPARSE_MIN_NQ
    P = np.zeros(3)  # the joint points: P_k+1 = 2 r_k - P_k
    for k in range(4):
        P = 2 * m.q0[7 * k:7 * k + 3] - P
    m.add_spherical(m.bodies[3], m.bodies[4], P, name="again")  # = the spherical joint 4
    m.compile()
    r = check_initial_conditions(m)
    assert r["rank"] == m.nc - 3
    assert len(r["dependent"]) == 3 and all("again" in n for n in r["dependent"]), r
    assert check_initial_conditions(spatial_chain(12))["dependent"] == []
