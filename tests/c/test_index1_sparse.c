/* Tests of the sparse mode of the index-1 formulation (csrc/mbs/index1_sparse.c) and of
 * the planar sparse kernels (csrc/mbs/assemble_sparse.c), each against the dense mode
 * on the same mechanism:
 *  - Phi_q from the sparse kernel equals the dense kernel's; C_q, C_v of the kernel
 *    against central differences of [Q - Phi_q^T lam; gamma - Phi_q x] in q and q';
 *  - f: q'' and lambda, sparse (init_ex 1) vs dense (init_ex 0), to 1e-12 relative;
 *  - the dense jac of the sparse mode (2 nq sparse solves) vs the dense analytic jac;
 *  - p->linsys: (a I - J)^-1 b for a real a and a complex a (two slots) vs the dense
 *    LU of a I - J from the dense analytic jac, to 1e-10 relative;
 *  - projection of a perturbed state, sparse vs dense;
 *  - 40 scattered configurations of a 20-bar chain in sequence (KLU refactorization
 *    with the kept pivot order), sparse vs dense;
 *  - implicit Euler with a simplified Newton iteration through p->linsys against the
 *    same scheme with the dense J and LU (the contract as a method uses it);
 *  - the models: RN double pendulum (RSDA), a rheonomic mechanism (drivers, TSDA) with
 *    Baumgarte terms, a mixed mechanism (translational, distance and fixed joints,
 *    TSDA, RSDA, a contact, a generalized force), chains of 10 and 50 pendulums;
 *  - the choice of mode: automatic by size (nq >= MB_INDEX1_SPARSE_MIN_NQ), and a
 *    model with Python-style extra forces forced sparse -> MB_ERR_NOT_SUPPORTED with
 *    a message (auto: dense).
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "assemble.h"
#include "check.h"
#include "dense.h"
#include "index1.h"
#include "model.h"
#include "status.h"

#include "planar_fixture.h"

static double max_abs(ptrdiff_t n, const double *x)
{
    double r = 0;
    for (ptrdiff_t i = 0; i < n; i++) r = fmax(r, fabs(x[i]));
    return r;
}

static double max_diff(ptrdiff_t n, const double *x, const double *y)
{
    double r = 0;
    for (ptrdiff_t i = 0; i < n; i++) r = fmax(r, fabs(x[i] - y[i]));
    return r;
}

static double rel_diff(ptrdiff_t n, const double *x, const double *y)
{
    double s = fmax(max_abs(n, x), max_abs(n, y));
    return max_diff(n, x, y) / (s > 0 ? s : 1.0);
}

/* ---- the sparse kernels against the dense kernels and central differences ---- */

/* g(q, q') = [Q - Phi_q^T lam ; gamma - Phi_q x] (dense kernels) */
static void g_dense(mb_planar_model *m, double t, const double *q, const double *qd,
                    const double *x, const double *lam, double *g, double *Pq)
{
    ptrdiff_t nq = 3 * m->nb, nc = m->nc;
    mb_planar_forces(t, q, qd, g, m);
    mb_planar_phi_q(t, q, Pq, nc, m);
    mb_planar_gamma(t, q, qd, g + nq, m);
    for (ptrdiff_t c = 0; c < nq; c++)
        for (ptrdiff_t r = 0; r < nc; r++) {
            g[c] -= Pq[r + nc * c] * lam[r];
            g[nq + r] -= Pq[r + nc * c] * x[c];
        }
}

static void check_kernels(const char *label, mb_planar_model *m, double t, const double *q,
                          const double *qd)
{
    mb_mech me;
    mb_planar_mech(m, &me);
    const mb_mech_sparse *K = me.sparse;
    CHECK(K != NULL, "%s: planar model has the sparse kernels", label);
    if (!K) return;
    ptrdiff_t nq = 3 * m->nb, nc = m->nc, N = nq + nc, npq = 0, nC = 0;
    CHECK(K->sizes(&npq, &nC, me.ctx) == MB_OK, "%s: sizes (nnz Phi_q %td, C %td)", label, npq, nC);
    int *pr = malloc(sizeof(int) * (npq + 1)), *pc = malloc(sizeof(int) * (npq + 1));
    int *cr = malloc(sizeof(int) * (nC + 1)), *cc = malloc(sizeof(int) * (nC + 1));
    double *pv = malloc(sizeof(double) * (npq + 1)), *cq = malloc(sizeof(double) * (nC + 1));
    double *cv = malloc(sizeof(double) * (nC + 1));
    double *Pd = calloc(nc * nq + 1, sizeof(double)), *Ps = calloc(nc * nq + 1, sizeof(double));
    double *Cq = calloc(N * nq, sizeof(double)), *Cv = calloc(N * nq, sizeof(double));
    double *Fq = calloc(N * nq, sizeof(double)), *Fv = calloc(N * nq, sizeof(double));
    double *g1 = malloc(sizeof(double) * N), *g2 = malloc(sizeof(double) * N);
    double *x = malloc(sizeof(double) * nq), *lam = malloc(sizeof(double) * (nc + 1));
    double *qp = malloc(sizeof(double) * nq);
    for (ptrdiff_t i = 0; i < nq; i++) x[i] = 0.7 * sin(1.3 * i + 0.2);
    for (ptrdiff_t i = 0; i < nc; i++) lam[i] = 5.0 * cos(0.9 * i + 0.4);
    K->pattern(pr, pc, cr, cc, me.ctx);
    K->phi_q(t, q, pv, me.ctx);
    for (ptrdiff_t k = 0; k < npq; k++) Ps[pr[k] + nc * pc[k]] += pv[k];
    mb_planar_phi_q(t, q, Pd, nc, m);
    CHECK(max_diff(nc * nq, Pd, Ps) <= 1e-15 * fmax(1, max_abs(nc * nq, Pd)),
          "%s: sparse Phi_q equals the dense kernel's (diff %.2e)", label,
          max_diff(nc * nq, Pd, Ps));
    CHECK(K->jac(t, q, qd, x, lam, cq, cv, me.ctx) == MB_OK, "%s: jac kernel runs", label);
    for (ptrdiff_t k = 0; k < nC; k++) {
        Cq[cr[k] + N * cc[k]] += cq[k];
        Cv[cr[k] + N * cc[k]] += cv[k];
    }
    /* central differences, Richardson-extrapolated */
    for (int wrt = 0; wrt < 2; wrt++) {
        double *F = wrt ? Fv : Fq;
        const double *base = wrt ? qd : q;
        for (ptrdiff_t j = 0; j < nq; j++) {
            double h = 1e-3 * fmax(1.0, fabs(base[j])), d0[64 * 6];
            double *dprev = N <= 64 * 6 ? d0 : NULL;
            if (!dprev) break;
            for (int half = 0; half < 2; half++) {
                double hh = half ? h / 2 : h;
                memcpy(qp, base, sizeof(double) * nq);
                qp[j] = base[j] + hh;
                g_dense(m, t, wrt ? q : qp, wrt ? qp : qd, x, lam, g1, Pd);
                qp[j] = base[j] - hh;
                g_dense(m, t, wrt ? q : qp, wrt ? qp : qd, x, lam, g2, Pd);
                for (ptrdiff_t r = 0; r < N; r++) {
                    double d = (g1[r] - g2[r]) / (2 * hh);
                    F[r + N * j] = half ? (4 * d - dprev[r]) / 3 : d;
                    dprev[r] = d;
                }
            }
        }
    }
    double eq = rel_diff(N * nq, Cq, Fq), ev = rel_diff(N * nq, Cv, Fv);
    CHECK(eq <= 1e-8, "%s: C_q = [Q_q - (Phi_q^T lam)_q; gamma_q - (Phi_q x)_q] vs central "
          "differences (rel %.2e)", label, eq);
    CHECK(ev <= 1e-8, "%s: C_v = [Q_q'; gamma_q'] vs central differences (rel %.2e)", label, ev);
    free(pr); free(pc); free(cr); free(cc); free(pv); free(cq); free(cv); free(Pd); free(Ps);
    free(Cq); free(Cv); free(Fq); free(Fv); free(g1); free(g2); free(x); free(lam); free(qp);
}

/* ---- the formulation, sparse vs dense ---- */

static void compare_modes(const char *label, mb_planar_model *m, double alpha, double beta,
                          double t, const double *q, const double *qd)
{
    mb_mech me;
    mb_planar_mech(m, &me);
    ptrdiff_t nq = 3 * m->nb, nc = m->nc, n = 2 * nq;
    mb_index1 fd, fs;
    int rd = mb_index1_init_ex(&fd, &me, alpha, beta, 0);
    int rs = mb_index1_init_ex(&fs, &me, alpha, beta, 1);
    CHECK(rd == MB_OK && fd.sp == NULL, "%s: dense mode (init_ex 0)", label);
    CHECK(rs == MB_OK && fs.sp != NULL, "%s: sparse mode (init_ex 1) %s", label, fs.msg);
    if (rd != MB_OK || rs != MB_OK) {
        mb_index1_free(&fd);
        mb_index1_free(&fs);
        return;
    }
    double *ad = malloc(sizeof(double) * nq), *as = malloc(sizeof(double) * nq);
    double *ld = malloc(sizeof(double) * (nc + 1)), *ls = malloc(sizeof(double) * (nc + 1));
    rd = mb_index1_solve(&fd, t, q, qd, ad, ld);
    rs = mb_index1_solve(&fs, t, q, qd, as, ls);
    CHECK(rd == MB_OK && rs == MB_OK, "%s: both solve", label);
    double ea = rel_diff(nq, ad, as), el = rel_diff(nc, ld, ls);
    CHECK(ea <= 1e-12 && el <= 1e-12, "%s: q'' (rel %.2e) and lambda (rel %.2e) agree to 1e-12",
          label, ea, el);

    mb_problem pd, ps;
    mb_index1_problem(&fd, &pd);
    mb_index1_problem(&fs, &ps);
    CHECK(pd.linsys == NULL && ps.linsys != NULL && ps.jac != NULL,
          "%s: linsys only in sparse mode, dense jac in both", label);
    CHECK((pd.dfdt != NULL) == (ps.dfdt != NULL) && (pd.dfdt != NULL) == (me.autonomous != 0),
          "%s: dfdt = 0 exactly when autonomous, in both modes", label);
    double *y = malloc(sizeof(double) * n), *fy = malloc(sizeof(double) * n);
    double *Jd = malloc(sizeof(double) * n * n), *Js = malloc(sizeof(double) * n * n);
    memcpy(y, q, sizeof(double) * nq);
    memcpy(y + nq, qd, sizeof(double) * nq);
    rd = pd.jac(t, y, Jd, n, pd.ctx);
    rs = ps.jac(t, y, Js, n, ps.ctx);
    double ej = rel_diff(n * n, Jd, Js);
    CHECK(rd == 0 && rs == 0 && ej <= 1e-10, "%s: dense jac of the sparse mode = analytic dense "
          "jac (rel %.2e)", label, ej);

    /* linsys vs dense (a I - J)^-1 b */
    const mb_linsys *L = ps.linsys;
    ps.rhs(t, y, fy, ps.ctx);
    int rj = L->jac(t, y, fy, L->ctx);
    double jn = max_abs(n * n, Jd), ar = 1.7 * sqrt(jn) + 3.0;
    double complex az = 0.8 * ar + 0.6 * ar * I;
    int r0 = L->factor(0, ar, 0.0, L->ctx), r1 = L->factor(1, creal(az), cimag(az), L->ctx);
    CHECK(rj == 0 && r0 == 0 && r1 == 0, "%s: linsys jac, factor (real a = %.3g, complex a)",
          label, ar);
    double *A = malloc(sizeof(double) * n * n), *br = malloc(sizeof(double) * n);
    double *bi = malloc(sizeof(double) * n), *xr = malloc(sizeof(double) * n);
    double *xi = malloc(sizeof(double) * n);
    double complex *Az = malloc(sizeof(double complex) * n * n);
    double complex *bz = malloc(sizeof(double complex) * n);
    int *ipiv = malloc(sizeof(int) * n);
    for (ptrdiff_t i = 0; i < n; i++) {
        br[i] = sin(0.7 * i + 0.1) * (1 + i % 3);
        bi[i] = cos(1.1 * i + 0.3);
    }
    for (ptrdiff_t k = 0; k < n * n; k++) {
        A[k] = -Jd[k];
        Az[k] = -Jd[k];
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        A[i + n * i] += ar;
        Az[i + n * i] += az;
    }
    mb_lu_factor(n, A, n, ipiv);
    memcpy(xr, br, sizeof(double) * n);
    mb_lu_solve(n, A, n, ipiv, xr, 1);
    double *yr = malloc(sizeof(double) * n), *yi = malloc(sizeof(double) * n);
    memcpy(yr, br, sizeof(double) * n);
    int s0 = L->solve(0, yr, NULL, L->ctx);
    double er = rel_diff(n, xr, yr);
    CHECK(s0 == 0 && er <= 1e-10, "%s: linsys real solve = dense (a I - J)^-1 b (rel %.2e)",
          label, er);
    mb_zlu_factor(n, Az, n, ipiv);
    for (ptrdiff_t i = 0; i < n; i++) bz[i] = br[i] + I * bi[i];
    mb_zlu_solve(n, Az, n, ipiv, bz, 1);
    memcpy(yr, br, sizeof(double) * n);
    memcpy(yi, bi, sizeof(double) * n);
    int s1 = L->solve(1, yr, yi, L->ctx);
    for (ptrdiff_t i = 0; i < n; i++) {
        xr[i] = creal(bz[i]);
        xi[i] = cimag(bz[i]);
    }
    double ec = fmax(max_diff(n, xr, yr), max_diff(n, xi, yi)) /
                fmax(max_abs(n, xr), max_abs(n, xi));
    CHECK(s1 == 0 && ec <= 1e-10, "%s: linsys complex solve = dense (a I - J)^-1 b (rel %.2e)",
          label, ec);
    /* slot 0 still holds the real factorization after slot 1 was factored */
    memcpy(yr, br, sizeof(double) * n);
    L->solve(0, yr, NULL, L->ctx);
    memcpy(xr, br, sizeof(double) * n);
    mb_lu_solve(n, A, n, ipiv, xr, 1);  /* ipiv overwritten by zlu: redo the real LU */
    for (ptrdiff_t k = 0; k < n * n; k++) A[k] = -Jd[k];
    for (ptrdiff_t i = 0; i < n; i++) A[i + n * i] += ar;
    mb_lu_factor(n, A, n, ipiv);
    memcpy(xr, br, sizeof(double) * n);
    mb_lu_solve(n, A, n, ipiv, xr, 1);
    CHECK(rel_diff(n, xr, yr) <= 1e-10, "%s: the two slots are independent (rel %.2e)", label,
          rel_diff(n, xr, yr));

    /* projection of a perturbed state */
    if (nc > 0) {
        double *q1 = malloc(sizeof(double) * nq), *v1 = malloc(sizeof(double) * nq);
        double *q2 = malloc(sizeof(double) * nq), *v2 = malloc(sizeof(double) * nq);
        for (ptrdiff_t i = 0; i < nq; i++) {
            q1[i] = q2[i] = q[i] + 1e-3 * sin(2.1 * i + 0.5);
            v1[i] = v2[i] = qd[i] + 1e-2 * cos(1.7 * i);
        }
        double rp1, rv1, rp2, rv2;
        int p1 = mb_index1_project(&fd, t, q1, v1, &rp1, &rv1);
        int p2 = mb_index1_project(&fs, t, q2, v2, &rp2, &rv2);
        CHECK(p1 == 0 && p2 == 0 && rp2 <= 1e-12 && rv2 <= 1e-12,
              "%s: sparse projection converges (|Phi| %.1e, |Phi_q q' + Phi_t| %.1e)", label,
              rp2, rv2);
        double eq = max_diff(nq, q1, q2), ev = max_diff(nq, v1, v2);
        CHECK(eq <= 1e-12 * fmax(1, max_abs(nq, q1)) && ev <= 1e-10 * fmax(1, max_abs(nq, v1)),
              "%s: projection sparse = dense (q %.1e, q' %.1e)", label, eq, ev);
        /* the kept Jacobian survives a projection: solve again, same answer */
        memcpy(yr, br, sizeof(double) * n);
        L->solve(0, yr, NULL, L->ctx);
        CHECK(rel_diff(n, xr, yr) <= 1e-10, "%s: linsys unchanged after a projection", label);
        free(q1); free(v1); free(q2); free(v2);
    }
    free(ad); free(as); free(ld); free(ls); free(y); free(fy); free(Jd); free(Js); free(A);
    free(br); free(bi); free(xr); free(xi); free(Az); free(bz); free(ipiv); free(yr); free(yi);
    mb_index1_free(&fd);
    mb_index1_free(&fs);
}

/* ---- models ---- */

typedef struct chain {
    mb_planar_model m;
    double *body;
    mb_planar_joint *j;
    mb_planar_force *f;
    double *q, *qd;
} chain;

/* N bars of length 1 (pins at -0.5, 0.5), mass 1 + 0.1 k, RSDA between neighbours */
static void chain_build(chain *C, int N)
{
    memset(C, 0, sizeof *C);
    C->body = calloc(2 * N, sizeof(double));
    C->j = calloc(N, sizeof *C->j);
    C->f = calloc(N, sizeof *C->f);
    C->q = calloc(3 * N, sizeof(double));
    C->qd = calloc(3 * N, sizeof(double));
    C->m.nb = N;
    C->m.body = C->body;
    C->m.g[1] = -9.81;
    C->m.joints = C->j;
    C->m.forces = C->f;
    double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N);
    double *th = malloc(sizeof(double) * N), *w = malloc(sizeof(double) * N);
    for (int k = 0; k < N; k++) {
        double mk = 1.0 + 0.1 * k;
        C->body[2 * k] = mk;
        C->body[2 * k + 1] = mk / 12.0;
        mb_planar_joint *J = &C->j[C->m.nj++];
        J->type = MB_JOINT_REVOLUTE;
        J->i = k - 1;
        J->j = k;
        J->si[0] = k > 0 ? 0.5 : 0.0;
        J->sj[0] = -0.5;
        J->row = C->m.nc;
        C->m.nc += 2;
        if (k > 0) {
            mb_planar_force *F = &C->f[C->m.nf++];
            F->type = MB_FORCE_RSDA;
            F->i = k - 1;
            F->j = k;
            F->k = 50.0;
            F->c = 0.5;
        }
        a[k] = b[k] = 0.5;
        th[k] = -M_PI / 2 + 0.3 + 0.1 * sin(k);
        w[k] = 0.5 * cos(k);
    }
    chain_state(N, a, b, th, w, C->q, C->qd);
    free(a); free(b); free(th); free(w);
}

static void chain_free(chain *C)
{
    free(C->body); free(C->j); free(C->f); free(C->q); free(C->qd);
}

/* three bodies with every joint and force type of the element level */
static void build_mixed(tmodel *T)
{
    tm_init(T, 3);
    double mb[3][2] = {{2, 0.4}, {1.5, 0.2}, {0.8, 0.05}};
    for (int k = 0; k < 3; k++) {
        T->body[2 * k] = mb[k][0];
        T->body[2 * k + 1] = mb[k][1];
    }
    mb_planar_joint *J = tm_joint(T, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -0.5;
    J = tm_joint(T, MB_JOINT_TRANSLATIONAL, 0, 1);
    J->si[0] = 0.2; J->si[1] = 0.1;
    J->sj[0] = -0.1;
    J->ni[0] = 0.6; J->ni[1] = 0.8;
    J->phi0 = 0.1;
    J = tm_joint(T, MB_JOINT_DISTANCE, 1, 2);
    J->si[0] = 0.3;
    J->sj[1] = 0.2;
    J->L = 0.7;
    mb_planar_force *F = tm_force(T, MB_FORCE_TSDA, -1, 2);
    F->si[0] = 1.0; F->si[1] = 0.5;
    F->sj[0] = 0.1;
    F->k = 40; F->c = 2; F->L0 = 0.3;
    F = tm_force(T, MB_FORCE_RSDA, 0, 1);
    F->k = 15; F->c = 0.4; F->L0 = 0.2;
    F = tm_force(T, MB_FORCE_CONTACT_LINE, 2, -1);
    F->si[0] = 0.2;
    F->ri = 0.1;
    F->p0[1] = -0.05;
    F->nrm[1] = 1.0;
    F->K = 1e4; F->cd = 20; F->e = 1.5;
    F = tm_force(T, MB_FORCE_GENERALIZED, -1, -1);
    F->coord = 4;
    F->fa = (mb_timefn){0.5, 0.1, 0, 0.2, 3.0, 0};
}

/* a body welded to a pendulum (fixed joint), driven angle */
static void build_fixed(tmodel *T)
{
    tm_init(T, 3);
    for (int k = 0; k < 3; k++) {
        T->body[2 * k] = 1 + k;
        T->body[2 * k + 1] = 0.1 * (1 + k);
    }
    mb_planar_joint *J = tm_joint(T, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -0.4;
    J = tm_joint(T, MB_JOINT_FIXED, 0, 1);
    J->si[0] = 0.4;
    J->sj[1] = -0.2;
    J->phi0 = 0.3;
    J = tm_joint(T, MB_JOINT_REVOLUTE, 1, 2);
    J->si[1] = 0.2;
    J->sj[0] = -0.3;
    mb_planar_force *F = tm_force(T, MB_FORCE_CONTACT_CIRCLES, 0, 2);
    F->ri = 0.3; F->rj = 0.25;
    F->K = 5e3; F->cd = 10; F->e = 1.0;
    F = tm_force(T, MB_FORCE_TSDA, 1, 2);
    F->si[0] = 0.1; F->sj[0] = 0.2;
    F->k = 30; F->c = 1; F->L0 = 0.5;
}

static int extra_force(double t, const double *q, const double *qd, double *Q, void *ctx)
{
    (void)ctx; (void)t; (void)qd;
    Q[0] += -2.0 * q[0];
    return 0;
}

static void test_models(void)
{
    tmodel T;
    double q[NQMAX], qd[NQMAX];

    build_rn(&T, 1e4, 10, 1e5, 30);
    rn_state(q, qd);
    check_kernels("RN double pendulum", &T.m, 0.0, q, qd);
    compare_modes("RN double pendulum", &T.m, 0.0, 0.0, 0.0, q, qd);

    build_driven(&T);
    for (int i = 0; i < 6; i++) {
        q[i] = 0.3 * sin(1.0 + i);
        qd[i] = 0.5 * cos(2.0 + i);
    }
    check_kernels("driven mechanism", &T.m, 0.37, q, qd);
    compare_modes("driven, Baumgarte 5/10", &T.m, 5.0, 10.0, 0.37, q, qd);

    build_mixed(&T);
    double qm[9] = {0.4, -0.1, 0.3, 0.75, 0.2, 0.45, 0.9, -0.05, 0.2};
    double vm[9] = {0.2, -0.3, 0.5, 0.1, 0.4, -0.2, 0.3, -0.6, 0.7};
    /* body 2's contact point 0.2 along its x axis: gap r - (p - p0).n > 0 */
    check_kernels("mixed mechanism", &T.m, 0.2, qm, vm);
    compare_modes("mixed mechanism, Baumgarte 2/3", &T.m, 2.0, 3.0, 0.2, qm, vm);
    {
        mb_pair p;
        mb_pair_gather(&T.m, 2, -1, qm, vm, &p);
        CHECK(mb_contact_gap(&T.f[2], &p) > 0, "mixed mechanism: the contact is active (gap %.3f)",
              mb_contact_gap(&T.f[2], &p));
    }

    build_fixed(&T);
    double qf[9] = {0.1, -0.35, 0.2, 0.5, -0.2, 0.5, 0.35, -0.1, -0.4};
    double vf[9] = {0.3, 0.1, -0.2, 0.2, -0.1, 0.4, -0.3, 0.2, 0.1};
    check_kernels("fixed joint, contact circles", &T.m, 0.0, qf, vf);
    compare_modes("fixed joint, contact circles", &T.m, 0.0, 0.0, 0.0, qf, vf);

    /* no constraints: two bodies on springs (S = M) */
    tm_init(&T, 2);
    T.body[0] = 1.5; T.body[1] = 0.2; T.body[2] = 0.5; T.body[3] = 0.03;
    mb_planar_force *F = tm_force(&T, MB_FORCE_TSDA, -1, 0);
    F->si[1] = 1.0; F->sj[0] = 0.2; F->k = 30; F->c = 0.5; F->L0 = 0.8;
    F = tm_force(&T, MB_FORCE_TSDA, 0, 1);
    F->si[0] = -0.2; F->sj[1] = 0.1; F->k = 20; F->c = 0.2; F->L0 = 0.5;
    double qu[6] = {0.1, -0.2, 0.3, 0.4, -0.9, -0.2}, vu[6] = {0.5, -0.1, 0.2, 0.3, 0.6, -0.4};
    check_kernels("unconstrained", &T.m, 0.0, qu, vu);
    compare_modes("unconstrained", &T.m, 0.0, 0.0, 0.0, qu, vu);

    chain C;
    chain_build(&C, 10);
    check_kernels("chain N = 10", &C.m, 0.0, C.q, C.qd);
    compare_modes("chain N = 10", &C.m, 0.0, 0.0, 0.0, C.q, C.qd);
    chain_free(&C);
    chain_build(&C, 50);
    compare_modes("chain N = 50", &C.m, 0.0, 0.0, 0.0, C.q, C.qd);
    chain_free(&C);
}

/* one sparse and one dense formulation over a sequence of very different
 * configurations: KLU refactors with the kept pivot order, or factors afresh when the
 * pivots degrade; q'' and lambda must agree at every point */
static void test_sequence(void)
{
    chain C;
    chain_build(&C, 20);
    mb_mech me;
    mb_planar_mech(&C.m, &me);
    mb_index1 fd, fs;
    mb_index1_init_ex(&fd, &me, 0, 0, 0);
    mb_index1_init_ex(&fs, &me, 0, 0, 1);
    ptrdiff_t nq = 3 * C.m.nb, nc = C.m.nc;
    double *q = malloc(sizeof(double) * nq), *a1 = malloc(sizeof(double) * nq);
    double *a2 = malloc(sizeof(double) * nq), *l1 = malloc(sizeof(double) * nc);
    double *l2 = malloc(sizeof(double) * nc), worst = 0;
    int bad = 0;
    for (int k = 0; k < 40; k++) {
        /* the chain folded in every direction: angles anywhere in (-pi, pi) */
        for (ptrdiff_t i = 0; i < nq; i++)
            q[i] = C.q[i] + (i % 3 == 2 ? 3.0 * sin(0.77 * k * (i + 1)) : 0.5 * cos(1.3 * k + i));
        int r1 = mb_index1_solve(&fd, 0, q, C.qd, a1, l1);
        int r2 = mb_index1_solve(&fs, 0, q, C.qd, a2, l2);
        bad += r1 != 0 || r2 != 0;
        worst = fmax(worst, fmax(rel_diff(nq, a1, a2), rel_diff(nc, l1, l2)));
    }
    CHECK(bad == 0 && worst <= 1e-10, "40 scattered configurations of a 20-bar chain: sparse "
          "(refactor / refactor fallback) = dense (worst rel %.2e)", worst);
    free(q); free(a1); free(a2); free(l1); free(l2);
    mb_index1_free(&fd);
    mb_index1_free(&fs);
    chain_free(&C);
}

/* the contract of mb_linsys as a method uses it: implicit Euler with a simplified
 * Newton iteration, (a I - J) d = -G / h with a = 1/h and J kept over the step's
 * iterations; the sparse linsys against the dense J and LU of the same scheme */
static void test_implicit_euler(void)
{
    chain C;
    chain_build(&C, 10);
    mb_mech me;
    mb_planar_mech(&C.m, &me);
    mb_index1 fd, fs;
    mb_index1_init_ex(&fd, &me, 0, 0, 0);
    mb_index1_init_ex(&fs, &me, 0, 0, 1);
    mb_problem pd, ps;
    mb_index1_problem(&fd, &pd);
    mb_index1_problem(&fs, &ps);
    ptrdiff_t nq = 3 * C.m.nb, n = 2 * nq;
    double h = 2e-3, a = 1.0 / h;
    double *yd = malloc(sizeof(double) * n), *ys = malloc(sizeof(double) * n);
    double *y0 = malloc(sizeof(double) * n), *fy = malloc(sizeof(double) * n);
    double *d = malloc(sizeof(double) * n), *J = malloc(sizeof(double) * n * n);
    int *ipiv = malloc(sizeof(int) * n), rc = 0;
    memcpy(yd, C.q, sizeof(double) * nq);
    memcpy(yd + nq, C.qd, sizeof(double) * nq);
    memcpy(ys, yd, sizeof(double) * n);
    const mb_linsys *L = ps.linsys;
    for (int step = 0; step < 10; step++) {
        double t = step * h;
        /* dense */
        memcpy(y0, yd, sizeof(double) * n);
        rc |= pd.jac(t, y0, J, n, pd.ctx);
        for (ptrdiff_t k = 0; k < n * n; k++) J[k] = -J[k];
        for (ptrdiff_t i = 0; i < n; i++) J[i + n * i] += a;
        mb_lu_factor(n, J, n, ipiv);
        for (int it = 0; it < 4; it++) {
            rc |= pd.rhs(t + h, yd, fy, pd.ctx);
            for (ptrdiff_t i = 0; i < n; i++) d[i] = -(yd[i] - y0[i] - h * fy[i]) / h;
            mb_lu_solve(n, J, n, ipiv, d, 1);
            for (ptrdiff_t i = 0; i < n; i++) yd[i] += d[i];
        }
        /* sparse */
        memcpy(y0, ys, sizeof(double) * n);
        rc |= ps.rhs(t, y0, fy, ps.ctx);
        rc |= L->jac(t, y0, fy, L->ctx);
        rc |= L->factor(0, a, 0.0, L->ctx);
        for (int it = 0; it < 4; it++) {
            rc |= ps.rhs(t + h, ys, fy, ps.ctx);
            for (ptrdiff_t i = 0; i < n; i++) d[i] = -(ys[i] - y0[i] - h * fy[i]) / h;
            rc |= L->solve(0, d, NULL, L->ctx);
            for (ptrdiff_t i = 0; i < n; i++) ys[i] += d[i];
        }
        /* the projection between steps must not disturb the next step's linsys */
        rc |= mb_index1_project(&fd, t + h, yd, yd + nq, NULL, NULL);
        rc |= mb_index1_project(&fs, t + h, ys, ys + nq, NULL, NULL);
    }
    double e = rel_diff(n, yd, ys), moved = max_diff(n, yd, y0);
    CHECK(rc == 0 && e <= 1e-10 && moved > 1e-3,
          "implicit Euler, 10 steps of a 10-bar chain: linsys = dense J + LU (rel %.2e)", e);
    free(yd); free(ys); free(y0); free(fy); free(d); free(J); free(ipiv);
    mb_index1_free(&fd);
    mb_index1_free(&fs);
    chain_free(&C);
}

static void test_mode_choice(void)
{
    chain C;
    mb_mech me;
    mb_index1 f;
    int nsmall = MB_INDEX1_SPARSE_MIN_NQ / 3 - 1, nbig = MB_INDEX1_SPARSE_MIN_NQ / 3;
    chain_build(&C, nsmall);
    mb_planar_mech(&C.m, &me);
    CHECK(mb_index1_init(&f, &me, 0, 0) == MB_OK && f.sp == NULL,
          "auto: nq = %d < %d stays dense", 3 * nsmall, MB_INDEX1_SPARSE_MIN_NQ);
    mb_index1_free(&f);
    chain_free(&C);
    chain_build(&C, nbig);
    mb_planar_mech(&C.m, &me);
    CHECK(mb_index1_init(&f, &me, 0, 0) == MB_OK && f.sp != NULL,
          "auto: nq = %d >= %d is sparse", 3 * nbig, MB_INDEX1_SPARSE_MIN_NQ);
    mb_index1_free(&f);
    /* extra (Python) forces: no sparse kernels */
    C.m.extra = extra_force;
    mb_planar_mech(&C.m, &me);
    CHECK(me.sparse == NULL, "extra forces: mech->sparse is NULL");
    int rc = mb_index1_init_ex(&f, &me, 0, 0, 1);
    CHECK(rc == MB_ERR_NOT_SUPPORTED && strstr(f.msg, "sparse") && strstr(f.msg, "extra"),
          "extra forces forced sparse: MB_ERR_NOT_SUPPORTED, \"%s\"", f.msg);
    mb_index1_free(&f);
    CHECK(mb_index1_init(&f, &me, 0, 0) == MB_OK && f.sp == NULL,
          "extra forces, auto: dense");
    mb_index1_free(&f);
    /* the kernels themselves refuse a model with extra forces */
    ptrdiff_t a, b;
    CHECK(mb_planar_sparse.sizes(&a, &b, &C.m) == MB_ERR_NOT_SUPPORTED,
          "sparse kernels refuse a model with extra forces");
    chain_free(&C);
    /* singular configuration: two coincident ground pins on one body, sparse -> message */
    tmodel T;
    tm_init(&T, 1);
    T.body[0] = 1;
    T.body[1] = 0.1;
    mb_planar_joint *J = tm_joint(&T, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -0.5;
    J = tm_joint(&T, MB_JOINT_REVOLUTE, -1, 0);
    J->sj[0] = -0.5;
    mb_planar_mech(&T.m, &me);
    double q[3] = {0.5, 0, 0}, qd[3] = {0, 0, 0}, a3[3];
    rc = mb_index1_init_ex(&f, &me, 0, 0, 1);
    if (rc == MB_OK) rc = mb_index1_solve(&f, 0, q, qd, a3, NULL);
    CHECK(rc == MB_ERR_LINALG && strstr(f.msg, "singular"),
          "redundant constraints, sparse: MB_ERR_LINALG, \"%s\"", f.msg);
    mb_index1_free(&f);
}

int main(void)
{
    test_models();
    test_sequence();
    test_implicit_euler();
    test_mode_choice();
    return check_summary();
}
