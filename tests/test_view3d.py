"""mbint.view3d: the 3-D scene of a model and its trajectory (K3D), its standalone HTML page,
and a headless Chromium screenshot that shows the model where the camera's projection puts it.

The oracles: a box's inertia in closed form (m (b^2 + c^2) / 12), rotations from SciPy's
quaternions (an independent implementation of Euler parameters), the planar body points of
the model's own NumPy ``Body.point``, the joints' constraint (a spherical joint's point is
the same seen from either body), and a pinhole camera in NumPy for the screenshot.
"""
import colorsys
import shutil
import types
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import mbint
from mbint import models, scene3d

pytest.importorskip("k3d")

ROOT = Path(__file__).resolve().parent.parent


def _double_pendulum():
    """Two 1 m rods on spherical joints, started horizontal with a spin about z."""
    m = mbint.SpatialModel(gravity=(0, 0, -9.81), name="spherical double pendulum")
    J = (0.00125, 1 / 12, 1 / 12)          # a 1 kg, 1 m rod along its x axis
    a = m.add_body(1.0, J, r=(0.5, 0, 0), omega=(0, 0, 2.0), v=(0, 1.0, 0), name="upper")
    b = m.add_body(1.0, J, r=(1.5, 0, 0), omega=(0, 0, 2.0), v=(0, 3.0, 0), name="lower")
    m.add_spherical(m.ground, a, point=(0, 0, 0), name="top")
    m.add_spherical(a, b, point=(1, 0, 0), name="middle")
    return m


@pytest.fixture(scope="module")
def pendulum_run():
    m = _double_pendulum()
    traj = mbint.simulate(m, (0, 0.8), method="dopri5", rtol=1e-9, atol=1e-9, dense_output=True)
    assert traj.status == 0
    return m, traj


def _matrices(view, name):
    """The model matrices (n, 4, 4) of the mesh named ``name``, in the order of the frames."""
    mesh = next(o for o in view.plot.objects if o.name == name)
    mm = mesh.model_matrix
    keys = sorted(mm, key=float)
    assert np.allclose([float(k) for k in keys], view.times, rtol=1e-11, atol=1e-12)
    return np.array([np.asarray(mm[k], float).reshape(4, 4) for k in keys])


# ---------------------------------------------------------------- geometry
def test_inertia_box_has_the_bodys_inertia():
    rng = np.random.default_rng(3)
    for _ in range(5):
        sides, mass = rng.uniform(0.1, 2.0, 3), rng.uniform(0.5, 10.0)
        a, b, c = sides
        J0 = mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
        Q = Rotation.random(random_state=rng).as_matrix()
        half, W = scene3d._inertia_box(mass, Q @ J0 @ Q.T)
        s = 2 * half
        Jbox = W @ (mass / 12 * np.diag([s[1] ** 2 + s[2] ** 2, s[0] ** 2 + s[2] ** 2,
                                          s[0] ** 2 + s[1] ** 2])) @ W.T
        assert np.allclose(Jbox, Q @ J0 @ Q.T, rtol=1e-10, atol=1e-12)
        assert np.allclose(np.sort(s), np.sort(sides), rtol=1e-10)
    # the HMMWV's chassis: "a 4.5 x 2.1 x 1.0 m box" (mbint.models.hmmwv)
    ch = models.hmmwv().body("chassis")
    half, _ = scene3d._inertia_box(ch.mass, ch.inertia)
    assert np.allclose(2 * half, (4.5, 2.1, 1.0), atol=2e-3)


def test_meshes_are_closed_and_wound_outward():
    """Every primitive is a closed surface (each edge in two faces, opposite directions)
    whose faces point away from its centre: its signed volume is the solid's volume."""
    shapes = [(scene3d._box((0.5, 1.0, 1.5)), 6.0),
              (scene3d._cylinder((0, 0, 0), (0, 0, 2), 1.0, n=400), 2 * np.pi),
              (scene3d._sphere((0, 0, 0), 1.0, nlat=120, nlon=240), 4 / 3 * np.pi)]
    for (V, F), volume in shapes:
        edges = {}
        for f in F:
            for i in range(3):
                e = (f[i], f[(i + 1) % 3])
                edges[e] = edges.get(e, 0) + 1
        assert all(n == 1 and edges.get((b, a)) == 1 for (a, b), n in edges.items())
        signed = np.einsum("ij,ij->i", V[F[:, 0]], np.cross(V[F[:, 1]], V[F[:, 2]])).sum() / 6
        assert signed == pytest.approx(volume, rel=2e-3)


# ---------------------------------------------------------------- frames
def test_spatial_frames_move_the_bodies_as_the_trajectory(pendulum_run):
    m, traj = pendulum_run
    v = mbint.view3d(traj, max_frames=40)
    assert v.n_frames == 21                       # 0.8 s at 25 fps + 1, under max_frames
    assert np.allclose(v.times, np.linspace(0, 0.8, 21))
    q = traj.state(v.times)[0]
    s = np.array([0.3, -0.2, 0.1])                # any body-frame point
    for body in m.bodies:
        M = _matrices(v, body.name)
        r = q[7 * body.index:7 * body.index + 3].T
        p = q[7 * body.index + 3:7 * body.index + 7].T
        expect = Rotation.from_quat(p[:, [1, 2, 3, 0]]).apply(s) + r   # SciPy: scalar last
        got = M[:, :3, :3] @ s + M[:, :3, 3]
        assert np.allclose(got, expect, atol=2e-6)     # float32 in the page
        assert np.allclose(M[:, 3], [0, 0, 0, 1])
    # the joint between the rods: the same point seen from either body, at every frame
    Ma, Mb = _matrices(v, "upper"), _matrices(v, "lower")
    assert np.abs(Ma[:, :3, :3] @ [0.5, 0, 0] + Ma[:, :3, 3]
                  - (Mb[:, :3, :3] @ [-0.5, 0, 0] + Mb[:, :3, 3])).max() < 1e-5
    # the bodies moved: the lower rod's centre travels well over a rod's radius
    assert np.linalg.norm(Mb[-1, :3, 3] - Mb[0, :3, 3]) > 0.5


def test_a_saved_and_loaded_trajectory_draws_the_same_frames(pendulum_run, tmp_path):
    m, traj = pendulum_run
    traj.save(tmp_path / "pendulum.nc")
    back = mbint.load(tmp_path / "pendulum.nc")      # the SpatialModel rebuilt from the file
    v0, v1 = mbint.view3d(traj, max_frames=9), mbint.view3d(back, max_frames=9)
    assert np.array_equal(v0.times, v1.times)
    for body in m.bodies:
        assert np.array_equal(_matrices(v0, body.name), _matrices(v1, body.name))


def test_planar_model_is_drawn_in_the_plane():
    sc = mbint.PlanarModel(gravity=(0, -9.81), name="slider-crank")
    crank = sc.add_body(1.0, 0.003, q=(0.1, 0, 0), name="crank")
    rod = sc.add_body(2.0, 0.06, q=(0.5, 0, 0), name="rod")
    slider = sc.add_body(3.0, 0.01, q=(0.8, 0, 0), name="slider")
    sc.add_revolute(sc.ground, (0, 0), crank, (-0.1, 0))
    sc.add_revolute(crank, (0.1, 0), rod, (-0.3, 0))
    sc.add_revolute(rod, (0.3, 0), slider, (0, 0))
    sc.add_translational(sc.ground, (0, 0), slider, (0, 0), axis=(1, 0))
    sc.add_driver(crank, "theta", c1=6.0)
    sc.set_initial(qd=(0, 0.6, 6.0, 0, 0.6, -2.0, 0, 0, 0))
    traj = mbint.simulate(sc, (0, 1), method="radau_iia", rtol=1e-8, dense_output=True)
    v = traj.view3d(max_frames=12)
    assert v.n_frames == 12
    q = traj.state(v.times)[0]
    s = np.array([0.07, -0.02])
    for body in sc.bodies:
        M = _matrices(v, body.name)
        got = M[:, :3, :3] @ np.r_[s, 0.0] + M[:, :3, 3]
        assert np.allclose(got[:, :2], body.point(s, q).T, atol=1e-6)
        assert np.all(got[:, 2] == 0)
    # the crank turned through 6 rad/s x 1 s: its frame turned with it
    Mc = _matrices(v, "crank")
    angle = np.arctan2(Mc[-1, 1, 0], Mc[-1, 0, 0])
    assert angle == pytest.approx(np.remainder(6.0 + np.pi, 2 * np.pi) - np.pi, abs=1e-5)


def test_a_model_alone_is_one_frame_at_its_initial_configuration():
    m = models.hmmwv()
    v = mbint.view3d(m)
    assert v.n_frames == 1 and v.times[0] == 0
    for body in m.bodies:
        M = _matrices(v, body.name)[0]
        assert np.allclose(M[:3, 3], body.r0, atol=1e-6)
    # the road under the four tires, a line per suspension TSDA and tie rod (distance)
    names = [o.name for o in v.plot.objects]
    kinds = [pr["type"] for e in m.joint_elements + m.force_elements for pr in e.prims]
    assert kinds.count("tsda") == 4 and kinds.count("dist") == 4 and kinds.count("tire") == 4
    assert "ground" in names and sum(n.startswith("line") for n in names) == 8


def test_bad_arguments_are_named():
    m = _double_pendulum()
    with pytest.raises(TypeError, match="obj"):
        mbint.view3d(3.0)
    system = types.SimpleNamespace(model=types.SimpleNamespace(kind="system"), t=np.zeros(2))
    with pytest.raises(ValueError, match="kind 'system'"):
        mbint.view3d(system)
    with pytest.raises(ValueError, match="max_frames"):
        mbint.view3d(m, max_frames=0)
    with pytest.raises(TypeError, match="max_frames"):
        mbint.view3d(m, max_frames=2.5)
    with pytest.raises(ValueError, match="opacity"):
        mbint.view3d(m, opacity=1.5)
    with pytest.raises(ValueError, match="fps"):
        mbint.view3d(m, fps=-1)
    with pytest.raises(ValueError, match="view"):
        mbint.view3d(m, view=(30.0,))
    with pytest.raises(ValueError, match="ground"):
        mbint.view3d(m, follow=m.ground)


# ---------------------------------------------------------------- the page
class _Resources(HTMLParser):
    """Every src= and href= of the page."""

    def __init__(self):
        super().__init__()
        self.links, self.scripts = [], 0

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        self.links += [v for k, v in attrs if k in ("src", "href") and v]


def test_page_is_standalone(pendulum_run, tmp_path):
    m, traj = pendulum_run
    v = mbint.view3d(traj)
    path = v.save(tmp_path / "sub" / "pendulum.html")
    text = path.read_text()
    parser = _Resources()
    parser.feed(text)
    assert parser.scripts >= 3 and parser.links == []   # everything inline, nothing fetched
    assert "mbintViewReady" in text                     # the screenshot's ready signal
    assert 0.5e6 < path.stat().st_size < 3e6
    html = v._repr_html_()
    assert html.startswith("<iframe srcdoc=") and "<script" not in html   # escaped inside


# ---------------------------------------------------------------- the screenshot
def _project(camera, fov_deg, w, h, P):
    """Pixel (column, row) of global points P (k, 3) through a pinhole camera (three.js'
    PerspectiveCamera: vertical field of view, looking from camera[:3] at camera[3:6])."""
    eye, target, up = camera[:3], camera[3:6], camera[6:9]
    zc = eye - target
    zc /= np.linalg.norm(zc)
    xc = np.cross(up, zc)
    xc /= np.linalg.norm(xc)
    yc = np.cross(zc, xc)
    d = P - eye
    x, y, z = d @ xc, d @ yc, d @ zc
    f = 1 / np.tan(np.radians(fov_deg) / 2)
    ndc_x, ndc_y = f * x / (-z) / (w / h), f * y / (-z)
    return np.c_[(ndc_x + 1) / 2 * w, (1 - ndc_y) / 2 * h]


def _hue_near(img, px, color, r=4):
    """Whether a pixel within r of px has the hue of ``color`` (saturated)."""
    want = colorsys.rgb_to_hsv(*[((color >> s) & 255) / 255 for s in (16, 8, 0)])[0]
    c, rr = int(round(px[0])), int(round(px[1]))
    patch = img[max(rr - r, 0):rr + r + 1, max(c - r, 0):c + r + 1].reshape(-1, 3) / 255
    for rgb in patch:
        hh, ss, vv = colorsys.rgb_to_hsv(*rgb)
        dh = abs(hh - want)
        if ss > 0.2 and vv > 0.15 and min(dh, 1 - dh) < 0.04:
            return True
    return False


@pytest.mark.skipif(scene3d.find_browser() is None,
                    reason="no Chromium (Debian: apt-get install chromium; make test installs it)")
def test_screenshot_shows_the_model_where_the_camera_puts_it(pendulum_run, tmp_path):
    from PIL import Image

    m, traj = pendulum_run
    v = mbint.view3d(traj, view=(-60.0, 25.0))
    w, h = 640, 480
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    for time, k in ((0.0, 0), (0.8, -1)):
        png = v.screenshot(tmp_path / f"pendulum_{k}.png", size=(w, h), time=time)
        shutil.copy(png, out / f"view3d_pendulum_t{time:g}.png")
        print(f"screenshot: {out / f'view3d_pendulum_t{time:g}.png'}")
        img = np.asarray(Image.open(png).convert("RGB"))
        assert img.shape == (h, w, 3)
        q = traj.state(v.times[k])[0]
        for body, color in zip(m.bodies, scene3d.PALETTE):
            # points a quarter of a rod from its centre, on the links and the inertia box
            P = np.array([body.point(np.array([x, 0, 0]), q) for x in (-0.25, 0.25)])
            for px in _project(v.camera, v.camera_fov, w, h, P):
                assert 10 < px[0] < w - 10 and 10 < px[1] < h - 10      # in view
                assert not (px[0] > w - 230 and px[1] < 110)            # not under K3D's panel
                assert _hue_near(img, px, color), (body.name, time, px)
            # not a painted canvas: the body's hue covers a small part of the image only
            hsv = np.array([colorsys.rgb_to_hsv(*p) for p in img[::4, ::4].reshape(-1, 3) / 255])
            want = colorsys.rgb_to_hsv(*[((color >> s) & 255) / 255 for s in (16, 8, 0)])[0]
            dh = np.abs(hsv[:, 0] - want)
            share = np.mean((hsv[:, 1] > 0.2) & (np.minimum(dh, 1 - dh) < 0.04))
            assert 0.0005 < share < 0.2, (body.name, share)


def test_the_browser_does_not_inherit_preloaded_libraries(monkeypatch, tmp_path):
    """Regression: under ``make asan`` libasan is preloaded into Python (LD_PRELOAD) and
    Chromium inherited it, which stalled the screenshot ("the browser did not answer in
    time")."""
    from mbint import scene3d
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent/libasan.so")
    monkeypatch.setenv("ASAN_OPTIONS", "halt_on_error=1")
    env = scene3d._browser_env(str(tmp_path))
    assert "LD_PRELOAD" not in env and "ASAN_OPTIONS" not in env
    assert env["HOME"] == str(tmp_path) and env["PATH"] == __import__("os").environ["PATH"]
