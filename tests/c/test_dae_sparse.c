/* Tests of the sparse mode of the DAE formulations (csrc/mbs/dae_sparse.c) against the
 * dense mode (dae.c) on spatial models (block-diagonal, singular M(q) regularized by the
 * normalization rows):
 *  - f, the consistent y0 = (q0, v0, lambda~0), q'' and lambda of the outputs: the same
 *    to round-off;
 *  - the iteration matrix: (a M_p - J)^-1 of the sparse linsys, column by column
 *    (every entry), against the dense LU of a M_p - J from the dense mode's exact J, for
 *    a real a and for radau's complex a; diag(M_p) of the problem;
 *  - whole runs through the driver (mb_driver_run): bdf on the sparse problem (mass_diag +
 *    linsys) ends where bdf on the dense one (dense M_p, J) does, in the same number of
 *    steps; a method without MB_LINSYS_MASS (radau_iia here, lstable_block) refuses the
 *    sparse problem with MB_ERR_NOT_SUPPORTED and a message naming it;
 *  - index3 and index1_dae on the "zoo" (drivers: not autonomous) and on an autonomous
 *    chain, index2 and ggl on the chain; index2 and ggl on the zoo have no sparse mode
 *    (MB_ERR_NOT_SUPPORTED). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dae.h"
#include "dense.h"
#include "driver.h"
#include "mech.h"
#include "registry.h"
#include "spatial.h"
#include "status.h"

#include "spatial_fixture.h"


/* a chain of three bodies without drivers: spherical joints, a spring-damper */
static void build_chain(tmodel *T)
{
    tm_init(T, 3);
    tm_con(T, MB_SC_POINT, -1, 0);
    tm_con(T, MB_SC_POINT, 0, 1);
    tm_con(T, MB_SC_POINT, 1, 2);
    tm_force(T, MB_SF_TSDA, 0, 2);
    tm_force(T, MB_SF_RSDA, 0, 1);
}

#define MAXD (2 * MAXQ + 2 * MAXC)

/* X = (a M_p - J)^-1 column by column: dense LU (A) and the sparse linsys (S) */
static void inverse_check(const char *label, mb_problem *pd, mb_problem *ps, const double *y,
                          double ar, double ai)
{
    static double complex A[MAXD * MAXD];
    static double J[MAXD * MAXD];
    static double xr[MAXD], xi[MAXD], fy[MAXD];
    static double complex b[MAXD];
    int n = (int)pd->n, ipiv[MAXD], slot = ai != 0;
    int rc = pd->jac(0.37, y, J, n, pd->ctx);
    for (int k = 0; k < n * n; k++) A[k] = (ar + I * ai) * pd->mass[k] - J[k];
    rc |= mb_zlu_factor(n, A, n, ipiv);
    const mb_linsys *L = ps->linsys;
    rc |= ps->rhs(0.37, y, fy, ps->ctx);
    rc |= L->jac(0.37, y, fy, L->ctx) | L->factor(slot, ar, ai, L->ctx);
    double err = 0, big = 0;
    for (int j = 0; j < n && rc == 0; j++) {
        for (int i = 0; i < n; i++) {
            b[i] = i == j;
            xr[i] = i == j;
            xi[i] = 0;
        }
        rc |= mb_zlu_solve(n, A, n, ipiv, b, 1);
        rc |= L->solve(slot, xr, slot ? xi : NULL, L->ctx);
        for (int i = 0; i < n; i++) {
            err = fmax(err, cabs(b[i] - (xr[i] + I * (slot ? xi[i] : 0))));
            big = fmax(big, cabs(b[i]));
        }
    }
    CHECK(rc == 0 && err <= 1e-12 * big, "%s: (a M_p - J)^-1, a = %g%+gi, sparse = dense, "
          "every entry (max diff %.1e of max %.1e)", label, ar, ai, err, big);
}

static void compare_dae(const char *label, const tmodel *T, int kind)
{
    mb_mech me;
    mb_spatial_mech(&T->m, &me);
    int nq = 7 * T->m.nb, nc = T->m.nc, n = 2 * nq + nc + (kind == MB_DAE_GGL ? nc : 0);
    static mb_dae fd, fs;
    int rd = mb_dae_init_ex(&fd, &me, kind, 0), rs = mb_dae_init_ex(&fs, &me, kind, 1);
    CHECK(rd == MB_OK && rs == MB_OK && fs.sp && !fd.sp, "%s: dense and sparse modes (%s)",
          label, fs.msg);
    if (rd != MB_OK || rs != MB_OK) return;
    double q[MAXQ], v[MAXQ], x[MAXQ], lam[MAXC], y[MAXD] = {0}, yd[MAXD], ys[MAXD], pd0[MAXD], ps0[MAXD];
    state(T, q, v, x, lam);
    /* y0 of the dense and the sparse initial values (lambda(t0) and the lambda~ shift) */
    rd = mb_dae_initial(&fd, 0.37, q, v, yd, pd0);
    rs = mb_dae_initial(&fs, 0.37, q, v, ys, ps0);
    CHECK(rd == 0 && rs == 0 && rel_diff(n, yd, ys) <= 1e-11 && rel_diff(n, pd0, ps0) <= 1e-11,
          "%s: consistent y0, y'0 (rel %.1e, %.1e)", label, rel_diff(n, yd, ys),
          rel_diff(n, pd0, ps0));
    memcpy(y, q, sizeof(double) * (size_t)nq);
    memcpy(y + nq, v, sizeof(double) * (size_t)nq);
    memcpy(y + 2 * nq, lam, sizeof(double) * (size_t)nc);
    for (int k = 2 * nq + nc; k < n; k++) y[k] = 0.05 * cos(0.8 * k);  /* GGL: mu */
    mb_problem pd, ps;
    mb_dae_problem(&fd, &pd);
    mb_dae_problem(&fs, &ps);
    CHECK(ps.mass == NULL && ps.mass_diag && ps.linsys && !ps.jac && pd.mass && !pd.mass_diag,
          "%s: the sparse problem has linsys and mass_diag, no dense M_p or J", label);
    int same = 1;
    for (int i = 0; ps.mass_diag && i < n; i++) same &= ps.mass_diag[i] == pd.mass[i + n * i];
    CHECK(same, "%s: mass_diag = diag(M_p)", label);
    rd = pd.rhs(0.37, y, yd, pd.ctx);
    rs = ps.rhs(0.37, y, ys, ps.ctx);
    CHECK(rd == 0 && rs == 0 && rel_diff(n, yd, ys) <= 1e-12, "%s: f (rel %.1e)", label,
          rel_diff(n, yd, ys));
    double ad[MAXQ], as[MAXQ], ld[MAXC], ls[MAXC];
    rd = mb_dae_accel(&fd, 0.37, y, ad, ld);
    rs = mb_dae_accel(&fs, 0.37, y, as, ls);
    CHECK(rd == 0 && rs == 0 && rel_diff(nq, ad, as) <= 1e-12 && rel_diff(nc, ld, ls) <= 1e-12,
          "%s: outputs q'', lambda (rel %.1e, %.1e)", label, rel_diff(nq, ad, as),
          rel_diff(nc, ld, ls));
    inverse_check(label, &pd, &ps, y, 40.0, 0.0);
    inverse_check(label, &pd, &ps, y, 35.0, 21.0);
    mb_dae_free(&fd);
    mb_dae_free(&fs);
}

static int drive(const char *method, const mb_problem *p, const double *y0, mb_result *r)
{
    static double atol[MAXD];
    for (int i = 0; i < MAXD; i++) atol[i] = 1e-7;
    mb_options o;
    memset(&o, 0, sizeof o);
    o.rtol = 1e-7;
    o.atol = atol;
    /* 0.05 s: the chain's state (fast spinning bodies) makes round-off grow ~10x per
     * 0.01 s (measured: q(tf) diff 3e-16, 1e-14, 4e-13 at 0.001, 0.01, 0.05 s; dense and
     * sparse part after ~0.1 s) */
    return mb_driver_run(mb_method_find(method), p, 0.0, 0.05, y0, &o, r);
}

static void test_driver(const tmodel *T)
{
    mb_mech me;
    mb_spatial_mech(&T->m, &me);
    int nq = 7 * T->m.nb, nc = T->m.nc, n = 2 * nq + nc;
    static mb_dae fd, fs;
    if (mb_dae_init_ex(&fd, &me, MB_DAE_INDEX3, 0) != MB_OK ||
        mb_dae_init_ex(&fs, &me, MB_DAE_INDEX3, 1) != MB_OK) {
        CHECK(0, "driver: modes set up");
        return;
    }
    double q[MAXQ], v[MAXQ], x[MAXQ], lam[MAXC], y0[MAXD];
    state(T, q, v, x, lam);
    /* a consistent start: project (q, v) (the sparse mode's KLU projection) */
    int rc = mb_proj_run(&fs.proj, 0.0, q, v, NULL, NULL);
    rc |= mb_dae_initial(&fd, 0.0, q, v, y0, NULL);
    mb_problem pd, ps;
    mb_dae_problem(&fd, &pd);
    mb_dae_problem(&fs, &ps);
    mb_result rd, rs, rr;
    int sd = drive("bdf", &pd, y0, &rd), ss = drive("bdf", &ps, y0, &rs);
    double dmax = 0, big = 0;
    for (int i = 0; sd == MB_OK && ss == MB_OK && i < nq; i++) {
        dmax = fmax(dmax, fabs(rd.y[(rd.nt - 1) * n + i] - rs.y[(rs.nt - 1) * n + i]));
        big = fmax(big, fabs(rd.y[(rd.nt - 1) * n + i]));
    }
    CHECK(rc == 0 && sd == MB_OK && ss == MB_OK && rd.stats.nsteps == rs.stats.nsteps &&
          dmax <= 1e-9 * fmax(1.0, big), "driver: bdf sparse = dense (steps %ld, %ld; q(tf) "
          "diff %.1e)", rd.stats.nsteps, rs.stats.nsteps, dmax);
    const char *refused[] = {"radau_iia", "lstable_block"};
    for (int k = 0; k < 2; k++) {
        const mb_method *m = mb_method_find(refused[k]);
        int sr = drive(refused[k], &ps, y0, &rr);
        CHECK(m && !(m->flags & MB_LINSYS_MASS) ? sr == MB_ERR_NOT_SUPPORTED &&
              strstr(rr.message, refused[k]) && strstr(rr.message, "a M - J") : 1,
              "driver: %s (without MB_LINSYS_MASS) refuses the sparse problem (%d: %s)",
              refused[k], sr, rr.message);
        mb_result_free(&rr);
    }
    mb_result_free(&rd);
    mb_result_free(&rs);
    mb_dae_free(&fd);
    mb_dae_free(&fs);
}

static void test_unavailable(const tmodel *zoo)
{
    mb_mech me;
    mb_spatial_mech(&zoo->m, &me);
    int kinds[] = {MB_DAE_INDEX2, MB_DAE_GGL};
    for (int k = 0; k < 2; k++) {
        mb_dae f;
        int rc = mb_dae_init_ex(&f, &me, kinds[k], 1);
        CHECK(rc == MB_ERR_NOT_SUPPORTED && strstr(f.msg, "sparse"), "kind %d on the zoo: no "
              "sparse mode (%s)", kinds[k], f.msg);
        if (rc == MB_OK) mb_dae_free(&f);
        rc = mb_dae_init_ex(&f, &me, kinds[k], -1);  /* automatic: dense */
        CHECK(rc == MB_OK && f.sp == NULL, "kind %d automatic: dense", kinds[k]);
        if (rc == MB_OK) mb_dae_free(&f);
    }
}

int main(void)
{
    static tmodel zoo, chain;
    build_zoo(&zoo);
    build_chain(&chain);
    mb_mech me;
    mb_spatial_mech(&chain.m, &me);
    CHECK(mb_spatial_check(&zoo.m) == MB_OK && mb_spatial_check(&chain.m) == MB_OK &&
          me.autonomous, "models valid, the chain autonomous");
    compare_dae("zoo index3", &zoo, MB_DAE_INDEX3);
    compare_dae("zoo index1_dae", &zoo, MB_DAE_INDEX1);
    compare_dae("chain index3", &chain, MB_DAE_INDEX3);
    compare_dae("chain index1_dae", &chain, MB_DAE_INDEX1);
    compare_dae("chain index2", &chain, MB_DAE_INDEX2);
    compare_dae("chain ggl", &chain, MB_DAE_GGL);
    test_unavailable(&zoo);
    test_driver(&chain);
    return check_summary();
}
