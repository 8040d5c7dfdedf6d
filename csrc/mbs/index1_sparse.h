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
/* the projection's linear algebra (project.h) in the sparse mode: KLU of
 * [I Phi_q^T; Phi_q 0] on the saddle matrix's symbolic analysis, Phi_q of the last setup */
void mb_index1_sparse_proj_la(mb_index1 *f, mb_proj_la *la);
/* p->jac (dense J by 2 nq sparse solves) and p->linsys */
void mb_index1_sparse_problem(mb_index1 *f, mb_problem *p);

#endif
