"""URDF text of serial chains of uniform rods, for the joint-coordinate tests and
benchmarks (tests/test_joint.py, tests/test_formulations.py, tests/benchmarks/
bench_joint.py): link k hangs from joint k along -z of its frame, joint k + 1 at its end."""


def rod_chain_urdf(n, length=0.5, mass=1.0, axes="y", damping=0.0, name="chain"):
    """URDF text of a chain of ``n`` rods (``length`` m, ``mass`` kg) on revolute joints
    whose axes cycle through ``axes`` ("y": a planar pendulum chain; "yx": alternating
    axes, a spatial chain), each with viscous ``damping`` (N m s/rad)."""
    I = mass * length ** 2 / 12
    vec = dict(x="1 0 0", y="0 1 0", z="0 0 1")
    parts = [f'<robot name="{name}">', '<link name="base"/>']
    for k in range(n):
        parts.append(
            f'<link name="l{k}"><inertial><origin xyz="0 0 {-length / 2}"/>'
            f'<mass value="{mass}"/><inertia ixx="{I}" iyy="{I}" izz="{1e-4 * I}" ixy="0" '
            f'ixz="0" iyz="0"/></inertial></link>')
        z = 0.0 if k == 0 else -length
        parts.append(
            f'<joint name="j{k}" type="continuous"><parent link="{"base" if k == 0 else f"l{k - 1}"}"/>'
            f'<child link="l{k}"/><origin xyz="0 0 {z}"/><axis xyz="{vec[axes[k % len(axes)]]}"/>'
            f'<dynamics damping="{damping}"/></joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def rod_chain(tmp_path, n, **kw):
    """The path of a rod chain's URDF file written under ``tmp_path``."""
    p = tmp_path / f"chain{n}_{kw.get('axes', 'y')}.urdf"
    p.write_text(rod_chain_urdf(n, **kw))
    return str(p)
