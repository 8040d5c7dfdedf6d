/* The kinematic tree of a SpatialModel in joint coordinates: forward kinematics, the
 * articulated-body algorithm in world coordinates under the mechanism's own forces, and
 * the inverse map from body coordinates (joint_spatial.h). */
#include <math.h>
#include <string.h>
#include "joint_spatial.h"
#include "status.h"

/* per body of the work array */
enum { JA = 0, JO = 9, JR = 12, JS = 15, JV = 33, JC = 39, JACC = 45, JIA = 51, JPA = 87,
       JU = 93, JDI = 111 /* L of D */, JUU = 120, JNU = 123, JP = 126, JD = 130 };

static void cross(const double *a, const double *b, double *c)
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    c[0] = x, c[1] = y, c[2] = z;
}

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* C = A B (3 x 3, row-major); At: A transposed */
static void mul33(const double *A, const double *B, double *C, int At)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += (At ? A[3 * k + r] : A[3 * r + k]) * B[3 * k + c];
            C[3 * r + c] = s;
        }
}

/* y = A x or A^T x */
static void mv3(const double *A, const double *x, double *y, int At)
{
    double t[3];
    for (int r = 0; r < 3; r++)
        t[r] = At ? A[r] * x[0] + A[3 + r] * x[1] + A[6 + r] * x[2]
                  : A[3 * r] * x[0] + A[3 * r + 1] * x[1] + A[3 * r + 2] * x[2];
    memcpy(y, t, sizeof t);
}

/* G(p) (3 x 4, row-major): w' = 2 G(p) p' */
static void gmat(const double *p, double *G)
{
    double Gv[12] = {-p[1], p[0], p[3], -p[2], -p[2], -p[3], p[0], p[1], -p[3], p[2], -p[1], p[0]};
    memcpy(G, Gv, sizeof Gv);
}

/* the rotation (row-major) of the unit quaternion p */
static void rot_of(const double *p, double *A)
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    double Av[9] = {e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3, 2 * (e1 * e2 - e0 * e3),
                    2 * (e1 * e3 + e0 * e2), 2 * (e1 * e2 + e0 * e3),
                    e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3, 2 * (e2 * e3 - e0 * e1),
                    2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1),
                    e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3};
    memcpy(A, Av, sizeof Av);
}

/* unit p (e0 >= 0) of the rotation A: Shepperd's method */
static void quat_of(const double *A, double *p)
{
    double tr = A[0] + A[4] + A[8], d[4] = {tr, A[0], A[4], A[8]};
    int m = 0;
    for (int k = 1; k < 4; k++)
        if (d[k] > d[m]) m = k;
    double e = m == 0 ? sqrt(1 + tr) / 2 : sqrt(1 + 2 * d[m] - tr) / 2, f = 4 * e;
    if (m == 0)
        p[0] = e, p[1] = (A[7] - A[5]) / f, p[2] = (A[2] - A[6]) / f, p[3] = (A[3] - A[1]) / f;
    else if (m == 1)
        p[0] = (A[7] - A[5]) / f, p[1] = e, p[2] = (A[1] + A[3]) / f, p[3] = (A[2] + A[6]) / f;
    else if (m == 2)
        p[0] = (A[2] - A[6]) / f, p[1] = (A[1] + A[3]) / f, p[2] = e, p[3] = (A[5] + A[7]) / f;
    else
        p[0] = (A[3] - A[1]) / f, p[1] = (A[2] + A[6]) / f, p[2] = (A[5] + A[7]) / f, p[3] = e;
    if (p[0] < 0)
        for (int k = 0; k < 4; k++) p[k] = -p[k];
}

/* the motion cross product v x m (6-vectors (angular; linear)) */
static void crm(const double *v, const double *m, double *o)
{
    double a[3], b[3];
    cross(v, m, o);
    cross(v, m + 3, a);
    cross(v + 3, m, b);
    for (int k = 0; k < 3; k++) o[3 + k] = a[k] + b[k];
}

/* the motion m (at P) at the point P + d: (w, v + w x d) */
static void shift_m(const double *m, const double *d, double *o)
{
    double t[3];
    cross(m, d, t);
    for (int k = 0; k < 3; k++) o[k] = m[k], o[3 + k] = m[3 + k] + t[k];
}

ptrdiff_t mb_jspatial_offsets(const mb_jtree *T, ptrdiff_t *off)
{
    off[0] = 0;
    for (ptrdiff_t i = 0; i < T->n; i++) off[i + 1] = off[i] + (T->type[i] == MB_JT_BALL ? 4 : 1);
    return off[T->n];
}

/* the body's (q, q') from its frame (A, o), centre of mass r and motion v */
static void body_coords(const double *w, double *q, double *qd)
{
    const double *A = w + JA, *r = w + JR, *v = w + JV;
    double p[4], G[12], wb[3], wr[3], s[3] = {r[0] - w[JO], r[1] - w[JO + 1], r[2] - w[JO + 2]};
    quat_of(A, p);
    memcpy(q, r, 3 * sizeof(double));
    memcpy(q + 3, p, sizeof p);
    gmat(p, G);
    mv3(A, v, wb, 1);
    cross(v, s, wr);
    for (int k = 0; k < 3; k++) qd[k] = v[3 + k] + wr[k];
    for (int k = 0; k < 4; k++) qd[3 + k] = 0.5 * (G[k] * wb[0] + G[4 + k] * wb[1] + G[8 + k] * wb[2]);
}

int mb_jspatial_kin(const mb_jspatial *S, const double *z, const double *zd, double *q,
                    double *qd)
{
    const mb_jtree *T = S->T;
    for (ptrdiff_t i = 0; i < T->n; i++) {
        double *w = S->work + MB_JS_PER_BODY * i, *A = w + JA, *o = w + JO, *Sm = w + JS;
        int p = T->parent[i];
        const double *wp = p >= 0 ? S->work + MB_JS_PER_BODY * p : NULL, *R = T->frame + 12 * i,
                     *k = T->axis + 3 * i, *c = T->inertia + 10 * i + 1;
        const double *zi = z + S->off[i], *zdi = zd + S->off[i];
        static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        double AJ[9], st[3], kg[3], C[9];
        mul33(wp ? wp + JA : I3, R, AJ, 0);
        mv3(wp ? wp + JA : I3, R + 9, st, 0);
        for (int e = 0; e < 3; e++) o[e] = (wp ? wp[JO + e] : 0.0) + st[e];
        mv3(AJ, k, kg, 0);
        memset(Sm, 0, 18 * sizeof(double));
        int d = 1;
        if (T->type[i] == MB_JT_REVOLUTE) {  /* C = cos I + (1 - cos) k k^T + sin k~ */
            double ct = cos(zi[0]), sn = sin(zi[0]), K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
            for (int r = 0; r < 3; r++)
                for (int e = 0; e < 3; e++) C[3 * r + e] = (r == e ? ct : 0.0) + (1 - ct) * k[r] * k[e] + sn * K[3 * r + e];
            mul33(AJ, C, A, 0);
            memcpy(Sm, kg, sizeof kg);
            w[JNU] = zdi[0];
        } else if (T->type[i] == MB_JT_PRISMATIC) {
            memcpy(A, AJ, sizeof AJ);
            for (int e = 0; e < 3; e++) o[e] += kg[e] * zi[0], Sm[3 + e] = kg[e];
            w[JNU] = zdi[0];
        } else if (T->type[i] == MB_JT_BALL) {  /* S_j = (A e_j; 0) */
            double nrm = sqrt(zi[0] * zi[0] + zi[1] * zi[1] + zi[2] * zi[2] + zi[3] * zi[3]), G[12];
            if (!(nrm > 0) || !isfinite(nrm))
                return MB_ERR_NONFINITE;
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
        double ac[3], sn[6] = {0, 0, 0, 0, 0, 0}, vp[6] = {0, 0, 0, 0, 0, 0};
        mv3(A, c, ac, 0);
        for (int e = 0; e < 3; e++) w[JR + e] = o[e] + ac[e];
        for (int j = 0; j < d; j++)
            for (int e = 0; e < 6; e++) sn[e] += Sm[6 * j + e] * w[JNU + j];
        if (wp) {  /* the parent's motion at o */
            double dd[3] = {o[0] - wp[JO], o[1] - wp[JO + 1], o[2] - wp[JO + 2]};
            shift_m(wp + JV, dd, vp);
        }
        for (int e = 0; e < 6; e++) w[JV + e] = vp[e] + sn[e];
        crm(w + JV, sn, w + JC);
        int b = S->body[i];
        body_coords(w, q + 7 * b, qd + 7 * b);
        for (int e = 0; e < 7; e++)
            if (!isfinite(q[7 * b + e]) || !isfinite(qd[7 * b + e]))
                return MB_ERR_NONFINITE;
    }
    return MB_OK;
}

/* the spatial inertia about the body's joint point (6 x 6, row-major) of mass m, centre
 * of mass r relative to that point and centroidal inertia Jc (world axes), and the bias
 * p = v x* I v - f of the wrench f (about the same point) */
static void body_inertia(double m, const double *r, const double *Jc, const double *v,
                         const double *f, double *I, double *pA)
{
    double X[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
    memset(I, 0, 36 * sizeof(double));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += X[3 * a + k] * X[3 * b + k];  /* X X^T */
            I[6 * a + b] = Jc[3 * a + b] + m * s;
            I[6 * a + 3 + b] = m * X[3 * a + b];
            I[6 * (3 + a) + b] = m * X[3 * b + a];
        }
    for (int a = 0; a < 3; a++) I[6 * (3 + a) + 3 + a] = m;
    double h[6], t1[3], t2[3], t3[3];
    for (int a = 0; a < 6; a++) {
        h[a] = 0;
        for (int b = 0; b < 6; b++) h[a] += I[6 * a + b] * v[b];
    }
    cross(v, h, t1);       /* v x* h = (w x h_n + v_O x h_f, w x h_f) */
    cross(v + 3, h + 3, t2);
    cross(v, h + 3, t3);
    for (int a = 0; a < 3; a++) pA[a] = t1[a] + t2[a] - f[a], pA[3 + a] = t3[a] - f[3 + a];
}

/* the body's wrench about its joint point (moment; force; r: the centre of mass relative
 * to it) of Q's rows of body b: the force, and the torque n' = G(p) (Q_p - Q_v) / 2 in
 * body axes, J' the centroidal inertia */
static void body_wrench(const double *A, const double *r, const double *Jb, const double *q,
                        const double *qd, const double *Q, double *f)
{
    const double *p = q + 3, *pd = qd + 3, *Qp = Q + 3;
    double G[12], Gd[12], g[3], Jg[3], Qr[4], nb[3], n[3], rf[3];
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

/* the Cholesky factor L (lower, row-major d x d) of the symmetric D (d = 1 or 3); 0
 * when D is not positive definite */
static int chol(const double *D, int d, double *L)
{
    for (int j = 0; j < d; j++) {
        double s = D[d * j + j];
        for (int k = 0; k < j; k++) s -= L[d * j + k] * L[d * j + k];
        if (!(s > 0) || !isfinite(s))
            return 0;
        L[d * j + j] = sqrt(s);
        for (int i = j + 1; i < d; i++) {
            double t = D[d * i + j];
            for (int k = 0; k < j; k++) t -= L[d * i + k] * L[d * j + k];
            L[d * i + j] = t / L[d * j + j];
        }
        for (int i = 0; i < j; i++) L[d * i + j] = 0.0;
    }
    return 1;
}

/* y = L^-1 b (forward substitution) and, with back, then x = L^-T y in place */
static void chol_solve(const double *L, int d, double *b, int back)
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

/* pass 2 of the ABA for body i: U, the Cholesky factor L of D, u, and its articulated
 * inertia I - W W^T (W = U L^-T: backward stable where D is ill-conditioned, as for a rod's
 * small inertia about its own axis) and bias added to its parent's */
static int aba_back(const mb_jspatial *S, ptrdiff_t i)
{
    double *w = S->work + MB_JS_PER_BODY * i, *IA = w + JIA, *pA = w + JPA, *Sm = w + JS,
           *U = w + JU, *Di = w + JDI, *u = w + JUU, *c = w + JC;
    int d = (int)w[JD];
    double D[9];
    for (int j = 0; j < d; j++) {
        for (int a = 0; a < 6; a++) {
            double s = 0;
            for (int b = 0; b < 6; b++) s += IA[6 * a + b] * Sm[6 * j + b];
            U[6 * j + a] = s;
        }
        u[j] = 0;
        for (int a = 0; a < 6; a++) u[j] -= Sm[6 * j + a] * pA[a];
    }
    for (int j = 0; j < d; j++)
        for (int l = 0; l < d; l++) {
            double s = 0;
            for (int a = 0; a < 6; a++) s += Sm[6 * j + a] * U[6 * l + a];
            D[d * j + l] = s;
        }
    if (!chol(D, d, Di))
        return MB_RECOVERABLE;
    int p = S->T->parent[i];
    if (p < 0)
        return MB_OK;
    double *wp = S->work + MB_JS_PER_BODY * p, W[18], y[3];  /* W = U L^-T, y = L^-1 u */
    for (int a = 0; a < 6; a++) {
        double row[3];
        for (int j = 0; j < d; j++) row[j] = U[6 * j + a];
        chol_solve(Di, d, row, 0);
        for (int j = 0; j < d; j++) W[6 * j + a] = row[j];
    }
    for (int j = 0; j < d; j++) y[j] = u[j];
    chol_solve(Di, d, y, 0);
    double Ia[36], pa[6], X[36], XI[36], dd[3];
    for (int a = 0; a < 6; a++) {
        double s = pA[a];
        for (int b = 0; b < 6; b++) {
            double v = IA[6 * a + b];
            for (int j = 0; j < d; j++) v -= W[6 * j + a] * W[6 * j + b];
            Ia[6 * a + b] = v;
            s += v * c[b];
        }
        for (int j = 0; j < d; j++) s += W[6 * j + a] * y[j];
        pa[a] = s;
    }
    /* to the parent's point o_p: X = [1 -d~; 0 1], d = o_p - o_i; I X I X^T, p X p */
    for (int e = 0; e < 3; e++) dd[e] = wp[JO + e] - w[JO + e];
    double Dx[9] = {0, -dd[2], dd[1], dd[2], 0, -dd[0], -dd[1], dd[0], 0};
    memset(X, 0, sizeof X);
    for (int a = 0; a < 6; a++) X[7 * a] = 1.0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) X[6 * a + 3 + b] = -Dx[3 * a + b];
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++) {
            double s = 0;
            for (int k = 0; k < 6; k++) s += X[6 * a + k] * Ia[6 * k + b];
            XI[6 * a + b] = s;
        }
    for (int a = 0; a < 6; a++) {
        double s = 0;
        for (int k = 0; k < 6; k++) s += X[6 * a + k] * pa[k];
        wp[JPA + a] += s;
        for (int b = 0; b < 6; b++) {
            double t = 0;
            for (int k = 0; k < 6; k++) t += XI[6 * a + k] * X[6 * b + k];
            wp[JIA + 6 * a + b] += t;
        }
    }
    return MB_OK;
}

int mb_jspatial_accel(const mb_jspatial *S, const double *q, const double *qd,
                      const double *Q, const double *z, const double *zd, double *zdd)
{
    const mb_jtree *T = S->T;
    ptrdiff_t n = T->n;
    for (ptrdiff_t i = 0; i < n; i++) {  /* rigid-body inertias and biases */
        double *w = S->work + MB_JS_PER_BODY * i, Jb[9], Jw[9], AJ[9], f[6];
        const double *in = T->inertia + 10 * i;
        int b = S->body[i];
        double Jv[9] = {in[4], in[7], in[8], in[7], in[5], in[9], in[8], in[9], in[6]};
        memcpy(Jb, Jv, sizeof Jv);
        double s[3] = {w[JR] - w[JO], w[JR + 1] - w[JO + 1], w[JR + 2] - w[JO + 2]};
        body_wrench(w + JA, s, Jb, q + 7 * b, qd + 7 * b, Q + 7 * b, f);
        mul33(w + JA, Jb, AJ, 0);  /* A J' A^T */
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                Jw[3 * r + c] = AJ[3 * r] * w[JA + 3 * c] + AJ[3 * r + 1] * w[JA + 3 * c + 1] + AJ[3 * r + 2] * w[JA + 3 * c + 2];
        body_inertia(in[0], s, Jw, w + JV, f, w + JIA, w + JPA);
    }
    for (ptrdiff_t i = n - 1; i >= 0; i--) {
        int rc = aba_back(S, i);
        if (rc != MB_OK)
            return rc;
    }
    for (ptrdiff_t i = 0; i < n; i++) {  /* accelerations (the base's: 0, gravity in Q) */
        double *w = S->work + MB_JS_PER_BODY * i, *a = w + JACC, *U = w + JU, *Di = w + JDI,
               *Sm = w + JS, r[3], nd[3];
        int p = T->parent[i], d = (int)w[JD];
        double ap[6] = {0, 0, 0, 0, 0, 0};
        if (p >= 0) {  /* the parent's acceleration at o_i */
            const double *wq = S->work + MB_JS_PER_BODY * p;
            double dd[3] = {w[JO] - wq[JO], w[JO + 1] - wq[JO + 1], w[JO + 2] - wq[JO + 2]};
            shift_m(wq + JACC, dd, ap);
        }
        for (int e = 0; e < 6; e++) a[e] = ap[e] + w[JC + e];
        for (int j = 0; j < d; j++) {
            r[j] = w[JUU + j];
            for (int e = 0; e < 6; e++) r[j] -= U[6 * j + e] * a[e];
        }
        for (int j = 0; j < d; j++) nd[j] = r[j];
        chol_solve(Di, d, nd, 1);  /* D^-1 r */
        for (int j = 0; j < d; j++)
            for (int e = 0; e < 6; e++) a[e] += Sm[6 * j + e] * nd[j];
        double *out = zdd + S->off[i];
        if (d == 1) {
            out[0] = nd[0];
        } else {  /* p'' = G(p)^T w' / 2 - |p'|^2 p */
            const double *pz = z + S->off[i], *pd = zd + S->off[i];
            double G[12], pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
            gmat(w + JP, G);
            for (int k = 0; k < 4; k++)
                out[k] = 0.5 * (G[k] * nd[0] + G[4 + k] * nd[1] + G[8 + k] * nd[2]) - pp * pz[k];
        }
        for (int j = 0; j < d; j++)
            if (!isfinite(nd[j]))
                return MB_RECOVERABLE;
    }
    return MB_OK;
}

int mb_jspatial_body_acc(const mb_jspatial *S, const double *q, const double *qd,
                         double *qdd)
{
    for (ptrdiff_t i = 0; i < S->T->n; i++) {
        const double *w = S->work + MB_JS_PER_BODY * i, *a = w + JACC, *v = w + JV;
        int b = S->body[i];
        const double *r = q + 7 * b, *p = r + 3, *vc = qd + 7 * b, *pd = vc + 3;
        double t1[3], t2[3], ab[3], G[12], s[3] = {r[0] - w[JO], r[1] - w[JO + 1], r[2] - w[JO + 2]};
        cross(a, s, t1);
        cross(v, vc, t2);
        for (int e = 0; e < 3; e++) qdd[7 * b + e] = a[3 + e] + t1[e] + t2[e];
        mv3(w + JA, a, ab, 1);
        gmat(p, G);
        double pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
        for (int k = 0; k < 4; k++)
            qdd[7 * b + 3 + k] = 0.5 * (G[k] * ab[0] + G[4 + k] * ab[1] + G[8 + k] * ab[2]) - pp * p[k];
    }
    return MB_OK;
}

/* the link frame of the mechanism's body b (or the ground: b < 0) from its body
 * coordinates: rotation A, origin o, angular velocity w and origin velocity v (global) */
static void link_of(const double *q, const double *qd, int b, const double *c, double *A,
                    double *o, double *w, double *v)
{
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (b < 0) {
        memcpy(A, I3, sizeof I3);
        memset(o, 0, 3 * sizeof(double)), memset(w, 0, 3 * sizeof(double)), memset(v, 0, 3 * sizeof(double));
        return;
    }
    const double *r = q + 7 * b, *pr = r + 3;
    double nrm = sqrt(pr[0] * pr[0] + pr[1] * pr[1] + pr[2] * pr[2] + pr[3] * pr[3]);
    double p[4] = {pr[0] / nrm, pr[1] / nrm, pr[2] / nrm, pr[3] / nrm}, s[3], G[12], wb[3], ws[3];
    rot_of(p, A);
    mv3(A, c, s, 0);
    for (int k = 0; k < 3; k++) o[k] = r[k] - s[k];
    if (!qd) {
        memset(w, 0, 3 * sizeof(double)), memset(v, 0, 3 * sizeof(double));
        return;
    }
    const double *pd = qd + 7 * b + 3;
    gmat(p, G);
    for (int k = 0; k < 3; k++) wb[k] = 2 * (G[4 * k] * pd[0] + G[4 * k + 1] * pd[1] + G[4 * k + 2] * pd[2] + G[4 * k + 3] * pd[3]);
    mv3(A, wb, w, 0);
    cross(w, s, ws);
    for (int k = 0; k < 3; k++) v[k] = qd[7 * b + k] - ws[k];
}

/* one joint's coordinates and rates from the parent's and the child's link frames */
static void joint_of(const mb_jtree *T, ptrdiff_t i, const double *Ap, const double *op,
                     const double *wp, const double *vp, const double *Ac, const double *oc,
                     const double *wc, const double *vc, double *zi, double *zdi)
{
    const double *R = T->frame + 12 * i, *t = R + 9, *k = T->axis + 3 * i;
    double AJ[9], kg[3], sJ[3], C[9], dw[3];
    mul33(Ap, R, AJ, 0);
    mv3(AJ, k, kg, 0);
    mv3(Ap, t, sJ, 0);
    mul33(AJ, Ac, C, 1);  /* AJ^T Ac */
    for (int e = 0; e < 3; e++) dw[e] = wc[e] - wp[e];
    if (T->type[i] == MB_JT_REVOLUTE) {  /* C = Rot(k, theta) */
        double u[3] = {0, 0, 0}, wv[3], Cu[3];
        int m = fabs(k[0]) < 0.6 ? 0 : (fabs(k[1]) < 0.6 ? 1 : 2);
        u[m] = 1.0;
        double d = dot3(u, k);
        for (int e = 0; e < 3; e++) u[e] -= d * k[e];
        double nu = sqrt(dot3(u, u));
        for (int e = 0; e < 3; e++) u[e] /= nu;
        cross(k, u, wv);
        mv3(C, u, Cu, 0);
        zi[0] = atan2(dot3(wv, Cu), dot3(u, Cu));
        if (zdi)
            zdi[0] = dot3(kg, dw);
    } else if (T->type[i] == MB_JT_PRISMATIC) {
        double D[3], wsJ[3], wk[3];
        for (int e = 0; e < 3; e++) D[e] = oc[e] - op[e] - sJ[e];
        zi[0] = dot3(kg, D);
        if (zdi) {
            cross(wp, sJ, wsJ);
            cross(wp, kg, wk);
            double s = 0;
            for (int e = 0; e < 3; e++) s += kg[e] * (vc[e] - vp[e] - wsJ[e]) + wk[e] * D[e];
            zdi[0] = s;
        }
    } else {  /* ball: p of C, p' = G(p)^T (Ac^T (wc - wp)) / 2 */
        double G[12], wr[3];
        quat_of(C, zi);
        if (zdi) {
            gmat(zi, G);
            mv3(Ac, dw, wr, 1);
            for (int e = 0; e < 4; e++) zdi[e] = 0.5 * (G[e] * wr[0] + G[4 + e] * wr[1] + G[8 + e] * wr[2]);
        }
    }
}

int mb_jspatial_joints(const mb_jspatial *S, const double *q, const double *qd, double *z,
                       double *zd)
{
    const mb_jtree *T = S->T;
    for (ptrdiff_t i = 0; i < T->n; i++) {
        int p = T->parent[i];
        double Ap[9], op[3], wp[3], vp[3], Ac[9], oc[3], wc[3], vc[3];
        link_of(q, qd, p >= 0 ? S->body[p] : -1, p >= 0 ? T->inertia + 10 * p + 1 : NULL, Ap,
                op, wp, vp);
        link_of(q, qd, S->body[i], T->inertia + 10 * i + 1, Ac, oc, wc, vc);
        ptrdiff_t o = S->off[i], d = S->off[i + 1] - o;
        joint_of(T, i, Ap, op, wp, vp, Ac, oc, wc, vc, z + o, zd ? zd + o : NULL);
        for (ptrdiff_t e = 0; e < d; e++)
            if (!isfinite(z[o + e]) || (zd && !isfinite(zd[o + e])))
                return MB_ERR_NONFINITE;
    }
    return MB_OK;
}
