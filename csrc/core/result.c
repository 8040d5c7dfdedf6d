#include <stdlib.h>
#include <string.h>
#include "result.h"
#include "status.h"

/* grow *p (elements of size sz) so that it holds at least need; cap doubles */
static int grow(void **p, ptrdiff_t *cap, ptrdiff_t need, size_t sz)
{
    if (need <= *cap)
        return MB_OK;
    ptrdiff_t c = *cap > 0 ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * sz);
    if (!q)
        return MB_ERR_MEM;
    *p = q;
    *cap = c;
    return MB_OK;
}

int mb_result_init(mb_result *r, ptrdiff_t n, ptrdiff_t n_events)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->n_events = n_events;
    if (n_events > 0) {
        r->ev_count = calloc((size_t)n_events, sizeof *r->ev_count);
        r->ev_cap = calloc((size_t)n_events, sizeof *r->ev_cap);
        r->ev_t = calloc((size_t)n_events, sizeof *r->ev_t);
        r->ev_y = calloc((size_t)n_events, sizeof *r->ev_y);
        if (!r->ev_count || !r->ev_cap || !r->ev_t || !r->ev_y)
            return MB_ERR_MEM;
    }
    return MB_OK;
}

void mb_result_free(mb_result *r)
{
    free(r->t); free(r->y);
    free(r->d_t); free(r->d_h); free(r->d_deg); free(r->d_off); free(r->d_c);
    free(r->hist_t); free(r->hist_h); free(r->hist_err);
    for (ptrdiff_t i = 0; i < r->n_events; i++) {
        if (r->ev_t) free(r->ev_t[i]);
        if (r->ev_y) free(r->ev_y[i]);
    }
    free(r->ev_t); free(r->ev_y); free(r->ev_count); free(r->ev_cap);
    ptrdiff_t n = r->n;
    memset(r, 0, sizeof *r);
    r->n = n;
}

int mb_result_push_point(mb_result *r, double t, const double *y)
{
    ptrdiff_t cap = r->cap_t;
    if (grow((void **)&r->t, &cap, r->nt + 1, sizeof *r->t))
        return MB_ERR_MEM;
    ptrdiff_t capy = r->cap_t;
    if (grow((void **)&r->y, &capy, r->nt + 1, (size_t)r->n * sizeof *r->y))
        return MB_ERR_MEM;
    r->cap_t = cap < capy ? cap : capy;
    r->t[r->nt] = t;
    memcpy(r->y + r->nt * r->n, y, (size_t)r->n * sizeof *y);
    r->nt++;
    return MB_OK;
}

/* one dense segment: degree deg (-1: record) and len doubles of data */
static int push_segment(mb_result *r, double t, double h, int deg, const double *C,
                        ptrdiff_t len)
{
    ptrdiff_t k = r->nsteps_d, c1 = r->cap_d, c2 = r->cap_d, c3 = r->cap_d, c4 = r->cap_d;
    if (grow((void **)&r->d_t, &c1, k + 1, sizeof(double)) ||
        grow((void **)&r->d_h, &c2, k + 1, sizeof(double)) ||
        grow((void **)&r->d_deg, &c3, k + 1, sizeof(int)) ||
        grow((void **)&r->d_off, &c4, k + 1, sizeof(ptrdiff_t)))
        return MB_ERR_MEM;
    r->cap_d = c1;
    if (grow((void **)&r->d_c, &r->cap_c, r->len_c + len, sizeof(double)))
        return MB_ERR_MEM;
    r->d_t[k] = t;
    r->d_h[k] = h;
    r->d_deg[k] = deg;
    r->d_off[k] = r->len_c;
    memcpy(r->d_c + r->len_c, C, (size_t)len * sizeof *C);
    r->len_c += len;
    r->nsteps_d++;
    return MB_OK;
}

int mb_result_push_dense(mb_result *r, double t, double h, int deg, const double *C)
{
    return push_segment(r, t, h, deg, C, (ptrdiff_t)(deg + 1) * r->n);
}

int mb_result_push_record(mb_result *r, double t, double h, const double *rec, ptrdiff_t len)
{
    r->d_rec_len = len;
    return push_segment(r, t, h, -1, rec, len);
}

int mb_result_push_event(mb_result *r, ptrdiff_t i, double t, const double *y)
{
    ptrdiff_t k = r->ev_count[i], c1 = r->ev_cap[i], c2 = r->ev_cap[i];
    if (grow((void **)&r->ev_t[i], &c1, k + 1, sizeof(double)) ||
        grow((void **)&r->ev_y[i], &c2, k + 1, (size_t)r->n * sizeof(double)))
        return MB_ERR_MEM;
    r->ev_cap[i] = c1;
    r->ev_t[i][k] = t;
    memcpy(r->ev_y[i] + k * r->n, y, (size_t)r->n * sizeof *y);
    r->ev_count[i]++;
    return MB_OK;
}

int mb_result_push_hist(mb_result *r, double t, double h, double err)
{
    ptrdiff_t k = r->n_hist, c1 = r->cap_hist, c2 = r->cap_hist, c3 = r->cap_hist;
    if (grow((void **)&r->hist_t, &c1, k + 1, sizeof(double)) ||
        grow((void **)&r->hist_h, &c2, k + 1, sizeof(double)) ||
        grow((void **)&r->hist_err, &c3, k + 1, sizeof(double)))
        return MB_ERR_MEM;
    r->cap_hist = c1;
    r->hist_t[k] = t;
    r->hist_h[k] = h;
    r->hist_err[k] = err;
    r->n_hist++;
    return MB_OK;
}

void mb_result_truncate(mb_result *res, double t, double dir, ptrdiff_t *hits)
{
    while (res->nt > 0 && dir * (res->t[res->nt - 1] - t) > 0)
        res->nt--;
    while (res->n_hist > 0 && dir * (res->hist_t[res->n_hist - 1] - t) > 0)
        res->n_hist--;
    for (ptrdiff_t i = 0; i < res->n_events; i++)
        while (res->ev_count[i] > 0 && dir * (res->ev_t[i][res->ev_count[i] - 1] - t) > 0) {
            res->ev_count[i]--;
            if (hits && hits[i] > 0)
                hits[i]--;
        }
    while (res->nsteps_d > 0 && dir * (res->d_t[res->nsteps_d - 1] - t) >= 0) {
        res->nsteps_d--;
        res->len_c = res->d_off[res->nsteps_d];
    }
}
