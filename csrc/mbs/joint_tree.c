/* The dynamics of a kinematic tree in joint coordinates (joint_tree.h): the
 * articulated-body algorithm, the recursive Newton-Euler algorithm and the
 * composite-rigid-body algorithm of Featherstone (2008), Tables 5.1, 6.2 and 7.1, with
 * spatial vectors (angular; linear) in link coordinates.
 *
 * X_i maps motion vectors from the parent's link coordinates to body i's:
 *     X_i = [E 0; -E r~ E],  E = (R_i Rm(q_i))^T,  r = t_i + R_i tm(q_i)
 * (r: body i's origin in the parent's coordinates); forces go back by X_i^T.  The joint's
 * motion subspace S_i is (axis; 0) (revolute) or (0; axis) (prismatic): the axis is the
 * same in the joint frame and in the child's link frame. */
#include <math.h>
#include <string.h>
#include <stdio.h>
#include "joint_tree.h"
#include "mat3.h"
#include "status.h"

/* the per-body slots of the work array */
enum {
    W_E = 0, W_R = 9, W_V = 12, W_C = 18, W_A = 24, W_IA = 30, W_PA = 66, W_U = 72, W_D = 78,
    W_UU = 79
};
#define BODY(work, i) ((work) + (ptrdiff_t)(i) * MB_JT_PER_BODY)

static double dot6(const double *a, const double *b)
{
    return dot3(a, b) + dot3(a + 3, b + 3);
}

/* E and r of body i at q_i (the joint transform), and the 6 x 6 X_i (row-major) */
static void joint_transform(const mb_jtree *T, ptrdiff_t i, double qi, double *b)
{
    const double *R = T->frame + 12 * i, *t = R + 9, *k = T->axis + 3 * i;
    double *E = b + W_E, *r = b + W_R, C[9];
    if (T->type[i] == MB_JT_REVOLUTE) {  /* C = R Rm, Rm = I + s K + (1 - c) K^2 */
        double s = sin(qi), c1 = 1.0 - cos(qi), Rm[9];
        double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
        for (int a = 0; a < 3; a++)
            for (int e = 0; e < 3; e++) {
                double kk = k[a] * k[e] - (a == e ? 1.0 : 0.0);  /* (K^2)_ae */
                Rm[3 * a + e] = (a == e ? 1.0 : 0.0) + s * K[3 * a + e] + c1 * kk;
            }
        for (int a = 0; a < 3; a++)
            for (int e = 0; e < 3; e++)
                C[3 * a + e] = R[3 * a] * Rm[e] + R[3 * a + 1] * Rm[3 + e] + R[3 * a + 2] * Rm[6 + e];
        r[0] = t[0], r[1] = t[1], r[2] = t[2];
    } else {
        memcpy(C, R, sizeof C);
        double d[3] = {qi * k[0], qi * k[1], qi * k[2]};
        mv3(R, d, r);
        r[0] += t[0], r[1] += t[1], r[2] += t[2];
    }
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++)
            E[3 * a + e] = C[3 * e + a];
}

/* y = X_i m (parent motion to child) */
static void xmotion(const double *b, const double *m, double *y)
{
    const double *E = b + W_E, *r = b + W_R;
    double w[3];
    cross3(r, m, w);  /* r x omega */
    double d[3] = {m[3] - w[0], m[4] - w[1], m[5] - w[2]};
    mv3(E, m, y);
    mv3(E, d, y + 3);
}

/* y += X_i^T f (child force to parent) */
static void xforce_add(const double *b, const double *f, double *y)
{
    const double *E = b + W_E, *r = b + W_R;
    double fl[3], n[3], rf[3];
    mtv3(E, f + 3, fl);
    mtv3(E, f, n);
    cross3(r, fl, rf);
    for (int a = 0; a < 3; a++) {
        y[a] += n[a] + rf[a];
        y[a + 3] += fl[a];
    }
}

/* y = v x m (motion cross product) */
static void crm(const double *v, const double *m, double *y)
{
    double a[3], b[3], c[3];
    cross3(v, m, a);
    cross3(v, m + 3, b);
    cross3(v + 3, m, c);
    y[0] = a[0], y[1] = a[1], y[2] = a[2];
    y[3] = b[0] + c[0], y[4] = b[1] + c[1], y[5] = b[2] + c[2];
}

/* y = v x* f (force cross product) */
static void crf(const double *v, const double *f, double *y)
{
    double a[3], b[3], c[3];
    cross3(v, f, a);
    cross3(v + 3, f + 3, b);
    cross3(v, f + 3, c);
    y[0] = a[0] + b[0], y[1] = a[1] + b[1], y[2] = a[2] + b[2];
    y[3] = c[0], y[4] = c[1], y[5] = c[2];
}

/* y = A x, A 6 x 6 row-major */
static void mv6(const double *A, const double *x, double *y)
{
    for (int a = 0; a < 6; a++) {
        double s = 0;
        for (int e = 0; e < 6; e++) s += A[6 * a + e] * x[e];
        y[a] = s;
    }
}

/* P += X_i^T I X_i for the symmetric 6 x 6 I (row-major, child coordinates) by blocks:
 * X = diag(E, E) [1 0; -r~ 1], so with A', B', C' the blocks of I rotated by E
 * (E^T A E, ...) and H = B' + r~ C',
 *     X^T I X = [A' + r~ B'^T - H r~, H; H^T, C'] */
static void congruence_add(const double *b, const double *I, double *P)
{
    mb_congruence_add(b + W_E, b + W_R, I, P);
}

/* S_i as a 6-vector */
static void subspace(const mb_jtree *T, ptrdiff_t i, double *S)
{
    const double *k = T->axis + 3 * i;
    int off = T->type[i] == MB_JT_REVOLUTE ? 0 : 3;
    memset(S, 0, 6 * sizeof(double));
    S[off] = k[0], S[off + 1] = k[1], S[off + 2] = k[2];
}

/* 1 when the engine's functions take the tree: no ball joint (joint_spatial.h has them) */
static int no_ball(const mb_jtree *T)
{
    for (ptrdiff_t i = 0; T->mech_forces && i < T->n; i++)
        if (T->type[i] == MB_JT_BALL)
            return 0;
    return 1;
}

int mb_jtree_check(const mb_jtree *T, char *msg, size_t len)
{
#define BAD(...) (snprintf(msg, len, __VA_ARGS__), MB_ERR_ILL_INPUT)
    if (!T || T->n < 0)
        return BAD("joint tree: no table.");
    if (T->n > 0 && (!T->parent || !T->type || !T->frame || !T->axis || !T->inertia))
        return BAD("joint tree: a table of %td bodies needs parent, type, frame, axis and "
                   "inertia.", T->n);
    for (ptrdiff_t i = 0; i < T->n; i++) {
        if (T->parent[i] < -1 || T->parent[i] >= i)
            return BAD("joint tree: body %td has parent %d; parents come first (-1: the base).",
                       i, T->parent[i]);
        if (T->type[i] != MB_JT_REVOLUTE && T->type[i] != MB_JT_PRISMATIC &&
            !(i == 0 && T->type[i] == MB_JT_FREE) && !(T->mech_forces && T->type[i] == MB_JT_BALL))
            return BAD("joint tree: joint %td has type %d; revolute (0), prismatic (1) or, for "
                       "body 0 only, free (2) (ball (3): a SpatialModel's tree only).", i,
                       T->type[i]);
        const double *k = T->axis + 3 * i, *p = T->inertia + 10 * i;
        if (!(fabs(dot3(k, k) - 1.0) <= 1e-12))
            return BAD("joint tree: the axis of joint %td is not a unit vector.", i);
        if (!(p[0] >= 0) || !isfinite(p[0]))
            return BAD("joint tree: body %td has mass %g; it must be finite and >= 0.", i, p[0]);
        for (int e = 0; e < 12; e++)
            if (!isfinite(T->frame[12 * i + e]))
                return BAD("joint tree: the joint frame of joint %td is not finite.", i);
        if (T->damping && (!isfinite(T->damping[i]) || T->damping[i] < 0))
            return BAD("joint tree: joint %td has damping %g; it must be finite and >= 0.", i,
                       T->damping[i]);
    }
    for (int e = 0; e < 3; e++)
        if (!isfinite(T->gravity[e]))
            return BAD("joint tree: gravity is not finite.");
    return MB_OK;
#undef BAD
}

int mb_jtree_input(const mb_jtree *T, double t, const double *qd, double *Q)
{
    for (ptrdiff_t i = 0; i < T->n; i++) {
        double u = 0.0;
        if (T->input) {
            const double *f = T->input + 6 * i;
            u = f[0] + f[1] * t + f[2] * t * t + (f[3] != 0.0 ? f[3] * sin(f[4] * t + f[5]) : 0.0);
        }
        if (T->damping && qd)
            u -= T->damping[i] * qd[i];
        Q[i] = u;
    }
    return MB_OK;
}

/* the root's slots: E = A^T, r = o, its velocity (link coordinates) */
static void root_body(const mb_jtree_root *root, double *b)
{
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) b[W_E + 3 * a + e] = root->A[3 * e + a];
    memcpy(b + W_R, root->o, 3 * sizeof(double));
    memcpy(b + W_V, root->v, 6 * sizeof(double));
}

/* Cholesky solve of the SPD 6 x 6 A (row-major, destroyed) for x = A^-1 b (in place) */
static int solve6(double *A, double *x)
{
    for (int j = 0; j < 6; j++) {
        double d = A[6 * j + j];
        for (int k = 0; k < j; k++) d -= A[6 * j + k] * A[6 * j + k];
        if (!(d > 0))
            return MB_ERR_LINALG;
        d = sqrt(d);
        A[6 * j + j] = d;
        for (int i = j + 1; i < 6; i++) {
            double t = A[6 * i + j];
            for (int k = 0; k < j; k++) t -= A[6 * i + k] * A[6 * j + k];
            A[6 * i + j] = t / d;
        }
    }
    for (int i = 0; i < 6; i++) {
        for (int k = 0; k < i; k++) x[i] -= A[6 * i + k] * x[k];
        x[i] /= A[6 * i + i];
    }
    for (int i = 5; i >= 0; i--) {
        for (int k = i + 1; k < 6; k++) x[i] -= A[6 * k + i] * x[k];
        x[i] /= A[6 * i + i];
    }
    return MB_OK;
}

/* the ABA with a fixed base (root NULL) or a free root body 0 (root: its pose and
 * velocity; a0: its spatial acceleration out, link coordinates).  Gravity as an upward
 * acceleration of the world: the accelerations inside are apparent ones (true minus
 * gravity); the free root's apparent acceleration solves IA_0 a = -pA_0. */
static int aba_core(const mb_jtree *T, const mb_jtree_root *root, const double *q,
                    const double *qd, const double *tau, double *a0out, double *qdd,
                    double *work)
{
    ptrdiff_t n = T->n;
    int free_root = n > 0 && T->type[0] == MB_JT_FREE;
    double S[6], vJ[6], Iv[6];
    if (!no_ball(T))
        return MB_ERR_NOT_SUPPORTED;
    if (free_root != (root != NULL))
        return MB_ERR_ILL_INPUT;
    for (ptrdiff_t i = 0; i < n; i++) {  /* velocities, bias terms */
        double *b = BODY(work, i), *v = b + W_V;
        int p = T->parent[i];
        if (i == 0 && free_root) {
            root_body(root, b);
            memset(b + W_C, 0, 6 * sizeof(double));
            mb_rigid_inertia(T->inertia, b + W_IA);
            mv6(b + W_IA, v, Iv);
            crf(v, Iv, b + W_PA);
            continue;
        }
        joint_transform(T, i, q[i], b);
        subspace(T, i, S);
        double qdi = qd ? qd[i] : 0.0;
        for (int e = 0; e < 6; e++) vJ[e] = S[e] * qdi;
        if (p >= 0)
            xmotion(b, BODY(work, p) + W_V, v);
        else
            memset(v, 0, 6 * sizeof(double));
        for (int e = 0; e < 6; e++) v[e] += vJ[e];
        crm(v, vJ, b + W_C);
        mb_rigid_inertia(T->inertia + 10 * i, b + W_IA);
        mv6(b + W_IA, v, Iv);
        crf(v, Iv, b + W_PA);
    }
    for (ptrdiff_t i = n - 1; i >= (free_root ? 1 : 0); i--) {  /* articulated inertias */
        double *b = BODY(work, i), *IA = b + W_IA, *pA = b + W_PA, *U = b + W_U;
        int p = T->parent[i];
        subspace(T, i, S);
        mv6(IA, S, U);
        double D = dot6(S, U);
        if (!(D > 0))
            return MB_ERR_LINALG;  /* a joint moving no mass */
        b[W_D] = D;
        b[W_UU] = (tau ? tau[i] : 0.0) - dot6(S, pA);
        if (p < 0)
            continue;
        double *bp = BODY(work, p), pa[6], t6[6];
        for (int a = 0; a < 6; a++)
            for (int e = 0; e < 6; e++) IA[6 * a + e] -= U[a] * U[e] / D;
        mv6(IA, b + W_C, t6);
        for (int a = 0; a < 6; a++) pa[a] = pA[a] + t6[a] + U[a] * b[W_UU] / D;
        congruence_add(b, IA, bp + W_IA);
        xforce_add(b, pa, bp + W_PA);
    }
    double a0[6] = {0, 0, 0, -T->gravity[0], -T->gravity[1], -T->gravity[2]};
    if (free_root) {  /* the root's apparent acceleration, then its true one */
        double *b = BODY(work, 0), *a = b + W_A, IA[36], g[3];
        memcpy(IA, b + W_IA, sizeof IA);
        for (int e = 0; e < 6; e++) a[e] = -b[W_PA + e];
        int rc = solve6(IA, a);
        if (rc != MB_OK)
            return rc;
        mv3(b + W_E, T->gravity, g);
        memcpy(a0out, a, 6 * sizeof(double));
        for (int e = 0; e < 3; e++) a0out[3 + e] += g[e];
        qdd[0] = 0.0;
    }
    for (ptrdiff_t i = free_root ? 1 : 0; i < n; i++) {  /* accelerations */
        double *b = BODY(work, i), *a = b + W_A;
        int p = T->parent[i];
        xmotion(b, p >= 0 ? BODY(work, p) + W_A : a0, a);
        for (int e = 0; e < 6; e++) a[e] += b[W_C + e];
        double qi = (b[W_UU] - dot6(b + W_U, a)) / b[W_D];
        subspace(T, i, S);
        for (int e = 0; e < 6; e++) a[e] += S[e] * qi;
        qdd[i] = qi;
    }
    for (ptrdiff_t i = 0; i < n; i++)
        if (!isfinite(qdd[i]))
            return MB_ERR_NONFINITE;
    for (int e = 0; free_root && e < 6; e++)
        if (!isfinite(a0out[e]))
            return MB_ERR_NONFINITE;
    return MB_OK;
}

int mb_jtree_aba(const mb_jtree *T, const double *q, const double *qd, const double *tau,
                 double *qdd, double *work)
{
    return aba_core(T, NULL, q, qd, tau, NULL, qdd, work);
}

int mb_jtree_aba_free(const mb_jtree *T, const mb_jtree_root *root, const double *q,
                      const double *qd, const double *tau, double *a0, double *qdd,
                      double *work)
{
    return aba_core(T, root, q, qd, tau, a0, qdd, work);
}

int mb_jtree_rnea(const mb_jtree *T, const double *q, const double *qd, const double *qdd,
                  int gravity, double *tau, double *work)
{
    if ((T->n > 0 && T->type[0] == MB_JT_FREE) || !no_ball(T))
        return MB_ERR_NOT_SUPPORTED;  /* a fixed base only, no ball joints */
    ptrdiff_t n = T->n;
    double S[6], vJ[6], Iv[6], Ia[6], t6[6], I6[36];
    double a0[6] = {0, 0, 0, 0, 0, 0};
    if (gravity)
        a0[3] = -T->gravity[0], a0[4] = -T->gravity[1], a0[5] = -T->gravity[2];
    for (ptrdiff_t i = 0; i < n; i++) {
        double *b = BODY(work, i), *v = b + W_V, *a = b + W_A, *f = b + W_PA;
        int p = T->parent[i];
        joint_transform(T, i, q[i], b);
        subspace(T, i, S);
        double qdi = qd ? qd[i] : 0.0, qddi = qdd ? qdd[i] : 0.0;
        for (int e = 0; e < 6; e++) vJ[e] = S[e] * qdi;
        if (p >= 0) {
            xmotion(b, BODY(work, p) + W_V, v);
            xmotion(b, BODY(work, p) + W_A, a);
        } else {
            memset(v, 0, 6 * sizeof(double));
            xmotion(b, a0, a);
        }
        for (int e = 0; e < 6; e++) v[e] += vJ[e];
        crm(v, vJ, t6);
        for (int e = 0; e < 6; e++) a[e] += S[e] * qddi + t6[e];
        mb_rigid_inertia(T->inertia + 10 * i, I6);
        mv6(I6, a, Ia);
        mv6(I6, v, Iv);
        crf(v, Iv, t6);
        for (int e = 0; e < 6; e++) f[e] = Ia[e] + t6[e];
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        double *b = BODY(work, i);
        subspace(T, i, S);
        tau[i] = dot6(S, b + W_PA);
        if (T->parent[i] >= 0)
            xforce_add(b, b + W_PA, BODY(work, T->parent[i]) + W_PA);
    }
    return MB_OK;
}

int mb_jtree_crba(const mb_jtree *T, const double *q, double *M, ptrdiff_t ld, double *work)
{
    if ((T->n > 0 && T->type[0] == MB_JT_FREE) || !no_ball(T))
        return MB_ERR_NOT_SUPPORTED;  /* a fixed base only, no ball joints */
    ptrdiff_t n = T->n;
    double S[6], F[6], G[6];
    for (ptrdiff_t i = 0; i < n; i++) {
        double *b = BODY(work, i);
        joint_transform(T, i, q[i], b);
        mb_rigid_inertia(T->inertia + 10 * i, b + W_IA);
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--)  /* composite inertias */
        if (T->parent[i] >= 0)
            congruence_add(BODY(work, i), BODY(work, i) + W_IA, BODY(work, T->parent[i]) + W_IA);
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++) M[j * ld + i] = 0.0;
    for (ptrdiff_t i = 0; i < n; i++) {
        subspace(T, i, S);
        mv6(BODY(work, i) + W_IA, S, F);
        M[i * ld + i] = dot6(S, F);
        for (ptrdiff_t j = i; T->parent[j] >= 0;) {
            memset(G, 0, sizeof G);
            xforce_add(BODY(work, j), F, G);
            memcpy(F, G, sizeof F);
            j = T->parent[j];
            subspace(T, j, S);
            M[j * ld + i] = M[i * ld + j] = dot6(S, F);
        }
    }
    return MB_OK;
}

static int fk_core(const mb_jtree *T, const mb_jtree_root *root, const double *a0,
                   const double *q, const double *qd, const double *qdd, double *out,
                   double *work)
{
    ptrdiff_t n = T->n;
    int free_root = n > 0 && T->type[0] == MB_JT_FREE;
    if (!no_ball(T))
        return MB_ERR_NOT_SUPPORTED;
    if (free_root != (root != NULL) || (free_root && qdd && !a0))
        return MB_ERR_ILL_INPUT;
    double S[6], vJ[6], t6[6], zero[6] = {0, 0, 0, 0, 0, 0};
    for (ptrdiff_t i = 0; i < n; i++) {
        double *b = BODY(work, i), *v = b + W_V, *a = b + W_A, *o = out + MB_JT_FK * i;
        int p = T->parent[i];
        const double *op = p >= 0 ? out + MB_JT_FK * p : NULL;
        int is_root = i == 0 && free_root;
        if (is_root)
            root_body(root, b);
        else
            joint_transform(T, i, q[i], b);
        /* A_i = A_p E^T, o_i = o_p + A_p r */
        const double *E = b + W_E, *r = b + W_R;
        static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        const double *Ap = op ? op : I3;
        for (int x = 0; x < 3; x++)
            for (int e = 0; e < 3; e++)
                o[3 * x + e] = Ap[3 * x] * E[3 * e] + Ap[3 * x + 1] * E[3 * e + 1] +
                               Ap[3 * x + 2] * E[3 * e + 2];
        mv3(Ap, r, o + 9);
        if (op)
            for (int e = 0; e < 3; e++) o[9 + e] += op[9 + e];
        if (!qd)
            continue;
        if (is_root) {
            memset(vJ, 0, sizeof vJ);
        } else {
            subspace(T, i, S);
            for (int e = 0; e < 6; e++) vJ[e] = S[e] * qd[i];
            xmotion(b, p >= 0 ? BODY(work, p) + W_V : zero, v);
            for (int e = 0; e < 6; e++) v[e] += vJ[e];
        }
        mv3(o, v, o + 12);      /* omega */
        mv3(o, v + 3, o + 15);  /* the origin's velocity */
        if (!qdd)
            continue;
        if (is_root) {
            memcpy(a, a0, 6 * sizeof(double));
        } else {
            xmotion(b, p >= 0 ? BODY(work, p) + W_A : zero, a);
            crm(v, vJ, t6);
            for (int e = 0; e < 6; e++) a[e] += S[e] * qdd[i] + t6[e];
        }
        /* the origin's acceleration: the spatial one plus omega x v (link coordinates) */
        double c[3], al[3];
        cross3(v, v + 3, c);
        for (int e = 0; e < 3; e++) al[e] = a[3 + e] + c[e];
        mv3(o, a, o + 18);
        mv3(o, al, o + 21);
    }
    return MB_OK;
}

int mb_jtree_fk(const mb_jtree *T, const double *q, const double *qd, const double *qdd,
                double *out, double *work)
{
    return fk_core(T, NULL, NULL, q, qd, qdd, out, work);
}

int mb_jtree_fk_free(const mb_jtree *T, const mb_jtree_root *root, const double *a0,
                     const double *q, const double *qd, const double *qdd, double *out,
                     double *work)
{
    return fk_core(T, root, a0, q, qd, qdd, out, work);
}

/* y = dX m for the derivative (dE, dr) of body b's joint transform */
static void xmotion_d(const double *b, const double *dE, const double *dr, const double *m,
                      double *y)
{
    const double *E = b + W_E, *r = b + W_R;
    double w[3], d[3], t[3];
    cross3(r, m, w);
    for (int k = 0; k < 3; k++) d[k] = m[3 + k] - w[k];
    mv3(dE, m, y);
    mv3(dE, d, y + 3);
    cross3(dr, m, w);
    mv3(E, w, t);
    for (int k = 0; k < 3; k++) y[3 + k] -= t[k];
}

/* y += dX^T f */
static void xforce_d_add(const double *b, const double *dE, const double *dr, const double *f,
                         double *y)
{
    const double *E = b + W_E, *r = b + W_R;
    double fl[3], dfl[3], dn[3], t1[3], t2[3];
    mtv3(E, f + 3, fl);
    mtv3(dE, f + 3, dfl);
    mtv3(dE, f, dn);
    cross3(dr, fl, t1);
    cross3(r, dfl, t2);
    for (int k = 0; k < 3; k++) {
        y[k] += dn[k] + t1[k] + t2[k];
        y[3 + k] += dfl[k];
    }
}

int mb_jtree_rnea_tangent(const mb_jtree *T, const double *q, const double *qd,
                          const double *dq, const double *dqd, double *dtau, double *work)
{
    if ((T->n > 0 && T->type[0] == MB_JT_FREE) || !no_ball(T))
        return MB_ERR_NOT_SUPPORTED;  /* a fixed base only, no ball joints */
    ptrdiff_t n = T->n;
    double *tan = work + MB_JT_PER_BODY * n;  /* per body: dv, da, df */
    double S[6], sq[6], dsq[6], t6[6], u6[6], Iv[6], Idv[6], I6[36], dE[9], dr[3];
    for (ptrdiff_t i = 0; i < n; i++) {
        double *b = BODY(work, i), *dv = tan + 18 * i, *da = dv + 6, *df = dv + 12;
        int p = T->parent[i];
        const double *v = b + W_V;
        subspace(T, i, S);
        double qdi = qd ? qd[i] : 0.0, dqi = dq ? dq[i] : 0.0, dqdi = dqd ? dqd[i] : 0.0;
        for (int e = 0; e < 6; e++) sq[e] = S[e] * qdi, dsq[e] = S[e] * dqdi;
        /* the parent's motion in i's coordinates: dX m_p + X dm_p */
        double vp0[6] = {0, 0, 0, 0, 0, 0};
        double ap0[6] = {0, 0, 0, -T->gravity[0], -T->gravity[1], -T->gravity[2]};
        const double *vP = p >= 0 ? BODY(work, p) + W_V : vp0;
        const double *aP = p >= 0 ? BODY(work, p) + W_A : ap0;
        if (p >= 0) {
            xmotion(b, tan + 18 * p, dv);
            xmotion(b, tan + 18 * p + 6, da);
        } else {
            memset(dv, 0, 12 * sizeof(double));
        }
        if (dqi != 0.0) {
            const double *k = T->axis + 3 * i, *R = T->frame + 12 * i;
            if (T->type[i] == MB_JT_REVOLUTE) {  /* dE = -K E dq */
                double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
                mm3(K, b + W_E, dE);
                for (int e = 0; e < 9; e++) dE[e] *= -dqi;
                dr[0] = dr[1] = dr[2] = 0.0;
            } else {                             /* dr = R k dq */
                memset(dE, 0, sizeof dE);
                mv3(R, k, dr);
                for (int e = 0; e < 3; e++) dr[e] *= dqi;
            }
            xmotion_d(b, dE, dr, vP, t6);
            for (int e = 0; e < 6; e++) dv[e] += t6[e];
            xmotion_d(b, dE, dr, aP, t6);
            for (int e = 0; e < 6; e++) da[e] += t6[e];
        }
        for (int e = 0; e < 6; e++) dv[e] += dsq[e];
        crm(dv, sq, t6);
        crm(v, dsq, u6);
        for (int e = 0; e < 6; e++) da[e] += t6[e] + u6[e];
        mb_rigid_inertia(T->inertia + 10 * i, I6);
        mv6(I6, da, df);
        mv6(I6, v, Iv);
        mv6(I6, dv, Idv);
        crf(dv, Iv, t6);
        crf(v, Idv, u6);
        for (int e = 0; e < 6; e++) df[e] += t6[e] + u6[e];
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        double *b = BODY(work, i), *df = tan + 18 * i + 12;
        int p = T->parent[i];
        subspace(T, i, S);
        dtau[i] = dot6(S, df);
        if (p < 0)
            continue;
        double *dfp = tan + 18 * p + 12;
        xforce_add(b, df, dfp);
        double dqi = dq ? dq[i] : 0.0;
        if (dqi != 0.0) {
            const double *k = T->axis + 3 * i, *R = T->frame + 12 * i;
            if (T->type[i] == MB_JT_REVOLUTE) {
                double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
                mm3(K, b + W_E, dE);
                for (int e = 0; e < 9; e++) dE[e] *= -dqi;
                dr[0] = dr[1] = dr[2] = 0.0;
            } else {
                memset(dE, 0, sizeof dE);
                mv3(R, k, dr);
                for (int e = 0; e < 3; e++) dr[e] *= dqi;
            }
            xforce_d_add(b, dE, dr, b + W_PA, dfp);  /* the primal f_i, accumulated */
        }
    }
    return MB_OK;
}

int mb_jtree_aba_derivatives(const mb_jtree *T, double t, const double *q, const double *qd,
                             const double *tau_extra, const double *qdd, double *Aq,
                             double *Av, ptrdiff_t ld, double *work)
{
    if ((T->n > 0 && T->type[0] == MB_JT_FREE) || !no_ball(T))
        return MB_ERR_NOT_SUPPORTED;  /* a fixed base only, no ball joints */
    ptrdiff_t n = T->n;
    double *L = work + (MB_JT_PER_BODY + 18) * n, *x = L + n * n, *e = x + n;
    int rc;
    if (!qdd) {  /* x'' first (the ABA), into x */
        rc = mb_jtree_input(T, t, qd, e);
        for (ptrdiff_t i = 0; tau_extra && i < n; i++) e[i] += tau_extra[i];
        if (rc == MB_OK)
            rc = mb_jtree_aba(T, q, qd, e, x, work);
        if (rc != MB_OK)
            return rc;
        qdd = x;
    }
    memcpy(e, qdd, (size_t)n * sizeof(double));  /* RNEA clobbers x's use below */
    if ((rc = mb_jtree_crba(T, q, L, n, work)) != MB_OK)
        return rc;
    for (ptrdiff_t j = 0; j < n; j++) {  /* Cholesky, lower triangle of L (column-major) */
        double d = L[j * n + j];
        for (ptrdiff_t k = 0; k < j; k++) d -= L[k * n + j] * L[k * n + j];
        if (!(d > 0))
            return MB_ERR_LINALG;
        d = sqrt(d);
        L[j * n + j] = d;
        for (ptrdiff_t i = j + 1; i < n; i++) {
            double s = L[j * n + i];
            for (ptrdiff_t k = 0; k < j; k++) s -= L[k * n + i] * L[k * n + j];
            L[j * n + i] = s / d;
        }
    }
    if ((rc = mb_jtree_rnea(T, q, qd, e, 1, x, work)) != MB_OK)
        return rc;
    for (ptrdiff_t j = 0; j < 2 * n; j++) {
        for (ptrdiff_t i = 0; i < n; i++) e[i] = 0.0;
        e[j % n] = 1.0;
        rc = mb_jtree_rnea_tangent(T, q, qd, j < n ? e : NULL, j < n ? NULL : e, x, work);
        if (rc != MB_OK)
            return rc;
        if (j >= n && T->damping)
            x[j - n] += T->damping[j - n];
        for (ptrdiff_t i = 0; i < n; i++) x[i] = -x[i];
        for (ptrdiff_t i = 0; i < n; i++) {  /* L L^T y = x */
            double s = x[i];
            for (ptrdiff_t k = 0; k < i; k++) s -= L[k * n + i] * x[k];
            x[i] = s / L[i * n + i];
        }
        for (ptrdiff_t i = n - 1; i >= 0; i--) {
            double s = x[i];
            for (ptrdiff_t k = i + 1; k < n; k++) s -= L[i * n + k] * x[k];
            x[i] = s / L[i * n + i];
        }
        double *col = j < n ? Aq + j * ld : Av + (j - n) * ld;
        memcpy(col, x, (size_t)n * sizeof(double));
    }
    return MB_OK;
}
