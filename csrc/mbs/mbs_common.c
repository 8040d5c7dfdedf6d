/* Helpers shared by csrc/mbs (mbs_common.h). */
#include "mbs_common.h"
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../linalg/dense.h" /* LU */
#include "status.h"

int mb_msg_fail(char *msg, size_t len, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return code;
}

double mb_norm_inf(ptrdiff_t n, const double *x)
{
    double r = 0;
    for (ptrdiff_t i = 0; i < n; i++) r = fmax(r, fabs(x[i]));
    return r;
}

double mb_fd_step(double x)
{
    return cbrt(DBL_EPSILON) * fmax(1.0, fabs(x));
}

int mb_lu_factor_scaled(ptrdiff_t n, double *A, ptrdiff_t lda, double *d, int *ipiv,
                        ptrdiff_t *bad)
{
    for (ptrdiff_t k = 0; k < n; k++) {
        double r = 0;
        for (ptrdiff_t l = 0; l < n; l++) {
            double v = fabs(A[k + lda * l]);
            r = v > r ? v : r;
        }
        if (!(r > 0)) {
            *bad = k;
            return MB_ERR_LINALG;
        }
        d[k] = 1.0 / sqrt(r);
    }
    for (ptrdiff_t l = 0; l < n; l++)
        for (ptrdiff_t k = 0; k < n; k++) A[k + lda * l] *= d[k] * d[l];
    int rc = mb_lu_factor(n, A, lda, ipiv);
    double umax = 0, umin = INFINITY;
    ptrdiff_t kmin = 0;
    for (ptrdiff_t k = 0; k < n; k++) {
        double u = fabs(A[k + lda * k]);
        umax = u > umax ? u : umax;
        if (!(u >= umin)) {  /* also catches NaN */
            umin = u;
            kmin = k;
        }
    }
    if (rc != MB_OK || !(umin > 64.0 * (double)n * DBL_EPSILON * umax)) {
        *bad = kmin;
        return MB_ERR_LINALG;
    }
    return MB_OK;
}

int mb_lu_solve_scaled(ptrdiff_t n, const double *LU, ptrdiff_t lda, const double *d,
                       const int *ipiv, double *B, ptrdiff_t nrhs)
{
    for (ptrdiff_t c = 0; c < nrhs; c++)
        for (ptrdiff_t k = 0; k < n; k++) B[k + n * c] *= d[k];
    int rc = mb_lu_solve(n, LU, lda, ipiv, B, nrhs);
    for (ptrdiff_t c = 0; c < nrhs; c++)
        for (ptrdiff_t k = 0; k < n; k++) B[k + n * c] *= d[k];
    return rc;
}

/* Compressed columns of an nr x ncol matrix from nt entries (r[k], c[k]), rows sorted
 * within each column, duplicates merged: Ap (ncol + 1), Ai (<= nt), map[k] = the
 * position of entry k.  Returns nnz, or -1 when out of memory. */
ptrdiff_t mb_csc_build(ptrdiff_t nr, ptrdiff_t ncol, ptrdiff_t nt, const int *r, const int *c,
                       int *Ap, int *Ai, int *map)
{
    ptrdiff_t nmax = nr > ncol ? nr : ncol;
    ptrdiff_t *cnt = calloc((size_t)nmax + 1, sizeof *cnt);
    ptrdiff_t *o1 = malloc(((size_t)nt + 1) * sizeof *o1), *o2 = malloc(((size_t)nt + 1) * sizeof *o2);
    if (!cnt || !o1 || !o2) {
        free(cnt); free(o1); free(o2);
        return -1;
    }
    /* stable counting sort by row, then by column */
    for (ptrdiff_t k = 0; k < nt; k++) cnt[r[k] + 1]++;
    for (ptrdiff_t i = 0; i < nr; i++) cnt[i + 1] += cnt[i];
    for (ptrdiff_t k = 0; k < nt; k++) o1[cnt[r[k]]++] = k;
    memset(cnt, 0, ((size_t)nmax + 1) * sizeof *cnt);
    for (ptrdiff_t k = 0; k < nt; k++) cnt[c[k] + 1]++;
    for (ptrdiff_t j = 0; j < ncol; j++) cnt[j + 1] += cnt[j];
    for (ptrdiff_t m = 0; m < nt; m++) {
        ptrdiff_t k = o1[m];
        o2[cnt[c[k]]++] = k;
    }
    ptrdiff_t nz = 0, m = 0;
    for (ptrdiff_t j = 0; j < ncol; j++) {
        Ap[j] = (int)nz;
        int last = -1;
        for (; m < nt && c[o2[m]] == j; m++) {
            ptrdiff_t k = o2[m];
            if (r[k] != last) {
                Ai[nz++] = r[k];
                last = r[k];
            }
            map[k] = (int)(nz - 1);
        }
    }
    Ap[ncol] = (int)nz;
    free(cnt); free(o1); free(o2);
    return nz;
}
