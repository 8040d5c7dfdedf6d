/* The exact Jacobian of a SpatialModel tree's joint accelerations (joint_spatial_deriv.h):
 * the forward kinematics and the ABA of joint_spatial.c over complex numbers (the same
 * formulas, line for line: a change there must be made here too; the tests compare the
 * two through f and against central differences), one tangent direction a call. */
/* complex products and quotients without the C99 Annex G NaN recovery (the values are
 * finite or the column is refused) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("cx-limited-range")
#endif
#include <complex.h>
#include <math.h>
#include <string.h>
#include "joint_spatial_deriv.h"
#include "status.h"

typedef double complex cx;

/* the work layout per body: as joint_spatial.c's (MB_JS_PER_BODY) */
enum { JA = 0, JO = 9, JR = 12, JS = 15, JV = 33, JC = 39, JACC = 45, JIA = 51, JPA = 87,
       JU = 93, JDI = 111, JUU = 120, JNU = 123, JP = 126, JD = 130 };

static const double STEP = 1e-100;  /* the imaginary step */

typedef struct jsd {
    const mb_jtree *T;
    const int *body;
    const ptrdiff_t *off;
    cx *w;  /* MB_JS_PER_BODY n */
} jsd;

static int cfinite(cx a)
{
    return isfinite(creal(a)) && isfinite(cimag(a));
}

/* a x b (3-vectors), in place-safe */
static void cross(const cx *a, const cx *b, cx *c)
{
    cx x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    c[0] = x, c[1] = y, c[2] = z;
}

/* C = A B or A^T B (3 x 3, row-major) */
static void mul33(const cx *A, const cx *B, cx *C, int At)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            cx s = 0;
            for (int k = 0; k < 3; k++) s += (At ? A[3 * k + r] : A[3 * r + k]) * B[3 * k + c];
            C[3 * r + c] = s;
        }
}

/* y = A x or A^T x */
static void mv3(const cx *A, const cx *x, cx *y, int At)
{
    cx t[3];
    for (int r = 0; r < 3; r++)
        t[r] = At ? A[r] * x[0] + A[3 + r] * x[1] + A[6 + r] * x[2]
                  : A[3 * r] * x[0] + A[3 * r + 1] * x[1] + A[3 * r + 2] * x[2];
    memcpy(y, t, sizeof t);
}

static void gmat(const cx *p, cx *G)
{
    cx Gv[12] = {-p[1], p[0], p[3], -p[2], -p[2], -p[3], p[0], p[1], -p[3], p[2], -p[1], p[0]};
    memcpy(G, Gv, sizeof Gv);
}

static void rot_of(const cx *p, cx *A)
{
    cx e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    cx Av[9] = {e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3),
                2 * (e1 * e3 + e0 * e2), 2 * (e1 * e2 + e0 * e3),
                e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3, 2 * (e2 * e3 - e0 * e1),
                2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1),
                e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3};
    memcpy(A, Av, sizeof Av);
}

/* Shepperd's method, the branch chosen on the real parts */
static void quat_of(const cx *A, cx *p)
{
    cx tr = A[0] + A[4] + A[8], d[4] = {tr, A[0], A[4], A[8]};
    int m = 0;
    for (int k = 1; k < 4; k++)
        if (creal(d[k]) > creal(d[m])) m = k;
    cx e = m == 0 ? csqrt(1 + tr) / 2 : csqrt(1 + 2 * d[m] - tr) / 2, f = 4 * e;
    if (m == 0)
        p[0] = e, p[1] = (A[7] - A[5]) / f, p[2] = (A[2] - A[6]) / f, p[3] = (A[3] - A[1]) / f;
    else if (m == 1)
        p[0] = (A[7] - A[5]) / f, p[1] = e, p[2] = (A[1] + A[3]) / f, p[3] = (A[2] + A[6]) / f;
    else if (m == 2)
        p[0] = (A[2] - A[6]) / f, p[1] = (A[1] + A[3]) / f, p[2] = e, p[3] = (A[5] + A[7]) / f;
    else
        p[0] = (A[3] - A[1]) / f, p[1] = (A[2] + A[6]) / f, p[2] = (A[5] + A[7]) / f, p[3] = e;
    if (creal(p[0]) < 0)
        for (int k = 0; k < 4; k++) p[k] = -p[k];
}

static void crm(const cx *v, const cx *m, cx *o)
{
    cx a[3], b[3];
    cross(v, m, o);
    cross(v, m + 3, a);
    cross(v + 3, m, b);
    for (int k = 0; k < 3; k++) o[3 + k] = a[k] + b[k];
}

static void shift_m(const cx *m, const cx *d, cx *o)
{
    cx t[3];
    cross(m, d, t);
    for (int k = 0; k < 3; k++) o[k] = m[k], o[3 + k] = m[3 + k] + t[k];
}

static void body_coords(const cx *w, cx *q, cx *qd)
{
    const cx *A = w + JA, *r = w + JR, *v = w + JV;
    cx p[4], G[12], wb[3], wr[3], s[3] = {r[0] - w[JO], r[1] - w[JO + 1], r[2] - w[JO + 2]};
    quat_of(A, p);
    memcpy(q, r, 3 * sizeof(cx));
    memcpy(q + 3, p, sizeof p);
    gmat(p, G);
    mv3(A, v, wb, 1);
    cross(v, s, wr);
    for (int k = 0; k < 3; k++) qd[k] = v[3 + k] + wr[k];
    for (int k = 0; k < 4; k++) qd[3 + k] = 0.5 * (G[k] * wb[0] + G[4 + k] * wb[1] + G[8 + k] * wb[2]);
}

/* one joint's frame, motion subspace and rate (mb_jspatial_kin's loop body) */
static int kin_joint(const mb_jtree *T, ptrdiff_t i, const cx *zi, const cx *zdi, const cx *wp,
                     cx *w)
{
    static const cx I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double *Rd = T->frame + 12 * i, *kd = T->axis + 3 * i;
    cx R[12], k[3], AJ[9], st[3], kg[3], C[9], *A = w + JA, *o = w + JO, *Sm = w + JS;
    for (int e = 0; e < 12; e++) R[e] = Rd[e];
    for (int e = 0; e < 3; e++) k[e] = kd[e];
    mul33(wp ? wp + JA : I3, R, AJ, 0);
    mv3(wp ? wp + JA : I3, R + 9, st, 0);
    for (int e = 0; e < 3; e++) o[e] = (wp ? wp[JO + e] : 0.0) + st[e];
    mv3(AJ, k, kg, 0);
    memset(Sm, 0, 18 * sizeof(cx));
    int d = 1;
    if (T->type[i] == MB_JT_REVOLUTE) {
        cx ct = ccos(zi[0]), sn = csin(zi[0]), K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
        for (int r = 0; r < 3; r++)
            for (int e = 0; e < 3; e++) C[3 * r + e] = (r == e ? ct : 0.0) + (1 - ct) * k[r] * k[e] + sn * K[3 * r + e];
        mul33(AJ, C, A, 0);
        memcpy(Sm, kg, sizeof kg);
        w[JNU] = zdi[0];
    } else if (T->type[i] == MB_JT_PRISMATIC) {
        memcpy(A, AJ, sizeof AJ);
        for (int e = 0; e < 3; e++) o[e] += kg[e] * zi[0], Sm[3 + e] = kg[e];
        w[JNU] = zdi[0];
    } else if (T->type[i] == MB_JT_BALL) {
        cx nrm = csqrt(zi[0] * zi[0] + zi[1] * zi[1] + zi[2] * zi[2] + zi[3] * zi[3]), G[12];
        if (!(creal(nrm) > 0) || !cfinite(nrm))
            return MB_RECOVERABLE;
        for (int e = 0; e < 4; e++) w[JP + e] = zi[e] / nrm;
        rot_of(w + JP, C);
        mul33(AJ, C, A, 0);
        for (int j = 0; j < 3; j++) Sm[6 * j] = A[j], Sm[6 * j + 1] = A[3 + j], Sm[6 * j + 2] = A[6 + j];
        gmat(w + JP, G);
        for (int e = 0; e < 3; e++)
            w[JNU + e] = 2 * (G[4 * e] * zdi[0] + G[4 * e + 1] * zdi[1] + G[4 * e + 2] * zdi[2] + G[4 * e + 3] * zdi[3]);
        d = 3;
    } else {
        return MB_ERR_ILL_INPUT;
    }
    w[JD] = d;
    return MB_OK;
}

/* the forward kinematics of bodies i0 .. n - 1 (those before keep their values) */
static int kin(const jsd *S, ptrdiff_t i0, const cx *z, const cx *zd, cx *q, cx *qd)
{
    const mb_jtree *T = S->T;
    for (ptrdiff_t i = i0; i < T->n; i++) {
        cx *w = S->w + MB_JS_PER_BODY * i, *o = w + JO, *A = w + JA, *Sm = w + JS;
        int p = T->parent[i];
        const cx *wp = p >= 0 ? S->w + MB_JS_PER_BODY * p : NULL;
        int rc = kin_joint(T, i, z + S->off[i], zd + S->off[i], wp, w);
        if (rc != MB_OK)
            return rc;
        int d = (int)creal(w[JD]);
        const double *cd = T->inertia + 10 * i + 1;
        cx c[3] = {cd[0], cd[1], cd[2]}, ac[3], sn[6] = {0, 0, 0, 0, 0, 0}, vp[6] = {0, 0, 0, 0, 0, 0};
        mv3(A, c, ac, 0);
        for (int e = 0; e < 3; e++) w[JR + e] = o[e] + ac[e];
        for (int j = 0; j < d; j++)
            for (int e = 0; e < 6; e++) sn[e] += Sm[6 * j + e] * w[JNU + j];
        if (wp) {
            cx dd[3] = {o[0] - wp[JO], o[1] - wp[JO + 1], o[2] - wp[JO + 2]};
            shift_m(wp + JV, dd, vp);
        }
        for (int e = 0; e < 6; e++) w[JV + e] = vp[e] + sn[e];
        crm(w + JV, sn, w + JC);
        int b = S->body[i];
        body_coords(w, q + 7 * b, qd + 7 * b);
        for (int e = 0; e < 7; e++)
            if (!cfinite(q[7 * b + e]) || !cfinite(qd[7 * b + e]))
                return MB_RECOVERABLE;
    }
    return MB_OK;
}

static void body_inertia(double m, const cx *r, const cx *Jc, const cx *v, const cx *f, cx *In,
                         cx *pA)
{
    cx X[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    memset(In, 0, 36 * sizeof(cx));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            cx s = 0;
            for (int k = 0; k < 3; k++) s += X[3 * a + k] * X[3 * b + k];
            In[6 * a + b] = Jc[3 * a + b] + m * s;
            In[6 * a + 3 + b] = m * X[3 * a + b];
            In[6 * (3 + a) + b] = m * X[3 * b + a];
        }
    for (int a = 0; a < 3; a++) In[6 * (3 + a) + 3 + a] = m;
    cx h[6], t1[3], t2[3], t3[3];
    for (int a = 0; a < 6; a++) {
        h[a] = 0;
        for (int b = 0; b < 6; b++) h[a] += In[6 * a + b] * v[b];
    }
    cross(v, h, t1);
    cross(v + 3, h + 3, t2);
    cross(v, h + 3, t3);
    for (int a = 0; a < 3; a++) pA[a] = t1[a] + t2[a] - f[a], pA[3 + a] = t3[a] - f[3 + a];
}

static void body_wrench(const cx *A, const cx *r, const cx *Jb, const cx *q, const cx *qd,
                        const cx *Q, cx *f)
{
    const cx *p = q + 3, *pd = qd + 3, *Qp = Q + 3;
    cx G[12], Gd[12], g[3], Jg[3], Qr[4], nb[3], n[3], rf[3];
    gmat(p, G);
    gmat(pd, Gd);
    for (int e = 0; e < 3; e++) g[e] = Gd[4 * e] * p[0] + Gd[4 * e + 1] * p[1] + Gd[4 * e + 2] * p[2] + Gd[4 * e + 3] * p[3];
    mv3(Jb, g, Jg, 0);
    for (int k = 0; k < 4; k++)
        Qr[k] = Qp[k] - 8 * (Gd[k] * Jg[0] + Gd[4 + k] * Jg[1] + Gd[8 + k] * Jg[2]);
    for (int e = 0; e < 3; e++) nb[e] = 0.5 * (G[4 * e] * Qr[0] + G[4 * e + 1] * Qr[1] + G[4 * e + 2] * Qr[2] + G[4 * e + 3] * Qr[3]);
    mv3(A, nb, n, 0);
    cross(r, Q, rf);
    for (int e = 0; e < 3; e++) f[e] = n[e] + rf[e], f[3 + e] = Q[e];
}

static int chol(const cx *D, int d, cx *L)
{
    for (int j = 0; j < d; j++) {
        cx s = D[d * j + j];
        for (int k = 0; k < j; k++) s -= L[d * j + k] * L[d * j + k];
        if (!(creal(s) > 0) || !cfinite(s))
            return 0;
        L[d * j + j] = csqrt(s);
        for (int i = j + 1; i < d; i++) {
            cx t = D[d * i + j];
            for (int k = 0; k < j; k++) t -= L[d * i + k] * L[d * j + k];
            L[d * i + j] = t / L[d * j + j];
        }
        for (int i = 0; i < j; i++) L[d * i + j] = 0.0;
    }
    return 1;
}

static void chol_solve(const cx *L, int d, cx *b, int back)
{
    for (int i = 0; i < d; i++) {
        for (int k = 0; k < i; k++) b[i] -= L[d * i + k] * b[k];
        b[i] /= L[d * i + i];
    }
    for (int i = d - 1; back && i >= 0; i--) {
        for (int k = i + 1; k < d; k++) b[i] -= L[d * k + i] * b[k];
        b[i] /= L[d * i + i];
    }
}

/* the articulated inertia and bias of body i added to its parent's at the parent's
 * point (aba_back's second half): Ia = IA - W W^T, pa = pA + Ia c + W y */
static void aba_to_parent(cx *w, cx *wp, int d, const cx *W, const cx *y)
{
    cx *IA = w + JIA, *pA = w + JPA, *c = w + JC, Ia[36], pa[6], XI[36], dd[3];
    for (int a = 0; a < 6; a++) {
        cx s = pA[a];
        for (int b = 0; b < 6; b++) {
            cx v = IA[6 * a + b];
            for (int j = 0; j < d; j++) v -= W[6 * j + a] * W[6 * j + b];
            Ia[6 * a + b] = v;
            s += v * c[b];
        }
        for (int j = 0; j < d; j++) s += W[6 * j + a] * y[j];
        pa[a] = s;
    }
    for (int e = 0; e < 3; e++) dd[e] = wp[JO + e] - w[JO + e];
    cx X[36], Dx[9] = {0, -dd[2], dd[1], dd[2], 0, -dd[0], -dd[1], dd[0], 0};
    memset(X, 0, sizeof X);
    for (int a = 0; a < 6; a++) X[7 * a] = 1.0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) X[6 * a + 3 + b] = -Dx[3 * a + b];
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++) {
            cx s = 0;
            for (int k = 0; k < 6; k++) s += X[6 * a + k] * Ia[6 * k + b];
            XI[6 * a + b] = s;
        }
    for (int a = 0; a < 6; a++) {
        cx s = 0;
        for (int k = 0; k < 6; k++) s += X[6 * a + k] * pa[k];
        wp[JPA + a] += s;
        for (int b = 0; b < 6; b++) {
            cx t = 0;
            for (int k = 0; k < 6; k++) t += XI[6 * a + k] * X[6 * b + k];
            wp[JIA + 6 * a + b] += t;
        }
    }
}

static int aba_back(const jsd *S, ptrdiff_t i)
{
    cx *w = S->w + MB_JS_PER_BODY * i, *IA = w + JIA, *pA = w + JPA, *Sm = w + JS, *U = w + JU,
       *Di = w + JDI, *u = w + JUU;
    int d = (int)creal(w[JD]);
    cx D[9];
    for (int j = 0; j < d; j++) {
        for (int a = 0; a < 6; a++) {
            cx s = 0;
            for (int b = 0; b < 6; b++) s += IA[6 * a + b] * Sm[6 * j + b];
            U[6 * j + a] = s;
        }
        u[j] = 0;
        for (int a = 0; a < 6; a++) u[j] -= Sm[6 * j + a] * pA[a];
    }
    for (int j = 0; j < d; j++)
        for (int l = 0; l < d; l++) {
            cx s = 0;
            for (int a = 0; a < 6; a++) s += Sm[6 * j + a] * U[6 * l + a];
            D[d * j + l] = s;
        }
    if (!chol(D, d, Di))
        return MB_RECOVERABLE;
    int p = S->T->parent[i];
    if (p < 0)
        return MB_OK;
    cx W[18], y[3];
    for (int a = 0; a < 6; a++) {
        cx row[3];
        for (int j = 0; j < d; j++) row[j] = U[6 * j + a];
        chol_solve(Di, d, row, 0);
        for (int j = 0; j < d; j++) W[6 * j + a] = row[j];
    }
    for (int j = 0; j < d; j++) y[j] = u[j];
    chol_solve(Di, d, y, 0);
    aba_to_parent(w, S->w + MB_JS_PER_BODY * p, d, W, y);
    return MB_OK;
}

/* rigid-body inertias and biases of every body (mb_jspatial_accel's first loop); a body
 * before i0 whose Q has no tangent takes its values of the base pass from cache (42 a
 * body), which the base pass (cache_out) fills */
static void inertias(const jsd *S, ptrdiff_t i0, const cx *q, const cx *qd, const cx *Q,
                     cx *cache, int cache_out)
{
    const mb_jtree *T = S->T;
    for (ptrdiff_t i = 0; i < T->n; i++) {
        cx *w = S->w + MB_JS_PER_BODY * i, Jb[9], Jw[9], AJ[9], f[6];
        const double *in = T->inertia + 10 * i;
        int b = S->body[i], still = i < i0;
        for (int e = 0; still && e < 7; e++) still = cimag(Q[7 * b + e]) == 0.0;
        if (still && !cache_out) {
            memcpy(w + JIA, cache + 42 * i, 42 * sizeof(cx));  /* JIA, then JPA */
            continue;
        }
        cx Jv[9] = {in[4], in[7], in[8], in[7], in[5], in[9], in[8], in[9], in[6]};
        memcpy(Jb, Jv, sizeof Jv);
        cx s[3] = {w[JR] - w[JO], w[JR + 1] - w[JO + 1], w[JR + 2] - w[JO + 2]};
        body_wrench(w + JA, s, Jb, q + 7 * b, qd + 7 * b, Q + 7 * b, f);
        mul33(w + JA, Jb, AJ, 0);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                Jw[3 * r + c] = AJ[3 * r] * w[JA + 3 * c] + AJ[3 * r + 1] * w[JA + 3 * c + 1] + AJ[3 * r + 2] * w[JA + 3 * c + 2];
        body_inertia(in[0], s, Jw, w + JV, f, w + JIA, w + JPA);
        if (cache_out)
            memcpy(cache + 42 * i, w + JIA, 42 * sizeof(cx));
    }
}

static int accel(const jsd *S, ptrdiff_t i0, const cx *q, const cx *qd, const cx *Q, const cx *z,
                 const cx *zd, cx *zdd, cx *cache, int cache_out)
{
    const mb_jtree *T = S->T;
    ptrdiff_t n = T->n;
    inertias(S, i0, q, qd, Q, cache, cache_out);
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        int rc = aba_back(S, i);
        if (rc != MB_OK)
            return rc;
    }
    for (ptrdiff_t i = 0; i < n; i++) {
        cx *w = S->w + MB_JS_PER_BODY * i, *a = w + JACC, *U = w + JU, *Di = w + JDI, *Sm = w + JS,
           r[3], nd[3];
        int p = T->parent[i], d = (int)creal(w[JD]);
        cx ap[6] = {0, 0, 0, 0, 0, 0};
        if (p >= 0) {
            const cx *wq = S->w + MB_JS_PER_BODY * p;
            cx dd[3] = {w[JO] - wq[JO], w[JO + 1] - wq[JO + 1], w[JO + 2] - wq[JO + 2]};
            shift_m(wq + JACC, dd, ap);
        }
        for (int e = 0; e < 6; e++) a[e] = ap[e] + w[JC + e];
        for (int j = 0; j < d; j++) {
            r[j] = w[JUU + j];
            for (int e = 0; e < 6; e++) r[j] -= U[6 * j + e] * a[e];
        }
        for (int j = 0; j < d; j++) nd[j] = r[j];
        chol_solve(Di, d, nd, 1);
        for (int j = 0; j < d; j++)
            for (int e = 0; e < 6; e++) a[e] += Sm[6 * j + e] * nd[j];
        cx *out = zdd + S->off[i];
        if (d == 1) {
            out[0] = nd[0];
        } else {
            const cx *pz = z + S->off[i], *pd = zd + S->off[i];
            cx G[12], pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
            gmat(w + JP, G);
            for (int k = 0; k < 4; k++)
                out[k] = 0.5 * (G[k] * nd[0] + G[4 + k] * nd[1] + G[8 + k] * nd[2]) - pp * pz[k];
        }
        for (int j = 0; j < d; j++)
            if (!cfinite(nd[j]))
                return MB_RECOVERABLE;
    }
    return MB_OK;
}

/* the row band [lo, hi) of each column of A (nq x nq) */
static void bands_of(ptrdiff_t nq, const double *A, ptrdiff_t *band)
{
    for (ptrdiff_t c = 0; c < nq; c++) {
        const double *col = A + nq * c;
        ptrdiff_t lo = 0, hi = nq;
        while (lo < nq && col[lo] == 0.0) lo++;
        while (hi > lo && col[hi - 1] == 0.0) hi--;
        band[2 * c] = lo, band[2 * c + 1] = hi;
    }
}

/* Im(Qc) += A Im(x) over the nonzero entries of Im(x), each column on its row band */
static void band_tangent(ptrdiff_t nq, const double *A, const ptrdiff_t *band, const cx *x,
                         cx *Qc)
{
    for (ptrdiff_t c = 0; c < nq; c++) {
        double xc = cimag(x[c]);
        if (xc == 0.0)
            continue;
        const double *col = A + nq * c;
        for (ptrdiff_t r = band[2 * c]; r < band[2 * c + 1]; r++) Qc[r] += I * (col[r] * xc);
    }
}

/* the tangents of the bodies before i0 set to zero: their kinematics and q, q' are the
 * base pass's again (the columns before may have left tangents there) */
static void untangle(const jsd *S, ptrdiff_t i0, cx *qc, cx *qdc)
{
    for (ptrdiff_t i = 0; i < i0; i++) {
        cx *w = S->w + MB_JS_PER_BODY * i;
        int b = S->body[i];
        for (int e = 0; e < JACC; e++) w[e] = creal(w[e]);
        for (int e = JNU; e < JD; e++) w[e] = creal(w[e]);
        for (int e = 0; e < 7; e++) qc[7 * b + e] = creal(qc[7 * b + e]), qdc[7 * b + e] = creal(qdc[7 * b + e]);
    }
}

int mb_jsderiv_jac(const mb_jsderiv *D, double t, const double *z, const double *zd,
                   double *Jz, double *Jzd, ptrdiff_t ld, double *work)
{
    const mb_mech *me = D->mech;
    ptrdiff_t n = D->T->n, nq = 7 * n, m = D->off[n];
    jsd S = {D->T, D->body, D->off, (cx *)work};
    cx *qc = S.w + MB_JS_PER_BODY * n, *qdc = qc + nq, *Qc = qdc + nq, *zc = Qc + nq,
       *zdc = zc + m, *zddc = zdc + m, *cache = zddc + m;
    ptrdiff_t *band = (ptrdiff_t *)(cache + 42 * n);  /* 4 nq: a ptrdiff_t fits a double */
    double *Qq = (double *)(band + 4 * nq), *Qv = Qq + nq * nq;  /* mb_jsderiv_work_size */
    int rc = me->forces_q(t, D->q, D->qd, Qq, nq, me->ctx);
    if (rc == MB_OK)
        rc = me->forces_qd(t, D->q, D->qd, Qv, nq, me->ctx);
    if (rc != MB_OK)
        return rc;
    bands_of(nq, Qq, band);
    bands_of(nq, Qv, band + 2 * nq);
    for (ptrdiff_t k = 0; k < m; k++) zc[k] = z[k], zdc[k] = zd[k];
    for (ptrdiff_t r = 0; r < nq; r++) Qc[r] = D->Q[r];
    rc = kin(&S, 0, zc, zdc, qc, qdc);  /* the base pass: no tangent */
    if (rc == MB_OK)
        rc = accel(&S, 0, qc, qdc, Qc, zc, zdc, zddc, cache, 1);
    for (int rate = 0; rate < 2 && rc == MB_OK; rate++)
        for (ptrdiff_t k = 0, i0 = 0; k < m; k++) {
            while (D->off[i0 + 1] <= k) i0++;  /* coordinate k is joint i0's */
            cx *dir = rate ? zdc : zc;
            dir[k] += I * STEP;
            untangle(&S, i0, qc, qdc);
            rc = kin(&S, i0, zc, zdc, qc, qdc);
            if (rc == MB_OK) {
                for (ptrdiff_t r = 0; r < nq; r++) Qc[r] = D->Q[r];
                if (!rate)
                    band_tangent(nq, Qq, band, qc, Qc);
                band_tangent(nq, Qv, band + 2 * nq, qdc, Qc);
                rc = accel(&S, i0, qc, qdc, Qc, zc, zdc, zddc, cache, 0);
            }
            dir[k] = rate ? zd[k] : z[k];
            if (rc != MB_OK)
                return rc;
            double *col = (rate ? Jzd : Jz) + ld * k;
            for (ptrdiff_t i = 0; i < m; i++) {
                col[i] = cimag(zddc[i]) / STEP;
                if (!isfinite(col[i]))
                    return MB_RECOVERABLE;
            }
        }
    return rc;
}
