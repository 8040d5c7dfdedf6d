"""A mechanism that does not depend on t says so (mb_mech.autonomous), and the
index-1 formulation then gives the methods that use df/dt (Rosenbrock, LLM) an exact
zero instead of a finite difference that costs one evaluation of f a step (issue 13)."""
import numpy as np
import pytest

import mbint
from mbint import PlanarModel


def shaken_pendulum(amplitude):
    """A 1 m pendulum (1 kg, J = 1/12 kg m^2) hanging from a cart whose x is driven as
    amplitude * sin(5 t) m; y and the angle of the cart are held by a translational joint
    along x; the bar starts 0.4 rad from hanging down, and the initial velocities are
    projected onto the constraints (the driver moves the cart at t = 0)."""
    m = PlanarModel(name="shaken pendulum")
    cart = m.add_body(1.0, 0.1, name="cart")
    th = -np.pi / 2 + 0.4
    bar = m.add_body(1.0, 1.0 / 12.0, q=(0.5 * np.cos(th), 0.5 * np.sin(th), th), name="bar")
    m.add_translational(m.ground, (0.0, 0.0), cart, (0.0, 0.0), axis=(1.0, 0.0), name="rail")
    m.add_driver(cart, "x", c0=0.0, a=amplitude, w=5.0, name="shake")
    m.add_revolute(cart, (0.0, 0.0), bar, (-0.5, 0.0), name="pin")
    return m


@pytest.mark.parametrize("method, stages", [("rodas4", 6), ("ros2", 2), ("ros4", 3)])
def test_autonomous_model_spends_no_evaluation_on_dfdt(method, stages):
    # f evaluations: the stages of every attempt (rejected ones too), plus a handful for
    # the initial step; a finite-difference df/dt would add one per attempt
    tr = mbint.simulate(mbint.models.stiff_double_pendulum(), (0.0, 2.0), method=method,
                        rtol=1e-6, atol=1e-6)
    st = tr.stats
    attempts = st["nsteps"] + st["nreject"] + st["nfail"]
    assert tr.status == 0
    assert st["nfev"] <= stages * attempts + 4, st


def test_time_dependent_driver_keeps_dfdt():
    # The shaken pendulum is not autonomous: a Rosenbrock method that dropped df/dt would
    # lose its order.  rodas4 at two tight tolerances against radau_iia at 1e-12.
    m = shaken_pendulum(0.05)
    ref = mbint.simulate(m, (0.0, 2.0), method="radau_iia", rtol=1e-12, atol=1e-12,
                         consistent="project")
    errs = []
    for h in (0.02, 0.01):
        tr = mbint.simulate(m, (0.0, 2.0), method="rodas4", h=h, consistent="project")
        errs.append(np.abs(tr.q[:, -1] - ref.q[:, -1]).max())
    order = np.log2(errs[0] / errs[1])
    assert order > 3.5, (errs, order)
