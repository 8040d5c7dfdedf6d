/* The state-space formulation by generalized coordinate partitioning (statespace.h).
 *
 * Notation (RN paper sections 1 and 3).  q = (v, u) through the index lists indep
 * (nd) and dep (nc); X_v, X_u are the columns indep, dep of a matrix X with nq
 * columns; E = dq/dv = [I; H] (rows indep: I, rows dep: H), H = -Phi_u^-1 Phi_v
 * (eq 28a).
 *
 * Evaluation at (t, v, v') (eqs 7-10):
 *   u       Newton on Phi(t, u, v) = 0 with Phi_u, from the last accepted point's u plus
 *           H (v - v_n), until |Phi|_inf <= newton_tol, then one more correction with the
 *           factors in hand (quadratic convergence: the result is at round-off);
 *   u'      = H v' - Phi_u^-1 Phi_t                               (eq 7d)
 *   M^      = E^T M E = M^vv + M^vu H + H^T M^uv + H^T M^uu H     (eq 10a)
 *   Q^      = E^T (Q - M_u w),  w = Phi_u^-1 gamma                (eq 10b)
 *   v''     = M^-1 Q^ (LU of M^), u'' = H v'' + w                 (eqs 9, 7e)
 *   lambda  = Phi_u^-T (Q - M q'')_u                              (eq 7b)
 *
 * Jacobians (eqs 27-35), derived by differentiating (7a)-(7e) along the manifold with
 * the chain rule.  With the partial derivatives of the mechanism's kernels at fixed
 * (t, q, q') (mechderiv.h: kernels or central differences),
 *   J  = du'/dv  = -Phi_u^-1 [((Phi_q q')_q + Phi_tq) E]                   (eq 28b)
 *   L  = Phi_u^-1 [(gamma_q - (Phi_q q'')_q) E + gamma_u' J]               (eq 29)
 *   N  = Phi_u^-1 [gamma_q' E]                                             (eq 34)
 *   M^ J1 = E^T [ (Q_q - (M q'')_q - (Phi_q^T lambda)_q) E + Q_u' J - M_u L ]  (eq 31)
 *   M^ J2 = E^T [ Q_q' E - M_u N ]                                         (eq 35)
 * Eq 31 is the paper's [Q^v_v + Q^v_u H + Q^v_u' J - M^vu L - H^T R - (Phi_v^T lambda)_u H
 * - (Phi_v^T lambda)_v - (M^v q'')_v - (M^v q'')_u H] written with E (its rows indep
 * are the v-rows, H^T times its rows dep is -H^T R with R of eq 30); eq 35 is
 * W - H^T X.  Two readings of the transcription differ from this derivation (and
 * from central differences of v'', tests/test_statespace.py): eq 29's last term is
 * printed (Phi_q q')_v, but must be (Phi_q q'')_v (it comes from differentiating
 * Phi_q q'' = gamma, eq 7e); and eqs 32-34 lost the dots of the velocity partials
 * (tau_u' H + tau_v' in N, Q_u' and Q_v' in X, W).  The time derivative (eq 46) is
 * M^ dv''/dt = 0 for an autonomous mechanism, else central differences of v'' in t at
 * fixed (v, v') (this covers Phi_t, Phi_tt and time-dependent forces alike).
 *
 * Partitioning (eq 6; statespace_partition.c): Gauss-Jordan elimination with full
 * pivoting on Phi_q; the pivot columns are u.  Optional column weights (pivot_w) rank the candidate pivots by
 * |a_ij| w_j instead of |a_ij| (entries below rank_tol max|Phi_q| never qualify): a
 * small weight keeps a coordinate independent whenever the configuration allows.  Partition check (Algorithm 1 step 14): cond_1(Phi_u) (exact,
 * from the inverse) against cond_factor (1.25) times its value at the last
 * (re)partitioning.
 *
 * Workspace: one block (work, iwork) sized by the formula in mb_ss_init_ex; the log and
 * the partition table grow with the run (realloc).
 *
 * Sparse mode (s->sp, statespace_sparse.c): the same evaluation with KLU of Phi_u and v''
 * from the sparse saddle-point system, the partition by a sparse LU of Phi_q^T, J1 and J2
 * by differences; the work block then holds vectors only (dn = 0 below). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../linalg/dense.h"
#include "index1.h"
#include "statespace.h"
#include "statespace_sparse.h"
#include "mbs_common.h"
#include "status.h"

/* ---------------------------------------------------------------- set-up */

/* dn = 1: the dense mode's matrices, 0: the sparse mode (vectors only) */
static size_t point_doubles(ptrdiff_t nq, ptrdiff_t nc, ptrdiff_t nd, ptrdiff_t dn)
{
    return (size_t)(2 * nd + 3 * nq + nc + dn * (nc * nq + nc * nc + nc * nd) + nc +
                    dn * nq * nq + nq + dn * 2 * nd * nd + nd);
}

static void carve_point(mb_ss_point *P, ptrdiff_t nq, ptrdiff_t nc, ptrdiff_t nd,
                        ptrdiff_t dn, double **w, int **iw)
{
    double *b = *w;
    P->v = b; b += nd;
    P->vd = b; b += nd;
    P->q = b; b += nq;
    P->qd = b; b += nq;
    P->qdd = b; b += nq;
    P->lam = b; b += nc;
    P->Pq = b; b += dn * nc * nq;
    P->Fu = b; b += dn * nc * nc;
    P->H = b; b += dn * nc * nd;
    P->w = b; b += nc;
    P->M = b; b += dn * nq * nq;
    P->Q = b; b += nq;
    P->Mh = b; b += dn * nd * nd;
    P->Mh_lu = b; b += dn * nd * nd;
    P->vdd = b; b += nd;
    *w = b;
    P->ipiv_u = *iw; *iw += nc;
    P->ipiv_m = *iw; *iw += dn * nd;
    P->ok = 0;
}

int mb_ss_init(mb_ss *s, const mb_mech *mech)
{
    return mb_ss_init_ex(s, mech, 0);
}

int mb_ss_init_ex(mb_ss *s, const mb_mech *mech, int sparse)
{
    memset(s, 0, sizeof *s);
    if (!mech || mech->nq <= 0 || mech->nc < 0 || !mech->mass || !mech->forces ||
        (mech->nc > 0 && (!mech->phi || !mech->phi_q)))
        return MB_FAIL(s, MB_ERR_ILL_INPUT,
                    "mb_ss_init: the mechanism needs nq > 0, mass, forces, and phi and phi_q "
                    "when it has constraints.");
    ptrdiff_t nq = mech->nq, nc = mech->nc, nd = nq - nc;
    if (nd <= 0)
        return MB_FAIL(s, MB_ERR_ILL_INPUT,
                    "The mechanism has no degrees of freedom (nq = %td coordinates, nc = %td "
                    "constraints): there is no independent coordinate to integrate.", nq, nc);
    s->mech = mech;
    s->nq = nq;
    s->nc = nc;
    s->nd = nd;
    s->newton_tol = 1e-10;
    s->newton_max_iter = 10;
    s->cond_factor = 1.25;
    s->rank_tol = 1e-10;
    if (sparse > 0 || (sparse < 0 && nq >= MB_INDEX1_SPARSE_MIN_NQ &&
                       !mb_ss_sparse_unavailable(mech))) {
        int rc = mb_ss_sparse_init(&s->sp, mech, s->msg, sizeof s->msg);
        if (rc != MB_OK) return rc;
    }
    /* one layout: the parts below are both counted and carved from it; dn = 0 (sparse
     * mode): none of the dense matrices */
    ptrdiff_t dn = s->sp ? 0 : 1;
    struct { double **p; ptrdiff_t n; } dparts[] = {
        {&s->q_b, nq}, {&s->qd_b, nq}, {&s->H_b, dn * nc * nd}, {&s->A1, dn * nq * nq},
        {&s->A2, dn * nq * nq}, {&s->A3, dn * nq * nq}, {&s->C1, dn * nc * nq},
        {&s->C2, dn * nc * nq}, {&s->C3, dn * nc * nq}, {&s->G, dn * nc * nq},
        {&s->JJ, dn * nc * nd}, {&s->LL, dn * nc * nd}, {&s->NN, dn * nc * nd},
        {&s->B, dn * nq * nd}, {&s->Ed, dn * nq * nd}, {&s->r_q, nq}, {&s->r_c, nc},
        {&s->r_c2, nc}, {&s->Fcond, dn * nc * nc}, {&s->GJ, dn * nc * nq},
        {&s->atol_v, 2 * nd}, {&s->yv, 2 * nd}, {&s->vt, nd}};
    struct { int **p; ptrdiff_t n; } iparts[] = {
        {&s->indep, nd}, {&s->dep, nc}, {&s->ipiv_c, nc}, {&s->gj_row, nc}, {&s->gj_col, nq},
        {&s->mark, nq}, {&s->prev_indep, nd}};
    size_t ndp = sizeof dparts / sizeof dparts[0], nip = sizeof iparts / sizeof iparts[0];
    size_t nwd = dn ? mb_mechd_work_size(nq, nc) : 0;
    size_t nw = 2 * point_doubles(nq, nc, nd, dn) + nwd;
    size_t ni = 2 * (size_t)(nc + dn * nd);
    for (size_t k = 0; k < ndp; k++) nw += (size_t)dparts[k].n;
    for (size_t k = 0; k < nip; k++) ni += (size_t)iparts[k].n;
    s->work = calloc(nw + 1, sizeof(double));
    s->iwork = calloc(ni + 1, sizeof(int));
    if (!s->work || !s->iwork) {
        mb_ss_free(s);
        return MB_FAIL(s, MB_ERR_MEM, "mb_ss_init: out of memory.");
    }
    double *w = s->work;
    int *iw = s->iwork;
    carve_point(&s->cur, nq, nc, nd, dn, &w, &iw);
    carve_point(&s->aux, nq, nc, nd, dn, &w, &iw);
    if (dn) mb_mechd_init(&s->d, mech, w);
    w += nwd;
    for (size_t k = 0; k < ndp; k++) {
        *dparts[k].p = w;
        w += dparts[k].n;
    }
    for (size_t k = 0; k < nip; k++) {
        *iparts[k].p = iw;
        iw += iparts[k].n;
    }
    /* trivial partition until mb_ss_partition: v = q when nc = 0 */
    for (ptrdiff_t i = 0; i < nd; i++) s->indep[i] = (int)i;
    for (ptrdiff_t k = 0; k < nc; k++) s->dep[k] = (int)(nd + k);
    s->cond_ref = 1.0;
    return MB_OK;
}

void mb_ss_free(mb_ss *s)
{
    mb_ss_sparse_free(s->sp);
    s->sp = NULL;
    free(s->work);
    free(s->iwork);
    free(s->log_t);
    free(s->log_y);
    free(s->log_part);
    free(s->log_a);
    free(s->parts);
    free(s->part_t);
    s->work = NULL;
    s->iwork = NULL;
    s->log_t = s->log_y = s->log_a = s->part_t = NULL;
    s->log_part = s->parts = NULL;
    s->nlog = s->cap_log = s->npart = s->cap_part = 0;
}

static void invalidate(mb_ss *s)
{
    s->cur.ok = 0;
    s->aux.ok = 0;
}

/* ---------------------------------------------------------------- small helpers */

/* Phi_u of Pq (nc x nq, ld nc) into F (nc x nc) */
static void gather_u(const mb_ss *s, const double *Pq, double *F)
{
    ptrdiff_t nc = s->nc;
    for (ptrdiff_t j = 0; j < nc; j++)
        memcpy(F + nc * j, Pq + nc * s->dep[j], (size_t)nc * sizeof(double));
}

/* LU of F (nc x nc) with a pivot test: MB_ERR_LINALG when a pivot is below
 * 64 nc eps max|F| */
static int factor_u(ptrdiff_t nc, double *F, int *ipiv)
{
    double fmax_ = 0;
    for (ptrdiff_t l = 0; l < nc * nc; l++) fmax_ = fmax(fmax_, fabs(F[l]));
    if (nc == 0)
        return MB_OK;
    if (!(fmax_ > 0) || mb_lu_factor(nc, F, nc, ipiv) != MB_OK)
        return MB_ERR_LINALG;
    for (ptrdiff_t k = 0; k < nc; k++)
        if (!(fabs(F[k + nc * k]) > 64.0 * (double)nc * DBL_EPSILON * fmax_))
            return MB_ERR_LINALG;
    return MB_OK;
}

/* H = -Phi_u^-1 Phi_v with the factors Fu of Phi_u */
static void form_H(const mb_ss *s, const double *Pq, const double *Fu, const int *ipiv,
                   double *H)
{
    ptrdiff_t nc = s->nc, nd = s->nd;
    for (ptrdiff_t i = 0; i < nd; i++)
        for (ptrdiff_t k = 0; k < nc; k++) H[k + nc * i] = -Pq[k + nc * s->indep[i]];
    mb_lu_solve(nc, Fu, nc, ipiv, H, nd);
}

/* out (rows x nd, ld rows) = X E = X_v + X_u H for X (rows x nq, ld ldx) */
static void right_E(const mb_ss *s, const double *X, ptrdiff_t rows, ptrdiff_t ldx,
                    const double *H, double *out)
{
    ptrdiff_t nc = s->nc, nd = s->nd;
    for (ptrdiff_t i = 0; i < nd; i++) {
        double *o = out + rows * i;
        memcpy(o, X + ldx * s->indep[i], (size_t)rows * sizeof(double));
        for (ptrdiff_t k = 0; k < nc; k++) {
            double h = H[k + nc * i];
            if (h != 0.0) {
                const double *x = X + ldx * s->dep[k];
                for (ptrdiff_t r = 0; r < rows; r++) o[r] += h * x[r];
            }
        }
    }
}

/* out (rows x nd) += sign X_u Y for X (rows x nq, ld ldx), Y (nc x nd) */
static void add_Xu_Y(const mb_ss *s, const double *X, ptrdiff_t rows, ptrdiff_t ldx,
                     const double *Y, double sign, double *out)
{
    ptrdiff_t nc = s->nc, nd = s->nd;
    for (ptrdiff_t i = 0; i < nd; i++) {
        double *o = out + rows * i;
        for (ptrdiff_t k = 0; k < nc; k++) {
            double y = sign * Y[k + nc * i];
            if (y != 0.0) {
                const double *x = X + ldx * s->dep[k];
                for (ptrdiff_t r = 0; r < rows; r++) o[r] += y * x[r];
            }
        }
    }
}

/* out (nd x ncols, ld ldo) = E^T B = B_v + H^T B_u for B (nq x ncols, ld nq) */
static void left_Et(const mb_ss *s, const double *B, ptrdiff_t ncols, const double *H,
                    double *out, ptrdiff_t ldo)
{
    ptrdiff_t nc = s->nc, nd = s->nd, nq = s->nq;
    for (ptrdiff_t j = 0; j < ncols; j++) {
        const double *b = B + nq * j;
        for (ptrdiff_t i = 0; i < nd; i++) {
            double acc = b[s->indep[i]];
            for (ptrdiff_t k = 0; k < nc; k++) acc += H[k + nc * i] * b[s->dep[k]];
            out[i + ldo * j] = acc;
        }
    }
}

/* ---------------------------------------------------------------- partitioning */

/* mb_ss_partition: statespace_partition.c */

/* cond_1 of Phi_u taken from Pq (exact: the inverse from the LU); inf when singular.
 * *rel (may be NULL): |Phi_q|_1 |Phi_u^-1|_1, which also grows when Phi_u shrinks as a
 * whole (for nc = 1 cond_1 is always 1) */
static double cond_u2(mb_ss *s, const mb_ss_point *P, double *rel)
{
    ptrdiff_t nc = s->nc, nq = s->nq;
    const double *Pq = P->Pq;
    if (rel) *rel = 1.0;
    if (nc == 0) return 1.0;
    if (s->sp) return mb_ss_sparse_cond(s->sp, P == &s->aux ? 1 : 0, rel);
    double *F = s->Fcond, *X = s->C3, n1 = 0, ni = 0, nqn = 0;
    gather_u(s, Pq, F);
    for (ptrdiff_t j = 0; j < nc; j++) {
        double c = 0;
        for (ptrdiff_t i = 0; i < nc; i++) c += fabs(F[i + nc * j]);
        n1 = fmax(n1, c);
    }
    for (ptrdiff_t j = 0; j < nq; j++) {
        double c = 0;
        for (ptrdiff_t i = 0; i < nc; i++) c += fabs(Pq[i + nc * j]);
        nqn = fmax(nqn, c);
    }
    if (rel) *rel = INFINITY;
    if (factor_u(nc, F, s->ipiv_c) != MB_OK) return INFINITY;
    memset(X, 0, (size_t)(nc * nc) * sizeof(double));
    for (ptrdiff_t j = 0; j < nc; j++) X[j + nc * j] = 1.0;
    mb_lu_solve(nc, F, nc, s->ipiv_c, X, nc);
    for (ptrdiff_t j = 0; j < nc; j++) {
        double c = 0;
        for (ptrdiff_t i = 0; i < nc; i++) c += fabs(X[i + nc * j]);
        ni = fmax(ni, c);
    }
    if (rel) *rel = nqn * ni;
    return n1 * ni;
}

static double cond_u(mb_ss *s, const mb_ss_point *P)
{
    return cond_u2(s, P, NULL);
}

/* ---------------------------------------------------------------- evaluation */

static int same_key(const mb_ss *s, const mb_ss_point *P, double t, const double *v,
                    const double *vd)
{
    size_t b = (size_t)s->nd * sizeof(double);
    return P->ok && P->t == t && memcmp(P->v, v, b) == 0 && memcmp(P->vd, vd, b) == 0;
}

/* the state-space ODE at (t, v, v') into P (see the header comment) */
static int ss_eval(mb_ss *s, mb_ss_point *P, double t, const double *v, const double *vd)
{
    if (s->sp)
        return mb_ss_sparse_eval(s, P, t, v, vd);  /* statespace_sparse.c */
    if (same_key(s, P, t, v, vd))
        return MB_OK;
    const mb_mech *me = s->mech;
    void *c = me->ctx;
    ptrdiff_t nq = s->nq, nc = s->nc, nd = s->nd;
    double *q = P->q, *qd = P->qd;
    int rc;
    P->ok = 0;
    s->neval++;
    /* positions: v given, u by Newton from the base's u + H (v - v_b) */
    for (ptrdiff_t i = 0; i < nd; i++) q[s->indep[i]] = v[i];
    if (nc > 0) {
        double *r = s->r_c, *du = s->r_c2;
        for (ptrdiff_t k = 0; k < nc; k++) {
            double acc = s->q_b[s->dep[k]];
            if (s->base_ok)
                for (ptrdiff_t i = 0; i < nd; i++)
                    acc += s->H_b[k + nc * i] * (v[i] - s->q_b[s->indep[i]]);
            q[s->dep[k]] = acc;
        }
        double nr = INFINITY, nr_prev = INFINITY;
        int it;
        for (it = 0;; it++) {
            if ((rc = me->phi(t, q, r, c)) != 0) return rc;
            nr_prev = nr;
            nr = mb_norm_inf(nc, r);
            if (!isfinite(nr)) {
                s->nnewton_fail++;
                return MB_FAIL(s, MB_RECOVERABLE, "Phi is not finite at t = %.17g while solving for "
                            "the dependent coordinates.", t);
            }
            if ((rc = me->phi_q(t, q, P->Pq, nc, c)) != 0) return rc;
            gather_u(s, P->Pq, P->Fu);
            if (factor_u(nc, P->Fu, P->ipiv_u) != MB_OK) {
                s->nnewton_fail++;
                return MB_FAIL(s, MB_RECOVERABLE, "Phi_u is singular at t = %.17g (the partition "
                            "no longer fits the configuration).", t);
            }
            for (ptrdiff_t k = 0; k < nc; k++) du[k] = r[k];
            mb_lu_solve(nc, P->Fu, nc, P->ipiv_u, du, 1);
            for (ptrdiff_t k = 0; k < nc; k++) q[s->dep[k]] -= du[k];
            if (nr <= s->newton_tol)
                break;  /* that was the extra correction with the factors in hand */
            if (it + 1 >= s->newton_max_iter || (it >= 2 && nr > nr_prev)) {
                s->nnewton_fail++;
                return MB_FAIL(s, MB_RECOVERABLE,
                            "Newton for the dependent coordinates did not converge at t = %.17g "
                            "(|Phi| = %.3e > %.3e after %d iterations).", t, nr, s->newton_tol,
                            it + 1);
            }
        }
        P->iters = it;
        s->niter += it;
        form_H(s, P->Pq, P->Fu, P->ipiv_u, P->H);
        /* velocities: u' = H v' - Phi_u^-1 Phi_t */
        if ((rc = mb_mechd_phi_t(&s->d, t, q, r)) != 0) return rc;
        mb_lu_solve(nc, P->Fu, nc, P->ipiv_u, r, 1);
        for (ptrdiff_t k = 0; k < nc; k++) {
            double acc = -r[k];
            for (ptrdiff_t i = 0; i < nd; i++) acc += P->H[k + nc * i] * vd[i];
            qd[s->dep[k]] = acc;
        }
    }
    for (ptrdiff_t i = 0; i < nd; i++) qd[s->indep[i]] = vd[i];
    /* M, Q, gamma */
    if ((rc = me->mass(q, P->M, nq, c)) != 0) return rc;
    if ((rc = me->forces(t, q, qd, P->Q, c)) != 0) return rc;
    if (nc > 0) {
        if ((rc = mb_mechd_gamma(&s->d, t, q, qd, P->w)) != 0) return rc;
        mb_lu_solve(nc, P->Fu, nc, P->ipiv_u, P->w, 1);
    }
    /* M^ = E^T M E, Q^ = E^T (Q - M_u w) */
    right_E(s, P->M, nq, nq, P->H, s->Ed);
    left_Et(s, s->Ed, nd, P->H, P->Mh, nd);
    double *rq = s->r_q;
    memcpy(rq, P->Q, (size_t)nq * sizeof(double));
    for (ptrdiff_t k = 0; k < nc; k++) {
        double wk = P->w[k];
        const double *mcol = P->M + nq * s->dep[k];
        for (ptrdiff_t l = 0; l < nq; l++) rq[l] -= mcol[l] * wk;
    }
    left_Et(s, rq, 1, P->H, P->vdd, nd);
    memcpy(P->Mh_lu, P->Mh, (size_t)(nd * nd) * sizeof(double));
    if (mb_lu_factor(nd, P->Mh_lu, nd, P->ipiv_m) != MB_OK)
        return MB_FAIL(s, MB_ERR_LINALG, "The reduced mass matrix M^ is singular at t = %.17g.", t);
    mb_lu_solve(nd, P->Mh_lu, nd, P->ipiv_m, P->vdd, 1);
    /* q'' and lambda */
    for (ptrdiff_t i = 0; i < nd; i++) P->qdd[s->indep[i]] = P->vdd[i];
    for (ptrdiff_t k = 0; k < nc; k++) {
        double acc = P->w[k];
        for (ptrdiff_t i = 0; i < nd; i++) acc += P->H[k + nc * i] * P->vdd[i];
        P->qdd[s->dep[k]] = acc;
    }
    if (nc > 0) {
        memcpy(rq, P->Q, (size_t)nq * sizeof(double));
        mb_gemv(nq, nq, -1.0, P->M, nq, P->qdd, 1.0, rq);
        for (ptrdiff_t k = 0; k < nc; k++) P->lam[k] = rq[s->dep[k]];
        mb_lu_solve_t(nc, P->Fu, nc, P->ipiv_u, P->lam, 1);
    }
    for (ptrdiff_t i = 0; i < nd; i++)
        if (!isfinite(P->vdd[i]))
            return MB_FAIL(s, MB_ERR_NONFINITE, "v'' is not finite at t = %.17g.", t);
    memcpy(P->v, v, (size_t)nd * sizeof(double));
    memcpy(P->vd, vd, (size_t)nd * sizeof(double));
    P->t = t;
    P->ok = 1;
    return MB_OK;
}

/* M^ J1 and M^ J2 (nd x nd, ld) at the evaluated point P (eqs 31, 35) */
static int ss_mjac(mb_ss *s, mb_ss_point *P, double *MJ1, double *MJ2, ptrdiff_t ld)
{
    ptrdiff_t nq = s->nq, nc = s->nc, nd = s->nd;
    mb_mechd *d = &s->d;
    double t = P->t, *q = P->q, *qd = P->qd;
    int rc;
    /* A1 = Q_q - (M q'')_q - (Phi_q^T lambda)_q,  A3 = Q_q' */
    if ((rc = mb_mechd_forces_q(d, t, q, qd, s->A1, nq)) != 0) return rc;
    if ((rc = mb_mechd_forces_qd(d, t, q, qd, s->A3, nq)) != 0) return rc;
    if (!s->mech->mass_constant) {
        if ((rc = mb_mechd_mass_x_q(d, q, P->qdd, s->A2, nq)) != 0) return rc;
        for (ptrdiff_t l = 0; l < nq * nq; l++) s->A1[l] -= s->A2[l];
    }
    if (nc > 0) {
        if ((rc = mb_mechd_phiqT_lam_q(d, t, q, P->lam, s->A2, nq)) != 0) return rc;
        for (ptrdiff_t l = 0; l < nq * nq; l++) s->A1[l] -= s->A2[l];
        /* C1 = (Phi_q q')_q + Phi_tq;  C2 = gamma_q - (Phi_q q'')_q;  G = gamma_q' */
        if ((rc = mb_mechd_phiq_x_q(d, t, q, qd, s->C1, nc)) != 0) return rc;
        if (!s->mech->autonomous) {
            if ((rc = mb_mechd_phi_tq(d, t, q, s->C3, nc)) != 0) return rc;
            for (ptrdiff_t l = 0; l < nc * nq; l++) s->C1[l] += s->C3[l];
        }
        if ((rc = mb_mechd_gamma_q(d, t, q, qd, s->C2, nc)) != 0) return rc;
        if ((rc = mb_mechd_phiq_x_q(d, t, q, P->qdd, s->C3, nc)) != 0) return rc;
        for (ptrdiff_t l = 0; l < nc * nq; l++) s->C2[l] -= s->C3[l];
        if ((rc = mb_mechd_gamma_qd(d, t, q, qd, s->G, nc)) != 0) return rc;
        /* J = -Phi_u^-1 (C1 E) */
        right_E(s, s->C1, nc, nc, P->H, s->JJ);
        mb_lu_solve(nc, P->Fu, nc, P->ipiv_u, s->JJ, nd);
        for (ptrdiff_t l = 0; l < nc * nd; l++) s->JJ[l] = -s->JJ[l];
        /* L = Phi_u^-1 (C2 E + G_u J),  N = Phi_u^-1 (G E) */
        right_E(s, s->C2, nc, nc, P->H, s->LL);
        add_Xu_Y(s, s->G, nc, nc, s->JJ, 1.0, s->LL);
        mb_lu_solve(nc, P->Fu, nc, P->ipiv_u, s->LL, nd);
        right_E(s, s->G, nc, nc, P->H, s->NN);
        mb_lu_solve(nc, P->Fu, nc, P->ipiv_u, s->NN, nd);
    }
    if (MJ1) {  /* B = A1 E + A3_u J - M_u L;  M^ J1 = E^T B */
        right_E(s, s->A1, nq, nq, P->H, s->B);
        if (nc > 0) {
            add_Xu_Y(s, s->A3, nq, nq, s->JJ, 1.0, s->B);
            add_Xu_Y(s, P->M, nq, nq, s->LL, -1.0, s->B);
        }
        left_Et(s, s->B, nd, P->H, MJ1, ld);
    }
    if (MJ2) {  /* B = A3 E - M_u N;  M^ J2 = E^T B */
        right_E(s, s->A3, nq, nq, P->H, s->B);
        if (nc > 0)
            add_Xu_Y(s, P->M, nq, nq, s->NN, -1.0, s->B);
        left_Et(s, s->B, nd, P->H, MJ2, ld);
    }
    return MB_OK;
}

/* dv''/dt at fixed (v, v') into out (nd): 0 for an autonomous mechanism, else central
 * differences of v'' in t (evaluations in aux) */
static int ss_vdd_t(mb_ss *s, double t, const double *v, const double *vd, double *out)
{
    ptrdiff_t nd = s->nd;
    if (s->mech->autonomous) {
        memset(out, 0, (size_t)nd * sizeof(double));
        return MB_OK;
    }
    double h = cbrt(DBL_EPSILON) * fmax(1.0, fabs(t));
    int rc = ss_eval(s, &s->aux, t + h, v, vd);
    if (rc != MB_OK) return rc;
    memcpy(out, s->aux.vdd, (size_t)nd * sizeof(double));
    if ((rc = ss_eval(s, &s->aux, t - h, v, vd)) != MB_OK) return rc;
    for (ptrdiff_t i = 0; i < nd; i++) out[i] = (out[i] - s->aux.vdd[i]) / (2 * h);
    return MB_OK;
}

/* ---------------------------------------------------------------- mb_problem */

static int ss_rhs(double t, const double *y, double *ydot, void *ctx)
{
    mb_ss *s = ctx;
    ptrdiff_t nd = s->nd;
    int rc = ss_eval(s, &s->cur, t, y, y + nd);
    if (rc != MB_OK) return rc;
    memcpy(ydot, y + nd, (size_t)nd * sizeof(double));
    memcpy(ydot + nd, s->cur.vdd, (size_t)nd * sizeof(double));
    return MB_OK;
}

static int ss_acc(double t, const double *v, const double *vd, double *vdd, void *ctx)
{
    mb_ss *s = ctx;
    int rc = ss_eval(s, &s->cur, t, v, vd);
    if (rc != MB_OK) return rc;
    memcpy(vdd, s->cur.vdd, (size_t)s->nd * sizeof(double));
    return MB_OK;
}

int mb_ss_jacobians(mb_ss *s, double t, const double *y, double *J1, double *J2, ptrdiff_t ld)
{
    ptrdiff_t nd = s->nd;
    int rc = ss_eval(s, &s->cur, t, y, y + nd);
    if (rc != MB_OK) return rc;
    if (s->sp) return mb_ss_sparse_jac(s, &s->cur, J1, J2, ld);
    if ((rc = ss_mjac(s, &s->cur, J1, J2, ld)) != MB_OK) return rc;
    /* J = M^-1 (M^ J): the LU of M^ from the evaluation */
    for (int k = 0; k < 2; k++) {
        double *X = k ? J2 : J1;
        if (!X) continue;
        for (ptrdiff_t j = 0; j < nd; j++)
            mb_lu_solve(nd, s->cur.Mh_lu, nd, s->cur.ipiv_m, X + ld * j, 1);
    }
    return MB_OK;
}

static int ss_jac(double t, const double *y, double *J, ptrdiff_t ldJ, void *ctx)
{
    mb_ss *s = ctx;
    ptrdiff_t nd = s->nd;
    for (ptrdiff_t j = 0; j < 2 * nd; j++) {
        double *col = J + ldJ * j;
        memset(col, 0, (size_t)nd * sizeof(double));
        if (j >= nd) col[j - nd] = 1.0;
    }
    return mb_ss_jacobians(s, t, y, J + nd, J + nd + ldJ * nd, ldJ);
}

static int ss_dfdt(double t, const double *y, double *ft, void *ctx)
{
    mb_ss *s = ctx;
    ptrdiff_t nd = s->nd;
    memset(ft, 0, (size_t)nd * sizeof(double));
    return ss_vdd_t(s, t, y, y + nd, ft + nd);
}

static int ss_acc_mjac(double t, const double *v, const double *vd, double *M, double *MJ1,
                       double *MJ2, double *Mat, void *ctx)
{
    mb_ss *s = ctx;
    ptrdiff_t nd = s->nd;
    int rc = ss_eval(s, &s->cur, t, v, vd);
    if (rc != MB_OK) return rc;
    if (s->sp) {  /* statespace_sparse.c; dv''/dt first (cur is untouched by it) */
        if (Mat && (rc = ss_vdd_t(s, t, v, vd, s->vt)) != MB_OK) return rc;
        return mb_ss_sparse_acc_mjac(s, M, MJ1, MJ2, Mat ? s->vt : NULL, Mat);
    }
    if ((MJ1 || MJ2) && (rc = ss_mjac(s, &s->cur, MJ1, MJ2, nd)) != MB_OK) return rc;
    if (M) memcpy(M, s->cur.Mh, (size_t)(nd * nd) * sizeof(double));
    if (Mat) {
        /* cur is untouched (the differences in t run in aux) */
        if ((rc = ss_vdd_t(s, t, v, vd, s->vt)) != MB_OK) return rc;
        mb_gemv(nd, nd, 1.0, s->cur.Mh, nd, s->vt, 0.0, Mat);
    }
    return MB_OK;
}

int mb_ss_full(mb_ss *s, double t, const double *y, double *q, double *qd, double *qdd,
               double *lam)
{
    ptrdiff_t nq = s->nq, nd = s->nd;
    int rc = ss_eval(s, &s->aux, t, y, y + nd);
    if (rc != MB_OK) return rc;
    if (q) memcpy(q, s->aux.q, (size_t)nq * sizeof(double));
    if (qd) memcpy(qd, s->aux.qd, (size_t)nq * sizeof(double));
    if (qdd) memcpy(qdd, s->aux.qdd, (size_t)nq * sizeof(double));
    if (lam) memcpy(lam, s->aux.lam, (size_t)s->nc * sizeof(double));
    return MB_OK;
}

int mb_ss_cond(mb_ss *s, double t, const double *y, double *cond)
{
    int rc = ss_eval(s, &s->aux, t, y, y + s->nd);
    if (rc != MB_OK) return rc;
    *cond = cond_u(s, &s->aux);
    return MB_OK;
}

static int ss_step_bound(double t, const double *y, const double *f, double *h_max, void *ctx)
{
    (void)f;
    mb_ss *s = ctx;
    const mb_mech *me = s->mech;
    int rc = ss_eval(s, &s->aux, t, y, y + s->nd);
    if (rc != MB_OK) return rc;
    return me->step_bound(t, s->aux.q, s->aux.qd, s->aux.qdd, h_max, me->ctx);
}

/* ---------------------------------------------------------------- log */

/* append an entry; P (may be NULL): the evaluation at it, whose q'' and lambda are kept */
static int log_push(mb_ss *s, double t, int part, const double *q, const double *qd,
                    const mb_ss_point *P)
{
    ptrdiff_t nq = s->nq, na = s->nq + s->nc;
    if (s->nlog == s->cap_log) {
        ptrdiff_t cap = s->cap_log ? 2 * s->cap_log : 64;
        double *lt = realloc(s->log_t, (size_t)cap * sizeof(double));
        if (lt) s->log_t = lt;
        double *ly = realloc(s->log_y, (size_t)(cap * 2 * nq) * sizeof(double));
        if (ly) s->log_y = ly;
        int *lp = realloc(s->log_part, (size_t)cap * sizeof(int));
        if (lp) s->log_part = lp;
        double *la = realloc(s->log_a, (size_t)(cap * na) * sizeof(double));
        if (la) s->log_a = la;
        if (!lt || !ly || !lp || !la)
            return MB_FAIL(s, MB_ERR_MEM, "The state-space log is out of memory.");
        s->cap_log = cap;
    }
    s->log_t[s->nlog] = t;
    s->log_part[s->nlog] = part;
    memcpy(s->log_y + s->nlog * 2 * nq, q, (size_t)nq * sizeof(double));
    memcpy(s->log_y + s->nlog * 2 * nq + nq, qd, (size_t)nq * sizeof(double));
    double *a = s->log_a + s->nlog * na;
    if (P) {
        memcpy(a, P->qdd, (size_t)nq * sizeof(double));
        memcpy(a + nq, P->lam, (size_t)s->nc * sizeof(double));
    } else {
        a[0] = NAN;  /* not known: evaluate when asked */
    }
    s->nlog++;
    return MB_OK;
}

/* append the current indep as a new partition adopted at t; its index in *id */
static int part_push(mb_ss *s, double t, int *id)
{
    ptrdiff_t nd = s->nd;
    if (s->npart == s->cap_part) {
        ptrdiff_t cap = s->cap_part ? 2 * s->cap_part : 8;
        int *pp = realloc(s->parts, (size_t)(cap * nd) * sizeof(int));
        if (pp) s->parts = pp;
        double *pt = realloc(s->part_t, (size_t)cap * sizeof(double));
        if (pt) s->part_t = pt;
        if (!pp || !pt)
            return MB_FAIL(s, MB_ERR_MEM, "The state-space partition table is out of memory.");
        s->cap_part = cap;
    }
    memcpy(s->parts + s->npart * nd, s->indep, (size_t)nd * sizeof(int));
    s->part_t[s->npart] = t;
    *id = (int)s->npart++;
    return MB_OK;
}

int mb_ss_use_partition(mb_ss *s, int id)
{
    ptrdiff_t nq = s->nq, nd = s->nd;
    if (id < 0 || id >= s->npart)
        return MB_FAIL(s, MB_ERR_ILL_INPUT, "Partition %d is not in the table.", id);
    if (id == s->part_id && s->npart > 0 &&
        memcmp(s->indep, s->parts + (ptrdiff_t)id * nd, (size_t)nd * sizeof(int)) == 0)
        return MB_OK;
    for (ptrdiff_t j = 0; j < nq; j++) s->mark[j] = 0;
    for (ptrdiff_t i = 0; i < nd; i++) {
        int c = s->parts[(ptrdiff_t)id * nd + i];
        if (c < 0 || c >= nq || s->mark[c])
            return MB_FAIL(s, MB_ERR_ILL_INPUT, "Partition %d is not a set of coordinates.", id);
        s->mark[c] = 1;
        s->indep[i] = c;
    }
    ptrdiff_t nu = 0;
    for (ptrdiff_t j = 0; j < nq; j++)
        if (!s->mark[j]) s->dep[nu++] = (int)j;
    s->part_id = id;
    s->base_ok = 0;
    invalidate(s);
    return s->sp ? mb_ss_sparse_use(s->sp, s->indep, s->dep) : MB_OK;
}

int mb_ss_set_base(mb_ss *s, double t, const double *q, const double *qd)
{
    const mb_mech *me = s->mech;
    ptrdiff_t nq = s->nq, nc = s->nc;
    memcpy(s->q_b, q, (size_t)nq * sizeof(double));
    memcpy(s->qd_b, qd, (size_t)nq * sizeof(double));
    s->t_b = t;
    s->base_ok = 0;
    if (nc > 0 && s->sp) {
        int rc = mb_ss_sparse_factor(s->sp, 2, t, q);
        if (rc == MB_ERR_LINALG)
            return MB_FAIL(s, MB_ERR_LINALG, "Phi_u is singular at t = %.17g in the partition of "
                        "that point.", t);
        if (rc != MB_OK) return rc;
    } else if (nc > 0) {
        int rc = me->phi_q(t, q, s->GJ, nc, me->ctx);
        if (rc != 0) return rc;
        gather_u(s, s->GJ, s->Fcond);
        if (factor_u(nc, s->Fcond, s->ipiv_c) != MB_OK)
            return MB_FAIL(s, MB_ERR_LINALG, "Phi_u is singular at t = %.17g in the partition of "
                        "that point.", t);
        form_H(s, s->GJ, s->Fcond, s->ipiv_c, s->H_b);
    }
    s->base_ok = 1;
    return MB_OK;
}

static void write_atol(mb_ss *s)
{
    if (!s->atol_q) return;
    ptrdiff_t nq = s->nq, nd = s->nd;
    for (ptrdiff_t i = 0; i < nd; i++) {
        s->atol_v[i] = s->atol_q[s->indep[i]];
        s->atol_v[nd + i] = s->atol_q[nq + s->indep[i]];
    }
}

/* base := the evaluated point P (it is consistent), H from P */
static int base_from(mb_ss *s, const mb_ss_point *P)
{
    ptrdiff_t nq = s->nq;
    memcpy(s->q_b, P->q, (size_t)nq * sizeof(double));
    memcpy(s->qd_b, P->qd, (size_t)nq * sizeof(double));
    s->t_b = P->t;
    s->base_ok = 0;
    if (s->sp && s->nc > 0) {  /* the base's Phi_u factors: those of P's slot */
        int rc = mb_ss_sparse_copy(s->sp, P == &s->aux ? 1 : 0, 2);
        if (rc != MB_OK) return MB_FAIL(s, rc, "Phi_u is singular at t = %.17g.", P->t);
    } else {
        memcpy(s->H_b, P->H, (size_t)(s->nc * s->nd) * sizeof(double));
    }
    s->base_ok = 1;
    return MB_OK;
}

int mb_ss_start(mb_ss *s, double t0, const double *q0, const double *qd0, double *y0)
{
    ptrdiff_t nd = s->nd;
    int rc, id;
    s->nlog = 0;
    s->npart = 0;
    s->nrepartition = s->nchange = s->neval = s->niter = s->nnewton_fail = 0;
    invalidate(s);
    if ((rc = mb_ss_partition(s, t0, q0, NULL)) != MB_OK) return rc;
    if ((rc = part_push(s, t0, &id)) != MB_OK) return rc;
    s->part_id = id;
    if ((rc = mb_ss_set_base(s, t0, q0, qd0)) != MB_OK) return rc;
    for (ptrdiff_t i = 0; i < nd; i++) {
        y0[i] = q0[s->indep[i]];
        y0[nd + i] = qd0[s->indep[i]];
    }
    /* the consistent full state of y0 (u, u' recomputed) */
    if ((rc = ss_eval(s, &s->cur, t0, y0, y0 + nd)) != MB_OK) return rc;
    if ((rc = base_from(s, &s->cur)) != MB_OK) return rc;
    s->cond_ref = cond_u2(s, &s->cur, &s->rel_ref);
    s->cond_max = s->cond_ref;
    write_atol(s);
    return log_push(s, t0, id, s->cur.q, s->cur.qd, &s->cur);
}

/* the check hook (problem.h): the dependent coordinates at a step's end; a Newton
 * failure there rejects the step (recoverable).  The evaluation stays in the cache for
 * the projection that follows. */
static int ss_check(double t, const double *y, void *ctx)
{
    mb_ss *s = ctx;
    int rc = ss_eval(s, &s->cur, t, y, y + s->nd);
    return rc == MB_RECOVERABLE ? MB_RECOVERABLE : rc;
}

/* the project hook: Algorithm 1 steps 13-14 (see the header) */
static int ss_project(double t, double *y, void *ctx)
{
    mb_ss *s = ctx;
    ptrdiff_t nd = s->nd;
    int rc = ss_eval(s, &s->cur, t, y, y + nd);
    if (rc != MB_OK) return rc == MB_RECOVERABLE ? MB_ERR_CONV : rc;
    if ((rc = base_from(s, &s->cur)) != MB_OK) return rc;
    if ((rc = log_push(s, t, s->part_id, s->cur.q, s->cur.qd, &s->cur)) != MB_OK) return rc;
    if (s->nc == 0) return MB_OK;
    double rel, cond = cond_u2(s, &s->cur, &rel);
    s->cond_max = fmax(s->cond_max, cond);
    if (cond <= s->cond_factor * s->cond_ref && rel <= s->cond_factor * s->rel_ref)
        return MB_OK;
    /* repartition at the current configuration */
    s->nrepartition++;
    int *prev = s->prev_indep;
    memcpy(prev, s->indep, (size_t)nd * sizeof(int));
    const double *q = s->cur.q, *qd = s->cur.qd;
    if ((rc = mb_ss_partition(s, t, q, NULL)) != MB_OK) return rc;
    int changed = memcmp(prev, s->indep, (size_t)nd * sizeof(int)) != 0;
    if (!changed) {
        s->cond_ref = cond;
        s->rel_ref = rel;
        return MB_OK;
    }
    int id;
    if ((rc = part_push(s, t, &id)) != MB_OK) return rc;
    s->part_id = id;
    s->nchange++;
    /* y in the new coordinates (the same configuration); base and cache anew */
    memcpy(s->q_b, q, (size_t)s->nq * sizeof(double));
    memcpy(s->qd_b, qd, (size_t)s->nq * sizeof(double));
    for (ptrdiff_t i = 0; i < nd; i++) {
        y[i] = s->q_b[s->indep[i]];
        y[nd + i] = s->qd_b[s->indep[i]];
    }
    if ((rc = mb_ss_set_base(s, t, s->q_b, s->qd_b)) != MB_OK) return rc;
    invalidate(s);
    if ((rc = ss_eval(s, &s->cur, t, y, y + nd)) != MB_OK)
        return rc == MB_RECOVERABLE ? MB_ERR_CONV : rc;
    if ((rc = base_from(s, &s->cur)) != MB_OK) return rc;
    s->cond_ref = cond_u2(s, &s->cur, &s->rel_ref);
    write_atol(s);
    return MB_NEW_COORDINATES;
}

void mb_ss_problem(mb_ss *s, mb_problem *p)
{
    memset(p, 0, sizeof *p);
    p->n = 2 * s->nd;
    p->nq = s->nd;
    p->rhs = ss_rhs;
    p->jac = ss_jac;
    p->acc = ss_acc;
    p->dfdt = ss_dfdt;
    p->acc_mjac = ss_acc_mjac;
    p->project = ss_project;
    p->check = ss_check;
    if (s->mech->step_bound)
        p->step_bound = ss_step_bound;
    p->ctx = s;
}

/* ---------------------------------------------------------------- after the run */

int mb_ss_load_log(mb_ss *s, ptrdiff_t nlog, const double *log_t, const int *log_part,
                   const double *log_y, ptrdiff_t npart, const int *parts)
{
    ptrdiff_t nq = s->nq, nd = s->nd;
    s->nlog = s->npart = 0;
    for (ptrdiff_t k = 0; k < npart; k++) {
        int id;
        memcpy(s->indep, parts + k * nd, (size_t)nd * sizeof(int));
        int rc = part_push(s, 0.0, &id);
        if (rc != MB_OK) return rc;
    }
    for (ptrdiff_t k = 0; k < nlog; k++) {
        if (log_part[k] < 0 || log_part[k] >= npart)
            return MB_FAIL(s, MB_ERR_ILL_INPUT, "log entry %td names partition %d of %td.", k,
                        log_part[k], npart);
        if (k > 0 && !(log_t[k] >= log_t[k - 1]))
            return MB_FAIL(s, MB_ERR_ILL_INPUT, "log times must not decrease (entry %td).", k);
        int rc = log_push(s, log_t[k], log_part[k], log_y + k * 2 * nq, log_y + k * 2 * nq + nq,
                          NULL);
        if (rc != MB_OK) return rc;
    }
    s->part_id = -1;
    return npart > 0 ? mb_ss_use_partition(s, nlog > 0 ? log_part[nlog - 1] : 0) : MB_OK;
}

int mb_ss_recover(mb_ss *s, double t, const double *y, double *q, double *qd, double *qdd,
                  double *lam)
{
    ptrdiff_t nq = s->nq, nc = s->nc, nd = s->nd;
    if (s->nlog == 0)
        return mb_ss_full(s, t, y, q, qd, qdd, lam);
    /* k: the last entry with log_t[k] <= t (binary search) */
    ptrdiff_t lo = 0, hi = s->nlog - 1, k = -1;
    while (lo <= hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (s->log_t[mid] <= t) { k = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    int exact = k >= 0 && s->log_t[k] == t;
    ptrdiff_t base = k < 0 ? 0 : k;
    const double *eq = s->log_y + base * 2 * nq, *eqd = eq + nq;
    if (exact && !isnan(s->log_a[base * (nq + nc)])) {  /* all of it is in the log */
        const double *ea = s->log_a + base * (nq + nc);
        if (q) memcpy(q, eq, (size_t)nq * sizeof(double));
        if (qd) memcpy(qd, eqd, (size_t)nq * sizeof(double));
        if (qdd) memcpy(qdd, ea, (size_t)nq * sizeof(double));
        if (lam) memcpy(lam, ea + nq, (size_t)nc * sizeof(double));
        return MB_OK;
    }
    /* the partition of the step containing t (at an entry: that entry's, any would do) */
    int part = exact || k < 0 || k + 1 >= s->nlog ? s->log_part[base] : s->log_part[k + 1];
    int rc;
    if ((rc = mb_ss_use_partition(s, part)) != MB_OK) return rc;
    if (!s->base_ok || s->t_b != s->log_t[base] || memcmp(s->q_b, eq, (size_t)nq * sizeof(double)))
        if ((rc = mb_ss_set_base(s, s->log_t[base], eq, eqd)) != MB_OK) return rc;
    if (exact) {  /* the logged state, in this partition */
        double *yy = s->yv;
        for (ptrdiff_t i = 0; i < nd; i++) {
            yy[i] = eq[s->indep[i]];
            yy[nd + i] = eqd[s->indep[i]];
        }
        rc = ss_eval(s, &s->aux, t, yy, yy + nd);
    } else {
        rc = ss_eval(s, &s->aux, t, y, y + nd);
    }
    if (rc != MB_OK) return rc;
    if (q) memcpy(q, exact ? eq : s->aux.q, (size_t)nq * sizeof(double));
    if (qd) memcpy(qd, exact ? eqd : s->aux.qd, (size_t)nq * sizeof(double));
    if (qdd) memcpy(qdd, s->aux.qdd, (size_t)nq * sizeof(double));
    if (lam) memcpy(lam, s->aux.lam, (size_t)nc * sizeof(double));
    return MB_OK;
}
