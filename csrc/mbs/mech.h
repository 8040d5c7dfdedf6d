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
 * index1_sparse.c), all called with the mb_mech's ctx.  They describe fixed sparsity
 * patterns, built once from the topology, as lists of (row, col) entries (0-based; an
 * entry may repeat: its values are summed):
 *   Phi_q             nc x nq, nnz_pq entries;
 *   C = [Q_q - (Phi_q^T lam)_q ; gamma_q - (Phi_q x)_q] (the derivative blocks of the
 *       index-1 formulation, without the mass term) and C_v = [Q_q' ; gamma_q'],
 *       (nq + nc) x nq on one shared pattern of nnz_c entries;
 *   M                 nq x nq, nnz_m entries (mass_pattern), when mass_diag is NULL.
 * The value kernels write the entries in the order of the patterns.  The mass matrix
 * is either constant, diagonal and positive (mass_diag: planar models), or (mass_diag
 * NULL) block diagonal and q-dependent on a pattern that holds all of M's diagonal and
 * whose blocks depend on their own coordinates only, so that (M x)_q lies on M's
 * pattern (mass, mass_x_q: spatial models; index1_sparse.c adds -(M q'')_q to C_q).
 * Phi_tq is zero unless phi_tq is given. */
typedef struct mb_mech_sparse {
    int (*sizes)(ptrdiff_t *nnz_pq, ptrdiff_t *nnz_c, void *ctx);
    int (*pattern)(int *pq_row, int *pq_col, int *c_row, int *c_col, void *ctx);
    int (*mass_diag)(double *d, void *ctx);                                       /* nq */
    int (*phi_q)(double t, const double *q, double *pq, void *ctx);              /* nnz_pq */
    /* cq, cv (nnz_c each) at (t, q, q') for the vectors x (nq) and lam (nc) */
    int (*jac)(double t, const double *q, const double *qd, const double *x,
               const double *lam, double *cq, double *cv, void *ctx);
    /* the q-dependent mass (NULL with mass_diag): its pattern (m_row, m_col NULL: only
     * *nnz_m), M(q) and (M(q) x)_q on it (nnz_m values each) */
    int (*mass_pattern)(ptrdiff_t *nnz_m, int *m_row, int *m_col, void *ctx);
    int (*mass)(const double *q, double *m, void *ctx);
    int (*mass_x_q)(const double *q, const double *x, double *mq, void *ctx);
    /* Phi_tq on Phi_q's pattern (nnz_pq), or NULL: Phi_q does not depend on t */
    int (*phi_tq)(double t, const double *q, double *ptq, void *ctx);
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
    /* sparse kernels (above) or NULL: planar and spatial models without Python forces
     * have them (mb_planar_mech, mb_spatial_mech); a MechanicalSystem does not */
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
