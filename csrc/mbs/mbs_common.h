#ifndef MB_MBS_COMMON_H
#define MB_MBS_COMMON_H
/* Small helpers every file of csrc/mbs shares (one floor below the formulations):
 * the message of a failure, norms, the central-difference step and the scaled LU
 * with a pivot test of the saddle-point and Gram matrices. */
#include <stddef.h>

/* write the printf-style message into msg (len bytes) and return code */
int mb_msg_fail(char *msg, size_t len, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* mb_msg_fail into the msg buffer (an array) of the struct obj points to */
#define MB_FAIL(obj, code, ...) mb_msg_fail((obj)->msg, sizeof (obj)->msg, (code), __VA_ARGS__)

/* max_i |x_i| (0 for n = 0) */
double mb_norm_inf(ptrdiff_t n, const double *x);

/* central-difference step for a variable of size x: cbrt(eps) max(1, |x|) (relative
 * accuracy eps^(2/3)) */
double mb_fd_step(double x);

/* A <- D A D with d_k = 1/sqrt(max_l |A_kl|), then its LU (A n x n, leading dimension
 * lda); MB_ERR_LINALG, with *bad the index of the offending row or pivot, on a zero
 * row or a pivot below 64 n eps of the largest (redundant constraints, a singular
 * configuration or a singular mass matrix) */
int mb_lu_factor_scaled(ptrdiff_t n, double *A, ptrdiff_t lda, double *d, int *ipiv,
                        ptrdiff_t *bad);
/* solve A X = B (nrhs columns, leading dimension n) with the factors of D A D */
int mb_lu_solve_scaled(ptrdiff_t n, const double *LU, ptrdiff_t lda, const double *d,
                       const int *ipiv, double *B, ptrdiff_t nrhs);

/* Compressed columns of an nr x ncol matrix from nt entries (r[k], c[k]) (0-based), rows
 * sorted within each column, duplicates merged: Ap (ncol + 1), Ai (<= nt), map[k] = the
 * position of entry k in Ai.  Returns nnz, or -1 when out of memory.  The sparse index-1
 * and DAE modes build their patterns with it (index1_sparse.c, dae_sparse.c). */
ptrdiff_t mb_csc_build(ptrdiff_t nr, ptrdiff_t ncol, ptrdiff_t nt, const int *r, const int *c,
                       int *Ap, int *Ai, int *map);

#endif
