#ifndef MB_LINALG_DENSE_H
#define MB_LINALG_DENSE_H
/* Dense LU factorizations and solves on LAPACK (dgetrf/dgetrs, zgetrf/zgetrs).
 * Matrices are column-major with leading dimension lda.  ipiv has n entries.
 * Return MB_OK, or MB_ERR_LINALG when the matrix is exactly singular. */
#include <complex.h>
#include <stddef.h>

int mb_lu_factor(ptrdiff_t n, double *A, ptrdiff_t lda, int *ipiv);
/* solve A x = b in place for nrhs right-hand sides (b is n x nrhs, ld n) */
int mb_lu_solve(ptrdiff_t n, const double *LU, ptrdiff_t lda, const int *ipiv, double *b,
                ptrdiff_t nrhs);
/* solve A^T x = b in place with the factors of A (nrhs right-hand sides, ld n) */
int mb_lu_solve_t(ptrdiff_t n, const double *LU, ptrdiff_t lda, const int *ipiv, double *b,
                  ptrdiff_t nrhs);
int mb_zlu_factor(ptrdiff_t n, double complex *A, ptrdiff_t lda, int *ipiv);
int mb_zlu_solve(ptrdiff_t n, const double complex *LU, ptrdiff_t lda, const int *ipiv,
                 double complex *b, ptrdiff_t nrhs);
/* C = alpha A B + beta C for column-major A (m x k), B (k x n), C (m x n) (dgemm) */
void mb_gemm(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, double alpha, const double *A, ptrdiff_t lda,
             const double *B, ptrdiff_t ldb, double beta, double *C, ptrdiff_t ldc);
/* the min(m, n) singular values of A (m x n, leading dimension lda; destroyed) into s,
 * in descending order (dgesvd, no singular vectors); MB_ERR_LINALG when they do not
 * converge (or A is not finite), MB_ERR_MEM */
int mb_singular_values(ptrdiff_t m, ptrdiff_t n, double *A, ptrdiff_t lda, double *s);
/* y = alpha A x + beta y (dgemv), A m x n */
void mb_gemv(ptrdiff_t m, ptrdiff_t n, double alpha, const double *A, ptrdiff_t lda,
             const double *x, double beta, double *y);
#endif
