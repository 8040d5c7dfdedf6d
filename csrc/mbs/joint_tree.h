#ifndef MB_MBS_JOINT_TREE_H
#define MB_MBS_JOINT_TREE_H
/* mb_jtree: a kinematic tree of rigid bodies on a fixed base (or a floating one: below),
 * one joint (revolute or prismatic) per body, in joint coordinates (Featherstone, "Rigid Body Dynamics
 * Algorithms", 2008: chapters 5-7).
 *
 *   mb_jtree_aba    forward dynamics q'' = M(q)^-1 (tau - C(q, q')) by the
 *                   articulated-body algorithm, O(n)
 *   mb_jtree_rnea   inverse dynamics tau = M(q) q'' + C(q, q') by the recursive
 *                   Newton-Euler algorithm, O(n)
 *   mb_jtree_crba   the joint-space mass matrix M(q) by the composite-rigid-body
 *                   algorithm, O(n d), d the depth of the tree
 *   mb_jtree_fk     link frames, their velocities and accelerations in the global frame
 *   mb_jtree_input  the generalized force of the joints' inputs and dampers
 * C(q, q') holds the Coriolis, centrifugal and gravity terms (gravity as an upward
 * acceleration of the base).
 *
 * Conventions: bodies are numbered parents before children (parent[i] < i, -1: the
 * base, whose link frame is the global frame).  Body i's link frame is its parent's
 * frame moved by the joint frame (R_i, t_i) and then by the joint's motion: a rotation
 * by q_i about the unit axis (revolute) or a translation by q_i along it (prismatic),
 * axis in the joint frame (URDF's convention).  Spatial vectors are (angular; linear),
 * in the body's link frame (Featherstone's).  Rotations are row-major 3 x 3.
 *
 * Work arrays: mb_jtree_work_size(n) doubles, owned by the caller.
 * Every function returns MB_OK or a status (status.def). */
#include <stddef.h>

/* MB_JT_BALL: a spherical joint, only in a tree with mech_forces (a SpatialModel's:
 * joint_spatial.h); the functions below refuse it (MB_ERR_NOT_SUPPORTED) */
enum { MB_JT_REVOLUTE = 0, MB_JT_PRISMATIC = 1, MB_JT_FREE = 2, MB_JT_BALL = 3 };

/* A floating base: body 0 of type MB_JT_FREE (parent -1) is a free body whose state is
 * given apart: its link frame's rotation A (row-major, link to global) and origin o (m),
 * and its spatial velocity v = (omega; velocity of the origin) in link coordinates
 * (rad/s, m/s).  Its entries of q, q', q'', tau are unused (q'' 0).  Only the ABA and
 * the forward kinematics take a floating base (mb_jtree_aba_free, mb_jtree_fk_free);
 * the others return MB_ERR_NOT_SUPPORTED. */
typedef struct mb_jtree_root {
    double A[9], o[3], v[6];
} mb_jtree_root;

typedef struct mb_jtree {
    ptrdiff_t n;            /* bodies = joints */
    const int *parent;      /* n: parent body, -1 for the base; parent[i] < i */
    const int *type;        /* n: MB_JT_REVOLUTE or MB_JT_PRISMATIC */
    const double *frame;    /* 12 n: R_i (9, row-major) and t_i (3, m) of the joint frame
                             * in the parent's link frame */
    const double *axis;     /* 3 n: unit axis in the joint frame */
    const double *inertia;  /* 10 n: mass (kg), centre of mass c (3, m, link frame) and the
                             * inertia about c in link axes (xx, yy, zz, xy, xz, yz; kg m^2) */
    const double *damping;  /* n: viscous damping (N m s/rad, N s/m), or NULL: none */
    const double *input;    /* 6 n: joint torque / force c0 + c1 t + c2 t^2 + a sin(w t + psi)
                             * as (c0, c1, c2, a, w, psi) (N m, N), or NULL: none */
    double gravity[3];      /* m/s^2, global frame */
    int mech_forces;        /* 1: the tree of a SpatialModel (joint_spatial.h): forces are
                             * the mechanism's, link frames have the bodies' axes; may
                             * hold MB_JT_BALL joints; gravity, inputs, dampers unused */
} mb_jtree;

/* doubles of work for a tree of n bodies */
#define MB_JT_PER_BODY 80
static inline ptrdiff_t mb_jtree_work_size(ptrdiff_t n)
{
    return MB_JT_PER_BODY * (n > 0 ? n : 0) + 1;
}

/* doubles of work for mb_jtree_aba_derivatives */
static inline ptrdiff_t mb_jtree_deriv_work_size(ptrdiff_t n)
{
    n = n > 0 ? n : 0;
    return (MB_JT_PER_BODY + 18 + 2) * n + n * n + 1;
}

/* the ABA of a tree with a free body 0: q'' of the joints and a0 (6), the root's spatial
 * acceleration (alpha; acceleration of the origin minus omega x v) in link coordinates */
int mb_jtree_aba_free(const mb_jtree *T, const mb_jtree_root *root, const double *q,
                      const double *qd, const double *tau, double *a0, double *qdd,
                      double *work);
/* mb_jtree_fk with a free body 0 (a0: its acceleration as from mb_jtree_aba_free, needed
 * with qdd) */
int mb_jtree_fk_free(const mb_jtree *T, const mb_jtree_root *root, const double *a0,
                     const double *q, const double *qd, const double *qdd, double *out,
                     double *work);

/* MB_OK, or MB_ERR_ILL_INPUT with msg (len chars) naming what is wrong with the table */
int mb_jtree_check(const mb_jtree *T, char *msg, size_t len);

/* q'' (n) of the generalized force tau (n; NULL: zero) at (q, q') */
int mb_jtree_aba(const mb_jtree *T, const double *q, const double *qd, const double *tau,
                 double *qdd, double *work);
/* tau (n) = M(q) q'' + C(q, q') (qd, qdd NULL: zero; gravity 0: without it) */
int mb_jtree_rnea(const mb_jtree *T, const double *q, const double *qd, const double *qdd,
                  int gravity, double *tau, double *work);
/* M(q), n x n (symmetric, both triangles), leading dimension ld */
int mb_jtree_crba(const mb_jtree *T, const double *q, double *M, ptrdiff_t ld, double *work);
/* dtau (n): the directional derivative of RNEA(q, q', q'') (with gravity) along
 * (dq, dqd) (either NULL: zero) at the point of the last mb_jtree_rnea call on this work
 * array (its stored velocities, accelerations and forces); tangents in work + 80 n
 * (18 n doubles) */
int mb_jtree_rnea_tangent(const mb_jtree *T, const double *q, const double *qd,
                          const double *dq, const double *dqd, double *dtau, double *work);
/* The exact derivatives of the forward dynamics x'' = ABA(q, q', tau(t, q')), tau the
 * joints' inputs minus their dampers (mb_jtree_input) plus tau_extra (n, or NULL):
 * Aq = dx''/dq and Av = dx''/dq' (n x n each, column-major, leading dimension ld), by
 * differentiating RNEA in forward mode, one O(n) tangent pass a column, and
 * M^-1 by the Cholesky factor of CRBA's M:
 *     Aq = -M^-1 dRNEA/dq,  Av = -M^-1 (dRNEA/dq' + diag(damping)),
 * RNEA taken at (q, q', x''); qdd (n) is x'' (from mb_jtree_aba: the caller's, or NULL to
 * compute it).  work: mb_jtree_deriv_work_size(n) doubles. */
int mb_jtree_aba_derivatives(const mb_jtree *T, double t, const double *q, const double *qd,
                             const double *tau_extra, const double *qdd, double *Aq,
                             double *Av, ptrdiff_t ld, double *work);
/* the joints' inputs at t minus their dampers' forces at q': Q (n) */
int mb_jtree_input(const mb_jtree *T, double t, const double *qd, double *Q);
/* per body MB_JT_FK doubles in out: the link frame's rotation A (9, row-major, link to
 * global) and origin o (3, m); with qd its angular velocity w (3, rad/s) and origin
 * velocity v (3, m/s), with qdd (and qd) its angular acceleration (3, rad/s^2) and origin
 * acceleration (3, m/s^2), all in the global frame (entries left alone when qd / qdd is
 * NULL) */
#define MB_JT_FK 24
int mb_jtree_fk(const mb_jtree *T, const double *q, const double *qd, const double *qdd,
                double *out, double *work);

#endif
