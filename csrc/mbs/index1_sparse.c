/* Sparse mode of the index-1 formulation (index1.h, mb_index1_init_ex): for a
 * mechanism with sparse kernels (mech.h mb_mech_sparse: a constant diagonal M or a
 * block-diagonal M(q), fixed patterns of M, Phi_q and of the derivative blocks).
 * Memory and work per call are O(nnz); nothing is O(nq^2).
 *
 * f.  S = [M Phi_q^T; Phi_q 0] is kept in compressed columns on the pattern built once
 * at init (M's entries -- its diagonal, or the pattern of a q-dependent M, evaluated
 * per point --, Phi_q's entries and their transposes); klu_analyze once, then
 * per new point (t, y) klu_refactor with the pivot order of the last klu_factor, and a
 * fresh klu_factor when the refactorization fails or its pivot ratio min|u_kk| /
 * max|u_kk| (klu_rcond) falls below 1e-3 times that of the last full factorization.
 * S is scaled symmetrically (D S D, as the dense path) and declared singular when its
 * pivot ratio and the reciprocal of KLU's condition estimate are at or below 64 N eps
 * (factor_S).  The right-hand side, Baumgarte terms included, is that of
 * index1.c.
 *
 * Jacobian.  With a = q'', x = a + 2 alpha q', the index-1 derivative blocks are
 *     C_q = [ Q_q - (Phi_q^T lam)_q - (M a)_q ;
 *             gamma_q - (Phi_q x)_q - 2 alpha Phi_tq - beta^2 Phi_q ],
 *     C_v = [ Q_q' ; gamma_q' - 2 alpha Phi_q ]                 ((nq + nc) x nq),
 * ((M a)_q on M's pattern when M depends on q, else 0; Phi_tq on Phi_q's pattern when
 * the table has phi_tq, else 0), and
 * J = [[0, I], [E^T S^-1 C_q, E^T S^-1 C_v]] with E the first nq columns of I_{nq+nc}.
 * jac() keeps C_q, C_v and Phi_q of (t, y) in one compressed-column pattern C.
 *
 * Iteration matrices (mb_linsys, linsys.h).  (a I - J)[x; y] = [r1; r2] reads
 * a x - y = r1 and a y - E^T S^-1 (C_q x + C_v y) = r2.  With x = (r1 + y) / a and
 * w = S^-1 (C_q x + C_v y):
 *     [ a I              -E^T ] [ y ]   [ r2         ]
 *     [ -(C_v + C_q / a)   S  ] [ w ] = [ C_q r1 / a ],    x = (r1 + y) / a,
 * a sparse system of size 2 nq + nc ("A").  Its pattern is fixed, klu_analyze once;
 * factor(slot, a) assembles A for a real a (klu_factor) or a complex a (klu_z_factor,
 * the same symbolic analysis) into slot 0 or 1; a singular A is a recoverable failure
 * (return 1: the method shrinks the step).
 *
 * Dense jac (p->jac) in sparse mode: J by 2 nq solves with S's factors (O(nq^2) time;
 * the n x n array is the caller's), for the methods that do not use p->linsys.
 *
 * Projection: the minimum-norm correction dq = Phi_q^T (Phi_q Phi_q^T)^-1 r is the
 * first block of the solution of [I Phi_q^T; Phi_q 0][u; mu] = [0; r] (S's pattern,
 * its own numeric factorization); Newton as in index1.c.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/klu.h>
#include "index1_sparse.h"
#include "mbs_common.h"
#include "status.h"

struct mb_index1_sparse {
    ptrdiff_t nq, nc, N, NA, npq, nC, nm, nCm;
    klu_common com;
    int *pr, *pc;          /* Phi_q pattern (npq) */
    double *pqv, *pqj, *pqp; /* Phi_q values at the point of f, of jac, of the projection */
    double *ptq;           /* Phi_tq values (npq; phi_tq kernels only) */
    /* M's pattern (nm entries: the diagonal, or the kernels' mass_pattern), its values at
     * the point of f (mv) and of jac (mvj; the same array when M is constant), (M a)_q
     * (mq, when mass_x_q); mconst: M read once at init */
    int *mr, *mc, mconst;
    int tq;                /* the kernels give Phi_tq (phi_tq) */
    double *mv, *mvj, *mq;
    /* S (N x N) and the projection matrix on the same pattern */
    int *Sp, *Si, *sM, *sA, *sB;
    double *Sx, *Px;
    double *dS, *dP;       /* their symmetric scalings (D S D, as index1.c's dense path) */
    klu_symbolic *Ssym;
    klu_numeric *Snum, *Pnum;
    double Src, Prc;       /* pivot ratio of the last full factorization */
    /* C = [C_q | C_v] pattern ((N x nq) compressed columns) */
    int *Cp, *Ci, *cr, *cc, *mapC, *mapCP, *mapCM;
    ptrdiff_t Cnz;
    double *cq, *cv, *Cqx, *Cvx;
    /* the augmented matrix A (NA x NA) */
    int *Ap, *Ai, *aI, *aE, *aC, *aSM, *aSA, *aSB;
    ptrdiff_t Anz;
    double *Ax;            /* 2 Anz (complex) */
    klu_symbolic *Asym;
    klu_numeric *Anum[2];
    int cplx[2];
    double are[2], aim[2];
    int jac_ok;
    /* vectors */
    double *sol, *ycache, *vc1, *vc2, *xv, *b, *col;
    mb_linsys ls;
};


const char *mb_index1_sparse_unavailable(const mb_mech *me)
{
    const mb_mech_sparse *K = me->sparse;
    if (!K)
        return "the mechanism has no sparse kernels (mb_mech.sparse): only planar and "
               "spatial models without Python (extra, callback) forces have them, not a "
               "MechanicalSystem";
    if (K->mass_diag ? !me->mass_constant : !K->mass_pattern || !K->mass)
        return "the sparse kernels need a constant diagonal mass matrix or the pattern and "
               "values of a block-diagonal one";
    if (!K->mass_diag && !K->mass_x_q && !me->mass_constant)
        return "the sparse kernels of a q-dependent mass matrix need (M x)_q (mass_x_q)";
    if (me->nc > 0 && (!me->phi || !me->gamma || !me->phi_t))
        return "the sparse mode needs the phi, phi_t and gamma kernels";
    return NULL;
}

void mb_index1_sparse_free(mb_index1 *f)
{
    struct mb_index1_sparse *s = f->sp;
    if (!s) return;
    if (s->Snum) klu_free_numeric(&s->Snum, &s->com);
    if (s->Pnum) klu_free_numeric(&s->Pnum, &s->com);
    for (int k = 0; k < 2; k++)
        if (s->Anum[k]) klu_free_numeric(&s->Anum[k], &s->com);
    if (s->Ssym) klu_free_symbolic(&s->Ssym, &s->com);
    if (s->Asym) klu_free_symbolic(&s->Asym, &s->com);
    if (s->mvj != s->mv) free(s->mvj);
    void *ptrs[] = {s->pr, s->pc, s->pqv, s->pqj, s->pqp, s->ptq, s->mr, s->mc, s->mv, s->mq,
                    s->mapCM, s->Sp, s->Si, s->sM, s->sA, s->sB,
                    s->Sx, s->Px, s->dS, s->dP, s->Cp, s->Ci, s->cr, s->cc, s->mapC, s->mapCP, s->cq, s->cv,
                    s->Cqx, s->Cvx, s->Ap, s->Ai, s->aI, s->aE, s->aC, s->aSM, s->aSA, s->aSB,
                    s->Ax, s->sol, s->ycache, s->vc1, s->vc2, s->xv, s->b, s->col};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++) free(ptrs[k]);
    free(s);
    f->sp = NULL;
    f->sol = NULL;
    f->ycache = NULL;
}

#define ALLOC(p, n) (((p) = calloc((size_t)(n) + 1, sizeof *(p))) == NULL)

/* M's pattern (the diagonal with its constant values, or the kernels' pattern) */
static int read_mass(struct mb_index1_sparse *s, const mb_mech_sparse *K, void *ctx)
{
    if (!s->mconst) {
        ptrdiff_t nm = s->nm;
        int rc = K->mass_pattern(&nm, s->mr, s->mc, ctx);
        return rc != MB_OK ? rc : nm != s->nm ? MB_ERR_ILL_INPUT : MB_OK;
    }
    for (ptrdiff_t i = 0; i < s->nq; i++) s->mr[i] = s->mc[i] = (int)i;
    return K->mass_diag(s->mv, ctx);
}

/* M's pattern in range with all of M's diagonal (the projection's identity) */
static int mass_pattern_ok(const struct mb_index1_sparse *s)
{
    unsigned char *diag = calloc((size_t)s->nq + 1, 1);
    ptrdiff_t seen = 0;
    int ok = diag != NULL;
    for (ptrdiff_t k = 0; ok && k < s->nm; k++) {
        int r = s->mr[k], c = s->mc[k];
        ok = r >= 0 && r < s->nq && c >= 0 && c < s->nq;
        if (ok && r == c && !diag[r]) {
            diag[r] = 1;
            seen++;
        }
    }
    free(diag);
    return ok && seen == s->nq;
}

/* the kernels' patterns and M's diagonal, checked; MB_OK or a status with f->msg */
static int read_patterns(mb_index1 *f, struct mb_index1_sparse *s)
{
    const mb_mech *me = f->mech;
    const mb_mech_sparse *K = me->sparse;
    ptrdiff_t nq = s->nq, nc = s->nc, N = s->N, npq = s->npq, nC = s->nC;
    int rc;
    if ((rc = K->pattern(s->pr, s->pc, s->cr, s->cc, me->ctx)) != MB_OK ||
        (rc = read_mass(s, K, me->ctx)) != MB_OK)
        return MB_FAIL(f, rc, "mb_index1_init_ex: the mechanism's sparse kernels failed "
                       "(status %d).", rc);
    for (ptrdiff_t k = 0; s->mconst && k < nq; k++)
        if (!(s->mv[k] > 0) || !isfinite(s->mv[k]))
            return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_index1_init_ex: the mass matrix is not "
                           "positive (diagonal entry %td = %g).", k, s->mv[k]);
    if (!mass_pattern_ok(s))
        return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_index1_init_ex: mass pattern out of range or "
                       "without all of M's diagonal.");
    for (ptrdiff_t k = 0; k < npq; k++)
        if (s->pr[k] < 0 || s->pr[k] >= nc || s->pc[k] < 0 || s->pc[k] >= nq)
            return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_index1_init_ex: Phi_q pattern out of range.");
    for (ptrdiff_t k = 0; k < nC; k++)
        if (s->cr[k] < 0 || s->cr[k] >= N || s->cc[k] < 0 || s->cc[k] >= nq)
            return MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_index1_init_ex: C pattern out of range.");
    return MB_OK;
}

/* S: M's entries, Phi_q (lower left), Phi_q^T (upper right), and where each of those
 * entries lands; 0, or -1 out of memory */
static int pattern_S(struct mb_index1_sparse *s)
{
    ptrdiff_t nq = s->nq, nm = s->nm, N = s->N, npq = s->npq, nS = nm + 2 * npq;
    int *r = malloc((size_t)(nS + 1) * sizeof *r), *c = malloc((size_t)(nS + 1) * sizeof *c);
    int *map = malloc((size_t)(nS + 1) * sizeof *map);
    ptrdiff_t nz = -1;
    if (r && c && map) {
        memcpy(r, s->mr, (size_t)nm * sizeof *r);
        memcpy(c, s->mc, (size_t)nm * sizeof *c);
        for (ptrdiff_t k = 0; k < npq; k++) {
            r[nm + k] = (int)nq + s->pr[k];
            c[nm + k] = s->pc[k];
            r[nm + npq + k] = s->pc[k];
            c[nm + npq + k] = (int)nq + s->pr[k];
        }
        nz = mb_csc_build(N, N, nS, r, c, s->Sp, s->Si, map);
        if (nz >= 0) {
            memcpy(s->sM, map, (size_t)nm * sizeof *map);
            memcpy(s->sA, map + nm, (size_t)npq * sizeof *map);
            memcpy(s->sB, map + nm + npq, (size_t)npq * sizeof *map);
        }
    }
    free(r); free(c); free(map);
    return nz < 0 ? -1 : 0;
}

/* C: the kernel's entries, then Phi_q's in the constraint rows (Baumgarte terms), then
 * M's in the force rows ((M a)_q of a q-dependent M: nCm = nm, else 0); 0 or -1 out of
 * memory */
static int pattern_C(struct mb_index1_sparse *s)
{
    ptrdiff_t nq = s->nq, N = s->N, npq = s->npq, nC = s->nC, nCt = nC + npq + s->nCm;
    for (ptrdiff_t k = 0; k < npq; k++) {
        s->cr[nC + k] = (int)nq + s->pr[k];
        s->cc[nC + k] = s->pc[k];
    }
    memcpy(s->cr + nC + npq, s->mr, (size_t)s->nCm * sizeof *s->cr);
    memcpy(s->cc + nC + npq, s->mc, (size_t)s->nCm * sizeof *s->cc);
    int *map = malloc((size_t)(nCt + 1) * sizeof *map);
    if (!map) return -1;
    s->Cnz = mb_csc_build(N, nq, nCt, s->cr, s->cc, s->Cp, s->Ci, map);
    if (s->Cnz >= 0) {
        memcpy(s->mapC, map, (size_t)nC * sizeof *map);
        memcpy(s->mapCP, map + nC, (size_t)npq * sizeof *map);
        memcpy(s->mapCM, map + nC + npq, (size_t)s->nCm * sizeof *map);
    }
    free(map);
    if (s->Cnz < 0) return -1;
    return ALLOC(s->Cqx, s->Cnz) || ALLOC(s->Cvx, s->Cnz) ? -1 : 0;
}

/* the entries of A = [a I, -E^T; -(C_v + C_q / a), S] as (r, c) pairs, in the order
 * identity, E, C, S; their count */
static ptrdiff_t entries_A(const struct mb_index1_sparse *s, int *r, int *c)
{
    ptrdiff_t nq = s->nq, N = s->N, n = 0;
    for (ptrdiff_t i = 0; i < nq; i++, n++) r[n] = c[n] = (int)i;
    for (ptrdiff_t i = 0; i < nq; i++, n++) {
        r[n] = (int)i;
        c[n] = (int)(nq + i);
    }
    for (ptrdiff_t j = 0; j < nq; j++)
        for (int p = s->Cp[j]; p < s->Cp[j + 1]; p++, n++) {
            r[n] = (int)nq + s->Ci[p];
            c[n] = (int)j;
        }
    for (ptrdiff_t j = 0; j < N; j++)
        for (int p = s->Sp[j]; p < s->Sp[j + 1]; p++, n++) {
            r[n] = (int)nq + s->Si[p];
            c[n] = (int)(nq + j);
        }
    return n;
}

/* A's pattern and where the entries of I, E, C and S land in it; 0 or -1 out of memory */
static int pattern_A(struct mb_index1_sparse *s)
{
    ptrdiff_t nq = s->nq, NA = s->NA, npq = s->npq, nm = s->nm;
    ptrdiff_t Snz = s->Sp[s->N], Cnz = s->Cnz, nt = 2 * nq + Cnz + Snz;
    int *r = malloc((size_t)(nt + 1) * sizeof *r), *c = malloc((size_t)(nt + 1) * sizeof *c);
    int *map = malloc((size_t)(nt + 1) * sizeof *map);
    ptrdiff_t nz = -1;
    if (r && c && map && !ALLOC(s->Ap, NA + 1) && !ALLOC(s->Ai, nt) && !ALLOC(s->aI, nq) &&
        !ALLOC(s->aE, nq) && !ALLOC(s->aC, Cnz) && !ALLOC(s->aSM, nm) &&
        !ALLOC(s->aSA, npq) && !ALLOC(s->aSB, npq)) {
        entries_A(s, r, c);
        nz = mb_csc_build(NA, NA, nt, r, c, s->Ap, s->Ai, map);
        if (nz >= 0) {
            memcpy(s->aI, map, (size_t)nq * sizeof *map);
            memcpy(s->aE, map + nq, (size_t)nq * sizeof *map);
            memcpy(s->aC, map + 2 * nq, (size_t)Cnz * sizeof *map);
            /* S's entries in A: through S's own positions */
            const int *mS = map + 2 * nq + Cnz;
            for (ptrdiff_t k = 0; k < nm; k++) s->aSM[k] = mS[s->sM[k]];
            for (ptrdiff_t k = 0; k < npq; k++) {
                s->aSA[k] = mS[s->sA[k]];
                s->aSB[k] = mS[s->sB[k]];
            }
        }
    }
    free(r); free(c); free(map);
    if (nz < 0) return -1;
    s->Anz = nz;
    return ALLOC(s->Ax, 2 * s->Anz) || ALLOC(s->b, 2 * s->NA) ? -1 : 0;
}

/* the arrays of the patterns' sizes; 0 or -1 out of memory.  Every size is one of
 *   nq, nc, N = nq + nc, npq, nm, nC (the kernels'), nS = nm + 2 npq (S's entries),
 *   nCt = nC + npq + nCm (C's entries: the kernel's, Phi_q's, M's when q-dependent),
 * and (pattern_A) NA = nq + N, A's entries 2 nq + Cnz + Snz (Cnz <= nCt, Snz <= nS). */
static int alloc_arrays(struct mb_index1_sparse *s)
{
    ptrdiff_t nq = s->nq, nc = s->nc, N = s->N, npq = s->npq, nC = s->nC, nm = s->nm;
    ptrdiff_t nS = nm + 2 * npq;              /* S entries */
    ptrdiff_t nCt = nC + npq + s->nCm;        /* C entries: kernel's, Phi_q's, M's */
    if (ALLOC(s->mr, nm) || ALLOC(s->mc, nm) || ALLOC(s->mv, nm) || ALLOC(s->mapCM, s->nCm) ||
        (s->nCm > 0 && ALLOC(s->mq, nm)) || (s->tq && ALLOC(s->ptq, npq)))
        return -1;
    if (s->mconst)
        s->mvj = s->mv;
    else if (ALLOC(s->mvj, nm))
        return -1;
    return ALLOC(s->pr, npq) || ALLOC(s->pc, npq) || ALLOC(s->pqv, npq) || ALLOC(s->pqj, npq) ||
           ALLOC(s->pqp, npq) || ALLOC(s->Sp, N + 1) || ALLOC(s->Si, nS) ||
           ALLOC(s->sM, nm) || ALLOC(s->sA, npq) || ALLOC(s->sB, npq) || ALLOC(s->Sx, nS) ||
           ALLOC(s->Px, nS) || ALLOC(s->dS, N) || ALLOC(s->dP, N) || ALLOC(s->Cp, nq + 1) || ALLOC(s->Ci, nCt) || ALLOC(s->cr, nCt) ||
           ALLOC(s->cc, nCt) || ALLOC(s->mapC, nC) || ALLOC(s->mapCP, npq) || ALLOC(s->cq, nC) ||
           ALLOC(s->cv, nC) || ALLOC(s->sol, N) || ALLOC(s->ycache, 2 * nq) ||
           ALLOC(s->vc1, nc) || ALLOC(s->vc2, nc) || ALLOC(s->xv, nq) || ALLOC(s->col, N)
               ? -1 : 0;
}

/* KLU's symbolic analyses of S and A; MB_OK or a status with f->msg */
static int analyze(mb_index1 *f, struct mb_index1_sparse *s)
{
    klu_defaults(&s->com);
    s->Ssym = klu_analyze((int)s->N, s->Sp, s->Si, &s->com);
    s->Asym = s->Ssym ? klu_analyze((int)s->NA, s->Ap, s->Ai, &s->com) : NULL;
    if (s->Ssym && s->Asym)
        return MB_OK;
    int st = s->com.status;
    if (st == KLU_OUT_OF_MEMORY)
        return MB_FAIL(f, MB_ERR_MEM, "mb_index1_init_ex: out of memory.");
    return MB_FAIL(f, MB_ERR_LINALG, "mb_index1_init_ex: KLU analysis failed (status %d): "
                   "the saddle-point pattern is structurally singular (redundant "
                   "constraints?).", st);
}

int mb_index1_sparse_init(mb_index1 *f)
{
    const mb_mech *me = f->mech;
    const char *why = mb_index1_sparse_unavailable(me);
    if (why)
        return MB_FAIL(f, MB_ERR_NOT_SUPPORTED, "mb_index1_init_ex: sparse mode unavailable: %s.",
                     why);
    struct mb_index1_sparse *s = calloc(1, sizeof *s);
    if (!s) return MB_FAIL(f, MB_ERR_MEM, "mb_index1_init_ex: out of memory.");
    f->sp = s;
    s->nq = f->nq;
    s->nc = f->nc;
    s->N = s->nq + s->nc;
    s->NA = s->nq + s->N;
    const mb_mech_sparse *K = me->sparse;
    s->mconst = K->mass_diag != NULL;
    s->tq = K->phi_tq != NULL && !me->autonomous;
    s->nm = s->nq;
    int rc = K->sizes(&s->npq, &s->nC, me->ctx);
    if (rc == MB_OK && !s->mconst)
        rc = K->mass_pattern(&s->nm, NULL, NULL, me->ctx);
    s->nCm = K->mass_x_q && !s->mconst ? s->nm : 0;
    if (rc != MB_OK)
        rc = MB_FAIL(f, rc, "mb_index1_init_ex: the mechanism's sparse kernels refuse it "
                     "(status %d).", rc);
    else if (s->N + s->NA > 0x3fffffff || s->npq > 0x3fffffff || s->nC > 0x3fffffff ||
             s->nm > 0x3fffffff || s->nm < s->nq)
        rc = MB_FAIL(f, MB_ERR_ILL_INPUT, "mb_index1_init_ex: too large for the sparse mode.");
    else if (alloc_arrays(s))
        rc = MB_FAIL(f, MB_ERR_MEM, "mb_index1_init_ex: out of memory.");
    else if ((rc = read_patterns(f, s)) == MB_OK &&
             (pattern_S(s) || pattern_C(s) || pattern_A(s)))
        rc = MB_FAIL(f, MB_ERR_MEM, "mb_index1_init_ex: out of memory.");
    if (rc == MB_OK)
        rc = analyze(f, s);
    if (rc != MB_OK) {
        mb_index1_sparse_free(f);  /* f->msg says why */
        return rc;
    }
    s->ls.jac = NULL;  /* set by mb_index1_sparse_problem */
    f->sol = s->sol;
    f->ycache = s->ycache;
    f->cache_ok = 0;
    return MB_OK;
}

/* values of D S D (mv = M's entries, or NULL: the identity for the projection) with
 * Phi_q = pq and d_k = 1 / sqrt(max_l |S_kl|, max_l |S_lk|) (1 for an empty row): the
 * symmetric scaling of index1.c, so that the pivots and the singularity test do not
 * depend on the units of the bodies' coordinates */
static void fill_S(const struct mb_index1_sparse *s, const double *mv, const double *pq,
                   double *x, double *d)
{
    ptrdiff_t N = s->N;
    memset(x, 0, (size_t)s->Sp[N] * sizeof *x);
    for (ptrdiff_t k = 0; k < s->nm; k++)
        x[s->sM[k]] += mv ? mv[k] : s->mr[k] == s->mc[k] ? 1.0 : 0.0;
    for (ptrdiff_t k = 0; k < s->npq; k++) {
        x[s->sA[k]] += pq[k];
        x[s->sB[k]] += pq[k];
    }
    memset(d, 0, (size_t)N * sizeof *d);
    for (ptrdiff_t j = 0; j < N; j++)
        for (int p = s->Sp[j]; p < s->Sp[j + 1]; p++) {
            double a = fabs(x[p]);
            d[j] = fmax(d[j], a);
            d[s->Si[p]] = fmax(d[s->Si[p]], a);
        }
    for (ptrdiff_t k = 0; k < N; k++) d[k] = d[k] > 0 ? 1.0 / sqrt(d[k]) : 1.0;
    for (ptrdiff_t j = 0; j < N; j++)
        for (int p = s->Sp[j]; p < s->Sp[j + 1]; p++) x[p] *= d[s->Si[p]] * d[j];
}

/* b <- S^-1 b with the factors num of D S D: b = D (D S D)^-1 D b; 0 if KLU fails */
static int solve_S(struct mb_index1_sparse *s, klu_numeric *num, const double *d, double *b)
{
    for (ptrdiff_t k = 0; k < s->N; k++) b[k] *= d[k];
    if (!klu_solve(s->Ssym, num, (int)s->N, 1, b, &s->com)) return 0;
    for (ptrdiff_t k = 0; k < s->N; k++) b[k] *= d[k];
    return 1;
}

/* factor S-patterned (scaled) values x into *num: refactor with the kept pivot order
 * while its pivot ratio min|u_kk| / max|u_kk| stays within 1e-3 of the last full
 * factorization's, else factor.  Singular: the pivot ratio AND the reciprocal of
 * KLU's 1-norm condition estimate (klu_condest, a few solves, only when the ratio is
 * low) at or below 64 N eps.  The pivot ratio alone is no condition number: it falls
 * with N on a long well-conditioned chain (1e-10 at 13 000 unknowns, condition
 * estimate 4e5) while the threshold grows with N.  A refactorization whose ratio is
 * below the threshold is kept only if the last full one passed by its estimate.
 * MB_OK, MB_ERR_LINALG or MB_ERR_MEM. */
static int factor_S(struct mb_index1_sparse *s, double *x, klu_numeric **num, double *rc_ref)
{
    double tol = 64.0 * (double)s->N * DBL_EPSILON;
    if (*num) {
        if (klu_refactor(s->Sp, s->Si, x, s->Ssym, *num, &s->com) &&
            klu_rcond(s->Ssym, *num, &s->com) && s->com.rcond >= 1e-3 * *rc_ref &&
            (s->com.rcond > tol || *rc_ref <= tol))
            return MB_OK;
        klu_free_numeric(num, &s->com);
    }
    *num = klu_factor(s->Sp, s->Si, x, s->Ssym, &s->com);
    if (!*num)
        return s->com.status == KLU_OUT_OF_MEMORY ? MB_ERR_MEM : MB_ERR_LINALG;
    int ok = klu_rcond(s->Ssym, *num, &s->com);
    double rc = s->com.rcond;
    if (ok && !(rc > tol))  /* NaN fails both tests */
        ok = klu_condest(s->Sp, x, s->Ssym, *num, &s->com) && s->com.condest * tol < 1.0;
    if (!ok) {
        klu_free_numeric(num, &s->com);
        return MB_ERR_LINALG;
    }
    *rc_ref = rc;
    return MB_OK;
}

/* y += Phi_q x (pq values) */
static void pq_gemv(const struct mb_index1_sparse *s, const double *pq, const double *x,
                    double *y)
{
    for (ptrdiff_t k = 0; k < s->npq; k++) y[s->pr[k]] += pq[k] * x[s->pc[k]];
}

int mb_index1_sparse_saddle(mb_index1 *f, double t, const double *q, const double *qd)
{
    struct mb_index1_sparse *s = f->sp;
    const mb_mech *me = f->mech;
    ptrdiff_t nq = s->nq, nc = s->nc, N = s->N;
    size_t bytes = (size_t)nq * sizeof(double);
    if (f->cache_ok && t == f->tcache && memcmp(s->ycache, q, bytes) == 0 &&
        memcmp(s->ycache + nq, qd, bytes) == 0)
        return MB_OK;
    f->cache_ok = 0;
    double *b = s->sol;
    int rc;
    if ((rc = me->forces(t, q, qd, b, me->ctx)) != 0) return rc;
    if ((rc = me->sparse->phi_q(t, q, s->pqv, me->ctx)) != 0) return rc;
    if (nc > 0) {
        double *g = b + nq;
        if ((rc = me->gamma(t, q, qd, g, me->ctx)) != 0) return rc;
        if (f->alpha != 0) {  /* - 2 alpha (Phi_q q' + Phi_t) */
            if ((rc = me->phi_t(t, q, s->vc1, me->ctx)) != 0) return rc;
            pq_gemv(s, s->pqv, qd, s->vc1);
            for (ptrdiff_t k = 0; k < nc; k++) g[k] -= 2 * f->alpha * s->vc1[k];
        }
        if (f->beta != 0) {   /* - beta^2 Phi */
            if ((rc = me->phi(t, q, s->vc2, me->ctx)) != 0) return rc;
            for (ptrdiff_t k = 0; k < nc; k++) g[k] -= f->beta * f->beta * s->vc2[k];
        }
    }
    if (!s->mconst && (rc = me->sparse->mass(q, s->mv, me->ctx)) != 0) return rc;
    fill_S(s, s->mv, s->pqv, s->Sx, s->dS);
    if ((rc = factor_S(s, s->Sx, &s->Snum, &s->Src)) != MB_OK) {
        if (rc == MB_ERR_MEM) return MB_FAIL(f, rc, "index1 (sparse): out of memory in KLU.");
        return MB_FAIL(f, rc,
                     "The saddle-point matrix [M Phi_q^T; Phi_q 0] is singular at t = %.17g "
                     "(sparse KLU factorization, size %td): redundant constraints, a singular "
                     "configuration or a singular mass matrix.", t, N);
    }
    if (!solve_S(s, s->Snum, s->dS, b))
        return MB_FAIL(f, MB_ERR_LINALG, "index1 (sparse): KLU solve failed.");
    memcpy(s->ycache, q, bytes);
    memcpy(s->ycache + nq, qd, bytes);
    f->tcache = t;
    f->cache_ok = 1;
    return MB_OK;
}

/* ---- the Jacobian ---- */

/* the terms of a q-dependent M and of a t-dependent Phi_q in C_q: -(M a)_q and
 * -2 alpha Phi_tq; M's values kept for the iteration matrices */
static int jac_mass_tq(mb_index1 *f, struct mb_index1_sparse *s, double t, const double *q)
{
    const mb_mech *me = f->mech;
    int rc;
    if (!s->mconst) memcpy(s->mvj, s->mv, (size_t)s->nm * sizeof(double));
    if (s->nCm > 0) {
        if ((rc = me->sparse->mass_x_q(q, s->sol, s->mq, me->ctx)) != 0) return rc;
        for (ptrdiff_t k = 0; k < s->nCm; k++) s->Cqx[s->mapCM[k]] -= s->mq[k];
    }
    if (s->tq && f->alpha != 0) {
        if ((rc = me->sparse->phi_tq(t, q, s->ptq, me->ctx)) != 0) return rc;
        for (ptrdiff_t k = 0; k < s->npq; k++) s->Cqx[s->mapCP[k]] -= 2 * f->alpha * s->ptq[k];
    }
    return MB_OK;
}

/* evaluate and keep C_q, C_v (with the Baumgarte terms) and Phi_q at (t, y) */
static int sparse_jac_eval(mb_index1 *f, double t, const double *y)
{
    struct mb_index1_sparse *s = f->sp;
    const mb_mech *me = f->mech;
    ptrdiff_t nq = s->nq;
    const double *q = y, *qd = y + nq;
    s->jac_ok = 0;
    int rc = mb_index1_sparse_saddle(f, t, q, qd);
    if (rc != MB_OK) return rc;
    for (ptrdiff_t i = 0; i < nq; i++) s->xv[i] = s->sol[i] + 2 * f->alpha * qd[i];
    if ((rc = me->sparse->jac(t, q, qd, s->xv, s->sol + nq, s->cq, s->cv, me->ctx)) != 0)
        return rc;
    memset(s->Cqx, 0, (size_t)s->Cnz * sizeof(double));
    memset(s->Cvx, 0, (size_t)s->Cnz * sizeof(double));
    for (ptrdiff_t k = 0; k < s->nC; k++) {
        s->Cqx[s->mapC[k]] += s->cq[k];
        s->Cvx[s->mapC[k]] += s->cv[k];
    }
    double b2 = f->beta * f->beta, a2 = 2 * f->alpha;
    for (ptrdiff_t k = 0; k < s->npq; k++) {
        s->pqj[k] = s->pqv[k];
        s->Cqx[s->mapCP[k]] -= b2 * s->pqv[k];
        s->Cvx[s->mapCP[k]] -= a2 * s->pqv[k];
    }
    if ((rc = jac_mass_tq(f, s, t, q)) != MB_OK) return rc;
    s->jac_ok = 1;
    return MB_OK;
}

/* the dense J (n x n) by 2 nq solves with S's factors at (t, y) */
static int sparse_dense_jac(double t, const double *y, double *J, ptrdiff_t ldJ, void *ctx)
{
    mb_index1 *f = ctx;
    struct mb_index1_sparse *s = f->sp;
    ptrdiff_t nq = s->nq, N = s->N;
    int rc = sparse_jac_eval(f, t, y);
    if (rc != MB_OK) return rc;
    for (ptrdiff_t j = 0; j < 2 * nq; j++) {
        double *c = J + ldJ * j;
        memset(c, 0, (size_t)nq * sizeof(double));
        if (j >= nq) c[j - nq] = 1.0;
        ptrdiff_t jc = j < nq ? j : j - nq;
        const double *vals = j < nq ? s->Cqx : s->Cvx;
        memset(s->col, 0, (size_t)N * sizeof(double));
        int any = 0;
        for (int p = s->Cp[jc]; p < s->Cp[jc + 1]; p++) {
            s->col[s->Ci[p]] = vals[p];
            any |= vals[p] != 0;
        }
        if (any && !solve_S(s, s->Snum, s->dS, s->col))
            return MB_ERR_LINALG;
        memcpy(c + nq, s->col, (size_t)nq * sizeof(double));
    }
    return MB_OK;
}

/* ---- mb_linsys: a I - J through the augmented system ---- */

static int ls_jac(double t, const double *y, const double *fy, void *ctx)
{
    (void)fy;
    return sparse_jac_eval(ctx, t, y);
}

static int ls_factor(int slot, double ar, double ai, void *ctx)
{
    mb_index1 *f = ctx;
    struct mb_index1_sparse *s = f->sp;
    if (slot < 0 || slot > 1 || !s->jac_ok) return MB_ERR_ILL_INPUT;
    ptrdiff_t nq = s->nq;
    int cplx = ai != 0;
    double d = ar * ar + ai * ai;
    if (!(d > 0)) return 1;  /* a = 0: singular */
    double ir = ar / d, ii = -ai / d;  /* 1 / a */
    double *x = s->Ax;
    size_t st = cplx ? 2 : 1;
    memset(x, 0, (size_t)s->Anz * st * sizeof(double));
    for (ptrdiff_t i = 0; i < nq; i++) {
        x[st * s->aI[i]] += ar;
        if (cplx) x[2 * s->aI[i] + 1] += ai;
        x[st * s->aE[i]] -= 1.0;
    }
    for (ptrdiff_t k = 0; k < s->nm; k++) x[st * s->aSM[k]] += s->mvj[k];
    for (ptrdiff_t p = 0; p < s->Cnz; p++) {  /* -(C_v + C_q / a) */
        x[st * s->aC[p]] -= s->Cvx[p] + s->Cqx[p] * ir;
        if (cplx) x[2 * s->aC[p] + 1] -= s->Cqx[p] * ii;
    }
    for (ptrdiff_t k = 0; k < s->npq; k++) {
        x[st * s->aSA[k]] += s->pqj[k];
        x[st * s->aSB[k]] += s->pqj[k];
    }
    if (s->Anum[slot]) klu_free_numeric(&s->Anum[slot], &s->com);
    s->Anum[slot] = cplx ? klu_z_factor(s->Ap, s->Ai, x, s->Asym, &s->com)
                         : klu_factor(s->Ap, s->Ai, x, s->Asym, &s->com);
    if (!s->Anum[slot])
        return s->com.status == KLU_OUT_OF_MEMORY ? MB_ERR_MEM : 1;
    s->cplx[slot] = cplx;
    s->are[slot] = ar;
    s->aim[slot] = ai;
    return MB_OK;
}

static int ls_solve(int slot, double *xr, double *xi, void *ctx)
{
    mb_index1 *f = ctx;
    struct mb_index1_sparse *s = f->sp;
    if (slot < 0 || slot > 1 || !s->Anum[slot]) return MB_ERR_ILL_INPUT;
    ptrdiff_t nq = s->nq, N = s->N, NA = s->NA;
    double ar = s->are[slot], ai = s->aim[slot], d = ar * ar + ai * ai;
    double ir = ar / d, ii = -ai / d;
    double *b = s->b;
    if (!s->cplx[slot]) {
        memcpy(b, xr + nq, (size_t)nq * sizeof(double));
        double *c = b + nq;
        memset(c, 0, (size_t)N * sizeof(double));
        for (ptrdiff_t j = 0; j < nq; j++) {
            double v = xr[j] * ir;
            if (v != 0)
                for (int p = s->Cp[j]; p < s->Cp[j + 1]; p++) c[s->Ci[p]] += s->Cqx[p] * v;
        }
        if (!klu_solve(s->Asym, s->Anum[slot], (int)NA, 1, b, &s->com)) return MB_ERR_LINALG;
        for (ptrdiff_t i = 0; i < nq; i++) {
            xr[i] = (xr[i] + b[i]) * ir;
            xr[nq + i] = b[i];
        }
        return MB_OK;
    }
    if (!xi) return MB_ERR_ILL_INPUT;
    for (ptrdiff_t i = 0; i < nq; i++) {
        b[2 * i] = xr[nq + i];
        b[2 * i + 1] = xi[nq + i];
    }
    double *c = b + 2 * nq;
    memset(c, 0, (size_t)(2 * N) * sizeof(double));
    for (ptrdiff_t j = 0; j < nq; j++) {  /* C_q r1 / a */
        double vr = xr[j] * ir - xi[j] * ii, vi = xr[j] * ii + xi[j] * ir;
        if (vr == 0 && vi == 0) continue;
        for (int p = s->Cp[j]; p < s->Cp[j + 1]; p++) {
            c[2 * s->Ci[p]] += s->Cqx[p] * vr;
            c[2 * s->Ci[p] + 1] += s->Cqx[p] * vi;
        }
    }
    if (!klu_z_solve(s->Asym, s->Anum[slot], (int)NA, 1, b, &s->com)) return MB_ERR_LINALG;
    for (ptrdiff_t i = 0; i < nq; i++) {
        double yr = b[2 * i], yi = b[2 * i + 1];
        double sr = xr[i] + yr, si = xi[i] + yi;
        xr[i] = sr * ir - si * ii;
        xi[i] = sr * ii + si * ir;
        xr[nq + i] = yr;
        xi[nq + i] = yi;
    }
    return MB_OK;
}

void mb_index1_sparse_problem(mb_index1 *f, mb_problem *p)
{
    struct mb_index1_sparse *s = f->sp;
    s->ls.jac = ls_jac;
    s->ls.factor = ls_factor;
    s->ls.solve = ls_solve;
    s->ls.ctx = f;
    p->jac = sparse_dense_jac;
    p->linsys = &s->ls;
}

/* ---- projection ---- */

/* x -= u with [I Phi_q^T; Phi_q 0][u; mu] = [0; r] factored in Pnum (r: nc) */
/* the projection's linear algebra (project.h), ctx = f */
static int proj_correct(double *r, double *x, void *ctx)
{
    mb_index1 *f = ctx;
    struct mb_index1_sparse *s = f->sp;
    ptrdiff_t nq = s->nq;
    double *b = s->col;
    memset(b, 0, (size_t)nq * sizeof(double));
    memcpy(b + nq, r, (size_t)s->nc * sizeof(double));
    if (!solve_S(s, s->Pnum, s->dP, b)) return MB_ERR_LINALG;
    for (ptrdiff_t i = 0; i < nq; i++) x[i] -= b[i];
    return MB_OK;
}

static int proj_setup(double t, const double *q, void *ctx)
{
    mb_index1 *f = ctx;
    struct mb_index1_sparse *s = f->sp;
    const mb_mech *me = f->mech;
    int rc = me->sparse->phi_q(t, q, s->pqp, me->ctx);
    if (rc != 0) return rc;
    fill_S(s, NULL, s->pqp, s->Px, s->dP);
    if ((rc = factor_S(s, s->Px, &s->Pnum, &s->Prc)) != MB_OK) {
        if (rc == MB_ERR_MEM) return MB_FAIL(f, rc, "index1 (sparse): out of memory in KLU.");
        return MB_FAIL(f, rc, "Phi_q Phi_q^T is singular at t = %.17g (sparse KLU factorization "
                     "of [I Phi_q^T; Phi_q 0]): redundant constraints or a singular "
                     "configuration.", t);
    }
    return MB_OK;
}

static void proj_residual(const double *pt, const double *x, double *r, void *ctx)
{
    mb_index1 *f = ctx;
    memcpy(r, pt, (size_t)f->nc * sizeof(double));
    pq_gemv(f->sp, f->sp->pqp, x, r);
}

void mb_index1_sparse_proj_la(mb_index1 *f, mb_proj_la *la)
{
    *la = (mb_proj_la){proj_setup, proj_correct, proj_residual, f};
}
