/* The sparse linear algebra of the state-space formulation (statespace_sparse.h).
 *
 * Patterns, built once at init from the kernels' lists (mech.h mb_mech_sparse):
 *   Phi_q in compressed columns (nc x nq: Pp, Pi, pmap[k] the position of pattern entry
 *   k), so that Phi_u = the columns dep and Phi_v = the columns indep are slices of it;
 *   Phi_q^T in compressed columns (nq x nc: Tp, Ti, tmap), the matrix the partition's
 *   LU factors (UMFPACK symbolic analysis once);
 *   M's entries (its constant diagonal, or the pattern of the q-dependent kernels).
 * Per partition: Phi_u's compressed columns (Up, Ui; upos[p] the position in Phi_q's
 * values of Phi_u's entry p) and KLU's symbolic analysis of it.
 * Per slot: Phi_q's values (npz), Phi_u's (nuz), the KLU numeric object and the pivot
 * ratio of its last full factorization.
 * Work arrays: one formula each (alloc_all). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/klu.h>
#include <suitesparse/umfpack.h>
#include "index1.h"
#include "index1_sparse.h"
#include "mbs_common.h"
#include "statespace_sparse.h"
#include "status.h"

struct mb_ss_sparse {
    const mb_mech *me;
    ptrdiff_t nq, nc, nd, npq, nm, nC;
    int mconst;
    /* Phi_q's pattern (npq entries) and its compressed columns (npz nonzeros) */
    int *pr, *pc, *Pp, *Pi, *pmap, *Tp, *Ti, *tmap;
    ptrdiff_t npz;
    double *pq, *Tx;                 /* kernel values (npq); Phi_q^T's values (npz) */
    void *usym;                      /* UMFPACK symbolic of Phi_q^T */
    double uctl[UMFPACK_CONTROL], uinfo[UMFPACK_INFO];
    int *uP, *uQ;                    /* its row (nq) and column (nc) permutations */
    double *uD;                      /* U's diagonal (nc) */
    /* M: rows, cols, values (nm; constant diagonal: read once) */
    int *mr, *mc;
    double *mv;
    /* the force Jacobian's pattern (nC entries of C, rows < nq the force rows) */
    int *cr, *cc;
    double *cq, *cv, *zx, *zl;
    /* the current partition */
    const int *indep, *dep;
    int *Up, *Ui, *upos;
    ptrdiff_t nuz;
    klu_common com;
    klu_symbolic *sym;
    /* slots */
    double *vals[MB_SS_SLOTS], *uvals[MB_SS_SLOTS], rc_ref[MB_SS_SLOTS];
    klu_numeric *num[MB_SS_SLOTS];
    /* the saddle-point system */
    mb_index1 f;
    int f_ok;
    /* the partition analyzed (dep, nc) and scratch of the evaluation */
    int *dep_an, analyzed;
    double *dv, *e, *y, *c1, *c2, *vp, *vdp, *col, *vddp;
};

const char *mb_ss_sparse_unavailable(const mb_mech *me)
{
    if (me->nc == 0)
        return "the mechanism has no constraints (nothing to partition)";
    const char *why = mb_index1_sparse_unavailable(me);
    if (why) return why;
    if (!me->sparse->phi_q || !me->sparse->jac)
        return "the sparse kernels lack phi_q or jac";
    return NULL;
}

void mb_ss_sparse_free(mb_ss_sparse *sp)
{
    if (!sp) return;
    for (int k = 0; k < MB_SS_SLOTS; k++) {
        if (sp->num[k]) klu_free_numeric(&sp->num[k], &sp->com);
        free(sp->vals[k]);
        free(sp->uvals[k]);
    }
    if (sp->sym) klu_free_symbolic(&sp->sym, &sp->com);
    if (sp->usym) umfpack_di_free_symbolic(&sp->usym);
    if (sp->f_ok) mb_index1_free(&sp->f);
    void *ptrs[] = {sp->pr, sp->pc, sp->Pp, sp->Pi, sp->pmap, sp->Tp, sp->Ti, sp->tmap, sp->pq,
                    sp->Tx, sp->uP, sp->uQ, sp->uD, sp->mr, sp->mc, sp->mv, sp->cr, sp->cc,
                    sp->cq, sp->cv, sp->zx, sp->zl, sp->Up, sp->Ui, sp->upos, sp->dep_an,
                    sp->dv, sp->e, sp->y, sp->c1, sp->c2, sp->vp, sp->vdp, sp->col, sp->vddp};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++) free(ptrs[k]);
    free(sp);
}

#define ALLOC(p, n) (((p) = calloc((size_t)(n) + 1, sizeof *(p))) == NULL)

/* every array of a size known at init; 0 or -1 out of memory */
static int alloc_all(mb_ss_sparse *sp)
{
    ptrdiff_t nq = sp->nq, nc = sp->nc, nd = sp->nd, npq = sp->npq, nm = sp->nm, nC = sp->nC;
    for (int k = 0; k < MB_SS_SLOTS; k++)
        if (ALLOC(sp->vals[k], npq) || ALLOC(sp->uvals[k], npq)) return -1;
    if (ALLOC(sp->dep_an, nc) || ALLOC(sp->dv, nd) || ALLOC(sp->e, nq) || ALLOC(sp->y, nq) ||
        ALLOC(sp->c1, nc) || ALLOC(sp->c2, nc) || ALLOC(sp->vp, nd) || ALLOC(sp->vdp, nd) ||
        ALLOC(sp->col, nd) || ALLOC(sp->vddp, nd))
        return -1;
    return ALLOC(sp->pr, npq) || ALLOC(sp->pc, npq) || ALLOC(sp->Pp, nq + 1) ||
           ALLOC(sp->Pi, npq) || ALLOC(sp->pmap, npq) || ALLOC(sp->Tp, nc + 1) ||
           ALLOC(sp->Ti, npq) || ALLOC(sp->tmap, npq) || ALLOC(sp->pq, npq) ||
           ALLOC(sp->Tx, npq) || ALLOC(sp->uP, nq) || ALLOC(sp->uQ, nc) || ALLOC(sp->uD, nc) ||
           ALLOC(sp->mr, nm) || ALLOC(sp->mc, nm) || ALLOC(sp->mv, nm) || ALLOC(sp->cr, nC) ||
           ALLOC(sp->cc, nC) || ALLOC(sp->cq, nC) || ALLOC(sp->cv, nC) || ALLOC(sp->zx, nq) ||
           ALLOC(sp->zl, nc) || ALLOC(sp->Up, nc + 1) || ALLOC(sp->Ui, npq) ||
           ALLOC(sp->upos, npq) ? -1 : 0;
}

/* the patterns: Phi_q's columns, Phi_q^T's columns (and UMFPACK's analysis), M's */
static int build_patterns(mb_ss_sparse *sp, char *msg, size_t len)
{
    const mb_mech *me = sp->me;
    const mb_mech_sparse *K = me->sparse;
    ptrdiff_t nq = sp->nq, nc = sp->nc, npq = sp->npq;
    int rc = K->pattern(sp->pr, sp->pc, sp->cr, sp->cc, me->ctx);
    if (rc == MB_OK && sp->mconst) {
        for (ptrdiff_t i = 0; i < nq; i++) sp->mr[i] = sp->mc[i] = (int)i;
        rc = K->mass_diag(sp->mv, me->ctx);
    } else if (rc == MB_OK) {
        ptrdiff_t nm = sp->nm;
        rc = K->mass_pattern(&nm, sp->mr, sp->mc, me->ctx);
        if (rc == MB_OK && nm != sp->nm) rc = MB_ERR_ILL_INPUT;
    }
    if (rc != MB_OK) {
        snprintf(msg, len, "state space (sparse): the mechanism's sparse kernels failed "
                 "(status %d).", rc);
        return rc;
    }
    for (ptrdiff_t k = 0; k < npq; k++)
        if (sp->pr[k] < 0 || sp->pr[k] >= nc || sp->pc[k] < 0 || sp->pc[k] >= nq) {
            snprintf(msg, len, "state space (sparse): Phi_q pattern out of range.");
            return MB_ERR_ILL_INPUT;
        }
    sp->npz = mb_csc_build(nc, nq, npq, sp->pr, sp->pc, sp->Pp, sp->Pi, sp->pmap);
    ptrdiff_t ntz = sp->npz < 0 ? -1 :
        mb_csc_build(nq, nc, npq, sp->pc, sp->pr, sp->Tp, sp->Ti, sp->tmap);
    if (sp->npz < 0 || ntz < 0) {
        snprintf(msg, len, "state space (sparse): out of memory.");
        return MB_ERR_MEM;
    }
    umfpack_di_defaults(sp->uctl);
    sp->uctl[UMFPACK_PIVOT_TOLERANCE] = 1.0;  /* partial pivoting: the largest |w_j a_jk| */
    sp->uctl[UMFPACK_SCALE] = UMFPACK_SCALE_NONE;
    sp->uctl[UMFPACK_STRATEGY] = UMFPACK_STRATEGY_UNSYMMETRIC;
    int st = umfpack_di_symbolic((int)nq, (int)nc, sp->Tp, sp->Ti, NULL, &sp->usym, sp->uctl,
                                 sp->uinfo);
    if (st != UMFPACK_OK) {
        snprintf(msg, len, "state space (sparse): UMFPACK's analysis of Phi_q^T failed "
                 "(status %d).", st);
        return st == UMFPACK_ERROR_out_of_memory ? MB_ERR_MEM : MB_ERR_LINALG;
    }
    return MB_OK;
}

int mb_ss_sparse_init(mb_ss_sparse **out, const mb_mech *me, char *msg, size_t len)
{
    *out = NULL;
    const char *why = mb_ss_sparse_unavailable(me);
    if (why) {
        snprintf(msg, len, "state space: sparse mode unavailable: %s.", why);
        return MB_ERR_NOT_SUPPORTED;
    }
    mb_ss_sparse *sp = calloc(1, sizeof *sp);
    if (!sp) {
        snprintf(msg, len, "state space (sparse): out of memory.");
        return MB_ERR_MEM;
    }
    const mb_mech_sparse *K = me->sparse;
    sp->me = me;
    sp->nq = me->nq;
    sp->nc = me->nc;
    sp->nd = me->nq - me->nc;
    sp->mconst = K->mass_diag != NULL;
    sp->nm = sp->nq;
    int rc = K->sizes(&sp->npq, &sp->nC, me->ctx);
    if (rc == MB_OK && !sp->mconst) rc = K->mass_pattern(&sp->nm, NULL, NULL, me->ctx);
    if (rc != MB_OK) {
        snprintf(msg, len, "state space (sparse): the sparse kernels refuse the mechanism "
                 "(status %d).", rc);
    } else if (sp->npq > 0x3fffffff || sp->nC > 0x3fffffff || sp->nm > 0x3fffffff ||
               sp->nq > 0x3fffffff) {
        rc = MB_ERR_ILL_INPUT;
        snprintf(msg, len, "state space (sparse): too large.");
    } else if (alloc_all(sp)) {
        rc = MB_ERR_MEM;
        snprintf(msg, len, "state space (sparse): out of memory.");
    } else {
        rc = build_patterns(sp, msg, len);
    }
    if (rc == MB_OK) {
        klu_defaults(&sp->com);
        rc = mb_index1_init_ex(&sp->f, me, 0.0, 0.0, 1);
        if (rc != MB_OK)
            snprintf(msg, len, "%s", sp->f.msg);
        sp->f_ok = rc == MB_OK;
    }
    if (rc != MB_OK) {
        mb_ss_sparse_free(sp);
        return rc;
    }
    *out = sp;
    return MB_OK;
}

/* ---- partition ---- */

/* the constraint rows without an acceptable pivot into msg (and bad_rows) */
static int rank_failure(mb_ss_sparse *sp, double t, ptrdiff_t rank, const char *bad,
                        unsigned long long *bad_rows, char *msg, size_t len)
{
    char list[160];
    size_t n = 0;
    list[0] = '\0';
    for (ptrdiff_t k = 0; k < sp->nc && n < sizeof list - 16; k++)
        if (bad[k]) {
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%td", n ? ", " : "", k);
            if (bad_rows && k < 64) *bad_rows |= 1ull << k;
        }
    snprintf(msg, len, "No nonsingular Phi_u exists at t = %.17g: Phi_q has rank %td < nc = "
             "%td (redundant constraints or a singular configuration); dependent rows: %s.",
             t, rank, sp->nc, list);
    return MB_ERR_LINALG;
}

int mb_ss_sparse_partition(mb_ss_sparse *sp, double t, const double *q, const double *w,
                           double rank_tol, int *indep, int *dep, unsigned long long *bad_rows,
                           char *msg, size_t len)
{
    const mb_mech *me = sp->me;
    ptrdiff_t nq = sp->nq, nc = sp->nc, npq = sp->npq;
    if (bad_rows) *bad_rows = 0;
    int rc = me->sparse->phi_q(t, q, sp->pq, me->ctx);
    if (rc != 0) return rc;
    memset(sp->Tx, 0, (size_t)sp->npz * sizeof(double));
    for (ptrdiff_t k = 0; k < npq; k++) {
        if (!isfinite(sp->pq[k])) {
            snprintf(msg, len, "Phi_q is not finite at t = %.17g.", t);
            return MB_ERR_NONFINITE;
        }
        sp->Tx[sp->tmap[k]] += sp->pq[k] * (w ? w[sp->pc[k]] : 1.0);
    }
    double scale = 0;
    for (ptrdiff_t p = 0; p < sp->npz; p++) scale = fmax(scale, fabs(sp->Tx[p]));
    void *num = NULL;
    int st = umfpack_di_numeric(sp->Tp, sp->Ti, sp->Tx, sp->usym, &num, sp->uctl, sp->uinfo);
    if (st == UMFPACK_OK || st == UMFPACK_WARNING_singular_matrix)
        st = umfpack_di_get_numeric(NULL, NULL, NULL, NULL, NULL, NULL, sp->uP, sp->uQ, sp->uD,
                                    NULL, NULL, num);
    if (num) umfpack_di_free_numeric(&num);
    if (st != UMFPACK_OK) {
        snprintf(msg, len, "state space (sparse): UMFPACK's LU of Phi_q^T failed (status %d).",
                 st);
        return st == UMFPACK_ERROR_out_of_memory ? MB_ERR_MEM : MB_ERR_LINALG;
    }
    /* pivot k: coordinate uP[k] for constraint uQ[k] */
    char *bad = calloc((size_t)nc + 1, 1), *isdep = calloc((size_t)nq + 1, 1);
    if (!bad || !isdep) {
        free(bad); free(isdep);
        snprintf(msg, len, "state space (sparse): out of memory.");
        return MB_ERR_MEM;
    }
    ptrdiff_t rank = 0;
    for (ptrdiff_t k = 0; k < nc; k++) {
        if (fabs(sp->uD[k]) > rank_tol * scale && scale > 0) rank++;
        else bad[sp->uQ[k]] = 1;
        isdep[sp->uP[k]] = 1;
    }
    if (rank < nc) rc = rank_failure(sp, t, rank, bad, bad_rows, msg, len);
    ptrdiff_t ni = 0, nu = 0;
    for (ptrdiff_t j = 0; rc == MB_OK && j < nq; j++) {
        if (isdep[j]) dep[nu++] = (int)j;
        else indep[ni++] = (int)j;
    }
    free(bad); free(isdep);
    return rc;
}

int mb_ss_sparse_use(mb_ss_sparse *sp, const int *indep, const int *dep)
{
    ptrdiff_t nc = sp->nc, n = 0;
    sp->indep = indep;
    sp->dep = dep;
    if (sp->analyzed && sp->sym && memcmp(sp->dep_an, dep, (size_t)nc * sizeof(int)) == 0)
        return MB_OK;  /* the same partition: its analysis and factors stay */
    sp->analyzed = 0;
    for (int k = 0; k < MB_SS_SLOTS; k++)
        if (sp->num[k]) klu_free_numeric(&sp->num[k], &sp->com);
    if (sp->sym) klu_free_symbolic(&sp->sym, &sp->com);
    sp->Up[0] = 0;
    for (ptrdiff_t k = 0; k < nc; k++) {
        for (int p = sp->Pp[dep[k]]; p < sp->Pp[dep[k] + 1]; p++, n++) {
            sp->Ui[n] = sp->Pi[p];
            sp->upos[n] = p;
        }
        sp->Up[k + 1] = (int)n;
    }
    sp->nuz = n;
    sp->sym = klu_analyze((int)nc, sp->Up, sp->Ui, &sp->com);
    if (!sp->sym)
        return sp->com.status == KLU_OUT_OF_MEMORY ? MB_ERR_MEM : MB_ERR_LINALG;
    memcpy(sp->dep_an, dep, (size_t)nc * sizeof(int));
    sp->analyzed = 1;
    return MB_OK;
}

/* the slot's Phi_u values from its Phi_q values, factored (refactor while the pivot
 * ratio stays within 1e-3 of the last full factorization) */
static int factor_slot(mb_ss_sparse *sp, int slot)
{
    if (!sp->sym) return MB_ERR_ILL_INPUT;
    double *x = sp->uvals[slot], tol = 64.0 * (double)sp->nc * DBL_EPSILON;
    for (ptrdiff_t p = 0; p < sp->nuz; p++) x[p] = sp->vals[slot][sp->upos[p]];
    klu_numeric **num = &sp->num[slot];
    if (*num) {
        if (klu_refactor(sp->Up, sp->Ui, x, sp->sym, *num, &sp->com) &&
            klu_rcond(sp->sym, *num, &sp->com) && sp->com.rcond >= 1e-3 * sp->rc_ref[slot] &&
            sp->com.rcond > tol)
            return MB_OK;
        klu_free_numeric(num, &sp->com);
    }
    *num = klu_factor(sp->Up, sp->Ui, x, sp->sym, &sp->com);
    if (!*num)
        return sp->com.status == KLU_OUT_OF_MEMORY ? MB_ERR_MEM : MB_ERR_LINALG;
    if (!klu_rcond(sp->sym, *num, &sp->com) || !(sp->com.rcond > tol)) {
        klu_free_numeric(num, &sp->com);
        return MB_ERR_LINALG;
    }
    sp->rc_ref[slot] = sp->com.rcond;
    return MB_OK;
}

int mb_ss_sparse_factor(mb_ss_sparse *sp, int slot, double t, const double *q)
{
    const mb_mech *me = sp->me;
    int rc = me->sparse->phi_q(t, q, sp->pq, me->ctx);
    if (rc != 0) return rc;
    double *v = sp->vals[slot];
    memset(v, 0, (size_t)sp->npz * sizeof(double));
    for (ptrdiff_t k = 0; k < sp->npq; k++) v[sp->pmap[k]] += sp->pq[k];
    return factor_slot(sp, slot);
}

int mb_ss_sparse_copy(mb_ss_sparse *sp, int from, int to)
{
    memcpy(sp->vals[to], sp->vals[from], (size_t)sp->npz * sizeof(double));
    return factor_slot(sp, to);
}

int mb_ss_sparse_solve(mb_ss_sparse *sp, int slot, double *b, int trans)
{
    if (sp->nc == 0) return MB_OK;
    if (!sp->num[slot]) return MB_ERR_ILL_INPUT;
    int ok = trans ? klu_tsolve(sp->sym, sp->num[slot], (int)sp->nc, 1, b, &sp->com)
                   : klu_solve(sp->sym, sp->num[slot], (int)sp->nc, 1, b, &sp->com);
    return ok ? MB_OK : MB_ERR_LINALG;
}

void mb_ss_sparse_phiv(const mb_ss_sparse *sp, int slot, const double *x, double *y)
{
    const double *v = sp->vals[slot];
    for (ptrdiff_t i = 0; i < sp->nd; i++) {
        double xi = x[i];
        if (xi == 0.0) continue;
        int j = sp->indep[i];
        for (int p = sp->Pp[j]; p < sp->Pp[j + 1]; p++) y[sp->Pi[p]] += v[p] * xi;
    }
}

void mb_ss_sparse_phivt(const mb_ss_sparse *sp, int slot, const double *x, double *y)
{
    const double *v = sp->vals[slot];
    for (ptrdiff_t i = 0; i < sp->nd; i++) {
        int j = sp->indep[i];
        double acc = 0;
        for (int p = sp->Pp[j]; p < sp->Pp[j + 1]; p++) acc += v[p] * x[sp->Pi[p]];
        y[i] += acc;
    }
}

double mb_ss_sparse_cond(mb_ss_sparse *sp, int slot, double *rel)
{
    if (rel) *rel = INFINITY;
    if (!sp->num[slot] || !klu_condest(sp->Up, sp->uvals[slot], sp->sym, sp->num[slot],
                                       &sp->com))
        return INFINITY;
    double cond = sp->com.condest, nu = 0, nq1 = 0;
    const double *v = sp->vals[slot];
    for (ptrdiff_t j = 0; j < sp->nq; j++) {
        double c = 0;
        for (int p = sp->Pp[j]; p < sp->Pp[j + 1]; p++) c += fabs(v[p]);
        nq1 = fmax(nq1, c);
    }
    for (ptrdiff_t k = 0; k < sp->nc; k++) {
        double c = 0;
        for (int p = sp->Up[k]; p < sp->Up[k + 1]; p++) c += fabs(sp->uvals[slot][p]);
        nu = fmax(nu, c);
    }
    if (rel && nu > 0) *rel = nq1 * cond / nu;  /* |Phi_q|_1 |Phi_u^-1|_1 */
    return cond;
}

int mb_ss_sparse_saddle(mb_ss_sparse *sp, double t, const double *q, const double *qd,
                        double *qdd, double *lam)
{
    int rc = mb_index1_solve(&sp->f, t, q, qd, qdd, lam);
    return rc;
}

const char *mb_ss_sparse_msg(const mb_ss_sparse *sp)
{
    return sp->f.msg;
}

int mb_ss_sparse_mass_mul(mb_ss_sparse *sp, const double *q, const double *x, double *y)
{
    const mb_mech *me = sp->me;
    if (!sp->mconst) {
        int rc = me->sparse->mass(q, sp->mv, me->ctx);
        if (rc != 0) return rc;
    }
    memset(y, 0, (size_t)sp->nq * sizeof(double));
    for (ptrdiff_t k = 0; k < sp->nm; k++) y[sp->mr[k]] += sp->mv[k] * x[sp->mc[k]];
    return MB_OK;
}

int mb_ss_sparse_diagonals(mb_ss_sparse *sp, double t, const double *q, const double *qd,
                           double *md, double *kd, double *cd)
{
    const mb_mech *me = sp->me;
    ptrdiff_t nq = sp->nq;
    int rc = MB_OK;
    if (!sp->mconst) rc = me->sparse->mass(q, sp->mv, me->ctx);
    if (rc == MB_OK)
        rc = me->sparse->jac(t, q, qd, sp->zx, sp->zl, sp->cq, sp->cv, me->ctx);
    if (rc != MB_OK) return rc;
    for (ptrdiff_t j = 0; j < nq; j++) md[j] = kd[j] = cd[j] = 0.0;
    for (ptrdiff_t k = 0; k < sp->nm; k++)
        if (sp->mr[k] == sp->mc[k]) md[sp->mr[k]] += sp->mv[k];
    for (ptrdiff_t k = 0; k < sp->nC; k++)
        if (sp->cr[k] == sp->cc[k] && sp->cr[k] < nq) {
            kd[sp->cr[k]] += sp->cq[k];
            cd[sp->cr[k]] += sp->cv[k];
        }
    for (ptrdiff_t j = 0; j < nq; j++) {
        kd[j] = fabs(kd[j]);
        cd[j] = fabs(cd[j]);
    }
    return MB_OK;
}

/* ---- the evaluation of the state-space ODE in sparse mode (statespace.c dispatches) ---- */

static int slot_of(const mb_ss *s, const mb_ss_point *P)
{
    return P == &s->aux ? 1 : 0;
}

/* u at (t, v): Newton on Phi(t, u, v) = 0 from the base's prediction, the factors of the
 * last iteration in P's slot (statespace.c: the same iteration in the dense mode) */
static int newton_u(mb_ss *s, mb_ss_point *P, double t, const double *v)
{
    const mb_mech *me = s->mech;
    mb_ss_sparse *sp = s->sp;
    ptrdiff_t nc = s->nc, nd = s->nd;
    int slot = slot_of(s, P), rc;
    double *q = P->q, *r = sp->c1, *du = sp->c2;
    memset(du, 0, (size_t)nc * sizeof(double));
    if (s->base_ok) {  /* u = u_b + H_b (v - v_b),  H_b = -Phi_u^-1 Phi_v at the base */
        for (ptrdiff_t i = 0; i < nd; i++) sp->dv[i] = v[i] - s->q_b[s->indep[i]];
        mb_ss_sparse_phiv(sp, 2, sp->dv, du);
        if ((rc = mb_ss_sparse_solve(sp, 2, du, 0)) != MB_OK) return rc;
    }
    for (ptrdiff_t k = 0; k < nc; k++) q[s->dep[k]] = s->q_b[s->dep[k]] - du[k];
    double nr = INFINITY, nr_prev = INFINITY;
    int it;
    for (it = 0;; it++) {
        if ((rc = me->phi(t, q, r, me->ctx)) != 0) return rc;
        nr_prev = nr;
        nr = mb_norm_inf(nc, r);
        if (!isfinite(nr)) {
            s->nnewton_fail++;
            return MB_FAIL(s, MB_RECOVERABLE, "Phi is not finite at t = %.17g while solving for "
                           "the dependent coordinates.", t);
        }
        rc = mb_ss_sparse_factor(sp, slot, t, q);
        if (rc == MB_ERR_LINALG) {
            s->nnewton_fail++;
            return MB_FAIL(s, MB_RECOVERABLE, "Phi_u is singular at t = %.17g (the partition "
                           "no longer fits the configuration).", t);
        }
        if (rc != MB_OK || (rc = mb_ss_sparse_solve(sp, slot, r, 0)) != MB_OK) return rc;
        for (ptrdiff_t k = 0; k < nc; k++) q[s->dep[k]] -= r[k];
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
    return MB_OK;
}

int mb_ss_sparse_eval(mb_ss *s, mb_ss_point *P, double t, const double *v, const double *vd)
{
    size_t b = (size_t)s->nd * sizeof(double);
    if (P->ok && P->t == t && memcmp(P->v, v, b) == 0 && memcmp(P->vd, vd, b) == 0)
        return MB_OK;
    const mb_mech *me = s->mech;
    mb_ss_sparse *sp = s->sp;
    ptrdiff_t nc = s->nc, nd = s->nd;
    double *q = P->q, *qd = P->qd, *r = sp->c1;
    int rc;
    P->ok = 0;
    s->neval++;
    for (ptrdiff_t i = 0; i < nd; i++) q[s->indep[i]] = v[i];
    if ((rc = newton_u(s, P, t, v)) != MB_OK) return rc;
    /* velocities: Phi_u u' = -(Phi_v v' + Phi_t) */
    if ((rc = me->phi_t(t, q, r, me->ctx)) != 0) return rc;
    mb_ss_sparse_phiv(sp, slot_of(s, P), vd, r);
    if ((rc = mb_ss_sparse_solve(sp, slot_of(s, P), r, 0)) != MB_OK) return rc;
    for (ptrdiff_t k = 0; k < nc; k++) qd[s->dep[k]] = -r[k];
    for (ptrdiff_t i = 0; i < nd; i++) qd[s->indep[i]] = vd[i];
    /* q'' and lambda from [M Phi_q^T; Phi_q 0]; v'' = q''_v */
    if ((rc = mb_ss_sparse_saddle(sp, t, q, qd, P->qdd, P->lam)) != MB_OK)
        return MB_FAIL(s, rc, "%s", mb_ss_sparse_msg(sp));
    for (ptrdiff_t i = 0; i < nd; i++) {
        P->vdd[i] = P->qdd[s->indep[i]];
        if (!isfinite(P->vdd[i]))
            return MB_FAIL(s, MB_ERR_NONFINITE, "v'' is not finite at t = %.17g.", t);
    }
    memcpy(P->v, v, b);
    memcpy(P->vd, vd, b);
    P->t = t;
    P->ok = 1;
    return MB_OK;
}

int mb_ss_sparse_mhat(mb_ss *s, mb_ss_point *P, const double *x, double *out)
{
    mb_ss_sparse *sp = s->sp;
    ptrdiff_t nc = s->nc, nd = s->nd;
    int slot = slot_of(s, P), rc;
    double *e = sp->e, *y = sp->y, *c = sp->c2;
    /* e = E x = [x; -Phi_u^-1 Phi_v x] */
    memset(c, 0, (size_t)nc * sizeof(double));
    mb_ss_sparse_phiv(sp, slot, x, c);
    if ((rc = mb_ss_sparse_solve(sp, slot, c, 0)) != MB_OK) return rc;
    for (ptrdiff_t i = 0; i < nd; i++) e[s->indep[i]] = x[i];
    for (ptrdiff_t k = 0; k < nc; k++) e[s->dep[k]] = -c[k];
    if ((rc = mb_ss_sparse_mass_mul(sp, P->q, e, y)) != MB_OK) return rc;
    /* out = E^T y = y_v - Phi_v^T Phi_u^-T y_u */
    for (ptrdiff_t k = 0; k < nc; k++) c[k] = y[s->dep[k]];
    if ((rc = mb_ss_sparse_solve(sp, slot, c, 1)) != MB_OK) return rc;
    for (ptrdiff_t k = 0; k < nc; k++) c[k] = -c[k];
    for (ptrdiff_t i = 0; i < nd; i++) out[i] = y[s->indep[i]];
    mb_ss_sparse_phivt(sp, slot, c, out);
    return MB_OK;
}

int mb_ss_sparse_jac(mb_ss *s, mb_ss_point *P, double *J1, double *J2, ptrdiff_t ld)
{
    mb_ss_sparse *sp = s->sp;
    ptrdiff_t nd = s->nd;
    double *vp = sp->vp, *vdp = sp->vdp, t = P->t;
    memcpy(vp, P->v, (size_t)nd * sizeof(double));
    memcpy(vdp, P->vd, (size_t)nd * sizeof(double));
    for (int blk = 0; blk < 2; blk++) {
        double *X = blk ? J2 : J1, *z = blk ? vdp : vp;
        if (!X) continue;
        for (ptrdiff_t j = 0; j < nd; j++) {
            double z0 = z[j], h = cbrt(DBL_EPSILON) * fmax(1.0, fabs(z0));
            z[j] = z0 + h;
            int rc = mb_ss_sparse_eval(s, &s->aux, t, vp, vdp);
            if (rc != MB_OK) { z[j] = z0; return rc; }
            memcpy(sp->vddp, s->aux.vdd, (size_t)nd * sizeof(double));
            z[j] = z0 - h;
            rc = mb_ss_sparse_eval(s, &s->aux, t, vp, vdp);
            z[j] = z0;
            if (rc != MB_OK) return rc;
            for (ptrdiff_t i = 0; i < nd; i++)
                X[i + ld * j] = (sp->vddp[i] - s->aux.vdd[i]) / (2 * h);
        }
    }
    return MB_OK;
}

int mb_ss_sparse_acc_mjac(mb_ss *s, double *M, double *MJ1, double *MJ2, const double *vdd_t,
                          double *Mat)
{
    mb_ss_sparse *sp = s->sp;
    ptrdiff_t nd = s->nd;
    mb_ss_point *P = &s->cur;
    double *col = sp->col;
    int rc;
    if ((MJ1 || MJ2) && (rc = mb_ss_sparse_jac(s, P, MJ1, MJ2, nd)) != MB_OK) return rc;
    for (int blk = 0; blk < 2; blk++) {
        double *X = blk ? MJ2 : MJ1;
        for (ptrdiff_t j = 0; X && j < nd; j++) {
            memcpy(col, X + nd * j, (size_t)nd * sizeof(double));
            if ((rc = mb_ss_sparse_mhat(s, P, col, X + nd * j)) != MB_OK) return rc;
        }
    }
    for (ptrdiff_t j = 0; M && j < nd; j++) {
        memset(col, 0, (size_t)nd * sizeof(double));
        col[j] = 1.0;
        if ((rc = mb_ss_sparse_mhat(s, P, col, M + nd * j)) != MB_OK) return rc;
    }
    return Mat && vdd_t ? mb_ss_sparse_mhat(s, P, vdd_t, Mat) : MB_OK;
}
