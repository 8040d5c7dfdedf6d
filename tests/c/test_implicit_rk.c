/* C tests of the implicit Runge-Kutta family (csrc/methods/tableaus_irk.c,
 * implicit_rk.c, radau5.c) without Python: the simplifying assumptions B(p),
 * C(q), D(r) of every tableau to 1e-12, the family structure, the dense-output
 * interpolation matrices, the RADAU5 transformation, R(z) against the Pade
 * approximants of e^z and L-stability, and runs through the driver (fixed step on
 * y' = -y, radau_iia on Robertson against the reference of the IVP test set, the
 * same problem as an index-1 DAE with a singular mass matrix). */
#include <complex.h>
#include <math.h>
#include <string.h>
#include "check.h"
#include "driver.h"
#include "implicit_rk.h"
#include "problems.h"
#include "registry.h"
#include "status.h"

static const mb_irk_tableau *const tabs[] = {
    &mb_irk_radau_ia2, &mb_irk_radau_ia3, &mb_irk_radau_ia4,
    &mb_irk_radau_iia2, &mb_irk_radau_iia3, &mb_irk_radau_iia4,
    &mb_irk_lobatto_iiic2, &mb_irk_lobatto_iiic3, &mb_irk_lobatto_iiic4};
static const mb_method *const meths[] = {
    &mb_method_radau_ia2, &mb_method_radau_ia3, &mb_method_radau_ia4,
    &mb_method_radau_iia2, &mb_method_radau_iia3, &mb_method_radau_iia4,
    &mb_method_lobatto_iiic2, &mb_method_lobatto_iiic3, &mb_method_lobatto_iiic4};
enum { NTAB = sizeof tabs / sizeof tabs[0] };

static double ipow(double x, int k)
{
    double r = 1.0;
    for (int i = 0; i < k; i++) r *= x;
    return r;
}

/* max_k<=p |sum_i b_i c_i^{k-1} - 1/k| */
static double res_B(const mb_irk_tableau *T, int p)
{
    double r = 0.0;
    for (int k = 1; k <= p; k++) {
        double acc = 0.0;
        for (int i = 0; i < T->s; i++) acc += T->b[i] * ipow(T->c[i], k - 1);
        r = fmax(r, fabs(acc - 1.0 / k));
    }
    return r;
}

/* C(q): sum_j a_ij c_j^{k-1} = c_i^k / k */
static double res_C(const mb_irk_tableau *T, int q)
{
    int s = T->s;
    double r = 0.0;
    for (int k = 1; k <= q; k++)
        for (int i = 0; i < s; i++) {
            double acc = 0.0;
            for (int j = 0; j < s; j++) acc += T->A[i * s + j] * ipow(T->c[j], k - 1);
            r = fmax(r, fabs(acc - ipow(T->c[i], k) / k));
        }
    return r;
}

/* D(r): sum_i b_i c_i^{k-1} a_ij = b_j (1 - c_j^k) / k */
static double res_D(const mb_irk_tableau *T, int rr)
{
    int s = T->s;
    double r = 0.0;
    for (int k = 1; k <= rr; k++)
        for (int j = 0; j < s; j++) {
            double acc = 0.0;
            for (int i = 0; i < s; i++) acc += T->b[i] * ipow(T->c[i], k - 1) * T->A[i * s + j];
            r = fmax(r, fabs(acc - T->b[j] * (1.0 - ipow(T->c[j], k)) / k));
        }
    return r;
}

static void test_tableaus(void)
{
    for (int t = 0; t < NTAB; t++) {
        const mb_irk_tableau *T = tabs[t];
        int s = T->s;
        int p_exp = T->family == MB_IRK_LOBATTO_IIIC ? 2 * s - 2 : 2 * s - 1;
        int q_exp = T->family == MB_IRK_RADAU_IIA ? s : s - 1;
        int r_exp = T->family == MB_IRK_RADAU_IA ? s : s - 1;
        CHECK(T->order == p_exp && T->c_order == q_exp && T->d_order == r_exp,
              "%s: p, q, r = %d, %d, %d", T->name, T->order, T->c_order, T->d_order);
        CHECK(res_B(T, T->order) < 1e-12, "%s: B(%d) residual %.2e", T->name, T->order,
              res_B(T, T->order));
        CHECK(res_B(T, T->order + 1) > 1e-6, "%s: B(%d) fails (order exactly %d)", T->name,
              T->order + 1, T->order);
        CHECK(res_C(T, T->c_order) < 1e-12, "%s: C(%d) residual %.2e", T->name, T->c_order,
              res_C(T, T->c_order));
        CHECK(res_D(T, T->d_order) < 1e-12, "%s: D(%d) residual %.2e", T->name, T->d_order,
              res_D(T, T->d_order));
        /* d^T A = b^T and sum d = 1 (R(inf) = 1 - sum d = 0) */
        double rd = 0.0, sd = 0.0;
        for (int j = 0; j < s; j++) {
            double acc = 0.0;
            for (int i = 0; i < s; i++) acc += T->d[i] * T->A[i * s + j];
            rd = fmax(rd, fabs(acc - T->b[j]));
            sd += T->d[j];
        }
        CHECK(rd < 1e-12 && fabs(sd - 1.0) < 1e-12, "%s: d^T A = b^T (%.1e), sum d = 1 (%.1e)",
              T->name, rd, fabs(sd - 1.0));
        /* family structure */
        int ok = 1;
        if (T->family == MB_IRK_RADAU_IA)
            ok = T->c[0] == 0.0;
        if (T->family == MB_IRK_RADAU_IIA) {
            ok = T->c[s - 1] == 1.0;
            for (int j = 0; j < s; j++) ok = ok && T->A[(s - 1) * s + j] == T->b[j];
        }
        if (T->family == MB_IRK_LOBATTO_IIIC) {
            ok = T->c[0] == 0.0 && T->c[s - 1] == 1.0;
            for (int i = 0; i < s; i++) ok = ok && T->A[i * s] == T->b[0];
            for (int j = 0; j < s; j++) ok = ok && T->A[(s - 1) * s + j] == T->b[j];
        }
        CHECK(ok, "%s: family structure (end nodes, stiffly accurate rows, a_i1 = b_1)", T->name);
        /* dense output: l_j(theta_q) = delta_jq, theta_q the interpolation nodes */
        double rp = 0.0;
        for (int q = 0; q < T->m; q++) {
            double th = T->dense_stage[q] < 0 ? 1.0 : T->c[T->dense_stage[q]];
            for (int j = 0; j < T->m; j++) {
                double l = 0.0;
                for (int k = 0; k < T->m; k++) l += T->P[j * T->m + k] * ipow(th, k + 1);
                rp = fmax(rp, fabs(l - (j == q ? 1.0 : 0.0)));
            }
        }
        CHECK(rp < 1e-12, "%s: dense interpolation matrix (%.1e)", T->name, rp);
        CHECK(strcmp(meths[t]->name, T->name) == 0 && meths[t]->order == T->order &&
                  meths[t]->data == T,
              "%s: method object matches its tableau", T->name);
        CHECK(mb_method_find(T->name) == meths[t], "%s: registered", T->name);
    }
    CHECK(mb_method_find("radau_iia") == &mb_method_radau_iia, "radau_iia registered");
}

static void inverse3(const double *A, double *Ai)
{
    double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                 A[2] * (A[3] * A[7] - A[4] * A[6]);
    Ai[0] = (A[4] * A[8] - A[5] * A[7]) / det;
    Ai[1] = (A[2] * A[7] - A[1] * A[8]) / det;
    Ai[2] = (A[1] * A[5] - A[2] * A[4]) / det;
    Ai[3] = (A[5] * A[6] - A[3] * A[8]) / det;
    Ai[4] = (A[0] * A[8] - A[2] * A[6]) / det;
    Ai[5] = (A[2] * A[3] - A[0] * A[5]) / det;
    Ai[6] = (A[3] * A[7] - A[4] * A[6]) / det;
    Ai[7] = (A[1] * A[6] - A[0] * A[7]) / det;
    Ai[8] = (A[0] * A[4] - A[1] * A[3]) / det;
}

static void test_radau5_constants(void)
{
    const mb_radau5_constants *k = &mb_radau5_constants_iia3;
    const mb_irk_tableau *T = k->tab;
    double Ai[9];
    inverse3(T->A, Ai);
    double r = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double acc = 0.0;
            for (int l = 0; l < 3; l++) acc += k->TI[i * 3 + l] * k->T[l * 3 + j];
            r = fmax(r, fabs(acc - (i == j)));
        }
    CHECK(r < 1e-12, "RADAU5: TI T = I (%.1e)", r);
    double complex mu = k->mu_re + I * k->mu_im;
    double re = 0.0, rc = 0.0;
    for (int j = 0; j < 3; j++) {
        double a = 0.0;
        double complex c = 0.0;
        for (int l = 0; l < 3; l++) {
            a += k->TI[l] * Ai[l * 3 + j];
            c += (k->TI[3 + l] + I * k->TI[6 + l]) * Ai[l * 3 + j];
        }
        re = fmax(re, fabs(a - k->gamma * k->TI[j]));
        rc = fmax(rc, cabs(c - mu * (k->TI[3 + j] + I * k->TI[6 + j])));
    }
    CHECK(re < 1e-12 * k->gamma * 10, "RADAU5: TI_0 A^-1 = gamma TI_0 (%.1e)", re);
    CHECK(rc < 1e-12 * cabs(mu) * 10, "RADAU5: (TI_1 + i TI_2) A^-1 = mu (TI_1 + i TI_2) (%.1e)", rc);
    CHECK(fabs(k->gamma - (3.0 + cbrt(9.0) - cbrt(3.0))) < 1e-14, "RADAU5: gamma closed form");
    double rE = 0.0;
    for (int i = 0; i < 3; i++) rE = fmax(rE, fabs(k->E[i] + T->P[i * 3]));
    CHECK(rE < 1e-12, "RADAU5: E = -P[:, 0] (%.1e)", rE);
    CHECK(fabs(k->E[0] + (13.0 + 7.0 * sqrt(6.0)) / 3.0) < 1e-13 &&
              fabs(k->E[1] - (-13.0 + 7.0 * sqrt(6.0)) / 3.0) < 1e-13,
          "RADAU5: E = (-(13 + 7 sqrt 6), -13 + 7 sqrt 6, -1) / 3");
}

static double fact(int k)
{
    double r = 1.0;
    for (int i = 2; i <= k; i++) r *= i;
    return r;
}

/* the (k, j) Pade approximant of e^z: numerator degree k, denominator degree j */
static double complex pade(int k, int j, double complex z)
{
    double complex P = 0.0, Q = 0.0;
    for (int i = 0; i <= k; i++)
        P += fact(k + j - i) * fact(k) / (fact(k + j) * fact(i) * fact(k - i)) * cpow(z, i);
    for (int i = 0; i <= j; i++)
        Q += fact(k + j - i) * fact(j) / (fact(k + j) * fact(i) * fact(j - i)) * cpow(-z, i);
    return P / Q;
}

static void test_stability(void)
{
    const double complex zs[] = {-0.5, 1.0 + 2.0 * I, -3.0 + 0.5 * I, -20.0 - 7.0 * I, 0.3 * I,
                                 -1e3};
    double Rr, Ri;
    /* Radau IIA s = 3: (2, 3) Pade, closed form (1 + 2z/5 + z^2/20)/(1 - 3z/5 + 3z^2/20 - z^3/60) */
    double r3 = 0.0;
    for (size_t q = 0; q < sizeof zs / sizeof zs[0]; q++) {
        double complex z = zs[q];
        double complex R = (1.0 + 2.0 * z / 5.0 + z * z / 20.0) /
                           (1.0 - 3.0 * z / 5.0 + 3.0 * z * z / 20.0 - z * z * z / 60.0);
        mb_method_radau_iia.amplification(&mb_method_radau_iia, creal(z), cimag(z), &Rr, &Ri);
        r3 = fmax(r3, cabs(Rr + I * Ri - R) / fmax(1.0, cabs(R)));
    }
    CHECK(r3 < 1e-13, "radau_iia: R(z) = (1 + 2z/5 + z^2/20)/(1 - 3z/5 + 3z^2/20 - z^3/60) (%.1e)", r3);
    for (int t = 0; t < NTAB; t++) {
        const mb_irk_tableau *T = tabs[t];
        int s = T->s, kn = T->family == MB_IRK_LOBATTO_IIIC ? s - 2 : s - 1;
        double r = 0.0;
        for (size_t q = 0; q < sizeof zs / sizeof zs[0]; q++) {
            double complex z = zs[q], R = pade(kn, s, z);
            meths[t]->amplification(meths[t], creal(z), cimag(z), &Rr, &Ri);
            r = fmax(r, cabs(Rr + I * Ri - R) / fmax(1.0, cabs(R)));
        }
        CHECK(r < 1e-12, "%s: R(z) = (%d, %d) Pade approximant of e^z (%.1e)", T->name, kn, s, r);
        meths[t]->amplification(meths[t], -1e8, 0.0, &Rr, &Ri);
        CHECK(hypot(Rr, Ri) < 1e-6, "%s: L-stable, |R(-1e8)| = %.1e", T->name, hypot(Rr, Ri));
        /* A-stable: |R(iy)| <= 1 on the imaginary axis */
        double mx = 0.0;
        for (double y = 0.01; y < 1e4; y *= 1.3) {
            meths[t]->amplification(meths[t], 0.0, y, &Rr, &Ri);
            mx = fmax(mx, hypot(Rr, Ri));
        }
        CHECK(mx <= 1.0 + 1e-14, "%s: |R(iy)| <= 1 (max %.16f)", T->name, mx);
    }
}

/* ---- runs through the driver ---- */
static int decay(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = -y[0];
    return 0;
}

static mb_options opts_base(const double *atol, double rtol)
{
    mb_options o;
    memset(&o, 0, sizeof o);
    o.rtol = rtol;
    o.atol = atol;
    o.controller = MB_CONTROLLER_PI;
    return o;
}

static void test_fixed_decay(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 1;
    p.rhs = decay;
    double atol = 1e-14, y0 = 1.0;
    for (int t = 0; t < NTAB; t++) {
        double e[2];
        for (int k = 0; k < 2; k++) {
            mb_options o = opts_base(&atol, 1e-13);
            o.h = k == 0 ? 0.5 : 0.25;
            mb_result res;
            int rc = mb_driver_run(meths[t], &p, 0.0, 2.0, &y0, &o, &res);
            e[k] = rc == MB_OK ? fabs(res.y[(res.nt - 1)] - exp(-2.0)) : 1.0;
            mb_result_free(&res);
        }
        double slope = log2(e[0] / e[1]);
        CHECK(fabs(slope - meths[t]->order) < 0.4, "%s: y' = -y, h = 1/2, 1/4: errors %.2e %.2e, slope %.2f",
              meths[t]->name, e[0], e[1], slope);
    }
}

/* Robertson at t = 40 (Hairer & Wanner II, IV.10; IVP test set reference) */
static const double ROB40[3] = {0.7158270687193306, 0.9185534764557217e-05, 0.2841637457458886};

static int robertson_dae(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
    f[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] * y[1];
    f[2] = y[0] + y[1] + y[2] - 1.0;
    return 0;
}

static void test_radau_robertson(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 3;
    p.rhs = mb_test_problem_find("robertson");
    p.jac = mb_test_problem_jac("robertson");
    double y0[3] = {1.0, 0.0, 0.0}, atol[3] = {1e-10, 1e-14, 1e-10};
    for (int dae = 0; dae < 2; dae++) {
        double M[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
        if (dae) {
            p.rhs = robertson_dae;
            p.jac = NULL;  /* finite differences */
            p.mass = M;
        }
        mb_options o = opts_base(atol, 1e-7);
        o.dense_output = 1;
        mb_result res;
        int rc = mb_driver_run(&mb_method_radau_iia, &p, 0.0, 40.0, y0, &o, &res);
        double e = 0.0;
        const double *yf = res.y + (res.nt - 1) * 3;
        for (int i = 0; i < 3; i++) e = fmax(e, fabs(yf[i] - ROB40[i]) / (fabs(ROB40[i]) * 1e-7 + atol[i]));
        CHECK(rc == MB_OK && e < 10.0,
              "radau_iia%s: Robertson to t = 40 at rtol 1e-7: error %.3g x tol, %ld steps, %ld f, %ld J, %ld LU",
              dae ? " (DAE, M = diag(1,1,0))" : "", e, res.stats.nsteps, res.stats.nfev,
              res.stats.njev, res.stats.nlu);
        /* dense output: exact at both ends of every step */
        double de = 0.0;
        for (ptrdiff_t k = 0; k < res.nsteps_d; k++) {
            const double *C = res.d_c + res.d_off[k];
            int deg = res.d_deg[k];
            double y1[3];
            mb_dense_eval(3, deg, C, 1.0, y1);
            const double *yk = res.y + (k + 1) * 3;
            for (int i = 0; i < 3; i++) {
                de = fmax(de, fabs(C[i] - res.y[k * 3 + i]));
                de = fmax(de, fabs(y1[i] - yk[i]) / fmax(1e-300, fabs(yk[i]) + 1e-20));
            }
        }
        CHECK(res.nsteps_d > 0 && de < 1e-12, "radau_iia%s: dense output equals the steps' end points (%.1e)",
              dae ? " (DAE)" : "", de);
        if (dae) {
            double g = fabs(yf[0] + yf[1] + yf[2] - 1.0);
            CHECK(g < 1e-14, "radau_iia (DAE): algebraic constraint y1 + y2 + y3 = 1 holds (%.1e)", g);
        }
        mb_result_free(&res);
    }
}

int main(void)
{
    test_tableaus();
    test_radau5_constants();
    test_stability();
    test_fixed_decay();
    test_radau_robertson();
    return check_summary();
}
