/* Sparse mode of the DAE formulations (dae.h, mb_dae_init_ex): for a mechanism with
 * sparse kernels (mech.h mb_mech_sparse), memory and work per call O(nnz), nothing
 * O(nq^2).  Formulations: index3, index1_dae; index2 and GGL when the mechanism is
 * autonomous (their rows need (Phi_q v)_q, read off the kernels' gamma_q - (Phi_q x)_q
 * at q' = 0, where gamma vanishes only without explicit time).
 *
 * f.  a = M~^-1 (Q - Phi_q^T lam) with M~ = M + Phi_R,q^T W Phi_R,q (dae.c: the
 * regularization of a singular M by the rows R = the first nreg rows of Phi, W chosen
 * once as in dae.c) kept in compressed columns (M's pattern plus the pairs of each
 * regularizing row's entries) and factored by KLU at each new q (once when constant).
 *
 * Iteration matrices (mb_linsys, linsys.h; M_p = diag(I, I, 0)): (a M_p - J) x = r with
 * x = (x1, x2, x3[, x4]) over (q, v, lam[, mu]) reads, its second block row multiplied
 * by M~ (a_q = M~^-1 X_q, a_v = M~^-1 Q_v, a_lam = -M~^-1 Phi_q^T),
 *     [ a I (+ (Phi_q^T mu)_q)  -I           0        (Phi_q^T) ]
 *     [ -X_q                    a M~ - Q_v   Phi_q^T  (0)       ] x = [r1; M~ r2; r3 (; r4)]
 *     [ the algebraic rows, negated                             ]
 * with X_q = Q_q - (Phi_q^T lam)_q - (M a)_q - (Phi_R,q^T W Phi_R,q a)_q (dae.c).  The
 * algebraic rows: index 3  -Phi_q x1;  index 2  -(Phi_q v)_q x1 - Phi_q x2;  index 1
 * (gamma_q - (Phi_q a)_q) x1 + (gamma_v - a Phi_q) x2 = r3 - Phi_q r2 (its J-row is
 * Phi_q times the v'-row, which row 2 gives as a x2 - r2, plus the kernel's bottom
 * blocks C = gamma_q - (Phi_q a)_q, C_v = gamma_v with x = a);  GGL both
 * (velocity rows, then position rows), and its q' = v - Phi_q^T mu gives the terms in
 * parentheses, (Phi_q^T mu)_q as the difference of the kernel's top block with lam = 0
 * and lam = mu (at q' = 0, x = v).  The regularization's term is
 * (Phi_q^T mu)_q + Phi_R,q^T W (Phi_R,q a)_q with mu = W Phi_R,q a on R: the first from
 * the kernel with lam + mu, the second from the kernel at q' = 0 with x = a (rows R of
 * gamma_q - (Phi_q a)_q; gamma_R(q, 0) = 0: R does not depend on t).  The matrix ("K",
 * size n) has a fixed pattern: klu_analyze once, klu_factor (real a) or klu_z_factor
 * (complex a, radau's pair) per factorization; a singular K is recoverable (return 1).
 *
 * Projection (project.h): KLU of [I Phi_q^T; Phi_q 0].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/klu.h>
#include "dae.h"
#include "mbs_common.h"
#include "status.h"

struct mb_dae_sparse {
    ptrdiff_t nq, nc, n, npq, nC, nm, npair, nrc;
    int mconst, kind;
    klu_common com;
    int *pr, *pc, *cr, *cc, *mr, *mc;   /* patterns: Phi_q, C, M */
    double *pqv, *pqj, *pqp;           /* Phi_q at the point of f, of jac, of the projection */
    double *cq, *cv, *cq0, *cqv, *cqm, *cv0; /* C (x = a, lam~ + mu); at q' = 0: x = a; x = v
                                      * (lam 0, GGL's lam = mu) */
    double *mv, *mvj, *mq;             /* M at f's and jac's q, (M a)_q */
    /* regularizing rows: Phi_q entries of row r at rk[rp[r]..rp[r+1]), C entries of the
     * constraint row r at ck[cp[r]..cp[r+1]) */
    int *rp, *rk, *cp, *ck;
    double *regw, *aj, *lamj, *zero, *mdiag;
    int regw_ok;
    /* M~ (nq x nq) */
    int *Mp, *Mi, *mM, *mR;
    double *Mx, *qcache;
    klu_symbolic *Msym;
    klu_numeric *Mnum;
    int mass_ok;
    /* K (n x n): entry maps, values (complex: 2 per entry) */
    int *Kp, *Ki, *kI, *kE, *kCq, *kMq, *kRJ, *kM, *kMR, *kCv, *kPT, *kP, *kV, *kVq, *kG, *kGq, *kA1, *kA2;
    ptrdiff_t Knz;
    double *Kx, *b;
    klu_symbolic *Ksym;
    klu_numeric *Knum[2];
    int cplx[2], jac_ok;
    /* projection [I Phi_q^T; Phi_q 0] */
    int *Pp, *Pi, *pI, *pA, *pB;
    double *Px, *pb;
    klu_symbolic *Psym;
    klu_numeric *Pnum;
    mb_linsys ls;
};

#define ALLOC(p, n) (((p) = calloc((size_t)(n) + 1, sizeof *(p))) == NULL)

const char *mb_dae_sparse_unavailable(const mb_mech *me, int kind)
{
    const mb_mech_sparse *K = me->sparse;
    if (!K)
        return "the mechanism has no sparse kernels (mb_mech.sparse): only planar and "
               "spatial models without Python (extra, callback) forces have them";
    if (K->mass_diag ? !me->mass_constant : !K->mass_pattern || !K->mass || !K->mass_x_q)
        return "the sparse kernels need a constant diagonal mass matrix or the pattern, "
               "values and (M x)_q of a block-diagonal one";
    if (!me->phi || !me->phi_t || !me->gamma)
        return "the sparse mode needs the phi, phi_t and gamma kernels";
    if ((kind == MB_DAE_INDEX2 || kind == MB_DAE_GGL) && !me->autonomous)
        return "index2 and ggl have a sparse mode only for autonomous mechanisms (no "
               "drivers, no prescribed forces)";
    return NULL;
}

/* a triplet list under construction */
typedef struct trip { int *r, *c; ptrdiff_t n; } trip;
static int add(trip *t, ptrdiff_t r, ptrdiff_t c)
{
    if (t->r) { t->r[t->n] = (int)r; t->c[t->n] = (int)c; }
    return (int)t->n++;
}

/* the regularizing rows' entry lists (rp, rk over Phi_q; cp, ck over C's constraint rows) */
static int reg_lists(struct mb_dae_sparse *s, ptrdiff_t nreg)
{
    if (ALLOC(s->rp, nreg + 1) || ALLOC(s->cp, nreg + 1)) return -1;
    for (ptrdiff_t k = 0; k < s->npq; k++) if (s->pr[k] < nreg) s->rp[s->pr[k] + 1]++;
    for (ptrdiff_t k = 0; k < s->nC; k++) {
        ptrdiff_t r = s->cr[k] - s->nq;
        if (r >= 0 && r < nreg) s->cp[r + 1]++;
    }
    for (ptrdiff_t r = 0; r < nreg; r++) {
        s->rp[r + 1] += s->rp[r];
        s->cp[r + 1] += s->cp[r];
    }
    if (ALLOC(s->rk, s->rp[nreg]) || ALLOC(s->ck, s->cp[nreg])) return -1;
    int *fr = calloc((size_t)nreg + 1, sizeof *fr), *fc = calloc((size_t)nreg + 1, sizeof *fc);
    if (!fr || !fc) { free(fr); free(fc); return -1; }
    for (ptrdiff_t k = 0; k < s->npq; k++)
        if (s->pr[k] < nreg) s->rk[s->rp[s->pr[k]] + fr[s->pr[k]]++] = (int)k;
    for (ptrdiff_t k = 0; k < s->nC; k++) {
        ptrdiff_t r = s->cr[k] - s->nq;
        if (r >= 0 && r < nreg) s->ck[s->cp[r] + fc[r]++] = (int)k;
    }
    free(fr); free(fc);
    s->npair = 0;
    s->nrc = 0;
    for (ptrdiff_t r = 0; r < nreg; r++) {
        ptrdiff_t a = s->rp[r + 1] - s->rp[r];
        s->npair += a * a;
        s->nrc += a * (s->cp[r + 1] - s->cp[r]);
    }
    return 0;
}

/* M~'s pattern: M's entries, then the pairs of each regularizing row */
static int pattern_M(struct mb_dae_sparse *s, ptrdiff_t nreg)
{
    ptrdiff_t nt = s->nm + s->npair;
    trip t = {malloc((size_t)(nt + 1) * sizeof(int)), malloc((size_t)(nt + 1) * sizeof(int)), 0};
    int *map = malloc((size_t)(nt + 1) * sizeof *map);
    ptrdiff_t nz = -1;
    if (t.r && t.c && map && !ALLOC(s->Mp, s->nq + 1) && !ALLOC(s->Mi, nt) &&
        !ALLOC(s->mM, s->nm) && !ALLOC(s->mR, s->npair)) {
        for (ptrdiff_t k = 0; k < s->nm; k++) add(&t, s->mr[k], s->mc[k]);
        for (ptrdiff_t r = 0; r < nreg; r++)
            for (int i = s->rp[r]; i < s->rp[r + 1]; i++)
                for (int j = s->rp[r]; j < s->rp[r + 1]; j++)
                    add(&t, s->pc[s->rk[i]], s->pc[s->rk[j]]);
        nz = mb_csc_build(s->nq, s->nq, nt, t.r, t.c, s->Mp, s->Mi, map);
        if (nz >= 0) {
            memcpy(s->mM, map, (size_t)s->nm * sizeof *map);
            memcpy(s->mR, map + s->nm, (size_t)s->npair * sizeof *map);
        }
    }
    free(t.r); free(t.c); free(map);
    return nz < 0 || ALLOC(s->Mx, nz) ? -1 : 0;
}

/* K's entries in a fixed order (see the top); with t->r NULL only counted.  The maps
 * (k* arrays) are filled with the entries' positions in the triplet list. */
static void entries_K(struct mb_dae_sparse *s, trip *t, ptrdiff_t nreg, int fill)
{
    ptrdiff_t nq = s->nq, A = 2 * nq, G = 2 * nq + s->nc;
    int ggl = s->kind == MB_DAE_GGL, vel = s->kind != MB_DAE_INDEX3;
    int vq = ggl || s->kind == MB_DAE_INDEX2, i1 = s->kind == MB_DAE_INDEX1;
#define PUT(arr, i, r, c) do { int e_ = add(t, (r), (c)); if (fill) (arr)[i] = e_; } while (0)
    for (ptrdiff_t i = 0; i < nq; i++) PUT(s->kI, i, i, i);
    for (ptrdiff_t i = 0; i < nq; i++) PUT(s->kE, i, i, nq + i);
    for (ptrdiff_t k = 0; k < s->nC; k++) {
        if (s->cr[k] < nq) {
            PUT(s->kCq, k, nq + s->cr[k], s->cc[k]);
            PUT(s->kCv, k, nq + s->cr[k], nq + s->cc[k]);
        } else if (fill) {
            s->kCq[k] = s->kCv[k] = -1;
        }
    }
    for (ptrdiff_t k = 0; k < s->nm; k++) {
        PUT(s->kMq, k, nq + s->mr[k], s->mc[k]);
        PUT(s->kM, k, nq + s->mr[k], nq + s->mc[k]);
    }
    ptrdiff_t p = 0, pj = 0;
    for (ptrdiff_t r = 0; r < nreg; r++)
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++) {
            for (int j = s->rp[r]; j < s->rp[r + 1]; j++, p++)
                PUT(s->kMR, p, nq + s->pc[s->rk[i]], nq + s->pc[s->rk[j]]);
            for (int j = s->cp[r]; j < s->cp[r + 1]; j++, pj++)
                PUT(s->kRJ, pj, nq + s->pc[s->rk[i]], s->cc[s->ck[j]]);
        }
    for (ptrdiff_t k = 0; k < s->npq; k++) {
        PUT(s->kPT, k, nq + s->pc[k], A + s->pr[k]);
        if (!vel) {
            PUT(s->kP, k, A + s->pr[k], s->pc[k]);
            continue;
        }
        PUT(s->kV, k, A + s->pr[k], nq + s->pc[k]);
        if (ggl) {
            PUT(s->kG, k, s->pc[k], G + s->pr[k]);  /* q' rows: column mu */
            PUT(s->kP, k, G + s->pr[k], s->pc[k]);  /* position rows */
        }
    }
    for (ptrdiff_t k = 0; i1 && k < s->nC; k++) {  /* index 1: C's and C_v's bottom rows */
        if (s->cr[k] >= nq) {
            PUT(s->kA1, k, A + s->cr[k] - nq, s->cc[k]);
            PUT(s->kA2, k, A + s->cr[k] - nq, nq + s->cc[k]);
        } else if (fill) {
            s->kA1[k] = s->kA2[k] = -1;
        }
    }
    for (ptrdiff_t k = 0; vq && k < s->nC; k++) {  /* -(Phi_q v)_q in the velocity rows */
        if (s->cr[k] >= nq) PUT(s->kVq, k, A + s->cr[k] - nq, s->cc[k]);
        else if (fill) s->kVq[k] = -1;
    }
    for (ptrdiff_t k = 0; ggl && k < s->nC; k++) {  /* (Phi_q^T mu)_q in the q' rows */
        if (s->cr[k] < nq) PUT(s->kGq, k, s->cr[k], s->cc[k]);
        else if (fill) s->kGq[k] = -1;
    }
#undef PUT
}

static int pattern_K(struct mb_dae_sparse *s, ptrdiff_t nreg)
{
    trip t = {NULL, NULL, 0};
    if (ALLOC(s->kI, s->nq) || ALLOC(s->kE, s->nq) || ALLOC(s->kCq, s->nC) ||
        ALLOC(s->kCv, s->nC) || ALLOC(s->kMq, s->nm) || ALLOC(s->kM, s->nm) ||
        ALLOC(s->kMR, s->npair) || ALLOC(s->kRJ, s->nrc) || ALLOC(s->kPT, s->npq) ||
        ALLOC(s->kP, s->npq) || ALLOC(s->kV, s->npq) || ALLOC(s->kVq, s->nC) ||
        ALLOC(s->kG, s->npq) || ALLOC(s->kGq, s->nC) || ALLOC(s->kA1, s->nC) ||
        ALLOC(s->kA2, s->nC))
        return -1;
    entries_K(s, &t, nreg, 0);
    ptrdiff_t nt = t.n;
    t = (trip){malloc((size_t)(nt + 1) * sizeof(int)), malloc((size_t)(nt + 1) * sizeof(int)), 0};
    int *map = malloc((size_t)(nt + 1) * sizeof *map);
    ptrdiff_t nz = -1;
    if (t.r && t.c && map && !ALLOC(s->Kp, s->n + 1) && !ALLOC(s->Ki, nt)) {
        entries_K(s, &t, nreg, 1);
        nz = mb_csc_build(s->n, s->n, nt, t.r, t.c, s->Kp, s->Ki, map);
        if (nz >= 0) {  /* triplet positions -> K positions */
            int *arrs[] = {s->kI, s->kE, s->kCq, s->kCv, s->kMq, s->kM, s->kMR, s->kRJ, s->kPT,
                           s->kP, s->kV, s->kVq, s->kG, s->kGq, s->kA1, s->kA2};
            ptrdiff_t lens[] = {s->nq, s->nq, s->nC, s->nC, s->nm, s->nm, s->npair, s->nrc,
                                s->npq, s->npq, s->npq, s->nC, s->npq, s->nC, s->nC, s->nC};
            for (size_t a = 0; a < sizeof lens / sizeof lens[0]; a++)
                for (ptrdiff_t i = 0; i < lens[a]; i++)
                    arrs[a][i] = arrs[a][i] >= 0 && arrs[a][i] < nt ? map[arrs[a][i]] : -1;
        }
    }
    free(t.r); free(t.c); free(map);
    s->Knz = nz;
    return nz < 0 || ALLOC(s->Kx, 2 * nz) || ALLOC(s->b, 2 * s->n) ? -1 : 0;
}

/* ---- set-up ---- */

void mb_dae_sparse_free(mb_dae *f)
{
    struct mb_dae_sparse *s = f->sp;
    if (!s) return;
    if (s->Mnum) klu_free_numeric(&s->Mnum, &s->com);
    for (int k = 0; k < 2; k++) if (s->Knum[k]) klu_free_numeric(&s->Knum[k], &s->com);
    if (s->Pnum) klu_free_numeric(&s->Pnum, &s->com);
    if (s->Msym) klu_free_symbolic(&s->Msym, &s->com);
    if (s->Ksym) klu_free_symbolic(&s->Ksym, &s->com);
    if (s->Psym) klu_free_symbolic(&s->Psym, &s->com);
    void *ptrs[] = {s->pr, s->pc, s->cr, s->cc, s->mr, s->mc, s->pqv, s->pqj, s->pqp, s->cq,
                    s->cv, s->cq0, s->cqv, s->cqm, s->cv0, s->mv, s->mvj, s->mq, s->rp, s->rk, s->cp,
                    s->ck, s->regw, s->aj, s->lamj, s->zero, s->mdiag, s->Mp, s->Mi, s->mM,
                    s->mR, s->Mx, s->qcache, s->Kp, s->Ki, s->kI, s->kE, s->kCq, s->kMq, s->kRJ,
                    s->kM, s->kMR, s->kCv, s->kPT, s->kP, s->kV, s->kVq, s->kG, s->kGq, s->kA1, s->kA2, s->Kx, s->b, s->Pp,
                    s->Pi, s->pI, s->pA, s->pB, s->Px, s->pb};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++) free(ptrs[k]);
    free(s);
    f->sp = NULL;
}

/* the projection matrix [I Phi_q^T; Phi_q 0]'s pattern */
static int pattern_P(struct mb_dae_sparse *s)
{
    ptrdiff_t nq = s->nq, N = nq + s->nc, nt = nq + 2 * s->npq;
    trip t = {malloc((size_t)(nt + 1) * sizeof(int)), malloc((size_t)(nt + 1) * sizeof(int)), 0};
    int *map = malloc((size_t)(nt + 1) * sizeof *map);
    ptrdiff_t nz = -1;
    if (t.r && t.c && map && !ALLOC(s->Pp, N + 1) && !ALLOC(s->Pi, nt) && !ALLOC(s->pI, nq) &&
        !ALLOC(s->pA, s->npq) && !ALLOC(s->pB, s->npq)) {
        for (ptrdiff_t i = 0; i < nq; i++) add(&t, i, i);
        for (ptrdiff_t k = 0; k < s->npq; k++) add(&t, nq + s->pr[k], s->pc[k]);
        for (ptrdiff_t k = 0; k < s->npq; k++) add(&t, s->pc[k], nq + s->pr[k]);
        nz = mb_csc_build(N, N, nt, t.r, t.c, s->Pp, s->Pi, map);
        if (nz >= 0) {
            memcpy(s->pI, map, (size_t)nq * sizeof *map);
            memcpy(s->pA, map + nq, (size_t)s->npq * sizeof *map);
            memcpy(s->pB, map + nq + s->npq, (size_t)s->npq * sizeof *map);
        }
    }
    free(t.r); free(t.c); free(map);
    return nz < 0 || ALLOC(s->Px, nz) || ALLOC(s->pb, N) ? -1 : 0;
}

/* the kernels' patterns and the arrays of their sizes; 0, or a status */
static int read_kernels(const mb_mech *me, struct mb_dae_sparse *s)
{
    const mb_mech_sparse *K = me->sparse;
    ptrdiff_t nq = s->nq, nc = s->nc;
    int rc = K->sizes(&s->npq, &s->nC, me->ctx);
    s->nm = nq;
    if (rc == MB_OK && !s->mconst) rc = K->mass_pattern(&s->nm, NULL, NULL, me->ctx);
    if (rc != MB_OK) return rc;
    if (s->npq > 0x3fffffff || s->nC > 0x3fffffff || s->nm > 0x3fffffff || s->n > 0x3fffffff)
        return MB_ERR_ILL_INPUT;
    if (ALLOC(s->pr, s->npq) || ALLOC(s->pc, s->npq) || ALLOC(s->cr, s->nC) ||
        ALLOC(s->cc, s->nC) || ALLOC(s->mr, s->nm) || ALLOC(s->mc, s->nm) ||
        ALLOC(s->pqv, s->npq) || ALLOC(s->pqj, s->npq) || ALLOC(s->pqp, s->npq) ||
        ALLOC(s->cq, s->nC) || ALLOC(s->cv, s->nC) || ALLOC(s->cq0, s->nC) ||
        ALLOC(s->cqv, s->nC) || ALLOC(s->cqm, s->nC) || ALLOC(s->cv0, s->nC) || ALLOC(s->mv, s->nm) ||
        ALLOC(s->mvj, s->nm) || ALLOC(s->mq, s->nm) || ALLOC(s->aj, nq) ||
        ALLOC(s->lamj, nc) || ALLOC(s->zero, nq) || ALLOC(s->mdiag, s->n) ||
        ALLOC(s->qcache, nq))
        return MB_ERR_MEM;
    if ((rc = K->pattern(s->pr, s->pc, s->cr, s->cc, me->ctx)) != MB_OK) return rc;
    if (s->mconst) {
        for (ptrdiff_t i = 0; i < nq; i++) s->mr[i] = s->mc[i] = (int)i;
        if ((rc = K->mass_diag(s->mv, me->ctx)) != MB_OK) return rc;
        memcpy(s->mvj, s->mv, (size_t)nq * sizeof(double));
    } else {
        ptrdiff_t nm = s->nm;
        if ((rc = K->mass_pattern(&nm, s->mr, s->mc, me->ctx)) != MB_OK) return rc;
    }
    for (ptrdiff_t k = 0; k < s->npq; k++)
        if (s->pr[k] < 0 || s->pr[k] >= nc || s->pc[k] < 0 || s->pc[k] >= nq) return MB_ERR_ILL_INPUT;
    for (ptrdiff_t k = 0; k < s->nC; k++)
        if (s->cr[k] < 0 || s->cr[k] >= nq + nc || s->cc[k] < 0 || s->cc[k] >= nq) return MB_ERR_ILL_INPUT;
    for (ptrdiff_t k = 0; k < s->nm; k++)
        if (s->mr[k] < 0 || s->mr[k] >= nq || s->mc[k] < 0 || s->mc[k] >= nq) return MB_ERR_ILL_INPUT;
    for (ptrdiff_t i = 0; i < 2 * nq; i++) s->mdiag[i] = 1.0;  /* M_p = diag(I, I, 0) */
    return MB_OK;
}

int mb_dae_sparse_init(mb_dae *f)
{
    const mb_mech *me = f->mech;
    const char *why = mb_dae_sparse_unavailable(me, f->kind);
    if (why)
        return MB_FAIL(f, MB_ERR_NOT_SUPPORTED, "mb_dae_init_ex: sparse mode unavailable: %s.", why);
    struct mb_dae_sparse *s = calloc(1, sizeof *s);
    if (!s) return MB_FAIL(f, MB_ERR_MEM, "mb_dae_init_ex: out of memory.");
    f->sp = s;
    s->nq = f->nq;
    s->nc = f->nc;
    s->n = f->n;
    s->kind = f->kind;
    s->mconst = me->sparse->mass_diag != NULL;
    int rc = read_kernels(me, s);
    if (rc == MB_OK && (ALLOC(s->regw, f->nreg) || reg_lists(s, f->nreg) ||
                        pattern_M(s, f->nreg) || pattern_K(s, f->nreg) || pattern_P(s)))
        rc = MB_ERR_MEM;
    if (rc == MB_OK) {
        klu_defaults(&s->com);
        s->Msym = klu_analyze((int)s->nq, s->Mp, s->Mi, &s->com);
        s->Ksym = s->Msym ? klu_analyze((int)s->n, s->Kp, s->Ki, &s->com) : NULL;
        s->Psym = s->Ksym ? klu_analyze((int)(s->nq + s->nc), s->Pp, s->Pi, &s->com) : NULL;
        if (!s->Psym) rc = s->com.status == KLU_OUT_OF_MEMORY ? MB_ERR_MEM : MB_ERR_LINALG;
    }
    if (rc != MB_OK) {
        mb_dae_sparse_free(f);
        return MB_FAIL(f, rc, "mb_dae_init_ex: the sparse mode could not be set up (status %d: "
                       "the mechanism's sparse kernels, memory, or a structurally singular "
                       "pattern).", rc);
    }
    return MB_OK;
}

/* ---- f ---- */

/* w_r = mean M_ii over the columns of row r / |Phi_r,q|^2 (dae.c reg_weights), with
 * Phi_q = s->pqv and M's values s->mv; uses s->aj as a zeroed scratch vector */
static void reg_weights(mb_dae *f, struct mb_dae_sparse *s)
{
    double *md = s->aj;
    memset(md, 0, (size_t)s->nq * sizeof(double));
    for (ptrdiff_t k = 0; k < s->nm; k++)
        if (s->mr[k] == s->mc[k]) md[s->mr[k]] += s->mv[k];
    for (ptrdiff_t r = 0; r < f->nreg; r++) {
        double g2 = 0.0, msum = 0.0;
        ptrdiff_t cnt = 0;
        /* the row's per-column sums (duplicates summed, as dense) in s->zero, reset after */
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++) s->zero[s->pc[s->rk[i]]] += s->pqv[s->rk[i]];
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++) {
            int c = s->pc[s->rk[i]];
            double v = s->zero[c];
            if (v != 0.0) {
                g2 += v * v;
                msum += md[c];
                cnt++;
            }
            s->zero[c] = 0.0;  /* counted once; back to zero */
        }
        s->regw[r] = g2 > 0.0 ? (msum > 0.0 ? msum / (double)cnt : 1.0) / g2 : 0.0;
    }
    s->regw_ok = 1;
}

/* KLU of M~(q) (mv at q), kept while q is unchanged (always when constant) */
static int mass_factor(mb_dae *f, struct mb_dae_sparse *s, const double *q)
{
    const mb_mech *me = f->mech;
    ptrdiff_t nq = s->nq;
    int constant = s->mconst && f->nreg == 0;
    if (s->mass_ok && (constant || memcmp(q, s->qcache, (size_t)nq * sizeof(double)) == 0))
        return MB_OK;
    s->mass_ok = 0;
    int rc;
    if (!s->mconst && (rc = me->sparse->mass(q, s->mv, me->ctx)) != MB_OK) return rc;
    if (f->nreg > 0 && !s->regw_ok) reg_weights(f, s);
    memset(s->Mx, 0, (size_t)s->Mp[nq] * sizeof(double));
    for (ptrdiff_t k = 0; k < s->nm; k++) s->Mx[s->mM[k]] += s->mv[k];
    ptrdiff_t p = 0;
    for (ptrdiff_t r = 0; r < f->nreg; r++)
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++)
            for (int j = s->rp[r]; j < s->rp[r + 1]; j++, p++)
                s->Mx[s->mR[p]] += s->regw[r] * s->pqv[s->rk[i]] * s->pqv[s->rk[j]];
    if (s->Mnum) klu_free_numeric(&s->Mnum, &s->com);
    s->Mnum = klu_factor(s->Mp, s->Mi, s->Mx, s->Msym, &s->com);
    if (!s->Mnum || (klu_rcond(s->Msym, s->Mnum, &s->com) && s->com.rcond < 1e-14))
        return MB_FAIL(f, s->com.status == KLU_OUT_OF_MEMORY ? MB_ERR_MEM : MB_ERR_LINALG,
                       f->nreg > 0 ? "The regularized mass matrix M + Phi_R,q^T W Phi_R,q is "
                       "singular (sparse KLU)." : "The mass matrix M(q) is singular (sparse KLU).");
    memcpy(s->qcache, q, (size_t)nq * sizeof(double));
    s->mass_ok = 1;
    return MB_OK;
}

/* f->a = M~^-1 (Q - Phi_q^T lam), s->pqv = Phi_q at (t, q) */
int mb_dae_sparse_accel(mb_dae *f, double t, const double *q, const double *v, const double *lam)
{
    struct mb_dae_sparse *s = f->sp;
    const mb_mech *me = f->mech;
    int rc;
    if ((rc = me->forces(t, q, v, f->a, me->ctx)) != 0) return rc;
    if ((rc = me->sparse->phi_q(t, q, s->pqv, me->ctx)) != 0) return rc;
    for (ptrdiff_t k = 0; k < s->npq; k++) f->a[s->pc[k]] -= s->pqv[k] * lam[s->pr[k]];
    if ((rc = mass_factor(f, s, q)) != MB_OK) return rc;
    return klu_solve(s->Msym, s->Mnum, (int)s->nq, 1, f->a, &s->com) ? MB_OK : MB_ERR_LINALG;
}

/* lam_R += sign W Phi_R,q a (s->pqv holds Phi_q) */
void mb_dae_sparse_reg_shift(const mb_dae *f, const double *a, double sign, double *lam)
{
    const struct mb_dae_sparse *s = f->sp;
    for (ptrdiff_t r = 0; r < f->nreg; r++) {
        double sum = 0.0;
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++) sum += s->pqv[s->rk[i]] * a[s->pc[s->rk[i]]];
        lam[r] += sign * s->regw[r] * sum;
    }
}

static int sp_rhs(double t, const double *y, double *ydot, void *ctx)
{
    mb_dae *f = ctx;
    struct mb_dae_sparse *s = f->sp;
    const mb_mech *me = f->mech;
    ptrdiff_t nq = f->nq, nc = f->nc;
    const double *q = y, *v = y + nq;
    double *alg = ydot + 2 * nq;
    int rc = mb_dae_sparse_accel(f, t, q, v, y + 2 * nq);
    if (rc != MB_OK) return rc;
    memcpy(ydot, v, (size_t)nq * sizeof(double));
    memcpy(ydot + nq, f->a, (size_t)nq * sizeof(double));
    if (f->kind == MB_DAE_INDEX3)
        return me->phi(t, q, alg, me->ctx);
    if (f->kind == MB_DAE_INDEX1) {  /* Phi_q a - gamma */
        if ((rc = me->gamma(t, q, v, alg, me->ctx)) != 0) return rc;
        for (ptrdiff_t k = 0; k < nc; k++) alg[k] = -alg[k];
        for (ptrdiff_t k = 0; k < s->npq; k++) alg[s->pr[k]] += s->pqv[k] * f->a[s->pc[k]];
        return MB_OK;
    }
    if ((rc = me->phi_t(t, q, alg, me->ctx)) != 0) return rc;  /* index 2, GGL */
    for (ptrdiff_t k = 0; k < s->npq; k++) alg[s->pr[k]] += s->pqv[k] * v[s->pc[k]];
    if (f->kind != MB_DAE_GGL)
        return MB_OK;
    const double *mu = y + 2 * nq + nc;  /* q' = v - Phi_q^T mu */
    for (ptrdiff_t k = 0; k < s->npq; k++) ydot[s->pc[k]] -= s->pqv[k] * mu[s->pr[k]];
    return me->phi(t, q, alg + nc, me->ctx);
}

/* IDA's residual view F = M_p y' - f (M_p = diag(mdiag) = diag(I, I, 0)); its
 * iteration matrix cj M_p - df/dy is the linsys's a M_p - J with a = cj */
static int sp_res(double t, const double *y, const double *yp, double *r, void *ctx)
{
    mb_dae *f = ctx;
    int rc = sp_rhs(t, y, r, ctx);
    if (rc != MB_OK) return rc;
    const double *md = f->sp->mdiag;
    for (ptrdiff_t i = 0; i < f->n; i++)
        r[i] = md[i] * yp[i] - r[i];
    return MB_OK;
}

/* ---- iteration matrices ---- */

/* keep at (t, y): Phi_q, M~'s parts, C with lam~ + mu, C at q' = 0 (x = a; x = v) */
static int ls_jac(double t, const double *y, const double *fy, void *ctx)
{
    (void)fy;
    mb_dae *f = ctx;
    struct mb_dae_sparse *s = f->sp;
    const mb_mech *me = f->mech;
    const mb_mech_sparse *K = me->sparse;
    ptrdiff_t nq = f->nq, nc = f->nc;
    const double *q = y, *v = y + nq;
    s->jac_ok = 0;
    int rc = mb_dae_sparse_accel(f, t, q, v, y + 2 * nq);
    if (rc != MB_OK) return rc;
    memcpy(s->aj, f->a, (size_t)nq * sizeof(double));
    memcpy(s->pqj, s->pqv, (size_t)s->npq * sizeof(double));
    memcpy(s->mvj, s->mv, (size_t)s->nm * sizeof(double));
    memcpy(s->lamj, y + 2 * nq, (size_t)nc * sizeof(double));
    mb_dae_sparse_reg_shift(f, s->aj, 1.0, s->lamj);  /* lam~ + mu, mu = W Phi_R,q a */
    if ((rc = K->jac(t, q, v, s->aj, s->lamj, s->cq, s->cv, me->ctx)) != 0) return rc;
    if (!s->mconst && (rc = K->mass_x_q(q, s->aj, s->mq, me->ctx)) != 0) return rc;
    memset(s->lamj, 0, (size_t)nc * sizeof(double));
    if (f->nreg > 0 &&
        (rc = K->jac(t, q, s->zero, s->aj, s->lamj, s->cq0, s->cv0, me->ctx)) != 0)
        return rc;
    if ((f->kind == MB_DAE_INDEX2 || f->kind == MB_DAE_GGL) &&
        (rc = K->jac(t, q, s->zero, v, s->lamj, s->cqv, s->cv0, me->ctx)) != 0)
        return rc;
    if (f->kind == MB_DAE_GGL &&
        (rc = K->jac(t, q, s->zero, v, y + 2 * nq + nc, s->cqm, s->cv0, me->ctx)) != 0)
        return rc;
    s->jac_ok = 1;
    return MB_OK;
}

/* K's values for a = ar + i ai into s->Kx (interleaved when complex) */
static void fill_K(mb_dae *f, struct mb_dae_sparse *s, double ar, double ai, int cplx)
{
    size_t st = cplx ? 2 : 1;
    double *x = s->Kx;
    memset(x, 0, (size_t)s->Knz * st * sizeof(double));
#define RE(pos) x[st * (size_t)(pos)]
#define IM(pos) x[2 * (size_t)(pos) + 1]
    for (ptrdiff_t i = 0; i < s->nq; i++) {
        RE(s->kI[i]) += ar;
        if (cplx) IM(s->kI[i]) += ai;
        RE(s->kE[i]) -= 1.0;
    }
    for (ptrdiff_t k = 0; k < s->nC; k++)
        if (s->kCq[k] >= 0) {
            RE(s->kCq[k]) -= s->cq[k];
            RE(s->kCv[k]) -= s->cv[k];
        }
    for (ptrdiff_t k = 0; k < s->nm; k++) {
        if (!s->mconst) RE(s->kMq[k]) += s->mq[k];
        RE(s->kM[k]) += ar * s->mvj[k];
        if (cplx) IM(s->kM[k]) += ai * s->mvj[k];
    }
    ptrdiff_t p = 0, pj = 0;
    for (ptrdiff_t r = 0; r < f->nreg; r++)
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++) {
            double wg = s->regw[r] * s->pqj[s->rk[i]];
            for (int j = s->rp[r]; j < s->rp[r + 1]; j++, p++) {
                double m = wg * s->pqj[s->rk[j]];
                RE(s->kMR[p]) += ar * m;
                if (cplx) IM(s->kMR[p]) += ai * m;
            }
            for (int j = s->cp[r]; j < s->cp[r + 1]; j++, pj++)  /* + Phi_R^T W (Phi_R a)_q */
                RE(s->kRJ[pj]) -= wg * s->cq0[s->ck[j]];
        }
    for (ptrdiff_t k = 0; k < s->npq; k++) {
        RE(s->kPT[k]) += s->pqj[k];
        if (f->kind == MB_DAE_INDEX3 || f->kind == MB_DAE_GGL) RE(s->kP[k]) -= s->pqj[k];
        if (f->kind == MB_DAE_INDEX1) {  /* - a Phi_q */
            RE(s->kV[k]) -= ar * s->pqj[k];
            if (cplx) IM(s->kV[k]) -= ai * s->pqj[k];
        } else if (f->kind != MB_DAE_INDEX3) {
            RE(s->kV[k]) -= s->pqj[k];
        }
        if (f->kind == MB_DAE_GGL) RE(s->kG[k]) += s->pqj[k];
    }
    for (ptrdiff_t k = 0; f->kind == MB_DAE_INDEX1 && k < s->nC; k++)
        if (s->kA1[k] >= 0) {
            RE(s->kA1[k]) += s->cq[k];
            RE(s->kA2[k]) += s->cv[k];
        }
    for (ptrdiff_t k = 0; (f->kind == MB_DAE_INDEX2 || f->kind == MB_DAE_GGL) && k < s->nC; k++)
        if (s->kVq[k] >= 0) RE(s->kVq[k]) += s->cqv[k];  /* -(Phi_q v)_q = C's row at q' = 0 */
    for (ptrdiff_t k = 0; f->kind == MB_DAE_GGL && k < s->nC; k++)  /* + (Phi_q^T mu)_q */
        if (s->kGq[k] >= 0) RE(s->kGq[k]) += s->cqv[k] - s->cqm[k];
#undef RE
#undef IM
}

static int ls_factor(int slot, double ar, double ai, void *ctx)
{
    mb_dae *f = ctx;
    struct mb_dae_sparse *s = f->sp;
    if (slot < 0 || slot > 1 || !s->jac_ok) return MB_ERR_ILL_INPUT;
    int cplx = ai != 0;
    fill_K(f, s, ar, ai, cplx);
    if (s->Knum[slot]) klu_free_numeric(&s->Knum[slot], &s->com);
    s->Knum[slot] = cplx ? klu_z_factor(s->Kp, s->Ki, s->Kx, s->Ksym, &s->com)
                         : klu_factor(s->Kp, s->Ki, s->Kx, s->Ksym, &s->com);
    if (!s->Knum[slot])
        return s->com.status == KLU_OUT_OF_MEMORY ? MB_ERR_MEM : 1;
    s->cplx[slot] = cplx;
    return MB_OK;
}

/* out = M~ x at the kept point (stride st: 1 real, 2 interleaved complex parts) */
static void mass_apply(const mb_dae *f, const struct mb_dae_sparse *s, const double *x,
                       double *out, size_t st)
{
    for (ptrdiff_t i = 0; i < s->nq; i++) out[st * (size_t)i] = 0.0;
    for (ptrdiff_t k = 0; k < s->nm; k++) out[st * (size_t)s->mr[k]] += s->mvj[k] * x[s->mc[k]];
    for (ptrdiff_t r = 0; r < f->nreg; r++) {
        double g = 0.0;
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++) g += s->pqj[s->rk[i]] * x[s->pc[s->rk[i]]];
        g *= s->regw[r];
        for (int i = s->rp[r]; i < s->rp[r + 1]; i++)
            out[st * (size_t)s->pc[s->rk[i]]] += g * s->pqj[s->rk[i]];
    }
}

static int ls_solve(int slot, double *xr, double *xi, void *ctx)
{
    mb_dae *f = ctx;
    struct mb_dae_sparse *s = f->sp;
    if (slot < 0 || slot > 1 || !s->Knum[slot]) return MB_ERR_ILL_INPUT;
    ptrdiff_t nq = s->nq, n = s->n;
    double *b = s->b;
    if (!s->cplx[slot]) {
        memcpy(b, xr, (size_t)n * sizeof(double));
        mass_apply(f, s, xr + nq, b + nq, 1);
        for (ptrdiff_t k = 0; f->kind == MB_DAE_INDEX1 && k < s->npq; k++)  /* r3 - Phi_q r2 */
            b[2 * nq + s->pr[k]] -= s->pqj[k] * xr[nq + s->pc[k]];
        if (!klu_solve(s->Ksym, s->Knum[slot], (int)n, 1, b, &s->com)) return MB_ERR_LINALG;
        memcpy(xr, b, (size_t)n * sizeof(double));
        return MB_OK;
    }
    if (!xi) return MB_ERR_ILL_INPUT;
    for (ptrdiff_t i = 0; i < n; i++) {
        b[2 * i] = xr[i];
        b[2 * i + 1] = xi[i];
    }
    mass_apply(f, s, xr + nq, b + 2 * nq, 2);
    mass_apply(f, s, xi + nq, b + 2 * nq + 1, 2);
    for (ptrdiff_t k = 0; f->kind == MB_DAE_INDEX1 && k < s->npq; k++) {
        ptrdiff_t r = 2 * nq + s->pr[k], c = nq + s->pc[k];
        b[2 * r] -= s->pqj[k] * xr[c];
        b[2 * r + 1] -= s->pqj[k] * xi[c];
    }
    if (!klu_z_solve(s->Ksym, s->Knum[slot], (int)n, 1, b, &s->com)) return MB_ERR_LINALG;
    for (ptrdiff_t i = 0; i < n; i++) {
        xr[i] = b[2 * i];
        xi[i] = b[2 * i + 1];
    }
    return MB_OK;
}

void mb_dae_sparse_problem(mb_dae *f, mb_problem *p)
{
    struct mb_dae_sparse *s = f->sp;
    s->ls = (mb_linsys){ls_jac, ls_factor, ls_solve, f};
    p->rhs = sp_rhs;
    p->jac = NULL;
    p->res = sp_res;
    p->mass = NULL;
    p->mass_diag = s->mdiag;
    p->linsys = &s->ls;
}

/* ---- projection: KLU of [I Phi_q^T; Phi_q 0] ---- */

static int proj_setup(double t, const double *q, void *ctx)
{
    mb_dae *f = ctx;
    struct mb_dae_sparse *s = f->sp;
    const mb_mech *me = f->mech;
    int rc = me->sparse->phi_q(t, q, s->pqp, me->ctx);
    if (rc != 0) return rc;
    memset(s->Px, 0, (size_t)s->Pp[s->nq + s->nc] * sizeof(double));
    for (ptrdiff_t i = 0; i < s->nq; i++) s->Px[s->pI[i]] += 1.0;
    for (ptrdiff_t k = 0; k < s->npq; k++) {
        s->Px[s->pA[k]] += s->pqp[k];
        s->Px[s->pB[k]] += s->pqp[k];
    }
    if (s->Pnum) klu_free_numeric(&s->Pnum, &s->com);
    s->Pnum = klu_factor(s->Pp, s->Pi, s->Px, s->Psym, &s->com);
    if (!s->Pnum)
        return MB_FAIL(f, MB_ERR_LINALG, "Phi_q Phi_q^T is singular at t = %.17g (sparse KLU "
                       "factorization of [I Phi_q^T; Phi_q 0]): redundant constraints or a "
                       "singular configuration.", t);
    return MB_OK;
}

static int proj_correct(double *r, double *x, void *ctx)
{
    mb_dae *f = ctx;
    struct mb_dae_sparse *s = f->sp;
    double *b = s->pb;
    memset(b, 0, (size_t)s->nq * sizeof(double));
    memcpy(b + s->nq, r, (size_t)s->nc * sizeof(double));
    if (!klu_solve(s->Psym, s->Pnum, (int)(s->nq + s->nc), 1, b, &s->com)) return MB_ERR_LINALG;
    for (ptrdiff_t i = 0; i < s->nq; i++) x[i] -= b[i];
    return MB_OK;
}

static void proj_residual(const double *pt, const double *x, double *r, void *ctx)
{
    mb_dae *f = ctx;
    struct mb_dae_sparse *s = f->sp;
    memcpy(r, pt, (size_t)s->nc * sizeof(double));
    for (ptrdiff_t k = 0; k < s->npq; k++) r[s->pr[k]] += s->pqp[k] * x[s->pc[k]];
}

void mb_dae_sparse_proj_la(mb_dae *f, mb_proj_la *la)
{
    *la = (mb_proj_la){proj_setup, proj_correct, proj_residual, f};
}
