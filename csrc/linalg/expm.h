#ifndef MB_LINALG_EXPM_H
#define MB_LINALG_EXPM_H
/* The matrix exponential by scaling and squaring with Pade approximants
 * (Higham 2005; Al-Mohy & Higham 2009: degree m in {3, 5, 7, 9, 13} and the
 * number of squarings s chosen from 1-norms / 1-norm estimates of powers of A,
 * with the backward-error bounds theta_m).  Column-major, no global state.
 *
 * Work: mb_expm_work_size(n) doubles and n ints (ipiv), provided by the caller
 * (no allocation inside).  Returns MB_OK or MB_ERR_LINALG (singular Pade
 * denominator, non-finite input).  *squarings (may be NULL) receives s. */
#include <stddef.h>
#include "carve.h"

size_t mb_expm_work_size(ptrdiff_t n);
/* The scratch of an exponential formed and taken in place (E == A, as phi.c and llm.c
 * do): the n x n matrix M, the work of mb_expm and its n pivots, carved from a work
 * block by a layout function (core/carve.h; counting when c->base is NULL). */
typedef struct mb_expm_scratch {
    double *M, *work;
    int *ipiv;
} mb_expm_scratch;
void mb_expm_carve(mb_carver *c, ptrdiff_t n, mb_expm_scratch *x);
int mb_expm(ptrdiff_t n, const double *A, ptrdiff_t lda, double *E, ptrdiff_t lde, double *work,
            int *ipiv, int *squarings);

/* Additions (same computation as mb_expm):
 * - E may be A itself (same storage, lde == lda): A is read completely before E is
 *   written.
 * - On any return other than MB_OK, E is left unchanged.  MB_ERR_LINALG is also
 *   returned when the result is not finite (exp(A) overflows the double range);
 *   MB_ERR_ILL_INPUT when n < 0 or lda, lde < n.
 *
 * mb_expm_ex: mb_expm that also reports what it did, in *stats (may be NULL):
 *   m         Pade degree used (3, 5, 7, 9 or 13; 0 when no approximant was needed:
 *             n <= 1 or A = 0),
 *   s         number of squarings (the *squarings of mb_expm),
 *   products  n x n matrix products (powers of A, Pade evaluation, squarings); on top
 *             of these every call with m > 0 does one LU factorization and one solve
 *             with n right-hand sides. */
typedef struct mb_expm_stats {
    int m;
    int s;
    int products;
} mb_expm_stats;

int mb_expm_ex(ptrdiff_t n, const double *A, ptrdiff_t lda, double *E, ptrdiff_t lde,
               double *work, int *ipiv, mb_expm_stats *stats);
#endif
