/* The joint-coordinate formulation (formulation.h): y = (x, x'), x the joint coordinates
 * of a kinematic tree (joint_tree.h, given by the options: the mechanism's mb_mech is
 * that of its body coordinates), x'' by the articulated-body algorithm under the joints'
 * inputs and dampers (mb_jtree_input).  The Jacobian [0 I; x''_x x''_x'] of a fixed
 * base exact at every n, by mb_jtree_d_derivatives (joint_tree_deriv.c: RNEA tangents a
 * column over the column's subtree and path, M^-1 by the ABA's factorization, O(n^2)
 * in all; tests/benchmarks/bench_joint_urdf_jac.py: a chain of rods, exact /
 * central differences of the ABA 0.2 at n = 10, 0.15 at 100 and 300); a floating base
 * by central differences (4 n ABA calls); FJ_DIFFERENCES 1 at compile time takes the
 * differences at every n.  The mechanism's body coordinates come from
 * forward kinematics: y0 from (q0, q0') by the inverse map (the relative rotation about
 * each revolute axis, the displacement along each prismatic one), and the events and
 * outputs see (q, q', q'') of the bodies (centre of mass, Euler parameters with e0 >= 0
 * and their rates).  The joint formulation integrates no multipliers: an output's lambda
 * is the body-coordinate mechanism's at its (q, q') (lambda_of_output).  atol over
 * (q, q') of the mechanism becomes atol over (x, x') as the smallest entry over q and
 * over q' respectively.
 *
 * A planar mechanism (nq = 3 n: (x, y, theta) of each body's centre of mass; the tree from
 * mbint.mbs.joint.PlanarJointTree, revolute joints about z, prismatic ones along an axis
 * in the plane, joint frames rotated about z, zero gravity, inputs and dampers): x'' by
 * a planar articulated-body algorithm in world coordinates (planar_accel; 3-vectors, the
 * engine's 3-D tables read for the geometry) with the mechanism's own forces Q (mb_mech
 * forces: gravity, force elements, Python forces) at the body coordinates of its forward
 * kinematics as external body forces, so that every planar force element acts as in
 * the body-coordinate formulations; events and outputs by the 3-D mb_jtree_fk; theta the sum
 * of the joint frames' angles and the revolute coordinates along the body's path
 * (continuous, as the body coordinates are); the Jacobian exact (planar_jac:
 * joint_planar.c, forward-mode derivatives of the inverse dynamics, M^-1 by the ABA).
 *
 * A SpatialModel's tree (T->mech_forces; mbint.mbs.joint.SpatialJointTree: revolute,
 * prismatic and ball joints from the ground, link frames with the bodies' axes): z the
 * joint coordinates (1 a revolute or prismatic joint, the 4 Euler parameters of a ball
 * joint's relative rotation), x'' by the world-coordinate ABA of joint_spatial.c under
 * the mechanism's own forces at the bodies' coordinates of its forward kinematics
 * (without their quadratic-velocity rows), the Jacobian exact (fs_jac:
 * joint_spatial_deriv.c, a complex-step tangent pass a column through the same
 * kinematics and ABA, the forces' tangent from forces_q and forces_qd). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "formulation.h"
#include "index1.h"
#include "joint_planar.h"
#include "joint_spatial.h"
#include "joint_spatial_deriv.h"
#include "joint_tree.h"
#include "joint_tree_deriv.h"
#include "mbs_common.h"
#include "status.h"

/* y = (z, z'): z = x (n joint coordinates, a fixed base) or, with a floating base (body 0
 * of type MB_JT_FREE), z = (r, p, x_1 .. x_{n-1}): the root body's centre of mass and
 * Euler parameters (its body coordinates, p'' = E(p)^T alpha / 2 - |p'|^2 p), then the
 * joints; m entries */
typedef struct form_joint {
    const mb_jtree *T;
    const int *body;
    ptrdiff_t n, m;
    int free;              /* a floating base */
    double *work;          /* mb_jtree_d_work_size(n) */
    double *u, *qe, *qde, *qdde;  /* n each: the inputs, the engine's q, q', q'' */
    double *a, *acc;       /* m each: scratch accelerations */
    double *yp;            /* 2 m */
    double *fk;            /* MB_JT_FK n */
    double *atol;          /* 2 m */
    mb_jtree_root root;    /* the floating base's state of the last unpack */
    double a0[6];          /* its acceleration of the last accel */
    /* a planar mechanism (3 body coordinates (x, y, theta) a body, nq = 3 n): the forces
     * of its mb_mech at the bodies' coordinates, as generalized joint forces */
    int planar;
    const mb_mech *mech;
    double *off;           /* n: the joint frame's rotation about z (rad) */
    double *th;            /* n: the bodies' theta */
    double *Q, *qb, *qdb;  /* nq each: Q and the bodies' q, q' */
    double *pw;            /* 32 n: the planar ABA's per-body values (planar_kin) */
    double *jw;            /* mb_jplanar_work_size(n): the exact Jacobian's (joint_planar.c) */
    /* the multipliers of an output: the body-coordinate mechanism's index-1 saddle-point
     * system at the output's (q, q') (lambda_of_output), built at the first output */
    mb_index1 i1;
    int i1_state;          /* 0: not built, 1: built, -1: cannot be built */
    double *ob;            /* 3 nq: the output's q, q', q'' when the caller wants none */
    /* a SpatialModel's tree (T->mech_forces): joint_spatial.h, with mech, Q, qb, qdb */
    int spatial;
    mb_jspatial js;
    ptrdiff_t *zoff;       /* n + 1 */
} form_joint;

static int fj_open(mb_formulation *F, const mb_form_options *o)
{
    if (!o->tree || !o->tree_body)
        return MB_FAIL(F, MB_ERR_ILL_INPUT, "formulation 'joint' needs the model's kinematic "
                       "tree (a UrdfModel).");
    if (o->project)
        return MB_FAIL(F, MB_ERR_ILL_INPUT, "project: the joint formulation has no constraints "
                       "to project onto; leave project=False.");
    const mb_jtree *T = o->tree;
    ptrdiff_t n = T->n;
    if (mb_jtree_check(T, F->msg, sizeof F->msg) != MB_OK)
        return MB_ERR_ILL_INPUT;
    int planar = n > 0 && 3 * n == F->nq && !T->mech_forces;
    if (n == 0 || (7 * n != F->nq && !planar))
        return MB_FAIL(F, MB_ERR_ILL_INPUT, "formulation 'joint': the tree has %td bodies and the "
                       "mechanism %td coordinates (7 a body, or 3 for a planar one).", n, F->nq);
    for (ptrdiff_t i = 0; planar && i < n; i++)
        if (T->type[i] == MB_JT_FREE)
            return MB_FAIL(F, MB_ERR_ILL_INPUT, "formulation 'joint': a planar tree has no "
                           "floating base.");
    for (ptrdiff_t i = 0; i < n; i++)
        if (o->tree_body[i] < 0 || o->tree_body[i] >= n)
            return MB_FAIL(F, MB_ERR_ILL_INPUT, "formulation 'joint': tree body %td is body %d "
                           "of a mechanism of %td.", i, o->tree_body[i], n);
    form_joint *x = calloc(1, sizeof *x);
    if (!x)
        return MB_FAIL(F, MB_ERR_MEM, "formulation 'joint': out of memory.");
    F->impl = x;
    x->T = T, x->body = o->tree_body, x->n = n;
    x->free = T->type[0] == MB_JT_FREE;
    ptrdiff_t m = x->m = n + (x->free ? 6 : 0);
    if (T->mech_forces) {
        if (x->free)
            return MB_FAIL(F, MB_ERR_ILL_INPUT, "formulation 'joint': a SpatialModel's tree has "
                           "no floating base.");
        if (!(x->zoff = malloc((size_t)(n + 1) * sizeof(ptrdiff_t))))
            return MB_FAIL(F, MB_ERR_MEM, "formulation 'joint': out of memory.");
        x->spatial = 1, x->mech = F->mech;
        m = x->m = mb_jspatial_offsets(T, x->zoff);
    }
    ptrdiff_t np = planar ? 34 * n + 3 * F->nq + mb_jplanar_work_size(n)
                 : x->spatial ? mb_jspatial_work_size(n) + 3 * F->nq +
                                mb_jsderiv_work_size(n, F->nq, m) : 0;  /* the scratch */
    x->work = malloc((size_t)(mb_jtree_d_work_size(n) + (4 + MB_JT_FK) * n + 6 * m + np) *
                     sizeof(double));
    if (!x->work)
        return MB_FAIL(F, MB_ERR_MEM, "formulation 'joint': out of memory.");
    x->u = x->work + mb_jtree_d_work_size(n);
    x->qe = x->u + n;
    x->qde = x->qe + n;
    x->qdde = x->qde + n;
    x->a = x->qdde + n;
    x->acc = x->a + m;
    x->yp = x->acc + m;
    x->atol = x->yp + 2 * m;
    x->fk = x->atol + 2 * m;
    if (planar) {
        x->planar = 1, x->mech = F->mech;
        x->off = x->fk + MB_JT_FK * n;
        x->th = x->off + n;
        x->pw = x->th + n;
        x->Q = x->pw + 32 * n;
        x->qb = x->Q + F->nq;
        x->qdb = x->qb + F->nq;
        x->jw = x->qdb + F->nq;
        for (ptrdiff_t i = 0; i < n; i++)  /* R_i = Rz(off_i) (row-major) */
            x->off[i] = atan2(T->frame[12 * i + 3], T->frame[12 * i]);
    }
    if (x->spatial) {
        x->Q = x->fk + MB_JT_FK * n;
        x->qb = x->Q + F->nq;
        x->qdb = x->qb + F->nq;
        x->js = (mb_jspatial){T, x->body, x->zoff, x->qdb + F->nq};
        x->jw = x->js.work + mb_jspatial_work_size(n);  /* mb_jsderiv_work_size */
    }
    F->n = 2 * m;
    return MB_OK;
}

static void fj_close(mb_formulation *F)
{
    form_joint *x = F->impl;
    if (x) {
        free(x->work);
        free(x->ob);
        free(x->zoff);
        if (x->i1_state == 1)
            mb_index1_free(&x->i1);
    }
    free(x);
}

static void cross(const double *a, const double *b, double *c);

/* A (row-major) of the unit quaternion p / |p| into A, and E(p / |p|) (3 x 4, row-major) */
static void rot_of_quat(const double *p, double *A, double *E)
{
    double s = 1.0 / sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
    double e0 = s * p[0], e1 = s * p[1], e2 = s * p[2], e3 = s * p[3];
    double Av[9] = {e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3),
                    2 * (e1 * e3 + e0 * e2), 2 * (e1 * e2 + e0 * e3),
                    e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3, 2 * (e2 * e3 - e0 * e1),
                    2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1),
                    e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3};
    double Ev[12] = {-e1, e0, -e3, e2, -e2, e3, e0, -e1, -e3, -e2, e1, e0};
    memcpy(A, Av, sizeof Av);
    if (E)
        memcpy(E, Ev, sizeof Ev);
}

/* the engine's q, q' (and the floating base's state) of (z, z') (zd may be NULL) */
static void unpack(form_joint *x, const double *z, const double *zd)
{
    ptrdiff_t n = x->n;
    if (!x->free) {
        memcpy(x->qe, z, (size_t)n * sizeof(double));
        if (zd)
            memcpy(x->qde, zd, (size_t)n * sizeof(double));
        return;
    }
    x->qe[0] = x->qde[0] = 0.0;
    memcpy(x->qe + 1, z + 7, (size_t)(n - 1) * sizeof(double));
    if (zd)
        memcpy(x->qde + 1, zd + 7, (size_t)(n - 1) * sizeof(double));
    mb_jtree_root *R = &x->root;
    double E[12], s[3], w[3], ws[3];
    const double *c = x->T->inertia + 1;
    rot_of_quat(z + 3, R->A, E);
    for (int k = 0; k < 3; k++) s[k] = R->A[3 * k] * c[0] + R->A[3 * k + 1] * c[1] + R->A[3 * k + 2] * c[2];
    for (int k = 0; k < 3; k++) R->o[k] = z[k] - s[k];
    if (!zd)
        return;
    const double *pd = zd + 3;
    for (int k = 0; k < 3; k++)  /* w = 2 E p' */
        w[k] = 2 * (E[4 * k] * pd[0] + E[4 * k + 1] * pd[1] + E[4 * k + 2] * pd[2] + E[4 * k + 3] * pd[3]);
    cross(w, s, ws);
    for (int k = 0; k < 3; k++) {  /* link coordinates: A^T w, A^T (r' - w x s) */
        R->v[k] = R->A[k] * w[0] + R->A[3 + k] * w[1] + R->A[6 + k] * w[2];
        R->v[3 + k] = R->A[k] * (zd[0] - ws[0]) + R->A[3 + k] * (zd[1] - ws[1]) +
                      R->A[6 + k] * (zd[2] - ws[2]);
    }
}

/* ---- planar trees: body coordinates (x, y, theta) of the centres of mass, 3 a body ----
 * Every joint is a revolute about z or a prismatic along an axis in the plane, and every
 * joint frame a rotation about z by off_i, so a body's theta is the sum of off and of the
 * revolute coordinates along its path (continuous in time, not wrapped). */

/* body coordinates (q, q', q'' of the mechanism; qd, qdd may be NULL) from the forward
 * kinematics in x->fk (velocities with qd, accelerations with qdd) at joint state z */
static void planar_bodies(form_joint *x, const double *z, double *q, double *qd, double *qdd)
{
    const mb_jtree *T = x->T;
    for (ptrdiff_t i = 0; i < x->n; i++) {
        int p = T->parent[i], b = x->body[i];
        x->th[i] = (p >= 0 ? x->th[p] : 0.0) + x->off[i] +
                   (T->type[i] == MB_JT_REVOLUTE ? z[i] : 0.0);
        const double *f = x->fk + MB_JT_FK * i, *A = f, *c = T->inertia + 10 * i + 1;
        double s[2] = {A[0] * c[0] + A[1] * c[1], A[3] * c[0] + A[4] * c[1]};
        q[3 * b] = f[9] + s[0], q[3 * b + 1] = f[10] + s[1], q[3 * b + 2] = x->th[i];
        if (!qd)
            continue;
        double w = f[14];  /* omega x s = w (-s_y, s_x) */
        qd[3 * b] = f[15] - w * s[1], qd[3 * b + 1] = f[16] + w * s[0], qd[3 * b + 2] = w;
        if (!qdd)
            continue;
        double al = f[20];  /* a + alpha x s - w^2 s */
        qdd[3 * b] = f[21] - al * s[1] - w * w * s[0];
        qdd[3 * b + 1] = f[22] + al * s[0] - w * w * s[1];
        qdd[3 * b + 2] = al;
    }
}

/* the planar articulated-body algorithm in world coordinates (Featherstone 2008, ch. 7,
 * reduced to the plane): motions (omega, v_x, v_y), v the velocity of the body point at
 * the global origin; forces (moment about the origin, f_x, f_y).  Per body PW doubles of
 * x->pw: theta, link origin o (2), centre of mass r (2), S (3), v (3), c then a (3),
 * I^A (9, row-major), p^A (3), U (3), D, u. */
enum { PW = 32, W_TH = 0, W_O = 1, W_R = 3, W_S = 5, W_V = 8, W_C = 11, W_IA = 14, W_PA = 23,
       W_U = 26, W_D = 29, W_UU = 30 };

/* pass 1: positions, velocities, the bias c = v x (S x'), and the bodies' (q, q') */
static void planar_kin(form_joint *x, const double *z, const double *zd)
{
    const mb_jtree *T = x->T;
    for (ptrdiff_t i = 0; i < x->n; i++) {
        double *w = x->pw + PW * i;
        int p = T->parent[i], b = x->body[i];
        const double *wp = p >= 0 ? x->pw + PW * p : NULL, *t = T->frame + 12 * i + 9,
                     *k = T->axis + 3 * i, *c = T->inertia + 10 * i + 1;
        double thp = wp ? wp[W_TH] : 0.0, cp = cos(thp), sp = sin(thp);
        double o[2] = {(wp ? wp[W_O] : 0.0) + cp * t[0] - sp * t[1],
                       (wp ? wp[W_O + 1] : 0.0) + sp * t[0] + cp * t[1]};
        double th = thp + x->off[i], *S = w + W_S;
        if (T->type[i] == MB_JT_REVOLUTE) {  /* about z at o */
            th += z[i];
            S[0] = 1.0, S[1] = o[1], S[2] = -o[0];
        } else {  /* along u = A(theta_p + off) k */
            double ca = cos(th), sa = sin(th);
            S[0] = 0.0, S[1] = ca * k[0] - sa * k[1], S[2] = sa * k[0] + ca * k[1];
            o[0] += z[i] * S[1], o[1] += z[i] * S[2];
        }
        double ct = cos(th), st = sin(th);
        w[W_TH] = th, w[W_O] = o[0], w[W_O + 1] = o[1];
        double *r = w + W_R, *v = w + W_V, *cb = w + W_C;
        r[0] = o[0] + ct * c[0] - st * c[1], r[1] = o[1] + st * c[0] + ct * c[1];
        double s[3] = {S[0] * zd[i], S[1] * zd[i], S[2] * zd[i]};
        for (int e = 0; e < 3; e++) v[e] = (wp ? wp[W_V + e] : 0.0) + s[e];
        cb[0] = 0.0, cb[1] = -v[0] * s[2] + s[0] * v[2], cb[2] = v[0] * s[1] - s[0] * v[1];
        double *q = x->qb + 3 * b, *qd = x->qdb + 3 * b;
        q[0] = r[0], q[1] = r[1], q[2] = th;
        qd[0] = v[1] - v[0] * r[1], qd[1] = v[2] + v[0] * r[0], qd[2] = v[0];
    }
}

/* x'' of a planar tree: the mechanism's forces Q (gravity, force elements, Python forces:
 * mb_mech forces) at the bodies' (q, q') as external forces of the ABA (the tree's own
 * gravity, inputs and dampers are zero) */
static int planar_accel(form_joint *x, double t, const double *z, const double *zd,
                        double *zdd)
{
    const mb_jtree *T = x->T;
    ptrdiff_t n = x->n;
    planar_kin(x, z, zd);
    int rc = x->mech->forces(t, x->qb, x->qdb, x->Q, x->mech->ctx);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++) {  /* I (world, about the origin) and p = v x* I v - f */
        double *w = x->pw + PW * i, *I = w + W_IA, *v = w + W_V, *r = w + W_R;
        const double *in = T->inertia + 10 * i, *Q = x->Q + 3 * x->body[i];
        double m = in[0], J = in[6];
        double Iv[9] = {J + m * (r[0] * r[0] + r[1] * r[1]), -m * r[1], m * r[0],
                        -m * r[1], m, 0.0, m * r[0], 0.0, m};
        memcpy(I, Iv, sizeof Iv);
        double h[3];
        for (int e = 0; e < 3; e++) h[e] = I[3 * e] * v[0] + I[3 * e + 1] * v[1] + I[3 * e + 2] * v[2];
        w[W_PA] = v[1] * h[2] - v[2] * h[1] - (Q[2] + r[0] * Q[1] - r[1] * Q[0]);
        w[W_PA + 1] = -v[0] * h[2] - Q[0];
        w[W_PA + 2] = v[0] * h[1] - Q[1];
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {  /* articulated inertias and biases */
        double *w = x->pw + PW * i, *I = w + W_IA, *S = w + W_S, *U = w + W_U, *pA = w + W_PA;
        for (int e = 0; e < 3; e++) U[e] = I[3 * e] * S[0] + I[3 * e + 1] * S[1] + I[3 * e + 2] * S[2];
        double D = S[0] * U[0] + S[1] * U[1] + S[2] * U[2];
        if (!(D > 0.0))
            return MB_RECOVERABLE;
        w[W_D] = D;
        w[W_UU] = -(S[0] * pA[0] + S[1] * pA[1] + S[2] * pA[2]);
        int p = T->parent[i];
        if (p < 0)
            continue;
        double *wp = x->pw + PW * p, Ia[9], *cb = w + W_C;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) Ia[3 * r + c] = I[3 * r + c] - U[r] * U[c] / D;
        for (int r = 0; r < 3; r++) {
            wp[W_PA + r] += pA[r] + Ia[3 * r] * cb[0] + Ia[3 * r + 1] * cb[1] +
                            Ia[3 * r + 2] * cb[2] + U[r] * w[W_UU] / D;
            for (int c = 0; c < 3; c++) wp[W_IA + 3 * r + c] += Ia[3 * r + c];
        }
    }
    for (ptrdiff_t i = 0; i < n; i++) {  /* accelerations (a of the base: 0, gravity in Q) */
        double *w = x->pw + PW * i, *a = w + W_C, *U = w + W_U, *S = w + W_S;
        int p = T->parent[i];
        for (int e = 0; p >= 0 && e < 3; e++) a[e] += x->pw[PW * p + W_C + e];
        double qdd = (w[W_UU] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2])) / w[W_D];
        for (int e = 0; e < 3; e++) a[e] += S[e] * qdd;
        zdd[i] = qdd;
        if (!isfinite(qdd))
            return MB_RECOVERABLE;
    }
    return MB_OK;
}

/* joint coordinates and rates of a planar body state (the inverse of planar_bodies on
 * consistent states): theta_C - theta_P - off (not wrapped), the slide along the axis */
static int planar_joints(form_joint *x, const double *q, const double *qd, double *xj,
                         double *xdj)
{
    const mb_jtree *T = x->T;
    for (ptrdiff_t i = 0; i < x->n; i++) {
        int p = T->parent[i], b = x->body[i], pb = p >= 0 ? x->body[p] : -1;
        const double *rc_ = q + 3 * b, *vc = qd + 3 * b, *c = T->inertia + 10 * i + 1;
        double rp[3] = {0, 0, 0}, vp[3] = {0, 0, 0};
        if (pb >= 0)
            memcpy(rp, q + 3 * pb, sizeof rp), memcpy(vp, qd + 3 * pb, sizeof vp);
        if (T->type[i] == MB_JT_REVOLUTE) {
            xj[i] = rc_[2] - rp[2] - x->off[i];
            xdj[i] = vc[2] - vp[2];
        } else {
            const double *t0 = T->frame + 12 * i + 9, *k = T->axis + 3 * i,
                         *cP = p >= 0 ? T->inertia + 10 * p + 1 : NULL;
            double t[2] = {t0[0] - (cP ? cP[0] : 0.0), t0[1] - (cP ? cP[1] : 0.0)};
            double cp = cos(rp[2]), sp = sin(rp[2]), cc = cos(rc_[2]), sc = sin(rc_[2]);
            double a = rp[2] + x->off[i], u[2] = {cos(a) * k[0] - sin(a) * k[1],
                                                   sin(a) * k[0] + cos(a) * k[1]};
            double sP[2] = {cp * t[0] - sp * t[1], sp * t[0] + cp * t[1]};     /* A_P t */
            double sC[2] = {-(cc * c[0] - sc * c[1]), -(sc * c[0] + cc * c[1])};  /* -A_C c */
            double D[2] = {rc_[0] + sC[0] - rp[0] - sP[0], rc_[1] + sC[1] - rp[1] - sP[1]};
            double Dd[2] = {vc[0] - vc[2] * sC[1] - vp[0] + vp[2] * sP[1],
                            vc[1] + vc[2] * sC[0] - vp[1] - vp[2] * sP[0]};
            xj[i] = u[0] * D[0] + u[1] * D[1];
            xdj[i] = u[0] * Dd[0] + u[1] * Dd[1] + vp[2] * (u[0] * D[1] - u[1] * D[0]);
        }
        if (!isfinite(xj[i]) || !isfinite(xdj[i]))
            return MB_ERR_NONFINITE;
    }
    return MB_OK;
}

/* x'' of a SpatialModel's tree: forward kinematics, the mechanism's forces at the
 * bodies' (q, q'), the ABA of joint_spatial.c */
static int spatial_accel(form_joint *x, double t, const double *z, const double *zd,
                         double *zdd)
{
    int rc = mb_jspatial_kin(&x->js, z, zd, x->qb, x->qdb);
    if (rc == MB_OK)
        rc = x->mech->forces(t, x->qb, x->qdb, x->Q, x->mech->ctx);
    if (rc == MB_OK)
        rc = mb_jspatial_accel(&x->js, x->qb, x->qdb, x->Q, z, zd, zdd);
    return rc == MB_ERR_NONFINITE ? MB_RECOVERABLE : rc;
}

static int accel(form_joint *x, double t, const double *z, const double *zd, double *zdd)
{
    ptrdiff_t n = x->n;
    if (x->planar)
        return planar_accel(x, t, z, zd, zdd);
    if (x->spatial)
        return spatial_accel(x, t, z, zd, zdd);
    if (!x->free) {
        mb_jtree_input(x->T, t, zd, x->u);
        int rc = mb_jtree_aba(x->T, z, zd, x->u, zdd, x->work);
        return rc == MB_ERR_NONFINITE ? MB_RECOVERABLE : rc;
    }
    unpack(x, z, zd);
    mb_jtree_input(x->T, t, x->qde, x->u);
    int rc = mb_jtree_aba_free(x->T, &x->root, x->qe, x->qde, x->u, x->a0, x->qdde, x->work);
    if (rc != MB_OK)
        return rc == MB_ERR_NONFINITE ? MB_RECOVERABLE : rc;
    memcpy(zdd + 7, x->qdde + 1, (size_t)(n - 1) * sizeof(double));
    /* the root: alpha and the origin's acceleration (global), then the centre of mass's
     * and p'' */
    const mb_jtree_root *R = &x->root;
    const double *A = R->A, *c = x->T->inertia + 1, *pd = zd + 3, *p = z + 3;
    double E[12], Ad[9], s[3], wb[3], vb[3], ab[3], al[3], ao[3], w[3], t1[3], t2[3], t3[3];
    rot_of_quat(p, Ad, E);
    for (int k = 0; k < 3; k++) s[k] = A[3 * k] * c[0] + A[3 * k + 1] * c[1] + A[3 * k + 2] * c[2];
    memcpy(wb, R->v, sizeof wb);
    memcpy(vb, R->v + 3, sizeof vb);
    cross(wb, vb, t1);
    for (int k = 0; k < 3; k++) ab[k] = x->a0[3 + k] + t1[k];
    for (int k = 0; k < 3; k++) {
        al[k] = A[3 * k] * x->a0[0] + A[3 * k + 1] * x->a0[1] + A[3 * k + 2] * x->a0[2];
        ao[k] = A[3 * k] * ab[0] + A[3 * k + 1] * ab[1] + A[3 * k + 2] * ab[2];
        w[k] = A[3 * k] * wb[0] + A[3 * k + 1] * wb[1] + A[3 * k + 2] * wb[2];
    }
    cross(al, s, t1);
    cross(w, s, t2);
    cross(w, t2, t3);
    for (int k = 0; k < 3; k++) zdd[k] = ao[k] + t1[k] + t3[k];
    double pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
    for (int k = 0; k < 4; k++)
        zdd[3 + k] = 0.5 * (E[k] * al[0] + E[4 + k] * al[1] + E[8 + k] * al[2]) - pp * p[k];
    return MB_OK;
}

static int fj_rhs(double t, const double *y, double *yd, void *ctx)
{
    form_joint *x = ctx;
    memcpy(yd, y + x->m, (size_t)x->m * sizeof(double));
    return accel(x, t, y, y + x->m, yd + x->m);
}

static int fj_acc(double t, const double *q, const double *qd, double *qdd, void *ctx)
{
    return accel(ctx, t, q, qd, qdd);
}

static int jac_by_differences(form_joint *x, double t, const double *y, double *J, ptrdiff_t ld,
                              int central);

/* [0 I; a_x a_x'] of a planar tree, exact (joint_planar.c): x'' and the bodies' (q, q', Q)
 * at y by planar_accel, then the derivatives of the inverse dynamics */
static int planar_jac(form_joint *x, double t, const double *y, double *J, ptrdiff_t ld)
{
    ptrdiff_t n = x->n;
    int rc = planar_accel(x, t, y, y + n, x->a);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t j = 0; j < 2 * n; j++)
        for (ptrdiff_t i = 0; i < n; i++) J[j * ld + i] = (j == n + i) ? 1.0 : 0.0;
    mb_jplanar P = {x->T, x->body, x->off, x->mech, x->qb, x->qdb, x->Q};
    return mb_jplanar_jac(&P, t, y, y + n, x->a, J + n, J + n * ld + n, ld, x->jw);
}

#ifndef FJ_DIFFERENCES
#define FJ_DIFFERENCES 0
#endif

/* [0 I; a_x a_x'] of a URDF or planar tree: exact (mb_jtree_d_derivatives, O(n^2), for a
 * fixed base at every n; mb_jplanar_jac for planar forces with derivatives) or by
 * differences (a floating base, planar Python forces) */
static int fj_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    form_joint *x = ctx;
    if (!FJ_DIFFERENCES && !x->free && !x->planar) {
        ptrdiff_t n = x->n;
        for (ptrdiff_t j = 0; j < 2 * n; j++)
            for (ptrdiff_t i = 0; i < n; i++) J[j * ld + i] = (j == n + i) ? 1.0 : 0.0;
        int rc = mb_jtree_d_derivatives(x->T, t, y, y + n, NULL, NULL, J + n, J + n * ld + n,
                                        NULL, ld, x->work);
        return rc == MB_ERR_NONFINITE || rc == MB_ERR_LINALG ? MB_RECOVERABLE : rc;
    }
    if (!FJ_DIFFERENCES && x->planar && mb_jplanar_exact(x->mech))
        return planar_jac(x, t, y, J, ld);
    return jac_by_differences(x, t, y, J, ld, !x->planar);
}

/* [0 I; a_x a_x'] by differences of x'': forward ones for a planar tree (2 n + 1
 * evaluations of FK, the mechanism's forces and the ABA; relative error
 * ~ sqrt(DBL_EPSILON) |x''_y|, below what the implicit methods' Newton iterations and the
 * Rosenbrock stages feel at their tolerances), central ones otherwise (4 n evaluations,
 * step cbrt(DBL_EPSILON)) */
static int jac_by_differences(form_joint *x, double t, const double *y, double *J, ptrdiff_t ld,
                              int central)
{
    ptrdiff_t n = x->m;
    double *yp = x->yp, *ap = x->a, *acc = x->acc;
    const double h0 = central ? 6.0554544523933395e-06    /* cbrt(DBL_EPSILON) */
                              : 1.4901161193847656e-08;   /* sqrt(DBL_EPSILON) */
    int rc = central ? MB_OK : accel(x, t, y, y + n, ap);  /* forward: x''(y) in ap */
    if (rc != MB_OK)
        return rc;
    memcpy(yp, y, (size_t)(2 * n) * sizeof(double));
    for (ptrdiff_t j = 0; j < 2 * n; j++) {
        double *col = J + j * ld;
        for (ptrdiff_t i = 0; i < n; i++) col[i] = (j == n + i) ? 1.0 : 0.0;
        double h = h0 * fmax(1.0, fabs(y[j]));
        yp[j] = y[j] + h;
        if (!central)
            h = yp[j] - y[j];
        rc = accel(x, t, yp, yp + n, acc);
        if (central && rc == MB_OK) {  /* x''(y + h e_j) in ap, x''(y - h e_j) in acc */
            memcpy(ap, acc, (size_t)n * sizeof(double));
            yp[j] = y[j] - h;
            rc = accel(x, t, yp, yp + n, acc);
        }
        yp[j] = y[j];
        if (rc != MB_OK)
            return rc;
        for (ptrdiff_t i = 0; i < n; i++)
            col[n + i] = central ? (ap[i] - acc[i]) / (2 * h) : (acc[i] - ap[i]) / h;
    }
    return MB_OK;
}

/* the link frame of the mechanism's body b from its body coordinates: rotation A, origin o,
 * angular velocity w and origin velocity v (global); c the centre of mass in link axes */
static void link_of_body(const double *q, const double *qd, int b, const double *c, double *A,
                         double *o, double *w, double *v)
{
    const double *r = q + 7 * b, *rd = qd ? qd + 7 * b : NULL;
    double E[12], s[3], ws[3];
    rot_of_quat(r + 3, A, E);
    for (int k = 0; k < 3; k++) s[k] = A[3 * k] * c[0] + A[3 * k + 1] * c[1] + A[3 * k + 2] * c[2];
    for (int k = 0; k < 3; k++) o[k] = r[k] - s[k];
    if (!qd)
        return;
    const double *pd = rd + 3;
    for (int k = 0; k < 3; k++)  /* w = 2 E(p) p' */
        w[k] = 2 * (E[4 * k] * pd[0] + E[4 * k + 1] * pd[1] + E[4 * k + 2] * pd[2] +
                    E[4 * k + 3] * pd[3]);
    cross(w, s, ws);
    for (int k = 0; k < 3; k++) v[k] = rd[k] - ws[k];
}

static void cross(const double *a, const double *b, double *c)
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    c[0] = x, c[1] = y, c[2] = z;
}

/* joint coordinates and rates of a body state (the inverse of the forward kinematics on
 * consistent states) */
static int joint_of_body(form_joint *x, const double *q, const double *qd, double *xj,
                         double *xdj)
{
    const mb_jtree *T = x->T;
    ptrdiff_t off = x->free ? 6 : 0;
    if (x->planar)
        return planar_joints(x, q, qd, xj, xdj);
    if (x->spatial)
        return mb_jspatial_joints(&x->js, q, qd, xj, xdj);
    if (x->free) {  /* the floating base: its body coordinates */
        memcpy(xj, q + 7 * x->body[0], 7 * sizeof(double));
        if (qd)
            memcpy(xdj, qd + 7 * x->body[0], 7 * sizeof(double));
    }
    for (ptrdiff_t i = x->free ? 1 : 0; i < x->n; i++) {
        ptrdiff_t kk = off + i;
        int p = T->parent[i];
        double Ap[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, op[3] = {0, 0, 0}, wp[3] = {0, 0, 0},
               vp[3] = {0, 0, 0}, Ac[9], oc[3], wc[3], vc[3];
        if (p >= 0)
            link_of_body(q, qd, x->body[p], T->inertia + 10 * p + 1, Ap, op, wp, vp);
        link_of_body(q, qd, x->body[i], T->inertia + 10 * i + 1, Ac, oc, wc, vc);
        const double *R = T->frame + 12 * i, *t = R + 9, *k = T->axis + 3 * i;
        double AJ[9], kg[3], sJ[3];  /* the joint frame's rotation, the axis, A_p t (global) */
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                AJ[3 * r + c] = Ap[3 * r] * R[c] + Ap[3 * r + 1] * R[3 + c] + Ap[3 * r + 2] * R[6 + c];
        for (int r = 0; r < 3; r++) {
            kg[r] = AJ[3 * r] * k[0] + AJ[3 * r + 1] * k[1] + AJ[3 * r + 2] * k[2];
            sJ[r] = Ap[3 * r] * t[0] + Ap[3 * r + 1] * t[1] + Ap[3 * r + 2] * t[2];
        }
        if (T->type[i] == MB_JT_REVOLUTE) {
            /* u perpendicular to k, w = k x u; C = AJ^T Ac = Rm(theta) */
            double u[3] = {0, 0, 0}, wv[3];
            int m = fabs(k[0]) < 0.6 ? 0 : (fabs(k[1]) < 0.6 ? 1 : 2);
            u[m] = 1.0;
            double d = u[0] * k[0] + u[1] * k[1] + u[2] * k[2];
            for (int e = 0; e < 3; e++) u[e] -= d * k[e];
            double nu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
            for (int e = 0; e < 3; e++) u[e] /= nu;
            cross(k, u, wv);
            double Cu[3], g[3];  /* C u = AJ^T (Ac u) */
            for (int r = 0; r < 3; r++) g[r] = Ac[3 * r] * u[0] + Ac[3 * r + 1] * u[1] + Ac[3 * r + 2] * u[2];
            for (int r = 0; r < 3; r++) Cu[r] = AJ[r] * g[0] + AJ[3 + r] * g[1] + AJ[6 + r] * g[2];
            xj[kk] = atan2(wv[0] * Cu[0] + wv[1] * Cu[1] + wv[2] * Cu[2],
                          u[0] * Cu[0] + u[1] * Cu[1] + u[2] * Cu[2]);
            if (qd)
                xdj[kk] = kg[0] * (wc[0] - wp[0]) + kg[1] * (wc[1] - wp[1]) + kg[2] * (wc[2] - wp[2]);
        } else {
            double D[3], wsJ[3], wk[3];
            for (int e = 0; e < 3; e++) D[e] = oc[e] - op[e] - sJ[e];
            xj[kk] = kg[0] * D[0] + kg[1] * D[1] + kg[2] * D[2];
            if (qd) {
                cross(wp, sJ, wsJ);
                cross(wp, kg, wk);
                double s = 0;
                for (int e = 0; e < 3; e++) s += kg[e] * (vc[e] - vp[e] - wsJ[e]) + wk[e] * D[e];
                xdj[kk] = s;
            }
        }
        if (!isfinite(xj[kk]) || (qd && !isfinite(xdj[kk])))
            return MB_ERR_NONFINITE;
    }
    return MB_OK;
}

/* body coordinates (q, q', q'' of the mechanism; any may be NULL) of a joint state (xdd
 * NULL: not wanted) by forward kinematics */
/* (z, z') -> the bodies' (q, q', q''); xdd: the engine's q'' (and x->a0 with a floating
 * base: both from the last accel at (z, z')), or NULL */
static int body_of_joint(form_joint *x, const double *z, const double *zd, const double *xdd,
                         double *q, double *qd, double *qdd)
{
    const mb_jtree *T = x->T;
    const double *xdj = zd;
    int rc;
    if (x->spatial) {  /* xdd: the last accel was at (z, z') */
        double *qo = q ? q : x->qb, *qdo = qd ? qd : x->qdb;
        if (!zd)
            return MB_ERR_ILL_INPUT;
        rc = mb_jspatial_kin(&x->js, z, zd, qo, qdo);
        if (rc == MB_OK && xdd && qdd)
            rc = mb_jspatial_body_acc(&x->js, qo, qdo, qdd);
        return rc;
    }
    if (x->planar) {
        rc = mb_jtree_fk(T, z, zd, zd ? xdd : NULL, x->fk, x->work);
        if (rc == MB_OK)
            planar_bodies(x, z, q ? q : x->qb, zd ? (qd ? qd : x->qdb) : NULL,
                          zd && xdd ? qdd : NULL);
        return rc;
    }
    if (x->free) {
        unpack(x, z, zd);
        xdj = zd ? x->qde : NULL;
        rc = mb_jtree_fk_free(T, &x->root, x->a0, x->qe, xdj, xdd, x->fk, x->work);
    } else {
        rc = mb_jtree_fk(T, z, zd, xdd, x->fk, x->work);
    }
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t i = 0; i < x->n; i++) {
        const double *f = x->fk + MB_JT_FK * i, *A = f, *o = f + 9, *w = f + 12, *v = f + 15,
                     *al = f + 18, *a = f + 21, *c = T->inertia + 10 * i + 1;
        int b = x->body[i];
        double s[3], p[4];
        for (int k = 0; k < 3; k++) s[k] = A[3 * k] * c[0] + A[3 * k + 1] * c[1] + A[3 * k + 2] * c[2];
        /* Euler parameters (e0 >= 0) of A: Shepperd's method, as quat_from_matrix */
        double tr = A[0] + A[4] + A[8], d[4] = {tr, A[0], A[4], A[8]};
        int m = 0;
        for (int k = 1; k < 4; k++)
            if (d[k] > d[m]) m = k;
        if (m == 0) {
            double e = sqrt(1 + tr) / 2;
            p[0] = e, p[1] = (A[7] - A[5]) / (4 * e), p[2] = (A[2] - A[6]) / (4 * e),
            p[3] = (A[3] - A[1]) / (4 * e);
        } else if (m == 1) {
            double e = sqrt(1 + 2 * A[0] - tr) / 2;
            p[0] = (A[7] - A[5]) / (4 * e), p[1] = e, p[2] = (A[1] + A[3]) / (4 * e),
            p[3] = (A[2] + A[6]) / (4 * e);
        } else if (m == 2) {
            double e = sqrt(1 + 2 * A[4] - tr) / 2;
            p[0] = (A[2] - A[6]) / (4 * e), p[1] = (A[1] + A[3]) / (4 * e), p[2] = e,
            p[3] = (A[5] + A[7]) / (4 * e);
        } else {
            double e = sqrt(1 + 2 * A[8] - tr) / 2;
            p[0] = (A[3] - A[1]) / (4 * e), p[1] = (A[2] + A[6]) / (4 * e),
            p[2] = (A[5] + A[7]) / (4 * e), p[3] = e;
        }
        if (p[0] < 0)
            for (int k = 0; k < 4; k++) p[k] = -p[k];
        if (q) {
            for (int k = 0; k < 3; k++) q[7 * b + k] = o[k] + s[k];
            memcpy(q + 7 * b + 3, p, sizeof p);
        }
        if (!xdj)
            continue;
        /* E(p)^T y for y (3) */
        double E[12] = {-p[1], p[0], -p[3], p[2], -p[2], p[3], p[0], -p[1], -p[3], -p[2], p[1], p[0]};
        double ws[3], pd[4];
        cross(w, s, ws);
        for (int k = 0; k < 4; k++) pd[k] = 0.5 * (E[k] * w[0] + E[4 + k] * w[1] + E[8 + k] * w[2]);
        if (qd) {
            for (int k = 0; k < 3; k++) qd[7 * b + k] = v[k] + ws[k];
            memcpy(qd + 7 * b + 3, pd, sizeof pd);
        }
        if (!xdd || !qdd)
            continue;
        double as[3], wws[3], pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
        cross(al, s, as);
        cross(w, ws, wws);
        for (int k = 0; k < 3; k++) qdd[7 * b + k] = a[k] + as[k] + wws[k];
        for (int k = 0; k < 4; k++)
            qdd[7 * b + 3 + k] = 0.5 * (E[k] * al[0] + E[4 + k] * al[1] + E[8 + k] * al[2]) - pp * p[k];
    }
    return MB_OK;
}

static int fj_initial(mb_formulation *F, double t0, const double *q0, const double *qd0,
                      const double *atol, double *y0, const double **atol_y)
{
    form_joint *x = F->impl;
    ptrdiff_t n = x->m, nq = F->nq;
    int rc = joint_of_body(x, q0, qd0, y0, y0 + n);
    if (rc != MB_OK)
        return MB_FAIL(F, rc, "the joint coordinates of the initial body state are not finite.");
    double aq = INFINITY, av = INFINITY;
    for (ptrdiff_t k = 0; k < nq; k++) aq = fmin(aq, atol[k]), av = fmin(av, atol[nq + k]);
    for (ptrdiff_t i = 0; i < n; i++) x->atol[i] = aq, x->atol[n + i] = av;
    *atol_y = x->atol;
    (void)t0;
    return MB_OK;
}

/* a SpatialModel's tree: exact (joint_spatial_deriv.c: x'' and the bodies' (q, q', Q) at
 * y by spatial_accel, then one complex-step tangent pass a column); forward differences
 * of x'' (2 m + 1 evaluations) with FJ_DIFFERENCES */
static int fs_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    form_joint *x = ctx;
    if (FJ_DIFFERENCES)
        return jac_by_differences(x, t, y, J, ld, 0);
    ptrdiff_t m = x->m;
    int rc = spatial_accel(x, t, y, y + m, x->a);
    if (rc != MB_OK)
        return rc;
    for (ptrdiff_t j = 0; j < 2 * m; j++)
        for (ptrdiff_t i = 0; i < m; i++) J[j * ld + i] = (j == m + i) ? 1.0 : 0.0;
    mb_jsderiv D = {x->T, x->body, x->zoff, x->mech, x->qb, x->qdb, x->Q};
    return mb_jsderiv_jac(&D, t, y, y + m, J + m, J + m * ld + m, ld, x->jw);
}

static void fj_problem(mb_formulation *F, mb_problem *p)
{
    form_joint *x = F->impl;
    memset(p, 0, sizeof *p);
    p->n = 2 * x->m;
    p->rhs = fj_rhs;
    p->jac = x->spatial ? fs_jac : fj_jac;
    p->nq = x->m;
    p->acc = fj_acc;
    p->ctx = x;
}

static int fj_sundials(mb_formulation *F, const char *method, mb_form_ida *ida)
{
    (void)F; (void)method; (void)ida;
    return MB_OK;  /* an ODE, as the index-1 formulation */
}

static int fj_full(mb_formulation *F, double t, const double *y, double *q, double *qd)
{
    form_joint *x = F->impl;
    (void)t;
    return body_of_joint(x, y, y + x->m, NULL, q, qd, NULL);
}

/* lambda (nc) at the body coordinates (q, q') of an output: the joint formulation
 * integrates no multipliers, but the body-coordinate mechanism it presents has them, and
 * they follow from (q, q') alone through the index-1 saddle-point system (dense or
 * sparse, chosen as the index-1 formulation chooses): the reactions of the joints.  NaN
 * where that system cannot be built or solved (it then says nothing wrong about the run). */
static void lambda_of_output(mb_formulation *F, form_joint *x, double t, const double *q,
                             const double *qd, double *lam)
{
    if (x->i1_state == 0)  /* x->ob: fj_outputs */
        x->i1_state = mb_index1_init_ex(&x->i1, F->mech, 0.0, 0.0, -1) == MB_OK ? 1 : -1;
    if (x->i1_state == 1 && mb_index1_solve(&x->i1, t, q, qd, x->ob + 2 * F->nq, lam) == MB_OK)
        return;
    for (ptrdiff_t k = 0; k < F->nc; k++) lam[k] = NAN;
}

static int fj_outputs(mb_formulation *F, double t, const double *y, double *q, double *qd,
                      double *qdd, double *lam)
{
    form_joint *x = F->impl;
    ptrdiff_t m = x->m, nq = F->nq;
    double *a = x->acc;
    /* x'' (the ABA) only for the body accelerations: not for events, nor for the outputs of
     * mbint.simulate, whose q'' and lambda are solved on first use (simulate_py.c) */
    int rc = qdd ? accel(x, t, y, y + m, a) : MB_OK;
    int want_lam = lam && F->nc > 0;
    if (want_lam && !x->ob && !(x->ob = malloc(3 * (size_t)nq * sizeof(double))))
        return MB_FAIL(F, MB_ERR_MEM, "joint: no memory for the outputs' multipliers.");
    double *qo = q ? q : want_lam ? x->ob : NULL, *qdo = qd ? qd : want_lam ? x->ob + nq : NULL;
    if (rc == MB_OK)
        rc = body_of_joint(x, y, y + m, !qdd ? NULL : x->free ? x->qdde : a, qo, qdo, qdd);
    if (want_lam) {
        if (rc == MB_OK)
            lambda_of_output(F, x, t, qo, qdo, lam);
        else
            for (ptrdiff_t k = 0; k < F->nc; k++) lam[k] = NAN;
    }
    return rc;
}

int mb_form_joint_changed(mb_formulation *F)
{
    const form_joint *x = F->impl;
    return x && (x->planar || x->spatial) ? MB_OK : MB_ERR_NOT_SUPPORTED;
}

const mb_form_ops mb_form_joint = {
    "joint", fj_open, fj_close, fj_initial, fj_problem, fj_sundials, fj_full, fj_outputs, NULL,
};
