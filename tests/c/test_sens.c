/* Tests of the forward-sensitivity wrapper (csrc/core/sens.c, sens.h).
 *
 * (a) mass-spring-damper x'' + c x' + k x = 0, p = (k, c) and the initial position
 *     x0: s = dx/dp from the driver (dopri5, dop853, bdf and radau_iia with the block
 *     linsys, rodas4 with the dense exact aug Jacobian; the first-order and the
 *     second-order layouts) against the closed form, <= 1e-7 relative at tight
 *     tolerance; the parameters are restored exactly after the runs;
 * (b) the dense aug Jacobian (with the base jac, and without: mixed differences)
 *     against central differences of the aug rhs, on a nonlinear problem, in both
 *     layouts; the forward DQ and an analytic dfdp agree with the centred DQ;
 * (c) work size at the extremes (n = 1 with np = 1 and np = 40) in exactly sized
 *     blocks (the sanitizers see any overrun), against the closed form;
 * (d) the refusals: project, check, res, acc_mjac; bad pbar.
 * Prints one line per check and a final "N passed, M failed"; returns 0 if all pass. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "driver.h"
#include "registry.h"
#include "sens.h"
#include "status.h"

/* ---- the mass-spring-damper ---- */

typedef struct { double k, c, m; } msd_par;  /* m: M = diag(1, m), f_1 scaled */

static int msd_rhs(double t, const double *y, double *f, void *ctx)
{
    const msd_par *p = ctx;
    (void)t;
    f[0] = y[1];
    f[1] = p->m * (-p->k * y[0] - p->c * y[1]);
    return 0;
}

static int msd_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    const msd_par *p = ctx;
    (void)t; (void)y;
    J[0] = 0.0;     J[ld] = 1.0;
    J[1] = -p->m * p->k;   J[ld + 1] = -p->m * p->c;
    return 0;
}

static int msd_acc(double t, const double *q, const double *qd, double *qdd, void *ctx)
{
    const msd_par *p = ctx;
    (void)t;
    qdd[0] = -p->k * q[0] - p->c * qd[0];
    return 0;
}

/* closed form (underdamped): x and dx/dk, dx/dc, dx/dx0 at t; v0 fixed */
static void msd_exact(double t, double k, double c, double x0, double v0, double *x, double sx[3])
{
    double al = 0.5 * c, om = sqrt(k - al * al), E = exp(-al * t);
    double C = cos(om * t), S = sin(om * t), B = (v0 + al * x0) / om;
    *x = E * (x0 * C + B * S);
    double dx_dom = E * (-x0 * t * S + B * t * C - B / om * S);
    double dx_dal = -t * *x + E * S * x0 / om;
    sx[0] = dx_dom / (2.0 * om);
    sx[1] = 0.5 * dx_dal - al / (2.0 * om) * dx_dom;
    sx[2] = E * (C + al / om * S);
}

static void options_default(mb_options *o, const double *atol, double rtol)
{
    memset(o, 0, sizeof *o);
    o->rtol = rtol;
    o->atol = atol;
    o->controller = MB_CONTROLLER_PI;
}

/* one sensitivity run of the mass-spring-damper; returns the largest relative error
 * of the three sensitivities of x at 20 points of (0, 6] (relative to their peak) */
static double msd_run(const char *method, int second_order, int block_newton, int with_jac,
                      double rtol, int mass, long *nf)
{
    msd_par par = {4.0, 0.5, mass ? 3.0 : 1.0};
    double M[4] = {1.0, 0.0, 0.0, par.m};
    double x0 = 1.0, v0 = 0.3;
    mb_problem b;
    memset(&b, 0, sizeof b);
    b.n = 2; b.rhs = msd_rhs; b.jac = with_jac ? msd_jac : NULL; b.ctx = &par;
    if (second_order) { b.nq = 1; b.acc = msd_acc; }
    if (mass) b.mass = M;
    double *pp[3] = {&par.k, &par.c, NULL}, pbar[3] = {4.0, 0.5, 1.0};
    double atol[2] = {1e-14, 1e-14}, atolA[8];
    mb_sens_options so = {MB_SENS_CENTERED, block_newton, NULL, 0};
    size_t sz = mb_sens_work_size(2, b.nq, 3, mass, 1);
    double *work = malloc(sz * sizeof(double));
    mb_sens *S = NULL;
    double err = INFINITY;
    const mb_method *m = mb_method_find(method);
    if (!m || mb_sens_init(&b, 3, pp, pbar, atol, &so, 1, work, &S) != MB_OK) {
        free(work);
        return err;
    }
    double y0[2] = {x0, v0}, S0[6] = {0, 0, 0, 0, 1, 0}, Y0[8], teval[20];
    mb_sens_pack(S, y0, S0, Y0);
    for (int i = 0; i < 8; i++) atolA[i] = 1e-14;
    for (int i = 0; i < 20; i++) teval[i] = 0.3 * (i + 1);
    mb_options o;
    options_default(&o, atolA, rtol);
    o.t_eval = teval; o.n_eval = 20;
    mb_result r;
    int rc = mb_driver_run(m, mb_sens_problem(S), 0.0, 6.0, Y0, &o, &r);
    if (rc != MB_OK || r.nt != 20)
        printf("# %s: rc %d nt %td: %s\n", method, rc, r.nt, r.message);
    if (rc == MB_OK && r.nt == 20 && par.k == 4.0 && par.c == 0.5) {
        double peak[3] = {0, 0, 0}, emax[3] = {0, 0, 0};
        for (int i = 0; i < 20; i++) {
            double y[2], Sv[6], x, sx[3];
            mb_sens_unpack(S, r.y + i * 8, y, Sv);
            msd_exact(teval[i], 4.0, 0.5, x0, v0, &x, sx);
            for (int k = 0; k < 3; k++) {
                peak[k] = fmax(peak[k], fabs(sx[k]));
                emax[k] = fmax(emax[k], fabs(Sv[2 * k] - sx[k]));
            }
        }
        err = 0.0;
        for (int k = 0; k < 3; k++)
            err = fmax(err, emax[k] / peak[k]);
    }
    if (nf)
        *nf = mb_sens_nf_base(S);
    mb_result_free(&r);
    free(work);
    return err;
}

static void check_msd(void)
{
    static const struct { const char *m; int so, bn, jac; double rtol; int mass; } R[] = {
        {"dopri5", 0, 0, 1, 1e-12, 0}, {"dop853", 0, 0, 1, 1e-12, 0}, {"bdf", 0, 1, 1, 1e-12, 0},
        {"radau_iia", 0, 1, 1, 1e-12, 0}, {"rodas4", 0, 0, 1, 1e-11, 0},
        {"rodas4", 0, 0, 0, 1e-11, 0}, {"radau_iia", 0, 1, 0, 1e-12, 0},
        {"dop853", 1, 0, 1, 1e-12, 0}, {"radau_iia", 1, 1, 1, 1e-12, 0},
        {"rodas4", 1, 0, 1, 1e-11, 0}, {"rodas4", 0, 0, 1, 1e-11, 1},
        {"radau_iia", 0, 1, 1, 1e-12, 1}, {"bdf", 0, 2, 1, 1e-12, 0},
        {"radau_iia", 0, 2, 1, 1e-12, 0}, {"radau_iia", 0, 2, 0, 1e-12, 0},
        {"bdf", 1, 2, 1, 1e-12, 0},
    };
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
        long nf = 0;
        double e = msd_run(R[i].m, R[i].so, R[i].bn, R[i].jac, R[i].rtol, R[i].mass, &nf);
        CHECK(e <= 1e-7, "msd %s (%s layout%s, %s, %s): s vs closed form, rel err %.2e (%ld base f)",
              R[i].m, R[i].so ? "second-order" : "first-order", R[i].mass ? ", dense mass" : "",
              R[i].bn == 2 ? "block lower-triangular linsys" : R[i].bn ? "block linsys" : "dense aug J", R[i].jac ? "base jac" : "no base jac", e, nf);
    }
}

/* ---- (b) the aug Jacobian of a nonlinear problem ---- */

typedef struct { double mu, k; } vdp_par;

static int vdp_rhs(double t, const double *y, double *f, void *ctx)
{
    const vdp_par *p = ctx;
    (void)t;
    f[0] = y[1];
    f[1] = p->mu * (1.0 - y[0] * y[0]) * y[1] - y[0] - p->k * y[0] * y[0] * y[0];
    return 0;
}

static int vdp_jac(double t, const double *y, double *J, ptrdiff_t ld, void *ctx)
{
    const vdp_par *p = ctx;
    (void)t;
    J[0] = 0.0;
    J[1] = -2.0 * p->mu * y[0] * y[1] - 1.0 - 3.0 * p->k * y[0] * y[0];
    J[ld] = 1.0;
    J[ld + 1] = p->mu * (1.0 - y[0] * y[0]);
    return 0;
}

static int vdp_acc(double t, const double *q, const double *qd, double *qdd, void *ctx)
{
    const vdp_par *p = ctx;
    (void)t;
    qdd[0] = p->mu * (1.0 - q[0] * q[0]) * qd[0] - q[0] - p->k * q[0] * q[0] * q[0];
    return 0;
}

/* df/dp: column 0 (mu), 1 (k); column 2 (an initial condition) is never asked */
static int vdp_dfdp(double t, const double *y, int k, double *fp, void *ctx)
{
    (void)t; (void)ctx;
    fp[0] = 0.0;
    fp[1] = k == 0 ? (1.0 - y[0] * y[0]) * y[1] : -y[0] * y[0] * y[0];
    return 0;
}

/* largest |aug J - central differences of the aug rhs| relative to max |J| */
static double aug_jac_error(int second_order, int with_jac)
{
    vdp_par par = {1.7, 0.6};
    mb_problem b;
    memset(&b, 0, sizeof b);
    b.n = 2; b.rhs = vdp_rhs; b.jac = with_jac ? vdp_jac : NULL; b.ctx = &par;
    if (second_order) { b.nq = 1; b.acc = vdp_acc; }
    double *pp[3] = {&par.mu, &par.k, NULL}, pbar[3] = {1.7, 0.6, 1.0}, atol[2] = {1e-8, 1e-8};
    mb_sens_options so = {MB_SENS_CENTERED, 0, NULL, 0};
    double *work = malloc(mb_sens_work_size(2, b.nq, 3, 0, 1) * sizeof(double));
    mb_sens *S = NULL;
    double err = INFINITY;
    if (mb_sens_init(&b, 3, pp, pbar, atol, &so, 1, work, &S) == MB_OK) {
        const mb_problem *A = mb_sens_problem(S);
        double y[2] = {0.8, -0.4}, Sv[6] = {0.3, -1.1, 0.05, 0.7, 1.2, -0.2}, Y[8], J[64];
        double Fp[8], Fm[8], jmax = 0.0, emax = 0.0;
        mb_sens_pack(S, y, Sv, Y);
        A->jac(0.3, Y, J, 8, A->ctx);
        for (int j = 0; j < 8; j++) {
            double h = 1e-4, yj = Y[j];
            Y[j] = yj + h; A->rhs(0.3, Y, Fp, A->ctx);
            Y[j] = yj - h; A->rhs(0.3, Y, Fm, A->ctx);
            Y[j] = yj;
            for (int i = 0; i < 8; i++) {
                jmax = fmax(jmax, fabs(J[j * 8 + i]));
                emax = fmax(emax, fabs(J[j * 8 + i] - (Fp[i] - Fm[i]) / (2.0 * h)));
            }
        }
        err = par.mu == 1.7 && par.k == 0.6 ? emax / jmax : INFINITY;
    }
    free(work);
    return err;
}

/* the s rhs by centred DQ, forward DQ and analytic dfdp (centred along s only) agree */
static void check_dq_variants(void)
{
    vdp_par par = {1.7, 0.6};
    mb_problem b;
    memset(&b, 0, sizeof b);
    b.n = 2; b.rhs = vdp_rhs; b.ctx = &par;
    double *pp[3] = {&par.mu, &par.k, NULL}, pbar[3] = {1.7, 0.6, 1.0}, atol[2] = {1e-8, 1e-8};
    double y[2] = {0.8, -0.4}, Sv[6] = {0.3, -1.1, 0.05, 0.7, 1.2, -0.2}, Y[8], F[4][8];
    /* exact: J s_k + df/dp_k */
    double J10 = -2.0 * 1.7 * 0.8 * -0.4 - 1.0 - 3.0 * 0.6 * 0.64, J11 = 1.7 * (1.0 - 0.64);
    double fp[3] = {(1.0 - 0.64) * -0.4, -0.512, 0.0}, ex[8] = {0}, emax[4] = {0, 0, 0, 0};
    for (int k = 0; k < 3; k++) {
        ex[2 + 2 * k] = Sv[2 * k + 1];
        ex[3 + 2 * k] = J10 * Sv[2 * k] + J11 * Sv[2 * k + 1] + fp[k];
    }
    double emax3 = 0.0;
    for (int v = 0; v < 4; v++) {
        mb_sens_options so = {v == 1 ? MB_SENS_FORWARD : MB_SENS_CENTERED, 0,
                              v == 2 ? vdp_dfdp : NULL, v == 3};
        b.jac = v == 3 ? vdp_jac : NULL;
        double *work = malloc(mb_sens_work_size(2, 0, 3, 0, 1) * sizeof(double));
        mb_sens *S = NULL;
        if (mb_sens_init(&b, 3, pp, pbar, atol, &so, 1, work, &S) == MB_OK) {
            mb_sens_pack(S, y, Sv, Y);
            mb_sens_problem(S)->rhs(0.3, Y, F[v], S);
            for (int i = 2; i < 8; i++)
                emax[v] = fmax(emax[v], fabs(F[v][i] - ex[i]));
        } else {
            emax[v] = INFINITY;
        }
        if (v == 3 && S && mb_sens_njac_base(S) != 1)
            emax[v] = INFINITY;  /* one J for all three parameters */
        free(work);
    }
    emax3 = emax[3];
    CHECK(emax[0] < 1e-9 && emax[2] < 1e-9 && emax[1] < 1e-6 && emax3 < 1e-9,
          "s rhs = J s + df/dp: centred DQ %.1e, forward DQ %.1e, analytic dfdp %.1e, "
          "base J (jac_rhs) %.1e", emax[0], emax[1], emax[2], emax3);
}

/* ---- (c) extremes: n = 1, np = 1 and 40; a base linsys with a diagonal mass ---- */

typedef struct { double a; double m[3]; double sl[2][2]; } dec_par;

/* M y' = -a diag(1, 2, 3) y, M = diag(m) (m = 1: no mass); n = 1 or 3 */
static int dec_rhs(double t, const double *y, double *f, void *ctx)
{
    const dec_par *p = ctx;
    (void)t;
    for (int i = 0; i < 3; i++)
        f[i] = -p->a * (i + 1) * y[i];
    return 0;
}

static int dec_rhs1(double t, const double *y, double *f, void *ctx)
{
    const dec_par *p = ctx;
    (void)t;
    f[0] = -p->a * y[0];
    return 0;
}

/* the base's own linsys: a M - J is diagonal (slots 0 and 1, real or complex a) */
static int dec_ls_jac(double t, const double *y, const double *fy, void *ctx) { return 0; }
static int dec_ls_factor(int slot, double ar, double ai, void *ctx)
{
    dec_par *p = ctx;
    if (slot < 0 || slot > 1) return -1;
    p->sl[slot][0] = ar; p->sl[slot][1] = ai;
    return 0;
}
static int dec_ls_solve(int slot, double *xr, double *xi, void *ctx)
{
    const dec_par *p = ctx;
    for (int i = 0; i < 3; i++) {
        double complex d = (p->sl[slot][0] + I * p->sl[slot][1]) * p->m[i] + p->a * (i + 1);
        double complex x = (xr[i] + I * (xi ? xi[i] : 0.0)) / d;
        xr[i] = creal(x);
        if (xi) xi[i] = cimag(x);
    }
    return 0;
}

/* run with np parameters: p_0 = a, p_k (k >= 1) initial conditions with s_k(0) = k/np y0;
 * largest relative error of y and s at t = 2 against the closed form */
static double dec_run(const char *method, ptrdiff_t n, int np, int block, int dense, int linsys,
                      int mass)
{
    dec_par par = {0.7, {1.0, 1.0, 1.0}, {{0, 0}, {0, 0}}};
    if (mass) { par.m[1] = 2.0; par.m[2] = 0.5; }
    mb_linsys ls = {dec_ls_jac, dec_ls_factor, dec_ls_solve, &par};
    mb_problem b;
    memset(&b, 0, sizeof b);
    b.n = n; b.rhs = n == 1 ? dec_rhs1 : dec_rhs; b.ctx = &par;
    if (linsys) b.linsys = &ls;
    if (mass) b.mass_diag = par.m;
    double **pp = calloc((size_t)np, sizeof *pp), *pbar = malloc((size_t)np * sizeof(double));
    double atol[3] = {1e-12, 1e-12, 1e-12}, y0[3] = {1.0, -0.5, 2.0};
    for (int k = 0; k < np; k++) pbar[k] = 1.0;
    pp[0] = &par.a;
    mb_sens_options so = {MB_SENS_CENTERED, block, NULL, 0};
    size_t sz = mb_sens_work_size(n, 0, np, 0, dense);
    double *work = malloc(sz * sizeof(double)), err = INFINITY;
    ptrdiff_t N = n * (1 + np);
    double *S0 = calloc((size_t)(n * np), sizeof(double)), *Y0 = malloc((size_t)N * sizeof(double));
    double *atolA = malloc((size_t)N * sizeof(double)), *Sv = malloc((size_t)(n * np) * sizeof(double));
    for (ptrdiff_t i = 0; i < N; i++) atolA[i] = 1e-12;
    for (int k = 1; k < np; k++)
        for (ptrdiff_t i = 0; i < n; i++) S0[k * n + i] = (double)k / np * y0[i];
    mb_sens *S = NULL;
    const mb_method *m = mb_method_find(method);
    if (m && mb_sens_init(&b, np, pp, pbar, atol, &so, dense, work, &S) == MB_OK) {
        mb_sens_pack(S, y0, S0, Y0);
        mb_options o;
        options_default(&o, atolA, 1e-11);
        mb_result r;
        int rc = mb_driver_run(m, mb_sens_problem(S), 0.0, 2.0, Y0, &o, &r);
        if (rc == MB_OK && par.a == 0.7) {
            double y[3];
            mb_sens_unpack(S, r.y + (r.nt - 1) * N, y, Sv);
            err = 0.0;
            for (ptrdiff_t i = 0; i < n; i++) {
                double lam = 0.7 * (i + 1) / par.m[i], E = exp(-lam * 2.0) * y0[i];
                err = fmax(err, fabs(y[i] - E) / fabs(E));
                err = fmax(err, fabs(Sv[i] - (-2.0 * (i + 1) / par.m[i] * E)) / fabs(2.0 * E));
                for (int k = 1; k < np; k++)
                    err = fmax(err, fabs(Sv[k * n + i] - (double)k / np * E) / fabs(E));
            }
        } else {
            printf("# %s: rc %d: %s\n", method, rc, r.message);
        }
        mb_result_free(&r);
    }
    free(pp); free(pbar); free(work); free(S0); free(Y0); free(atolA); free(Sv);
    return err;
}

static void check_extremes(void)
{
    static const struct { const char *m; int block, dense; } R[] = {
        {"dopri5", 0, 0}, {"radau_iia", 1, 1}, {"bdf", 1, 1}, {"rodas4", 0, 1},
    };
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
        for (int np = 1; np <= 40; np += 39) {
            double e = dec_run(R[i].m, 1, np, R[i].block, R[i].dense, 0, 0);
            CHECK(e < 1e-7, "n = 1, np = %d, %s (work %zu doubles): rel err %.1e", np, R[i].m,
                  mb_sens_work_size(1, 0, np, 0, R[i].dense), e);
        }
    for (int mass = 0; mass < 2; mass++) {
        static const char *M[] = {"bdf", "radau_iia"};
        for (int i = 0; i < 2; i++) {
            double e = dec_run(M[i], 3, 4, 1, 0, 1, mass);
            CHECK(e < 1e-7, "block linsys over the base's linsys%s, %s, no n x n work: rel err %.1e",
                  mass ? " with a diagonal mass" : "", M[i], e);
        }
    }
}

/* ---- (d) refusals ---- */

static int dummy_project(double t, double *y, void *ctx) { return 0; }
static int dummy_check(double t, const double *y, void *ctx) { return 0; }
static int dummy_res(double t, const double *y, const double *yp, double *r, void *ctx) { return 0; }

static void check_refusals(void)
{
    dec_par par = {0.7, {1, 1, 1}, {{0, 0}, {0, 0}}};
    mb_problem b;
    memset(&b, 0, sizeof b);
    b.n = 1; b.rhs = dec_rhs1; b.ctx = &par;
    double *pp[1] = {&par.a}, pbar[1] = {1.0}, atol[1] = {1e-8}, bad[1] = {0.0};
    mb_sens_options so = {MB_SENS_CENTERED, 1, NULL, 0};
    double *work = malloc(mb_sens_work_size(1, 0, 1, 0, 1) * sizeof(double));
    mb_sens *S;
    mb_problem q = b; q.project = dummy_project;
    int r1 = mb_sens_init(&q, 1, pp, pbar, atol, &so, 1, work, &S);
    q = b; q.check = dummy_check;
    int r2 = mb_sens_init(&q, 1, pp, pbar, atol, &so, 1, work, &S);
    q = b; q.res = dummy_res;
    int r3 = mb_sens_init(&q, 1, pp, pbar, atol, &so, 1, work, &S);
    int r4 = mb_sens_init(&b, 1, pp, bad, atol, &so, 1, work, &S);
    int r5 = mb_sens_init(&b, 1, pp, pbar, atol, &so, 0, work, &S); /* block, no base linsys */
    CHECK(r1 == MB_ERR_NOT_SUPPORTED && r2 == MB_ERR_NOT_SUPPORTED && r3 == MB_ERR_NOT_SUPPORTED
          && r4 == MB_ERR_ILL_INPUT && r5 == MB_ERR_ILL_INPUT,
          "refused: project %d, check %d, res %d (not supported); pbar 0 %d, block linsys "
          "without n x n work or base linsys %d (ill input)", r1, r2, r3, r4, r5);
    free(work);
}

int main(void)
{
    check_extremes();
    check_refusals();
    check_msd();
    for (int so = 0; so < 2; so++)
        for (int wj = 0; wj < 2; wj++) {
            double e = aug_jac_error(so, wj);
            CHECK(e < 1e-6, "aug J vs central differences of aug rhs (%s layout, %s): %.2e",
                  so ? "second-order" : "first-order", wj ? "base jac" : "mixed differences", e);
        }
    check_dq_variants();
    return check_summary();
}
