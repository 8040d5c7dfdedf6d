/* Sensors: quantities of the motion at the output times (sensors.h).
 *
 * One routine for both dimensions: a planar body is taken as a spatial one in the
 * plane z = 0, r = (x, y, 0), A the rotation by theta about z, w = (0, 0, theta'),
 * alpha = (0, 0, theta''); its vector sensors report the x and y components, its
 * angular ones the z component.  Nothing is stored between calls. */
#include <math.h>
#include <string.h>
#include "sensors.h"
#include "assemble.h"
#include "spatial.h"
#include "status.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *const col_names[MB_SENSOR_NCOL] = {
#define MB_SENSOR_NAME(id, name) name,
    MB_SENSOR_COLUMNS(MB_SENSOR_NAME)
#undef MB_SENSOR_NAME
};

const char *mb_sensor_col_name(int c)
{
    return c >= 0 && c < MB_SENSOR_NCOL ? col_names[c] : NULL;
}

int mb_sensor_ncomp(const double *row)
{
    int kind = (int)row[MB_SC_COL_KIND], dim = (int)row[MB_SC_COL_DIM];
    if (dim != 2 && dim != 3) return -1;
    switch (kind) {
    case MB_SENSOR_POSITION:
    case MB_SENSOR_VELOCITY:
    case MB_SENSOR_ACCELERATION: return dim;
    case MB_SENSOR_ANGULAR_VELOCITY:
    case MB_SENSOR_ANGULAR_ACCELERATION: return dim == 2 ? 1 : 3;
    case MB_SENSOR_RELATIVE_ANGLE:
    case MB_SENSOR_RELATIVE_RATE:
    case MB_SENSOR_DISTANCE:
    case MB_SENSOR_DISTANCE_RATE:
    case MB_SENSOR_TSDA:
    case MB_SENSOR_RSDA: return 1;
    case MB_SENSOR_CONTACT_LINE:
    case MB_SENSOR_CONTACT_CIRCLES: return dim == 2 ? 1 : -1;
    case MB_SENSOR_TIRE: return dim == 3 ? 1 : -1;
    default: return -1;
    }
}

/* the motion of one body at one time */
typedef struct kin {
    double r[3], v[3], a[3];  /* centre of mass: position, velocity, acceleration */
    double A[3][3];           /* rotation (body to ground) */
    double w[3], al[3];       /* angular velocity and acceleration (ground frame) */
    double th, thd;           /* planar: theta, theta' */
} kin;

static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void rot(const double A[3][3], const double s[3], double u[3])
{
    for (int r = 0; r < 3; r++) u[r] = A[r][0] * s[0] + A[r][1] * s[1] + A[r][2] * s[2];
}

static void rot_t(const double A[3][3], const double s[3], double u[3])
{
    for (int r = 0; r < 3; r++) u[r] = A[0][r] * s[0] + A[1][r] * s[1] + A[2][r] * s[2];
}

/* 2 E(p) x = 2 (e0 x_e - x0 e + e x x_e) */
static void two_E(const double *p, const double *x, double out[3])
{
    double c[3];
    cross(p + 1, x + 1, c);
    for (int r = 0; r < 3; r++) out[r] = 2.0 * (p[0] * x[1 + r] - x[0] * p[1 + r] + c[r]);
}

/* the motion of body b (-1: the ground) at time index k (component-major arrays) */
static void body_kin(int dim, int b, ptrdiff_t k, ptrdiff_t m, const double *q, const double *qd,
                     const double *qdd, kin *s)
{
    memset(s, 0, sizeof *s);
    s->A[0][0] = s->A[1][1] = s->A[2][2] = 1.0;
    if (b < 0) return;
    if (dim == 2) {
        ptrdiff_t o = 3 * (ptrdiff_t)b;
        for (int c = 0; c < 2; c++) {
            s->r[c] = q[(o + c) * m + k];
            s->v[c] = qd[(o + c) * m + k];
            s->a[c] = qdd[(o + c) * m + k];
        }
        s->th = q[(o + 2) * m + k];
        s->thd = s->w[2] = qd[(o + 2) * m + k];
        s->al[2] = qdd[(o + 2) * m + k];
        double cs = cos(s->th), sn = sin(s->th);
        s->A[0][0] = cs;
        s->A[0][1] = -sn;
        s->A[1][0] = sn;
        s->A[1][1] = cs;
        return;
    }
    ptrdiff_t o = 7 * (ptrdiff_t)b;
    double p[4], pd[4], pdd[4];
    for (int c = 0; c < 3; c++) {
        s->r[c] = q[(o + c) * m + k];
        s->v[c] = qd[(o + c) * m + k];
        s->a[c] = qdd[(o + c) * m + k];
    }
    for (int c = 0; c < 4; c++) {
        p[c] = q[(o + 3 + c) * m + k];
        pd[c] = qd[(o + 3 + c) * m + k];
        pdd[c] = qdd[(o + 3 + c) * m + k];
    }
    /* A = (e0^2 - e.e) I + 2 e e^T + 2 e0 e~ (spatial.h) */
    const double *e = p + 1;
    double d = p[0] * p[0] - dot(e, e);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) s->A[r][c] = (r == c ? d : 0.0) + 2.0 * e[r] * e[c];
    s->A[0][1] -= 2.0 * p[0] * e[2];
    s->A[1][0] += 2.0 * p[0] * e[2];
    s->A[0][2] += 2.0 * p[0] * e[1];
    s->A[2][0] -= 2.0 * p[0] * e[1];
    s->A[1][2] -= 2.0 * p[0] * e[0];
    s->A[2][1] += 2.0 * p[0] * e[0];
    two_E(p, pd, s->w);
    two_E(p, pdd, s->al);
}

/* position, velocity and acceleration of the body point s (body frame) */
static void point_kin(const kin *b, const double s[3], double P[3], double V[3], double Acc[3])
{
    double u[3], wu[3], au[3], wwu[3];
    rot(b->A, s, u);
    cross(b->w, u, wu);
    cross(b->al, u, au);
    cross(b->w, wu, wwu);
    for (int c = 0; c < 3; c++) {
        P[c] = b->r[c] + u[c];
        V[c] = b->v[c] + wu[c];
        Acc[c] = b->a[c] + au[c] + wwu[c];
    }
}

/* x wrapped to (-pi, pi] */
static double wrap_pi(double x)
{
    return x - 2 * M_PI * ceil((x - M_PI) / (2 * M_PI));
}

/* spatial relative angle theta = atan2(a_j . b_i, a_j . a_i) and its rate */
static void spatial_angle(const double *row, const kin *bi, const kin *bj, double *th,
                          double *thd)
{
    double ai[3], vi[3], aj[3], dai[3], dbi[3], daj[3];
    rot(bi->A, row + MB_SC_COL_AI, ai);
    rot(bi->A, row + MB_SC_COL_BI, vi);
    rot(bj->A, row + MB_SC_COL_AJ, aj);
    cross(bi->w, ai, dai);
    cross(bi->w, vi, dbi);
    cross(bj->w, aj, daj);
    double a = dot(aj, vi), b = dot(aj, ai), rho = a * a + b * b;
    double ad = dot(daj, vi) + dot(aj, dbi), bd = dot(daj, ai) + dot(aj, dai);
    *th = atan2(a, b);
    *thd = rho > 0 ? (b * ad - a * bd) / rho : 0.0;
}

/* the distance l = |P_j - P_i| and its rate between si on i and sj on j */
static void distance(const double *row, const kin *bi, const kin *bj, double *l, double *ld)
{
    double Pi[3], Vi[3], Ai[3], Pj[3], Vj[3], Aj[3], d[3], dv[3];
    point_kin(bi, row + MB_SC_COL_SI, Pi, Vi, Ai);
    point_kin(bj, row + MB_SC_COL_SJ, Pj, Vj, Aj);
    for (int c = 0; c < 3; c++) {
        d[c] = Pj[c] - Pi[c];
        dv[c] = Vj[c] - Vi[c];
    }
    *l = sqrt(dot(d, d));
    *ld = *l > 0 ? dot(d, dv) / *l : 0.0;
}

static double timefn(const double *row, double t)
{
    mb_timefn f = {row[MB_SC_COL_FA], row[MB_SC_COL_FA1], row[MB_SC_COL_FA2],
                   row[MB_SC_COL_FA3], row[MB_SC_COL_FA4], row[MB_SC_COL_FA5]};
    double v;
    mb_timefn_eval(&f, t, &v, NULL, NULL);
    return v;
}

/* the penalty law of contact.c: K delta^e + cd delta' for delta > 0, never pulling */
static double penalty(const double *row, double delta, double rate)
{
    if (!(delta > 0)) return 0.0;
    double e = row[MB_SC_COL_EXP] > 0 ? row[MB_SC_COL_EXP] : 1.0;
    double f = row[MB_SC_COL_KC] * pow(delta, e) + row[MB_SC_COL_CD] * rate;
    return f > 0 ? f : 0.0;
}

/* one sensor at one time: its components into y[0], y[stride], ... */
static void eval_one(const double *row, int dim, double t, const kin *bi, const kin *bj,
                     const kin *bf, double *y, ptrdiff_t stride)
{
    int kind = (int)row[MB_SC_COL_KIND];
    double v[3] = {0, 0, 0}, P[3], V[3], Acc[3];
    int nv = 0;  /* a vector quantity: resolved in frame bf, dim components */
    switch (kind) {
    case MB_SENSOR_POSITION:
    case MB_SENSOR_VELOCITY:
    case MB_SENSOR_ACCELERATION:
        point_kin(bi, row + MB_SC_COL_SI, P, V, Acc);
        if (kind == MB_SENSOR_POSITION)
            for (int c = 0; c < 3; c++) v[c] = P[c] - bf->r[c];
        else
            memcpy(v, kind == MB_SENSOR_VELOCITY ? V : Acc, sizeof v);
        nv = dim;
        break;
    case MB_SENSOR_ANGULAR_VELOCITY:
    case MB_SENSOR_ANGULAR_ACCELERATION:
        memcpy(v, kind == MB_SENSOR_ANGULAR_VELOCITY ? bi->w : bi->al, sizeof v);
        if (dim == 2) {
            y[0] = v[2];
            return;
        }
        nv = 3;
        break;
    case MB_SENSOR_RELATIVE_ANGLE:
    case MB_SENSOR_RELATIVE_RATE: {
        double th, thd;
        if (dim == 2) {
            th = bj->th - bi->th;
            thd = bj->thd - bi->thd;
        } else {
            spatial_angle(row, bi, bj, &th, &thd);
        }
        y[0] = kind == MB_SENSOR_RELATIVE_ANGLE ? th : thd;
        return;
    }
    case MB_SENSOR_DISTANCE:
    case MB_SENSOR_DISTANCE_RATE: {
        double l, ld;
        distance(row, bi, bj, &l, &ld);
        y[0] = kind == MB_SENSOR_DISTANCE ? l : ld;
        return;
    }
    case MB_SENSOR_TSDA: {
        double l, ld;
        distance(row, bi, bj, &l, &ld);
        y[0] = l > 0 ? row[MB_SC_COL_K] * (l - row[MB_SC_COL_L0]) + row[MB_SC_COL_C] * ld +
                           timefn(row, t)
                     : 0.0;
        return;
    }
    case MB_SENSOR_RSDA: {
        double x, thd;
        if (dim == 2) {
            x = bj->th - bi->th - row[MB_SC_COL_L0];
            if (row[MB_SC_COL_WRAP] != 0) x = wrap_pi(x);
            thd = bj->thd - bi->thd;
        } else {
            double th;
            spatial_angle(row, bi, bj, &th, &thd);
            x = wrap_pi(th - row[MB_SC_COL_L0]);
        }
        y[0] = row[MB_SC_COL_K] * x + row[MB_SC_COL_C] * thd + timefn(row, t);
        return;
    }
    case MB_SENSOR_CONTACT_LINE: {
        /* the circle on body i (contact.c: on j when i is the ground) */
        const kin *b = bi;
        const double *s = row + MB_SC_COL_SI;
        double r = row[MB_SC_COL_RI];
        if ((int)row[MB_SC_COL_I] < 0 && (int)row[MB_SC_COL_J] >= 0) {
            b = bj;
            s = row + MB_SC_COL_SJ;
            r = row[MB_SC_COL_RJ];
        }
        point_kin(b, s, P, V, Acc);
        const double *p0 = row + MB_SC_COL_P0, *n = row + MB_SC_COL_NRM;
        double delta = r - ((P[0] - p0[0]) * n[0] + (P[1] - p0[1]) * n[1]);
        double rate = -(V[0] * n[0] + V[1] * n[1]);
        y[0] = penalty(row, delta, rate);
        return;
    }
    case MB_SENSOR_CONTACT_CIRCLES: {
        double l, ld;
        distance(row, bi, bj, &l, &ld);
        y[0] = penalty(row, row[MB_SC_COL_RI] + row[MB_SC_COL_RJ] - l, -ld);
        return;
    }
    case MB_SENSOR_TIRE: {
        mb_spatial_force road;
        memset(&road, 0, sizeof road);
        road.z0 = row[MB_SC_COL_Z0];
        road.bump_x = row[MB_SC_COL_BUMP_X];
        road.bump_r = row[MB_SC_COL_BUMP_R];
        road.wheel_r = row[MB_SC_COL_WHEEL_R];
        double h, h1;
        point_kin(bi, row + MB_SC_COL_SI, P, V, Acc);
        mb_spatial_road(&road, P[0], &h, &h1, NULL);
        double x = P[2] - h - row[MB_SC_COL_L0], xd = V[2] - h1 * V[0];
        double F = -(row[MB_SC_COL_K] * x + row[MB_SC_COL_C] * xd);
        y[0] = row[MB_SC_COL_UNILATERAL] != 0 && !(F > 0) ? 0.0 : F;
        return;
    }
    default: return;
    }
    double vf[3];
    rot_t(bf->A, v, vf);
    for (int c = 0; c < nv; c++) y[c * stride] = vf[c];
}

static int body_ok(double v, int nb, int ground_ok)
{
    if (!(v == floor(v))) return 0;
    return v >= (ground_ok ? -1 : 0) && v < nb;
}

/* the work of mb_sensors_eval: one kin per body and the ground, and a flag per body */
enum { KIN_DOUBLES = (int)(sizeof(kin) / sizeof(double)) };

ptrdiff_t mb_sensors_work(ptrdiff_t nq, int dim)
{
    ptrdiff_t nb = nq / (dim == 2 ? 3 : 7);
    return (nb + 1) * (KIN_DOUBLES + 1);
}

int mb_sensors_eval(ptrdiff_t ns, const double *table, ptrdiff_t m, const double *t,
                    ptrdiff_t nq, const double *q, const double *qd, const double *qdd,
                    double *out, double *work)
{
    if (ns < 0 || m < 0 || nq < 0) return MB_ERR_ILL_INPUT;
    if (ns == 0) return MB_OK;
    int dim = (int)table[MB_SC_COL_DIM];
    int per = dim == 2 ? 3 : 7;
    if ((dim != 2 && dim != 3) || nq % per) return MB_ERR_ILL_INPUT;
    int nb = (int)(nq / per);
    kin *K = (kin *)work;             /* K[b + 1]: body b, K[0] the ground */
    double *used = work + (ptrdiff_t)(nb + 1) * KIN_DOUBLES;
    for (int b = 0; b <= nb; b++) used[b] = 0.0;
    /* check every row before writing anything; mark the bodies the sensors read */
    for (ptrdiff_t s = 0; s < ns; s++) {
        const double *row = table + s * MB_SENSOR_NCOL;
        if ((int)row[MB_SC_COL_DIM] != dim || mb_sensor_ncomp(row) < 0) return MB_ERR_ILL_INPUT;
        if (!body_ok(row[MB_SC_COL_I], nb, 1) || !body_ok(row[MB_SC_COL_J], nb, 1) ||
            !body_ok(row[MB_SC_COL_FRAME], nb, 1))
            return MB_ERR_ILL_INPUT;
        used[(int)row[MB_SC_COL_I] + 1] = used[(int)row[MB_SC_COL_J] + 1] =
            used[(int)row[MB_SC_COL_FRAME] + 1] = 1.0;
    }
    body_kin(dim, -1, 0, m, q, qd, qdd, &K[0]);
    for (ptrdiff_t k = 0; k < m; k++) {
        /* the motion of every body read, once per time */
        for (int b = 0; b < nb; b++)
            if (used[b + 1] != 0) body_kin(dim, b, k, m, q, qd, qdd, &K[b + 1]);
        ptrdiff_t off = 0;
        for (ptrdiff_t s = 0; s < ns; s++) {
            const double *row = table + s * MB_SENSOR_NCOL;
            eval_one(row, dim, t[k], &K[(int)row[MB_SC_COL_I] + 1], &K[(int)row[MB_SC_COL_J] + 1],
                     &K[(int)row[MB_SC_COL_FRAME] + 1], out + off * m + k, m);
            off += mb_sensor_ncomp(row);
        }
    }
    return MB_OK;
}
