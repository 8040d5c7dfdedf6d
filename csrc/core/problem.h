#ifndef MB_CORE_PROBLEM_H
#define MB_CORE_PROBLEM_H
/* mb_problem: the one problem interface every integrator takes.
 *
 * First-order view   y' = f(t, y),          y of size n           (rhs, required)
 *   optional         J  = df/dy (n x n, column-major, leading dim ldJ)  (jac)
 *   optional         ft = df/dt (size n)                            (dfdt)
 * Second-order view  q'' = a(t, q, q')      q of size nq, n == 2*nq, y = (q, q')
 *   optional: acc; when acc is NULL the view is served by rhs (mb_acc, method.h).
 *
 * Mass matrix: M y' = f(t, y) with a constant, possibly singular M (n x n,
 * column-major) for the methods that support it (radau_iia, bdf); NULL = identity.
 * Semi-explicit DAEs of higher index (M singular): dae_index[i] is the index of
 * component i (0 or 1: differential or index-1 algebraic, 2, 3; mechanisms: q 1,
 * q' 2, lambda 3 at index 3, csrc/mbs/dae.c); the methods that solve them
 * (MB_DAE, method.h) scale component i of every norm by |h|^(dae_index[i] - 1), as
 * RADAU5 does for its index-2 and index-3 variables.  NULL: every component index <= 1.
 * Jacobian sparsity: optional n x n column-major 0/1 pattern of df/dy; finite
 * differences then perturb structurally independent columns together.
 *
 * Every callback returns 0 on success, > 0 for a recoverable failure (the driver
 * retries with a smaller step) and < 0 for a fatal one; ctx is passed through, as the
 * last argument (the one convention of every callback in csrc: the mb_mech kernels,
 * mb_linsys, the dense output of the root finder; SciPy's LowLevelCallable user_data).
 */
#include <stddef.h>
#include "linsys.h"

typedef int (*mb_rhs_fn)(double t, const double *y, double *ydot, void *ctx);
typedef int (*mb_jac_fn)(double t, const double *y, double *J, ptrdiff_t ldJ, void *ctx);
typedef int (*mb_dfdt_fn)(double t, const double *y, double *ft, void *ctx);
typedef int (*mb_acc_fn)(double t, const double *q, const double *qd, double *qdd, void *ctx);
/* Projection after an accepted step (e.g. onto the constraint manifold of a
 * mechanism): modifies y in place; returns 0 or a status.  It may return
 * MB_NEW_COORDINATES (status.def) after rewriting y in new coordinates (the
 * state-space formulation after a repartition, csrc/mbs/statespace.c): the driver
 * then re-initializes the method (as at a switching event, method.h "Restarts"), so
 * that no history, kept Jacobian or interpolant of the old coordinates is used. */
typedef int (*mb_project_fn)(double t, double *y, void *ctx);
/* Second-order view with a mass matrix (RN paper eqs 43-46): the problem is
 * M(t, q, q') q'' = F(t, q, q') with M symmetric positive definite (the state-space
 * formulation: M^ v'' = Q^, RN eqs 9-10), a = q'' = M^-1 F.  At (t, q, q') the hook
 * writes, column-major with leading dimension nq, M (nq x nq), M a_q and M a_q'
 * (nq x nq: the right-hand sides of RN eqs 31 and 35, so that a_q, a_q' need not be
 * solved for) and the vector M a_t (nq; RN eq 46).  Any pointer may be NULL (not
 * wanted).  Returns 0 or a status. */
typedef int (*mb_acc_mjac_fn)(double t, const double *q, const double *qd, double *M,
                              double *MJ1, double *MJ2, double *Mat, void *ctx);
/* Check of a step's end before it is accepted: called with y_new of a step that passed
 * its error test, before anything of the step is recorded (events, output, projection);
 * returns 0 (accept), > 0 (reject: the step is retried smaller, as after a recoverable
 * failure of the method) or < 0 (fatal).  The state-space formulation recovers the
 * dependent coordinates there (statespace.c), so that a Newton failure at the step's end
 * is recoverable like one at a stage. */
typedef int (*mb_check_fn)(double t, const double *y, void *ctx);
/* Residual view (DAE methods): F(t, y, y') = 0 */
typedef int (*mb_res_fn)(double t, const double *y, const double *yp, double *r, void *ctx);
/* Events: g(t, y) -> g[0..nev-1] evaluated together. */
typedef int (*mb_event_fn)(double t, const double *y, double *g, void *ctx);
/* Step bound (continuous collision detection): the largest step the problem admits
 * from (t, y), with f = f(t, y), written into *h_max (> 0; +inf: no bound).  A
 * mechanism with penalty contacts bounds the step so that no contact can be entered
 * and left again within one step (csrc/mbs/contact.c): the step then ends inside the
 * contact, where the gap changes sign and the contact is seen.  The driver calls it
 * once per accepted point, before the step attempts from there, and never takes a
 * longer step (driver.h); the SUNDIALS adapters set it as the stop time of the next
 * internal step.  Returns 0 or a status. */
typedef int (*mb_step_bound_fn)(double t, const double *y, const double *f, double *h_max,
                                void *ctx);

typedef struct mb_problem {
    ptrdiff_t n;        /* state size */
    mb_rhs_fn rhs;      /* y' = f(t, y) (required) */
    mb_jac_fn jac;      /* df/dy or NULL */
    mb_dfdt_fn dfdt;    /* df/dt or NULL */
    ptrdiff_t nq;       /* second-order view: number of coordinates (0: none) */
    mb_acc_fn acc;      /* q'' = a(t, q, q') or NULL (then rhs serves) */
    const double *mass; /* constant mass matrix (n x n, column-major) or NULL */
    const unsigned char *jac_sparsity; /* n x n column-major pattern or NULL (dense) */
    mb_res_fn res;      /* residual view F(t, y, y') = 0 or NULL */
    mb_project_fn project; /* called on y after each accepted step, or NULL */
    void *ctx;          /* user data for all callbacks */
    int jac_constant;   /* jac returns one constant matrix: copying it is no Jacobian
                         * evaluation (not counted in njev, as SciPy) */
    mb_step_bound_fn step_bound; /* largest admissible step from (t, y), or NULL */
    mb_acc_mjac_fn acc_mjac; /* second-order view with a mass: M, M a_q, M a_q', M a_t, or
                              * NULL (methods then take M = I and the blocks of jac) */
    mb_check_fn check;  /* check of a step's end before acceptance, or NULL */
    const unsigned char *dae_index; /* index of each component (n) of a semi-explicit
                                     * DAE with a singular mass matrix, or NULL (<= 1) */
    const mb_linsys *linsys; /* structured iteration matrices a I - J (linsys.h), or NULL:
                              * dense J and LU; only with mass == NULL */
    const double *mass_diag; /* with linsys and mass == NULL: the diagonal (n) of a constant
                              * diagonal (possibly singular) mass matrix M, M y' = f, whose
                              * iteration matrices a M - J the linsys factors (a sparse DAE
                              * formulation, csrc/mbs/dae_sparse.c); only the methods
                              * flagged MB_LINSYS_MASS take it, the driver refuses it for
                              * the others; NULL: no such mass */
} mb_problem;

#endif
