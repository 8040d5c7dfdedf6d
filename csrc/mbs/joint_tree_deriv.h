#ifndef MB_MBS_JOINT_TREE_DERIV_H
#define MB_MBS_JOINT_TREE_DERIV_H
/* The exact derivatives of the forward dynamics of a fixed-base kinematic tree
 * (joint_tree.h) in O(n^2) a Jacobian:
 *
 *     x'' = ABA(q, q', tau),  tau = input(t) - damping q' + tau_extra,
 *     dx''/dq  = -M^-1 dRNEA/dq,   dx''/dq' = -M^-1 (dRNEA/dq' + diag(damping)),
 *     dx''/dtau = M^-1,
 *
 * RNEA taken at (q, q', x'') with gravity (the identity behind Carpentier and Mansard,
 * RSS 2018: the ABA's derivatives are -M^-1 times the inverse dynamics' ones).  Each
 * column of dRNEA is one forward-mode tangent pass of the RNEA over body j's subtree
 * and its path to the base (O(n)); M^-1 is applied to each column by the articulated-body algorithm's own
 * factorization (the articulated inertias, U_i = IA_i S_i and D_i = S_i^T U_i of q,
 * computed once, O(n)), then one O(n) backward and forward sweep a column with zero
 * velocity and gravity (Featherstone 2008, Table 7.1 with v = 0, tau = the column):
 * no dense mass matrix, no O(n^3) Cholesky factor.
 *
 * Work: mb_jtree_d_work_size(n) doubles, owned by the caller.  A floating base or ball
 * joints: MB_ERR_NOT_SUPPORTED (the formulation keeps differences there). */
#include <stddef.h>
#include "joint_tree.h"

/* doubles a body of the derivatives' own part of the work array (after the ABA's
 * mb_jtree_work_size(n)) */
#define MB_JTD_PER_BODY 146

/* doubles of work for mb_jtree_d_derivatives on a tree of n bodies */
static inline ptrdiff_t mb_jtree_d_work_size(ptrdiff_t n)
{
    n = n > 0 ? n : 0;
    return (MB_JT_PER_BODY + MB_JTD_PER_BODY + 2) * n + 1;
}

/* Aq = dx''/dq and Av = dx''/dq' (n x n each, column-major, leading dimension ld; either
 * NULL: not wanted), Minv = dx''/dtau = M(q)^-1 (or NULL), and x'' itself in qdd (n, or
 * NULL), at (t, q, q') under the joints' inputs and dampers (mb_jtree_input) plus
 * tau_extra (n, or NULL: zero).  Returns MB_OK, MB_ERR_NOT_SUPPORTED (floating base,
 * ball joints), MB_ERR_LINALG (a joint moving no mass) or MB_ERR_NONFINITE. */
int mb_jtree_d_derivatives(const mb_jtree *T, double t, const double *q, const double *qd,
                           const double *tau_extra, double *qdd, double *Aq, double *Av,
                           double *Minv, ptrdiff_t ld, double *work);

/* x = M(q)^-1 b (n; in place allowed) by the factorization of the last
 * mb_jtree_d_derivatives or mb_jtree_d_factor call on this work array */
void mb_jtree_d_solve(const mb_jtree *T, const double *b, double *x, double *work);

/* the articulated-body factorization of M(q) alone (for mb_jtree_d_solve) */
int mb_jtree_d_factor(const mb_jtree *T, const double *q, double *work);

#endif
