/* Dependent rows from the envelope LDL^T of a Gram matrix (envelope.h). */
#include "envelope.h"
#include <math.h>
#include <stdlib.h>
#include "status.h"

int mb_gram_dependent(ptrdiff_t m, const ptrdiff_t *indptr, const ptrdiff_t *indices,
                      const double *data, double rtol2, unsigned char *dep, ptrdiff_t *rank)
{
    if (m < 0 || !(rtol2 >= 0.0))
        return MB_ERR_ILL_INPUT;
    *rank = 0;
    if (m == 0)
        return MB_OK;
    /* first[i]: the first column of row i's envelope; start[i]: where row i's entries
     * (columns first[i] .. i) begin in env */
    ptrdiff_t *first = malloc((size_t)m * sizeof *first);
    ptrdiff_t *start = malloc((size_t)(m + 1) * sizeof *start);
    double *d = malloc((size_t)m * sizeof *d);
    double *env = NULL;
    int rc = MB_OK;
    if (!first || !start || !d) {
        rc = MB_ERR_MEM;
        goto done;
    }
    start[0] = 0;
    for (ptrdiff_t i = 0; i < m; i++) {
        ptrdiff_t f = i;
        for (ptrdiff_t p = indptr[i]; p < indptr[i + 1]; p++) {
            ptrdiff_t j = indices[p];
            if (j < 0 || j >= m) {
                rc = MB_ERR_ILL_INPUT;
                goto done;
            }
            if (j < f)
                f = j;
        }
        first[i] = f;
        start[i + 1] = start[i] + (i - f + 1);
    }
    env = calloc((size_t)start[m] + 1, sizeof *env);
    if (!env) {
        rc = MB_ERR_MEM;
        goto done;
    }
    for (ptrdiff_t i = 0; i < m; i++)
        for (ptrdiff_t p = indptr[i]; p < indptr[i + 1]; p++)
            if (indices[p] <= i)
                env[start[i] + indices[p] - first[i]] += data[p];
    /* row by row: L_ij = (G_ij - sum_k L_ik d_k L_jk) / d_j for first[i] <= j < i (0 for
     * a dependent j), then d_i = G_ii - sum_k L_ik^2 d_k; env holds L (unit diagonal
     * implied) below the diagonal and G_ii on it until d_i replaces it */
    for (ptrdiff_t i = 0; i < m; i++) {
        double *Li = env + start[i] - first[i];  /* Li[j] = entry (i, j) */
        double gii = Li[i];
        if (!(gii >= 0.0) || !isfinite(gii)) {
            rc = MB_ERR_ILL_INPUT;
            goto done;
        }
        double s_ii = 0.0;
        for (ptrdiff_t j = first[i]; j < i; j++) {
            double lij = 0.0;
            if (!dep[j] && d[j] > 0.0) {
                const double *Lj = env + start[j] - first[j];
                ptrdiff_t k0 = first[i] > first[j] ? first[i] : first[j];
                double s = Li[j];
                for (ptrdiff_t k = k0; k < j; k++)
                    s -= Li[k] * d[k] * Lj[k];
                lij = s / d[j];
            }
            Li[j] = lij;
            s_ii += lij * lij * (dep[j] ? 0.0 : d[j]);
        }
        double di = gii - s_ii;
        if (di <= rtol2 * gii) {  /* also a zero row: gii = 0 */
            dep[i] = 1;
            d[i] = 0.0;
            for (ptrdiff_t j = first[i]; j < i; j++)
                Li[j] = 0.0;
        } else {
            dep[i] = 0;
            d[i] = di;
            ++*rank;
        }
        Li[i] = d[i];
    }
done:
    free(first);
    free(start);
    free(d);
    free(env);
    return rc;
}
