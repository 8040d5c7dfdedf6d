/* The exact derivatives of a fixed-base tree's forward dynamics, O(n^2) a Jacobian
 * (joint_tree_deriv.h): the RNEA's forward-mode tangents (joint_tree.c) a column, and
 * M^-1 applied to each column by the articulated-body factorization of M, O(n) a column.
 *
 * Work array: mb_jtree_work_size(n) doubles for the RNEA's primal values (joint_tree.c's
 * layout), 18 n for its tangents, then MB_JTD_PER_BODY a body of the factorization (the
 * joint transform E, r; the articulated inertia; U, D; the sweeps' force and
 * acceleration), then two n-vectors. */
#include <math.h>
#include <string.h>
#include "joint_tree_deriv.h"
#include "status.h"

enum { D_E = 0, D_R = 9, D_IA = 12, D_U = 48, D_D = 54, D_P = 55, D_A = 61 };

static double *fact_body(const mb_jtree *T, double *work, ptrdiff_t i)
{
    return work + (MB_JT_PER_BODY + 18) * T->n + MB_JTD_PER_BODY * i;
}

static void cross3(const double *a, const double *b, double *c)
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
           z = a[0] * b[1] - a[1] * b[0];
    c[0] = x, c[1] = y, c[2] = z;
}

/* y = A x and y = A^T x, A row-major 3 x 3 */
static void mv3(const double *A, const double *x, double *y)
{
    double a = A[0] * x[0] + A[1] * x[1] + A[2] * x[2], b = A[3] * x[0] + A[4] * x[1] + A[5] * x[2],
           c = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
    y[0] = a, y[1] = b, y[2] = c;
}

static void mtv3(const double *A, const double *x, double *y)
{
    double a = A[0] * x[0] + A[3] * x[1] + A[6] * x[2], b = A[1] * x[0] + A[4] * x[1] + A[7] * x[2],
           c = A[2] * x[0] + A[5] * x[1] + A[8] * x[2];
    y[0] = a, y[1] = b, y[2] = c;
}

/* C = A B, A^T B, A B^T (3 x 3 row-major, C distinct) */
static void mm3(const double *A, const double *B, double *C)
{
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++)
            C[3 * a + e] = A[3 * a] * B[e] + A[3 * a + 1] * B[3 + e] + A[3 * a + 2] * B[6 + e];
}

static void mtm3(const double *A, const double *B, double *C)
{
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++)
            C[3 * a + e] = A[a] * B[e] + A[3 + a] * B[3 + e] + A[6 + a] * B[6 + e];
}

static void mmt3(const double *A, const double *B, double *C)
{
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++)
            C[3 * a + e] = A[3 * a] * B[3 * e] + A[3 * a + 1] * B[3 * e + 1] + A[3 * a + 2] * B[3 * e + 2];
}

/* E = (R_i Rm(q_i))^T and r = t_i + R_i tm(q_i) of joint i (joint_tree.c's convention) */
static void joint_transform(const mb_jtree *T, ptrdiff_t i, double qi, double *E, double *r)
{
    const double *R = T->frame + 12 * i, *t = R + 9, *k = T->axis + 3 * i;
    double C[9];
    if (T->type[i] == MB_JT_REVOLUTE) {  /* C = R Rm, Rm = I + s K + (1 - c) K^2 */
        double s = sin(qi), c1 = 1.0 - cos(qi), Rm[9];
        double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
        for (int a = 0; a < 3; a++)
            for (int e = 0; e < 3; e++)
                Rm[3 * a + e] = (a == e) + s * K[3 * a + e] + c1 * (k[a] * k[e] - (a == e));
        mm3(R, Rm, C);
        r[0] = t[0], r[1] = t[1], r[2] = t[2];
    } else {
        memcpy(C, R, sizeof C);
        double d[3] = {qi * k[0], qi * k[1], qi * k[2]};
        mv3(R, d, r);
        r[0] += t[0], r[1] += t[1], r[2] += t[2];
    }
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) E[3 * a + e] = C[3 * e + a];
}

/* the rigid body's spatial inertia at its link origin (joint_tree.h's 10 numbers) */
static void rigid_inertia(const double *p, double *I)
{
    double m = p[0];
    const double *c = p + 1, *J = p + 4;
    double Ic[9] = {J[0], J[3], J[4], J[3], J[1], J[5], J[4], J[5], J[2]};
    double cx[9] = {0, -c[2], c[1], c[2], 0, -c[0], -c[1], c[0], 0};
    memset(I, 0, 36 * sizeof(double));
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
            double cc = 0;
            for (int k = 0; k < 3; k++) cc += cx[3 * a + k] * cx[3 * e + k];
            I[6 * a + e] = Ic[3 * a + e] + m * cc;
            I[6 * a + e + 3] = m * cx[3 * a + e];
            I[6 * (a + 3) + e] = m * cx[3 * e + a];
        }
    for (int a = 3; a < 6; a++) I[6 * a + a] = m;
}

/* P += X^T I X for the symmetric I (child coordinates), X = [E 0; -E r~ E] */
static void congruence_add(const double *E, const double *r, const double *I, double *P)
{
    double A[9], B[9], C[9], t[9], Ab[9], Bb[9], Cb[9], H[9], T1[9], T2[9];
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
            A[3 * a + e] = I[6 * a + e];
            B[3 * a + e] = I[6 * a + e + 3];
            C[3 * a + e] = I[6 * (a + 3) + e + 3];
        }
    mm3(A, E, t), mtm3(E, t, Ab);
    mm3(B, E, t), mtm3(E, t, Bb);
    mm3(C, E, t), mtm3(E, t, Cb);
    double rx[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    mm3(rx, Cb, H);
    for (int k = 0; k < 9; k++) H[k] += Bb[k];
    mmt3(rx, Bb, T1);
    mm3(H, rx, T2);
    for (int a = 0; a < 3; a++)
        for (int e = 0; e < 3; e++) {
            P[6 * a + e] += Ab[3 * a + e] + T1[3 * a + e] - T2[3 * a + e];
            P[6 * a + e + 3] += H[3 * a + e];
            P[6 * (a + 3) + e] += H[3 * e + a];
            P[6 * (a + 3) + e + 3] += Cb[3 * a + e];
        }
}

/* y = X m (parent motion to child); y += X^T f (child force to parent) */
static void xmotion(const double *E, const double *r, const double *m, double *y)
{
    double w[3];
    cross3(r, m, w);
    double d[3] = {m[3] - w[0], m[4] - w[1], m[5] - w[2]};
    mv3(E, m, y);
    mv3(E, d, y + 3);
}

static void xforce_add(const double *E, const double *r, const double *f, double *y)
{
    double fl[3], n[3], rf[3];
    mtv3(E, f + 3, fl);
    mtv3(E, f, n);
    cross3(r, fl, rf);
    for (int a = 0; a < 3; a++) {
        y[a] += n[a] + rf[a];
        y[a + 3] += fl[a];
    }
}

/* S_i . x for a 6-vector x (S_i = (axis; 0) or (0; axis)) */
static double s_dot(const mb_jtree *T, ptrdiff_t i, const double *x)
{
    const double *k = T->axis + 3 * i;
    const double *y = T->type[i] == MB_JT_REVOLUTE ? x : x + 3;
    return k[0] * y[0] + k[1] * y[1] + k[2] * y[2];
}

static int fixed_base_revolute_prismatic(const mb_jtree *T)
{
    for (ptrdiff_t i = 0; i < T->n; i++)
        if (T->type[i] != MB_JT_REVOLUTE && T->type[i] != MB_JT_PRISMATIC)
            return 0;
    return 1;
}

int mb_jtree_d_factor(const mb_jtree *T, const double *q, double *work)
{
    if (!fixed_base_revolute_prismatic(T))
        return MB_ERR_NOT_SUPPORTED;
    ptrdiff_t n = T->n;
    for (ptrdiff_t i = 0; i < n; i++) {
        double *b = fact_body(T, work, i);
        joint_transform(T, i, q[i], b + D_E, b + D_R);
        rigid_inertia(T->inertia + 10 * i, b + D_IA);
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {  /* articulated inertias at zero velocity */
        double *b = fact_body(T, work, i), *IA = b + D_IA, *U = b + D_U;
        const double *k = T->axis + 3 * i;
        int off = T->type[i] == MB_JT_REVOLUTE ? 0 : 3;
        for (int a = 0; a < 6; a++)  /* U = IA S */
            U[a] = IA[6 * a + off] * k[0] + IA[6 * a + off + 1] * k[1] + IA[6 * a + off + 2] * k[2];
        double D = s_dot(T, i, U);
        if (!(D > 0) || !isfinite(D))
            return MB_ERR_LINALG;  /* a joint moving no mass */
        b[D_D] = D;
        if (T->parent[i] < 0)
            continue;
        for (int a = 0; a < 6; a++)
            for (int e = 0; e < 6; e++) IA[6 * a + e] -= U[a] * U[e] / D;
        congruence_add(b + D_E, b + D_R, IA, fact_body(T, work, T->parent[i]) + D_IA);
    }
    return MB_OK;
}

void mb_jtree_d_solve(const mb_jtree *T, const double *bv, double *x, double *work)
{
    ptrdiff_t n = T->n;
    for (ptrdiff_t i = 0; i < n; i++) memset(fact_body(T, work, i) + D_P, 0, 6 * sizeof(double));
    for (ptrdiff_t i = n - 1; i >= 0; i--) {  /* bias forces of the column, u_i */
        double *b = fact_body(T, work, i), *pA = b + D_P;
        double u = bv[i] - s_dot(T, i, pA);
        x[i] = u;
        if (T->parent[i] < 0)
            continue;
        double pa[6], c = u / b[D_D];
        for (int a = 0; a < 6; a++) pa[a] = pA[a] + b[D_U + a] * c;
        xforce_add(b + D_E, b + D_R, pa, fact_body(T, work, T->parent[i]) + D_P);
    }
    for (ptrdiff_t i = 0; i < n; i++) {  /* accelerations */
        double *b = fact_body(T, work, i), *a = b + D_A;
        int p = T->parent[i];
        if (p >= 0)
            xmotion(b + D_E, b + D_R, fact_body(T, work, p) + D_A, a);
        else
            memset(a, 0, 6 * sizeof(double));
        const double *U = b + D_U;
        double xi = (x[i] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] +
                             U[4] * a[4] + U[5] * a[5])) / b[D_D];
        const double *k = T->axis + 3 * i;
        double *as = T->type[i] == MB_JT_REVOLUTE ? a : a + 3;
        as[0] += k[0] * xi, as[1] += k[1] * xi, as[2] += k[2] * xi;
        x[i] = xi;
    }
}

int mb_jtree_d_derivatives(const mb_jtree *T, double t, const double *q, const double *qd,
                           const double *tau_extra, double *qdd, double *Aq, double *Av,
                           double *Minv, ptrdiff_t ld, double *work)
{
    if (!fixed_base_revolute_prismatic(T))
        return MB_ERR_NOT_SUPPORTED;  /* a floating base, ball joints: not here */
    ptrdiff_t n = T->n;
    double *e = fact_body(T, work, n), *x = e + n;
    int rc = mb_jtree_input(T, t, qd, e);
    for (ptrdiff_t i = 0; tau_extra && i < n; i++) e[i] += tau_extra[i];
    if (rc == MB_OK)  /* x'' = ABA(q, q', tau) */
        rc = mb_jtree_aba(T, q, qd, e, x, work);
    if (rc != MB_OK)
        return rc;
    if (qdd)
        memcpy(qdd, x, (size_t)n * sizeof(double));
    if ((Aq || Av) && (rc = mb_jtree_rnea(T, q, qd, x, 1, e, work)) != MB_OK)
        return rc;  /* the primal values the tangents differentiate */
    if ((rc = mb_jtree_d_factor(T, q, work)) != MB_OK)
        return rc;
    memset(e, 0, (size_t)n * sizeof(double));
    for (ptrdiff_t j = 0; j < 2 * n; j++) {
        int vel = j >= n;
        ptrdiff_t jj = vel ? j - n : j;
        double *col = vel ? (Av ? Av + jj * ld : NULL) : (Aq ? Aq + jj * ld : NULL);
        if (!col)
            continue;
        e[jj] = 1.0;  /* dRNEA along e_jj, then -M^-1 of it */
        rc = mb_jtree_rnea_tangent(T, q, qd, vel ? NULL : e, vel ? e : NULL, x, work);
        e[jj] = 0.0;
        if (rc != MB_OK)
            return rc;
        if (vel && T->damping)
            x[jj] += T->damping[jj];
        for (ptrdiff_t i = 0; i < n; i++) x[i] = -x[i];
        mb_jtree_d_solve(T, x, col, work);
    }
    for (ptrdiff_t j = 0; Minv && j < n; j++) {
        e[j] = 1.0;
        mb_jtree_d_solve(T, e, Minv + j * ld, work);
        e[j] = 0.0;
    }
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            if ((Aq && !isfinite(Aq[j * ld + i])) || (Av && !isfinite(Av[j * ld + i])))
                return MB_ERR_NONFINITE;
    return MB_OK;
}
