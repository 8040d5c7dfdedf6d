"""The LS paper's Tables 1-7 and Figs 2-7 (Li, Ding, Li 2019: the L-stable block
method on the planar two-link manipulator), computed with ``lstable_block``,
``astable_block``, ``rk4``, ``radau_ia3``, ``radau_iia3`` and ``lobatto_iiic3``.

:func:`tables` returns the seven tables next to the paper's numbers;
:func:`section_ls` has the signature of the sections of ``python -m mbint demo``
and writes ``ls/tables.md`` and ``ls/fig2_7.png`` under the output directory.

Columns of every table (as the paper's): runtime [s] (wall clock of
:func:`mbint.simulate`, this machine), max |eps_H| [J] = max_t |H(t) - H(0)| of the
total energy, and the max over the run of the position, velocity and acceleration
constraint errors (``traj.violation()``: max-norm over the rows).

Readings of the paper: Tables 1-3 and the L-stable rows of Tables 6 (index 1) and 7
repeat its index-1 row of Table 4, so they are index-1 runs (``index1_dae``); Table 5
repeats the index-3 row; the "fourth-order" Radau IA / Radau IIA / Lobatto IIIC of
Table 7 are taken as the 3-stage methods (orders 5, 5, 4).
"""
from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np

from .. import models
from ..mbs.simulate import simulate

__all__ = ["run_row", "tables", "PAPER", "section_ls", "format_table"]

#: Newton tolerance of the block methods in the tables: the paper's constraint errors
#: are those of a converged Newton.  On the index-3 form the positions are polished to
#: round-off whatever the tolerance (irk_newton.c: 2.4e-14..4.9e-14 with the default
#: 1e-3); on the index-1 and index-2 forms the enforced level follows the tolerance (with
#: the default, in the run's weighted norm, ~1e-9), hence this tighter one
NEWTON_TOL = 1e-8

COLUMNS = ("runtime_s", "max_eH", "position", "velocity", "acceleration")

#: the paper's Tables 1-7: {table: {row: (runtime, max|eH|, pos, vel, acc)}}
PAPER = {
    1: {"h=0.01": (5.8906, 7.0007e-05, 6.8459e-07, 3.7480e-07, 5.6595e-12),
        "h=0.005": (10.8750, 8.8078e-07, 1.9154e-09, 6.6686e-09, 1.9846e-12),
        "h=0.001": (42.6406, 5.5074e-11, 7.6766e-13, 4.1800e-13, 1.4211e-13)},
    2: {"r=3": (1.6875, 0.0021, 5.8212e-05, 3.9267e-04, 6.2629e-12),
        "r=4": (5.8906, 7.0007e-05, 6.8459e-07, 3.7480e-07, 5.6595e-12)},
    3: {"L": (5.8906, 7.0007e-05, 6.8459e-07, 3.7480e-07, 5.6595e-12),
        "ERK4": (0.3906, 0.2628, 0.0087, 0.0021, 9.9476e-14)},
    4: {"index-1": (5.8906, 7.0007e-05, 6.8459e-07, 3.7480e-07, 5.6595e-12),
        "index-2": (5.4219, 3.2163e-05, 4.3949e-09, 1.7764e-14, 0.0704),
        "index-3": (5.6094, 0.0011, 2.7756e-15, 5.9405e-04, 0.9854)},
    5: {"equidistant": (5.6094, 0.0011, 2.7756e-15, 5.9405e-04, 0.9854),
        "chebyshev": (5.2188, 4.3245e-05, 2.9976e-15, 1.8094e-04, 0.6880),
        "legendre": (5.1094, 2.5327e-04, 2.8866e-15, 2.9047e-04, 0.7560)},
    6: {"index-1 A-stable": (6.2188, 3.8045e-05, 2.3863e-07, 2.0615e-07, 5.6648e-12),
        "index-1 L-stable": (5.8906, 7.0007e-05, 6.8459e-07, 3.7480e-07, 5.6595e-12),
        "index-2 A-stable": (5.4688, 1.1145e-05, 1.6059e-09, 1.7729e-14, 0.0214),
        "index-2 L-stable": (5.4219, 3.2163e-05, 4.3949e-09, 1.7764e-14, 0.0704),
        "index-3 A-stable": None,  # "Singular"
        "index-3 L-stable": (5.6094, 0.0011, 2.7756e-15, 5.9405e-04, 0.9854)},
    7: {"L-stable r=3": (1.6875, 0.0021, 5.8212e-05, 3.9267e-04, 6.2629e-12),
        "Radau IA": (14.9063, 1.4075, 0.1803, 0.1087, 9.8100),
        "Radau IIA": (13.5625, 0.1035, 2.1396, 8.2918e-04, 9.8100),
        "Lobatto IIIC": (13.9375, 0.1038, 2.1396, 0.0010, 9.8100)},
}

TITLES = {
    1: "Table 1: L-stable (r = 4, equidistant, index 1) at h = 0.01, 0.005, 0.001",
    2: "Table 2: L-stable r = 3 and r = 4 (equidistant, index 1, h = 0.01)",
    3: "Table 3: L-stable (r = 4, index 1) and ERK4 (index-1 ODE), h = 0.01",
    4: "Table 4: L-stable r = 4 on the index-1, -2, -3 DAEs, h = 0.01",
    5: "Table 5: L-stable r = 4, index 3: equidistant, Chebyshev, Legendre nodes, h = 0.01",
    6: "Table 6: A-stable (4, 4) and L-stable (2, 4), r = 4, index 1, 2, 3, h = 0.01",
    7: "Table 7: L-stable r = 3 and Radau IA, Radau IIA, Lobatto IIIC (index 1, h = 0.01)",
}


def run_row(formulation, method="lstable_block", h=0.01, T=10.0, model=None, **options):
    """Run the manipulator once and return the paper's columns.

    Parameters
    ----------
    formulation : str
        A formulation of :func:`mbint.simulate` (``"index1"`` for the ODE).
    method : str
    h : float
        Fixed step [s].
    T : float
        End time [s].
    **options
        Method options (``r``, ``nodes``, ...).

    Returns
    -------
    dict
        ``runtime_s``, ``max_eH`` [J], ``position`` [m], ``velocity`` [m/s],
        ``acceleration`` [m/s^2] (maxima over the run), ``status``, ``message``,
        ``traj``.
    """
    m = models.two_link_manipulator() if model is None else model
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # astable_block on index 3: the table shows it
        warnings.filterwarnings("ignore", "astable_block on formulation='index3'")
        tr = simulate(m, (0.0, T), method=method, formulation=formulation, h=h, **options)
    rt = time.perf_counter() - t0
    H = m.reference_energy(tr.q, tr.qd)
    v = np.asarray(tr.violation())
    with np.errstate(invalid="ignore"):
        mx = np.nanmax(np.abs(v), axis=1) if v.size else np.full(3, np.nan)
    return dict(runtime_s=rt, max_eH=float(np.nanmax(np.abs(H - H[0]))),
                position=float(mx[0]), velocity=float(mx[1]), acceleration=float(mx[2]),
                status=tr.status, message=tr.message, traj=tr)


def _specs(quick):
    hs = (0.01, 0.005) if quick else (0.01, 0.005, 0.001)
    L4 = dict(method="lstable_block", r=4, newton_tol=NEWTON_TOL)
    return {
        1: [(f"h={h:g}", dict(L4, formulation="index1_dae", h=h)) for h in hs],
        2: [("r=3", dict(L4, r=3, formulation="index1_dae")),
            ("r=4", dict(L4, formulation="index1_dae"))],
        3: [("L", dict(L4, formulation="index1_dae")),
            ("ERK4", dict(method="rk4", formulation="index1"))],
        4: [(f"index-{i}", dict(L4, formulation=f)) for i, f in
            ((1, "index1_dae"), (2, "index2"), (3, "index3"))],
        5: [(nd, dict(L4, formulation="index3", nodes=nd))
            for nd in ("equidistant", "chebyshev", "legendre")],
        6: [(f"index-{i} {v}-stable", dict(L4, method=f"{v.lower()}stable_block", formulation=f))
            for i, f in ((1, "index1_dae"), (2, "index2"), (3, "index3")) for v in ("A", "L")],
        7: [("L-stable r=3", dict(L4, r=3, formulation="index1_dae")),
            ("Radau IA", dict(method="radau_ia3", formulation="index1_dae")),
            ("Radau IIA", dict(method="radau_iia3", formulation="index1_dae")),
            ("Lobatto IIIC", dict(method="lobatto_iiic3", formulation="index1_dae"))],
    }


def tables(T=10.0, quick=False, which=None, progress=None):
    """The paper's Tables 1-7 recomputed.

    Parameters
    ----------
    T : float
        End time [s] (the paper: 10 s).
    quick : bool
        Leave out the h = 0.001 row of Table 1.
    which : iterable of int, optional
        Tables to compute (default all).
    progress : callable, optional
        Called with a message per run.

    Returns
    -------
    dict
        ``{table: [(row, ours dict (run_row without traj), paper tuple or None)]}``.
    """
    out, cache = {}, {}
    for k, rows in _specs(quick).items():
        if which is not None and k not in which:
            continue
        out[k] = []
        for name, spec in rows:
            spec = dict(spec)
            key = tuple(sorted(spec.items()))
            if key not in cache:  # Tables 1-6 repeat rows: run each once
                formulation = spec.pop("formulation")
                res = run_row(formulation, T=T, **spec)
                res.pop("traj")
                cache[key] = res
                if progress:
                    progress(f"LS table {k} {name}: status {res['status']}")
            out[k].append((name, cache[key], PAPER[k].get(name)))
    return out


def format_table(k, rows):
    """Markdown for one table: our value above the paper's in each cell."""
    head = ("| " + TITLES[k] + " | runtime [s] | max abs eH [J] | position | velocity "
            "| acceleration |")
    lines = [head, "|" + "---|" * 6]
    for name, ours, paper in rows:
        if ours["status"] != 0:
            cells = [f"failed: {ours['message'][:60]}"] + [""] * 4
        else:
            cells = [f"{ours[c]:.4g}" for c in COLUMNS]
        lines.append(f"| {name} (mbint) | " + " | ".join(cells) + " |")
        pc = ["Singular"] + [""] * 4 if paper is None else [f"{x:.5g}" for x in paper]
        lines.append(f"| {name} (paper) | " + " | ".join(pc) + " |")
    return "\n".join(lines)


def figures(T=10.0, T_long=100.0, path=None):
    """Figs 2-7: the end of link 2 (Figs 2-3), energies (4), constraint errors (5), and
    the total energy of the L-stable method and ERK4 over T and T_long (6, 7)."""
    import matplotlib.pyplot as plt

    m = models.two_link_manipulator()
    tr = simulate(m, (0.0, T), method="lstable_block", formulation="index1_dae", h=0.01, r=4)
    fig, ax = plt.subplots(2, 3, figsize=(15, 8))
    x, y = tr.output("tip_x"), tr.output("tip_y")
    ax[0, 0].plot(x, y)
    ax[0, 0].plot(x[0], y[0], "o")
    ax[0, 0].plot(x[-1], y[-1], "*")
    ax[0, 0].set(xlabel="x [m]", ylabel="y [m]", title="Fig 2: end of link 2")
    ax[0, 1].plot(tr.t, x, label="x")
    ax[0, 1].plot(tr.t, y, label="y")
    ax[0, 1].set(xlabel="t [s]", ylabel="[m]", title="Fig 3: end of link 2")
    ax[0, 1].legend()
    H = m.reference_energy(tr.q, tr.qd)
    V = 9.81 * (1.0 * tr.q[1] + 2.0 * tr.q[4])
    ax[0, 2].plot(tr.t, H, label="total")
    ax[0, 2].plot(tr.t, H - V, label="kinetic")
    ax[0, 2].plot(tr.t, V, label="potential")
    ax[0, 2].set(xlabel="t [s]", ylabel="energy [J]", title="Fig 4: energies")
    ax[0, 2].legend()
    v = np.asarray(tr.violation())
    for i, lab in enumerate(("position [m]", "velocity [m/s]", "acceleration [m/s^2]")):
        ax[1, 0].semilogy(tr.t, np.maximum(v[i], 1e-18), label=lab)
    ax[1, 0].set(xlabel="t [s]", title="Fig 5: constraint errors")
    ax[1, 0].legend()
    for a, TT, title in ((ax[1, 1], T, "Fig 6"), (ax[1, 2], T_long, "Fig 7")):
        for meth, form, lab in (("lstable_block", "index1_dae", "L-stable r=4"),
                                ("rk4", "index1", "ERK4")):
            kw = dict(r=4) if meth == "lstable_block" else {}
            t2 = simulate(m, (0.0, TT), method=meth, formulation=form, h=0.01, **kw)
            a.plot(t2.t, m.reference_energy(t2.q, t2.qd), label=lab)
        a.set(xlabel="t [s]", ylabel="total energy [J]", title=f"{title}: {TT:g} s, h = 0.01")
        a.legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=90)
        plt.close(fig)
    return fig


def section_ls(out, summary, quick, progress=None):
    """Tables 1-7 and Figs 2-7 of the LS paper under ``out/ls`` (T = 10 s, quick: 2 s
    and no h = 0.001 row); the table values are added to the summary (section ``"ls"``,
    method the row, quantity ``"table<k> <column>"``).  Returns :func:`tables`' dict."""
    import matplotlib

    matplotlib.use("Agg")
    d = Path(out) / "ls"
    d.mkdir(parents=True, exist_ok=True)
    T = 2.0 if quick else 10.0
    res = tables(T=T, quick=quick, progress=progress)
    md = [f"LS paper tables (T = {T:g} s{'; quick' if quick else ''})", ""]
    for k, rows in res.items():
        md += [format_table(k, rows), ""]
        for name, ours, _ in rows:
            for c in COLUMNS:
                summary.add("ls", name, f"table{k} {c}", ours[c], h=0.01)
    (d / "tables.md").write_text("\n".join(md))
    figures(T=T, T_long=10.0 if quick else 100.0, path=d / "fig2_7.png")
    if progress:
        progress(f"wrote {d / 'tables.md'} and {d / 'fig2_7.png'}")
    return res
