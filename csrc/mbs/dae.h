#ifndef MB_MBS_DAE_H
#define MB_MBS_DAE_H
/* The DAE formulations of a constrained mechanical system (mech.h):
 *     M(q) q'' + Phi_q^T lambda = Q(t, q, q'),   Phi(t, q) = 0
 * as a semi-explicit DAE  M_p y' = f(t, y)  with the constant, singular mass matrix
 * M_p = diag(I, I, 0) over y = (q, v, lambda) (LS paper eqs 1-4), or y = (q, v,
 * lambda, mu) for GGL:
 *
 *   kind            q'              v'      0 =                          index of q, v, lambda
 *   MB_DAE_INDEX3   v               a       Phi(t, q)                    (LS eq 1)   1, 2, 3
 *   MB_DAE_INDEX2   v               a       Phi_q v + Phi_t              (LS eq 2)   1, 1, 2
 *   MB_DAE_INDEX1   v               a       Phi_q a - gamma(t, q, v)     (LS eqs 3-4) 1, 1, 1
 *   MB_DAE_GGL      v - Phi_q^T mu  a       Phi_q v + Phi_t, Phi(t, q)   (Gear, Gupta,
 *                                                                        Leimkuhler 1985) 1, 1, 2 (mu: 2)
 *
 * with a = M(q)^-1 (Q(t, q, v) - Phi_q^T lambda) (M factored once when the mass
 * matrix is constant, else at each new q).  A singular M with regularizing constraint
 * rows (mech.h mass_reg: a spatial model's Euler-parameter normalizations) is replaced
 * by M + Phi_R,q^T W Phi_R,q, and lambda of those rows by lambda - W Phi_R,q q'' in y
 * (the same q(t); dae.c explains it); the outputs give the true lambda.  The exact Jacobian df/dy is assembled
 * from the derivative blocks of mechderiv.h (forces, gamma, (Phi_q^T
 * lambda)_q, (Phi_q x)_q, (M a)_q, Phi_tq; each the mechanism's kernel or central
 * differences of it).  mb_dae_problem() presents the formulation as an mb_problem
 * for the methods with a mass matrix (rhs, jac, mass = M_p, dae_index: the index of
 * each component, which the MB_DAE methods use to scale their norms as RADAU5 does),
 * and as the residual view F(t, y, y') = M_p y' - f(t, y) for IDA (with
 * mb_dae_ida_jac: cj M_p - df/dy).
 *
 * Consistent initial values: lambda(t0) (and q''(t0)) from the saddle-point system
 * of the index-1 formulation at (q0, v0), mu(t0) = 0 (mb_dae_initial); (q0, v0) must
 * satisfy Phi = 0 and Phi_q v + Phi_t = 0 (mb_index1_project projects them).
 * Outputs: q'' = a(t, q, v, lambda) with the integrated lambda (mb_dae_accel), so that
 * Phi_q q'' - gamma measures the acceleration-level error of the DAE solution. */
#include "index1.h"
#include "mech.h"
#include "mechderiv.h"
#include "problem.h"
#include "project.h"

typedef enum {
    MB_DAE_INDEX1 = 1,
    MB_DAE_INDEX2 = 2,
    MB_DAE_INDEX3 = 3,
    MB_DAE_GGL = 4
} mb_dae_kind;

typedef struct mb_dae {
    const mb_mech *mech;
    int kind;
    ptrdiff_t nq, nc, n;  /* n = 2 nq + nc (+ nc for GGL) */
    mb_mechd d;           /* the derivative kernels with difference fallbacks (mechderiv.h) */
    mb_proj proj;         /* the projection onto the constraints (project.h) */
    /* private, set by mb_dae_init: the problem's mass matrix and index vector, the LU of
     * M(q) (cached on q unless constant), scratch */
    double *Mp;           /* n x n */
    unsigned char *index; /* n */
    double *work;
    int *ipiv;
    double *ML, *qcache, *a, *rq, *rc1, *Pq, *Gq, *Gv, *T1, *T2, *Ptq, *X, *Y, *dwork;
    int mass_ok;          /* ML holds the LU of M(qcache) */
    ptrdiff_t nreg;       /* rows of Phi that regularize a singular M (mech.h mass_reg) */
    double *regw, *regmu; /* their weights (nreg), scratch (nc) */
    int regw_ok;          /* regw chosen (at the first factorization) */
    struct mb_dae_sparse *sp; /* the sparse mode (dae_sparse.c), or NULL: dense */
    char msg[256];
} mb_dae;

/* Set up the formulation of kind (mb_dae_kind) for mech (nc > 0).  MB_OK, or
 * MB_ERR_ILL_INPUT / MB_ERR_MEM with f->msg.  mb_dae_init is dense; mb_dae_init_ex
 * chooses with sparse: 0 dense, 1 sparse (MB_ERR_NOT_SUPPORTED with f->msg when the
 * mechanism or the kind has no sparse mode), -1 automatic: sparse when nq >=
 * MB_INDEX1_SPARSE_MIN_NQ and available, as the index-1 formulation.
 *
 * Sparse mode (dae_sparse.c): for a mechanism with sparse kernels (mech.h) on index3 and
 * index1_dae (index2 and GGL when autonomous): f by a KLU of the (regularized) mass matrix, the problem
 * without p->jac and without the dense M_p, with p->linsys (linsys.h: its iteration
 * matrices a M_p - J through a sparse augmented matrix) and p->mass_diag = diag(M_p),
 * which only the methods flagged MB_LINSYS_MASS take (bdf, radau_iia, ida: the residual
 * view p->res = M_p y' - f, IDA's cj M_p - df/dy being the linsys with a = cj); the
 * projection by KLU of [I Phi_q^T; Phi_q 0]; lambda(t0) by the sparse index-1
 * saddle-point system.  Memory and work per call O(nq). */
int mb_dae_init(mb_dae *f, const mb_mech *mech, int kind);
int mb_dae_init_ex(mb_dae *f, const mb_mech *mech, int kind, int sparse);
void mb_dae_free(mb_dae *f);
/* fill p: n, rhs, jac, mass = M_p, dae_index, res (F = M_p y' - f), step_bound (when the
 * mechanism has one), ctx = f; nq = 0 (no second-order view) */
void mb_dae_problem(mb_dae *f, mb_problem *p);
/* IDA's iteration matrix dF/dy + cj dF/dy' = cj M_p - df/dy (mb_dae_jac_fn, sundials.h) */
int mb_dae_ida_jac(double t, double cj, const double *y, const double *yp, double *J,
                   ptrdiff_t ld, void *ctx);
/* consistent y0 = (q0, v0, lambda0[, 0]) and y'(t0) = (v0, q''0, 0[, 0]) (yp0 may be NULL)
 * from (q0, v0); lambda0 and q''0 from the index-1 saddle-point system */
int mb_dae_initial(mb_dae *f, double t0, const double *q0, const double *v0, double *y0,
                   double *yp0);
/* q'' = M^-1 (Q - Phi_q^T lambda) at (t, y) with the lambda of y; lam (nc, may be NULL)
 * receives that lambda */
int mb_dae_accel(mb_dae *f, double t, const double *y, double *qdd, double *lam);
/* project the (q, v) of y onto Phi = 0, Phi_q v + Phi_t = 0 (an mb_project_fn, ctx = f) */
int mb_dae_project_hook(double t, double *y, void *ctx);

/* private to csrc/mbs: the sparse mode (dae_sparse.c) */
const char *mb_dae_sparse_unavailable(const mb_mech *mech, int kind); /* NULL: available */
int mb_dae_sparse_init(mb_dae *f);
void mb_dae_sparse_free(mb_dae *f);
/* f->a = M~^-1 (Q - Phi_q^T lam) at (t, q, v) */
int mb_dae_sparse_accel(mb_dae *f, double t, const double *q, const double *v, const double *lam);
/* lam_R += sign W Phi_R,q a with Phi_q of the last accel */
void mb_dae_sparse_reg_shift(const mb_dae *f, const double *a, double sign, double *lam);
void mb_dae_sparse_problem(mb_dae *f, mb_problem *p);
void mb_dae_sparse_proj_la(mb_dae *f, mb_proj_la *la);

#endif
