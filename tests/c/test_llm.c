/* C tests of the Local Linearization Method (csrc/methods/llm.c) and of the driver's
 * dense records and switching events (csrc/core/driver.c), without Python:
 *   - exact (to rounding) on y' = lambda y and on y' = A y + b0 + b1 t for any h;
 *   - the dense record reproduces y_new at theta = 1 bit for bit and the exact
 *     solution inside the step;
 *   - a rejected step reuses J (njev == nsteps);
 *   - the local error estimate (eqs 29-33) against the exact local error on the
 *     test ODE of eq 35, component by component;
 *   - R(z) = e^z;
 *   - the bouncing balls of eqs 19-21 with contact restarts: energy kept to rounding,
 *     fixed grid kept, roots reported past the switch; dopri5 without restarts drifts.
 */
#include <float.h>
#include <math.h>
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "driver.h"
#include "llm.h"
#include "registry.h"
#include "status.h"

static const mb_method *const LLM = &mb_method_llm;

static mb_options opts(const double *atol, double rtol, double h)
{
    mb_options o;
    memset(&o, 0, sizeof o);
    o.rtol = rtol;
    o.atol = atol;
    o.h = h;
    return o;
}

/* ---- y' = lambda y ---- */
static int rhs_lin1(double t, const double *y, double *f, void *ctx)
{
    (void)t;
    f[0] = *(const double *)ctx * y[0];
    return 0;
}

static int jac_lin1(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)y; (void)ld;
    J[0] = *(const double *)ctx;
    return 0;
}

static int dfdt_zero(double t, const double *y, double *ft, void *ctx)
{
    (void)t; (void)y; (void)ctx;
    ft[0] = 0.0;
    return 0;
}

static void test_scalar_exact(void)
{
    const double lams[] = {-3.0, 0.7, -50.0}, hs[] = {0.1, 1.0, 2.5};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double lam = lams[a], atol = 1e-6, y0 = 1.0;
            mb_problem p = {.n = 1, .rhs = rhs_lin1, .jac = jac_lin1, .dfdt = dfdt_zero,
                            .ctx = &lam};
            mb_options o = opts(&atol, 1e-6, hs[b]);
            mb_result r;
            int rc = mb_driver_run(LLM, &p, 0.0, 10.0, &y0, &o, &r);
            double worst = 0.0, ymax = 0.0;
            for (ptrdiff_t k = 0; k < r.nt; k++)
                ymax = fmax(ymax, fabs(r.y[k]));
            /* rounding: relative to the solution, and a few ulps of the largest |y|
             * where it has decayed (y + phi cancels there) */
            for (ptrdiff_t k = 0; k < r.nt; k++) {
                double ex = exp(lam * r.t[k]);
                worst = fmax(worst, fabs(r.y[k] - ex) / (1e-13 * fabs(ex) + 4 * DBL_EPSILON * ymax));
            }
            CHECK(rc == MB_OK && worst <= 1.0 && r.nt == (ptrdiff_t)ceil(10.0 / hs[b] - 1e-9) + 1,
                  "llm exact on y' = %g y with h = %g: error / (1e-13 |y| + 4 eps max|y|) = "
                  "%.2f", lam, hs[b], worst);
            mb_result_free(&r);
        }
}

/* ---- y' = A y + b0 + b1 t, A = Q B Q^T with B = [[-a, w, 0], [-w, -a, 0], [0, 0, -c]] ---- */
typedef struct lin3 {
    double A[9], Q[9], b0[3], b1[3], a, w, c;
} lin3;

static void lin3_init(lin3 *L)
{
    L->a = 0.3; L->w = 4.0; L->c = 2.0;
    /* Q: rotation by 0.4 about z then 0.7 about x (orthogonal) */
    double c1 = cos(0.4), s1 = sin(0.4), c2 = cos(0.7), s2 = sin(0.7);
    double Rz[9] = {c1, -s1, 0, s1, c1, 0, 0, 0, 1};   /* row-major */
    double Rx[9] = {1, 0, 0, 0, c2, -s2, 0, s2, c2};
    double Qr[9] = {0}, B[9] = {-L->a, L->w, 0, -L->w, -L->a, 0, 0, 0, -L->c}, QB[9] = {0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                Qr[i * 3 + j] += Rx[i * 3 + k] * Rz[k * 3 + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                QB[i * 3 + j] += Qr[i * 3 + k] * B[k * 3 + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double acc = 0;
            for (int k = 0; k < 3; k++)
                acc += QB[i * 3 + k] * Qr[j * 3 + k];
            L->A[j * 3 + i] = acc;      /* column-major */
            L->Q[i * 3 + j] = Qr[i * 3 + j];  /* row-major */
        }
    const double b0[3] = {1.0, -2.0, 0.5}, b1[3] = {0.3, 0.8, -1.1};
    memcpy(L->b0, b0, sizeof b0);
    memcpy(L->b1, b1, sizeof b1);
}

static int rhs_lin3(double t, const double *y, double *f, void *ctx)
{
    const lin3 *L = ctx;
    for (int i = 0; i < 3; i++) {
        f[i] = L->b0[i] + L->b1[i] * t;
        for (int j = 0; j < 3; j++)
            f[i] += L->A[j * 3 + i] * y[j];
    }
    return 0;
}

static int jac_lin3(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)y;
    const lin3 *L = ctx;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            J[j * ld + i] = L->A[j * 3 + i];
    return 0;
}

static int dfdt_lin3(double t, const double *y, double *ft, void *ctx)
{
    (void)t; (void)y;
    memcpy(ft, ((const lin3 *)ctx)->b1, 3 * sizeof(double));
    return 0;
}

/* solve the 3x3 system A x = b (column-major A) by Cramer's rule */
static void solve3(const double *A, const double *b, double *x)
{
#define M(i, j) A[(j) * 3 + (i)]
    double det = M(0, 0) * (M(1, 1) * M(2, 2) - M(1, 2) * M(2, 1)) -
                 M(0, 1) * (M(1, 0) * M(2, 2) - M(1, 2) * M(2, 0)) +
                 M(0, 2) * (M(1, 0) * M(2, 1) - M(1, 1) * M(2, 0));
    for (int c = 0; c < 3; c++) {
        double Mc[9];
        memcpy(Mc, A, sizeof Mc);
        for (int i = 0; i < 3; i++)
            Mc[c * 3 + i] = b[i];
        const double *B = Mc;
#define N(i, j) B[(j) * 3 + (i)]
        x[c] = (N(0, 0) * (N(1, 1) * N(2, 2) - N(1, 2) * N(2, 1)) -
                N(0, 1) * (N(1, 0) * N(2, 2) - N(1, 2) * N(2, 0)) +
                N(0, 2) * (N(1, 0) * N(2, 1) - N(1, 1) * N(2, 0))) / det;
#undef N
    }
#undef M
}

/* exact solution: y = c0 + c1 t + Q e^{Bt} Q^T (y0 - c0), A c1 = -b1, A c0 = c1 - b0 */
static void lin3_exact(const lin3 *L, const double *y0, double t, double *y)
{
    double c1[3], c0[3], rhs[3], nb1[3], z[3], ez[3];
    for (int i = 0; i < 3; i++) nb1[i] = -L->b1[i];
    solve3(L->A, nb1, c1);
    for (int i = 0; i < 3; i++) rhs[i] = c1[i] - L->b0[i];
    solve3(L->A, rhs, c0);
    for (int i = 0; i < 3; i++) {
        z[i] = 0;
        for (int k = 0; k < 3; k++) z[i] += L->Q[k * 3 + i] * (y0[k] - c0[k]);  /* Q^T */
    }
    double ea = exp(-L->a * t), cw = cos(L->w * t), sw = sin(L->w * t);
    ez[0] = ea * (cw * z[0] + sw * z[1]);
    ez[1] = ea * (-sw * z[0] + cw * z[1]);
    ez[2] = exp(-L->c * t) * z[2];
    for (int i = 0; i < 3; i++) {
        y[i] = c0[i] + c1[i] * t;
        for (int k = 0; k < 3; k++) y[i] += L->Q[i * 3 + k] * ez[k];
    }
}

static void test_linear_exact(void)
{
    lin3 L;
    lin3_init(&L);
    const double y0[3] = {1.0, 0.5, -0.25}, atol[3] = {1e-6, 1e-6, 1e-6};
    const double hs[] = {0.05, 0.5, 3.0};
    mb_problem p = {.n = 3, .rhs = rhs_lin3, .jac = jac_lin3, .dfdt = dfdt_lin3, .ctx = &L};
    for (int b = 0; b < 3; b++) {
        mb_options o = opts(atol, 1e-6, hs[b]);
        o.dense_output = 1;
        mb_result r;
        int rc = mb_driver_run(LLM, &p, 0.0, 6.0, y0, &o, &r);
        double worst = 0.0, ex[3];
        for (ptrdiff_t k = 0; k < r.nt; k++) {
            lin3_exact(&L, y0, r.t[k], ex);
            for (int i = 0; i < 3; i++)
                worst = fmax(worst, fabs(r.y[k * 3 + i] - ex[i]) / (1.0 + fabs(ex[i])));
        }
        CHECK(rc == MB_OK && worst < 1e-13,
              "llm exact on y' = A y + b0 + b1 t with h = %g: max error %.2e", hs[b], worst);
        /* the dense record: theta = 1 gives y_new bit for bit; inside, the exact solution */
        size_t wsz = 0, len = LLM->dense_record_size(3, NULL, &wsz);
        double *work = malloc((wsz + 1) * sizeof(double)), yv[3];
        int bitwise = r.d_rec_len == (ptrdiff_t)len && r.nsteps_d == r.nt - 1, inside_ok = 1;
        double inside = 0.0;
        for (ptrdiff_t k = 0; bitwise && k < r.nsteps_d; k++) {
            const double *rec = r.d_c + r.d_off[k];
            bitwise &= r.d_deg[k] == -1;
            inside_ok &= LLM->dense_record_eval(LLM, 3, rec, r.d_t[k], r.d_h[k], 1.0, yv, work) ==
                         MB_OK;
            bitwise &= memcmp(yv, r.y + (k + 1) * 3, sizeof yv) == 0;
            inside_ok &= LLM->dense_record_eval(LLM, 3, rec, r.d_t[k], r.d_h[k], 0.37, yv, work) ==
                         MB_OK;
            lin3_exact(&L, y0, r.d_t[k] + 0.37 * r.d_h[k], ex);
            for (int i = 0; i < 3; i++)
                inside = fmax(inside, fabs(yv[i] - ex[i]) / (1.0 + fabs(ex[i])));
        }
        CHECK(bitwise, "h = %g: dense record at theta = 1 reproduces y_new bit for bit", hs[b]);
        CHECK(inside_ok && inside < 1e-13,
              "h = %g: dense record at theta = 0.37 is the exact solution (error %.2e)", hs[b],
              inside);
        free(work);
        mb_result_free(&r);
    }
}

/* ---- pendulum: rejected steps reuse J ---- */
static int rhs_pend(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = y[1];
    f[1] = -sin(y[0]);
    return 0;
}

static void test_jacobian_reuse(void)
{
    const double y0[2] = {2.5, 0.0}, atol[2] = {1e-9, 1e-9};
    mb_problem p = {.n = 2, .rhs = rhs_pend};
    mb_options o = opts(atol, 1e-8, 0.0);
    o.first_step = 0.5;  /* far too large: rejections at the start */
    mb_result r;
    int rc = mb_driver_run(LLM, &p, 0.0, 10.0, y0, &o, &r);
    CHECK(rc == MB_OK && r.stats.nreject > 0 && r.stats.njev == r.stats.nsteps &&
              r.stats.nfail == 0,
          "rejected steps reuse f_y: njev = %ld = nsteps = %ld with %ld rejections",
          r.stats.njev, r.stats.nsteps, r.stats.nreject);
    /* per step: f(t+h, y_new), the 2-column finite-difference J, the df/dt difference */
    CHECK(r.stats.nlu == 2 * (r.stats.nsteps + r.stats.nreject),
          "two exponentials per attempt: nlu = %ld", r.stats.nlu);
    double e = 0.5 * r.y[(r.nt - 1) * 2 + 1] * r.y[(r.nt - 1) * 2 + 1] -
               cos(r.y[(r.nt - 1) * 2]), e0 = -cos(2.5);
    CHECK(fabs(e - e0) < 1e-5, "pendulum energy after 10 s at rtol 1e-8: error %.2e",
          fabs(e - e0));
    mb_result_free(&r);
}

/* ---- eq 35: x = (sin 1/t, cos 1/t, t) ---- */
static int rhs_eq35(double t, const double *x, double *f, void *ctx)
{
    (void)t; (void)ctx;
    double i2 = 1.0 / (x[2] * x[2]);
    f[0] = -x[1] * i2;
    f[1] = x[0] * i2;
    f[2] = 1.0;
    return 0;
}

static int jac_eq35(double t, const double *x, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)ctx;
    double i2 = 1.0 / (x[2] * x[2]), i3 = i2 / x[2];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            J[j * ld + i] = 0.0;
    J[1 * ld + 0] = -i2;
    J[2 * ld + 0] = 2.0 * x[1] * i3;
    J[0 * ld + 1] = i2;
    J[2 * ld + 1] = -2.0 * x[0] * i3;
    return 0;
}

static int dfdt_zero3(double t, const double *y, double *ft, void *ctx)
{
    (void)t; (void)y; (void)ctx;
    ft[0] = ft[1] = ft[2] = 0.0;
    return 0;
}

static void test_error_estimate(void)
{
    mb_problem p = {.n = 3, .rhs = rhs_eq35, .jac = jac_eq35, .dfdt = dfdt_zero3};
    double t0 = 1.0 / M_PI, x0[3] = {0.0, -1.0, t0}, atol[3] = {1, 1, 1};
    mb_stats st;
    memset(&st, 0, sizeof st);
    char msg[256] = "";
    double f0[3], f1[3], jw[9], xn[3], err[3];
    size_t wsz = LLM->work_size(&p, NULL);
    double *work = calloc(wsz, sizeof(double));
    mb_stepper s;
    memset(&s, 0, sizeof s);
    s.m = LLM; s.p = &p; s.n = 3; s.f0 = f0; s.f1 = f1; s.work = work; s.atol = atol;
    s.rtol = 1e-6; s.stats = &st; s.msg = msg; s.msg_len = sizeof msg; s.jac_work = jw;
    s.err_wanted = 1;
    int ok = LLM->init(&s) == MB_OK && rhs_eq35(t0, x0, f0, NULL) == 0;
    s.f0_ok = 1;
    double lo = 1e9, hi = 0.0;
    for (int k = 0; k <= 8; k++) {
        double h = pow(10.0, -3.0 + 0.25 * k);
        ok &= LLM->step(&s, t0, h, x0, xn, err) == MB_OK;
        double ex[3] = {sin(1.0 / (t0 + h)), cos(1.0 / (t0 + h)), t0 + h};
        for (int i = 0; i < 2; i++) {
            double ratio = err[i] / (ex[i] - xn[i]);
            lo = fmin(lo, ratio);
            hi = fmax(hi, ratio);
        }
        ok &= fabs(ex[2] - xn[2]) < 1e-15 && fabs(err[2]) < 1e-15;
    }
    CHECK(ok && lo > 0.5 && hi < 2.0,
          "eq 35: estimated / exact local error in [%.3f, %.3f] for h in [1e-3, 1e-1]", lo, hi);
    CHECK(st.njev == 1, "nine step sizes from one point: one Jacobian (njev = %ld)", st.njev);
    free(work);
}

static void test_amplification(void)
{
    double zs[][2] = {{-1.0, 0.0}, {-20.0, 3.0}, {0.5, -7.0}}, worst = 0.0;
    for (int k = 0; k < 3; k++) {
        double Rr, Ri, er = exp(zs[k][0]) * cos(zs[k][1]), ei = exp(zs[k][0]) * sin(zs[k][1]);
        LLM->amplification(LLM, zs[k][0], zs[k][1], &Rr, &Ri);
        worst = fmax(worst, hypot(Rr - er, Ri - ei) / hypot(er, ei));
    }
    CHECK(worst < 1e-15, "R(z) = e^z (error %.1e)", worst);
}

/* ---- bouncing balls (LLM eqs 19-21): y = (y1, y2, y1', y2'), unit masses ---- */
enum { BB_K = 100000 };
static const double BB_R = 0.1, BB_G = 9.81;

static int rhs_bb(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    double p1 = 2 * BB_R - (y[0] - y[1]), p2 = BB_R - y[1];
    double F1 = p1 > 0 ? -BB_K * (y[0] - y[1] - 2 * BB_R) : 0.0;
    double F2 = p2 > 0 ? -BB_K * (y[1] - BB_R) : 0.0;
    f[0] = y[2];
    f[1] = y[3];
    f[2] = -BB_G + F1;
    f[3] = -BB_G - F1 + F2;
    return 0;
}

static int jac_bb(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)ctx;
    double p1 = 2 * BB_R - (y[0] - y[1]), p2 = BB_R - y[1];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++)
            J[j * ld + i] = 0.0;
    J[2 * ld + 0] = J[3 * ld + 1] = 1.0;
    if (p1 > 0) {
        J[0 * ld + 2] -= BB_K; J[1 * ld + 2] += BB_K;
        J[0 * ld + 3] += BB_K; J[1 * ld + 3] -= BB_K;
    }
    if (p2 > 0)
        J[1 * ld + 3] -= BB_K;
    return 0;
}

static int gaps_bb(double t, const double *y, double *g, void *ctx)
{
    (void)t; (void)ctx;
    g[0] = 2 * BB_R - (y[0] - y[1]);
    g[1] = BB_R - y[1];
    return 0;
}

static double energy_bb(const double *y)
{
    double p1 = fmax(2 * BB_R - (y[0] - y[1]), 0.0), p2 = fmax(BB_R - y[1], 0.0);
    return 0.5 * (y[2] * y[2] + y[3] * y[3]) + BB_G * (y[0] + y[1]) +
           0.5 * BB_K * (p1 * p1 + p2 * p2);
}

static double energy_drift(const mb_result *r)
{
    double e0 = energy_bb(r->y), worst = 0.0;
    for (ptrdiff_t k = 0; k < r->nt; k++)
        worst = fmax(worst, fabs(energy_bb(r->y + k * 4) - e0) / fabs(e0));
    return worst;
}

static void test_bouncing_balls(void)
{
    const double y0[4] = {2.0, 1.0, 0.0, 0.0}, atol[4] = {1e-8, 1e-8, 1e-8, 1e-8};
    const int terminal[2] = {0, 0}, direction[2] = {0, 0}, switching[2] = {1, 1};
    mb_problem p = {.n = 4, .rhs = rhs_bb, .jac = jac_bb};
    double h = 0.005, tf = 5.0;

    mb_options o = opts(atol, 1e-6, h);
    o.events = gaps_bb;
    o.n_events = 2;
    o.terminal = terminal;
    o.direction = direction;
    o.switching = switching;
    mb_result rf, ra, rd;
    int rc = mb_driver_run(LLM, &p, 0.0, tf, y0, &o, &rf);
    double drift_f = energy_drift(&rf);
    CHECK(rc == MB_OK && drift_f < 1e-8 && rf.stats.nrestart == rf.ev_count[0] + rf.ev_count[1] &&
              rf.stats.nrestart > 20,
          "bouncing balls, llm h = %g with contact restarts: energy drift %.2e over 5 s "
          "(%ld restarts)", h, drift_f, rf.stats.nrestart);
    /* the fixed grid is kept: every k h is an output point */
    int grid = 1;
    ptrdiff_t k = 0;
    for (int j = 0; j <= (int)(tf / h + 0.5); j++) {
        double tj = j == (int)(tf / h + 0.5) ? tf : j * h;
        while (k < rf.nt && rf.t[k] < tj - 1e-12) k++;
        grid &= k < rf.nt && fabs(rf.t[k] - tj) < 1e-12;
    }
    ptrdiff_t ngrid = (ptrdiff_t)(tf / h + 0.5) + 1;
    CHECK(grid && rf.nt >= ngrid + 2 * rf.stats.nrestart && rf.nt <= ngrid + 3 * rf.stats.nrestart,
          "fixed grid kept around the switches: %td points = %td grid points + %td (a step "
          "to just before each switch, one across it)", rf.nt, ngrid, rf.nt - ngrid);
    /* every root is reported past the switch: g there is not zero and has the sign
     * it keeps in the step that follows */
    int past = 1;
    for (int i = 0; i < 2; i++)
        for (ptrdiff_t e = 0; e < rf.ev_count[i]; e++) {
            double g[2], gn[2];
            const double *ye = rf.ev_y[i] + e * 4;
            gaps_bb(0, ye, g, NULL);
            ptrdiff_t kk = 0;
            while (kk < rf.nt && rf.t[kk] <= rf.ev_t[i][e]) kk++;
            if (kk < rf.nt) {
                gaps_bb(0, rf.y + kk * 4, gn, NULL);
                past &= g[i] != 0.0 && (g[i] > 0) == (gn[i] > 0);
            }
        }
    CHECK(past, "switching roots are reported just past the switch");

    mb_options oa = o;
    oa.h = 0.0;
    oa.max_step = h;
    rc = mb_driver_run(LLM, &p, 0.0, tf, y0, &oa, &ra);
    double drift_a = energy_drift(&ra), dt = 0.0;
    int same = ra.ev_count[0] == rf.ev_count[0] && ra.ev_count[1] == rf.ev_count[1];
    for (int i = 0; same && i < 2; i++)
        for (ptrdiff_t e = 0; e < ra.ev_count[i]; e++)
            dt = fmax(dt, fabs(ra.ev_t[i][e] - rf.ev_t[i][e]));
    CHECK(rc == MB_OK && drift_a < 1e-8 && same && dt < 1e-9,
          "adaptive llm (max_step %g): energy drift %.2e, the same %ld contact instants "
          "(max difference %.1e s)", h, drift_a, ra.stats.nrestart, dt);

    mb_options od = opts(atol, 1e-6, 0.0);
    od.max_step = 0.01;
    rc = mb_driver_run(mb_method_find("dopri5"), &p, 0.0, tf, y0, &od, &rd);
    double drift_d = energy_drift(&rd);
    CHECK(rc == MB_OK && drift_d > 1e-6 && drift_d > 1e4 * drift_f,
          "dopri5 without restarts drifts: %.2e (llm %.2e)", drift_d, drift_f);
    mb_result_free(&rf);
    mb_result_free(&ra);
    mb_result_free(&rd);
}

int main(void)
{
    test_scalar_exact();
    test_linear_exact();
    test_jacobian_reuse();
    test_error_estimate();
    test_amplification();
    test_bouncing_balls();
    return check_summary();
}
