"""``python -m mbint demo``: the main job, reproducing the lecture notes' examples and
the source papers' mechanisms and figures under an output directory.

Sections (each a function ``section(out, summary, quick)``):

- :mod:`mbint.demo.lecture_notes`: the lecture notes' examples (mass-spring-damper,
  pendulum, stability regions, error against step size, Richardson, work-precision);
- :mod:`mbint.demo.models`: every paper model of :mod:`mbint.models` (motion, energy,
  constraint violation, an animation);
- :mod:`mbint.demo.llm`: the LLM paper's figures 2, 5, 6 and 7;
- :mod:`mbint.demo.sweep`: a parameter sweep with :func:`mbint.ensemble`, saved as
  NetCDF.
- :mod:`mbint.demo.sp`: the SP paper's figures 2-5, 7 and 8 (singular-perturbation
  scheme).
- :mod:`mbint.demo.rn`: the RN paper's section 5.1 (Rosenbrock-Nystrom on the
  state-space formulation: partition, Tables 1-2, Fig 2, work-precision).
- :mod:`mbint.demo.vehicle`: the RN paper's section 5.2 (the 14-body HMMWV, a
  SpatialModel: counts, dominant eigenvalue, Fig 5).
- :mod:`mbint.demo.ls`: the LS paper's Tables 1-7 and Figs 2-7 (the L-stable block
  method on the index-1/2/3 DAEs of the two-link manipulator).

``summary.md`` (markdown tables) and ``summary.csv`` (one value per row: section,
method, h, rtol, quantity, value) collect the numbers of every section.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from . import lecture_notes
from ._common import Summary, progress

__all__ = ["demo", "SECTIONS"]


def section_models(out, summary, quick):
    """The source papers' mechanisms (mbint.models): motion, energy, constraint violation."""
    from . import models

    models.section_models(out, summary, quick, progress=progress)


def section_llm(out, summary, quick):
    """The LLM paper's figures 2, 5, 6 and 7 (mbint.demo.llm)."""
    from . import llm

    llm.section_llm(out, summary, quick, progress=progress)


def section_sweep(out, summary, quick):
    """A parameter sweep with mbint.ensemble (mbint.demo.sweep)."""
    from . import sweep

    sweep.section_sweep(out, summary, quick, progress=progress)


def section_sp(out, summary, quick):
    """The SP paper's figures 2-5, 7 and 8 (mbint.demo.sp)."""
    from . import sp

    sp.section_sp(out, summary, quick, progress=progress)


def section_rn(out, summary, quick):
    """The RN paper's section 5.1 (mbint.demo.rn)."""
    from . import rn

    rn.section_rn(out, summary, quick, progress=progress)


def section_vehicle(out, summary, quick):
    """The RN paper's section 5.2, the HMMWV (mbint.demo.vehicle)."""
    from . import vehicle

    vehicle.section_vehicle(out, summary, quick, progress=progress)


def section_ls(out, summary, quick):
    """The LS paper's Tables 1-7 and Figs 2-7 (mbint.demo.ls)."""
    from . import ls

    ls.section_ls(out, summary, quick, progress=progress)


SECTIONS = lecture_notes.SECTIONS + (section_models, section_llm, section_rn, section_vehicle,
                                     section_sp, section_ls, section_sweep)


def demo(out="out", quick=False):
    """Run the demo and write its figures and summary under ``out``.

    Parameters
    ----------
    out : str or path-like
        Output directory (created if needed).
    quick : bool
        Smaller settings (fewer step-size levels, coarser grids), for tests.

    Returns
    -------
    pathlib.Path
        The output directory.
    """
    if "MPLBACKEND" not in os.environ:
        import matplotlib

        matplotlib.use("Agg")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = Summary()
    summary.text("# mbint demo: lecture notes chapter 7 (Schwab & Delhaes) and the papers' "
                 "mechanisms", "",
                 f"Settings: {'quick' if quick else 'full'}. Produced by "
                 f"`python -m mbint demo{' --quick' if quick else ''}`.", "")
    t_start = time.perf_counter()
    for section in SECTIONS:
        section(out, summary, quick)
    total = time.perf_counter() - t_start
    summary.text(f"Total demo time: {total:.1f} s.")
    summary.write(out)
    progress(f"wrote {out / 'summary.md'} and {out / 'summary.csv'} ({total:.1f} s)")
    return out


