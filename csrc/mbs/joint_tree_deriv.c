/* The exact derivatives of a fixed-base tree's forward dynamics, O(n^2) a Jacobian
 * (joint_tree_deriv.h): the RNEA's forward-mode tangents a column, and M^-1 applied to
 * each column by the articulated-body factorization of M, O(n) a column.
 *
 * The tangent of the RNEA along e_j (of q or of q') is zero outside body j's subtree
 * and j's ancestors: the forward sweep runs over the subtree only, the backward one
 * over the subtree and then up the path to the base (a force transform a body), so a
 * column of a chain costs the full tangent of n - j bodies and j transforms.
 *
 * Work array: mb_jtree_work_size(n) doubles for the ABA of x'' (joint_tree.c), then
 * MB_JTD_PER_BODY a body (the joint transform E, r; the articulated inertia; U, D; the
 * solve's force and acceleration; the rigid inertia I, the primal v, a, f and I v at
 * (q, q', x''); the tangents dv, da, df; the subtree flag), then two n-vectors. */
#include <math.h>
#include <string.h>
#include "joint_tree_deriv.h"
#include "mat3.h"
#include "status.h"

enum {
    D_E = 0, D_R = 9, D_IA = 12, D_U = 48, D_D = 54, D_P = 55, D_A = 61, D_I = 67, D_V = 103,
    D_AC = 109, D_F = 115, D_IV = 121, D_DV = 127, D_DA = 133, D_DF = 139, D_FLAG = 145
};

static double *fact_body(const mb_jtree *T, double *work, ptrdiff_t i)
{
    return work + MB_JT_PER_BODY * T->n + MB_JTD_PER_BODY * i;
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
        mb_rigid_inertia(T->inertia + 10 * i, b + D_I);
        memcpy(b + D_IA, b + D_I, 36 * sizeof(double));
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
        mb_congruence_add(b + D_E, b + D_R, IA, fact_body(T, work, T->parent[i]) + D_IA);
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

/* y = v x m (motion cross product), y = v x* f (force cross product); y += for _add */
static void crm_add(const double *v, const double *m, double *y)
{
    double a[3], b[3], c[3];
    cross3(v, m, a);
    cross3(v, m + 3, b);
    cross3(v + 3, m, c);
    for (int k = 0; k < 3; k++) y[k] += a[k], y[3 + k] += b[k] + c[k];
}

static void crf_add(const double *v, const double *f, double *y)
{
    double a[3], b[3], c[3];
    cross3(v, f, a);
    cross3(v + 3, f + 3, b);
    cross3(v, f + 3, c);
    for (int k = 0; k < 3; k++) y[k] += a[k] + b[k], y[3 + k] += c[k];
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

/* x += c S_i */
static void s_axpy(const mb_jtree *T, ptrdiff_t i, double c, double *x)
{
    const double *k = T->axis + 3 * i;
    double *y = T->type[i] == MB_JT_REVOLUTE ? x : x + 3;
    y[0] += c * k[0], y[1] += c * k[1], y[2] += c * k[2];
}

/* the derivative (dE, dr) of joint i's transform along its coordinate: dE = -K E
 * (revolute, K the axis' cross-product matrix), dr = R k (prismatic) */
static void joint_transform_d(const mb_jtree *T, ptrdiff_t i, const double *E, double *dE,
                              double *dr)
{
    const double *k = T->axis + 3 * i, *R = T->frame + 12 * i;
    if (T->type[i] == MB_JT_REVOLUTE) {
        double K[9] = {0, k[2], -k[1], -k[2], 0, k[0], k[1], -k[0], 0};  /* -K */
        mm3(K, E, dE);
        dr[0] = dr[1] = dr[2] = 0.0;
    } else {
        memset(dE, 0, 9 * sizeof(double));
        mv3(R, k, dr);
    }
}

/* y += dX m for the derivative (dE, dr) of X = [E 0; -E r~ E] */
static void xmotion_d_add(const double *E, const double *r, const double *dE, const double *dr,
                          const double *m, double *y)
{
    double w[3], d[3], t[3], u[3];
    cross3(r, m, w);
    for (int k = 0; k < 3; k++) d[k] = m[3 + k] - w[k];
    mv3(dE, m, t);
    mv3(dE, d, u);
    cross3(dr, m, w);
    mv3(E, w, d);
    for (int k = 0; k < 3; k++) y[k] += t[k], y[3 + k] += u[k] - d[k];
}

/* y += dX^T f */
static void xforce_d_add(const double *E, const double *r, const double *dE, const double *dr,
                         const double *f, double *y)
{
    double fl[3], dfl[3], dn[3], t1[3], t2[3];
    mtv3(E, f + 3, fl);
    mtv3(dE, f + 3, dfl);
    mtv3(dE, f, dn);
    cross3(dr, fl, t1);
    cross3(r, dfl, t2);
    for (int k = 0; k < 3; k++) y[k] += dn[k] + t1[k] + t2[k], y[3 + k] += dfl[k];
}

/* the RNEA's primal values at (q, q', q'') with gravity (after mb_jtree_d_factor: E, r,
 * I): v, a, I v and the accumulated body forces f */
static void rnea_primal(const mb_jtree *T, const double *qd, const double *qdd, double *work)
{
    ptrdiff_t n = T->n;
    const double a0[6] = {0, 0, 0, -T->gravity[0], -T->gravity[1], -T->gravity[2]};
    for (ptrdiff_t i = 0; i < n; i++) {
        double *b = fact_body(T, work, i), *v = b + D_V, *a = b + D_AC, vJ[6] = {0};
        int p = T->parent[i];
        s_axpy(T, i, qd[i], vJ);
        if (p >= 0) {
            xmotion(b + D_E, b + D_R, fact_body(T, work, p) + D_V, v);
            xmotion(b + D_E, b + D_R, fact_body(T, work, p) + D_AC, a);
        } else {
            memset(v, 0, 6 * sizeof(double));
            xmotion(b + D_E, b + D_R, a0, a);
        }
        for (int e = 0; e < 6; e++) v[e] += vJ[e];
        s_axpy(T, i, qdd[i], a);
        crm_add(v, vJ, a);
        mv6(b + D_I, v, b + D_IV);
        mv6(b + D_I, a, b + D_F);
        crf_add(v, b + D_IV, b + D_F);
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--)
        if (T->parent[i] >= 0) {
            double *b = fact_body(T, work, i);
            xforce_add(b + D_E, b + D_R, b + D_F, fact_body(T, work, T->parent[i]) + D_F);
        }
}

/* dtau (n) = dRNEA along e_j of q (vel 0) or of q' (vel 1), at rnea_primal's point: the
 * forward sweep over j's subtree, the backward one over it and up j's path */
static void rnea_column(const mb_jtree *T, const double *qd, ptrdiff_t j, int vel,
                        double *dtau, double *work)
{
    ptrdiff_t n = T->n;
    const double a0[6] = {0, 0, 0, -T->gravity[0], -T->gravity[1], -T->gravity[2]},
                 zero[6] = {0, 0, 0, 0, 0, 0};
    double dE[9], dr[3], Idv[6];
    double *bj = fact_body(T, work, j);
    int pj = T->parent[j];
    if (!vel)
        joint_transform_d(T, j, bj + D_E, dE, dr);
    memset(dtau, 0, (size_t)n * sizeof(double));
    for (ptrdiff_t i = j; i < n; i++) {
        double *b = fact_body(T, work, i), *dv = b + D_DV, *da = b + D_DA, *df = b + D_DF;
        int p = T->parent[i];
        b[D_FLAG] = i == j || (p >= j && fact_body(T, work, p)[D_FLAG] != 0.0);
        if (b[D_FLAG] == 0.0)
            continue;
        if (i == j) {
            memset(dv, 0, 12 * sizeof(double));  /* dv, da */
            if (vel) {
                s_axpy(T, i, 1.0, dv);
                double S[6] = {0};
                s_axpy(T, i, 1.0, S);
                crm_add(b + D_V, S, da);
            } else {
                const double *bp = p >= 0 ? fact_body(T, work, p) : NULL;
                xmotion_d_add(b + D_E, b + D_R, dE, dr, bp ? bp + D_V : zero, dv);
                xmotion_d_add(b + D_E, b + D_R, dE, dr, bp ? bp + D_AC : a0, da);
            }
        } else {
            double *bp = fact_body(T, work, p);
            xmotion(b + D_E, b + D_R, bp + D_DV, dv);
            xmotion(b + D_E, b + D_R, bp + D_DA, da);
        }
        double sq[6] = {0};
        s_axpy(T, i, qd[i], sq);
        crm_add(dv, sq, da);
        mv6(b + D_I, da, df);
        mv6(b + D_I, dv, Idv);
        crf_add(dv, b + D_IV, df);
        crf_add(b + D_V, Idv, df);
    }
    if (pj >= 0)
        memset(fact_body(T, work, pj) + D_DF, 0, 6 * sizeof(double));
    for (ptrdiff_t i = n - 1; i >= j; i--) {
        double *b = fact_body(T, work, i);
        int p = T->parent[i];
        if (b[D_FLAG] == 0.0)
            continue;
        dtau[i] = s_dot(T, i, b + D_DF);
        if (p < 0)
            continue;
        double *dfp = fact_body(T, work, p) + D_DF;
        xforce_add(b + D_E, b + D_R, b + D_DF, dfp);
        if (i == j && !vel)
            xforce_d_add(b + D_E, b + D_R, dE, dr, b + D_F, dfp);
    }
    for (int a = pj; a >= 0; a = T->parent[a]) {  /* up the path */
        double *b = fact_body(T, work, a);
        dtau[a] = s_dot(T, a, b + D_DF);
        if (T->parent[a] >= 0) {
            double *dfp = fact_body(T, work, T->parent[a]) + D_DF;
            memset(dfp, 0, 6 * sizeof(double));
            xforce_add(b + D_E, b + D_R, b + D_DF, dfp);
        }
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
    if ((rc = mb_jtree_d_factor(T, q, work)) != MB_OK)
        return rc;
    if (Aq || Av)  /* the primal values the tangents differentiate */
        rnea_primal(T, qd, x, work);
    for (ptrdiff_t j = 0; j < 2 * n; j++) {
        int vel = j >= n;
        ptrdiff_t jj = vel ? j - n : j;
        double *col = vel ? (Av ? Av + jj * ld : NULL) : (Aq ? Aq + jj * ld : NULL);
        if (!col)
            continue;
        rnea_column(T, qd, jj, vel, x, work);  /* dRNEA along e_jj, then -M^-1 of it */
        if (vel && T->damping)
            x[jj] += T->damping[jj];
        for (ptrdiff_t i = 0; i < n; i++) x[i] = -x[i];
        mb_jtree_d_solve(T, x, col, work);
    }
    memset(e, 0, (size_t)n * sizeof(double));
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
