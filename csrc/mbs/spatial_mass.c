/* Mass of the spatial model (spatial.h): M = diag(m I3, 4 G^T J' G) per body, (M x)_q,
 * and the quadratic velocity term 8 G(p')^T J' G(p') p of the forces (spatial_forces.c);
 * the formulas in spatial.c's header comment. */
#include <math.h>
#include <string.h>
#include "spatial_elem.h"
#include "status.h"

/* ------------------------------------------------------------------ mass */

/* the body-frame inertia tensor of body b */
static void inertia(const mb_spatial_model *m, int b, double J[3][3])
{
    const double *x = m->body + 7 * b;
    J[0][0] = x[1]; J[1][1] = x[2]; J[2][2] = x[3];
    J[0][1] = J[1][0] = x[4];
    J[0][2] = J[2][0] = x[5];
    J[1][2] = J[2][1] = x[6];
}

/* out (4 x 4) = s A^T J B for A, B (3 x 4) */
static void atjb(double s, const double A[3][4], const double J[3][3], const double B[3][4],
                 double out[4][4])
{
    double JB[3][4];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            JB[r][c] = J[r][0] * B[0][c] + J[r][1] * B[1][c] + J[r][2] * B[2][c];
    for (int a = 0; a < 4; a++)
        for (int c = 0; c < 4; c++)
            out[a][c] = s * (A[0][a] * JB[0][c] + A[1][a] * JB[1][c] + A[2][a] * JB[2][c]);
}

/* L(w) = [0 -w^T; w -w~], G(a)^T w = L(w) a */
static void lmat(const double w[3], double L[4][4])
{
    L[0][0] = 0;    L[0][1] = -w[0]; L[0][2] = -w[1]; L[0][3] = -w[2];
    L[1][0] = w[0]; L[1][1] = 0;     L[1][2] = w[2];  L[1][3] = -w[1];
    L[2][0] = w[1]; L[2][1] = -w[2]; L[2][2] = 0;     L[2][3] = w[0];
    L[3][0] = w[2]; L[3][1] = w[1];  L[3][2] = -w[0]; L[3][3] = 0;
}

static void mat3x4_vec(const double A[3][4], const double x[4], double y[3])
{
    for (int r = 0; r < 3; r++) y[r] = A[r][0] * x[0] + A[r][1] * x[1] + A[r][2] * x[2] + A[r][3] * x[3];
}

static void mat3_vec(const double J[3][3], const double x[3], double y[3])
{
    for (int r = 0; r < 3; r++) y[r] = J[r][0] * x[0] + J[r][1] * x[1] + J[r][2] * x[2];
}

/* the p-block of body b: B = 4 G^T J' G (B non-NULL) and (M x)_q = 4 L(u) - 4 G^T J' G(x_p),
 * u = J' G x_p (D non-NULL, x the global vector) */
void sp_body_mass(const mb_spatial_model *m, int b, const double *q, const double *x,
                  double B[4][4], double D[4][4])
{
    ptrdiff_t o = 7 * (ptrdiff_t)b + 3;
    double J[3][3], G[3][4];
    inertia(m, b, J);
    sp_G(q + o, G);
    if (B) atjb(4.0, G, J, G, B);
    if (D) {
        double Gx[3][4], Bx[4][4], Lu[4][4], gx[3], u[3];
        sp_G(x + o, Gx);
        mat3x4_vec(G, x + o, gx);
        mat3_vec(J, gx, u);
        lmat(u, Lu);
        atjb(4.0, G, J, Gx, Bx);
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) D[a][c] = 4 * Lu[a][c] - Bx[a][c];
    }
}

int mb_spatial_mass(const double *q, double *M, ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    sp_zero_block(nq, nq, M, ld);
    for (int b = 0; b < m->nb; b++) {
        ptrdiff_t o = 7 * b;
        double B[4][4];
        sp_body_mass(m, b, q, NULL, B, NULL);
        for (int a = 0; a < 3; a++) M[o + a + ld * (o + a)] = m->body[7 * b];
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) M[o + 3 + a + ld * (o + 3 + c)] = B[a][c];
    }
    return MB_OK;
}

int mb_spatial_mass_x_q(const double *q, const double *x, double *out,
                        ptrdiff_t ld, void *ctx)
{
    const mb_spatial_model *m = ctx;
    ptrdiff_t nq = 7 * (ptrdiff_t)m->nb;
    sp_zero_block(nq, nq, out, ld);
    for (int b = 0; b < m->nb; b++) {
        ptrdiff_t o = 7 * b + 3;
        double D[4][4];
        sp_body_mass(m, b, q, x, NULL, D);
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) out[o + a + ld * (o + c)] = D[a][c];
    }
    return MB_OK;
}

/* quadratic velocity term of body b: Q_p += 8 G(p')^T J' G(p') p and, when wanted,
 * its derivatives in p (Dq) and p' (Dv) (4 x 4); see spatial.h */
void sp_body_qv(const mb_spatial_model *m, int b, const double *q, const double *qd,
                double Qp[4], double Dq[4][4], double Dv[4][4])
{
    const double *p = q + 7 * b + 3, *v = qd + 7 * b + 3;
    double J[3][3], Gv[3][4], Gp[3][4], gp[3], w[3], L[4][4];
    inertia(m, b, J);
    sp_G(v, Gv);
    mat3x4_vec(Gv, p, gp);  /* G(p') p */
    mat3_vec(J, gp, w);     /* w = J' G(p') p */
    if (Qp)
        for (int a = 0; a < 4; a++)
            Qp[a] = 8 * (Gv[0][a] * w[0] + Gv[1][a] * w[1] + Gv[2][a] * w[2]);
    if (Dq) atjb(8.0, Gv, J, Gv, Dq);
    if (Dv) {
        double B[4][4];
        sp_G(p, Gp);
        lmat(w, L);
        atjb(8.0, Gv, J, Gp, B);
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 4; c++) Dv[a][c] = 8 * L[a][c] - B[a][c];
    }
}

