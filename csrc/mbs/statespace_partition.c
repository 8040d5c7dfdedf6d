/* The partition of the state-space formulation (statespace.h, mb_ss_partition; RN eq 6):
 * Gauss-Jordan elimination with full pivoting on Phi_q in the dense mode (the pivot
 * columns are the dependent coordinates; optional column weights pivot_w rank the
 * candidate pivots by |a_ij| w_j, entries below rank_tol max|Phi_q| never qualify), the
 * sparse LU of Phi_q^T with row pivoting in the sparse mode (statespace_sparse.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "mbs_common.h"
#include "statespace.h"
#include "statespace_sparse.h"
#include "status.h"

int mb_ss_partition(mb_ss *s, double t, const double *q, unsigned long long *bad_rows)
{
    const mb_mech *me = s->mech;
    ptrdiff_t nq = s->nq, nc = s->nc, nd = s->nd;
    if (bad_rows) *bad_rows = 0;
    s->msg[0] = '\0';
    if (nc == 0) {
        for (ptrdiff_t i = 0; i < nd; i++) s->indep[i] = (int)i;
        return MB_OK;
    }
    if (s->sp) {
        int rc = mb_ss_sparse_partition(s->sp, t, q, s->pivot_w, s->rank_tol, s->indep, s->dep,
                                        bad_rows, s->msg, sizeof s->msg);
        return rc != MB_OK ? rc : mb_ss_sparse_use(s->sp, s->indep, s->dep);
    }
    double *A = s->GJ;
    int rc = me->phi_q(t, q, A, nc, me->ctx);
    if (rc != 0) return rc;
    double scale = 0;
    for (ptrdiff_t l = 0; l < nc * nq; l++) {
        if (!isfinite(A[l]))
            return MB_FAIL(s, MB_ERR_NONFINITE, "Phi_q is not finite at t = %.17g.", t);
        scale = fmax(scale, fabs(A[l]));
    }
    int *row = s->gj_row, *mark = s->mark;
    for (ptrdiff_t k = 0; k < nc; k++) row[k] = (int)k;
    for (ptrdiff_t j = 0; j < nq; j++) mark[j] = 0;
    for (ptrdiff_t k = 0; k < nc; k++) {
        /* full pivoting: the largest entry among the remaining rows and columns */
        double best = -1;
        ptrdiff_t bi = k, bj = -1;
        double bestw = -1;
        for (ptrdiff_t i = k; i < nc; i++)
            for (ptrdiff_t j = 0; j < nq; j++) {
                double a = fabs(A[row[i] + nc * j]);
                if (mark[j] || !(a > s->rank_tol * scale))
                    continue;
                double aw = s->pivot_w ? a * s->pivot_w[j] : a;
                if (aw > bestw) {
                    bestw = aw;
                    best = a;
                    bi = i;
                    bj = j;
                }
            }
        if (!(best > s->rank_tol * scale) || bj < 0) {
            /* rows k..nc-1 depend on the pivot rows */
            char list[160];
            size_t len = 0;
            list[0] = '\0';
            for (ptrdiff_t i = k; i < nc && len < sizeof list - 16; i++) {
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", i > k ? ", " : "",
                                        row[i]);
                if (bad_rows && row[i] < 64) *bad_rows |= 1ull << row[i];
            }
            return MB_FAIL(s, MB_ERR_LINALG,
                        "No nonsingular Phi_u exists at t = %.17g: Phi_q has rank %td < nc = %td "
                        "(redundant constraints or a singular configuration); dependent rows: %s.",
                        t, k, nc, list);
        }
        int tmp = row[k]; row[k] = row[bi]; row[bi] = tmp;
        mark[bj] = 1;
        ptrdiff_t p = row[k];
        double piv = A[p + nc * bj];
        for (ptrdiff_t j = 0; j < nq; j++) A[p + nc * j] /= piv;
        for (ptrdiff_t i = 0; i < nc; i++) {
            if (i == p) continue;
            double f = A[i + nc * bj];
            if (f != 0.0)
                for (ptrdiff_t j = 0; j < nq; j++) A[i + nc * j] -= f * A[p + nc * j];
        }
    }
    ptrdiff_t ni = 0, nu = 0;
    for (ptrdiff_t j = 0; j < nq; j++) {
        if (mark[j]) s->dep[nu++] = (int)j;
        else s->indep[ni++] = (int)j;
    }
    return MB_OK;
}
