/* Tests of the stiff/non-stiff switching method "auto" (csrc/methods/auto_switch.c)
 * and of the two services it takes from its sub-methods, without Python (run under
 * AddressSanitizer by tests/test_c_harness.py).
 *
 * (a) The registry entry and what the composite assumes of dopri5 and rodas4: both
 *     embedded, both using f0, neither with a driver-side flag the composite does not
 *     carry (Hermite dense output, variable order, LU reuse, fixed step only, second
 *     order, dense records); the declared order/error order are dopri5's; the dense
 *     buffer bound covers both; rodas4's workspace holds J and f (n^2 + n: borrowed
 *     by the confirmation).
 * (b) mb_erk_stiffness: after one dopri5 step on y' = lambda y it returns |h lambda|
 *     exactly (the last two stages differ by lambda (y_new - y_s)); on a diagonal
 *     system a value between the smallest and the largest |h lambda_i|, which the
 *     weights pick by the components' own scales; tables without two last stages at
 *     c = 1 are refused.
 * (c) mb_ros_jacobian: NULL before a step, the problem's J after one.
 * (d) Driver runs: Robertson (one switch, J only after it), Van der Pol mu = 1000
 *     (switches both ways: stiff, explicit across the jumps), a linear problem
 *     y' = -k(t) (y - cos t) - sin t whose stiffness k goes on and off (exact solution
 *     cos t; four switches, within 10x of the tolerance), a switching event in a stiff
 *     phase (the restart keeps rodas4: still one switch), and a mass matrix (refused
 *     with a message).
 * Prints one line per check and "N passed, M failed". */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "auto_switch.h"
#include "check.h"
#include "driver.h"
#include "erk.h"
#include "problems.h"
#include "registry.h"
#include "rosenbrock.h"
#include "status.h"

static void options_default(mb_options *o, const double *atol, double rtol)
{
    memset(o, 0, sizeof *o);
    o->rtol = rtol;
    o->atol = atol;
    o->controller = MB_CONTROLLER_PI;
}

/* ---------------- (a) registry and assumptions ---------------- */

static void check_registry(void)
{
    const mb_method *m = mb_method_find("auto");
    const mb_method *ns = &mb_method_dopri5, *st = &mb_method_rodas4;
    CHECK(m == &mb_method_auto, "auto is registered");
    CHECK(m->order == ns->order && m->error_order == ns->error_order,
          "auto declares dopri5's orders (%d, %d), the mode it starts in", m->order,
          m->error_order);
    CHECK(m->max_dense_degree >= ns->max_dense_degree &&
              m->max_dense_degree >= st->max_dense_degree,
          "dense buffer bound %d covers dopri5 (%d) and rodas4 (%d)", m->max_dense_degree,
          ns->max_dense_degree, st->max_dense_degree);
    const unsigned driver_side = MB_DENSE_HERMITE | MB_VARIABLE_ORDER | MB_LU_REUSE |
                                 MB_FIXED_ONLY | MB_SECOND_ORDER;
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        const mb_method *sub = k ? st : ns;
        ok = ok && (sub->flags & MB_EMBEDDED) && (sub->flags & MB_USES_F0) &&
             !(sub->flags & driver_side) && !sub->dense_record_size && sub->dense &&
             sub->dense_degree && !sub->after_step;
    }
    CHECK(ok, "dopri5 and rodas4 are embedded, use f0, have their own dense output and no "
              "flag the driver reads that auto does not carry");
    CHECK((m->flags & (MB_EMBEDDED | MB_USES_F0 | MB_NEEDS_JAC)) ==
                  (MB_EMBEDDED | MB_USES_F0 | MB_NEEDS_JAC) &&
              !(m->flags & (driver_side | MB_MASS)),
          "auto: embedded, uses f0, takes a Jacobian, no mass matrix");
    int borrow = 1;
    for (ptrdiff_t n = 1; n <= 64; n *= 2) {
        mb_problem p;
        memset(&p, 0, sizeof p);
        p.n = n;
        borrow = borrow && st->work_size(&p, st->data) >= (size_t)(n * n + n);
    }
    CHECK(borrow, "rodas4's workspace holds J and f (n^2 + n doubles) for n = 1..64");
}

/* ---------------- (b) the stiffness estimate of one dopri5 step ---------------- */

typedef struct diag_ctx {
    int n;
    double lam[4];
} diag_ctx;

static int diag_rhs(double t, const double *y, double *f, void *ctx)
{
    const diag_ctx *c = ctx;
    (void)t;
    for (int i = 0; i < c->n; i++)
        f[i] = c->lam[i] * y[i];
    return 0;
}

/* one step of method m from y0 with a stepper built by hand; returns the estimate */
static double one_step_estimate(const mb_method *m, mb_problem *p, const double *y0, double h,
                                const double *scale, int *rc_out)
{
    ptrdiff_t n = p->n;
    mb_stats stats;
    memset(&stats, 0, sizeof stats);
    char msg[256] = "";
    double f0[4], f1[4], y_new[4], err[4], atol[4] = {1e-6, 1e-6, 1e-6, 1e-6};
    double *work = calloc(m->work_size(p, m->data) + 1, sizeof(double));
    mb_stepper s;
    memset(&s, 0, sizeof s);
    s.m = m; s.p = p; s.n = n; s.f0 = f0; s.f1 = f1; s.work = work;
    s.atol = atol; s.rtol = 1e-6; s.stats = &stats; s.msg = msg; s.msg_len = sizeof msg;
    s.order = m->order; s.err_wanted = 1;
    s.t_last = 0.0; s.h_last = h; s.y_last = y0;
    p->rhs(0.0, y0, f0, p->ctx);
    s.f0_ok = 1;
    double hl = -1.0;
    int rc = m->step(&s, 0.0, h, y0, y_new, err);
    if (rc == MB_OK)
        rc = mb_erk_stiffness(&s, scale, &hl);
    *rc_out = rc;
    free(work);
    return hl;
}

static void check_stiffness_estimate(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.rhs = diag_rhs;
    diag_ctx c1 = {1, {-7.0}};
    p.n = 1; p.ctx = &c1;
    double y1[1] = {1.0}, h = 0.3;
    int rc;
    double hl = one_step_estimate(&mb_method_dopri5, &p, y1, h, NULL, &rc);
    CHECK(rc == MB_OK && fabs(hl - 2.1) < 1e-12, "y' = -7 y, h = 0.3: h |lambda| = %.15g "
          "(exact 2.1)", hl);
    hl = one_step_estimate(&mb_method_dopri5, &p, y1, -h, NULL, &rc);
    CHECK(rc == MB_OK && fabs(hl - 2.1) < 1e-12, "a step backwards: %.15g", hl);
    double sc1[1] = {1e-3};
    hl = one_step_estimate(&mb_method_dopri5, &p, y1, h, sc1, &rc);
    CHECK(rc == MB_OK && fabs(hl - 2.1) < 1e-12, "weights do not change a scalar estimate: "
          "%.15g", hl);

    /* diag(-1, -100), h = 0.01 (|h lambda| = 0.01 and 1): y_new - y_s is ~ z^5 y per
     * component, so with a stiff component of 1e-22 the plain 2-norms see the slow one,
     * and weights in the components' own scale see the stiff one */
    diag_ctx c2 = {2, {-1.0, -100.0}};
    p.n = 2; p.ctx = &c2;
    double y2[2] = {1.0, 1e-22}, h2 = 0.01;
    hl = one_step_estimate(&mb_method_dopri5, &p, y2, h2, NULL, &rc);
    CHECK(rc == MB_OK && fabs(hl - 0.01) < 1e-6, "diag(-1, -100), y = (1, 1e-22): plain norms "
          "read the slow |h lambda| = 0.01: %.6g", hl);
    double sc2[2] = {1.0, 1e-22};
    double hlw = one_step_estimate(&mb_method_dopri5, &p, y2, h2, sc2, &rc);
    CHECK(rc == MB_OK && fabs(hlw - 1.0) < 1e-3, "weighted by (1, 1e-22): the stiff |h lambda| "
          "= 1: %.6g", hlw);
    double y3[2] = {1.0, 1.0};
    hl = one_step_estimate(&mb_method_dopri5, &p, y3, h2, NULL, &rc);
    CHECK(rc == MB_OK && hl >= 0.01 && hl <= 1.0 + 1e-12, "y = (1, 1): between the two: %.6g",
          hl);

    hl = one_step_estimate(&mb_method_rk23, &p, y2, h2, NULL, &rc);
    CHECK(rc == MB_ERR_ILL_INPUT, "rk23 (last stage at c = 3/4) is refused (rc %d)", rc);
}

/* ---------------- (c) the Jacobian a Rosenbrock stepper holds ---------------- */

static void check_ros_jacobian(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    p.rhs = mb_test_problem_find("vdp1000");
    p.jac = mb_test_problem_jac("vdp1000");
    const mb_method *m = &mb_method_rodas4;
    mb_stats stats;
    memset(&stats, 0, sizeof stats);
    char msg[256] = "";
    double y0[2] = {2.0, -0.6}, f0[2], f1[2], y_new[2], err[2], atol[2] = {1e-6, 1e-6};
    double jac_work[6], J_ref[4];
    double *work = calloc(m->work_size(&p, m->data), sizeof(double));
    mb_stepper s;
    memset(&s, 0, sizeof s);
    s.m = m; s.p = &p; s.n = 2; s.f0 = f0; s.f1 = f1; s.work = work; s.jac_work = jac_work;
    s.atol = atol; s.rtol = 1e-6; s.stats = &stats; s.msg = msg; s.msg_len = sizeof msg;
    s.order = m->order; s.err_wanted = 1;
    int rc = m->init(&s);
    CHECK(rc == MB_OK && mb_ros_jacobian(&s) == NULL, "no Jacobian before the first step");
    p.rhs(0.0, y0, f0, NULL);
    s.f0_ok = 1;
    s.t_last = 0.0; s.h_last = 1e-3; s.y_last = y0;
    rc = m->step(&s, 0.0, 1e-3, y0, y_new, err);
    if (rc == MB_OK)
        rc = m->accept(&s, 1e-3, y_new);
    p.jac(0.0, y0, J_ref, 2, NULL);
    const double *J = mb_ros_jacobian(&s);
    double d = 0.0;
    for (int k = 0; J && k < 4; k++)
        d = fmax(d, fabs(J[k] - J_ref[k]));
    CHECK(rc == MB_OK && J && d == 0.0, "after a step: J at its start point (max diff %g)", d);
    free(work);
}

/* ---------------- (d) driver runs ---------------- */

static int run(const mb_problem *p, double t0, double tf, const double *y0, double rtol,
               const double *atol, const double *t_eval, ptrdiff_t n_eval, mb_result *r)
{
    mb_options o;
    options_default(&o, atol, rtol);
    o.t_eval = t_eval;
    o.n_eval = n_eval;
    return mb_driver_run(&mb_method_auto, p, t0, tf, y0, &o, r);
}

static void check_robertson(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 3;
    p.rhs = mb_test_problem_find("robertson");
    double y0[3] = {1.0, 0.0, 0.0}, atol[3] = {1e-10, 1e-10, 1e-10};
    mb_result r;
    int rc = run(&p, 0.0, 1e5, y0, 1e-6, atol, NULL, 0, &r);
    const double *y = r.y + (r.nt - 1) * 3;
    /* y(1e5) by radau_iia at rtol 1e-12, atol 1e-16 (SciPy's Radau agrees to 1e-11) */
    double y_ref[3] = {1.786592114210421e-02, 7.274751468438298e-08, 9.821340061103787e-01};
    double e = 0.0;
    for (int i = 0; i < 3; i++)
        e = fmax(e, fabs(y[i] - y_ref[i]) / (1e-10 + 1e-6 * fabs(y_ref[i])));
    CHECK(rc == MB_OK && r.stats.nswitch == 1 && r.stats.njev > 0 && e < 10.0,
          "Robertson to 1e5, finite-difference J: %ld switch, njev %ld, nfev %ld, error %.2f "
          "x tol", r.stats.nswitch, r.stats.njev, r.stats.nfev, e);
    mb_result_free(&r);
}

static void check_vdp(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    p.rhs = mb_test_problem_find("vdp1000");
    p.jac = mb_test_problem_jac("vdp1000");
    double y0[2] = {2.0, 0.0}, atol[2] = {1e-6, 1e-6};
    mb_result r;
    int rc = run(&p, 0.0, 2.0, y0, 1e-6, atol, NULL, 0, &r);
    CHECK(rc == MB_OK && r.stats.nswitch == 5,
          "Van der Pol mu = 1000 on [0, 2]: %ld switches (stiff, explicit across two jumps)",
          r.stats.nswitch);
    mb_result_free(&r);
}

/* y' = -k(t) (y - cos t) - sin t, k = 1 + 1e4 s(t), s ~ 1 on [2, 4] and [6, 8] */
static double window(double t)
{
    const double w = 0.1;
    return 0.5 * (tanh((t - 2.0) / w) - tanh((t - 4.0) / w)) +
           0.5 * (tanh((t - 6.0) / w) - tanh((t - 8.0) / w));
}

static int onoff_rhs(double t, const double *y, double *f, void *ctx)
{
    (void)ctx;
    f[0] = -(1.0 + 1e4 * window(t)) * (y[0] - cos(t)) - sin(t);
    return 0;
}

static void check_onoff(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 1;
    p.rhs = onoff_rhs;
    double y0[1] = {1.0}, atol[1] = {1e-8}, te[101];
    for (int k = 0; k <= 100; k++)
        te[k] = 0.1 * k;
    mb_result r;
    int rc = run(&p, 0.0, 10.0, y0, 1e-6, atol, te, 101, &r);
    double e = 0.0;
    for (ptrdiff_t k = 0; rc == MB_OK && k < r.nt; k++)
        e = fmax(e, fabs(r.y[k] - cos(r.t[k])) / (1e-8 + 1e-6 * fabs(cos(r.t[k]))));
    CHECK(rc == MB_OK && r.nt == 101 && r.stats.nswitch == 4 && e < 10.0,
          "stiffness on and off: %ld switches, error %.2f x tol, nfev %ld, njev %ld",
          r.stats.nswitch, e, r.stats.nfev, r.stats.njev);
    mb_result_free(&r);
}

static int at_100(double t, const double *y, double *g, void *ctx)
{
    (void)y; (void)ctx;
    g[0] = t - 100.0;
    return 0;
}

static void check_restart(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 3;
    p.rhs = mb_test_problem_find("robertson");
    p.jac = mb_test_problem_jac("robertson");
    double y0[3] = {1.0, 0.0, 0.0}, atol[3] = {1e-10, 1e-10, 1e-10};
    int sw[1] = {1};
    mb_options o;
    options_default(&o, atol, 1e-6);
    o.events = at_100;
    o.n_events = 1;
    o.switching = sw;
    mb_result r;
    int rc = mb_driver_run(&mb_method_auto, &p, 0.0, 1e4, y0, &o, &r);
    CHECK(rc == MB_OK && r.stats.nrestart == 1 && r.stats.nswitch == 1 && r.ev_count[0] == 1 &&
              fabs(r.ev_t[0][0] - 100.0) < 1e-9,
          "a restart at t = 100 in Robertson's stiff phase keeps rodas4 (%ld restart, %ld "
          "switch)", r.stats.nrestart, r.stats.nswitch);
    mb_result_free(&r);
}

static void check_mass_refused(void)
{
    mb_problem p;
    memset(&p, 0, sizeof p);
    p.n = 1;
    p.rhs = onoff_rhs;
    double M[1] = {1.0}, y0[1] = {1.0}, atol[1] = {1e-8};
    p.mass = M;
    mb_result r;
    int rc = run(&p, 0.0, 1.0, y0, 1e-6, atol, NULL, 0, &r);
    CHECK(rc == MB_ERR_NOT_SUPPORTED && strstr(r.message, "mass matrix") != NULL,
          "a mass matrix is refused: \"%s\"", r.message);
    mb_result_free(&r);
}

int main(void)
{
    check_registry();
    check_stiffness_estimate();
    check_ros_jacobian();
    check_robertson();
    check_vdp();
    check_onoff();
    check_restart();
    check_mass_refused();
    return check_summary();
}
