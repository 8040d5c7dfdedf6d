/* Real Schur form and spectral projectors on LAPACK (spectral.h). */
#include <math.h>
#include <string.h>
#include "carve.h"
#include "spectral.h"
#include "status.h"

/* LAPACK (Fortran interface, 32-bit integers and LOGICAL as int, as in Debian's
 * liblapack3).  dgees does not reference select or bwork with sort = 'N'. */
extern void dgees_(const char *jobvs, const char *sort,
                   int (*select)(const double *, const double *),
                   const int *n, double *a, const int *lda, int *sdim, double *wr, double *wi,
                   double *vs, const int *ldvs, double *work, const int *lwork, int *bwork,
                   int *info);
extern void dtrsen_(const char *job, const char *compq, const int *select, const int *n,
                    double *t, const int *ldt, double *q, const int *ldq, double *wr, double *wi,
                    int *m, double *s, double *sep, double *work, const int *lwork, int *iwork,
                    const int *liwork, int *info);
extern void dtrsyl_(const char *trana, const char *tranb, const int *isgn, const int *m,
                    const int *n, const double *a, const int *lda, const double *b,
                    const int *ldb, double *c, const int *ldc, double *scale, int *info);

/* LAPACK workspace: dgees needs lwork >= 3n; dtrsen with job = 'N' needs n */
static ptrdiff_t lapack_lwork(ptrdiff_t n) { return 4 * (n > 0 ? n : 1); }

/* the work: dgees/dtrsen work (first: mb_schur uses only it), Y (n^2), the select copy
 * (n ints), dtrsen's iwork (1 int) */
typedef struct spectral_work {
    double *lapack, *Y;
    int *sel, *iwork;
} spectral_work;

/* The one layout of the work: counts it (c->base NULL) and carves it. */
static size_t layout(mb_carver *c, ptrdiff_t n, spectral_work *w)
{
    size_t nn = (size_t)(n > 0 ? n : 1);
    w->lapack = mb_carve(c, (size_t)lapack_lwork(n));
    w->Y = mb_carve(c, nn * nn);
    w->sel = mb_carve_int(c, nn);
    w->iwork = mb_carve_int(c, 1);
    return c->off;
}

size_t mb_spectral_work_size(ptrdiff_t n)
{
    spectral_work w;
    return layout(&(mb_carver){NULL, 0}, n, &w);
}

int mb_schur(ptrdiff_t n, double *T, ptrdiff_t ldt, double *Q, ptrdiff_t ldq, double *wr,
             double *wi, double *work)
{
    if (n < 0 || ldt < (n > 0 ? n : 1) || ldq < (n > 0 ? n : 1))
        return MB_ERR_ILL_INPUT;
    if (n == 0)
        return MB_OK;
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++)
            if (!isfinite(T[j * ldt + i]))
                return MB_ERR_LINALG;
    int nn = (int)n, lda = (int)ldt, ldv = (int)ldq, sdim = 0, info = 0;
    int lwork = (int)lapack_lwork(n);
    spectral_work w;
    layout(&(mb_carver){work, 0}, n, &w);
    dgees_("V", "N", NULL, &nn, T, &lda, &sdim, wr, wi, Q, &ldv, w.lapack, &lwork, NULL, &info);
    return info == 0 ? MB_OK : MB_ERR_LINALG;
}

int mb_projector_diag(ptrdiff_t n, double *T, ptrdiff_t ldt, double *Q, ptrdiff_t ldq,
                      const int *select, double *wr, double *wi, double *pdiag, ptrdiff_t *k,
                      double *work)
{
    if (n < 0 || ldt < (n > 0 ? n : 1) || ldq < (n > 0 ? n : 1))
        return MB_ERR_ILL_INPUT;
    *k = 0;
    if (n == 0)
        return MB_OK;
    ptrdiff_t lw = lapack_lwork(n);
    spectral_work w;
    layout(&(mb_carver){work, 0}, n, &w);
    double *Y = w.Y;
    int *sel = w.sel, *iwork = w.iwork;
    for (ptrdiff_t i = 0; i < n; i++)
        sel[i] = select[i] != 0;
    int nn = (int)n, lda = (int)ldt, ldv = (int)ldq, m = 0, info = 0, lwork = (int)lw,
        liwork = 1;
    double s = 0.0, sep = 0.0;
    dtrsen_("N", "V", sel, &nn, T, &lda, Q, &ldv, wr, wi, &m, &s, &sep, w.lapack, &lwork,
            iwork, &liwork, &info);
    if (info != 0)
        return MB_ERR_LINALG;
    *k = m;
    ptrdiff_t kk = m, r = n - kk;
    /* Y (kk x r, ld kk) solves T11 Y - Y T22 = T12 */
    if (kk > 0 && r > 0) {
        for (ptrdiff_t j = 0; j < r; j++)
            for (ptrdiff_t i = 0; i < kk; i++)
                Y[j * kk + i] = T[(kk + j) * ldt + i];
        int mk = (int)kk, mr = (int)r, isgn = -1, ldy = (int)kk;
        double scale = 1.0;
        /* info = 1: T11 and T22 have close eigenvalues, perturbed values were used */
        dtrsyl_("N", "N", &isgn, &mk, &mr, T, &lda, T + kk * ldt + kk, &lda, Y, &ldy, &scale,
                &info);
        if (info < 0 || !(scale > 0.0))
            return MB_ERR_LINALG;
        for (ptrdiff_t j = 0; j < r * kk; j++)
            Y[j] /= scale;
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        double p = 0.0;
        for (ptrdiff_t a = 0; a < kk; a++) {
            double qia = Q[a * ldq + i], acc = qia;
            for (ptrdiff_t b = 0; b < r; b++)
                acc += Y[b * kk + a] * Q[(kk + b) * ldq + i];
            p += qia * acc;
        }
        if (!isfinite(p))
            return MB_ERR_LINALG;
        pdiag[i] = p;
    }
    return MB_OK;
}
