#ifndef MB_MBS_INITIAL_H
#define MB_MBS_INITIAL_H
/* The consistency of an initial state (q, q') of a mechanism (mech.h) at t, in one
 * pass over its kernels: what mbint.check_initial_conditions reports below
 * SPARSE_MIN_NQ coordinates. */
#include "mech.h"

/* *scale = max_i max(|q_i|, |q'_i|) (of the default tolerance), *position = max_i
 * |Phi_i(t, q)|, *velocity = max_i |(Phi_q q' + Phi_t)_i| (each NaN when an entry is
 * NaN; the residuals 0 when nc = 0), sv = the min(nc, nq) singular values of Phi_q(t, q)
 * in descending order and *rank = the number of them above rtol max(1, sv[0]).
 * Returns MB_OK, a kernel's status, MB_ERR_NONFINITE (Phi_q not finite: the residuals
 * are set, sv and rank are not), MB_ERR_LINALG (the SVD did not converge) or MB_ERR_MEM.
 * Work: nc (nq + 1) doubles, allocated and freed here. */
int mb_initial_check(const mb_mech *mech, double t, const double *q, const double *qd,
                     double rtol, double *scale, double *position, double *velocity,
                     double *sv, ptrdiff_t *rank);

#endif
