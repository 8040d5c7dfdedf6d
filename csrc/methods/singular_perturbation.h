#ifndef MB_METHODS_SINGULAR_PERTURBATION_H
#define MB_METHODS_SINGULAR_PERTURBATION_H
/* The singular-perturbation multirate scheme of the SP paper (Gil, Sanfelice,
 * Nikravesh, "Numerical Integration Scheme Using Singular Perturbation Method",
 * DETC2013, eqs 17-47), see singular_perturbation.c: y = (x, z) with slow x and fast
 * z; per step the fast part in its local linearization by block exponentials (eqs
 * 34/44 and 47), the slow part by RK4 on the linearized slow manifold z = H(x)
 * (eq 45).  First order; with an error estimate of its own (not in the paper) and
 * a continuous output as a dense record. */
#include <stddef.h>
#include "method.h"

extern const mb_method mb_method_singular_perturbation;

/* Options (mb_options.method_options -> mb_stepper.method_options): the indices of
 * the fast components of y, 0-based, distinct, 0 < n_fast < n; one allocation, the
 * struct with its indices after it.  n_fast = MB_SP_PROPOSE: the split proposed by
 * mb_sp_propose() from the Jacobian at the start of the run (kept after restarts at
 * switching events).  NULL, or a proposal that finds no separation of time scales:
 * no component is fast and the scheme is RK4 on the whole state with its embedded
 * error estimate (the degenerate case of eq 45). */
#define MB_SP_PROPOSE (-1)
typedef struct mb_sp_options {
    ptrdiff_t n_fast;
    ptrdiff_t fast[];
} mb_sp_options;

/* Validate a split for a state of size n: MB_OK, or MB_ERR_ILL_INPUT with a message
 * in msg (msg_len bytes; may be NULL) naming what is wrong (empty, every component,
 * out of range, repeated). */
int mb_sp_check_split(ptrdiff_t n, ptrdiff_t n_fast, const ptrdiff_t *fast, char *msg,
                      size_t msg_len);

/* Default ratio of time scales below which no split is proposed. */
#define MB_SP_MIN_RATIO 10.0
/* Eigenvalue moduli below MB_SP_FLOOR * (largest modulus) count as that floor when
 * gaps are measured, so that zero eigenvalues (rigid-body and constraint modes) do not
 * attract the split. */
#define MB_SP_FLOOR 1e-3

/* Propose the fast components from a Jacobian J (n x n, ld ldj):
 *  1. the eigenvalues lambda_k of J (real Schur form), moduli sorted decreasing
 *     mu_1 >= ... >= mu_n;
 *  2. the gap: the k maximizing mu_k / max(mu_{k+1}, MB_SP_FLOOR mu_1) (the first such
 *     k); no split when that ratio is below min_ratio (or mu_1 = 0); the fast modes are
 *     those with modulus >= mu_k, *threshold = mu_k, *ratio the ratio;
 *  3. the participation of each component in the fast modes, part[i] = P_ii of the
 *     spectral projector P onto their invariant subspace (spectral.h), and the fast
 *     components: part[i] > 1/2.  When none or all are fast, no split (*m = 0).
 * Writes fast (n entries at most, increasing), *m, part (n), wr, wi (n: the
 * eigenvalues), *ratio and *threshold (0 when J has no nonzero eigenvalue).  work:
 * mb_sp_propose_work_size(n) doubles.  Returns MB_OK, MB_ERR_LINALG (Schur form
 * failed, non-finite J), MB_ERR_ILL_INPUT. */
size_t mb_sp_propose_work_size(ptrdiff_t n);
int mb_sp_propose(ptrdiff_t n, const double *J, ptrdiff_t ldj, double min_ratio,
                  ptrdiff_t *fast, ptrdiff_t *m, double *part, double *wr, double *wi,
                  double *ratio, double *threshold, double *work);
#endif
