"""The per-call set-up of ``mbint.simulate(urdf_model, ..., formulation="joint")`` after
its fixed costs were cut (issue 23): the JointTree cached on the compiled model and
rebuilt when the model changes, the Euler parameters made continuous for all bodies at
once, the initial check of a tree without a CSR matrix.  Each is checked against
mathematics: closed forms, finite differences, the body-coordinate formulation.
"""
import numpy as np
import pytest

import mbint
from mbint.mbs.joint import JointTree, joint_tree
from urdf_chains import rod_chain

pytest.importorskip("yourdfpy")


def test_tree_is_cached_and_rebuilt_on_new_torques(tmp_path):
    """The cached tree is reused while the model is unchanged; new joint torques rebuild
    it, and the joint run then follows them like the body-coordinate run."""
    m = mbint.load_urdf(rod_chain(tmp_path, 3, axes="yx", damping=0.05),
                        q=[0.4, -0.2, 0.3], qd=[0.0, 1.0, 0.0])
    t1 = joint_tree(m)
    assert joint_tree(m) is t1
    tj = mbint.simulate(m, (0.0, 0.5), "dop853", formulation="joint", rtol=1e-10, atol=1e-10)
    assert joint_tree(m) is t1  # a run does not change the model
    m.set_joint_torques({"j0": 0.3, "j2": (0.0, 0.0, 0.0, 0.2, 5.0, 0.0)})
    t2 = joint_tree(m)
    assert t2 is not t1
    tj2 = mbint.simulate(m, (0.0, 0.5), "dop853", formulation="joint", rtol=1e-10,
                         atol=1e-10)
    ti2 = mbint.simulate(m, (0.0, 0.5), "dop853", formulation="index1", rtol=1e-10,
                         atol=1e-10)
    pos = np.concatenate([np.arange(7 * b.index, 7 * b.index + 3) for b in m.bodies])
    assert np.abs(tj2.q[pos, -1] - ti2.q[pos, -1]).max() <= 1e-7
    assert np.abs(tj2.q[pos, -1] - tj.q[pos, -1]).max() > 1e-3  # the torques act
    # the dampers off: rebuilt again, and the tree's own inputs are zero at rest
    m.set_joint_torques({}, damping=False)
    t3 = joint_tree(m)
    assert t3 is not t2
    assert np.abs(t3._eval("input", [0.1, 0.2, 0.3], [1.0, -1.0, 2.0])).max() == 0.0


@pytest.mark.parametrize("g", [9.81, 1.62])
def test_tree_follows_a_new_gravity(tmp_path, g):
    """A rod of length l on a hinge at rest at angle th: |th''| = 3 g |sin th| / (2 l)
    (about the pivot, I = m l^2 / 3, the gravity torque m g l sin th / 2), also after
    model.gravity is changed in place and after it is replaced."""
    length, th = 0.5, 0.7
    m = mbint.load_urdf(rod_chain(tmp_path, 1, length=length, mass=2.0), q=[th])
    joint_tree(m)  # cached with 9.81
    exact = 3 * g * np.sin(th) / (2 * length)
    m.gravity[:] = (0.0, 0.0, -g)
    acc = joint_tree(m).accelerations(0.0, [th], [0.0])
    assert abs(abs(acc[0]) - exact) <= 1e-12 * exact
    m.gravity = np.array([0.0, 0.0, -2 * g])
    acc = joint_tree(m).accelerations(0.0, [th], [0.0])
    assert abs(abs(acc[0]) - 2 * exact) <= 1e-12 * exact
    assert JointTree(m).accelerations(0.0, [th], [0.0]) == pytest.approx(acc, rel=1e-14)


def test_euler_parameters_continuous_over_many_bodies(tmp_path):
    """A fast-spinning 6-rod chain (the parameters of each body cross e0 = 0 several
    times): each body's q and qd are +-1 times the forward kinematics of the integrated
    joint state, one sign per body and output, with consecutive outputs of the
    parameters on the same side (positive dot product) and the first on q0's side."""
    n = 6
    m = mbint.load_urdf(rod_chain(tmp_path, n, axes="yx"), q=0.3 * np.arange(n),
                        qd=[25.0, -20.0, 15.0, 30.0, -25.0, 20.0])
    tr = mbint.simulate(m, (0.0, 1.0), "dop853", formulation="joint", rtol=1e-8, atol=1e-8,
                        t_eval=np.linspace(0.0, 1.0, 400))
    tree = joint_tree(m)
    crossings = 0
    for k in range(len(tr.t)):
        q, qd = tree.body_state(tr.x_joint[:, k], tr.xd_joint[:, k])
        for b in m.bodies:
            r = slice(7 * b.index, 7 * b.index + 3)
            p = slice(7 * b.index + 3, 7 * b.index + 7)
            s = np.sign(np.dot(q[p], tr.q[p, k]))
            assert np.abs(q[r] - tr.q[r, k]).max() <= 1e-12
            assert np.abs(s * q[p] - tr.q[p, k]).max() <= 1e-12
            assert np.abs(s * qd[p] - tr.qd[p, k]).max() <= 1e-10
            crossings += s < 0
    assert crossings > 0  # the forward kinematics' sign was flipped somewhere
    for b in m.bodies:
        P = tr.q[7 * b.index + 3:7 * b.index + 7]
        assert np.all(np.einsum("ij,ij->j", P[:, 1:], P[:, :-1]) > 0)
        assert np.dot(P[:, 0], m.q0[7 * b.index + 3:7 * b.index + 7]) > 0


def test_initial_check_of_a_tree_matches_finite_differences(tmp_path):
    """A 12-rod chain (84 body coordinates: the sparse check) with a joint velocity that
    is not consistent with the body velocities: the velocity residual the joint run
    reports is max |Phi_q qd0 + Phi_t| with Phi_q qd0 by central differences of Phi
    along qd0, and the run refuses the state as the index-1 run does."""
    n = 12
    m = mbint.load_urdf(rod_chain(tmp_path, n, axes="yx"), q=0.2 * np.sin(np.arange(n)))
    assert m.nq >= mbint.SPARSE_MIN_NQ
    rng = np.random.default_rng(5)
    q0, qd0 = m.q0, m.qd0 + 1e-3 * rng.standard_normal(m.nq)
    h = 1e-6
    fd = (np.asarray(m.phi(0.0, q0 + h * qd0)) - np.asarray(m.phi(0.0, q0 - h * qd0))) / (2 * h)
    expected = np.abs(fd + np.asarray(m.phi_t(0.0, q0))).max()
    assert expected > 1e-5
    for form in ("joint", "index1"):
        with pytest.raises(ValueError, match="inconsistent initial") as e:
            mbint.simulate(m, (0.0, 0.1), "dopri5", formulation=form, qd0=qd0)
        got = float(str(e.value).split("max |Phi_q qd0 + Phi_t| = ")[1].split()[0])
        assert got == pytest.approx(expected, rel=1e-3)  # 4 digits printed
    # consistent: the joint run's record holds both residuals near zero
    tr = mbint.simulate(m, (0.0, 0.01), "dopri5", formulation="joint")
    assert tr.initial["position"] <= 1e-12 and tr.initial["velocity"] <= 1e-12
