/* C tests of the core without Python: tableau order conditions, the controller,
 * the norm, Hermite dense output, and the driver on problems with known
 * solutions (order of convergence, dense output, events, failures). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include <string.h>
#include "check.h"
#include "controller.h"
#include "interp.h"
#include "driver.h"
#include "erk.h"
#include "norm.h"
#include "registry.h"
#include "status.h"

/* ---- tableaus: order conditions up to order p (Butcher trees up to order 5) ---- */
static double dotv(int s, const double *a, const double *b)
{
    double r = 0;
    for (int i = 0; i < s; i++) r += a[i] * b[i];
    return r;
}

static void matvec(int s, const double *A, const double *x, double *y)
{
    for (int i = 0; i < s; i++) {
        y[i] = 0;
        for (int j = 0; j < s; j++) y[i] += A[i * s + j] * x[j];
    }
}

/* residuals of the order conditions of order q for weights w (size s) */
static double order_residual(int s, const double *A, const double *c, const double *w, int q)
{
    double one[8], Ac[8], c2[8], Ac2[8], AAc[8], c3[8], cAc[8], tmp[8];
    double r = 0;
    for (int i = 0; i < s; i++) {
        one[i] = 1; c2[i] = c[i] * c[i]; c3[i] = c2[i] * c[i];
    }
    matvec(s, A, c, Ac);
    matvec(s, A, c2, Ac2);
    matvec(s, A, Ac, AAc);
    for (int i = 0; i < s; i++) cAc[i] = c[i] * Ac[i];
    if (q >= 1) r = fmax(r, fabs(dotv(s, w, one) - 1.0));
    if (q >= 2) r = fmax(r, fabs(dotv(s, w, c) - 1.0 / 2));
    if (q >= 3) {
        r = fmax(r, fabs(dotv(s, w, c2) - 1.0 / 3));
        r = fmax(r, fabs(dotv(s, w, Ac) - 1.0 / 6));
    }
    if (q >= 4) {
        r = fmax(r, fabs(dotv(s, w, c3) - 1.0 / 4));
        r = fmax(r, fabs(dotv(s, w, cAc) - 1.0 / 8));
        r = fmax(r, fabs(dotv(s, w, Ac2) - 1.0 / 12));
        r = fmax(r, fabs(dotv(s, w, AAc) - 1.0 / 24));
    }
    if (q >= 5) {
        double c4[8], c2Ac[8], cAc2[8], cAAc[8], AcAc[8], Ac3[8], AcAc_[8], AAc2[8], AAAc[8];
        for (int i = 0; i < s; i++) {
            c4[i] = c3[i] * c[i];
            c2Ac[i] = c2[i] * Ac[i];
            cAc2[i] = c[i] * Ac2[i];
            cAAc[i] = c[i] * AAc[i];
            AcAc[i] = Ac[i] * Ac[i];
        }
        matvec(s, A, c3, Ac3);
        matvec(s, A, cAc, AcAc_);
        matvec(s, A, Ac2, AAc2);
        matvec(s, A, AAc, AAAc);
        r = fmax(r, fabs(dotv(s, w, c4) - 1.0 / 5));
        r = fmax(r, fabs(dotv(s, w, c2Ac) - 1.0 / 10));
        r = fmax(r, fabs(dotv(s, w, cAc2) - 1.0 / 15));
        r = fmax(r, fabs(dotv(s, w, cAAc) - 1.0 / 30));
        r = fmax(r, fabs(dotv(s, w, AcAc) - 1.0 / 20));
        r = fmax(r, fabs(dotv(s, w, Ac3) - 1.0 / 20));
        r = fmax(r, fabs(dotv(s, w, AcAc_) - 1.0 / 40));
        r = fmax(r, fabs(dotv(s, w, AAc2) - 1.0 / 60));
        r = fmax(r, fabs(dotv(s, w, AAAc) - 1.0 / 120));
    }
    (void)tmp;
    return r;
}

static void test_tableau(const mb_erk_tableau *T, const mb_method *m)
{
    int s = T->s;
    double rowsum = 0;
    for (int i = 0; i < s; i++) {
        double a = 0;
        for (int j = 0; j < s; j++) {
            a += T->A[i * s + j];
            if (j >= i && T->A[i * s + j] != 0) rowsum = 1e9;  /* explicit */
        }
        rowsum = fmax(rowsum, fabs(a - T->c[i]));
    }
    CHECK(rowsum < 1e-15, "%s: explicit, A 1 = c", T->name);
    CHECK(order_residual(s, T->A, T->c, T->b, T->order) < 1e-14,
          "%s: order conditions up to order %d (residual %.2e)", T->name, T->order,
          order_residual(s, T->A, T->c, T->b, T->order));
    if (T->order < 5)
        CHECK(order_residual(s, T->A, T->c, T->b, T->order + 1) > 1e-6,
              "%s: not of order %d", T->name, T->order + 1);
    CHECK(m->order == T->order && m->error_order == (m->flags & MB_EMBEDDED ? T->error_order : 0),
          "%s: method orders match the tableau", T->name);
    if (T->e) {
        /* embedded weights b_hat = b - e over s + fsal stages (extended tableau) */
        int se = s + T->fsal;
        double Ae[64] = {0}, ce[8], bh[8];
        for (int i = 0; i < s; i++) {
            ce[i] = T->c[i];
            for (int j = 0; j < s; j++) Ae[i * se + j] = T->A[i * s + j];
        }
        if (T->fsal) {
            ce[s] = 1.0;
            for (int j = 0; j < s; j++) Ae[s * se + j] = T->b[j];
        }
        for (int i = 0; i < se; i++) bh[i] = (i < s ? T->b[i] : 0.0) - T->e[i];
        CHECK(order_residual(se, Ae, ce, bh, T->error_order) < 1e-14,
              "%s: embedded order %d", T->name, T->error_order);
        CHECK(order_residual(se, Ae, ce, bh, T->error_order + 1) > 1e-8,
              "%s: embedded is not of order %d", T->name, T->error_order + 1);
        double se_sum = 0;
        for (int i = 0; i < se; i++) se_sum += T->e[i];
        CHECK(fabs(se_sum) < 1e-15, "%s: sum e = 0", T->name);
    }
    if (T->P) {
        /* dense output at theta = 1 reproduces b (sum_j P[i][j] = b_i) */
        int nk = s + T->fsal;
        double r = 0;
        for (int i = 0; i < nk; i++) {
            double a = 0;
            for (int j = 0; j < T->dense_deg; j++) a += T->P[i * T->dense_deg + j];
            r = fmax(r, fabs(a - (i < s ? T->b[i] : 0.0)));
        }
        CHECK(r < 1e-14, "%s: dense output at theta = 1 equals y_new", T->name);
    }
}

/* ---- problems ---- */
static int f_decay(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = -y[0];
    return 0;
}

static int f_osc(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = y[1];
    f[1] = -y[0];
    return 0;
}

/* y' = cos t, y = sin t: nonautonomous */
static int f_cos(double t, const double *y, double *f, void *ctx)
{
    (void)y; (void)ctx;
    f[0] = cos(t);
    return 0;
}

static int f_nan(double t, const double *y, double *f, void *ctx)
{
    (void)ctx;
    f[0] = t > 0.5 ? NAN : -y[0];
    return 0;
}

static int f_fail(double t, const double *y, double *f, void *ctx)
{
    (void)y; (void)ctx;
    f[0] = 1.0;
    return t > 0.3 ? -42 : 0;
}

static int ev_osc(double t, const double *y, double *g, void *ctx)
{
    (void)t; (void)ctx;
    g[0] = y[0];         /* zeros at pi/2 + k pi */
    g[1] = y[1] + 0.5;   /* y' = -sin t = -0.5 */
    return 0;
}

static mb_options defaults(const double *atol, double rtol)
{
    mb_options o;
    memset(&o, 0, sizeof o);
    o.atol = atol;
    o.rtol = rtol;
    o.controller = MB_CONTROLLER_PI;
    return o;
}

static double run_fixed(const char *name, mb_rhs_fn f, ptrdiff_t n, const double *y0, double tf,
                        double h, const double *exact)
{
    const mb_method *m = mb_method_find(name);
    mb_problem p = {n, f, 0, 0, n / 2, 0, 0};
    double atol[4] = {1, 1, 1, 1};
    mb_options o = defaults(atol, 1.0);
    o.h = h;
    mb_result r;
    mb_driver_run(m, &p, 0.0, tf, y0, &o, &r);
    double e = 0;
    for (ptrdiff_t i = 0; i < n; i++)
        e = fmax(e, fabs(r.y[(r.nt - 1) * n + i] - exact[i]));
    if (r.status != MB_OK) e = INFINITY;
    mb_result_free(&r);
    return e;
}

static void test_orders(void)
{
    const char *names[] = {"euler", "heun", "rk4", "rk23", "dopri5"};
    int orders[] = {1, 2, 4, 3, 5};
    double y0[2] = {1.0, 0.0}, ex[2] = {cos(2.0), -sin(2.0)};
    for (int k = 0; k < 5; k++) {
        double h1 = orders[k] >= 4 ? 0.1 : 0.02;
        double e1 = run_fixed(names[k], f_osc, 2, y0, 2.0, h1, ex);
        double e2 = run_fixed(names[k], f_osc, 2, y0, 2.0, h1 / 2, ex);
        double slope = log(e1 / e2) / log(2.0);
        CHECK(fabs(slope - orders[k]) < 0.25, "%s: fixed-step order %.3f (expected %d)",
              names[k], slope, orders[k]);
    }
    /* Nystrom midpoint on q'' = -q (no velocity dependence): order 2 */
    double e1 = run_fixed("nystrom_midpoint", f_osc, 2, y0, 2.0, 0.02, ex);
    double e2 = run_fixed("nystrom_midpoint", f_osc, 2, y0, 2.0, 0.01, ex);
    double slope = log(e1 / e2) / log(2.0);
    CHECK(fabs(slope - 2.0) < 0.25, "nystrom_midpoint: order %.3f on q'' = -q", slope);
}

static void test_adaptive(void)
{
    const mb_method *m = mb_method_find("dopri5");
    mb_problem p = {1, f_cos, 0, 0, 0, 0, 0};
    double atol[1] = {1e-10}, y0[1] = {0.0};
    mb_options o = defaults(atol, 1e-8);
    o.dense_output = 1;
    mb_result r;
    int rc = mb_driver_run(m, &p, 0.0, 10.0, y0, &o, &r);
    CHECK(rc == MB_OK && r.status == MB_OK, "dopri5 adaptive run succeeds");
    double e = fabs(r.y[r.nt - 1] - sin(10.0));
    CHECK(e < 1e-7, "dopri5 error at t = 10: %.2e", e);
    CHECK(r.stats.nfev == 6 * (r.stats.nsteps + r.stats.nreject) + 1 + 1,
          "dopri5 FSAL: nfev %ld = 6 per attempt + f0 + initial-step probe", r.stats.nfev);
    /* dense output between steps */
    double emax = 0, y[1];
    for (ptrdiff_t k = 0; k < r.nsteps_d; k++) {
        mb_dense_eval(1, r.d_deg[k], r.d_c + r.d_off[k], 0.37, y);
        emax = fmax(emax, fabs(y[0] - sin(r.d_t[k] + 0.37 * r.d_h[k])));
    }
    CHECK(emax < 1e-7, "dopri5 dense output error %.2e", emax);
    mb_result_free(&r);

    /* backward integration */
    y0[0] = sin(10.0);
    rc = mb_driver_run(m, &p, 10.0, 0.0, y0, &o, &r);
    CHECK(rc == MB_OK && fabs(r.y[r.nt - 1]) < 1e-7 && r.t[r.nt - 1] == 0.0,
          "backward integration to t = 0 (y = %.2e)", r.y[r.nt - 1]);
    mb_result_free(&r);
}

static void test_events(void)
{
    const mb_method *m = mb_method_find("dopri5");
    mb_problem p = {2, f_osc, 0, 0, 1, 0, 0};
    double atol[2] = {1e-12, 1e-12}, y0[2] = {1.0, 0.0};
    int terminal[2] = {0, 2}, direction[2] = {0, -1};
    mb_options o = defaults(atol, 1e-10);
    o.events = ev_osc;
    o.n_events = 2;
    o.terminal = terminal;
    o.direction = direction;
    mb_result r;
    int rc = mb_driver_run(m, &p, 0.0, 20.0, y0, &o, &r);
    /* y' = -sin t crosses -0.5 downwards at t = pi/6 and 2 pi + pi/6: stop at the 2nd */
    double t_stop = 2 * M_PI + M_PI / 6;
    CHECK(rc == MB_TERMINATED, "terminal event after 2 occurrences stops the run");
    CHECK(r.ev_count[1] == 2 && fabs(r.ev_t[1][1] - t_stop) < 1e-10,
          "terminal event time error %.2e", fabs(r.ev_t[1][1] - t_stop));
    CHECK(fabs(r.t[r.nt - 1] - t_stop) < 1e-10, "trajectory ends at the event");
    double emax = 0;
    for (ptrdiff_t k = 0; k < r.ev_count[0]; k++)
        emax = fmax(emax, fabs(r.ev_t[0][k] - (M_PI / 2 + k * M_PI)));
    /* zeros of cos t before the stop at 2 pi + pi/6: pi/2 and 3 pi/2 */
    CHECK(r.ev_count[0] == 2 && emax < 1e-10, "2 zeros of cos t located to %.2e", emax);
    mb_result_free(&r);
}

static void test_failures(void)
{
    const mb_method *m = mb_method_find("rk4");
    mb_problem p = {1, f_nan, 0, 0, 0, 0, 0};
    double atol[1] = {1e-6}, y0[1] = {1.0};
    mb_options o = defaults(atol, 1e-3);
    o.h = 0.1;
    mb_result r;
    int rc = mb_driver_run(m, &p, 0.0, 1.0, y0, &o, &r);
    CHECK(rc == MB_ERR_NONFINITE, "NaN from f ends the run with MB_ERR_NONFINITE");
    CHECK(r.nt >= 5 && r.t[r.nt - 1] <= 0.5, "trajectory kept up to the last good step (t = %g)",
          r.t[r.nt - 1]);
    CHECK(strstr(r.message, "non-finite") != NULL, "message: %s", r.message);
    mb_result_free(&r);

    mb_problem pf = {1, f_fail, 0, 0, 0, 0, 0};
    rc = mb_driver_run(m, &pf, 0.0, 1.0, y0, &o, &r);
    CHECK(rc == MB_ERR_RHS_FAIL && strstr(r.message, "-42"), "fatal code from f: %s", r.message);
    mb_result_free(&r);

    const mb_method *dp = mb_method_find("dopri5");
    mb_problem pd = {1, f_decay, 0, 0, 0, 0, 0};
    mb_options o2 = defaults(atol, 1e-10);
    o2.max_steps = 5;
    rc = mb_driver_run(dp, &pd, 0.0, 100.0, y0, &o2, &r);
    CHECK(rc == MB_ERR_MAX_STEPS && r.nt == 6, "max_steps stops the run, %td points kept", r.nt);
    mb_result_free(&r);
}

static void test_controller(void)
{
    mb_controller c;
    mb_controller_init(&c, MB_CONTROLLER_I, 0.9, 0.2, 5.0);
    double f = mb_controller_factor(&c, 0.1, 0.5, 5.0, 1, 0);
    CHECK(fabs(f - 0.9 * pow(2.0, 0.2)) < 1e-15, "elementary: 0.9 (1/err)^(1/k)");
    f = mb_controller_factor(&c, 0.1, 1e-30, 5.0, 1, 0);
    CHECK(f == 5.0, "growth capped at fac_max");
    f = mb_controller_factor(&c, 0.1, 1e30, 5.0, 0, 0);
    CHECK(f == 0.2, "shrink capped at fac_min");
    f = mb_controller_factor(&c, 0.1, 1e-3, 5.0, 1, 1);
    CHECK(f == 1.0, "no growth right after a rejection");
    mb_controller_init(&c, MB_CONTROLLER_PI, 0.9, 0.2, 5.0);
    mb_controller_factor(&c, 0.1, 0.5, 4.0, 1, 0);
    f = mb_controller_factor(&c, 0.1, 0.25, 4.0, 1, 0);
    CHECK(fabs(f - 0.9 * pow(4.0, 0.3 / 4) * pow(0.5 / 0.25, 0.4 / 4)) < 1e-15,
          "PI (LLM eq 40): (1/r)^kI (r_prev/r)^kP");
    /* predictive (RADAU5): after an accepted step h_prev = 0.1, err_prev = 0.5, a step
     * h = 0.2 with err = 0.25: h_g/h = 0.9 (0.2/0.1) (0.5/0.0625)^(1/4) = 3.03 is above
     * the elementary 0.9 4^(1/4) = 1.27, which wins; with err growing to 0.8 the
     * prediction 0.9 2 (0.25/0.64)^(1/4) = 1.41 ... is compared likewise */
    mb_controller_init(&c, MB_CONTROLLER_PREDICTIVE, 0.9, 0.2, 5.0);
    f = mb_controller_factor(&c, 0.1, 0.5, 4.0, 1, 0);
    CHECK(fabs(f - 0.9 * pow(2.0, 0.25)) < 1e-15, "predictive: first step is elementary");
    f = mb_controller_factor(&c, 0.2, 0.25, 4.0, 1, 0);
    CHECK(fabs(f - 0.9 * pow(4.0, 0.25)) < 1e-15, "predictive: min(elementary, Gustafsson)");
    f = mb_controller_factor(&c, 0.05, 0.9, 4.0, 1, 0);
    double g = 0.9 * (0.05 / 0.2) * pow(0.25 / 0.81, 0.25);
    CHECK(fabs(f - fmax(g, 0.2)) < 1e-15 && g < 0.9 * pow(1 / 0.9, 0.25),
          "predictive: Gustafsson's step %.4f when the error grows", f);
}

static void test_norm_dense(void)
{
    double e[2] = {1e-3, -2e-3}, y[2] = {1.0, -10.0}, yn[2] = {2.0, 0.0}, atol[2] = {1e-3, 0.0};
    double v = mb_wrms_norm(2, e, y, yn, 1e-3, atol);
    double want = sqrt(0.5 * (pow(1e-3 / (1e-3 + 2e-3), 2) + pow(2e-3 / 1e-2, 2)));
    CHECK(fabs(v - want) < 1e-15, "weighted RMS norm (RN eqs 13-14)");
    /* Hermite is exact for cubics: y = t^3 on [1, 3] */
    double y0 = 1, y1 = 27, f0 = 3, f1 = 27, C[4], out;
    mb_dense_hermite(1, 2.0, &y0, &f0, &y1, &f1, C);
    mb_dense_eval(1, 3, C, 0.3, &out);
    CHECK(fabs(out - pow(1.6, 3)) < 1e-13, "cubic Hermite exact on a cubic");
}


/* ---- the driver's work block at its extremes (issue: 6 ne doubles were handed
 * out of a block sized for 4 ne; under ASan any overrun is an error) ---- */

/* n/2 uncoupled oscillators q_i'' = -q_i, y = (q, q') */
static int f_oscn(double t, const double *y, double *f, void *ctx)
{
    (void)t;
    ptrdiff_t nq = *(const ptrdiff_t *)ctx;
    for (ptrdiff_t i = 0; i < nq; i++) {
        f[i] = y[nq + i];
        f[nq + i] = -y[i];
    }
    return 0;
}

typedef struct { ptrdiff_t n, ne; } evn_ctx;

/* ne events, g_k = y_{k mod n} - c_k with c_k in (-1, 1): each fires several times */
static int ev_many(double t, const double *y, double *g, void *ctx)
{
    (void)t;
    const evn_ctx *c = ctx;
    for (ptrdiff_t k = 0; k < c->ne; k++)
        g[k] = y[k % c->n] - (-0.9 + 1.8 * (double)k / (double)(c->ne > 1 ? c->ne - 1 : 1));
    return 0;
}

static void test_work_extremes(void)
{
    static const ptrdiff_t sizes[][2] = {{2, 0}, {2, 1}, {2, 5}, {2, 50}, {40, 50}};
    double atol[40], y0[40];
    int terminal[50], direction[50];
    for (int i = 0; i < 50; i++) { terminal[i] = 0; direction[i] = 0; }
    int runs = 0, bad = 0;
    char what[256] = "";
    for (size_t k = 0; k < mb_method_count(); k++) {
        const mb_method *m = mb_method_at(k);
        for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
            ptrdiff_t n = sizes[c][0], ne = sizes[c][1], nq = n / 2;
            for (ptrdiff_t i = 0; i < n; i++) {
                atol[i] = 1e-6;
                y0[i] = i < nq ? 1.0 - 0.01 * (double)i : 0.0;
            }
            mb_problem p = {n, f_oscn, 0, 0, nq, 0, 0};
            p.ctx = &nq;
            evn_ctx ec = {n, ne};
            mb_options o = defaults(atol, 1e-4);
            o.events = ne ? ev_many : NULL;
            o.n_events = ne;
            o.event_ctx = &ec;
            o.terminal = terminal;
            o.direction = direction;
            o.dense_output = 1;
            o.max_step = 0.5;  /* roots are located between step ends: a step longer than
                                * a half period could hide two crossings */
            if (m->flags & MB_FIXED_ONLY)
                o.h = 0.05;
            mb_result r;
            int rc = mb_driver_run(m, &p, 0.0, 7.0, y0, &o, &r);
            ptrdiff_t fired = 0;
            for (ptrdiff_t e = 0; e < ne; e++)
                fired += r.ev_count[e];
            /* every event crosses at least twice over more than a period */
            if (rc != MB_OK || (ne > 0 && fired < 2 * ne)) {
                bad++;
                snprintf(what, sizeof what, "%s n = %td, %td events: status %d, %td roots (%s)",
                         m->name, n, ne, rc, fired, r.message);
            }
            runs++;
            size_t w = mb_driver_work_size(m, &p, ne, 0);
            if (w < (size_t)(13 * n + 4 * ne)) {
                bad++;
                snprintf(what, sizeof what, "%s: work size %zu too small", m->name, w);
            }
            mb_result_free(&r);
        }
    }
    CHECK(bad == 0, "%d runs of every method with 0, 1, 5 and 50 events and n = 2, 40 "
          "(ASan watches the work block) %s", runs, what);
}

/* ---- option checks and guards that used to give silent wrong answers ---- */
static int ev_nan(double t, const double *y, double *g, void *ctx)
{
    (void)t; (void)y; (void)ctx;
    g[0] = NAN;
    return 0;
}

typedef struct { int calls, stop_after; } mon_ctx;

static int monitor_stop(double t, void *ctx)
{
    (void)t;
    mon_ctx *c = ctx;
    return ++c->calls >= c->stop_after ? MB_ERR_INTERRUPTED : MB_OK;
}

static void test_guards(void)
{
    const mb_method *rk4 = mb_method_find("rk4"), *dp = mb_method_find("dopri5");
    mb_problem p = {1, f_decay, 0, 0, 0, 0, 0};
    double atol[1] = {1e-6}, y0[1] = {1.0};
    mb_result r;

    /* a fixed step whose step count overflows a long used to "succeed" in one step */
    mb_options o = defaults(atol, 1e-3);
    o.h = 1e-20;
    int rc = mb_driver_run(rk4, &p, 0.0, 1.0, y0, &o, &r);
    CHECK(rc == MB_ERR_ILL_INPUT && r.nt == 0 && strstr(r.message, "max_steps"),
          "h = 1e-20 over [0, 1] is refused: %s", r.message);
    mb_result_free(&r);
    o.h = 1.0;
    rc = mb_driver_run(rk4, &p, 1e20, 1e20 + 1e6, y0, &o, &r);
    CHECK(rc == MB_ERR_ILL_INPUT && strstr(r.message, "cannot advance"),
          "h below the spacing of t0 is refused: %s", r.message);
    mb_result_free(&r);

    /* controller bounds: fac_min >= 1 used to reject steps forever */
    mb_options oc = defaults(atol, 1e-3);
    double bad_vals[][3] = {{1e9, 0, 0}, {0, 0.5, 0}, {0, 0, 1.5}, {-1, 0, 0}};
    for (int k = 0; k < 4; k++) {
        oc.fac_min = bad_vals[k][0];
        oc.fac_max = bad_vals[k][1];
        oc.safety = bad_vals[k][2];
        rc = mb_driver_run(dp, &p, 0.0, 1.0, y0, &oc, &r);
        CHECK(rc == MB_ERR_ILL_INPUT, "fac_min %g, fac_max %g, safety %g refused: %s",
              oc.fac_min, oc.fac_max, oc.safety, r.message);
        mb_result_free(&r);
    }

    /* NaN in t_eval */
    mb_options ot = defaults(atol, 1e-3);
    double te[3] = {0.0, NAN, 1.0};
    ot.t_eval = te;
    ot.n_eval = 3;
    rc = mb_driver_run(dp, &p, 0.0, 1.0, y0, &ot, &r);
    CHECK(rc == MB_ERR_ILL_INPUT, "NaN in t_eval refused: %s", r.message);
    mb_result_free(&r);

    /* an event that is always NaN used to be silently never triggered */
    mb_options oe = defaults(atol, 1e-3);
    int zero[1] = {0};
    oe.events = ev_nan;
    oe.n_events = 1;
    oe.terminal = zero;
    oe.direction = zero;
    rc = mb_driver_run(dp, &p, 0.0, 1.0, y0, &oe, &r);
    CHECK(rc == MB_ERR_EVENT_FAIL && strstr(r.message, "finite"), "NaN event: %s", r.message);
    mb_result_free(&r);

    /* default max_steps: a run that cannot finish stops with the trajectory so far */
    mb_options om = defaults(atol, 1e-3);
    rc = mb_driver_run(dp, &p, 0.0, 1e300, y0, &om, &r);
    CHECK(rc == MB_ERR_MAX_STEPS && r.nt > 1000 && strstr(r.message, "1000000"),
          "default max_steps = %ld: %s", MB_DEFAULT_MAX_STEPS, r.message);
    mb_result_free(&r);

    /* the monitor stops a run (Ctrl-C from the binding) and keeps what was computed */
    mon_ctx mc = {0, 50};
    mb_options oi = defaults(atol, 1e-10);
    oi.monitor = monitor_stop;
    oi.monitor_ctx = &mc;
    rc = mb_driver_run(dp, &p, 0.0, 1e3, y0, &oi, &r);
    CHECK(rc == MB_ERR_INTERRUPTED && r.nt >= 40 && r.t[r.nt - 1] > 0.0 &&
              fabs(r.y[r.nt - 1] - exp(-r.t[r.nt - 1])) < 1e-5,
          "interrupted after %d monitor calls (status %d): %td points kept, ends at t = %g, "
          "y = %g", mc.calls, rc, r.nt, r.t[r.nt - 1], r.y[r.nt - 1]);
    mb_result_free(&r);

    /* the minimum step follows |t|, not the span: steps of 1e-5 near t = 0 on a
     * span of 1e11 (it used to be 10 eps 1e11 = 2.2e-4) */
    CHECK(mb_min_step(0.0) < 1e-300 && mb_min_step(1.0) == 10 * DBL_EPSILON &&
              mb_min_step(-1.0) == 10 * DBL_EPSILON,
          "mb_min_step: 10 ulps of t (%g at 0, %g at 1)", mb_min_step(0.0), mb_min_step(1.0));
    mb_options os = defaults(atol, 1e-3);
    os.first_step = 1e-5;
    os.max_step = 1e-5;
    os.max_steps = 5;
    rc = mb_driver_run(dp, &p, 0.0, 1e11, y0, &os, &r);
    CHECK(rc == MB_ERR_MAX_STEPS && r.nt == 6, "steps of 1e-5 from t = 0 towards 1e11 (%s)",
          r.message);
    mb_result_free(&r);
}

/* ---- the phases of the step loop: the step size after a recoverable failure of f
 * or of the check of a step's end (MB_FAIL_SHRINK), and the count of fixed steps
 * shared by mb_options_check and the run ---- */
typedef struct once_ctx {
    double t_fail;  /* the first call past t_fail fails (recoverable) */
    int failures;
} once_ctx;

static int f_decay_fail_once(double t, const double *y, double *f, void *ctx)
{
    once_ctx *c = ctx;
    if (t > c->t_fail && c->failures == 0) {
        c->failures++;
        return 1;
    }
    f[0] = -y[0];
    return 0;
}

static int check_once(double t, const double *y, void *ctx)
{
    (void)y;
    once_ctx *c = ctx;
    if (t > c->t_fail && c->failures == 0) {
        c->failures++;
        return 1;
    }
    return 0;
}

static void test_step_phases(void)
{
    const mb_method *dp = mb_method_find("dopri5"), *rk4 = mb_method_find("rk4");
    double atol[1] = {1e-6}, y0[1] = {1.0};
    mb_result r;
    /* one step of 1 over [0, 1]: its stage at t = 0.8 fails; retried with 1/4 of it */
    once_ctx c = {0.5, 0};
    mb_problem pf = {1, f_decay_fail_once, 0, 0, 0, 0, 0};
    pf.ctx = &c;
    mb_options o = defaults(atol, 1e-3);
    o.first_step = 1.0;
    int rc = mb_driver_run(dp, &pf, 0.0, 1.0, y0, &o, &r);
    CHECK(rc == MB_OK && c.failures == 1 && r.stats.nfail == 1 && r.stats.nreject == 0 &&
              r.n_hist > 1 && r.hist_h[0] == 0.25 && r.t[r.nt - 1] == 1.0,
          "a recoverable failure of f: retried with h/4 (nfail %ld, first step %g, status %d)",
          r.stats.nfail, r.n_hist > 0 ? r.hist_h[0] : NAN, rc);
    mb_result_free(&r);

    /* the check rejects the end of the step of 1 (loose tolerances: it passes its
     * error test): retried with 1/4 of it */
    c.failures = 0;
    mb_problem pc = {1, f_decay, 0, 0, 0, 0, 0};
    pc.check = check_once;
    pc.ctx = &c;
    double loose[1] = {1.0};
    mb_options oc = defaults(loose, 1.0);
    oc.first_step = 1.0;
    rc = mb_driver_run(dp, &pc, 0.0, 1.0, y0, &oc, &r);
    CHECK(rc == MB_OK && c.failures == 1 && r.stats.nfail == 1 && r.n_hist > 1 &&
              r.hist_h[0] == 0.25,
          "a step's end rejected by the check: retried with h/4 (nfail %ld, first step %g)",
          r.stats.nfail, r.n_hist > 0 ? r.hist_h[0] : NAN);
    mb_result_free(&r);

    /* a fixed step in a span of 10 steps and a sliver: 10 steps, the last ending on tf,
     * within max_steps = 10; a span of 10 steps and a bit more needs 11 */
    mb_problem pd = {1, f_decay, 0, 0, 0, 0, 0};
    mb_options ofx = defaults(atol, 1e-3);
    ofx.h = 0.1;
    ofx.max_steps = 10;
    double tf = 1.0 + 1e-12;
    rc = mb_driver_run(rk4, &pd, 0.0, tf, y0, &ofx, &r);
    CHECK(rc == MB_OK && r.stats.nsteps == 10 && r.nt == 11 && r.t[10] == tf,
          "fixed steps: 10 steps over 10 h + 1e-12 (status %d, %ld steps)", rc, r.stats.nsteps);
    mb_result_free(&r);
    rc = mb_driver_run(rk4, &pd, 0.0, 1.0 + 1e-6, y0, &ofx, &r);
    CHECK(rc == MB_ERR_ILL_INPUT && strstr(r.message, "max_steps"),
          "fixed steps: 11 steps over 10 h + 1e-6 exceed max_steps = 10 (%s)", r.message);
    mb_result_free(&r);
}

/* ---- a switching event entered and left within one step ----
 * y' = v (every method is exact: the steps grow as they like); the switching event
 * g = w - |y - c| is positive in the slab |y - c| < w (a penalty contact passed
 * through, LLM section 3; scipy#9228).  A step that jumps the slab has g < 0 at both
 * ends. */
typedef struct slab {
    double c, w, v;
    int calls, f_ok;
} slab;

static int f_slab(double t, const double *y, double *yd, void *ctx)
{
    (void)t; (void)y;
    yd[0] = ((const slab *)ctx)->v;
    return 0;
}

static int ev_slab(double t, const double *y, double *g, void *ctx)
{
    (void)t;
    const slab *s = ctx;
    g[0] = s->w - fabs(y[0] - s->c);
    return 0;
}

/* continuous collision detection for the slab: before it, the step ends at its middle */
static int bound_slab(double t, const double *y, const double *f, double *h_max, void *ctx)
{
    (void)t;
    slab *s = ctx;
    s->calls++;
    if (fabs(f[0] - s->v) > 1e-12)
        s->f_ok = 0;
    *h_max = y[0] < s->c - s->w ? (s->c - y[0]) / s->v : INFINITY;
    return 0;
}

/* run over [0, 1] from y = 0; fixed > 0: fixed step; returns the number of slab
 * events (entry and exit), their times in te[2] */
static ptrdiff_t run_slab(const char *name, slab *s, int with_bound, double fixed, double *te,
                          mb_result *r)
{
    const mb_method *m = mb_method_find(name);
    mb_problem p = {.n = 1, .rhs = f_slab, .ctx = s};
    if (with_bound)
        p.step_bound = bound_slab;
    double atol[1] = {1e-10}, y0[1] = {0.0};
    int sw[1] = {1};
    mb_options o = defaults(atol, 1e-8);
    o.first_step = 1.0;  /* a first step over the whole span */
    o.h = fixed;
    o.events = ev_slab;
    o.event_ctx = s;
    o.n_events = 1;
    o.switching = sw;
    s->calls = 0;
    s->f_ok = 1;
    mb_driver_run(m, &p, 0.0, 1.0, y0, &o, r);
    ptrdiff_t k = r->ev_count[0];
    for (ptrdiff_t i = 0; i < k && i < 2; i++)
        te[i] = r->ev_t[0][i];
    return k;
}

static void test_switch_within_a_step(void)
{
    mb_result r;
    double te[2] = {0, 0};
    /* a slab across theta = 1/2 of the step: found by the interior samples alone */
    slab wide = {0.5, 0.1, 1.0, 0, 1};
    ptrdiff_t k = run_slab("dopri5", &wide, 0, 0.0, te, &r);
    CHECK(r.status == MB_OK && k == 2 && fabs(te[0] - 0.4) < 1e-12 && fabs(te[1] - 0.6) < 1e-12,
          "switching event inside one step found by the samples (%td roots, %.15g, %.15g)", k,
          te[0], te[1]);
    mb_result_free(&r);
    /* a slab between two samples (theta 1/2 and 5/8) is missed without the bound ... */
    slab thin = {0.53, 0.005, 1.0, 0, 1};
    k = run_slab("dopri5", &thin, 0, 0.0, te, &r);
    CHECK(k == 0, "a slab between the samples: missed without a step bound (%td roots)", k);
    mb_result_free(&r);
    /* ... and found with it, the bound evaluated once per point with f = f(t, y) */
    const char *names[] = {"dopri5", "radau_iia", "bdf", "llm"};
    for (int i = 0; i < 4; i++) {
        k = run_slab(names[i], &thin, 1, 0.0, te, &r);
        CHECK(r.status == MB_OK && k == 2 && fabs(te[0] - 0.525) < 1e-10 &&
                  fabs(te[1] - 0.535) < 1e-10 && thin.calls <= r.stats.nsteps && thin.f_ok,
              "%s with the step bound: the thin slab found (%td roots, %.12g, %.12g; %d "
              "bounds for %ld steps; status %d, f ok %d)", names[i], k, te[0], te[1], thin.calls,
              r.stats.nsteps, r.status, thin.f_ok);
        mb_result_free(&r);
    }
    /* fixed steps of 0.25: steps off the grid end inside the slab; the grid is kept */
    slab fx = {0.6, 0.005, 1.0, 0, 1};
    k = run_slab("rk4", &fx, 1, 0.25, te, &r);
    int grid = 0;
    for (ptrdiff_t i = 0; i < r.nt; i++)
        for (int g = 0; g <= 4; g++)
            grid += fabs(r.t[i] - 0.25 * g) < 1e-15;
    CHECK(r.status == MB_OK && k == 2 && fabs(te[0] - 0.595) < 1e-10 && grid == 5,
          "fixed steps with the bound: the slab found (%td roots), %d of 5 grid points kept", k,
          grid);
    mb_result_free(&r);
    k = run_slab("rk4", &fx, 0, 0.25, te, &r);
    CHECK(k == 0, "fixed steps without the bound: the slab jumped (%td roots)", k);
    mb_result_free(&r);
}

int main(void)
{
    test_tableau(&mb_erk_euler, &mb_method_euler);
    test_tableau(&mb_erk_heun, &mb_method_heun);
    test_tableau(&mb_erk_rk4, &mb_method_rk4);
    test_tableau(&mb_erk_rk23, &mb_method_rk23);
    test_tableau(&mb_erk_dopri5, &mb_method_dopri5);
    test_controller();
    test_norm_dense();
    test_orders();
    test_adaptive();
    test_events();
    test_switch_within_a_step();
    test_failures();
    test_step_phases();
    test_work_extremes();
    test_guards();
    CHECK(strcmp(mb_status_str(MB_ERR_STEP_TOO_SMALL),
                 "Required step size is less than spacing between numbers.") == 0,
          "status messages from status.def");
    return check_summary();
}
