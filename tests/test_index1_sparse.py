"""The sparse mode of the index-1 formulation through Python (csrc/mbs/index1_sparse.c).

A planar model with nq >= MB_INDEX1_SPARSE_MIN_NQ (60) and no Python forces is
solved in sparse mode (KLU) automatically: a chain of 25 bars (nq = 75) with
rotational springs, a spring-damper to the ground and a ground contact.  Its f and
lambda are checked against the NumPy oracle (mbint/testing/reference.py) to 1e-12
relative, with and without Baumgarte terms; its df/dy (the dense J formed by sparse
solves) against central differences of f (1e-6); and a short radau_iia run (which
uses that J) against dopri5 (which uses none).  The C tests (tests/c/
test_index1_sparse.c) compare sparse and dense mode directly."""
import math

import numpy as np
import pytest

import mbint
from mbint import PlanarModel
from mbint.testing.reference import NumpyReference

N = 25


def rel_err(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    return np.abs(A - B).max() / max(1.0, np.abs(B).max())


@pytest.fixture(scope="module")
def chain():
    m = PlanarModel(gravity=(0.0, -9.81))
    P = np.zeros(2)
    V = np.zeros(2)
    bodies = []
    for k in range(N):
        th = -math.pi / 2 + 0.3 + 0.1 * math.sin(k)
        w = 0.5 * math.cos(k)
        c, s = math.cos(th), math.sin(th)
        r = P + 0.5 * np.array([c, s])
        v = V + 0.5 * w * np.array([-s, c])
        b = m.add_body(1.0 + 0.05 * k, (1.0 + 0.05 * k) / 12, q=(r[0], r[1], th),
                       qd=(v[0], v[1], w))
        if k == 0:
            m.add_revolute("ground", (0.0, 0.0), b, (-0.5, 0.0))
        else:
            m.add_revolute(bodies[-1], (0.5, 0.0), b, (-0.5, 0.0))
            m.add_rotational_spring_damper(bodies[-1], b, k=40.0, c=0.3, angle0=0.0)
        bodies.append(b)
        P = P + np.array([c, s])
        V = V + w * np.array([-s, c])
    m.add_spring_damper("ground", (3.0, 0.0), bodies[N // 2], (0.0, 0.0), k=20.0, c=1.0,
                        length0=1.0)
    m.add_contact(bodies[-1], (0.5, 0.0), radius=0.05, line_point=(0.0, -23.5), K=1e3,
                  damping=10.0)
    m.compile()
    return m


def test_chain_is_large_enough_for_sparse_mode(chain):
    assert 3 * N == chain.nq >= 60


@pytest.mark.parametrize("baumgarte", [None, (4.0, 7.0)])
def test_rhs_and_lambda_against_numpy_oracle(chain, baumgarte):
    ref = NumpyReference(chain)
    rng = np.random.default_rng(13)
    q0, qd0 = np.asarray(chain.q0, float), np.asarray(chain.qd0, float)
    for _ in range(2):
        q = q0 + 1e-2 * rng.standard_normal(q0.shape)
        qd = qd0 + 1e-1 * rng.standard_normal(qd0.shape)
        y = np.concatenate([q, qd])
        t = float(rng.uniform(0, 1))
        assert rel_err(chain.rhs(t, y, baumgarte=baumgarte),
                       ref.rhs(t, y, baumgarte=baumgarte)) <= 1e-12


def test_jacobian_against_central_differences(chain):
    y = np.concatenate([np.asarray(chain.q0, float), np.asarray(chain.qd0, float)])
    n = y.size
    h = 1e-5 * np.maximum(1.0, np.abs(y))
    Y = np.concatenate([y[:, None] + np.diag(h), y[:, None] - np.diag(h)], 1)
    F = chain.rhs(0.1, Y)  # one batch call: 2 n states
    J_fd = (F[:, :n] - F[:, n:]) / (2 * h)
    assert rel_err(chain.jacobian(0.1, y), J_fd) <= 1e-6


def test_radau_with_the_sparse_mode_jacobian_matches_dopri5(chain):
    a = mbint.simulate(chain, (0.0, 0.05), method="radau_iia", rtol=1e-10, atol=1e-10)
    b = mbint.simulate(chain, (0.0, 0.05), method="dopri5", rtol=1e-10, atol=1e-10)
    assert np.abs(a.q[:, -1] - b.q[:, -1]).max() <= 1e-7
