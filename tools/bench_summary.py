"""The README's summary figure (docs/img/bench_summary.png) from the bench output in out/.

Panels, each drawn only when its input is present (a missing or unreadable file is
reported and its panel left out; with none of them nothing is written):

1. Work-precision on the RN stiff double pendulum, from out/bench_anchor.md
   (tests/benchmarks/bench_anchor.py): run time [s] against the maximum error of
   the coordinates q over 201 points in [0, 2] s, for the plain C CVODE anchor,
   mbint's methods and SciPy's, one point a tolerance.
2. Chain scaling, from out/bench_chain_sparse.md (bench_chain_sparse.py, when it
   exists): every "[ms]" column against N, one line per mode, in seconds.
3. The regression table, from out/bench_regression.json (bench_regression.py):
   current / baseline time per row (the median of the per-repetition ratios and
   their IQR), with 1.0 and the 1.10 flag level.

Run ``python tools/bench_summary.py [--out PATH] [--outdir DIR]`` after the benches
(``make bench``, or the bench scripts one by one).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "out"
PNG = ROOT / "docs" / "img" / "bench_summary.png"


def md_tables(text):
    """Every pipe table of a markdown text: a list of (header, rows), cells stripped."""
    tables, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if (lines[i].lstrip().startswith("|") and i + 1 < len(lines)
                and re.fullmatch(r"\s*\|(\s*:?-+:?\s*\|)+\s*", lines[i + 1])):
            header = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            tables.append((header, rows))
        else:
            i += 1
    return tables


def _num(s):
    try:
        return float(s)
    except ValueError:
        return math.nan


def anchor_rows(path):
    """(contender, tol, error, seconds) of bench_anchor.md's first table."""
    for header, rows in md_tables(Path(path).read_text()):
        h = [c.lower() for c in header]
        if h[:2] == ["contender", "tol"] and "error" in h and "time [ms]" in h:
            ie, it = h.index("error"), h.index("time [ms]")
            return [dict(name=r[0], tol=_num(r[1]), error=_num(r[ie]), time=_num(r[it]) * 1e-3)
                    for r in rows if len(r) == len(h)]
    raise ValueError(f"{path}: no table with columns contender, tol, error, time [ms]")


def chain_rows(path):
    """(N, mode, {quantity: seconds}) of bench_chain_sparse.md's table with an N column
    and "[ms]" (or "[s]", "[us]") columns."""
    scale = {"[s]": 1.0, "[ms]": 1e-3, "[us]": 1e-6, "[µs]": 1e-6}
    for header, rows in md_tables(Path(path).read_text()):
        h = [c.lower() for c in header]
        cols = {i: (c.rsplit("[", 1)[0].strip(), scale["[" + c.rsplit("[", 1)[1]])
                for i, c in enumerate(h) if "[" in c and "[" + c.rsplit("[", 1)[1] in scale}
        if "n" in h and cols:
            iN, im = h.index("n"), (h.index("mode") if "mode" in h else None)
            out = []
            for r in rows:
                if len(r) != len(h):
                    continue
                vals = {name: _num(r[i]) * s for i, (name, s) in cols.items()}
                out.append(dict(N=_num(r[iN]), mode=r[im] if im is not None else "", **vals))
            return out, [name for name, _ in cols.values()]
    raise ValueError(f"{path}: no table with an N column and time columns")


def regression_rows(path):
    data = json.loads(Path(path).read_text())
    return data["meta"], [r for r in data["rows"] if "ratio" in r]


STYLE = {  # contender -> matplotlib keywords
    "C CVODE (CV_NORMAL)": dict(color="black", marker="s", lw=2.0),
    "C CVODE (CV_ONE_STEP + GetDky)": dict(color="black", marker="s", ls=":", mfc="none"),
}


def _style(name, k):
    if name in STYLE:
        return STYLE[name]
    if name.lower().startswith("scipy"):
        return dict(color=f"C{7 + k % 3}", marker="x", ls="--")
    return dict(color=f"C{k % 7}", marker="o", ms=4)


def draw_anchor(ax, rows, source):
    names = list(dict.fromkeys(r["name"] for r in rows))
    for k, name in enumerate(names):
        pts = sorted((r["tol"], r["error"], r["time"]) for r in rows if r["name"] == name
                     and r["error"] > 0 and r["time"] > 0)
        if pts:
            ax.loglog([p[1] for p in pts], [p[2] for p in pts], label=name, **_style(name, k))
    ax.set_xlabel("max error of q over 201 points in [0, 2] s [m, rad]")
    ax.set_ylabel("run time [s] (wall clock, one thread)")
    ax.set_title("RN stiff double pendulum: work-precision\n"
                 f"(one point a tolerance; {source})", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)


def draw_chain(ax, rows, quantities, source):
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    for k, q in enumerate(quantities):
        for mode, ls in zip(modes, ["-", "--", ":", "-."]):
            pts = sorted((r["N"], r[q]) for r in rows if r["mode"] == mode
                         and r[q] > 0 and not math.isnan(r[q]))
            if pts:
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker="o", ms=4,
                          color=f"C{k}", label=f"{q} ({mode})" if mode else q)
    ax.set_xlabel("N (bodies in the chain)")
    ax.set_ylabel("time per call [s]")
    ax.set_title(f"Planar chain: cost against size\n({source})", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)


def draw_regression(ax, meta, rows, source):
    labels = [f"{r['model']} / {r['method']}" for r in rows]
    ratios = [r["ratio"] for r in rows]
    y = list(range(len(rows)))
    flag = meta.get("flag", 1.1)
    ax.barh(y, [r - 1.0 for r in ratios], left=1.0, height=0.6,
            color=["C3" if r > flag else "C0" for r in ratios],
            label="median of the per-repetition ratios")
    ax.hlines(y, [r["ratio_q1"] for r in rows], [r["ratio_q3"] for r in rows], color="black",
              lw=1.0, label="their IQR")
    ax.axvline(1.0, color="black", lw=0.8)
    ax.axvline(flag, color="C3", lw=0.8, ls="--", label=f"flag level {flag:.2f}")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("run time current / baseline [-]")
    ax.set_title(f"Small models: current {meta['current'][:7]} vs baseline "
                 f"{meta['baseline'][:7]}\n({meta['reps']} interleaved repetitions; {source})",
                 fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outdir", type=Path, default=OUT_DIR, help="where the bench output is")
    ap.add_argument("--out", type=Path, default=PNG, help="the PNG to write")
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = []
    try:
        rows = anchor_rows(args.outdir / "bench_anchor.md")
        panels.append(lambda ax: draw_anchor(ax, rows, "out/bench_anchor.md"))
    except (OSError, ValueError) as exc:
        print(f"work-precision panel left out: {exc}", file=sys.stderr)
    try:
        crow, quantities = chain_rows(args.outdir / "bench_chain_sparse.md")
        panels.append(lambda ax: draw_chain(ax, crow, quantities, "out/bench_chain_sparse.md"))
    except (OSError, ValueError) as exc:
        print(f"chain-scaling panel left out: {exc}", file=sys.stderr)
    try:
        meta, rrows = regression_rows(args.outdir / "bench_regression.json")
        if rrows:
            panels.append(lambda ax: draw_regression(ax, meta, rrows,
                                                     "out/bench_regression.json"))
    except (OSError, ValueError, KeyError) as exc:
        print(f"regression panel left out: {exc}", file=sys.stderr)
    if not panels:
        print("no bench output in", args.outdir, "- run make bench first", file=sys.stderr)
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6.0 * len(panels), 6.0), squeeze=False)
    for ax, draw in zip(axes[0], panels):
        draw(ax)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100, bbox_inches="tight")
    plt.close(fig)
    print(f"written {args.out} ({len(panels)} panels)")
    return args.out


if __name__ == "__main__":
    main()
