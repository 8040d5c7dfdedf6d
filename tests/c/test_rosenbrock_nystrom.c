/* Tests of the Rosenbrock-Nystrom tables (csrc/methods/tableaus_rn.c).
 *
 * Each table, converted back from the Nystrom form of RN Theorem 2.1 to the defining
 * coefficients (Gamma^-1 = diag(1/gamma) - C, alpha = A Gamma, b = m Gamma,
 * bhat = mhat Gamma), reproduces its own delta, theta, mu, muhat, gamma_i and
 * alpha_i through the matrix formulas of the theorem, and satisfies the Rosenbrock
 * order conditions (RN eqs 36a-36h for order 4, 36a-36d for the embedded order 3;
 * for the W-method the conditions of order 2 for an arbitrary Jacobian:
 * sum b = 1, sum b_i alpha_i = 1/2, sum b_i gamma_i = 0); stage 4 of
 * rosenbrock_nystrom reuses stage 3's point (eq 39).  Also: its R(z) hook is
 * L-stable, and the first-order table it takes its continuous extension from is the
 * same method (ros4 for rosenbrock_nystrom, w2 for w_nystrom).
 * Prints one line per check and "N passed, M failed". */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "rosenbrock_nystrom.h"

#define S 4

typedef struct defining {
    int s;
    double gamma, al[S][S], G[S][S], b[S], bh[S];
} defining;

/* X = inverse of the lower triangular L (s x s) */
static void inv_lower(int s, double L[S][S], double X[S][S])
{
    memset(X, 0, sizeof(double) * S * S);
    for (int j = 0; j < s; j++) {
        X[j][j] = 1.0 / L[j][j];
        for (int i = j + 1; i < s; i++) {
            double acc = 0;
            for (int k = j; k < i; k++) acc += L[i][k] * X[k][j];
            X[i][j] = -acc / L[i][i];
        }
    }
}

static void to_defining(const mb_rn_tableau *T, defining *D)
{
    int s = T->s;
    double Gi[S][S] = {{0}};
    memset(D, 0, sizeof *D);
    D->s = s;
    D->gamma = T->gamma;
    for (int i = 0; i < s; i++)
        for (int j = 0; j <= i; j++)
            Gi[i][j] = (i == j ? 1.0 / T->gamma : 0.0) - (j < i ? T->c[i * s + j] : 0.0);
    inv_lower(s, Gi, D->G);
    for (int i = 0; i < s; i++)
        for (int j = 0; j < s; j++) {
            double acc = 0;
            for (int k = 0; k < s; k++) acc += (k < i ? T->a[i * s + k] : 0.0) * D->G[k][j];
            D->al[i][j] = acc;
        }
    for (int j = 0; j < s; j++) {
        double b = 0, bh = 0;
        for (int k = 0; k < s; k++) {
            b += T->m[k] * D->G[k][j];
            bh += T->mhat[k] * D->G[k][j];
        }
        D->b[j] = b;
        D->bh[j] = bh;
    }
}

/* residuals of eqs 36a-36h (beta = alpha + Gamma, strictly lower sums) for weights w */
static int order_residuals(const defining *D, const double *w, double *r)
{
    int s = D->s;
    double g = D->gamma, beta[S][S] = {{0}}, bp[S] = {0}, a[S] = {0};
    for (int i = 0; i < s; i++)
        for (int j = 0; j < i; j++) {
            beta[i][j] = D->al[i][j] + D->G[i][j];
            bp[i] += beta[i][j];
            a[i] += D->al[i][j];
        }
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0, s8 = 0;
    for (int i = 0; i < s; i++) {
        s1 += w[i];
        s2 += w[i] * bp[i];
        s3 += w[i] * a[i] * a[i];
        s5 += w[i] * a[i] * a[i] * a[i];
        for (int j = 0; j < i; j++) {
            s4 += w[i] * beta[i][j] * bp[j];
            s6 += w[i] * a[i] * D->al[i][j] * bp[j];
            s7 += w[i] * beta[i][j] * a[j] * a[j];
            for (int k = 0; k < j; k++) s8 += w[i] * beta[i][j] * beta[j][k] * bp[k];
        }
    }
    r[0] = s1 - 1;
    r[1] = s2 - (0.5 - g);
    r[2] = s3 - 1.0 / 3;
    r[3] = s4 - (1.0 / 6 - g + g * g);
    r[4] = s5 - 0.25;
    r[5] = s6 - (1.0 / 8 - g / 3);
    r[6] = s7 - (1.0 / 12 - g / 3);
    r[7] = s8 - (1.0 / 24 - g / 2 + 1.5 * g * g - g * g * g);
    return 8;
}

static double max_abs(const double *x, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

/* Theorem 2.1 from the defining coefficients, against the stored Nystrom table */
static void check_theorem(const mb_rn_tableau *T)
{
    defining D;
    to_defining(T, &D);
    int s = T->s;
    double Gi[S][S], dev = 0;
    inv_lower(s, D.G, Gi);
    for (int i = 0; i < s; i++) {
        double gi = 0, ai = 0;
        for (int j = 0; j < s; j++) {
            gi += D.G[i][j];
            ai += D.al[i][j];
            /* delta = Gamma + Gamma alpha Gamma^-1, theta = alpha + alpha^2 Gamma^-1 */
            double d = D.G[i][j], th = D.al[i][j];
            for (int k = 0; k < s; k++)
                for (int l = 0; l < s; l++) {
                    d += D.G[i][k] * D.al[k][l] * Gi[l][j];
                    th += D.al[i][k] * D.al[k][l] * Gi[l][j];
                }
            if (j < i) {
                dev = fmax(dev, fabs(d - T->delta[i * s + j]));
                dev = fmax(dev, fabs(th - T->theta[i * s + j]));
            } else if (j == i) {
                dev = fmax(dev, fabs(d - T->gamma));
            }
        }
        dev = fmax(dev, fabs(gi - T->gam[i]));
        dev = fmax(dev, fabs(ai - T->alpha[i]));
    }
    for (int j = 0; j < s; j++) {  /* mu = b + b alpha Gamma^-1 */
        double mu = D.b[j], muh = D.bh[j];
        for (int i = 0; i < s; i++)
            for (int k = 0; k < s; k++) {
                mu += D.b[i] * D.al[i][k] * Gi[k][j];
                muh += D.bh[i] * D.al[i][k] * Gi[k][j];
            }
        dev = fmax(dev, fabs(mu - T->mu[j]));
        dev = fmax(dev, fabs(muh - T->muhat[j]));
    }
    CHECK(dev < 1e-13, "%s: delta, theta, mu, muhat, gamma_i, alpha_i follow Theorem 2.1 from "
          "a, c, m, mhat (max deviation %.1e)", T->name, dev);
}

static void check_rn(void)
{
    const mb_rn_tableau *T = &mb_rn_rosenbrock_nystrom;
    defining D;
    to_defining(T, &D);
    double r[8];
    order_residuals(&D, D.b, r);
    CHECK(max_abs(r, 8) < 1e-12, "rosenbrock_nystrom: order 4 (eqs 36a-36h, max residual %.1e)",
          max_abs(r, 8));
    order_residuals(&D, D.bh, r);
    CHECK(max_abs(r, 4) < 1e-12 && max_abs(r, 8) > 1e-6,
          "rosenbrock_nystrom: embedded order 3 exactly (36a-36d %.1e; 36e-36h %.1e)",
          max_abs(r, 4), max_abs(r, 8));
    CHECK(fabs(D.al[1][0] - 1.14563212) < 1e-15 && fabs(D.G[1][0] + 2.341993127112013949) < 1e-12,
          "rosenbrock_nystrom: alpha_21 = 1.14563212 and gamma_21 = -2.3419931... (the paper "
          "prints +)");
    int same = T->new_f[3] == 0 && T->alpha[3] == T->alpha[2];
    for (int j = 0; j < 3; j++)
        same = same && T->a[12 + j] == T->a[8 + j] && T->theta[12 + j] == T->theta[8 + j];
    CHECK(same, "rosenbrock_nystrom: stage 4 reuses the point of stage 3 (eq 39)");
    CHECK(T->ros == &mb_ros_ros4 && T->gamma == mb_ros_ros4.gamma,
          "rosenbrock_nystrom: continuous extension of ros4, the same method");
    check_theorem(T);
    double Rr, Ri;
    mb_method_rosenbrock_nystrom.amplification(&mb_method_rosenbrock_nystrom, -1e8, 0, &Rr, &Ri);
    CHECK(hypot(Rr, Ri) < 1e-6, "rosenbrock_nystrom: |R(-1e8)| = %.1e (L-stable)", hypot(Rr, Ri));
}

static void check_w(void)
{
    const mb_rn_tableau *T = &mb_rn_w_nystrom;
    defining D;
    to_defining(T, &D);
    double s1 = 0, s2 = 0, s3 = 0, e1 = 0;
    for (int i = 0; i < T->s; i++) {
        s1 += D.b[i];
        e1 += D.bh[i];
        for (int j = 0; j <= i; j++) {
            if (j < i) s2 += D.b[i] * D.al[i][j];
            s3 += D.b[i] * D.G[i][j];
        }
    }
    CHECK(fabs(s1 - 1) < 1e-15 && fabs(s2 - 0.5) < 1e-15 && fabs(s3) < 1e-15 &&
          fabs(e1 - 1) < 1e-15,
          "w_nystrom: order 2 for any Jacobian (sum b - 1 = %.0e, sum b alpha - 1/2 = %.0e, "
          "sum b gamma = %.0e), embedded order 1", s1 - 1, s2 - 0.5, s3);
    CHECK(fabs(D.b[0] - 0.5) < 1e-15 && fabs(D.b[1] - 0.5) < 1e-15 &&
          fabs(D.G[1][0] + 2 * T->gamma) < 1e-14,
          "w_nystrom: Verwer's ROS2 (b = (1/2, 1/2), gamma_21 = -2 gamma)");
    CHECK(T->w_method && T->scaled_default && T->ros == &mb_ros_w2,
          "w_nystrom: keeps its Jacobian, filtered estimate, continuous extension of w2");
    check_theorem(T);
}

int main(void)
{
    check_rn();
    check_w();
    return check_summary();
}
