/* Tests of the sparse kernels of the spatial model (csrc/mbs/spatial_sparse.c) and of
 * the sparse index-1 mode on them (csrc/mbs/index1_sparse.c: block-diagonal M(q)):
 *  - the entry counts of the patterns against their formula (spatial_sparse.c's header)
 *    at the extremes: one free body (its normalization row only), one body on a ground
 *    joint, and a model with every constraint and force element type;
 *  - Phi_q, M, (M x)_q and the C_q, C_v blocks scattered from the sparse values equal
 *    the dense kernels' (round-off); Phi_tq against differences of Phi_q in t;
 *  - index1 sparse (init_ex 1) against dense (init_ex 0): q'' and lambda, the dense J
 *    of the sparse mode, and (a I - J)^-1 b through p->linsys against a dense LU, with
 *    and without Baumgarte terms (a driven angle row: Phi_tq);
 *  - a model with a callback force has no sparse kernels (MB_ERR_NOT_SUPPORTED). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dense.h"
#include "index1.h"
#include "mech.h"
#include "spatial.h"
#include "status.h"

#include "spatial_fixture.h"

/* ---- sizes ---- */

static int width(int i, int j) { return 7 * (i >= 0) + 7 * (j >= 0); }

static void check_sizes(const char *label, const mb_spatial_model *m)
{
    ptrdiff_t npq = 4 * m->nb, nC = 20 * m->nb, nm = -1, a = -1, b = -1;
    for (int k = 0; k < m->ncon; k++) {
        const mb_spatial_con *C = &m->cons[k];
        int w = width(C->i, C->j), r = mb_spatial_con_rows(C->type);
        npq += r * w;
        nC += w * w + r * w;
    }
    for (int k = 0; k < m->nf; k++) nC += width(m->forces[k].i, m->forces[k].j) *
                                          width(m->forces[k].i, m->forces[k].j);
    int rc = mb_spatial_sparse.sizes(&a, &b, (void *)m);
    rc |= mb_spatial_sparse.mass_pattern(&nm, NULL, NULL, (void *)m);
    CHECK(rc == MB_OK && a == npq && b == nC && nm == 19 * m->nb,
          "%s: nnz Phi_q %td (formula %td), C %td (%td), M %td (%d)", label, a, npq, b, nC, nm,
          19 * m->nb);
}

/* ---- the sparse values against the dense kernels ---- */

typedef struct sparse_set {
    ptrdiff_t npq, nC, nm;
    int pr[400], pc[400], cr[4000], cc[4000], mr[64], mc[64];
    double pv[400], ptq[400], cq[4000], cv[4000], mv[64], mq[64];
} sparse_set;

/* dense (ld x ncol, zeroed) from n triplets, with an optional row offset */
static void scatter(ptrdiff_t n, const int *r, const int *c, const double *v, double *D,
                    ptrdiff_t ld, ptrdiff_t ncol)
{
    memset(D, 0, sizeof(double) * (size_t)(ld * ncol));
    for (ptrdiff_t k = 0; k < n; k++) D[r[k] + ld * c[k]] += v[k];
}

static void check_values(const char *label, const tmodel *T)
{
    static sparse_set S;
    static double Pd[MAXC * MAXQ], Ps[MAXC * MAXQ], Cd[MAXN * MAXQ], Cs[MAXN * MAXQ];
    static double Md[MAXQ * MAXQ], Ms[MAXQ * MAXQ], A1[MAXQ * MAXQ], A2[MAXC * MAXQ];
    void *m = (void *)&T->m;
    int nq = 7 * T->m.nb, nc = T->m.nc, N = nq + nc;
    double q[MAXQ], qd[MAXQ], x[MAXQ], lam[MAXC], t = 0.37;
    state(T, q, qd, x, lam);
    const mb_mech_sparse *K = &mb_spatial_sparse;
    int rc = K->sizes(&S.npq, &S.nC, m) | K->mass_pattern(&S.nm, S.mr, S.mc, m) |
             K->pattern(S.pr, S.pc, S.cr, S.cc, m) | K->phi_q(t, q, S.pv, m) |
             K->jac(t, q, qd, x, lam, S.cq, S.cv, m) | K->mass(q, S.mv, m) |
             K->mass_x_q(q, x, S.mq, m);
    CHECK(rc == MB_OK, "%s: every sparse kernel runs", label);
    scatter(S.npq, S.pr, S.pc, S.pv, Ps, nc, nq);
    mb_spatial_phi_q(t, q, Pd, nc, m);
    CHECK(rel_diff(nc * nq, Pd, Ps) <= 1e-15, "%s: Phi_q = the dense kernel's", label);
    scatter(S.nm, S.mr, S.mc, S.mv, Ms, nq, nq);
    mb_spatial_mass(q, Md, nq, m);
    CHECK(rel_diff(nq * nq, Md, Ms) <= 1e-15, "%s: M = the dense kernel's", label);
    scatter(S.nm, S.mr, S.mc, S.mq, Ms, nq, nq);
    mb_spatial_mass_x_q(q, x, Md, nq, m);
    CHECK(rel_diff(nq * nq, Md, Ms) <= 1e-15, "%s: (M x)_q = the dense kernel's", label);
    /* C_q = [Q_q - (Phi_q^T lam)_q ; gamma_q - (Phi_q x)_q] from the dense kernels */
    mb_spatial_forces_q(t, q, qd, Cd, N, m);
    mb_spatial_phiqT_lam_q(t, q, lam, A1, nq, m);
    mb_spatial_gamma_q(t, q, qd, Cd + nq, N, m);
    mb_spatial_phiq_x_q(t, q, x, A2, nc, m);
    for (int j = 0; j < nq; j++) {
        for (int i = 0; i < nq; i++) Cd[i + N * j] -= A1[i + nq * j];
        for (int r = 0; r < nc; r++) Cd[nq + r + N * j] -= A2[r + nc * j];
    }
    scatter(S.nC, S.cr, S.cc, S.cq, Cs, N, nq);
    CHECK(rel_diff(N * nq, Cd, Cs) <= 1e-13, "%s: C_q = the dense kernels' (rel %.1e)", label,
          rel_diff(N * nq, Cd, Cs));
    mb_spatial_forces_qd(t, q, qd, Cd, N, m);
    mb_spatial_gamma_qd(t, q, qd, Cd + nq, N, m);
    scatter(S.nC, S.cr, S.cc, S.cv, Cs, N, nq);
    CHECK(rel_diff(N * nq, Cd, Cs) <= 1e-13, "%s: C_v = the dense kernels' (rel %.1e)", label,
          rel_diff(N * nq, Cd, Cs));
    /* Phi_tq against central differences of Phi_q in t */
    double h = 1e-5;
    rc = K->phi_tq(t, q, S.ptq, m);
    scatter(S.npq, S.pr, S.pc, S.ptq, Ps, nc, nq);
    mb_spatial_phi_q(t + h, q, Pd, nc, m);
    mb_spatial_phi_q(t - h, q, A2, nc, m);
    for (int k = 0; k < nc * nq; k++) Pd[k] = (Pd[k] - A2[k]) / (2 * h);
    CHECK(rc == MB_OK && rel_diff(nc * nq, Pd, Ps) <= 1e-8, "%s: Phi_tq vs differences (rel %.1e)",
          label, rel_diff(nc * nq, Pd, Ps));
}

/* ---- the index-1 formulation, sparse vs dense ---- */

static void compare_modes(const char *label, const tmodel *T, double alpha, double beta,
                          double jtol)
{
    static double Jd[4 * MAXQ * MAXQ], Js[4 * MAXQ * MAXQ], A[4 * MAXQ * MAXQ];
    mb_mech me;
    mb_spatial_mech(&T->m, &me);
    int nq = 7 * T->m.nb, nc = T->m.nc, n = 2 * nq, ipiv[2 * MAXQ];
    mb_index1 fd, fs;
    int rd = mb_index1_init_ex(&fd, &me, alpha, beta, 0), rs = mb_index1_init_ex(&fs, &me, alpha, beta, 1);
    CHECK(rd == MB_OK && rs == MB_OK && fs.sp != NULL && fd.sp == NULL, "%s: dense and sparse "
          "modes (%s)", label, fs.msg);
    if (rd != MB_OK || rs != MB_OK) return;
    double y[2 * MAXQ], x[MAXQ], lam[MAXC], ad[MAXQ], as[MAXQ], ld[MAXC + 1], ls[MAXC + 1];
    state(T, y, y + nq, x, lam);
    rd = mb_index1_solve(&fd, 0.37, y, y + nq, ad, ld);
    rs = mb_index1_solve(&fs, 0.37, y, y + nq, as, ls);
    CHECK(rd == 0 && rs == 0 && rel_diff(nq, ad, as) <= 1e-12 && rel_diff(nc, ld, ls) <= 1e-12,
          "%s: q'' (rel %.1e) and lambda (rel %.1e) agree", label, rel_diff(nq, ad, as),
          rel_diff(nc, ld, ls));
    mb_problem pd, ps;
    mb_index1_problem(&fd, &pd);
    mb_index1_problem(&fs, &ps);
    rd = pd.jac(0.37, y, Jd, n, pd.ctx);
    rs = ps.jac(0.37, y, Js, n, ps.ctx);
    CHECK(rd == 0 && rs == 0 && rel_diff(n * n, Jd, Js) <= jtol, "%s: dense J of the sparse "
          "mode = the dense mode's (rel %.1e)", label, rel_diff(n * n, Jd, Js));
    /* (a I - J)^-1 b through linsys against the dense LU */
    const mb_linsys *L = ps.linsys;
    double fy[2 * MAXQ], b[2 * MAXQ], z[2 * MAXQ], a = 40.0;
    ps.rhs(0.37, y, fy, ps.ctx);
    int rl = L->jac(0.37, y, fy, L->ctx) | L->factor(0, a, 0.0, L->ctx);
    for (int k = 0; k < n * n; k++) A[k] = -Jd[k];
    for (int i = 0; i < n; i++) {
        A[i + n * i] += a;
        b[i] = z[i] = sin(0.7 * i + 0.1);
    }
    mb_lu_factor(n, A, n, ipiv);
    mb_lu_solve(n, A, n, ipiv, b, 1);
    rl |= L->solve(0, z, NULL, L->ctx);
    CHECK(rl == 0 && rel_diff(n, b, z) <= 10 * jtol, "%s: linsys solve = dense (a I - J)^-1 b "
          "(rel %.1e)", label, rel_diff(n, b, z));
    mb_index1_free(&fd);
    mb_index1_free(&fs);
}

static int cb_force(void *ud, double t, const double *q, const double *qd, double *out6)
{
    (void)ud; (void)t; (void)q; (void)qd;
    memset(out6, 0, 6 * sizeof(double));
    return 0;
}

static void test_extremes(void)
{
    static tmodel T;
    tm_init(&T, 1);  /* one free body: its normalization row only */
    check_sizes("one free body", &T.m);
    check_values("one free body", &T);
    compare_modes("one free body", &T, 0, 0, 1e-10);
    tm_con(&T, MB_SC_POINT, -1, 0);  /* on a ball joint to the ground */
    check_sizes("one body, ground ball joint", &T.m);
    check_values("one body, ground ball joint", &T);
    compare_modes("one body, ground ball joint", &T, 0, 0, 1e-10);
    /* a callback force: no sparse kernels */
    T.cb[0] = (mb_spatial_cbforce){0, {0, 0, 0}, cb_force, NULL};
    T.m.ncb = 1;
    mb_mech me;
    mb_index1 f;
    ptrdiff_t a, b;
    mb_spatial_mech(&T.m, &me);
    CHECK(me.sparse == NULL && mb_spatial_sparse.sizes(&a, &b, &T.m) == MB_ERR_NOT_SUPPORTED,
          "callback force: no sparse kernels, and they refuse it");
    int rc = mb_index1_init_ex(&f, &me, 0, 0, 1);
    CHECK(rc == MB_ERR_NOT_SUPPORTED && strstr(f.msg, "sparse"), "callback force forced sparse: "
          "\"%s\"", f.msg);
    mb_index1_free(&f);
}

static void test_zoo(void)
{
    static tmodel T;
    build_zoo(&T);
    CHECK(mb_spatial_check(&T.m) == MB_OK && T.m.nc <= MAXC, "zoo model valid (nc = %d)", T.m.nc);
    check_sizes("zoo", &T.m);
    check_values("zoo", &T);
    compare_modes("zoo", &T, 0, 0, 1e-9);
    /* Baumgarte: the dense J forms Phi_tq by differences in t, the sparse one exactly */
    compare_modes("zoo, Baumgarte", &T, 2.0, 3.0, 1e-6);
}

int main(void)
{
    test_extremes();
    test_zoo();
    return check_summary();
}
