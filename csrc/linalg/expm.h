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

size_t mb_expm_work_size(ptrdiff_t n);
int mb_expm(ptrdiff_t n, const double *A, ptrdiff_t lda, double *E, ptrdiff_t lde, double *work,
            int *ipiv, int *squarings);
#endif
