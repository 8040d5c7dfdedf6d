#ifndef MB_MBS_MECH_H
#define MB_MBS_MECH_H
/* mb_mech: a constrained mechanical system
 *     M(q) q'' + Phi_q^T lambda = Q(t, q, q'),   Phi(q, t) = 0
 * as a table of kernels.  A PlanarModel (planar.c, forces.c, contact.c) and a
 * user-derived MechanicalSystem (Python callables, csrc/python/system_py.c) are
 * two ways of filling it; the formulations (index1.c, ...) only see this table,
 * so every method runs on both (Chrono's ChIntegrable idea).
 *
 * Conventions: q has nq entries, Phi has nc rows.  Matrices are column-major with
 * an explicit leading dimension ld; kernels ADD nothing: they overwrite their
 * output.  Every kernel takes its context last (ctx), as every callback of csrc does
 * (problem.h, linsys.h): the planar and spatial kernels (mb_planar_phi, ...) are the
 * table's entries themselves, with the model as ctx.  gamma is the right-hand side of the acceleration constraint
 *     Phi_q q'' = gamma = -(Phi_q q')_q q' - 2 Phi_qt q' - Phi_tt.
 * Derivative kernels may be NULL: formulations then use central differences of
 * the kernel they differentiate.  Every kernel returns 0 (MB_OK) or a status.
 */
#include <stddef.h>

/* Optional sparse kernels of a mechanism (the sparse index-1 formulation,
 * index1_sparse.c), all called with the mb_mech's ctx.  They describe two fixed
 * sparsity patterns, built once from the topology, as lists of (row, col) entries
 * (0-based; an entry may repeat: its values are summed):
 *   Phi_q             nc x nq, nnz_pq entries;
 *   C = [Q_q - (Phi_q^T lam)_q ; gamma_q - (Phi_q x)_q] (the derivative blocks of the
 *       index-1 formulation) and C_v = [Q_q' ; gamma_q'], (nq + nc) x nq on one shared
 *       pattern of nnz_c entries.
 * The value kernels write the entries in the order of the patterns.  A mechanism
 * with this table has a constant diagonal positive mass matrix (mass_diag) and a
 * Phi_q that does not depend on t explicitly (Phi_tq = 0). */
typedef struct mb_mech_sparse {
    int (*sizes)(ptrdiff_t *nnz_pq, ptrdiff_t *nnz_c, void *ctx);
    int (*pattern)(int *pq_row, int *pq_col, int *c_row, int *c_col, void *ctx);
    int (*mass_diag)(double *d, void *ctx);                                       /* nq */
    int (*phi_q)(double t, const double *q, double *pq, void *ctx);              /* nnz_pq */
    /* cq, cv (nnz_c each) at (t, q, q') for the vectors x (nq) and lam (nc) */
    int (*jac)(double t, const double *q, const double *qd, const double *x,
               const double *lam, double *cq, double *cv, void *ctx);
} mb_mech_sparse;

typedef struct mb_mech {
    ptrdiff_t nq, nc;
    int mass_constant;  /* M does not depend on q */
    void *ctx;
    int (*mass)(const double *q, double *M, ptrdiff_t ld, void *ctx);                 /* nq x nq */
    int (*forces)(double t, const double *q, const double *qd, double *Q, void *ctx); /* nq */
    int (*phi)(double t, const double *q, double *phi, void *ctx);                    /* nc */
    int (*phi_q)(double t, const double *q, double *Pq, ptrdiff_t ld, void *ctx);     /* nc x nq */
    int (*phi_t)(double t, const double *q, double *pt, void *ctx);                   /* nc */
    int (*gamma)(double t, const double *q, const double *qd, double *g, void *ctx);  /* nc */
    /* derivatives for implicit and exponential methods (NULL: finite differences) */
    int (*forces_q)(double t, const double *q, const double *qd, double *Qq, ptrdiff_t ld, void *ctx);
    int (*forces_qd)(double t, const double *q, const double *qd, double *Qv, ptrdiff_t ld, void *ctx);
    /* (Phi_q x)_q for a given vector x (x = q' gives (Phi_q q')_q), nc x nq */
    int (*phiq_x_q)(double t, const double *q, const double *x, double *out, ptrdiff_t ld, void *ctx);
    /* (Phi_q^T lambda)_q, nq x nq */
    int (*phiqT_lam_q)(double t, const double *q, const double *lam, double *out, ptrdiff_t ld, void *ctx);
    /* (M(q) x)_q for a given vector x (x = q'' in the Jacobians of the state-space
     * formulation, statespace.c), nq x nq; NULL: central differences of mass (zero when
     * mass_constant) */
    int (*mass_x_q)(const double *q, const double *x, double *out, ptrdiff_t ld, void *ctx);
    int (*gamma_q)(double t, const double *q, const double *qd, double *out, ptrdiff_t ld, void *ctx);
    int (*gamma_qd)(double t, const double *q, const double *qd, double *out, ptrdiff_t ld, void *ctx);
    /* energies (NULL: not available) */
    int (*energy)(double t, const double *q, const double *qd, double *kinetic,
                  double *potential, void *ctx);
    /* optional step bound (continuous collision detection, problem.h mb_step_bound_fn):
     * the largest step from (t, q, q') with q'' = qdd after which no contact can have
     * been entered and left again unseen; *h_max = +inf when there is no bound
     * (NULL: no bound at all).  Planar models: mb_planar_step_bound (contact.c). */
    int (*step_bound)(double t, const double *q, const double *qd,
                      const double *qdd, double *h_max, void *ctx);
    /* nonzero: neither Q nor Phi depends on t explicitly (no drivers, no prescribed
     * forces), so every partial derivative in t vanishes and formulations skip them;
     * 0 (the safe default): they are formed by differences in t */
    int autonomous;
    /* sparse kernels (above) or NULL: planar models without Python forces have them
     * (mb_planar_mech); MechanicalSystem and spatial models do not */
    const mb_mech_sparse *sparse;
    /* optional fused kernels (NULL: the separate kernels above), each giving exactly
     * what the separate kernels it stands for give, in one pass over the elements (a
     * planar model: the trigonometry once per body, assemble.c); work: fused_work
     * doubles of scratch owned by the caller.  A formulation uses one only while every
     * separate kernel it stands for is in the table (a table that drops one, e.g. to
     * exercise the difference fallbacks, takes the separate path).
     * fused_qpg: Q (nq), Phi_q (nc x nq, ld) and gamma (nc) at (t, q, q')
     *            (forces, phi_q, gamma) */
    ptrdiff_t fused_work;
    int (*fused_qpg)(double t, const double *q, const double *qd, double *Q,
                     double *Pq, ptrdiff_t ld, double *g, double *work, void *ctx);
    /* fused_lin: the linearization of (Q - Phi_q^T lambda, gamma - Phi_q a) in q and q'
     * at fixed a (nq) and lambda (nc): both (nq + nc) x nq with leading dimension ld,
     *     Rq = [ Q_q - (Phi_q^T lambda)_q ; gamma_q - (Phi_q a)_q ],   Rv = [ Q_q' ; gamma_q' ]
     * (forces_q, forces_qd, phiqT_lam_q, phiq_x_q, gamma_q, gamma_qd) */
    int (*fused_lin)(double t, const double *q, const double *qd, const double *a,
                     const double *lam, double *Rq, double *Rv, ptrdiff_t ld, double *work, void *ctx);
    /* mass_reg > 0: M(q) may be singular, and the first mass_reg rows of Phi (which must
     * not depend on t) regularize it: M + Phi_R,q^T W Phi_R,q is nonsingular for every
     * positive diagonal W (a spatial model: M's Euler-parameter blocks 4 G^T J' G have
     * the null vector p, and the normalization rows p^T p - 1 give it back).  The
     * saddle-point formulations do not need it; the DAE formulations, which factor the
     * mass matrix alone, use the regularized one (dae.c). */
    ptrdiff_t mass_reg;
} mb_mech;

#endif
