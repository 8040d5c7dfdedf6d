#ifndef MB_MBS_JOINT_PLANAR_H
#define MB_MBS_JOINT_PLANAR_H
/* The exact Jacobian of a planar tree's joint accelerations (formulation "joint" on a
 * PlanarModel tree, form_joint.c): z'' = f(z, z') with the mechanism's forces Q(t, q, q')
 * (mb_mech) acting at the bodies' coordinates q(z), q' = J_b(z) z' of the forward
 * kinematics (x, y, theta of each centre of mass), and no joint inputs.
 *
 * Method: the inverse dynamics ID(z, z', z'') = J_b^T (M_b a_b - Q) (a_b the bodies'
 * accelerations) vanishes along f, so df/dz = -M^-1 dID/dz, df/dz' = -M^-1 dID/dz' at
 * z'' = f (Carpentier & Mansard 2018's idea, here in plain forward mode): one pass of
 * forward-mode differentiation of the planar recursion (world-frame motions
 * (omega, v_x, v_y) of the body point at the origin) per coordinate and per rate, O(n)
 * each, with the force derivatives Q_q, Q_q' of the mechanism (mb_mech forces_q,
 * forces_qd: analytic for every planar force element) applied on their banded row
 * ranges; M^-1 applied to each column by the articulated-body algorithm at rest
 * (the articulated inertias of the same state), O(n) a column: O(n^2) in all, plus the
 * force kernels' nq x nq blocks.
 *
 * Work: mb_jplanar_work_size(n) doubles owned by the caller; no state kept.  Returns
 * MB_OK, the status of a force kernel, or MB_RECOVERABLE when M is not positive
 * definite or a value is not finite. */
#include <stddef.h>
#include "joint_tree.h"
#include "mech.h"

enum { MB_JP_PV = 39, MB_JP_PD = 28 };  /* per-body values / derivatives (joint_planar.c) */

/* doubles of work for a planar tree of n bodies (nq = 3 n): the per-body values and
 * derivatives, dq, dq', dQ and the two row bands (7 nq), Q_q and Q_q' (2 nq^2) */
static inline ptrdiff_t mb_jplanar_work_size(ptrdiff_t n)
{
    n = n > 0 ? n : 0;
    ptrdiff_t nq = 3 * n;
    return (MB_JP_PV + MB_JP_PD) * n + 7 * nq + 2 * nq * nq + 1;
}

/* the tree and the state at which f was evaluated */
typedef struct mb_jplanar {
    const mb_jtree *T;   /* revolute joints about z, prismatic ones in the plane */
    const int *body;     /* n: the mechanism's body of each tree body */
    const double *off;   /* n: each joint frame's rotation about z (rad) */
    const mb_mech *mech; /* nq = 3 n, forces_q and forces_qd given */
    const double *q, *qd, *Q;  /* nq each: the bodies' q, q' and Q at (t, z, z') */
} mb_jplanar;

/* nonzero when mb_jplanar_jac applies to mech: its force derivatives are kernels
 * (forces_q, forces_qd) without Python forces (which the planar kernels would difference
 * with 12 n calls: the caller then differences the whole f with 2 n + 1) */
int mb_jplanar_exact(const mb_mech *mech);

/* Jz = df/dz, Jzd = df/dz' (n x n each, column-major, leading dimension ld) at (t, z, z')
 * with zdd = f(t, z, z') */
int mb_jplanar_jac(const mb_jplanar *P, double t, const double *z, const double *zd,
                   const double *zdd, double *Jz, double *Jzd, ptrdiff_t ld, double *work);

#endif
