#ifndef MB_MBS_JOINT_SPATIAL_H
#define MB_MBS_JOINT_SPATIAL_H
/* mb_jspatial: the kinematic tree of a SpatialModel (bodies with Euler parameters) in
 * joint coordinates, for formulation="joint" (form_joint.c) -- issue 22/23.
 *
 * The geometry is an mb_jtree table (joint_tree.h) with mech_forces set: parents first,
 * each body's link frame has the body's axes and its origin at the body's joint point
 * (the centre of mass at c in link axes), joint frames (R, t) in the parent's link frame,
 * unit axes in the joint frame, the centroidal inertia in body axes; its gravity, inputs
 * and dampers are unused.  Joint types: MB_JT_REVOLUTE, MB_JT_PRISMATIC (one coordinate)
 * and MB_JT_BALL: the relative rotation C of the child's link frame in the joint frame
 * as Euler parameters p (4 coordinates) and their rates p' (4), the joint's velocity
 * the relative angular velocity in child axes w = 2 G(p) p', p'' = G(p)^T w' / 2 -
 * |p'|^2 p (as the floating base's, so y = (z, z') stays a second-order system).
 *
 * Forces: the mechanism's own generalized forces Q (mb_mech forces over the bodies' body
 * coordinates: 7 a body, force at the centre of mass and the Euler-parameter rows) are
 * turned into body wrenches: the force rows as they are, the torque in body axes
 * n' = G(p) (Q_p - Q_v) / 2, Q_v = 8 G(p')^T J' G(p') p the quadratic-velocity term
 * that spatial.c adds to Q_p (the ABA has its own gyroscopic terms).
 *
 * The articulated-body algorithm in world axes (Featherstone 2008, ch. 7), each body's
 * quantities about its own joint point o_i: motions (omega; v) with v the velocity of
 * the body point at o_i, forces (moment about o_i; force), 6 x 6 articulated inertias
 * shifted to the parent's point by X = [1 -d~; 0 1] (I -> X I X^T; about the global
 * origin the small axial inertias of long rod chains were lost), a joint of d = 1 or 3
 * degrees of freedom whose D (d x d) is factored by Cholesky, the articulated inertia
 * I - W W^T with W = U L^-T (backward stable where D is ill-conditioned).
 * No Python API, no globals, status codes; one work array of mb_jspatial_work_size(n)
 * doubles. */
#include <stddef.h>
#include "joint_tree.h"

typedef struct mb_jspatial {
    const mb_jtree *T;
    const int *body;        /* n: the mechanism's body of each tree body */
    const ptrdiff_t *off;   /* n + 1: first coordinate of each joint in z, off[n] = nz */
    double *work;           /* mb_jspatial_work_size(T->n) */
} mb_jspatial;

#define MB_JS_PER_BODY 132
static inline ptrdiff_t mb_jspatial_work_size(ptrdiff_t n)
{
    return MB_JS_PER_BODY * (n > 0 ? n : 0) + 1;
}

/* off (n + 1) of the tree's joints; returns nz = off[n] */
ptrdiff_t mb_jspatial_offsets(const mb_jtree *T, ptrdiff_t *off);
/* forward kinematics at (z, z'): the bodies' body coordinates q, q' (7 a body of the
 * mechanism, indexed by body[]: centre of mass, Euler parameters with e0 >= 0), and the
 * per-body frames, motions and velocity biases kept in work for mb_jspatial_accel */
int mb_jspatial_kin(const mb_jspatial *S, const double *z, const double *zd, double *q,
                    double *qd);
/* z'' (nz) under the mechanism's forces Q (7 a body) at the (q, q') of the last
 * mb_jspatial_kin at (z, z') */
int mb_jspatial_accel(const mb_jspatial *S, const double *q, const double *qd,
                      const double *Q, const double *z, const double *zd, double *zdd);
/* the bodies' q'' (7 a body) of the last mb_jspatial_accel (q, q' as given to it) */
int mb_jspatial_body_acc(const mb_jspatial *S, const double *q, const double *qd,
                         double *qdd);
/* the joint state (z, z') of the bodies' (q, q') (qd and zd may be NULL): the inverse of
 * the forward kinematics on states that satisfy the joints */
int mb_jspatial_joints(const mb_jspatial *S, const double *q, const double *qd, double *z,
                       double *zd);

#endif
