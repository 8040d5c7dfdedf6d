/* C tests of DOP853 without Python: the tableau (quadrature conditions of the weights,
 * the embedded and the dense-output weights; all tree conditions are checked in
 * tests/test_dop853.py), the method object against its tableau, and the driver:
 * fixed-step order, evaluation counts with and without dense output, the dense
 * polynomial at the ends of its step (under AddressSanitizer: the extra stages stay
 * inside the workspace). */
#include <math.h>
#include <string.h>
#include "check.h"
#include "driver.h"
#include "erk.h"
#include "registry.h"
#include "status.h"

#define NS 12             /* stages of the step */
#define NK 13             /* with the FSAL stage */
#define NE 16             /* with the dense-output stages */

/* the extended tableau: 16 stages, k_13 = f(t + h, y_new), k_14..16 dense only */
static void extended(const mb_erk_tableau *T, double *A, double *c)
{
    memset(A, 0, NE * NE * sizeof(double));
    for (int i = 0; i < NS; i++) {
        c[i] = T->c[i];
        for (int j = 0; j < NS; j++) A[i * NE + j] = T->A[i * NS + j];
    }
    c[NS] = 1.0;
    for (int j = 0; j < NS; j++) A[NS * NE + j] = T->b[j];
    for (int r = 0; r < T->s_extra; r++) {
        c[NK + r] = T->c_extra[r];
        for (int j = 0; j < NE; j++) A[(NK + r) * NE + j] = T->A_extra[r * NE + j];
    }
}

/* sum_i w_i c_i^k */
static double quad(int s, const double *w, const double *c, int k)
{
    double r = 0.0;
    for (int i = 0; i < s; i++) r += w[i] * pow(c[i], k);
    return r;
}

/* the continuous weights b_i(theta) of Hairer's nested form (tableaus.h) */
static void dense_weights(const mb_erk_tableau *T, double th, double *w)
{
    double F[7][NE] = {{0}};
    for (int i = 0; i < NS; i++) {
        F[0][i] = T->b[i];
        F[1][i] = -T->b[i];
        F[2][i] = 2.0 * T->b[i];
    }
    F[1][0] += 1.0;
    F[2][0] -= 1.0;
    F[2][NS] -= 1.0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < NE; i++) F[3 + r][i] = T->D[r * NE + i];
    double u = 1.0 - th;
    double p[7] = {th, th * u, th * th * u, th * th * u * u, th * th * th * u * u,
                   th * th * th * u * u * u, th * th * th * th * u * u * u};
    for (int i = 0; i < NE; i++) {
        w[i] = 0.0;
        for (int j = 0; j < 7; j++) w[i] += p[j] * F[j][i];
    }
}

static void test_tableau(void)
{
    const mb_erk_tableau *T = &mb_erk_dop853;
    const mb_method *m = mb_method_find("dop853");
    CHECK(m == &mb_method_dop853 && m->data == T, "dop853 registered with its tableau");
    CHECK(strcmp(m->name, T->name) == 0 && m->order == T->order && T->order == 8 &&
              m->error_order == T->error_order && T->error_order == 7,
          "method orders match the tableau (8, error order 7)");
    CHECK(T->s == NS && T->fsal && T->s_extra == 3 && T->dense_deg == 7 && T->e3 && T->D &&
              !T->P && m->max_dense_degree >= 7,
          "12 stages + FSAL, 3 dense stages, degree 7");

    double A[NE * NE], c[NE];
    extended(T, A, c);
    /* residuals relative to sum_j |a_ij| (up to 48 in row 9: rounding of the sum) */
    double rs = 0.0;
    int expl = 1;
    for (int i = 0; i < NE; i++) {
        double a = 0.0, abs_sum = 1.0;
        for (int j = 0; j < NE; j++) {
            a += A[i * NE + j];
            abs_sum += fabs(A[i * NE + j]);
            if (j >= i && A[i * NE + j] != 0.0) expl = 0;
        }
        rs = fmax(rs, fabs(a - c[i]) / abs_sum);
    }
    CHECK(expl && rs < 1e-15, "explicit, A 1 = c over all 16 stages (%.1e relative)", rs);

    double r8 = 0.0;
    for (int k = 0; k <= 7; k++) r8 = fmax(r8, fabs(quad(NS, T->b, c, k) - 1.0 / (k + 1)));
    CHECK(r8 < 2e-15, "b c^k = 1/(k+1), k <= 7 (%.1e)", r8);
    CHECK(fabs(quad(NS, T->b, c, 8) - 1.0 / 9) > 1e-8, "b c^8 != 1/9: order 8, not 9");

    /* the embedded weights b - e5 (order 5) and b - e3 (order 3) */
    double b5[NK], b3[NK], s5 = 0.0, s3 = 0.0;
    for (int i = 0; i < NK; i++) {
        double b = i < NS ? T->b[i] : 0.0;
        b5[i] = b - T->e[i];
        b3[i] = b - T->e3[i];
        s5 += T->e[i];
        s3 += T->e3[i];
    }
    double r5 = 0.0, r3 = 0.0;
    for (int k = 0; k <= 4; k++) r5 = fmax(r5, fabs(quad(NK, b5, c, k) - 1.0 / (k + 1)));
    for (int k = 0; k <= 2; k++) r3 = fmax(r3, fabs(quad(NK, b3, c, k) - 1.0 / (k + 1)));
    CHECK(r5 < 2e-15 && fabs(s5) < 2e-15, "b5 = b - e5: b5 c^k = 1/(k+1), k <= 4 (%.1e)", r5);
    CHECK(r3 < 4e-15 && fabs(s3) < 4e-15, "b3 = b - e3: b3 c^k = 1/(k+1), k <= 2 (%.1e)", r3);
    CHECK(fabs(quad(NK, b3, c, 3) - 0.25) > 1e-4, "b3 is not of order 4 (err3 is O(h^4))");

    /* the continuous extension: b(theta) c^k = theta^(k+1)/(k+1), k <= 6; b(1) = b */
    double w[NE], rd = 0.0, r1 = 0.0;
    const double ths[] = {0.1, 0.37, 0.5, 0.81};
    for (int q = 0; q < 4; q++) {
        dense_weights(T, ths[q], w);
        for (int k = 0; k <= 6; k++)
            rd = fmax(rd, fabs(quad(NE, w, c, k) - pow(ths[q], k + 1) / (k + 1)));
    }
    dense_weights(T, 1.0, w);
    for (int i = 0; i < NE; i++) r1 = fmax(r1, fabs(w[i] - (i < NS ? T->b[i] : 0.0)));
    CHECK(rd < 1e-14, "dense weights: b(theta) c^k = theta^(k+1)/(k+1), k <= 6 (%.1e)", rd);
    CHECK(r1 < 1e-15, "dense weights at theta = 1 are b (%.1e)", r1);
}

/* ---- driver runs ---- */
static int f_osc(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = y[1];
    f[1] = -y[0];
    return 0;
}

static mb_options options(const double *atol, double rtol)
{
    mb_options o;
    memset(&o, 0, sizeof o);
    o.atol = atol;
    o.rtol = rtol;
    o.controller = MB_CONTROLLER_PI;
    return o;
}

static double fixed_error(double h)
{
    mb_problem p = {2, f_osc, 0, 0, 1, 0, 0};
    double atol[2] = {1, 1}, y0[2] = {1.0, 0.0}, T = 10.0;
    mb_options o = options(atol, 1.0);
    o.h = h;
    mb_result r;
    int rc = mb_driver_run(&mb_method_dop853, &p, 0.0, T, y0, &o, &r);
    double e = fmax(fabs(r.y[(r.nt - 1) * 2] - cos(T)), fabs(r.y[(r.nt - 1) * 2 + 1] + sin(T)));
    mb_result_free(&r);
    return rc == MB_OK ? e : INFINITY;
}

static void test_driver(void)
{
    /* h = 0.5 -> 0.25 on y'' = -y over [0, 10]: errors 2e-9 and 9e-12 */
    double e1 = fixed_error(0.5), e2 = fixed_error(0.25);
    double slope = log(e1 / e2) / log(2.0);
    CHECK(fabs(slope - 8.0) < 0.3, "fixed-step order %.3f on y'' = -y (expected 8)", slope);

    mb_problem p = {2, f_osc, 0, 0, 1, 0, 0};
    double atol[2] = {1e-12, 1e-12}, y0[2] = {1.0, 0.0}, T = 10.0;
    for (int dense = 0; dense <= 1; dense++) {
        mb_options o = options(atol, 1e-10);
        o.dense_output = dense;
        mb_result r;
        int rc = mb_driver_run(&mb_method_dop853, &p, 0.0, T, y0, &o, &r);
        long attempts = r.stats.nsteps + r.stats.nreject;
        /* f0 and the initial-step probe, 12 per attempt (11 stages + FSAL), 3 dense
         * stages per accepted step when the dense output is stored */
        long expect = 2 + 12 * attempts + (dense ? 3 * r.stats.nsteps : 0);
        double e = fmax(fabs(r.y[(r.nt - 1) * 2] - cos(T)), fabs(r.y[(r.nt - 1) * 2 + 1] + sin(T)));
        CHECK(rc == MB_OK && r.stats.nfev == expect,
              "dense_output=%d: nfev %ld = 2 + 12 x %ld attempts (+ 3 x %ld steps if dense)", dense,
              r.stats.nfev, attempts, r.stats.nsteps);
        CHECK(e < 1e-8, "dense_output=%d: error %.2e at rtol 1e-10", dense, e);
        if (dense) {
            /* each polynomial starts at its step's y and ends at the next one */
            double jump = 0.0;
            for (ptrdiff_t k = 0; k < r.nsteps_d; k++) {
                const double *C = r.d_c + r.d_off[k];
                int d = r.d_deg[k];
                double y1[2];
                mb_dense_eval(2, d, C, 1.0, y1);
                for (int i = 0; i < 2; i++) {
                    jump = fmax(jump, fabs(C[i] - r.y[k * 2 + i]));
                    jump = fmax(jump, fabs(y1[i] - r.y[(k + 1) * 2 + i]));
                }
            }
            CHECK(r.nsteps_d == r.stats.nsteps && r.nsteps_d > 0 && r.d_deg[0] == 7 &&
                      jump < 1e-14,
                  "%td degree-7 pieces, continuous at the step ends (%.1e)", r.nsteps_d, jump);
        }
        mb_result_free(&r);
    }
}

int main(void)
{
    test_tableau();
    test_driver();
    return check_summary();
}
