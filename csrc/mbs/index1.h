#ifndef MB_MBS_INDEX1_H
#define MB_MBS_INDEX1_H
/* The index-1 formulation: y = (q, q'), y' = (q', q'') with q'' and lambda from
 *     [ M    Phi_q^T ] [ q''    ]   [ Q                          ]
 *     [ Phi_q   0    ] [ lambda ] = [ gamma - 2 a Phi' - b^2 Phi ]   (LLM eq 9,
 *                                               Baumgarte a, b optional)
 * solved by a dense LU, or, when M is constant and diagonal with a positive diagonal
 * (every planar model), through the Schur complement Phi_q M^-1 Phi_q^T (L D L^T);
 * and the analytic Jacobian df/dy of LLM eqs 10-15
 * (d q''/dq and d q''/dq' from the differentiated saddle-point system).
 * mb_index1_problem() presents it as an mb_problem (rhs, jac, nq) for every
 * integrator; project() moves (q, q') back onto Phi = 0 and Phi_q q' = -Phi_t
 * (minimum-norm Newton correction). */
#include "mech.h"
#include "mechderiv.h"
#include "problem.h"
#include "project.h"

/* mb_index1_init_ex(..., sparse = -1) chooses the sparse mode (index1_sparse.c) when
 * the mechanism has sparse kernels (mb_mech.sparse) and nq >= this */
#define MB_INDEX1_SPARSE_MIN_NQ 60

struct mb_index1_sparse;

typedef struct mb_index1 {
    const mb_mech *mech;
    double alpha, beta;   /* Baumgarte parameters (0: off) */
    double *work;         /* workspace of the dense mode (one block, carved by layout()) */
    int *ipiv;
    mb_proj proj;         /* the projection (project.h; its tol and max_iter may be set) */
    /* private, set by mb_index1_init: sizes, named views into work, the cache of the
     * last factorization (keyed on t and a copy of y), and the message of the last
     * failure (e.g. which pivot of the saddle-point matrix vanished).  The cache assumes
     * that alpha, beta and the mechanism do not change between calls: set cache_ok = 0
     * after changing them. */
    ptrdiff_t nq, nc;
    double *S, *dsc, *sol, *ycache, *R, *T1, *T2, *T3, *P1;
    double *vq1, *vc1, *vc2, *Pg;
    double *dwork;        /* the scratch of d */
    mb_mechd d;           /* derivative kernels with difference fallbacks (mechderiv.h) */
    int schur;            /* 1: M constant diagonal, saddle solves by the Schur complement */
    double *minv, *W, *Pq; /* Schur path: diag(M)^-1, Phi_q M^-1 Phi_q^T = L D L^T (ld nc:
                            * unit lower L below the diagonal, 1/D on it), Phi_q (nc x nq)
                            * of the cached point */
    double *pv;           /* Schur path: the nonzeros of Pq by columns (values pv, rows pr, */
    int *pr, *pc;         /* column starts pc, nq + 1 of them) */
    int *cols;            /* Schur path: the nonzero right-hand sides of a solve (2 nq) */
    double *kwork;        /* scratch of the mechanism's fused kernels (mech->fused_work) */
    int use_qpg, use_lin; /* the fused kernels stand in for the separate ones (mech.h) */
    double tcache;
    int cache_ok;
    char msg[256];
    struct mb_index1_sparse *sp; /* sparse mode (index1_sparse.c), or NULL: dense */
} mb_index1;

/* mb_index1_init_ex(f, mech, alpha, beta, -1): the mode chosen automatically */
int mb_index1_init(mb_index1 *f, const mb_mech *mech, double alpha, double beta);
/* sparse: 0 dense; 1 sparse (MB_ERR_NOT_SUPPORTED, f->msg saying why, when the
 * mechanism has no sparse kernels); -1 sparse when mech->sparse is set and
 * nq >= MB_INDEX1_SPARSE_MIN_NQ, else dense.
 * Sparse mode: S = [M Phi_q^T; Phi_q 0] in compressed columns, factored by KLU (one
 * symbolic analysis at init), no O(nq^2) memory; mb_index1_problem then also sets
 * p->linsys (linsys.h: the iteration matrices a I - J through a sparse augmented
 * system) and a p->jac that forms the dense J by 2 nq sparse solves. */
int mb_index1_init_ex(mb_index1 *f, const mb_mech *mech, double alpha, double beta, int sparse);
void mb_index1_free(mb_index1 *f);
/* The mechanism's parameters changed (a table entry perturbed by the sensitivities of
 * sens_mech.c): forget the (t, y) cache and refresh the Schur path's diag(M)^-1.  MB_OK,
 * or MB_ERR_ILL_INPUT when M is no longer diagonal and positive. */
int mb_index1_params_changed(mb_index1 *f);
/* fill p: n = 2 nq, nq, rhs, jac (analytic, eqs 10-15), acc (q'' for the second-order
 * view), step_bound when the mechanism has one (its contacts), ctx = f; every other
 * field zero/NULL */
void mb_index1_problem(mb_index1 *f, mb_problem *p);
/* accelerations and multipliers at (t, q, q') */
int mb_index1_solve(mb_index1 *f, double t, const double *q, const double *qd, double *qdd,
                    double *lam);
/* project (q, q') onto the position and velocity constraints; residuals after
 * (max norms; res_pos, res_vel may be NULL).  Returns MB_OK, MB_ERR_LINALG when
 * Phi_q Phi_q^T is singular (redundant constraints or a singular configuration),
 * MB_ERR_CONV when Newton does not reach proj.tol in proj.max_iter iterations, or a
 * kernel's status; f->msg says which (project.h). */
int mb_index1_project(mb_index1 *f, double t, double *q, double *qd, double *res_pos,
                      double *res_vel);
/* the same as an mb_project_fn on y = (q, q') with ctx = f: set p->project to it to
 * project after every accepted step (mb_index1_problem leaves p->project NULL) */
int mb_index1_project_hook(double t, double *y, void *ctx);
#endif
