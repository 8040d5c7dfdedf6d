#ifndef MB_PYTHON_PLANAR_PY_H
#define MB_PYTHON_PLANAR_PY_H
/* The planar model's tables as _core.mech_planar (planar_py.c) parses them into an
 * mb_planar_model (mbs/model.h) behind a mech handle (mech_py.h).  They are packed by
 * PlanarModel.compile() (mbint/mbs/planar.py).
 *
 * Planar tables (float64, C order, one row per element; integer fields are
 * stored as exactly representable doubles).  The column names are also served to
 * Python by _core.planar_layout(), which mbint/mbs/planar.py uses to pack its rows, so
 * the two sides cannot drift apart.
 *   bodies (nb, 2):  mass, inertia
 *   gravity (2,):    g_x, g_y
 *   joints (nj, 19): type i j si_x si_y sj_x sj_y ni_x ni_y L phi0 coord
 *                    c0 c1 c2 a w psi row
 *   forces (nf, 27): type i j si_x si_y sj_x sj_y k c L0
 *                    fa_c0 fa_c1 fa_c2 fa_a fa_w fa_psi wrap K cd e ri rj
 *                    p0_x p0_y nrm_x nrm_y coord
 * Types and fields are those of mb_planar_joint / mb_planar_force (mbs/model.h);
 * body index -1 is the ground; row is the first row of the joint in Phi. */
#include "problem_py.h"

enum {
    MB_PY_JOINT_NCOLS = 19,
    MB_PY_FORCE_NCOLS = 27
};

#endif
