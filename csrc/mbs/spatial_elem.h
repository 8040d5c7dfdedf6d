#ifndef MB_MBS_SPATIAL_ELEM_H
#define MB_MBS_SPATIAL_ELEM_H
/* Element level of the spatial model (internal to csrc/mbs: spatial_elem.c defines it,
 * spatial.c, spatial_forces.c and spatial_mass.c use it).
 *
 * A pair element sees the 14 local coordinates ql = (r_i, p_i, r_j, p_j) of its bodies
 * (the ground: r = 0, p = (1, 0, 0, 0), velocity 0; its columns are dropped when the
 * local blocks are scattered into the global arrays).
 *
 * sp_vec: a 3-vector that is a quadratic polynomial of ql (a body-fixed vector A s',
 * a body point r + A s', or a difference of such): its value, Jacobian J (3 x 14) and
 * the constant Hessians of its components, which live in the p-blocks only (2 K_c of
 * each member).  Every constraint primitive and force law is built from sp_vecs by
 * the scalar rows below, which carry phi, its gradient g, Hessian H and, for a
 * direction w (the velocities q', or any x),
 *     Hw = H w,  wHw = w^T H w,  T = d/dq (w^T H w)
 * (exact: the third derivatives of every sp_vec component vanish). */
#include <string.h>
#include "spatial.h"

#define SP_NL 14

typedef struct sp_pair {
    int i, j;
    double q[SP_NL], w[SP_NL];  /* local coordinates and the local direction w */
} sp_pair;

typedef struct sp_vec {
    double v[3];
    double J[3][SP_NL];
    double K[2][3][4][4];       /* Hessian of component c in the p-block of member m */
    int has[2];                 /* member m contributes a Hessian block */
    /* direction derivatives (sp_vec_dir): J w, H_c w, w^T H_c w */
    double Jw[3], Hw[3][SP_NL], wHw[3];
} sp_vec;

enum {
    SP_PHI = 1u << 0,
    SP_G = 1u << 1,
    SP_H = 1u << 2,   /* the full Hessian */
    SP_W = 1u << 3,   /* Hw, wHw (needs the direction) */
    SP_T = 1u << 4    /* T (needs the direction) */
};

typedef struct sp_row {
    double phi;
    double g[SP_NL];
    double H[SP_NL][SP_NL];
    double Hw[SP_NL];
    double wHw;
    double T[SP_NL];
} sp_row;

/* one constraint row of an element with its time terms pt = phi_t, ptt = phi_tt,
 * gt = phi_qt, gtt = phi_qtt, Htw = (phi_qt w)_q (spatial_con.c; spatial.c's header
 * comment) */
typedef struct sp_crow {
    sp_row r;
    double pt, ptt;
    double gt[SP_NL], gtt[SP_NL], Htw[SP_NL];
    int timed;  /* gt, gtt, Htw nonzero */
} sp_crow;

/* constraint element k of m at (t, q) with direction w (may be NULL): its pair in *p,
 * its rows (*nr of them) in out (spatial_con.c); MB_OK or MB_ERR_ILL_INPUT */
int sp_con_at(const mb_spatial_model *m, int k, double t, const double *q, const double *w,
              unsigned what, sp_pair *p, sp_crow out[3], int *nr);

/* a force element's local values (spatial_forces.c): what = SP_FQ | SP_FQQ | SP_FQQD |
 * SP_FV asks for Q, Q_q, Q_q' (14 local coordinates) and the potential energy */
enum { SP_FQ = 1, SP_FQQ = 2, SP_FQQD = 4, SP_FV = 8 };
typedef struct sp_flocal {
    double Q[SP_NL];
    double Qq[SP_NL][SP_NL], Qqd[SP_NL][SP_NL];
    double V;
} sp_flocal;

/* force element k of m at (t, q, q') (spatial_forces.c); MB_OK or MB_ERR_ILL_INPUT */
int sp_force_at(const mb_spatial_model *m, int k, double t, const double *q, const double *qd,
                unsigned what, sp_flocal *out);

/* gather the pair (i, j) from the global q and direction w (may be NULL: zeros) */
int sp_pair_gather(const mb_spatial_model *m, int i, int j, const double *q, const double *w,
                   sp_pair *p);
/* the body-fixed vector s (point = 0) or the body point s (point = 1) of member m
 * (0: i, 1: j) in global components, with its direction derivatives */
void sp_vec_body(const sp_pair *p, int member, const double s[3], int point, sp_vec *out);
/* out = a - b (direction derivatives included) */
void sp_vec_sub(const sp_vec *a, const sp_vec *b, sp_vec *out);
/* clear the parts of r that 'what' asks for */
void sp_row_zero(sp_row *r, unsigned what);
/* r += alpha u . v */
void sp_row_dot(sp_row *r, double alpha, const sp_vec *u, const sp_vec *v, unsigned what);
/* r += alpha u_c */
void sp_row_comp(sp_row *r, double alpha, const sp_vec *u, int c, unsigned what);
/* r += alpha s */
void sp_row_axpy(sp_row *r, double alpha, const sp_row *s, unsigned what);

/* global column of local column c of the pair (i, j); -1 for the ground */
static inline int sp_gcol(int i, int j, int c)
{
    int b = c < 7 ? i : j;
    return b < 0 ? -1 : 7 * b + c % 7;
}

/* A (rows x cols, leading dimension ld) = 0 */
static inline void sp_zero_block(ptrdiff_t rows, ptrdiff_t cols, double *A, ptrdiff_t ld)
{
    for (ptrdiff_t c = 0; c < cols; c++) memset(A + c * ld, 0, (size_t)rows * sizeof(double));
}

/* rotation helpers (spatial_elem.c): G(p), E(p) (3 x 4) */
void sp_G(const double p[4], double G[3][4]);
void sp_E(const double p[4], double E[3][4]);

/* the mass of body b (spatial_mass.c): its p-block B = 4 G^T J' G and (M x)_q's p-block
 * D (each when non-NULL; x the global vector) */
void sp_body_mass(const mb_spatial_model *m, int b, const double *q, const double *x,
                  double B[4][4], double D[4][4]);
/* quadratic velocity term of body b (spatial_mass.c): Q_p = 8 G(p')^T J' G(p') p and,
 * when wanted (non-NULL), its derivatives in p (Dq) and p' (Dv) (4 x 4) */
void sp_body_qv(const mb_spatial_model *m, int b, const double *q, const double *qd,
                double Qp[4], double Dq[4][4], double Dv[4][4]);

#endif
