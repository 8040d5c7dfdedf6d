#ifndef MB_TESTS_SPATIAL_FIXTURE_H
#define MB_TESTS_SPATIAL_FIXTURE_H
/* Spatial test models for the C tests of the sparse kernels and formulations
 * (test_spatial_sparse.c, test_dae_sparse.c): a model in fixed-size tables (tmodel) of up
 * to MAXB bodies, its constraints and force elements added one by one with fixed
 * geometry (tm_con, tm_force), every constraint and force type among three bodies and
 * the ground (build_zoo), a state away from consistency (state) and the relative
 * difference of two arrays (rel_diff).  Functions are static inline: a test that does
 * not use one pays nothing. */
#include <math.h>
#include <string.h>
#include "spatial.h"

#define MAXB 3
#define MAXQ (7 * MAXB)
#define MAXC 16
#define MAXN (MAXQ + MAXC)

typedef struct tmodel {
    double body[7 * MAXB];
    mb_spatial_con cons[6];
    mb_spatial_force forces[6];
    mb_spatial_cbforce cb[1];
    mb_spatial_model m;
} tmodel;

static inline void setv(double *d, double x, double y, double z) { d[0] = x; d[1] = y; d[2] = z; }

static inline void tm_init(tmodel *T, int nb)
{
    memset(T, 0, sizeof *T);
    for (int b = 0; b < nb; b++) {
        double *x = T->body + 7 * b;
        x[0] = 1.0 + 0.3 * b;
        setv(x + 1, 0.2 + 0.05 * b, 0.25, 0.3 - 0.02 * b);
        setv(x + 4, 0.01 * b, -0.005, 0.002);
    }
    T->m = (mb_spatial_model){nb, T->body, {0.3, -0.2, -9.81}, 0, T->cons, nb, 0, T->forces,
                              0, T->cb};
}

static inline mb_spatial_con *tm_con(tmodel *T, int type, int i, int j)
{
    mb_spatial_con *C = &T->cons[T->m.ncon++];
    C->type = type;
    C->i = i;
    C->j = j;
    C->row = T->m.nc;
    T->m.nc += mb_spatial_con_rows(type);
    setv(C->ai, 1, 0, 0); setv(C->bi, 0, 1, 0); setv(C->aj, 0, 0.6, 0.8);
    setv(C->si, 0.1, 0.2, -0.3); setv(C->sj, -0.2, 0.1, 0.25);
    return C;
}

static inline mb_spatial_force *tm_force(tmodel *T, int type, int i, int j)
{
    mb_spatial_force *F = &T->forces[T->m.nf++];
    F->type = type;
    F->i = i;
    F->j = j;
    setv(F->si, 0.1, -0.1, 0.2); setv(F->sj, -0.3, 0.2, 0.1);
    setv(F->ai, 0, 0, 1); setv(F->bi, 1, 0, 0); setv(F->aj, 0, 0.8, 0.6); setv(F->bj, 1, 0, 0);
    F->k = 300.0;
    F->c = 4.0;
    F->L0 = 0.2;
    F->wheel_r = 0.3;
    return F;
}

/* every constraint and force type among three bodies and the ground */
static inline void build_zoo(tmodel *T)
{
    tm_init(T, 3);
    tm_con(T, MB_SC_DOT1, 0, 1);
    tm_con(T, MB_SC_DOT2, -1, 2)->f = (mb_timefn){0.1, 0.4, 0.2, 0.1, 3.0, 0.2};
    tm_con(T, MB_SC_POINT, -1, 0);
    tm_con(T, MB_SC_DIST, 1, 2)->f.c0 = 0.8;
    tm_con(T, MB_SC_ANGLE, 0, 2)->f = (mb_timefn){0.2, 0.7, -0.3, 0.2, 2.0, 0.4};
    tm_force(T, MB_SF_TSDA, 0, 1);
    tm_force(T, MB_SF_RSDA, 1, 2);
    tm_force(T, MB_SF_BUSHING_T, -1, 0);
    tm_force(T, MB_SF_BUSHING_R, 0, 2);
    tm_force(T, MB_SF_TIRE, 2, -1)->z0 = -2.0;
}

static inline void state(const tmodel *T, double *q, double *qd, double *x, double *lam)
{
    int nb = T->m.nb;
    for (int b = 0; b < nb; b++) {
        double *p = q + 7 * b + 3, n = 0;
        setv(q + 7 * b, 0.3 * b - 0.1, 0.2 * sin(b + 1.0), 0.1 * b);
        for (int a = 0; a < 4; a++) n += (p[a] = 0.3 + 0.2 * cos(2.1 * b + 1.3 * a));
        (void)n;
    }
    for (int k = 0; k < 7 * nb; k++) {
        qd[k] = 0.4 * sin(1.7 * k + 0.3);
        x[k] = 0.6 * cos(0.9 * k + 0.1);
    }
    for (int k = 0; k < T->m.nc; k++) lam[k] = 2.0 * sin(1.1 * k + 0.7);
}

static inline double rel_diff(ptrdiff_t n, const double *a, const double *b)
{
    double d = 0, s = 0;
    for (ptrdiff_t k = 0; k < n; k++) {
        d = fmax(d, fabs(a[k] - b[k]));
        s = fmax(s, fmax(fabs(a[k]), fabs(b[k])));
    }
    return d / fmax(s, 1.0);
}

#endif
