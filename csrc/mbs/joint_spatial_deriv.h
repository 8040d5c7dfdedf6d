#ifndef MB_MBS_JOINT_SPATIAL_DERIV_H
#define MB_MBS_JOINT_SPATIAL_DERIV_H
/* The exact Jacobian of a SpatialModel tree's joint accelerations (formulation "joint",
 * form_joint.c; the tree of joint_spatial.h: revolute, prismatic and ball joints, the
 * last with 4 Euler parameters and their 4 rates as states).
 *
 * f(z, z') = z'' is the forward kinematics (z, z') -> (q, q') of the bodies, the
 * mechanism's forces Q(t, q, q') and the world-coordinate ABA of joint_spatial.c.  Each
 * column of df/dz and df/dz' is one forward-mode (tangent) pass through the same
 * arithmetic, carried as the imaginary part of complex numbers with a step h = 1e-100
 * (complex-step differentiation: no difference is taken, so the result is the
 * derivative of the computed f to rounding; h^2 terms underflow), O(n) a column, O(n^2)
 * in all.  The forces' tangent is Q_q dq + Q_q' dq' with the mechanism's analytic
 * derivatives (mb_mech forces_q, forces_qd: every spatial force element; Python forces,
 * if any, are differenced inside the mechanism's kernels), applied on the row band of
 * each column.  A ball joint's columns include the normalization of p (the kinematics
 * use p / |p|) and p'' = G(p/|p|)^T w' / 2 - |p'|^2 p exactly as accel computes it.
 *
 * Work: mb_jsderiv_work_size(n, nq, m) doubles owned by the caller; no state kept.
 * Returns MB_OK, a force kernel's status, or MB_RECOVERABLE (a D not positive definite,
 * a value not finite). */
#include <stddef.h>
#include "joint_spatial.h"
#include "mech.h"

/* n bodies, nq = 7 n body coordinates, m joint coordinates: the complex per-body values
 * (2 MB_JS_PER_BODY n), complex q, q', Q (6 nq), z, z', z'' (6 m), the base pass's
 * rigid-body inertias and biases (84 n), the row bands of Q_q and Q_q' (4 nq), Q_q and
 * Q_q' (2 nq^2) */
static inline ptrdiff_t mb_jsderiv_work_size(ptrdiff_t n, ptrdiff_t nq, ptrdiff_t m)
{
    n = n > 0 ? n : 0, nq = nq > 0 ? nq : 0, m = m > 0 ? m : 0;
    return (2 * MB_JS_PER_BODY + 84) * n + 10 * nq + 6 * m + 2 * nq * nq + 1;
}

/* the tree and the state at which f was evaluated */
typedef struct mb_jsderiv {
    const mb_jtree *T;          /* T->mech_forces: a SpatialModel's tree */
    const int *body;            /* n */
    const ptrdiff_t *off;       /* n + 1, off[n] = m */
    const mb_mech *mech;        /* nq = 7 n, forces_q and forces_qd given */
    const double *q, *qd, *Q;   /* nq each: the bodies' q, q' and Q at (t, z, z') */
} mb_jsderiv;

/* Jz = df/dz, Jzd = df/dz' (m x m each, column-major, leading dimension ld) at (t, z, z') */
int mb_jsderiv_jac(const mb_jsderiv *D, double t, const double *z, const double *zd,
                   double *Jz, double *Jzd, ptrdiff_t ld, double *work);

#endif
