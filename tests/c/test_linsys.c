/* Tests of the structured linear-system path of the implicit methods (core/linsys.h,
 * MB_LINSYS in radau_iia, bdf, rodas4, ros4, ros2).
 *
 * A test linsys factors a I - J densely (LAPACK LU, real or complex) from the
 * problem's analytic Jacobian, kept at its own (t, y).  Then:
 * (a) each method run with the linsys reproduces the run with the dense path on
 *     stiff nonlinear problems (HIRES, Van der Pol mu = 1000, Robertson): the same
 *     final state to 1e-6 of the tolerance scale and step counts within 10 %; the
 *     linsys was used (its jac/factor/solve counters are positive and njev equals
 *     its jac calls); and the method's workspace with a linsys holds no n x n array;
 * (b) the driver hides the linsys from a method without MB_LINSYS (w2, dopri5) and
 *     from every method when the problem has a mass matrix: the linsys is never
 *     called and the run equals the plain run bit for bit;
 * (c) a linsys whose factorization reports a singular matrix makes the step
 *     recoverable (smaller h) and, when it persists, the run fails (radau_iia:
 *     MB_ERR_LINALG after 5 in a row; bdf, rodas4: the step size underflows) and
 *     keeps the points computed so far; a fatal code from solve
 *     stops the run with a message.
 * Prints one line per check and a final "N passed, M failed"; returns 0 if all pass. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dense.h"
#include "driver.h"
#include "problems.h"
#include "registry.h"
#include "status.h"

typedef struct {
    ptrdiff_t n;
    mb_jac_fn jacf;
    double *J;
    double *A[2];
    double complex *Z[2];
    int *ip[2];
    int cplx[2];
    long njac, nfac, nsol;
    int fail_factor_after; /* > 0: factor() reports singular from this call on */
    int fatal_solve;       /* 1: solve() returns a fatal code */
} dls;

static int dls_jac(double t, const double *y, const double *fy, void *ctx)
{
    dls *d = ctx;
    (void)fy;
    d->njac++;
    return d->jacf(t, y, d->J, d->n, NULL);
}

static int dls_factor(int slot, double ar, double ai, void *ctx)
{
    dls *d = ctx;
    ptrdiff_t n = d->n;
    d->nfac++;
    if (d->fail_factor_after > 0 && d->nfac >= d->fail_factor_after)
        return 1;
    d->cplx[slot] = ai != 0.0;
    for (ptrdiff_t c = 0; c < n; c++)
        for (ptrdiff_t r = 0; r < n; r++) {
            double j = -d->J[c * n + r];
            if (d->cplx[slot])
                d->Z[slot][c * n + r] = j + (r == c ? ar + I * ai : 0.0);
            else
                d->A[slot][c * n + r] = j + (r == c ? ar : 0.0);
        }
    int rc = d->cplx[slot] ? mb_zlu_factor(n, d->Z[slot], n, d->ip[slot])
                           : mb_lu_factor(n, d->A[slot], n, d->ip[slot]);
    return rc == MB_OK ? 0 : 1;
}

static int dls_solve(int slot, double *xr, double *xi, void *ctx)
{
    dls *d = ctx;
    ptrdiff_t n = d->n;
    d->nsol++;
    if (d->fatal_solve)
        return -99;
    if (!d->cplx[slot])
        return mb_lu_solve(n, d->A[slot], n, d->ip[slot], xr, 1) == MB_OK ? 0 : -1;
    double complex *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return -1;
    for (ptrdiff_t i = 0; i < n; i++)
        v[i] = xr[i] + I * xi[i];
    int rc = mb_zlu_solve(n, d->Z[slot], n, d->ip[slot], v, 1);
    for (ptrdiff_t i = 0; i < n; i++) {
        xr[i] = creal(v[i]);
        xi[i] = cimag(v[i]);
    }
    free(v);
    return rc == MB_OK ? 0 : -1;
}

static void dls_open(dls *d, ptrdiff_t n, mb_jac_fn jacf, mb_linsys *ls)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->jacf = jacf;
    d->J = calloc((size_t)(n * n), sizeof(double));
    for (int k = 0; k < 2; k++) {
        d->A[k] = calloc((size_t)(n * n), sizeof(double));
        d->Z[k] = calloc((size_t)(n * n), sizeof(double complex));
        d->ip[k] = calloc((size_t)n, sizeof(int));
    }
    ls->jac = dls_jac;
    ls->factor = dls_factor;
    ls->solve = dls_solve;
    ls->ctx = d;
}

static void dls_close(dls *d)
{
    free(d->J);
    for (int k = 0; k < 2; k++) {
        free(d->A[k]);
        free(d->Z[k]);
        free(d->ip[k]);
    }
}

typedef struct {
    const char *name;
    ptrdiff_t n;
    double tf, y0[8];
} prob;

static const prob PROBS[] = {
    {"hires", 8, 321.8122, {1.0, 0, 0, 0, 0, 0, 0, 0.0057}},
    {"vdp1000", 2, 1.0, {2.0, 0.0}},
    {"robertson", 3, 40.0, {1.0, 0.0, 0.0}},
};

static int run(const char *method, const mb_problem *p, const double *y0, double tf, double tol,
               mb_result *r)
{
    double atol[8];
    for (int i = 0; i < 8; i++)
        atol[i] = tol;
    mb_options o;
    memset(&o, 0, sizeof o);
    o.rtol = tol;
    o.atol = atol;
    return mb_driver_run(mb_method_find(method), p, 0.0, tf, y0, &o, r);
}

static void test_agreement(void)
{
    const char *methods[] = {"radau_iia", "bdf", "rodas4", "ros4", "ros2"};
    for (size_t k = 0; k < sizeof PROBS / sizeof PROBS[0]; k++) {
        const prob *P = &PROBS[k];
        for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
            double tol = 1e-6;
            mb_problem p = {.n = P->n, .rhs = mb_test_problem_find(P->name),
                            .jac = mb_test_problem_jac(P->name)};
            mb_result r0, r1;
            int s0 = run(methods[m], &p, P->y0, P->tf, tol, &r0);
            dls d;
            mb_linsys ls;
            dls_open(&d, P->n, p.jac, &ls);
            mb_problem pl = p;
            pl.linsys = &ls;
            int s1 = run(methods[m], &pl, P->y0, P->tf, tol, &r1);
            double dmax = 0.0;
            const double *a = r0.y + (r0.nt - 1) * P->n, *b = r1.y + (r1.nt - 1) * P->n;
            for (ptrdiff_t i = 0; i < P->n; i++)
                dmax = fmax(dmax, fabs(a[i] - b[i]) / (tol + tol * fabs(a[i])));
            long n0 = r0.stats.nsteps, n1 = r1.stats.nsteps;
            CHECK(s0 == MB_OK && s1 == MB_OK && dmax < 1e-3 && labs(n1 - n0) <= n0 / 10 + 1,
                  "%s on %s: linsys run = dense run (diff %.2e of the tolerance scale; steps %ld vs %ld)",
                  methods[m], P->name, dmax, n1, n0);
            CHECK(d.njac > 0 && d.nfac > 0 && d.nsol > 0 && r1.stats.njev == d.njac,
                  "%s on %s: the linsys was used (jac %ld = njev %ld, factor %ld, solve %ld)",
                  methods[m], P->name, d.njac, r1.stats.njev, d.nfac, d.nsol);
            const mb_method *mm = mb_method_find(methods[m]);
            size_t w0 = mm->work_size(&p, mm->data), w1 = mm->work_size(&pl, mm->data);
            CHECK(w0 - w1 >= (size_t)(P->n * P->n) && w1 < (size_t)(40 * P->n + 200),
                  "%s on %s: workspace %zu doubles with the linsys (%zu dense)", methods[m], P->name,
                  w1, w0);
            mb_result_free(&r0);
            mb_result_free(&r1);
            dls_close(&d);
        }
    }
}

static void test_hidden(void)
{
    const prob *P = &PROBS[1]; /* vdp1000 */
    const char *methods[] = {"w2", "dopri5", "radau_iia"};
    for (int m = 0; m < 3; m++) {
        double M[4] = {1.0, 0.0, 0.0, 1.0};
        int with_mass = m == 2;
        double tf = m == 1 ? 0.01 : 0.5;
        mb_problem p = {.n = 2, .rhs = mb_test_problem_find(P->name),
                        .jac = mb_test_problem_jac(P->name), .mass = with_mass ? M : NULL};
        mb_result r0, r1;
        int s0 = run(methods[m], &p, P->y0, tf, 1e-5, &r0);
        dls d;
        mb_linsys ls;
        dls_open(&d, 2, p.jac, &ls);
        mb_problem pl = p;
        pl.linsys = &ls;
        int s1 = run(methods[m], &pl, P->y0, tf, 1e-5, &r1);
        int same = s0 == s1 && r0.nt == r1.nt &&
                   memcmp(r0.y, r1.y, (size_t)(r0.nt * 2) * sizeof(double)) == 0;
        CHECK(same && d.njac + d.nfac + d.nsol == 0,
              "%s%s: the linsys is hidden (never called, run identical)", methods[m],
              with_mass ? " with a mass matrix" : "");
        mb_result_free(&r0);
        mb_result_free(&r1);
        dls_close(&d);
    }
}

static void test_failures(void)
{
    const prob *P = &PROBS[0]; /* hires */
    const char *methods[] = {"radau_iia", "bdf", "rodas4"};
    for (int m = 0; m < 3; m++) {
        mb_problem p = {.n = P->n, .rhs = mb_test_problem_find(P->name),
                        .jac = mb_test_problem_jac(P->name)};
        dls d;
        mb_linsys ls;
        dls_open(&d, P->n, p.jac, &ls);
        d.fail_factor_after = 5;
        p.linsys = &ls;
        mb_result r;
        int s = run(methods[m], &p, P->y0, P->tf, 1e-6, &r);
        CHECK(s < 0 && r.nt >= 2 && r.message[0] != '\0',
              "%s: a persistently singular iteration matrix fails the run (status %d, %td points kept: %s)",
              methods[m], s, r.nt, r.message);
        mb_result_free(&r);
        dls_close(&d);

        dls_open(&d, P->n, p.jac, &ls);
        d.fatal_solve = 1;
        s = run(methods[m], &p, P->y0, P->tf, 1e-6, &r);
        CHECK(s == MB_ERR_LINALG && strstr(r.message, "code -99") != NULL,
              "%s: a fatal solve stops the run with its code (%s)", methods[m], r.message);
        mb_result_free(&r);
        dls_close(&d);
    }
}

int main(void)
{
    test_agreement();
    test_hidden();
    test_failures();
    return check_summary();
}
