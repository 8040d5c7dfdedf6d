/* Tests of the SUNDIALS adapters (csrc/methods/sundials_*.c) through
 * mb_sundials_run / mb_sundials_ida_run, without Python:
 * (a) every method on y' = -y and on the oscillator q'' = -q: error at the end
 *     within 10x of the tolerance, statistics filled, last point at tf;
 * (b) t_eval and the dense records (monomials in theta) match the exact
 *     solution inside steps; the dense polynomial of a step hits the step's end;
 * (c) events by SUNDIALS' root finding: direction, terminal count, the
 *     trajectory ending at the terminal root;
 * (d) failures: the right-hand side returning < 0 or NaN (status, message,
 *     trajectory kept), max_steps, an unknown name, a fixed step for CVODE;
 * (e) the analytic Jacobian is used (fewer f evaluations than difference
 *     quotients), arkode fixed steps converge with order 4;
 * (f) IDA with a singular mass matrix and on a residual problem: inconsistent
 *     initial values are corrected by IDACalcIC; backward integration;
 * (g) the problem's step bound: no internal step longer, a thin slab that a step
 *     jumps is found by the root finding;
 * (h) arkode_dirk's end error on the oscillator, forward and backward, within 100x
 *     the tolerance.
 * Prints one line per check and "N passed, M failed". */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "driver.h"
#include "status.h"
#include "sundials.h"

#define PI 3.14159265358979323846

static const char *const NAMES[] = {"cvode_bdf", "cvode_adams", "ida", "arkode_erk",
                                    "arkode_dirk"};
#define N_NAMES (sizeof NAMES / sizeof NAMES[0])

static int rhs_decay(double t, const double *y, double *ydot, void *ctx)
{
    (void)t; (void)ctx;
    ydot[0] = -y[0];
    return 0;
}

static int rhs_osc(double t, const double *y, double *ydot, void *ctx)
{
    (void)t; (void)ctx;
    ydot[0] = y[1];
    ydot[1] = -y[0];
    return 0;
}

static int jac_osc(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    (void)t; (void)y;
    int *calls = ctx;
    if (calls)
        (*calls)++;
    J[0] = 0.0; J[1] = -1.0;           /* column 0: df/dy0 */
    J[ld] = 1.0; J[ld + 1] = 0.0;      /* column 1: df/dy1 */
    return 0;
}

/* fails fatally (code -3) once t > 0.5 */
static int rhs_fail(double t, const double *y, double *ydot, void *ctx)
{
    (void)ctx;
    if (t > 0.5)
        return -3;
    ydot[0] = -y[0];
    return 0;
}

/* returns NaN once t > 0.5 */
static int rhs_nan(double t, const double *y, double *ydot, void *ctx)
{
    (void)ctx;
    ydot[0] = t > 0.5 ? NAN : -y[0];
    return 0;
}

/* g0 = y0 (zeros of cos t), g1 = y1 (zeros of -sin t) */
static int events_osc(double t, const double *y, double *g, void *ctx)
{
    (void)t; (void)ctx;
    g[0] = y[0];
    g[1] = y[1];
    return 0;
}

static void default_opts(mb_options *o, double rtol, const double *atol)
{
    memset(o, 0, sizeof *o);
    o->rtol = rtol;
    o->atol = atol;
}

/* ---- (a) accuracy on y' = -y and the oscillator ---- */
static void test_accuracy(void)
{
    for (size_t k = 0; k < N_NAMES; k++) {
        const char *name = NAMES[k];
        double atol[2] = {1e-10, 1e-10}, y0[2] = {1.0, 0.0};
        mb_options o;
        mb_result res;
        default_opts(&o, 1e-6, atol);
        mb_problem p = {0};
        p.n = 1;
        p.rhs = rhs_decay;
        int rc = mb_sundials_run(name, &p, 0.0, 2.0, y0, &o, &res);
        double err = fabs(res.y[res.nt - 1] - exp(-2.0)) / (1e-10 + 1e-6 * exp(-2.0));
        CHECK(rc == MB_OK && res.t[res.nt - 1] == 2.0 && err < 10.0,
              "%s y'=-y: status %d, t_end %.17g, error/tol %.3g", name, rc, res.t[res.nt - 1], err);
        CHECK(res.stats.nsteps > 3 && res.stats.nfev > res.stats.nsteps &&
                  res.n_hist == res.stats.nsteps && res.nt == res.stats.nsteps + 1,
              "%s stats: nsteps %ld nfev %ld njev %ld nlu %ld nreject %ld, %td points",
              name, res.stats.nsteps, res.stats.nfev, res.stats.njev, res.stats.nlu,
              res.stats.nreject, res.nt);
        CHECK(strcmp(res.message, mb_status_str(MB_OK)) == 0, "%s message '%s'", name, res.message);
        mb_result_free(&res);

        /* undamped oscillator over 1.6 periods: the global error grows past the
         * local tolerance (CVODE BDF: up to ~60x); check that it follows the
         * tolerance, within 300x, and shrinks by 10^3 over 10^4 in tolerance */
        double en[3];
        for (int e = 4; e <= 8; e += 2) {
            double tol = pow(10.0, -e);
            double at[2] = {tol, tol};
            default_opts(&o, tol, at);
            p.n = 2;
            p.rhs = rhs_osc;
            rc = mb_sundials_run(name, &p, 0.0, 10.0, y0, &o, &res);
            const double *yl = res.y + (res.nt - 1) * 2;
            double e0 = yl[0] - cos(10.0), e1 = yl[1] + sin(10.0);
            en[(e - 4) / 2] = sqrt(0.5 * (e0 * e0 + e1 * e1)) / tol;
            CHECK(rc == MB_OK && en[(e - 4) / 2] < 300.0,
                  "%s oscillator rtol 1e-%d: error/tol %.3g (%ld steps, nfev %ld)", name, e,
                  en[(e - 4) / 2], res.stats.nsteps, res.stats.nfev);
            mb_result_free(&res);
        }
        CHECK(en[2] * 1e-8 < 1e-3 * en[0] * 1e-4, "%s oscillator: error 1e-8 / error 1e-4 = %.3g",
              name, en[2] * 1e-4 / en[0]);
    }
}

/* ---- (b) t_eval and dense output ---- */
static void test_dense(void)
{
    double te[21];
    for (int i = 0; i <= 20; i++)
        te[i] = 0.5 * i;
    for (size_t k = 0; k < N_NAMES; k++) {
        const char *name = NAMES[k];
        double atol[2] = {1e-9, 1e-9}, y0[2] = {1.0, 0.0};
        mb_options o;
        mb_result rd, re;
        default_opts(&o, 1e-9, atol);
        o.dense_output = 1;
        mb_problem p = {0};
        p.n = 2;
        p.rhs = rhs_osc;
        int rc1 = mb_sundials_run(name, &p, 0.0, 10.0, y0, &o, &rd);
        o.dense_output = 0;
        o.t_eval = te;
        o.n_eval = 21;
        int rc2 = mb_sundials_run(name, &p, 0.0, 10.0, y0, &o, &re);
        /* every step has a record; the polynomial of step s ends at the output
         * point s + 1 and starts near point s; at mid-step it is as accurate
         * as the step ends */
        double dend = 0.0, dstart = 0.0, emid = 0.0, enode = 0.0, yv[2];
        int contiguous = rd.nsteps_d == rd.stats.nsteps && rd.nt == rd.nsteps_d + 1;
        for (ptrdiff_t s = 0; contiguous && s < rd.nsteps_d; s++) {
            const double *C = rd.d_c + rd.d_off[s];
            int deg = rd.d_deg[s];
            mb_dense_eval(2, deg, C, 1.0, yv);
            const double *yn1 = rd.y + 2 * (s + 1);
            dend = fmax(dend, fabs(yv[0] - yn1[0]) + fabs(yv[1] - yn1[1]));
            mb_dense_eval(2, deg, C, 0.0, yv);
            dstart = fmax(dstart, fabs(yv[0] - rd.y[2 * s]) + fabs(yv[1] - rd.y[2 * s + 1]));
            mb_dense_eval(2, deg, C, 0.5, yv);
            emid = fmax(emid, fabs(yv[0] - cos(rd.d_t[s] + 0.5 * rd.d_h[s])));
            enode = fmax(enode, fabs(rd.y[2 * (s + 1)] - cos(rd.t[s + 1])));
            if (fabs(rd.d_t[s] - rd.t[s]) > 1e-12 ||
                fabs(rd.d_t[s] + rd.d_h[s] - rd.t[s + 1]) > 1e-12)
                contiguous = 0;
        }
        CHECK(rc1 == MB_OK && contiguous && dend < 1e-12 && dstart < 1e-10 &&
                  emid < 2.0 * enode + 1e-9,
              "%s dense: %td records, |P(1) - y_n+1| %.2g, |P(0) - y_n| %.2g, error mid-step %.3g "
              "(at nodes %.3g)", name, rd.nsteps_d, dend, dstart, emid, enode);
        /* t_eval: the same steps (the output does not change them), values from
         * the same interpolant */
        double dev = 0.0;
        for (ptrdiff_t i = 0; i < re.nt && i < 21; i++) {
            double t = te[i];
            ptrdiff_t s = 0;
            while (s + 1 < rd.nsteps_d && rd.d_t[s + 1] < t)
                s++;
            mb_dense_eval(2, rd.d_deg[s], rd.d_c + rd.d_off[s], (t - rd.d_t[s]) / rd.d_h[s], yv);
            dev = fmax(dev, fabs(yv[0] - re.y[2 * i]) + fabs(yv[1] - re.y[2 * i + 1]));
        }
        CHECK(rc2 == MB_OK && re.nt == 21 && re.t[20] == 10.0 &&
                  re.stats.nsteps == rd.stats.nsteps &&
                  dev < 1e-12,
              "%s t_eval: %td points, same %ld steps, max deviation from the dense output %.2g",
              name, re.nt, re.stats.nsteps, dev);
        mb_result_free(&rd);
        mb_result_free(&re);
    }
}

/* ---- (c) events ---- */
static void test_events(void)
{
    for (size_t k = 0; k < N_NAMES; k++) {
        const char *name = NAMES[k];
        double atol[2] = {1e-10, 1e-10}, y0[2] = {1.0, 0.0};
        int term[2] = {2, 0}, dir[2] = {-1, 0};
        mb_options o;
        mb_result res;
        default_opts(&o, 1e-8, atol);
        o.events = events_osc;
        o.n_events = 2;
        o.terminal = term;
        o.direction = dir;
        mb_problem p = {0};
        p.n = 2;
        p.rhs = rhs_osc;
        int rc = mb_sundials_run(name, &p, 0.0, 20.0, y0, &o, &res);
        /* y0 = cos t decreasing through 0 at pi/2, 5pi/2: stop at the second */
        double stop = 2.5 * PI;
        int ok0 = res.ev_count[0] == 2 && fabs(res.ev_t[0][0] - 0.5 * PI) < 1e-6 &&
                  fabs(res.ev_t[0][1] - stop) < 1e-6;
        /* y1 = -sin t: both directions, zeros at pi, 2pi before the stop */
        int ok1 = res.ev_count[1] == 2 && fabs(res.ev_t[1][0] - PI) < 1e-6 &&
                  fabs(res.ev_t[1][1] - 2.0 * PI) < 1e-6;
        double tl = res.t[res.nt - 1];
        CHECK(rc == MB_TERMINATED && ok0 && ok1 && fabs(tl - stop) < 1e-6 &&
                  fabs(res.y[2 * (res.nt - 1)]) < 1e-6 && res.hist_t[res.n_hist - 1] == tl,
              "%s events: status %d, counts %td %td, last t %.10f (5pi/2 = %.10f)", name, rc,
              res.ev_count[0], res.ev_count[1], tl, stop);
        mb_result_free(&res);
    }
}

/* ---- (d) failures ---- */
static void test_failures(void)
{
    for (size_t k = 0; k < N_NAMES; k++) {
        const char *name = NAMES[k];
        double atol[1] = {1e-8}, y0[1] = {1.0};
        mb_options o;
        mb_result res;
        default_opts(&o, 1e-6, atol);
        mb_problem p = {0};
        p.n = 1;
        p.rhs = rhs_fail;
        int rc = mb_sundials_run(name, &p, 0.0, 2.0, y0, &o, &res);
        CHECK(rc == MB_ERR_RHS_FAIL && res.status == rc && strstr(res.message, "-3") &&
                  res.nt > 2 && res.t[res.nt - 1] <= 0.5 + 1e-12 && res.t[res.nt - 1] > 0.1,
              "%s rhs < 0: status %d, '%s', %td points up to t = %g", name, rc, res.message,
              res.nt, res.t[res.nt - 1]);
        mb_result_free(&res);

        p.rhs = rhs_nan;
        rc = mb_sundials_run(name, &p, 0.0, 2.0, y0, &o, &res);
        CHECK(rc == MB_ERR_NONFINITE && strstr(res.message, "non-finite") && res.nt > 2 &&
                  res.t[res.nt - 1] <= 0.5 &&
                  fabs(res.y[res.nt - 1] - exp(-res.t[res.nt - 1])) < 1e-5,
              "%s non-finite f: status %d, '%s', %td points up to t = %g", name, rc, res.message,
              res.nt, res.t[res.nt - 1]);
        mb_result_free(&res);

        default_opts(&o, 1e-10, atol);
        o.max_steps = 7;
        p.rhs = rhs_decay;
        rc = mb_sundials_run(name, &p, 0.0, 100.0, y0, &o, &res);
        CHECK(rc == MB_ERR_MAX_STEPS && strstr(res.message, "(7)") && res.nt >= 2,
              "%s max_steps: status %d, '%s', %td points", name, rc, res.message, res.nt);
        mb_result_free(&res);
    }
    double atol[1] = {1e-8}, y0[1] = {1.0};
    mb_options o;
    mb_result res;
    default_opts(&o, 1e-6, atol);
    mb_problem p = {0};
    p.n = 1;
    p.rhs = rhs_decay;
    int rc = mb_sundials_run("cvode_nope", &p, 0.0, 1.0, y0, &o, &res);
    CHECK(rc == MB_ERR_ILL_INPUT && strstr(res.message, "cvode_nope"), "unknown name: '%s'",
          res.message);
    mb_result_free(&res);
    o.h = 0.1;
    rc = mb_sundials_run("cvode_bdf", &p, 0.0, 1.0, y0, &o, &res);
    CHECK(rc == MB_ERR_NOT_SUPPORTED, "cvode_bdf with a fixed step: '%s'", res.message);
    mb_result_free(&res);
    /* t0 == tf: just the initial point */
    o.h = 0.0;
    rc = mb_sundials_run("cvode_bdf", &p, 1.0, 1.0, y0, &o, &res);
    CHECK(rc == MB_OK && res.nt == 1 && res.y[0] == 1.0, "t0 == tf: %td point", res.nt);
    mb_result_free(&res);
}

/* ---- (e) Jacobian use; ARKODE fixed steps ---- */
static void test_jacobian_and_fixed(void)
{
    const char *implicit[] = {"cvode_bdf", "cvode_adams", "ida", "arkode_dirk"};
    for (int k = 0; k < 4; k++) {
        double atol[2] = {1e-8, 1e-8}, y0[2] = {1.0, 0.0};
        mb_options o;
        mb_result r1, r2;
        default_opts(&o, 1e-6, atol);
        int calls = 0;
        mb_problem p = {0};
        p.n = 2;
        p.rhs = rhs_osc;
        int rc1 = mb_sundials_run(implicit[k], &p, 0.0, 5.0, y0, &o, &r1);
        p.jac = jac_osc;
        p.ctx = &calls;
        int rc2 = mb_sundials_run(implicit[k], &p, 0.0, 5.0, y0, &o, &r2);
        CHECK(rc1 == MB_OK && rc2 == MB_OK && r1.stats.njev > 0 && calls == r2.stats.njev &&
                  r2.stats.nlu >= r2.stats.njev,
              "%s Jacobian: difference quotients nfev %ld njev %ld nlu %ld; analytic nfev %ld "
              "njev %ld (%d calls) nlu %ld", implicit[k], r1.stats.nfev, r1.stats.njev,
              r1.stats.nlu, r2.stats.nfev, r2.stats.njev, calls, r2.stats.nlu);
        mb_result_free(&r1);
        mb_result_free(&r2);
    }
    const char *ark[] = {"arkode_erk", "arkode_dirk"};
    for (int k = 0; k < 2; k++) {
        double err[2];
        long nst[2];
        for (int j = 0; j < 2; j++) {
            double atol[1] = {1e-8}, y0[1] = {1.0};
            mb_options o;
            mb_result res;
            default_opts(&o, 1e-6, atol);
            o.h = j == 0 ? 0.1 : 0.05;
            mb_problem p = {0};
            p.n = 1;
            p.rhs = rhs_decay;
            mb_sundials_run(ark[k], &p, 0.0, 2.0, y0, &o, &res);
            err[j] = fabs(res.y[res.nt - 1] - exp(-2.0));
            nst[j] = res.stats.nsteps;
            mb_result_free(&res);
        }
        double slope = log(err[0] / err[1]) / log(2.0);
        CHECK(nst[0] == 20 && nst[1] == 40 && fabs(slope - 4.0) < 0.25,
              "%s fixed steps h = 0.1, 0.05: %ld, %ld steps, errors %.3g %.3g, order %.3f",
              ark[k], nst[0], nst[1], err[0], err[1], slope);
    }
}

/* ---- (f) IDA: mass matrix, residual problems, backward ---- */
/* index-1 DAE: y0' = -y0, 0 = y1 - y0^2; solution y0 = e^-t, y1 = e^-2t */
static int rhs_dae(double t, const double *y, double *f, void *ctx)
{
    (void)t; (void)ctx;
    f[0] = -y[0];
    f[1] = y[1] - y[0] * y[0];
    return 0;
}

static int res_dae(double t, const double *y, const double *yp, double *r, void *ctx)
{
    (void)t; (void)ctx;
    r[0] = yp[0] + y[0];
    r[1] = y[1] - y[0] * y[0];
    return 0;
}

static int jac_dae(double t, double cj, const double *y, const double *yp, double *J,
                   ptrdiff_t ld, void *ctx)
{
    (void)t; (void)yp;
    int *calls = ctx;
    (*calls)++;
    J[0] = 1.0 + cj;          J[ld] = 0.0;
    J[1] = -2.0 * y[0];       J[ld + 1] = 1.0;
    return 0;
}

static void test_ida(void)
{
    double M[4] = {1.0, 0.0, 0.0, 0.0};  /* column-major diag(1, 0) */
    double atol[2] = {1e-10, 1e-10}, y0[2] = {1.0, 0.3};  /* y1(0) inconsistent */
    mb_options o;
    mb_result res;
    default_opts(&o, 1e-8, atol);
    mb_problem p = {0};
    p.n = 2;
    p.rhs = rhs_dae;
    p.mass = M;
    int rc = mb_sundials_run("ida", &p, 0.0, 3.0, y0, &o, &res);
    const double *yl = res.y + 2 * (res.nt - 1);
    CHECK(rc == MB_OK && fabs(res.y[1] - 1.0) < 1e-8 && fabs(yl[0] - exp(-3.0)) < 1e-7 &&
              fabs(yl[1] - exp(-6.0)) < 1e-7,
          "ida mass diag(1, 0): y1(0) corrected to %.10f, errors at t = 3: %.3g %.3g", res.y[1],
          yl[0] - exp(-3.0), yl[1] - exp(-6.0));
    mb_result_free(&res);
    rc = mb_sundials_run("cvode_bdf", &p, 0.0, 3.0, y0, &o, &res);
    CHECK(rc == MB_ERR_NOT_SUPPORTED, "cvode_bdf with a mass matrix: '%s'", res.message);
    mb_result_free(&res);

    unsigned char alg[2] = {0, 1};
    double yp0[2] = {0.0, 0.0}, yp_used[2];
    int calls = 0;
    mb_dae_options d = {yp0, alg, 1, jac_dae, 0};
    mb_problem q = {0};
    q.n = 2;
    q.res = res_dae;
    q.ctx = &calls;
    o.dense_output = 1;
    rc = mb_sundials_ida_run(&q, 0.0, 3.0, y0, &d, &o, &res, yp_used);
    yl = res.y + 2 * (res.nt - 1);
    CHECK(rc == MB_OK && fabs(res.y[1] - 1.0) < 1e-8 && fabs(yp_used[0] + 1.0) < 1e-8 &&
              fabs(yl[0] - exp(-3.0)) < 1e-7 && fabs(yl[1] - exp(-6.0)) < 1e-7 &&
              calls == res.stats.njev && calls > 0 && res.nsteps_d == res.stats.nsteps,
          "ida residual: y(0) = (%.6f, %.10f), y'(0)[0] = %.10f, errors %.3g %.3g, njev %ld "
          "(%d calls)", res.y[0], res.y[1], yp_used[0], yl[0] - exp(-3.0), yl[1] - exp(-6.0),
          res.stats.njev, calls);
    mb_result_free(&res);

    /* backward: y' = -y from t = 2 to 0 */
    double a1[1] = {1e-10}, y2[1] = {exp(-2.0)};
    default_opts(&o, 1e-8, a1);
    o.dense_output = 1;
    mb_problem b = {0};
    b.n = 1;
    b.rhs = rhs_decay;
    for (size_t k = 0; k < N_NAMES; k++) {
        rc = mb_sundials_run(NAMES[k], &b, 2.0, 0.0, y2, &o, &res);
        double yv;
        mb_dense_eval(1, res.d_deg[0], res.d_c + res.d_off[0], 0.5, &yv);
        double tm = res.d_t[0] + 0.5 * res.d_h[0];
        CHECK(rc == MB_OK && res.t[res.nt - 1] == 0.0 && fabs(res.y[res.nt - 1] - 1.0) < 1e-6 &&
                  res.d_h[0] < 0 && fabs(yv - exp(-tm)) < 1e-7,
              "%s backward: y(0) = %.10f", NAMES[k], res.y[res.nt - 1]);
        mb_result_free(&res);
    }
}

/* ---- (g) the problem's step bound (continuous collision detection) ----
 * y' = 1 through the slab |y - 0.53| < 0.005: the bound ends the step at the slab's
 * middle while before it (the integrator's steps then grow freely: y is linear).
 * The bound becomes the stop time of the next internal step; SUNDIALS' root finding
 * then sees g = w - |y - c| change sign at both sides of the slab. */
static int rhs_one(double t, const double *y, double *ydot, void *ctx)
{
    (void)t; (void)y; (void)ctx;
    ydot[0] = 1.0;
    return 0;
}

static int ev_thin_slab(double t, const double *y, double *g, void *ctx)
{
    (void)t; (void)ctx;
    g[0] = 0.005 - fabs(y[0] - 0.53);
    return 0;
}

static int bound_thin_slab(double t, const double *y, const double *f, double *h_max,
                           void *ctx)
{
    (void)t;
    int *calls = ctx;
    (*calls)++;
    *h_max = y[0] < 0.525 && f[0] > 0 ? (0.53 - y[0]) / f[0] : INFINITY;
    return 0;
}

static int bound_const(double t, const double *y, const double *f, double *h_max, void *ctx)
{
    (void)t; (void)y; (void)f; (void)ctx;
    *h_max = 0.1;
    return 0;
}

static void test_step_bound(void)
{
    for (size_t k = 0; k < N_NAMES; k++) {
        const char *name = NAMES[k];
        double atol[1] = {1e-10}, y0[1] = {0.0};
        int calls = 0;
        mb_options o;
        mb_result res;
        default_opts(&o, 1e-8, atol);
        o.events = ev_thin_slab;
        o.n_events = 1;
        mb_problem p = {0};
        p.n = 1;
        p.rhs = rhs_one;
        p.ctx = &calls;
        int rc0 = mb_sundials_run(name, &p, 0.0, 1.0, y0, &o, &res);
        ptrdiff_t missed = res.ev_count[0];
        mb_result_free(&res);
        p.step_bound = bound_thin_slab;
        int rc = mb_sundials_run(name, &p, 0.0, 1.0, y0, &o, &res);
        int found = res.ev_count[0] == 2 && fabs(res.ev_t[0][0] - 0.525) < 1e-8 &&
                    fabs(res.ev_t[0][1] - 0.535) < 1e-8;
        CHECK(rc0 == MB_OK && missed == 0 && rc == MB_OK && found && calls > 0 &&
                  res.t[res.nt - 1] == 1.0,
              "%s: the thin slab is jumped without the bound (%td roots), found with it "
              "(%td roots; %d bounds, %ld steps)", name, missed, res.ev_count[0], calls,
              res.stats.nsteps);
        mb_result_free(&res);
        /* a constant bound: no step longer (they grow to 1 and more without it), every
         * step recorded up to tf */
        o.events = NULL;
        o.n_events = 0;
        double hmax[2] = {0.0, 0.0};
        for (int with = 0; with < 2; with++) {
            p.step_bound = with ? bound_const : NULL;
            rc = mb_sundials_run(name, &p, 0.0, 5.0, y0, &o, &res);
            for (ptrdiff_t i = 0; i < res.n_hist; i++)
                hmax[with] = fmax(hmax[with], res.hist_h[i]);
            if (with)
                CHECK(rc == MB_OK && hmax[0] > 0.5 && hmax[1] <= 0.1 * (1 + 1e-12) &&
                          hmax[1] > 0.09 && res.nt == res.stats.nsteps + 1 &&
                          res.t[res.nt - 1] == 5.0 && fabs(res.y[res.nt - 1] - 5.0) < 1e-9,
                      "%s: steps within a constant bound 0.1 (longest %.17g, %.3g without "
                      "it; %ld steps)", name, hmax[1], hmax[0], res.stats.nsteps);
            mb_result_free(&res);
        }
    }
}

/* ---- (h) arkode_dirk accuracy on the oscillator, forward and backward: with ARKODE's
 * default reuse of the iteration matrix across changes of gamma the end error was
 * 1.6e-2 over [0, 20] at rtol 1e-6 and 6.6e-4 over [3, 0] at rtol 1e-7; every
 * method here must stay within 100x the tolerance ---- */
static void test_dirk_accuracy(void)
{
    const char *names[] = {"arkode_dirk", "cvode_bdf"};
    const double spans[2][3] = {{0.0, 20.0, 1e-6}, {3.0, 0.0, 1e-7}};
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < 2; s++) {
            double t0 = spans[s][0], tf = spans[s][1], tol = spans[s][2];
            double atol[2] = {1e-2 * tol, 1e-2 * tol}, y0[2] = {cos(t0), -sin(t0)};
            mb_options o;
            mb_result res;
            default_opts(&o, tol, atol);
            mb_problem p = {0};
            p.n = 2;
            p.rhs = rhs_osc;
            p.jac = jac_osc;
            int rc = mb_sundials_run(names[k], &p, t0, tf, y0, &o, &res);
            const double *yl = res.y + (res.nt - 1) * 2;
            double err = fmax(fabs(yl[0] - cos(tf)), fabs(yl[1] + sin(tf)));
            CHECK(rc == MB_OK && err < 100.0 * tol,
                  "%s oscillator over [%g, %g] at rtol %g: error %.3g (%ld steps, nlu %ld)",
                  names[k], t0, tf, tol, err, res.stats.nsteps, res.stats.nlu);
            mb_result_free(&res);
        }
}

int main(void)
{
    test_accuracy();
    test_dense();
    test_events();
    test_failures();
    test_jacobian_and_fixed();
    test_ida();
    test_step_bound();
    test_dirk_accuracy();
    return check_summary();
}
