#include "dense.h"
#include "status.h"

/* LAPACK / BLAS (Fortran interface, 32-bit integers as in Debian's liblapack3) */
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info);
extern void zgetrf_(const int *m, const int *n, double complex *a, const int *lda, int *ipiv,
                    int *info);
extern void zgetrs_(const char *trans, const int *n, const int *nrhs, const double complex *a,
                    const int *lda, const int *ipiv, double complex *b, const int *ldb,
                    int *info);
extern void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *b,
                   const int *ldb, const double *beta, double *c, const int *ldc);
extern void dgemv_(const char *t, const int *m, const int *n, const double *alpha,
                   const double *a, const int *lda, const double *x, const int *incx,
                   const double *beta, double *y, const int *incy);

int mb_lu_factor(ptrdiff_t n, double *A, ptrdiff_t lda, int *ipiv)
{
    int nn = (int)n, ld = (int)lda, info = 0;
    if (n == 0)
        return MB_OK;
    dgetrf_(&nn, &nn, A, &ld, ipiv, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

int mb_lu_solve(ptrdiff_t n, const double *LU, ptrdiff_t lda, const int *ipiv, double *b,
                ptrdiff_t nrhs)
{
    int nn = (int)n, ld = (int)lda, nr = (int)nrhs, info = 0;
    if (n == 0)
        return MB_OK;
    dgetrs_("N", &nn, &nr, LU, &ld, ipiv, b, &nn, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

int mb_zlu_factor(ptrdiff_t n, double complex *A, ptrdiff_t lda, int *ipiv)
{
    int nn = (int)n, ld = (int)lda, info = 0;
    if (n == 0)
        return MB_OK;
    zgetrf_(&nn, &nn, A, &ld, ipiv, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

int mb_zlu_solve(ptrdiff_t n, const double complex *LU, ptrdiff_t lda, const int *ipiv,
                 double complex *b, ptrdiff_t nrhs)
{
    int nn = (int)n, ld = (int)lda, nr = (int)nrhs, info = 0;
    if (n == 0)
        return MB_OK;
    zgetrs_("N", &nn, &nr, LU, &ld, ipiv, b, &nn, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

void mb_gemm(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, double alpha, const double *A, ptrdiff_t lda,
             const double *B, ptrdiff_t ldb, double beta, double *C, ptrdiff_t ldc)
{
    int mm = (int)m, nn = (int)n, kk = (int)k, la = (int)lda, lb = (int)ldb, lc = (int)ldc;
    if (m == 0 || n == 0)
        return;
    dgemm_("N", "N", &mm, &nn, &kk, &alpha, A, &la, B, &lb, &beta, C, &lc);
}

void mb_gemv(ptrdiff_t m, ptrdiff_t n, double alpha, const double *A, ptrdiff_t lda,
             const double *x, double beta, double *y)
{
    int mm = (int)m, nn = (int)n, la = (int)lda, one = 1;
    if (m == 0)
        return;
    dgemv_("N", &mm, &nn, &alpha, A, &la, x, &one, &beta, y, &one);
}
