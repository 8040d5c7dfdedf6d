/* Linear combinations of phi functions through one block exponential (phi.h). */
#include <math.h>
#include <string.h>
#include "expm.h"
#include "phi.h"
#include "status.h"

/* The one layout of the work: the block matrix K (N x N, N = m + p), exponentiated in
 * place by mb_expm with its work and pivots; counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, ptrdiff_t N, mb_expm_scratch *w)
{
    mb_expm_carve(c, N, w);
    return c->off;
}

size_t mb_phi_work_size(ptrdiff_t m, ptrdiff_t p)
{
    mb_expm_scratch w;
    return layout(&(mb_carver){NULL, 0}, m + p, &w);
}

int mb_phi_columns(ptrdiff_t m, const double *A, ptrdiff_t lda, double h, ptrdiff_t p,
                   const double *V, ptrdiff_t ldv, double *W, ptrdiff_t ldw, double *work)
{
    if (m < 0 || p < 1 || lda < (m > 0 ? m : 1) || ldv < (m > 0 ? m : 1) ||
        ldw < (m > 0 ? m : 1))
        return MB_ERR_ILL_INPUT;
    if (m == 0)
        return MB_OK;
    double mx = 0.0;
    for (ptrdiff_t j = 0; j < p; j++)
        for (ptrdiff_t i = 0; i < m; i++)
            mx = fmax(mx, fabs(V[j * ldv + i]));
    if (!isfinite(mx))
        return MB_ERR_LINALG;
    if (mx == 0.0) {
        for (ptrdiff_t j = 0; j < p; j++)
            memset(W + j * ldw, 0, (size_t)m * sizeof(double));
        return MB_OK;
    }
    int e;
    frexp(mx, &e);
    double c = ldexp(1.0, e), ic = 1.0 / c;  /* the power of two above mx */
    ptrdiff_t N = m + p;
    mb_expm_scratch w;
    layout(&(mb_carver){work, 0}, N, &w);
    double *K = w.M;
    memset(K, 0, (size_t)(N * N) * sizeof(double));
    for (ptrdiff_t j = 0; j < m; j++)
        for (ptrdiff_t i = 0; i < m; i++)
            K[j * N + i] = h * A[j * lda + i];
    for (ptrdiff_t j = 0; j < p; j++) {
        for (ptrdiff_t i = 0; i < m; i++)
            K[(m + j) * N + i] = V[j * ldv + i] * ic;
        if (j + 1 < p)
            K[(m + j + 1) * N + m + j] = 1.0;
    }
    int rc = mb_expm(N, K, N, K, N, w.work, w.ipiv, NULL);
    if (rc != MB_OK)
        return MB_ERR_LINALG;
    for (ptrdiff_t j = 0; j < p; j++)
        for (ptrdiff_t i = 0; i < m; i++)
            W[j * ldw + i] = c * K[(m + j) * N + i];
    return MB_OK;
}
