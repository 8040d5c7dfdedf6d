#ifndef MB_MBS_PROJECT_H
#define MB_MBS_PROJECT_H
/* Projection of a mechanism's state (q, q') onto its constraint manifold
 *     Phi(t, q) = 0,   Phi_q q' + Phi_t = 0
 * by Newton with minimum-norm corrections
 *     q  <- q  - Phi_q^T (Phi_q Phi_q^T)^-1 Phi             until |Phi|_inf <= tol,
 *     q' <- q' - Phi_q^T (Phi_q Phi_q^T)^-1 (Phi_q q' + Phi_t)  (linear: one correction,
 *                                                              one refinement).
 * The formulations that project after accepted steps own one (index1.c, dae.c).  The
 * linear algebra is a small table (mb_proj_la): dense by default (Phi_q and the scaled
 * LU of Phi_q Phi_q^T, below), or supplied by the owner (the sparse index-1 mode: KLU of
 * [I Phi_q^T; Phi_q 0], index1_sparse.c). */
#include <stddef.h>
#include "mech.h"
#include "mechderiv.h"

/* The linear algebra of the minimum-norm correction at the point of the last setup:
 *   setup(t, q):        factor at (t, q) (Phi_q and its Gram matrix); a singular one is
 *                       MB_ERR_LINALG with a message
 *   correct(r, x):      x -= Phi_q^T (Phi_q Phi_q^T)^-1 r   (r may be overwritten)
 *   residual(pt, x, r): r = Phi_q x + pt
 * Callbacks take their context last, as every callback of csrc. */
typedef struct mb_proj_la {
    int (*setup)(double t, const double *q, void *ctx);
    int (*correct)(double *r, double *x, void *ctx);
    void (*residual)(const double *pt, const double *x, double *r, void *ctx);
    void *ctx;
} mb_proj_la;

typedef struct mb_proj {
    const mb_mech *mech;
    mb_mechd *d;         /* Phi_t with its difference fallback (the owner's), or NULL: the
                          * mechanism's phi_t (a mechanism with sparse kernels has it) */
    ptrdiff_t nq, nc;
    double tol;          /* on |Phi| and |Phi_q q' + Phi_t| (max norms); default 1e-12 */
    int max_iter;        /* Newton iterations on the positions; default 20 */
    mb_proj_la la;       /* the dense one of mb_proj_init, unless the owner replaces it */
    /* private: scratch (phi, r, pt: nc; dq: nq), the dense linear algebra (Phi_q, the
     * scaled LU of Phi_q Phi_q^T), the message of the last failure */
    double *phi, *r, *dq, *pt, *P, *G, *gsc;
    int *ipiv;
    double *work;
    char msg[256];
} mb_proj;

/* Allocate for mech: the scratch, and with dense != 0 the dense linear algebra (O(nc nq)
 * memory; else the owner sets pr->la); d: the owner's derivative kernels (mechderiv.h)
 * or NULL.  MB_OK or MB_ERR_MEM. */
int mb_proj_init(mb_proj *pr, const mb_mech *mech, mb_mechd *d, int dense);
void mb_proj_free(mb_proj *pr);
/* Project (q, q') in place at t; res_pos, res_vel (may be NULL) receive the max norms of
 * the residuals after.  MB_OK, MB_ERR_LINALG (Phi_q Phi_q^T singular: redundant
 * constraints or a singular configuration), MB_ERR_CONV (no convergence in max_iter
 * iterations), MB_ERR_NONFINITE, or a kernel's status; pr->msg says which (or the
 * owner's buffer, for the failures of a linear algebra it supplies). */
int mb_proj_run(mb_proj *pr, double t, double *q, double *qd, double *res_pos, double *res_vel);

#endif
