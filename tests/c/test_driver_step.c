/* C tests of the driver in pieces (driver.h "Piecewise runs", driver_step.c) without
 * Python: the same steps and numbers as one mb_driver_run (with t_eval), events, an
 * input changed between pieces against the closed form, failures. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "driver.h"
#include "registry.h"
#include "status.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* y'' = -y as y = (y, y') */
static int f_osc(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = y[1];
    f[1] = -y[0];
    return 0;
}

/* y' = -y + u, u read from the context between pieces (a zero-order hold input) */
static int f_input(double t, const double *y, double *f, void *ctx)
{
    (void)t;
    f[0] = -y[0] + *(const double *)ctx;
    return 0;
}

/* y' (the velocity of the oscillator) crossing -0.5 downwards */
static int ev_vel(double t, const double *y, double *g, void *ctx)
{
    (void)t; (void)ctx;
    g[0] = y[1] + 0.5;
    return 0;
}

static mb_options defaults(const double *atol, double rtol)
{
    mb_options o;
    memset(&o, 0, sizeof o);
    o.atol = atol;
    o.rtol = rtol;
    return o;
}

#define NK 101

/* advance(t_k) against mb_driver_run with t_eval = t_k: the same numbers */
static void test_same_as_one_run(const char *name, double h)
{
    const mb_method *m = mb_method_find(name);
    mb_problem p = {.n = 2, .rhs = f_osc, .nq = 1};
    double atol[2] = {1e-9, 1e-9}, y0[2] = {1.0, 0.0}, tk[NK], y[2];
    for (int k = 0; k < NK; k++) tk[k] = 0.05 * k;
    mb_options o = defaults(atol, 1e-6);
    o.h = h;
    mb_options oe = o;
    oe.t_eval = tk;
    oe.n_eval = NK;
    mb_result ref, res;
    int rc = mb_driver_run(m, &p, 0.0, tk[NK - 1], y0, &oe, &ref);
    mb_driver_state *st;
    int rc2 = mb_driver_open(&st, m, &p, 0.0, tk[NK - 1], y0, &o, &res);
    int same = rc == MB_OK && rc2 == MB_OK && ref.nt == NK;
    for (int k = 1; k < NK && same; k++) {
        rc2 = mb_driver_advance(st, tk[k], y);
        same = rc2 == MB_OK && y[0] == ref.y[2 * k] && y[1] == ref.y[2 * k + 1];
    }
    CHECK(same, "%s%s: advance(t_k) is mb_driver_run with t_eval bit for bit", name,
          h > 0 ? " (fixed h)" : "");
    CHECK(res.stats.nsteps == ref.stats.nsteps && res.stats.nfev == ref.stats.nfev,
          "%s: the same steps (%ld, %ld) and f evaluations (%ld, %ld)", name,
          res.stats.nsteps, ref.stats.nsteps, res.stats.nfev, ref.stats.nfev);
    CHECK(mb_driver_status(st) == MB_TERMINATED && mb_driver_step(st) == MB_TERMINATED,
          "%s: the run has ended at tf: no further step", name);
    CHECK(mb_driver_advance(st, tk[NK - 1] + 1.0, y) == MB_ERR_ILL_INPUT,
          "%s: advance past tf is refused", name);
    mb_driver_close(st);
    CHECK(res.status == MB_OK, "%s: closed with the status of a whole run", name);
    mb_result_free(&ref);
    mb_result_free(&res);
}

/* step until the end against mb_driver_run without t_eval: every point equal */
static void test_steps_are_the_run(void)
{
    const mb_method *m = mb_method_find("radau_iia");
    mb_problem p = {.n = 2, .rhs = f_osc, .nq = 1};
    double atol[2] = {1e-8, 1e-8}, y0[2] = {1.0, 0.0};
    mb_options o = defaults(atol, 1e-6);
    mb_result ref, res;
    mb_driver_run(m, &p, 0.0, 3.0, y0, &o, &ref);
    mb_driver_state *st;
    mb_driver_open(&st, m, &p, 0.0, 3.0, y0, &o, &res);
    int rc, n = 0, mono = 1;
    double t_prev = 0.0;
    do {
        rc = mb_driver_step(st);
        n++;
        mono = mono && mb_driver_t(st) > t_prev;
        t_prev = mb_driver_t(st);
    } while (rc == MB_OK);
    int after = mb_driver_step(st);
    mb_driver_close(st);
    int same = res.nt == ref.nt;
    for (ptrdiff_t k = 0; k < res.nt && same; k++)
        same = res.t[k] == ref.t[k] && res.y[2 * k] == ref.y[2 * k];
    CHECK(rc == MB_TERMINATED && after == MB_TERMINATED && mono && n == ref.stats.nsteps &&
              same,
          "radau_iia: %d steps one at a time, t increasing, the run's points", n);
    mb_result_free(&ref);
    mb_result_free(&res);
}

/* a terminal event before the stop time: advance stops there with MB_TERMINATED */
static void test_terminal_event(void)
{
    const mb_method *m = mb_method_find("dopri5");
    mb_problem p = {.n = 2, .rhs = f_osc, .nq = 1};
    double atol[2] = {1e-12, 1e-12}, y0[2] = {1.0, 0.0}, y[2];
    int terminal[1] = {1}, direction[1] = {-1};
    mb_options o = defaults(atol, 1e-10);
    o.events = ev_vel;
    o.n_events = 1;
    o.terminal = terminal;
    o.direction = direction;
    mb_result res;
    mb_driver_state *st;
    mb_driver_open(&st, m, &p, 0.0, INFINITY, y0, &o, &res);
    int rc = mb_driver_advance(st, 0.3, y);  /* before the event: goes on */
    CHECK(rc == MB_OK && fabs(y[0] - cos(0.3)) < 1e-9, "advance to 0.3 before the event");
    rc = mb_driver_advance(st, 5.0, y);
    /* -sin t = -0.5 downwards first at t = pi/6 */
    CHECK(rc == MB_TERMINATED && fabs(mb_driver_t(st) - M_PI / 6) < 1e-10 &&
              res.ev_count[0] == 1, "terminal event stops advance at t = %.12f",
          mb_driver_t(st));
    mb_driver_close(st);
    CHECK(res.status == MB_TERMINATED, "the result says so");
    mb_result_free(&res);
}

/* u changes from 0 to 1 at t = 0.5, reached by interpolation inside a step: the run
 * moves back there and restarts; against y = e^-t, then 1 + (y(0.5) - 1) e^-(t - 0.5) */
static void test_input_change(const char *name, double h)
{
    const mb_method *m = mb_method_find(name);
    double u = 0.0;
    mb_problem p = {.n = 1, .rhs = f_input, .ctx = &u};
    double atol[1] = {1e-12}, y0[1] = {1.0}, y[1];
    mb_options o = defaults(atol, 1e-10);
    o.h = h;
    mb_result res;
    mb_driver_state *st;
    mb_driver_open(&st, m, &p, 0.0, 2.0, y0, &o, &res);
    int rc = mb_driver_advance(st, 0.5, y);
    double ahead = mb_driver_t(st);
    u = 1.0;
    int rc2 = mb_driver_restart_at(st, 0.5, y);
    CHECK(rc == MB_OK && rc2 == MB_OK && mb_driver_t(st) == 0.5 && res.t[res.nt - 1] == 0.5,
          "%s: back from t = %.4f to 0.5, the result ends there", name, ahead);
    double y05 = exp(-0.5), err = 0.0;
    for (int k = 1; k <= 15; k++) {
        double t = 0.5 + 0.1 * k;
        rc = mb_driver_advance(st, t, y);
        err = fmax(err, fabs(y[0] - (1.0 + (y05 - 1.0) * exp(-(t - 0.5)))));
    }
    CHECK(rc == MB_OK && err < (h > 0 ? 1e-7 : 1e-8), "%s: after the change, error %.2e", name,
          err);
    CHECK(res.stats.nrestart == 1, "%s: one restart", name);
    int mono = 1;
    for (ptrdiff_t k = 1; k < res.nt; k++) mono = mono && res.t[k] > res.t[k - 1];
    CHECK(mono, "%s: the result's times increase", name);
    CHECK(mb_driver_restart_at(st, 0.1, y) == MB_ERR_ILL_INPUT,
          "%s: no restart before the last step", name);
    mb_driver_close(st);
    mb_result_free(&res);
}

static void test_failure_keeps_the_result(void)
{
    const mb_method *m = mb_method_find("dopri5");
    mb_problem p = {.n = 2, .rhs = f_osc, .nq = 1};
    double atol[2] = {1e-12, 1e-12}, y0[2] = {1.0, 0.0}, y[2];
    mb_options o = defaults(atol, 1e-12);
    o.max_steps = 10;
    mb_result res;
    mb_driver_state *st;
    mb_driver_open(&st, m, &p, 0.0, 100.0, y0, &o, &res);
    int rc = mb_driver_advance(st, 50.0, y);
    CHECK(rc == MB_ERR_MAX_STEPS && res.nt == 11 && res.message[0] != '\0',
          "max_steps: status %d, %td points kept: %s", rc, res.nt, res.message);
    CHECK(mb_driver_step(st) == MB_ERR_MAX_STEPS, "no step after the failure");
    mb_driver_close(st);
    CHECK(res.status == MB_ERR_MAX_STEPS, "closed with the failure's status");
    mb_result_free(&res);
}

int main(void)
{
    test_same_as_one_run("dopri5", 0.0);
    test_same_as_one_run("bdf", 0.0);
    test_same_as_one_run("rodas4", 0.0);
    test_same_as_one_run("rk4", 0.01);
    test_steps_are_the_run();
    test_terminal_event();
    test_input_change("dopri5", 0.0);
    test_input_change("bdf", 0.0);
    test_input_change("rk4", 0.003);
    test_failure_keeps_the_result();
    return check_summary();
}
