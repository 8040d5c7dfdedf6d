/* The exact Jacobian of a planar tree's joint accelerations (joint_planar.h).
 *
 * Notation (as form_joint.c's planar ABA): motions m = (omega, v_x, v_y), v the velocity
 * of the body point at the global origin; a x b = (0, -a0 b2 + b0 a2, a0 b1 - b0 a1);
 * ez x (a, b) = (-b, a).  Body i with parent p: theta_i = theta_p + off_i (+ z_i if
 * revolute); d_i = R(theta_p) t_i; o_i = o_p + d_i (+ z_i u_i if prismatic, u_i =
 * R(theta_p + off_i) k_i); S_i = (1, o_y, -o_x) (revolute) or (0, u_i); r_i = o_i +
 * R(theta_i) c_i; V_i = V_p + S_i z'_i; A_i = A_p + S_i z''_i + V_i x S_i z'_i.  The body
 * coordinates: q = (r, theta), q' = (V1 - V0 r_y, V2 + V0 r_x, V0) = (r', omega),
 * a_b = (A1 - A0 r_y - V0 r'_y, A2 + A0 r_x + V0 r'_x, A0).  The inverse dynamics:
 * F_b = M_b a_b - Q_b, its force about the origin f = (F2 + r_x F1 - r_y F0, F0, F1),
 * fs_i = f_i + the fs of i's children, tau_i = S_i . fs_i (= 0 at z'' = f). */
#include <math.h>
#include <string.h>
#include "joint_planar.h"
#include "status.h"

/* per-body values (MB_JP_PV) */
enum { V_TH = 0, V_O = 1, V_D = 3, V_U = 5, V_S = 7, V_V = 10, V_A = 13, V_R = 16, V_RD = 18,
       V_F = 20, V_FS = 23, V_IA = 26, V_AU = 35, V_AD = 38 };  /* + IA, U = IA S, D = S.U */
/* per-body derivatives along one direction (MB_JP_PD) */
enum { D_TH = 0, D_O = 1, D_U = 3, D_S = 5, D_V = 8, D_A = 11, D_R = 14, D_RD = 16, D_AB = 18,
       D_FS = 21, D_PA = 24, D_UU = 27 };  /* + the M^-1 solve's p^A and u */

typedef struct jp_work {
    double *pv, *pd;        /* MB_JP_PV n, MB_JP_PD n */
    double *dq, *dqd, *dQ;  /* nq each */
    double *bq, *bv;        /* 2 nq each: the row band [lo, hi) of each column of Qq, Qv */
    double *Qq, *Qv;        /* nq x nq each */
} jp_work;

int mb_jplanar_exact(const mb_mech *mech)
{
    /* a planar model's table has no sparse kernels exactly when it has Python forces
     * (mb_planar_mech, assemble.c) */
    return mech && mech->forces_q && mech->forces_qd && mech->sparse;
}

static void mcross(const double *a, const double *b, double *c)
{
    c[0] = 0.0, c[1] = -a[0] * b[2] + b[0] * a[2], c[2] = a[0] * b[1] - b[0] * a[1];
}

/* the values of the recursion at (z, z', z'') and the bodies' F_b, fs */
static void jp_values(const mb_jplanar *P, const double *z, const double *zd, const double *zdd,
                      double *pv)
{
    const mb_jtree *T = P->T;
    ptrdiff_t n = T->n;
    for (ptrdiff_t i = 0; i < n; i++) {
        double *w = pv + MB_JP_PV * i;
        int p = T->parent[i];
        const double *wp = p >= 0 ? pv + MB_JP_PV * p : NULL, *t = T->frame + 12 * i + 9,
                     *k = T->axis + 3 * i, *c = T->inertia + 10 * i + 1;
        double thp = wp ? wp[V_TH] : 0.0, cp = cos(thp), sp = sin(thp);
        double *d = w + V_D, *o = w + V_O, *u = w + V_U, *S = w + V_S;
        d[0] = cp * t[0] - sp * t[1], d[1] = sp * t[0] + cp * t[1];
        o[0] = (wp ? wp[V_O] : 0.0) + d[0], o[1] = (wp ? wp[V_O + 1] : 0.0) + d[1];
        double th = thp + P->off[i];
        if (T->type[i] == MB_JT_REVOLUTE) {
            th += z[i];
            u[0] = u[1] = 0.0;
            S[0] = 1.0, S[1] = o[1], S[2] = -o[0];
        } else {
            double ca = cos(th), sa = sin(th);
            u[0] = ca * k[0] - sa * k[1], u[1] = sa * k[0] + ca * k[1];
            S[0] = 0.0, S[1] = u[0], S[2] = u[1];
            o[0] += z[i] * u[0], o[1] += z[i] * u[1];
        }
        double ct = cos(th), st = sin(th), *r = w + V_R, *V = w + V_V, *A = w + V_A,
               *rd = w + V_RD, s[3], vs[3];
        w[V_TH] = th;
        r[0] = o[0] + ct * c[0] - st * c[1], r[1] = o[1] + st * c[0] + ct * c[1];
        for (int e = 0; e < 3; e++) s[e] = S[e] * zd[i], V[e] = (wp ? wp[V_V + e] : 0.0) + s[e];
        mcross(V, s, vs);
        for (int e = 0; e < 3; e++) A[e] = (wp ? wp[V_A + e] : 0.0) + S[e] * zdd[i] + vs[e];
        rd[0] = V[1] - V[0] * r[1], rd[1] = V[2] + V[0] * r[0];
        const double *in = T->inertia + 10 * i, *Q = P->Q + 3 * P->body[i];
        double *F = w + V_F;
        F[0] = in[0] * (A[1] - A[0] * r[1] - V[0] * rd[1]) - Q[0];
        F[1] = in[0] * (A[2] + A[0] * r[0] + V[0] * rd[0]) - Q[1];
        F[2] = in[6] * A[0] - Q[2];
        w[V_FS] = F[2] + r[0] * F[1] - r[1] * F[0], w[V_FS + 1] = F[0], w[V_FS + 2] = F[1];
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        int p = T->parent[i];
        for (int e = 0; p >= 0 && e < 3; e++)
            pv[MB_JP_PV * p + V_FS + e] += pv[MB_JP_PV * i + V_FS + e];
    }
}

/* the articulated inertias (world frame, about the origin): IA, U = IA S, D = S . U of
 * each body (Featherstone 2008, ch. 7); MB_RECOVERABLE unless every D > 0 */
static int jp_articulated(const mb_jtree *T, double *pv)
{
    ptrdiff_t n = T->n;
    for (ptrdiff_t i = 0; i < n; i++) {
        double *w = pv + MB_JP_PV * i, *r = w + V_R;
        const double *in = T->inertia + 10 * i;
        double m = in[0], J = in[6];
        double I[9] = {J + m * (r[0] * r[0] + r[1] * r[1]), -m * r[1], m * r[0],
                       -m * r[1], m, 0.0, m * r[0], 0.0, m};
        memcpy(w + V_IA, I, sizeof I);
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        double *w = pv + MB_JP_PV * i, *I = w + V_IA, *S = w + V_S, *U = w + V_AU;
        for (int e = 0; e < 3; e++)
            U[e] = I[3 * e] * S[0] + I[3 * e + 1] * S[1] + I[3 * e + 2] * S[2];
        double D = S[0] * U[0] + S[1] * U[1] + S[2] * U[2];
        if (!(D > 0.0))
            return MB_RECOVERABLE;
        w[V_AD] = D;
        int p = T->parent[i];
        for (int a = 0; p >= 0 && a < 3; a++)
            for (int b = 0; b < 3; b++)
                pv[MB_JP_PV * p + V_IA + 3 * a + b] += I[3 * a + b] - U[a] * U[b] / D;
    }
    return MB_OK;
}

/* x <- -M^-1 x by the articulated-body algorithm at rest (no bias forces): O(n) */
static void aba_solve_neg(const mb_jtree *T, const double *pv, double *pd, double *x)
{
    ptrdiff_t n = T->n;
    for (ptrdiff_t i = 0; i < n; i++) {
        double *g = pd + MB_JP_PD * i;
        g[D_PA] = g[D_PA + 1] = g[D_PA + 2] = 0.0;
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        const double *w = pv + MB_JP_PV * i, *S = w + V_S, *U = w + V_AU;
        double *g = pd + MB_JP_PD * i, *pa = g + D_PA;
        double u = x[i] - (S[0] * pa[0] + S[1] * pa[1] + S[2] * pa[2]);
        g[D_UU] = u;
        int p = T->parent[i];
        for (int e = 0; p >= 0 && e < 3; e++)
            pd[MB_JP_PD * p + D_PA + e] += pa[e] + U[e] * u / w[V_AD];
    }
    for (ptrdiff_t i = 0; i < n; i++) {  /* the accelerations a_i in D_PA */
        const double *w = pv + MB_JP_PV * i, *S = w + V_S, *U = w + V_AU;
        double *a = pd + MB_JP_PD * i + D_PA;
        int p = T->parent[i];
        const double *ap = p >= 0 ? pd + MB_JP_PD * p + D_PA : NULL;
        double a0[3] = {ap ? ap[0] : 0.0, ap ? ap[1] : 0.0, ap ? ap[2] : 0.0};
        double xi = (pd[MB_JP_PD * i + D_UU] - (U[0] * a0[0] + U[1] * a0[1] + U[2] * a0[2])) /
                    w[V_AD];
        for (int e = 0; e < 3; e++) a[e] = a0[e] + S[e] * xi;
        x[i] = -xi;
    }
}

/* the forward pass of the derivative along z_k (rate 0) or z'_k (rate 1): the bodies'
 * derivatives and dq, dq' */
static void jp_forward(const mb_jplanar *P, const double *z, const double *zd,
                       const double *zdd, int rate, ptrdiff_t k, jp_work *W)
{
    const mb_jtree *T = P->T;
    ptrdiff_t n = T->n;
    static const double zero[MB_JP_PD] = {0};
    /* bodies before k are outside k's subtree (parents precede children): zero */
    memset(W->pd, 0, (size_t)(MB_JP_PD * k) * sizeof(double));
    for (ptrdiff_t i = 0; i < k; i++) {
        int b = P->body[i];
        memset(W->dq + 3 * b, 0, 3 * sizeof(double));
        memset(W->dqd + 3 * b, 0, 3 * sizeof(double));
    }
    for (ptrdiff_t i = k; i < n; i++) {
        const double *w = W->pv + MB_JP_PV * i;
        double *g = W->pd + MB_JP_PD * i;
        int p = T->parent[i], b = P->body[i];
        const double *gp = p >= 0 ? W->pd + MB_JP_PD * p : zero;
        const double *o = w + V_O, *d = w + V_D, *u = w + V_U, *S = w + V_S, *V = w + V_V,
                     *A = w + V_A, *r = w + V_R, *rd = w + V_RD;
        double *dO = g + D_O, *dU = g + D_U, *dS = g + D_S, *dV = g + D_V, *dA = g + D_A,
               *dR = g + D_R, *dRD = g + D_RD, *dAB = g + D_AB;
        double dthp = gp[D_TH], hit = i == k ? 1.0 : 0.0;
        int rev = T->type[i] == MB_JT_REVOLUTE;
        g[D_TH] = dthp + (rev && !rate ? hit : 0.0);
        dO[0] = gp[D_O] - dthp * d[1], dO[1] = gp[D_O + 1] + dthp * d[0];
        if (rev) {
            dU[0] = dU[1] = 0.0;
            dS[0] = 0.0, dS[1] = dO[1], dS[2] = -dO[0];
        } else {
            dU[0] = -dthp * u[1], dU[1] = dthp * u[0];
            dS[0] = 0.0, dS[1] = dU[0], dS[2] = dU[1];
            double hz = rate ? 0.0 : hit;
            dO[0] += z[i] * dU[0] + hz * u[0], dO[1] += z[i] * dU[1] + hz * u[1];
        }
        dR[0] = dO[0] - g[D_TH] * (r[1] - o[1]), dR[1] = dO[1] + g[D_TH] * (r[0] - o[0]);
        double dzd = rate ? hit : 0.0, s[3], ds[3], c1[3], c2[3];
        for (int e = 0; e < 3; e++) {
            s[e] = S[e] * zd[i];
            ds[e] = dS[e] * zd[i] + S[e] * dzd;
            dV[e] = gp[D_V + e] + ds[e];
        }
        mcross(dV, s, c1);
        mcross(V, ds, c2);
        for (int e = 0; e < 3; e++) dA[e] = gp[D_A + e] + dS[e] * zdd[i] + c1[e] + c2[e];
        dRD[0] = dV[1] - dV[0] * r[1] - V[0] * dR[1];
        dRD[1] = dV[2] + dV[0] * r[0] + V[0] * dR[0];
        dAB[0] = dA[1] - dA[0] * r[1] - A[0] * dR[1] - dV[0] * rd[1] - V[0] * dRD[1];
        dAB[1] = dA[2] + dA[0] * r[0] + A[0] * dR[0] + dV[0] * rd[0] + V[0] * dRD[0];
        dAB[2] = dA[0];
        g[D_FS] = g[D_FS + 1] = g[D_FS + 2] = 0.0;
        W->dq[3 * b] = dR[0], W->dq[3 * b + 1] = dR[1], W->dq[3 * b + 2] = g[D_TH];
        W->dqd[3 * b] = dRD[0], W->dqd[3 * b + 1] = dRD[1], W->dqd[3 * b + 2] = dV[0];
    }
}

/* out += A x over the nonzero entries of x, each column on its row band */
static void band_gemv(ptrdiff_t nq, const double *A, const double *band, const double *x,
                      double *out)
{
    for (ptrdiff_t c = 0; c < nq; c++) {
        if (x[c] == 0.0)
            continue;
        const double *col = A + nq * c;
        for (ptrdiff_t r = (ptrdiff_t)band[2 * c]; r < (ptrdiff_t)band[2 * c + 1]; r++)
            out[r] += col[r] * x[c];
    }
}

/* the row band [lo, hi) of each column of A (nq x nq) */
static void bands_of(ptrdiff_t nq, const double *A, double *band)
{
    for (ptrdiff_t c = 0; c < nq; c++) {
        const double *col = A + nq * c;
        ptrdiff_t lo = 0, hi = nq;
        while (lo < nq && col[lo] == 0.0) lo++;
        while (hi > lo && col[hi - 1] == 0.0) hi--;
        band[2 * c] = (double)lo, band[2 * c + 1] = (double)hi;
    }
}

/* dID along one direction (after jp_forward): out (n) */
static void jp_backward(const mb_jplanar *P, int rate, jp_work *W, double *out)
{
    const mb_jtree *T = P->T;
    ptrdiff_t n = T->n, nq = 3 * n;
    memset(W->dQ, 0, (size_t)nq * sizeof(double));
    if (!rate)
        band_gemv(nq, W->Qq, W->bq, W->dq, W->dQ);
    band_gemv(nq, W->Qv, W->bv, W->dqd, W->dQ);
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        const double *w = W->pv + MB_JP_PV * i, *r = w + V_R, *F = w + V_F, *S = w + V_S,
                     *in = T->inertia + 10 * i, *dQ = W->dQ + 3 * P->body[i];
        double *g = W->pd + MB_JP_PD * i, *dR = g + D_R, *dAB = g + D_AB, *dS = g + D_S,
               *dFS = g + D_FS;
        double dF[3] = {in[0] * dAB[0] - dQ[0], in[0] * dAB[1] - dQ[1], in[6] * dAB[2] - dQ[2]};
        dFS[0] += dF[2] + dR[0] * F[1] + r[0] * dF[1] - dR[1] * F[0] - r[1] * dF[0];
        dFS[1] += dF[0], dFS[2] += dF[1];
        const double *fs = w + V_FS;
        out[i] = dS[0] * fs[0] + dS[1] * fs[1] + dS[2] * fs[2] + S[0] * dFS[0] + S[1] * dFS[1] +
                 S[2] * dFS[2];
        int p = T->parent[i];
        for (int e = 0; p >= 0 && e < 3; e++) W->pd[MB_JP_PD * p + D_FS + e] += dFS[e];
    }
}

int mb_jplanar_jac(const mb_jplanar *P, double t, const double *z, const double *zd,
                   const double *zdd, double *Jz, double *Jzd, ptrdiff_t ld, double *work)
{
    const mb_mech *me = P->mech;
    ptrdiff_t n = P->T->n, nq = 3 * n;
    jp_work W;
    W.pv = work;
    W.pd = W.pv + MB_JP_PV * n;
    W.dq = W.pd + MB_JP_PD * n;
    W.dqd = W.dq + nq;
    W.dQ = W.dqd + nq;
    W.bq = W.dQ + nq;
    W.bv = W.bq + 2 * nq;
    W.Qq = W.bv + 2 * nq;
    W.Qv = W.Qq + nq * nq;  /* + nq^2: mb_jplanar_work_size */
    int rc = me->forces_q(t, P->q, P->qd, W.Qq, nq, me->ctx);
    if (rc == MB_OK)
        rc = me->forces_qd(t, P->q, P->qd, W.Qv, nq, me->ctx);
    if (rc != MB_OK)
        return rc;
    bands_of(nq, W.Qq, W.bq);
    bands_of(nq, W.Qv, W.bv);
    jp_values(P, z, zd, zdd, W.pv);
    if ((rc = jp_articulated(P->T, W.pv)) != MB_OK)
        return rc;
    for (int rate = 0; rate < 2; rate++)
        for (ptrdiff_t k = 0; k < n; k++) {
            double *col = (rate ? Jzd : Jz) + ld * k;
            jp_forward(P, z, zd, zdd, rate, k, &W);
            jp_backward(P, rate, &W, col);
            aba_solve_neg(P->T, W.pv, W.pd, col);
            for (ptrdiff_t i = 0; i < n; i++)
                if (!isfinite(col[i]))
                    return MB_RECOVERABLE;
        }
    return MB_OK;
}
