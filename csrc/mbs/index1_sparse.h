#ifndef MB_MBS_INDEX1_SPARSE_H
#define MB_MBS_INDEX1_SPARSE_H
/* The sparse mode of the index-1 formulation (index1_sparse.c), private to
 * csrc/mbs: index1.c dispatches to these when mb_index1_init_ex chose sparse mode
 * (f->sp != NULL). */
#include "index1.h"

/* NULL when the mechanism supports the sparse mode, else why not */
const char *mb_index1_sparse_unavailable(const mb_mech *mech);
/* allocate and analyze (f->mech, nq, nc, alpha, beta set); sets f->sp, f->sol,
 * f->ycache; on failure f->msg says why and f->sp is NULL */
int mb_index1_sparse_init(mb_index1 *f);
void mb_index1_sparse_free(mb_index1 *f);
/* q'' and lambda at (t, q, q') into f->sol, cached on (t, y) */
int mb_index1_sparse_saddle(mb_index1 *f, double t, const double *q, const double *qd);
/* the projection's linear algebra (mb_index1_project, index1.c): factor
 * [I Phi_q^T; Phi_q 0] at (t, q) (a message in f->msg when singular); x -= u with
 * [I Phi_q^T; Phi_q 0][u; mu] = [0; r] (the minimum-norm correction); r += Phi_q x with
 * the Phi_q of the last factorization; and three scratch vectors (nc, nc, nq) */
int mb_index1_sparse_proj_factor(mb_index1 *f, double t, const double *q);
int mb_index1_sparse_min_norm(mb_index1 *f, const double *r, double *x);
void mb_index1_sparse_phiq_gemv(mb_index1 *f, const double *x, double *r);
void mb_index1_sparse_scratch(mb_index1 *f, double **vc1, double **vc2, double **vq);
/* p->jac (dense J by 2 nq sparse solves) and p->linsys */
void mb_index1_sparse_problem(mb_index1 *f, mb_problem *p);

#endif
