/* Tests of the variable-order BDF/NDF kernel (csrc/methods/bdf.c).
 *
 * (a) change_D: rescaling the difference array of a polynomial of degree k gives
 *     the backward differences of the same polynomial on the new grid;
 * (b) one step at constant h from an arbitrary history satisfies the classical
 *     BDF-k formulas (lecture notes 7.8; e.g. BDF2 y1 = 4/3 y0 - 1/3 y-1 + 2/3 h f1)
 *     with kappa = 0, and the NDF formulas of Shampine-Reichelt with the registered
 *     coefficients, for k = 1..5 -- also for later steps, whose history comes from
 *     the difference updates;
 * (c) with steps of varying size, BDF-k integrates y' = p'(t), deg p = k, exactly;
 * (d) fixed order k, constant h, exact starting values: empirical order k on a
 *     nonlinear problem (slope within 0.25), BDF and NDF;
 * (e) driver runs: y' = -y and an oscillator at rtol 1e-4..1e-10 within 10x of the
 *     tolerance, order above 3 at tight tolerance, dense output through y_n and
 *     y_{n+1} and accurate between steps, one Jacobian on a linear problem;
 * (f) a rejected step leaves the history untouched; accept() inside the step
 *     restarts at order 1;
 * (g) constant mass matrix: M y' = f agrees with y' = M^{-1} f; an index-1 DAE
 *     (M singular) keeps its algebraic constraint.
 * Prints one line per check and a final "N passed, M failed"; returns 0 if all pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bdf.h"
#include "check.h"
#include "driver.h"
#include "status.h"

/* ---- a stepper driven by hand ---- */

typedef struct {
    mb_stepper s;
    mb_method m;
    mb_stats stats;
    char msg[256];
    double *work, *f0, *f1, atol[4];
} hand;

static void hand_open(hand *H, const mb_problem *p, const mb_bdf_table *T, double tol)
{
    memset(H, 0, sizeof *H);
    H->m = mb_method_bdf;
    H->m.data = T;
    H->work = calloc(H->m.work_size(p, T), sizeof(double));
    H->f0 = calloc((size_t)p->n, sizeof(double));
    H->f1 = calloc((size_t)p->n, sizeof(double));
    for (int i = 0; i < 4; i++) H->atol[i] = tol;
    mb_stepper *s = &H->s;
    s->m = &H->m; s->p = p; s->n = p->n;
    s->f0 = H->f0; s->f1 = H->f1;
    s->work = H->work; s->atol = H->atol; s->rtol = tol;
    s->stats = &H->stats; s->msg = H->msg; s->msg_len = sizeof H->msg;
    s->h_fail_factor = 0.25;
    s->order = H->m.order;
    H->m.init(s);
}

static void hand_close(hand *H)
{
    free(H->work); free(H->f0); free(H->f1);
}

/* one step at order k; accepted */
static int hand_step(hand *H, int k, double t, double h, const double *y, double *y_new)
{
    double err[4];
    H->s.order = k;
    int rc = H->m.step(&H->s, t, h, y, y_new, err);
    if (rc != MB_OK) return rc;
    return H->m.accept(&H->s, t + h, y_new);
}

/* ---- problems ---- */

/* y' = A y + g(t), A = [[-2, 1], [0.5, -3]], g = (cos t, 1 + t) */
static int rhs_lin(double t, const double *y, double *f, void *ctx)
{
    (void)ctx;
    f[0] = -2.0 * y[0] + y[1] + cos(t);
    f[1] = 0.5 * y[0] - 3.0 * y[1] + 1.0 + t;
    return 0;
}

static int jac_lin(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)y; (void)ctx;
    J[0] = -2.0; J[1] = 0.5; J[ld] = 1.0; J[ld + 1] = -3.0;
    return 0;
}

/* y' = p'(t), p(t) = sum_j c_j t^j of degree deg */
typedef struct { int deg; double c[8]; } poly;

static double poly_val(const poly *P, double t)
{
    double v = 0.0;
    for (int j = P->deg; j >= 0; j--) v = v * t + P->c[j];
    return v;
}

static int rhs_poly(double t, const double *y, double *f, void *ctx)
{
    const poly *P = ctx;
    (void)y;
    double v = 0.0;
    for (int j = P->deg; j >= 1; j--) v = v * t + j * P->c[j];
    f[0] = v;
    return 0;
}

static int jac_zero(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)y; (void)ld; (void)ctx;
    J[0] = 0.0;
    return 0;
}

/* nonlinear, exact solution phi(t) = sin t + 0.5 cos 2t:  y' = -(y^2 - phi^2) + phi' */
static double phi(double t) { return sin(t) + 0.5 * cos(2.0 * t); }
static double dphi(double t) { return cos(t) - sin(2.0 * t); }

static int rhs_nl(double t, const double *y, double *f, void *ctx)
{
    (void)ctx;
    double p = phi(t);
    f[0] = -(y[0] * y[0] - p * p) + dphi(t);
    return 0;
}

static int jac_nl(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)ld; (void)ctx;
    J[0] = -2.0 * y[0];
    return 0;
}

static int rhs_decay(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = -y[0];
    return 0;
}

static int rhs_osc(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = y[1];
    f[1] = -y[0];
    return 0;
}

/* ---- (a) change_D ---- */

/* backward differences of p at t, t - h, ..., t - k h into D (rows of length 1) */
static void poly_diffs(const poly *P, double t, double h, int k, double *D)
{
    double w[8];
    for (int j = 0; j <= k; j++) w[j] = poly_val(P, t - j * h);
    for (int j = 0; j <= k; j++) {
        D[j] = w[0];
        for (int i = 0; i < k - j; i++) w[i] -= w[i + 1];
    }
}

static void test_change_D(void)
{
    for (int k = 1; k <= 5; k++) {
        poly P = { k, { 0.3, -1.1, 0.7, 0.25, -0.4, 0.9 } };
        const double factors[] = { 0.5, 1.7, 0.2, 3.0 };
        double worst = 0.0;
        for (int q = 0; q < 4; q++) {
            double D[8], E[8], h = 0.13, t = 0.4;
            poly_diffs(&P, t, h, k, D);
            mb_bdf_change_D(1, k, factors[q], D, 1);
            poly_diffs(&P, t, factors[q] * h, k, E);
            for (int j = 0; j <= k; j++) {
                double e = fabs(D[j] - E[j]) / (1.0 + fabs(E[j]));
                if (e > worst) worst = e;
            }
        }
        CHECK(worst < 1e-13, "change_D, degree %d: rescaled differences = differences on the "
              "new grid (max rel. deviation %.1e)", k, worst);
    }
}

/* ---- (b) formulas at constant h ---- */

/* classical BDF-k: y_{n+1} = sum_{j=0..k-1} a_j y_{n-j} + b h f_{n+1} (LN 7.8) */
static const double bdf_a[6][5] = {
    { 0 },
    { 1.0 },
    { 4.0 / 3, -1.0 / 3 },
    { 18.0 / 11, -9.0 / 11, 2.0 / 11 },
    { 48.0 / 25, -36.0 / 25, 16.0 / 25, -3.0 / 25 },
    { 300.0 / 137, -300.0 / 137, 200.0 / 137, -75.0 / 137, 12.0 / 137 },
};
static const double bdf_b[6] = { 0, 1.0, 2.0 / 3, 6.0 / 11, 12.0 / 25, 60.0 / 137 };
/* Shampine-Reichelt NDF kappa */
static const double ndf_kappa[6] = { 0, -0.1850, -1.0 / 9, -0.0823, -0.0415, 0.0 };

/* residual of the NDF-k (kappa) relation at y[0] = y_{n+1}, y[1] = y_n, ...
 * (y[k+1] = y_{n-k} enters the predictor): sum_j 1/j nabla^j y_{n+1}
 *  - kappa gamma_k (y_{n+1} - y^(0)) - h f_{n+1}, relative */
static double ndf_residual(int k, double kappa, const double *yhist, double h, double f1)
{
    double w[8], gam = 0.0, lhs = 0.0;
    for (int j = 0; j <= k; j++) w[j] = yhist[j];
    /* nabla^j y_{n+1} */
    for (int j = 1; j <= k; j++) {
        for (int i = 0; i <= k - j; i++) w[i] -= w[i + 1];
        lhs += w[0] / j;
        gam += 1.0 / j;
    }
    /* predictor: sum_{j=0..k} nabla^j y_n, with nabla^j y_n from y_n..y_{n-k} */
    double v[8], pred = 0.0;
    for (int j = 0; j <= k; j++) v[j] = yhist[j + 1];
    for (int j = 0; j <= k; j++) {
        pred += v[0];
        for (int i = 0; i < k - j; i++) v[i] -= v[i + 1];
    }
    double r = lhs - kappa * gam * (yhist[0] - pred) - h * f1;
    return fabs(r) / (fabs(h * f1) + fabs(yhist[0]) + 1e-300);
}

static void test_formulas(void)
{
    mb_problem p = { .n = 2, .rhs = rhs_lin, .jac = jac_lin };
    double h = 0.05, t0 = 0.3;
    for (int variant = 0; variant < 2; variant++) {
        const mb_bdf_table *T = variant == 0 ? &mb_bdf_classic : &mb_bdf_ndf;
        for (int k = 1; k <= 5; k++) {
            hand H;
            hand_open(&H, &p, T, 1e-12);
            /* arbitrary history y(t0 - j h), j = 0..k+1, as rows */
            double hist[16][2];
            for (int j = 0; j <= k + 1; j++) {
                hist[j][0] = 1.0 + 0.3 * sin(1.3 * j) - 0.1 * j;
                hist[j][1] = -0.5 + 0.2 * cos(0.7 * j) + 0.05 * j * j;
            }
            /* the kernel's history: y_n .. y_{n-k} (k + 1 values) */
            double Y[12];
            for (int j = 0; j <= k; j++) { Y[2 * j] = hist[j][0]; Y[2 * j + 1] = hist[j][1]; }
            mb_bdf_start(&H.s, t0, h, k, Y);
            /* three steps; all[0] newest */
            double all[16][2];
            for (int j = 0; j <= k; j++) { all[j + 3][0] = hist[j][0]; all[j + 3][1] = hist[j][1]; }
            double t = t0, y[2] = { hist[0][0], hist[0][1] }, yn[2];
            double worst_bdf = 0.0, worst_ndf = 0.0;
            int ok = 1;
            for (int st = 0; st < 3; st++) {
                if (hand_step(&H, k, t, h, y, yn) != MB_OK) { ok = 0; break; }
                t += h;
                int top = 2 - st;    /* all[top] = y_{n+1} of this step */
                all[top][0] = yn[0]; all[top][1] = yn[1];
                double f1[2];
                rhs_lin(t, yn, f1, NULL);
                for (int c = 0; c < 2; c++) {
                    double rhs = bdf_b[k] * h * f1[c];
                    for (int j = 0; j < k; j++) rhs += bdf_a[k][j] * all[top + 1 + j][c];
                    double eb = fabs(all[top][c] - rhs) / (fabs(rhs) + 1.0);
                    if (eb > worst_bdf) worst_bdf = eb;
                    double yh[8];
                    for (int j = 0; j <= k + 1; j++) yh[j] = all[top + j][c];
                    double en = ndf_residual(k, ndf_kappa[k], yh, h, f1[c]);
                    if (en > worst_ndf) worst_ndf = en;
                }
                y[0] = yn[0]; y[1] = yn[1];
            }
            if (variant == 0)
                CHECK(ok && worst_bdf < 1e-12, "BDF%d (kappa = 0): 3 steps satisfy the classical "
                      "formula, max rel. residual %.1e", k, worst_bdf);
            else if (k < 5)
                CHECK(ok && worst_ndf < 1e-12 && worst_bdf > 1e-6, "NDF%d: 3 steps satisfy the NDF "
                      "formula with kappa = %.4f (residual %.1e; differs from BDF%d by %.1e)",
                      k, ndf_kappa[k], worst_ndf, k, worst_bdf);
            else
                CHECK(ok && worst_bdf < 1e-12, "NDF5 = BDF5 (kappa = 0), residual %.1e", worst_bdf);
            hand_close(&H);
        }
    }
}

/* ---- (c) exact on polynomials of degree k with varying steps ---- */

static void test_poly_exact(void)
{
    for (int k = 1; k <= 5; k++) {
        poly P = { k, { 0.2, 1.0, -0.6, 0.35, -0.15, 0.05 } };
        mb_problem p = { .n = 1, .rhs = rhs_poly, .jac = jac_zero, .ctx = &P };
        hand H;
        hand_open(&H, &p, &mb_bdf_ndf, 1e-12);
        double h0 = 0.1, t = 0.0, Y[8];
        for (int j = 0; j <= k; j++) Y[j] = poly_val(&P, t - j * h0);
        mb_bdf_start(&H.s, t, h0, k, Y);
        double y = Y[0], yn, worst = 0.0;
        int ok = 1;
        for (int st = 0; st < 30; st++) {
            double h = 0.1 * (1.0 + 0.5 * sin(0.9 * st));   /* 0.05 .. 0.15 */
            if (hand_step(&H, k, t, h, &y, &yn) != MB_OK) { ok = 0; break; }
            t += h;
            double e = fabs(yn - poly_val(&P, t)) / (1.0 + fabs(poly_val(&P, t)));
            if (e > worst) worst = e;
            y = yn;
        }
        CHECK(ok && worst < 1e-11, "order %d, 30 steps of varying size: y' = p'(t), deg p = %d, "
              "integrated exactly (max rel. error %.1e)", k, k, worst);
        hand_close(&H);
    }
}

/* ---- (d) empirical order ---- */

static double fixed_order_error(const mb_bdf_table *T, int k, int N)
{
    mb_problem p = { .n = 1, .rhs = rhs_nl, .jac = jac_nl };
    hand H;
    hand_open(&H, &p, T, 1e-12);
    double T_end = 2.0, h = T_end / N, t = 0.0, Y[8];
    for (int j = 0; j <= k; j++) Y[j] = phi(-j * h);
    mb_bdf_start(&H.s, t, h, k, Y);
    double y = Y[0], yn, emax = 0.0;
    for (int st = 0; st < N; st++) {
        if (hand_step(&H, k, t, h, &y, &yn) != MB_OK) { emax = NAN; break; }
        t = (st + 1) * h;
        y = yn;
        double e = fabs(y - phi(t));
        if (e > emax) emax = e;
    }
    hand_close(&H);
    return emax;
}

static void test_orders(void)
{
    for (int variant = 0; variant < 2; variant++) {
        const mb_bdf_table *T = variant == 0 ? &mb_bdf_classic : &mb_bdf_ndf;
        for (int k = 1; k <= 5; k++) {
            const int Ns[3] = { 40, 80, 160 };
            double e[3];
            for (int i = 0; i < 3; i++) e[i] = fixed_order_error(T, k, Ns[i]);
            /* least-squares slope of log e against log h */
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (int i = 0; i < 3; i++) {
                double x = log(2.0 / Ns[i]), yv = log(e[i]);
                sx += x; sy += yv; sxx += x * x; sxy += x * yv;
            }
            double slope = (3 * sxy - sx * sy) / (3 * sxx - sx * sx);
            CHECK(fabs(slope - k) < 0.25, "%s%d fixed step: empirical order %.3f (errors %.2e %.2e "
                  "%.2e)", variant == 0 ? "BDF" : "NDF", k, slope, e[0], e[1], e[2]);
        }
    }
}

/* ---- (e) driver runs ---- */

typedef struct {
    int status;
    double err, dense_err, end_err;
    long nfev, njev, nlu, nsteps;
    int kmax;
} run_out;

static run_out drive(int problem, double tol, int dense)
{
    run_out o;
    memset(&o, 0, sizeof o);
    mb_problem p = { .n = problem == 0 ? 1 : 2, .rhs = problem == 0 ? rhs_decay : rhs_osc };
    double atol[2] = { tol, tol }, y0[2] = { 1.0, 0.0 }, tf = 10.0;
    mb_options opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = tol; opt.atol = atol; opt.dense_output = dense;
    mb_result r;
    o.status = mb_driver_run(&mb_method_bdf, &p, 0.0, tf, y0, &opt, &r);
    const double *yf = r.y + (r.nt - 1) * p.n;
    if (problem == 0)
        o.err = fabs(yf[0] - exp(-tf)) / (tol + tol * exp(-tf));
    else
        o.err = fmax(fabs(yf[0] - cos(tf)), fabs(yf[1] + sin(tf))) / (2.0 * tol);
    o.nfev = r.stats.nfev; o.njev = r.stats.njev; o.nlu = r.stats.nlu; o.nsteps = r.stats.nsteps;
    for (ptrdiff_t j = 0; j < r.nsteps_d; j++) {
        const double *C = r.d_c + r.d_off[j];
        if (r.d_deg[j] > o.kmax) o.kmax = r.d_deg[j];
        double t0 = r.d_t[j], h = r.d_h[j], v[2];
        for (int q = 0; q <= 8; q++) {
            double th = q / 8.0;
            mb_dense_eval(p.n, r.d_deg[j], C, th, v);
            double ex = problem == 0 ? exp(-(t0 + th * h)) : cos(t0 + th * h);
            double e = fabs(v[0] - ex);
            if (e > o.dense_err) o.dense_err = e;
        }
        /* the polynomial ends at the next output point */
        mb_dense_eval(p.n, r.d_deg[j], C, 1.0, v);
        double e = fabs(v[0] - r.y[(j + 1) * p.n]) / (1.0 + fabs(r.y[(j + 1) * p.n]));
        double e0 = fabs(C[0] - r.y[j * p.n]);
        if (e > o.end_err) o.end_err = e;
        if (e0 > o.end_err) o.end_err = e0;
    }
    mb_result_free(&r);
    return o;
}

static void test_driver(void)
{
    const double tols[] = { 1e-4, 1e-6, 1e-8, 1e-10 };
    const char *names[] = { "y' = -y", "oscillator" };
    for (int prob = 0; prob < 2; prob++) {
        double worst = 0.0;
        int ok = 1, kmax_tight = 0;
        for (int i = 0; i < 4; i++) {
            run_out o = drive(prob, tols[i], 1);
            printf("      %s rtol = atol = %.0e: error/tol %.2f, steps %ld, nfev %ld, njev %ld, "
                   "nlu %ld, max order %d\n", names[prob], tols[i], o.err, o.nsteps, o.nfev,
                   o.njev, o.nlu, o.kmax);
            if (o.status != MB_OK) ok = 0;
            if (o.err > worst) worst = o.err;
            if (i == 3) kmax_tight = o.kmax;
            if (prob == 0 && i == 2) {
                CHECK(o.end_err < 1e-12, "dense polynomial = y_n at theta 0 and y_{n+1} at "
                      "theta 1 (max deviation %.1e)", o.end_err);
                CHECK(o.dense_err < 10.0 * tols[i], "dense output between steps within 10x of "
                      "tol (max error %.2e)", o.dense_err);
                CHECK(o.njev == 1, "linear problem: one Jacobian for the whole run (njev %ld, "
                      "nlu %ld, steps %ld)", o.njev, o.nlu, o.nsteps);
                CHECK(o.nlu < o.nsteps / 2, "LU reused across steps (nlu %ld < steps/2 = %ld)",
                      o.nlu, o.nsteps / 2);
            }
        }
        /* y' = -y: within 10x; the oscillator's error grows with the number of steps
         * (SciPy's BDF: 7x .. 110x at 1e-4 .. 1e-10) */
        double bound = prob == 0 ? 10.0 : 50.0;
        CHECK(ok && worst < bound, "%s, rtol 1e-4..1e-10: error at t = 10 within %.0fx of the "
              "tolerance (worst %.2f)", names[prob], bound, worst);
        CHECK(kmax_tight >= 4, "%s at 1e-10: order rises to %d", names[prob], kmax_tight);
    }
}

/* ---- (f) rejection and restart ---- */

static void test_history(void)
{
    mb_problem p = { .n = 2, .rhs = rhs_lin, .jac = jac_lin };
    double Y[8] = { 1.0, 0.5, 0.98, 0.51, 0.95, 0.53, 0.91, 0.56 };
    hand A, B;
    hand_open(&A, &p, &mb_bdf_ndf, 1e-10);
    hand_open(&B, &p, &mb_bdf_ndf, 1e-10);
    mb_bdf_start(&A.s, 0.0, 0.02, 3, Y);
    mb_bdf_start(&B.s, 0.0, 0.02, 3, Y);
    double y[2] = { 1.0, 0.5 }, ya[2], yb[2], err[2];
    /* A: a step of 0.05 that the driver "rejects", then 0.03; B: 0.03 only */
    A.s.order = 3;
    A.m.step(&A.s, 0.0, 0.05, y, ya, err);
    double fac;
    A.m.after_step(&A.s, 0.05, 2.0, 0, &fac);
    A.s.order = 3;
    A.m.step(&A.s, 0.0, 0.03, y, ya, err);
    B.s.order = 3;
    B.m.step(&B.s, 0.0, 0.03, y, yb, err);
    CHECK(ya[0] == yb[0] && ya[1] == yb[1] && fac < 1.0,
          "a rejected step leaves the history unchanged (retry = fresh step, factor %.3f)", fac);
    /* accept a point inside the step (terminal event): restart at order 1 */
    A.m.accept(&A.s, 0.01, ya);
    CHECK(A.s.order == 1, "accept() inside the step restarts at order 1 (order %d)", A.s.order);
    A.s.f0_ok = 0;
    int rc = A.m.step(&A.s, 0.01, 0.01, ya, yb, err);
    CHECK(rc == MB_OK && A.s.order == 1 && A.m.dense_degree(&A.s) == 1,
          "the restarted step runs at order 1 (rc %d)", rc);
    hand_close(&A);
    hand_close(&B);
}

/* ---- (g) mass matrix ---- */

static const double M2[4] = { 2.0, 0.0, 1.0, 1.0 };   /* column-major [[2, 1], [0, 1]] */

/* M y' = f:  f = M g(y) with g the oscillator + decay */
static int rhs_mass(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    double g0 = y[1] - 0.1 * y[0], g1 = -y[0];
    f[0] = 2.0 * g0 + g1;
    f[1] = g1;
    return 0;
}

static int rhs_plain(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = y[1] - 0.1 * y[0];
    f[1] = -y[0];
    return 0;
}

/* index-1 DAE: y1' = -y1 + y2, 0 = y2 - sin t (y2 algebraic); exact from y1(0) = 1:
 * y1 = 1.5 e^-t + (sin t - cos t)/2 */
static const double Mdae[4] = { 1.0, 0.0, 0.0, 0.0 };
static int rhs_dae(double t, const double *y, double *f, void *ctx)
{
    (void)ctx;
    f[0] = -y[0] + y[1];
    f[1] = y[1] - sin(t);
    return 0;
}

static void test_mass(void)
{
    double atol[2] = { 1e-9, 1e-9 }, y0[2] = { 1.0, 0.0 };
    mb_options opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-9; opt.atol = atol;
    mb_problem pm = { .n = 2, .rhs = rhs_mass, .mass = M2 };
    mb_problem pp = { .n = 2, .rhs = rhs_plain };
    mb_result rm, rp;
    int s1 = mb_driver_run(&mb_method_bdf, &pm, 0.0, 5.0, y0, &opt, &rm);
    int s2 = mb_driver_run(&mb_method_bdf, &pp, 0.0, 5.0, y0, &opt, &rp);
    const double *a = rm.y + (rm.nt - 1) * 2, *b = rp.y + (rp.nt - 1) * 2;
    double d = fmax(fabs(a[0] - b[0]), fabs(a[1] - b[1]));
    CHECK(s1 == MB_OK && s2 == MB_OK && d < 1e-7, "M y' = f (M = [[2,1],[0,1]]) agrees with "
          "y' = M^-1 f at t = 5 (difference %.1e; steps %ld vs %ld)", d, (long)rm.stats.nsteps,
          (long)rp.stats.nsteps);
    mb_result_free(&rm);
    mb_result_free(&rp);

    mb_problem pd = { .n = 2, .rhs = rhs_dae, .mass = Mdae };
    double yd[2] = { 1.0, 0.0 };
    opt.rtol = 1e-7; atol[0] = atol[1] = 1e-7;
    mb_result rd;
    int s3 = mb_driver_run(&mb_method_bdf, &pd, 0.0, 5.0, yd, &opt, &rd);
    double worst_c = 0.0, worst_y = 0.0;
    for (ptrdiff_t j = 0; j < rd.nt; j++) {
        double t = rd.t[j], *y = rd.y + j * 2;
        double ex = 1.5 * exp(-t) + 0.5 * (sin(t) - cos(t));
        worst_c = fmax(worst_c, fabs(y[1] - sin(t)));
        worst_y = fmax(worst_y, fabs(y[0] - ex));
    }
    CHECK(s3 == MB_OK && worst_c < 1e-7 && worst_y < 1e-5, "index-1 DAE with singular M: "
          "constraint residual %.1e, differential error %.1e (%ld steps)", worst_c, worst_y,
          (long)rd.stats.nsteps);
    mb_result_free(&rd);
}

int main(void)
{
    test_change_D();
    test_formulas();
    test_poly_exact();
    test_orders();
    test_driver();
    test_history();
    test_mass();
    return check_summary();
}
