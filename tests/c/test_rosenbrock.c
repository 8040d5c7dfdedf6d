/* Tests of the Rosenbrock family (csrc/methods/rosenbrock.c, tableaus_ros.c).
 *
 * (a) every table, converted back from the stored transformed form (a, c, m, mhat)
 *     to the defining coefficients of RN eqs 11a-11b (alpha_ij, gamma_ij, b_i,
 *     bhat_i), satisfies the Rosenbrock order conditions (RN eqs 36a-36h, general s)
 *     of its order to 1e-12, and its embedded formula those of its error order; the
 *     stored nodes alpha_i and gamma_i are the row sums; reused f and FSAL are legal;
 *     w2 satisfies the W-method conditions (order 2 for any J); rodas4 is stiffly
 *     accurate.
 * (b) ros4: the recomputed defining coefficients equal those printed in the RN paper,
 *     section 4, except for the sign of gamma_21, which is misprinted (+2.3419... in
 *     the paper; with + the order conditions fail: checked below); the paper's a_21
 *     is misprinted 0.2 (it is alpha_21 / gamma = 2).
 * (c) R(z) from the kernel's hook against closed forms: (1 - gamma z)^-s times the
 *     degree-s Taylor polynomial of (1 - gamma z)^s e^z for ros4 (order s), the
 *     L-stable 2-stage forms of ros2 and w2, and 1 + z b^T (I - z B)^-1 1 from the
 *     defining coefficients (forward substitution) for all four; L-stability
 *     |R(-1e8)| < 1e-6; |R(iy)| <= 1 on the imaginary axis (A-stability sample).
 * (d) fixed-step convergence order on a smooth non-autonomous nonlinear problem
 *     with known solution (analytic J and df/dt, and once with finite-difference
 *     df/dt); w2 also with a deliberately wrong, constant Jacobian.
 * (e) work counters: a Rosenbrock method evaluates J once per accepted step
 *     (rejected steps reuse it: njev == nsteps) and factors once per attempt
 *     (nlu == nsteps + nreject); w2 keeps J (njev < nsteps).
 * (f) the continuous extensions satisfy their order conditions in theta and end at b;
 *     the dense output hits y_new at theta = 1 and is accurate inside a step;
 *     ros4 and rodas4 with a mass matrix (nonsingular, and Robertson as an index-1
 *     DAE); ros2 refuses one.
 * (g) w2_mid (w2 plus a midpoint stage for an order-2 error estimate, issue 13): its
 *     embedded formula is of W-order 2 and of Rosenbrock order 3 with the stage at the
 *     midpoint, y_new is w2's; one step from the exact solution of the smooth problem
 *     of (d): w2's estimate is O(h^2) (order 1, the cause of its tol^-1/2 steps), w2_mid's
 *     is O(h^3), with the exact J equal to the true local error up to O(h^4) and O(h^3)
 *     with a wrong constant J; on VdP(1000) its steps grow like tol^-1/3 (w2: tol^-1/2).
 * Prints one line per check and "N passed, M failed". */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "driver.h"
#include "problems.h"
#include "rosenbrock.h"
#include "status.h"

#define SMAX MB_ROS_MAX_STAGES

/* ---------------- (a) tables and order conditions ---------------- */

typedef struct defining {
    int s;
    double gamma;
    double alpha[SMAX][SMAX], Gam[SMAX][SMAX], b[SMAX], bhat[SMAX];
} defining;

/* Gamma^-1 = diag(1/gamma) - C, inverted by forward substitution; alpha = A Gamma,
 * b = m Gamma, bhat = mhat Gamma */
static void to_defining(const mb_ros_tableau *T, defining *D)
{
    int s = T->s;
    double Gi[SMAX][SMAX];
    memset(D, 0, sizeof *D);
    D->s = s;
    D->gamma = T->gamma;
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++)
            Gi[i][j] = (i == j ? 1.0 / T->gamma : 0.0) - (j < i ? T->c[i * s + j] : 0.0);
    for (int j = 0; j < s; j++)         /* column j of Gamma: Gi * g = e_j */
        for (int i = 0; i < s; i++) {
            double r = (i == j) ? 1.0 : 0.0;
            for (int k = 0; k < i; k++)
                r -= Gi[i][k] * D->Gam[k][j];
            D->Gam[i][j] = r / Gi[i][i];
        }
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++) {
            double acc = 0.0;
            for (int k = 0; k < i; k++)
                acc += T->a[i * s + k] * D->Gam[k][j];
            D->alpha[i][j] = acc;
        }
    for (int j = 0; j < s; j++) {
        double acc = 0.0, acch = 0.0;
        for (int k = 0; k < s; k++) {
            acc += T->m[k] * D->Gam[k][j];
            acch += T->mhat[k] * D->Gam[k][j];
        }
        D->b[j] = acc;
        D->bhat[j] = acch;
    }
}

/* residuals of the 8 conditions of order <= 4 (HW II Table 7.1 = RN 36a-36h),
 * beta = alpha + Gamma below the diagonal, beta'_i = sum_{j<i} beta_ij */
static int order_residuals(const defining *D, const double *b, double *r)
{
    int s = D->s;
    double g = D->gamma, al[SMAX], bp[SMAX], B[SMAX][SMAX];
    for (int i = 0; i < s; i++) {
        al[i] = bp[i] = 0.0;
        for (int j = 0; j < s; j++) {
            B[i][j] = j < i ? D->alpha[i][j] + D->Gam[i][j] : 0.0;
            al[i] += D->alpha[i][j];
            bp[i] += B[i][j];
        }
    }
    double c[8] = {0};
    for (int i = 0; i < s; i++) {
        c[0] += b[i];
        c[1] += b[i] * bp[i];
        c[2] += b[i] * al[i] * al[i];
        c[4] += b[i] * al[i] * al[i] * al[i];
        for (int j = 0; j < i; j++) {
            c[3] += b[i] * B[i][j] * bp[j];
            c[5] += b[i] * al[i] * D->alpha[i][j] * bp[j];
            c[6] += b[i] * B[i][j] * al[j] * al[j];
            for (int k = 0; k < j; k++)
                c[7] += b[i] * B[i][j] * B[j][k] * bp[k];
        }
    }
    r[0] = c[0] - 1.0;                                          /* 36a */
    r[1] = c[1] - (0.5 - g);                                    /* 36b */
    r[2] = c[2] - 1.0 / 3;                                      /* 36c */
    r[3] = c[3] - (1.0 / 6 - g + g * g);                        /* 36d */
    r[4] = c[4] - 0.25;                                         /* 36e */
    r[5] = c[5] - (1.0 / 8 - g / 3);                            /* 36f */
    r[6] = c[6] - (1.0 / 12 - g / 3);                           /* 36g */
    r[7] = c[7] - (1.0 / 24 - g / 2 + 1.5 * g * g - g * g * g); /* 36h */
    return 8;
}

/* number of conditions for order p: 1, 2, 4, 8 */
static int n_conditions(int p)
{
    return p <= 1 ? 1 : p == 2 ? 2 : p == 3 ? 4 : 8;
}

static double max_abs(const double *r, int k)
{
    double m = 0.0;
    for (int i = 0; i < k; i++)
        m = fmax(m, fabs(r[i]));
    return m;
}

static void check_table(const mb_ros_tableau *T)
{
    defining D;
    to_defining(T, &D);
    int s = T->s;
    double r[8];
    order_residuals(&D, D.b, r);
    double res = max_abs(r, n_conditions(T->order));
    CHECK(res < 1e-12, "%s: order-%d conditions of y_new, max residual %.2e", T->name, T->order, res);
    if (T->order < 4) {
        double next = max_abs(r + n_conditions(T->order),
                              n_conditions(T->order + 1) - n_conditions(T->order));
        CHECK(next > 1e-4, "%s: y_new is not of order %d (residual %.2e)", T->name, T->order + 1,
              next);
    }
    order_residuals(&D, D.bhat, r);
    /* w2_mid: error_order 2 is the W-method order of bhat; with the exact J it is 3 */
    int eo = T == &mb_ros_w2_mid ? 3 : T->error_order;
    res = max_abs(r, n_conditions(eo));
    CHECK(res < 1e-12, "%s: embedded order-%d conditions, max residual %.2e", T->name, eo, res);
    if (eo < 4) {
        double next = max_abs(r + n_conditions(eo), n_conditions(eo + 1) - n_conditions(eo));
        CHECK(next > 1e-4, "%s: embedded formula is not of order %d (residual %.2e)", T->name,
              eo + 1, next);
    }
    /* stored nodes and gamma_i are the row sums; gamma_ii = gamma */
    double dn = 0.0, dg = 0.0, dd = 0.0;
    for (int i = 0; i < s; i++) {
        double sa = 0.0, sg = 0.0;
        for (int j = 0; j < s; j++) {
            sa += D.alpha[i][j];
            sg += D.Gam[i][j];
        }
        dn = fmax(dn, fabs(sa - T->alpha[i]));
        dg = fmax(dg, fabs(sg - T->gam[i]));
        dd = fmax(dd, fabs(D.Gam[i][i] - T->gamma));
    }
    CHECK(dn < 1e-12 && dg < 1e-12 && dd < 1e-14,
          "%s: alpha_i, gamma_i are the row sums (%.1e, %.1e), diagonal gamma (%.1e)", T->name,
          dn, dg, dd);
    /* reused f evaluations and FSAL are legal */
    int ok = T->new_f[0] == 1 && T->alpha[0] == 0.0;
    for (int i = 1; i < s; i++)
        if (!T->new_f[i]) {
            ok = ok && T->alpha[i] == T->alpha[i - 1] && T->a[i * s + i - 1] == 0.0;
            for (int j = 0; j < i - 1; j++)
                ok = ok && T->a[i * s + j] == T->a[(i - 1) * s + j];
        }
    if (T->fsal) {
        ok = ok && T->new_f[s - 1] && T->alpha[s - 1] == 1.0 && T->m[s - 1] == 0.0;
        for (int j = 0; j < s - 1; j++)
            ok = ok && fabs(T->a[(s - 1) * s + j] - T->m[j]) < 1e-15;
    }
    CHECK(ok, "%s: stages that reuse f repeat the previous argument; FSAL stage is at y_new",
          T->name);
}

static void check_w_method(const mb_ros_tableau *T)
{
    defining D;
    to_defining(T, &D);
    int s = T->s;
    double sb = 0.0, sba = 0.0, sbg = 0.0, sbh = 0.0;
    for (int i = 0; i < s; i++) {
        sb += D.b[i];
        sbh += D.bhat[i];
        for (int j = 0; j <= i; j++) {
            sba += D.b[i] * D.alpha[i][j];
            sbg += D.b[i] * D.Gam[i][j];
        }
    }
    double res = fmax(fabs(sb - 1.0), fmax(fabs(sba - 0.5), fabs(sbg)));
    CHECK(res < 1e-14, "%s: W-method order-2 conditions (sum b = 1, sum b alpha = 1/2, "
          "sum b gamma = 0), max residual %.2e", T->name, res);
    CHECK(fabs(sbh - 1.0) < 1e-14, "%s: embedded W-method formula of order 1 (sum bhat - 1 = %.1e)",
          T->name, sbh - 1.0);
    CHECK(fabs(D.b[0] - 0.5) < 1e-15 && fabs(D.b[1] - 0.5) < 1e-15 &&
          fabs(D.Gam[1][0] + 2.0 * T->gamma) < 1e-14 && fabs(D.alpha[1][0] - 1.0) < 1e-15,
          "%s: defining form b = (1/2, 1/2), gamma_21 = -2 gamma, alpha_21 = 1 (Verwer's ROS2)",
          T->name);
}

static void check_stiffly_accurate(const mb_ros_tableau *T)
{
    defining D;
    to_defining(T, &D);
    int s = T->s;
    double dev = fabs(T->alpha[s - 1] - 1.0), devh = 0.0;
    for (int j = 0; j < s; j++) {
        dev = fmax(dev, fabs(D.b[j] - (D.alpha[s - 1][j] + D.Gam[s - 1][j])));
        devh = fmax(devh, fabs(D.bhat[j] - (D.alpha[s - 2][j] + D.Gam[s - 2][j])));
    }
    CHECK(dev < 1e-13 && devh < 1e-13,
          "%s: stiffly accurate, b_j = alpha_sj + gamma_sj (%.1e), bhat_j = beta_{s-1,j} (%.1e)",
          T->name, dev, devh);
}

/* dense output coefficients in the K basis: y(theta) = y + sum_k theta^k sum_i bk[k][i] K_i */
static int dense_b(const mb_ros_tableau *T, const defining *D, double bk[4][SMAX])
{
    int s = T->s, deg = T->dense_deg;
    double Pu[4][SMAX];
    for (int k = 0; k < deg; k++)
        for (int j = 0; j < s; j++) {
            if (T->P)
                Pu[k][j] = T->P[k * s + j];
            else if (k == 0)
                Pu[k][j] = T->m[j] + T->d2[j];
            else if (k == 1)
                Pu[k][j] = T->d3[j] - T->d2[j];
            else
                Pu[k][j] = -T->d3[j];
        }
    for (int k = 0; k < deg; k++)      /* b_k = P_k Gamma */
        for (int j = 0; j < s; j++) {
            double acc = 0.0;
            for (int i = 0; i < s; i++)
                acc += Pu[k][i] * D->Gam[i][j];
            bk[k][j] = acc;
        }
    return deg;
}

/* the continuous extension satisfies, as polynomials in theta, sum b(theta) = theta,
 * sum b(theta) beta' = theta^2/2 - gamma theta (order 2), and for order 3 also
 * sum b(theta) alpha^2 = theta^3/3, sum b(theta) beta beta' = theta^3/6 - gamma theta^2
 * + gamma^2 theta; ends at b */
static void check_dense_coefficients(const mb_ros_tableau *T, int q, int alpha2_too)
{
    defining D;
    to_defining(T, &D);
    int s = T->s;
    double bk[4][SMAX], g = T->gamma;
    int deg = dense_b(T, &D, bk);
    double al[SMAX], bp[SMAX], B[SMAX][SMAX];
    for (int i = 0; i < s; i++) {
        al[i] = bp[i] = 0.0;
        for (int j = 0; j < s; j++) {
            B[i][j] = j < i ? D.alpha[i][j] + D.Gam[i][j] : 0.0;
            al[i] += D.alpha[i][j];
            bp[i] += B[i][j];
        }
    }
    /* target coefficients of theta^1..theta^3 */
    const double tgt[4][3] = {{1, 0, 0}, {-g, 0.5, 0}, {0, 0, 1.0 / 3}, {g * g, -g, 1.0 / 6}};
    double dev = 0.0, end = 0.0;
    int nc = q >= 3 ? 4 : alpha2_too ? 3 : 2;
    for (int k = 0; k < 3; k++) {
        double v[4] = {0, 0, 0, 0};
        for (int i = 0; i < s; i++) {
            double b = k < deg ? bk[k][i] : 0.0;
            v[0] += b;
            v[1] += b * bp[i];
            v[2] += b * al[i] * al[i];
            for (int j = 0; j < i; j++)
                v[3] += b * B[i][j] * bp[j];
        }
        for (int c = 0; c < nc; c++)
            dev = fmax(dev, fabs(v[c] - tgt[c][k]));
    }
    for (int j = 0; j < s; j++) {
        double acc = 0.0;
        for (int k = 0; k < deg; k++)
            acc += bk[k][j];
        end = fmax(end, fabs(acc - D.b[j]));
    }
    CHECK(dev < 1e-12 && end < 1e-13, "%s: continuous extension of order %d%s (max residual "
          "%.1e), b(1) = b (%.1e)", T->name, q, alpha2_too ? " plus sum b alpha^2 = theta^3/3" : "",
          dev, end);
}

/* RN paper section 4, first table, as printed except the sign of gamma_21 */
static void check_ros4_paper(void)
{
    static const double al[4][4] = {
        {0, 0, 0, 0},
        {1.14563212, 0, 0, 0},
        {0.520920789130629029328516, 0.134294186842504800149232, 0, 0},
        {0.520920789130629029328516, 0.134294186842504800149232, 0.0, 0}};
    static const double ga[4][4] = {
        {0.57281606, 0, 0, 0},
        {-2.341993127112013949170520, 0.57281606, 0, 0}, /* printed +2.3419931271... */
        {-0.027333746543489836196505, 0.213811650836699689867472, 0.57281606, 0},
        {-0.259083837785510222112641, -0.190595807732311751616358, -0.228031035973133829477744,
         0.57281606}};
    static const double b[4] = {0.324534707891734513474196, 0.049086544787523308684633, 0.0,
                                0.626378747320742177841171};
    static const double bh[4] = {0.520920789130629029328516, 0.144549714665364599584681,
                                 0.124559686414702049774897, 0.209969809789304321311906};
    defining D;
    to_defining(&mb_ros_ros4, &D);
    double dev = 0.0;
    for (int i = 0; i < 4; i++) {
        dev = fmax(dev, fabs(D.b[i] - b[i]));
        dev = fmax(dev, fabs(D.bhat[i] - bh[i]));
        for (int j = 0; j < 4; j++) {
            dev = fmax(dev, fabs(D.alpha[i][j] - al[i][j]));
            dev = fmax(dev, fabs(D.Gam[i][j] - ga[i][j]));
        }
    }
    CHECK(dev < 1e-14, "ros4: transformed table reproduces the paper's alpha_ij, gamma_ij, b_i, "
          "bhat_i (max deviation %.2e)", dev);
    CHECK(fabs(mb_ros_ros4.a[4] - 1.14563212 / 0.57281606) < 1e-15,
          "ros4: a_21 = alpha_21 / gamma = 2 (the paper prints 0.2)");
    /* the printed sign of gamma_21 breaks the conditions */
    D.Gam[1][0] = -D.Gam[1][0];
    double r[8];
    order_residuals(&D, D.b, r);
    CHECK(max_abs(r, 8) > 1e-2, "ros4: with gamma_21 as printed (+2.34...) eqs 36 fail "
          "(max residual %.2e), so the printed sign is a misprint", max_abs(r, 8));
    /* print the residuals of 36a-36h */
    to_defining(&mb_ros_ros4, &D);
    order_residuals(&D, D.b, r);
    printf("      ros4 residuals 36a-36h:");
    for (int i = 0; i < 8; i++)
        printf(" %.1e", r[i]);
    printf("\n");
}

/* ---------------- (c) stability functions ---------------- */

static double complex R_hook(const mb_method *m, double complex z)
{
    double rr, ri;
    m->amplification(m, creal(z), cimag(z), &rr, &ri);
    return rr + ri * I;
}

/* 1 + z b^T (I - z B)^-1 1, B = alpha + Gamma (lower triangular): forward substitution */
static double complex R_defining(const mb_ros_tableau *T, double complex z)
{
    defining D;
    to_defining(T, &D);
    double complex x[SMAX], R = 1.0;
    for (int i = 0; i < T->s; i++) {
        double complex r = 1.0;
        for (int j = 0; j < i; j++)
            r += z * (D.alpha[i][j] + D.Gam[i][j]) * x[j];
        x[i] = r / (1.0 - z * D.Gam[i][i]);
        R += z * D.b[i] * x[i];
    }
    return R;
}

/* (1 - g z)^-s * Taylor_s((1 - g z)^s e^z): the stability function of an s-stage
 * method of order >= s with single pole 1/g (HW II, IV.6) */
static double complex R_single_pole(int s, double g, double complex z)
{
    double binom = 1.0, coef[9] = {0};
    for (int j = 0; j <= s; j++) {          /* (1 - g z)^s = sum binom(s,j) (-g)^j z^j */
        double cj = binom * pow(-g, j);
        double fact = 1.0;
        for (int k = j; k <= s; k++) {      /* times z^(k-j)/(k-j)! */
            coef[k] += cj / fact;
            fact *= (double)(k - j + 1);
        }
        binom = binom * (double)(s - j) / (double)(j + 1);
    }
    double complex P = 0.0;
    for (int k = s; k >= 0; k--)
        P = P * z + coef[k];
    return P / cpow(1.0 - g * z, s);
}

static void check_stability(void)
{
    const mb_method *ms[] = {&mb_method_ros4, &mb_method_ros2, &mb_method_rodas4, &mb_method_w2};
    const double complex zs[] = {-0.5, 0.3, -2.0 + 1.0 * I, 1.5 * I, -10.0 - 7.0 * I, -300.0,
                                 0.7 + 0.2 * I};
    for (int k = 0; k < 4; k++) {
        const mb_method *m = ms[k];
        const mb_ros_tableau *T = m->data;
        double dev = 0.0, dev2 = 0.0;
        for (size_t i = 0; i < sizeof zs / sizeof zs[0]; i++) {
            double complex R = R_hook(m, zs[i]);
            dev = fmax(dev, cabs(R - R_defining(T, zs[i])) / fmax(1.0, cabs(R)));
            double complex Rc;
            if (m == &mb_method_ros4)
                Rc = R_single_pole(4, T->gamma, zs[i]);
            else if (m == &mb_method_rodas4)
                Rc = R_defining(T, zs[i]);
            else  /* ros2, w2: (1 + (1 - 2 g) z) / (1 - g z)^2, the z^2 term vanishes */
                Rc = (1.0 + (1.0 - 2.0 * T->gamma) * zs[i]) / cpow(1.0 - T->gamma * zs[i], 2);
            dev2 = fmax(dev2, cabs(R - Rc) / fmax(1.0, cabs(R)));
        }
        CHECK(dev < 1e-13, "%s: R(z) of the kernel = 1 + z b^T (I - z B)^-1 1 (max rel. dev %.1e)",
              m->name, dev);
        CHECK(dev2 < 1e-13, "%s: R(z) = closed form (max rel. dev %.1e)", m->name, dev2);
        double Rinf = cabs(R_hook(m, -1e8));
        CHECK(Rinf < 1e-6, "%s: L-stable, |R(-1e8)| = %.2e", m->name, Rinf);
        double rmax = 0.0;
        for (int i = 0; i <= 2000; i++) {
            double y = pow(10.0, -3.0 + 9.0 * i / 2000.0);
            rmax = fmax(rmax, cabs(R_hook(m, y * I)));
        }
        CHECK(rmax <= 1.0 + 1e-12, "%s: |R(iy)| <= 1 for 1e-3 <= y <= 1e6 (max %.15f)", m->name,
              rmax);
        double rneg = 0.0;
        for (int i = 0; i <= 2000; i++)
            rneg = fmax(rneg, cabs(R_hook(m, -pow(10.0, -3.0 + 11.0 * i / 2000.0))));
        CHECK(rneg <= 1.0, "%s: |R(x)| <= 1 for -1e8 <= x <= -1e-3 (max %.15f)", m->name, rneg);
    }
    /* ros4 is L-stable only up to the 8 printed digits of gamma: R(inf) = L_4(1/gamma) */
    double x = 1.0 / 0.57281606;
    double L4 = (x * x * x * x - 16 * x * x * x + 72 * x * x - 96 * x + 24) / 24.0;
    double Rinf = creal(R_hook(&mb_method_ros4, -1e12));
    CHECK(fabs(Rinf - L4) < 1e-10 && fabs(L4) < 1e-8,
          "ros4: R(inf) = L_4(1/gamma) = %.3e (kernel %.3e)", L4, Rinf);
}

/* ---------------- (d) convergence order ---------------- */

/* y1' = -2 y1 + y1 y2 + g1(t), y2' = -y2 - y1^2 + g2(t), exact (cos t, sin 2t) */
typedef struct { int wrong_jac; } na_ctx;

static int na_rhs(double t, const double *y, double *f, void *ctx)
{
    (void)ctx;
    double g1 = -sin(t) + 2.0 * cos(t) - cos(t) * sin(2.0 * t);
    double g2 = 2.0 * cos(2.0 * t) + sin(2.0 * t) + cos(t) * cos(t);
    f[0] = -2.0 * y[0] + y[0] * y[1] + g1;
    f[1] = -y[1] - y[0] * y[0] + g2;
    return 0;
}

static int na_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t;
    const na_ctx *c = ctx;
    double y0 = c && c->wrong_jac ? 1.0 : y[0], y1 = c && c->wrong_jac ? 0.0 : y[1];
    if (c && c->wrong_jac) {  /* J at (t0, y0) = (0, (1, 0)), held constant, and scaled */
        J[0] = 1.3 * (-2.0 + y1); J[ld] = 1.3 * y0;
        J[1] = 1.3 * (-2.0 * y0); J[ld + 1] = 1.3 * -1.0;
        return 0;
    }
    J[0] = -2.0 + y1;  J[ld] = y0;
    J[1] = -2.0 * y0;  J[ld + 1] = -1.0;
    return 0;
}

static int na_dfdt(double t, const double *y, double *ft, void *ctx)
{
    (void)y; (void)ctx;
    ft[0] = -cos(t) - 2.0 * sin(t) + sin(t) * sin(2.0 * t) - 2.0 * cos(t) * cos(2.0 * t);
    ft[1] = -5.0 * sin(2.0 * t) + 2.0 * cos(2.0 * t);
    return 0;
}

static void options_default(mb_options *o, const double *atol, double rtol)
{
    memset(o, 0, sizeof *o);
    o->rtol = rtol;
    o->atol = atol;
    o->controller = MB_CONTROLLER_PI;
}

static double fixed_error(const mb_method *m, mb_problem *p, int N, double T1)
{
    double y0[2] = {1.0, 0.0}, atol[2] = {1e-6, 1e-6};
    mb_options o;
    options_default(&o, atol, 1e-6);
    o.h = T1 / N;
    mb_result r;
    int rc = mb_driver_run(m, p, 0.0, T1, y0, &o, &r);
    double e = INFINITY;
    if (rc == MB_OK) {
        const double *y = r.y + (r.nt - 1) * 2;
        e = fmax(fabs(y[0] - cos(T1)), fabs(y[1] - sin(2.0 * T1)));
    }
    mb_result_free(&r);
    return e;
}

static double fitted_order(const mb_method *m, mb_problem *p, const int *Ns, int k, double T1)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    printf("      %s errors:", m->name);
    for (int i = 0; i < k; i++) {
        double e = fixed_error(m, p, Ns[i], T1);
        printf(" %.2e", e);
        double x = log(T1 / Ns[i]), y = log(e);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    printf("\n");
    return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

static void check_orders(void)
{
    const int Ns[] = {20, 40, 80, 160, 320};
    const mb_method *ms[] = {&mb_method_ros4, &mb_method_ros2, &mb_method_rodas4, &mb_method_w2};
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2; p.rhs = na_rhs; p.jac = na_jac; p.dfdt = na_dfdt;
    const int N2[] = {40, 80, 160, 320, 640};  /* order-2 methods: finer, past the pre-asymptotic range */
    for (int k = 0; k < 4; k++) {
        double q = fitted_order(ms[k], &p, ms[k]->order == 2 ? N2 : Ns, 5, 2.0);
        CHECK(fabs(q - ms[k]->order) < 0.25, "%s: fixed-step order %.2f (expected %d), analytic "
              "df/dt", ms[k]->name, q, ms[k]->order);
    }
    p.dfdt = NULL;
    for (int k = 0; k < 4; k++) {
        double q = fitted_order(ms[k], &p, ms[k]->order == 2 ? N2 : Ns, 4, 2.0);
        CHECK(fabs(q - ms[k]->order) < 0.25, "%s: fixed-step order %.2f with finite-difference "
              "df/dt", ms[k]->name, q);
    }
    /* a wrong constant Jacobian: w2 keeps order 2, ros4 drops to order 1 or 2 */
    na_ctx wrong = {1};
    p.ctx = &wrong;
    p.dfdt = na_dfdt;
    double q = fitted_order(&mb_method_w2, &p, N2, 5, 2.0);
    CHECK(fabs(q - 2.0) < 0.25, "w2: order %.2f with a wrong constant Jacobian", q);
    q = fitted_order(&mb_method_ros4, &p, Ns, 5, 2.0);
    CHECK(q < 3.0, "ros4 (not a W-method) loses its order with a wrong Jacobian: %.2f", q);
}

/* ---------------- (e) work counters ---------------- */

static void check_counters(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    p.rhs = mb_test_problem_find("vdp1000");
    p.jac = mb_test_problem_jac("vdp1000");
    double y0[2] = {2.0, 0.0}, atol[2] = {1e-6, 1e-6};
    const mb_method *ms[] = {&mb_method_ros4, &mb_method_ros2, &mb_method_rodas4, &mb_method_w2};
    for (int k = 0; k < 4; k++) {
        mb_options o;
        options_default(&o, atol, 1e-5);
        o.first_step = 0.05;  /* too large: the first step is rejected (and retried with the same J) */
        mb_result r;
        int rc = mb_driver_run(ms[k], &p, 0.0, 2.0, y0, &o, &r);
        mb_stats *st = &r.stats;
        printf("      %s VdP(1000) on [0, 2]: nsteps %ld nreject %ld nfail %ld nfev %ld njev %ld "
               "nlu %ld\n", ms[k]->name, st->nsteps, st->nreject, st->nfail, st->nfev, st->njev,
               st->nlu);
        CHECK(rc == MB_OK && st->nreject > 0, "%s: VdP run ok with rejected steps (%ld)",
              ms[k]->name, st->nreject);
        if (ms[k] != &mb_method_w2) {
            CHECK(st->njev == st->nsteps && st->nlu == st->nsteps + st->nreject + st->nfail,
                  "%s: one J per accepted step (njev %ld = nsteps %ld), rejected steps refactor "
                  "only (nlu %ld = %ld)", ms[k]->name, st->njev, st->nsteps, st->nlu,
                  st->nsteps + st->nreject + st->nfail);
        } else {
            CHECK(st->njev < st->nsteps / 2 && st->njev >= st->nreject / 2,
                  "w2: keeps J across steps (njev %ld, nsteps %ld)", st->njev, st->nsteps);
        }
        mb_result_free(&r);
    }
}

/* ---------------- (f) dense output, mass matrices ---------------- */

static void check_dense(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2; p.rhs = na_rhs; p.jac = na_jac; p.dfdt = na_dfdt;
    double y0[2] = {1.0, 0.0}, atol[2] = {1e-8, 1e-8};
    const mb_method *ms[] = {&mb_method_ros4, &mb_method_ros2, &mb_method_rodas4, &mb_method_w2};
    for (int k = 0; k < 4; k++) {
        mb_options o;
        options_default(&o, atol, 1e-6);
        o.dense_output = 1;
        mb_result r;
        int rc = mb_driver_run(ms[k], &p, 0.0, 2.0, y0, &o, &r);
        double end_dev = 0.0, err = 0.0;
        double yv[2];
        for (ptrdiff_t i = 0; i < r.nsteps_d; i++) {
            const double *C = r.d_c + r.d_off[i];
            mb_dense_eval(2, r.d_deg[i], C, 1.0, yv);
            const double *yn = r.y + (i + 1) * 2;
            end_dev = fmax(end_dev, fmax(fabs(yv[0] - yn[0]), fabs(yv[1] - yn[1])));
            for (int q = 1; q < 8; q++) {
                double th = q / 8.0, t = r.d_t[i] + th * r.d_h[i];
                mb_dense_eval(2, r.d_deg[i], C, th, yv);
                err = fmax(err, fmax(fabs(yv[0] - cos(t)), fabs(yv[1] - sin(2.0 * t))));
            }
        }
        const mb_ros_tableau *T = ms[k]->data;
        CHECK(rc == MB_OK && end_dev < 1e-14 && r.nsteps_d > 0 && r.d_deg[0] == T->dense_deg,
              "%s: dense polynomial of degree %d ends at y_new (%.1e)", ms[k]->name,
              T->dense_deg, end_dev);
        CHECK(err < 1e-4, "%s: dense output within %.1e of the solution inside steps",
              ms[k]->name, err);
        mb_result_free(&r);
    }
}

/* M y' = M g(t, y) with g the problem above: same solution */
static const double MM[4] = {2.0, 0.5, 1.0, 3.0};   /* column-major [[2, 1], [0.5, 3]] */

static int mass_rhs(double t, const double *y, double *f, void *ctx)
{
    double g[2];
    na_rhs(t, y, g, ctx);
    f[0] = MM[0] * g[0] + MM[2] * g[1];
    f[1] = MM[1] * g[0] + MM[3] * g[1];
    return 0;
}

static int mass_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    double G[4];
    na_jac(t, y, G, 2, ctx);
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++)
            J[j * ld + i] = MM[i] * G[j * 2] + MM[2 + i] * G[j * 2 + 1];
    return 0;
}

/* Robertson as an index-1 DAE: y3 = 1 - y1 - y2, M = diag(1, 1, 0) */
static int rob_dae(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
    f[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] * y[1];
    f[2] = y[0] + y[1] + y[2] - 1.0;
    return 0;
}

static int rob_dae_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)ctx;
    J[0] = -0.04;  J[ld] = 1e4 * y[2];                   J[2 * ld] = 1e4 * y[1];
    J[1] = 0.04;   J[ld + 1] = -1e4 * y[2] - 6e7 * y[1]; J[2 * ld + 1] = -1e4 * y[1];
    J[2] = 1.0;    J[ld + 2] = 1.0;                      J[2 * ld + 2] = 1.0;
    return 0;
}

static void check_mass(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2; p.rhs = mass_rhs; p.jac = mass_jac; p.mass = MM;
    double y0[2] = {1.0, 0.0}, atol[3] = {1e-10, 1e-10, 1e-10};
    mb_options o;
    options_default(&o, atol, 1e-8);
    mb_result r;
    int rc = mb_driver_run(&mb_method_rodas4, &p, 0.0, 2.0, y0, &o, &r);
    const double *y = r.y + (r.nt - 1) * 2;
    double e = fmax(fabs(y[0] - cos(2.0)), fabs(y[1] - sin(4.0)));
    CHECK(rc == MB_OK && e < 1e-7, "rodas4: M y' = f with a nonsingular M, error %.2e at "
          "rtol 1e-8 (%ld steps)", e, r.stats.nsteps);
    mb_result_free(&r);
    rc = mb_driver_run(&mb_method_ros4, &p, 0.0, 2.0, y0, &o, &r);
    y = r.y + (r.nt - 1) * 2;
    e = fmax(fabs(y[0] - cos(2.0)), fabs(y[1] - sin(4.0)));
    CHECK(rc == MB_OK && e < 1e-7, "ros4: M y' = f with a nonsingular M, error %.2e at "
          "rtol 1e-8 (%ld steps)", e, r.stats.nsteps);
    mb_result_free(&r);
    /* the other methods refuse a mass matrix */
    rc = mb_driver_run(&mb_method_ros2, &p, 0.0, 2.0, y0, &o, &r);
    CHECK(rc == MB_ERR_NOT_SUPPORTED, "ros2 refuses a mass matrix: %s", r.message);
    mb_result_free(&r);

    /* Robertson: DAE form vs the ODE at tight tolerance */
    static const double Mrob[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
    double z0[3] = {1.0, 0.0, 0.0}, yref[3], ydae[3];
    mb_problem q;
    memset(&q, 0, sizeof q);
    q.n = 3; q.rhs = mb_test_problem_find("robertson"); q.jac = mb_test_problem_jac("robertson");
    options_default(&o, atol, 1e-10);
    rc = mb_driver_run(&mb_method_rodas4, &q, 0.0, 100.0, z0, &o, &r);
    memcpy(yref, r.y + (r.nt - 1) * 3, sizeof yref);
    mb_result_free(&r);
    double atol6[3] = {1e-6, 1e-10, 1e-6};
    q.rhs = rob_dae; q.jac = rob_dae_jac; q.mass = Mrob;
    options_default(&o, atol6, 1e-6);
    const mb_method *dm[] = {&mb_method_rodas4, &mb_method_ros4};
    for (int k = 0; k < 2; k++) {
        int rc2 = mb_driver_run(dm[k], &q, 0.0, 100.0, z0, &o, &r);
        memcpy(ydae, r.y + (r.nt - 1) * 3, sizeof ydae);
        double dev = 0.0;
        for (int i = 0; i < 3; i++)
            dev = fmax(dev, fabs(ydae[i] - yref[i]) / (atol6[i] + 1e-6 * fabs(yref[i])));
        CHECK(rc == MB_OK && rc2 == MB_OK && dev < 10.0 &&
              fabs(ydae[0] + ydae[1] + ydae[2] - 1.0) < 1e-12,
              "%s: Robertson as index-1 DAE (M = diag(1,1,0)) at rtol 1e-6 agrees with the ODE "
              "to %.2f x tolerance at t = 100, constraint %.1e (%ld steps)", dm[k]->name, dev,
              ydae[0] + ydae[1] + ydae[2] - 1.0, r.stats.nsteps);
        mb_result_free(&r);
    }
}


/* ---------------- (g) w2_mid: an error estimate of order 2 ---------------- */

/* sums over the W-method trees of order <= 3 with weights w (defining form, gamma_ij
 * including the diagonal): sum w, sum w alpha_ij, sum w gamma_ij, sum w alpha_i^2,
 * sum w alpha_ij alpha_jk, sum w alpha_ij gamma_jk, sum w gamma_ij alpha_jk,
 * sum w gamma_ij gamma_jk */
static void w_tree_sums(const defining *D, const double *w, double v[8])
{
    int s = D->s;
    double al[SMAX], ga[SMAX];
    for (int i = 0; i < s; i++) {
        al[i] = ga[i] = 0.0;
        for (int j = 0; j < s; j++) {
            al[i] += D->alpha[i][j];
            ga[i] += D->Gam[i][j];
        }
    }
    memset(v, 0, 8 * sizeof(double));
    for (int i = 0; i < s; i++) {
        v[0] += w[i];
        v[1] += w[i] * al[i];
        v[2] += w[i] * ga[i];
        v[3] += w[i] * al[i] * al[i];
        for (int j = 0; j < s; j++) {
            v[4] += w[i] * D->alpha[i][j] * al[j];
            v[5] += w[i] * D->alpha[i][j] * ga[j];
            v[6] += w[i] * D->Gam[i][j] * al[j];
            v[7] += w[i] * D->Gam[i][j] * ga[j];
        }
    }
}

static void check_w2_mid_table(void)
{
    const mb_ros_tableau *T = &mb_ros_w2_mid, *W = &mb_ros_w2;
    defining D;
    to_defining(T, &D);
    double v[8];
    w_tree_sums(&D, D.bhat, v);
    double res = fmax(fabs(v[0] - 1.0), fmax(fabs(v[1] - 0.5), fabs(v[2])));
    CHECK(res < 1e-14, "w2_mid: bhat satisfies the W-method order-2 conditions (max residual "
          "%.1e)", res);
    CHECK(fabs(v[3] - 1.0 / 3) < 1e-14 && fabs(v[4] - 1.0 / 6) < 1e-14,
          "w2_mid: sum bhat alpha^2 = 1/3, sum bhat alpha_ij alpha_jk = 1/6 (%.1e, %.1e)",
          v[3] - 1.0 / 3, v[4] - 1.0 / 6);
    CHECK(fabs(v[5]) > 0.1 && fabs(v[6]) > 0.1 && fabs(v[7]) > 0.1,
          "w2_mid: bhat is not of W-order 3 (trees with the matrix: %.3f %.3f %.3f)", v[5],
          v[6], v[7]);
    double bh[3] = {1.0 / 6, 1.0 / 6, 2.0 / 3}, dev = 0.0;
    for (int i = 0; i < 3; i++)
        dev = fmax(dev, fabs(D.bhat[i] - bh[i]));
    dev = fmax(dev, fabs(D.alpha[2][0] - 0.25) + fabs(D.alpha[2][1] - 0.25));
    CHECK(dev < 1e-14 && T->alpha[2] == 0.5 && T->gam[2] == 0.0,
          "w2_mid: third stage at (t + h/2, (y + y_new)/2), bhat = (1/6, 1/6, 2/3) (%.1e)",
          dev);
    /* y_new, its first two stages and its continuous extension are w2's */
    double same = fabs(T->m[2]) + fabs(T->P[2]) + fabs(T->P[5]);
    for (int i = 0; i < 2; i++) {
        same += fabs(T->m[i] - W->m[i]) + fabs(T->alpha[i] - W->alpha[i]) +
                fabs(T->gam[i] - W->gam[i]) + fabs(T->P[i] - W->P[i]) +
                fabs(T->P[3 + i] - W->P[2 + i]);
        for (int j = 0; j < 2; j++)
            same += fabs(T->a[i * 3 + j] - W->a[i * 2 + j]) + fabs(T->c[i * 3 + j] - W->c[i * 2 + j]);
    }
    CHECK(same == 0.0 && T->gamma == W->gamma && T->w_method && !T->fsal,
          "w2_mid: y_new, stages 1-2 and the continuous extension are w2's (%.1e)", same);
}

/* one step of m from the exact solution at t0 of the problem of (d): the true local
 * error and the estimate (max norms) */
static int one_step(const mb_method *m, mb_problem *p, double t0, double h, double *le,
                    double *est)
{
    mb_stats stats;
    memset(&stats, 0, sizeof stats);
    char msg[256] = "";
    double y0[2] = {cos(t0), sin(2.0 * t0)}, f0[2], f1[2], y_new[2], err[2];
    double atol[2] = {1e-6, 1e-6};
    double *work = calloc(m->work_size(p, m->data) + 1, sizeof(double));
    if (!work)
        return MB_ERR_MEM;
    mb_stepper s;
    memset(&s, 0, sizeof s);
    s.m = m; s.p = p; s.n = 2; s.f0 = f0; s.f1 = f1; s.work = work;
    s.atol = atol; s.rtol = 1e-6; s.stats = &stats; s.msg = msg; s.msg_len = sizeof msg;
    s.order = m->order; s.err_wanted = 1;
    s.t_last = t0; s.h_last = h; s.y_last = y0;
    p->rhs(t0, y0, f0, p->ctx);
    s.f0_ok = 1;
    int rc = m->init(&s);
    if (rc == MB_OK)
        rc = m->step(&s, t0, h, y0, y_new, err);
    double t1 = t0 + h;
    *le = fmax(fabs(y_new[0] - cos(t1)), fabs(y_new[1] - sin(2.0 * t1)));
    *est = fmax(fabs(err[0]), fabs(err[1]));
    free(work);
    return rc;
}

/* slope of log est against log h over h = h0 2^-k, k = 0..K-1; *rel: max |est - le| / le
 * over the two smallest h (when want_rel) */
static double estimate_slope(const mb_method *m, mb_problem *p, double h0, int K, double *rel)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    *rel = 0.0;
    printf("      %s one step from t = 0.3: h, local error, estimate:", m->name);
    for (int k = 0; k < K; k++) {
        double h = h0 * pow(0.5, k), le, est;
        int rc = one_step(m, p, 0.3, h, &le, &est);
        if (rc != MB_OK)
            return NAN;
        printf(" (%.3g %.2e %.2e)", h, le, est);
        double x = log(h), y = log(est);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
        if (k >= K - 2)
            *rel = fmax(*rel, fabs(est - le) / le);
    }
    printf("\n");
    return (K * sxy - sx * sy) / (K * sxx - sx * sx);
}

static void check_estimate_orders(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2; p.rhs = na_rhs; p.jac = na_jac; p.dfdt = na_dfdt;
    double rel, rel2;
    double q = estimate_slope(&mb_method_w2, &p, 0.05, 5, &rel);
    CHECK(fabs(q - 2.0) < 0.25, "w2: its estimate is O(h^%.2f), that of an order-1 formula "
          "(%.0f times the local error of y_new at the smallest h)", q, rel + 1.0);
    q = estimate_slope(&mb_method_w2_mid, &p, 0.05, 5, &rel);
    CHECK(fabs(q - 3.0) < 0.15 && rel < 0.03,
          "w2_mid: estimate O(h^%.2f) and within %.1f %% of the true local error (exact J)", q,
          100.0 * rel);
    na_ctx wrong = {1};
    p.ctx = &wrong;
    q = estimate_slope(&mb_method_w2_mid, &p, 0.05, 5, &rel2);
    CHECK(fabs(q - 3.0) < 0.15, "w2_mid: estimate O(h^%.2f) with a wrong constant Jacobian", q);
}

/* steps on VdP(1000), t in [0, 2], at rtol = atol = 1e-4 and 1e-6 */
static double step_ratio(const mb_method *m, long *n4, long *n6)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    p.rhs = mb_test_problem_find("vdp1000");
    p.jac = mb_test_problem_jac("vdp1000");
    double y0[2] = {2.0, 0.0};
    long n[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        double tol = k ? 1e-6 : 1e-4, atol[2] = {tol, tol};
        mb_options o;
        options_default(&o, atol, tol);
        mb_result r;
        if (mb_driver_run(m, &p, 0.0, 2.0, y0, &o, &r) == MB_OK)
            n[k] = r.stats.nsteps;
        mb_result_free(&r);
    }
    *n4 = n[0];
    *n6 = n[1];
    return n[0] > 0 && n[1] > 0 ? (double)n[1] / (double)n[0] : NAN;
}

static void check_step_scaling(void)
{
    long a4, a6, b4, b6;
    double rw = step_ratio(&mb_method_w2, &a4, &a6), rm = step_ratio(&mb_method_w2_mid, &b4, &b6);
    /* 100^(1/3) = 4.6, 100^(1/2) = 10 */
    CHECK(rm > 3.2 && rm < 6.3, "w2_mid: VdP(1000) steps at tol 1e-4 / 1e-6: %ld / %ld, ratio "
          "%.2f ~ 100^(1/3)", b4, b6, rm);
    CHECK(rw > 7.0, "w2: %ld / %ld steps, ratio %.2f ~ 100^(1/2) (order-1 estimate)", a4, a6, rw);
}

/* ---------------- (h) the Jacobian policy of Rosenbrock and W-methods ---------------- */

/* a secant residual of the caller's choosing: ctx holds (rr, ff, calls) */
static void fixed_secant(mb_stepper *s, const double *y, const double *y_prev,
                         const double *f_prev, double dt, double *rr, double *ff, void *ctx)
{
    (void)s; (void)y; (void)y_prev; (void)f_prev; (void)dt;
    double *c = ctx;
    *rr = c[0];
    *ff = c[1];
    c[2] += 1.0;
}

/* mb_wjac (method.h): when J is due, by the rules both rosenbrock.c and
 * rosenbrock_nystrom.c follow */
static void check_wjac_policy(void)
{
    double f0[2] = {1.0, 2.0}, y[2] = {0.5, -0.5}, prev[4] = {0}, sec[3] = {0.0, 1.0, 0.0};
    mb_stepper s;
    memset(&s, 0, sizeof s);
    s.n = 2;
    s.f0 = f0;
    /* Rosenbrock: once per start point, kept by a retry from it */
    mb_wjac r;
    memset(&r, 0, sizeof r);
    int d1 = mb_wjac_due(&s, &r, 0.0, y, 0.1, prev, fixed_secant, sec);
    mb_wjac_taken(&r, 0.1);
    int d2 = mb_wjac_due(&s, &r, 0.0, y, 0.05, prev, fixed_secant, sec);  /* rejected */
    mb_wjac_accept(&r);
    int d3 = mb_wjac_due(&s, &r, 0.1, y, 0.05, prev, fixed_secant, sec);
    CHECK(d1 && !d2 && d3 && sec[2] == 0.0,
          "Rosenbrock: J at each new start point (%d, %d), kept for a retry (%d), no secant test",
          d1, d3, d2);
    /* W-method */
    mb_wjac w;
    memset(&w, 0, sizeof w);
    w.w_method = 1;
    int e1 = mb_wjac_due(&s, &w, 0.0, y, 0.1, prev, fixed_secant, sec);  /* none held */
    mb_wjac_taken(&w, 0.1);
    mb_wjac_accept(&w);
    y[0] = 0.6;
    sec[0] = 0.03;  /* ||r||^2 = 0.03 <= 0.2^2 ||df||^2 */
    int e2 = mb_wjac_due(&s, &w, 0.1, y, 0.35, prev, fixed_secant, sec);  /* kept */
    int kept_prev = prev[0] == 0.6 && prev[2] == 1.0 && w.t_prev == 0.1;
    int e3 = mb_wjac_due(&s, &w, 0.1, y, 0.2, prev, fixed_secant, sec);  /* rejected, J older */
    mb_wjac_taken(&w, 0.2);
    int e4 = mb_wjac_due(&s, &w, 0.1, y, 0.1, prev, fixed_secant, sec);  /* rejected, J here */
    mb_wjac_accept(&w);
    int e5 = mb_wjac_due(&s, &w, 0.2, y, 0.9, prev, fixed_secant, sec);  /* h / h_jac = 4.5 */
    mb_wjac_taken(&w, 0.9);
    mb_wjac_accept(&w);
    sec[0] = 0.05;  /* ||r||^2 > 0.2^2 ||df||^2: J no longer predicts f */
    int e6 = mb_wjac_due(&s, &w, 0.3, y, 0.9, prev, fixed_secant, sec);
    CHECK(e1 && !e2 && kept_prev && e3 && !e4 && e5 && e6,
          "W-method: J when none is held (%d), kept across steps (%d; the start point kept: %d), "
          "fresh after a rejection with an older J (%d) but not with the current one (%d), when "
          "h leaves [h_jac / 4, 4 h_jac] (%d) and when the secant test fails (%d)",
          e1, e2, kept_prev, e3, e4, e5, e6);
}

int main(void)
{
    const mb_ros_tableau *Ts[] = {&mb_ros_ros4, &mb_ros_ros2, &mb_ros_rodas4, &mb_ros_w2};
    for (int k = 0; k < 4; k++)
        check_table(Ts[k]);
    check_ros4_paper();
    check_dense_coefficients(&mb_ros_ros4, 2, 1);
    check_dense_coefficients(&mb_ros_ros2, 2, 0);
    check_dense_coefficients(&mb_ros_rodas4, 3, 0);
    check_dense_coefficients(&mb_ros_w2, 2, 0);
    check_w_method(&mb_ros_w2);
    check_stiffly_accurate(&mb_ros_rodas4);
    check_stability();
    check_orders();
    check_counters();
    check_dense();
    check_mass();
    check_table(&mb_ros_w2_mid);
    check_dense_coefficients(&mb_ros_w2_mid, 2, 0);
    check_w2_mid_table();
    check_estimate_orders();
    check_step_scaling();
    check_wjac_policy();
    return check_summary();
}
