#ifndef MB_MBS_SPATIAL_H
#define MB_MBS_SPATIAL_H
/* Spatial (3-D) multibody model in Cartesian coordinates with Euler parameters
 * (RN paper section 1, eq 1; Haug, Computer-Aided Kinematics and Dynamics of
 * Mechanical Systems, 1989, chs. 9-11).
 *
 * Body k has q_k = (r, p) = (x, y, z, e0, e1, e2, e3): the centroid r and the Euler
 * parameters p; q = (q_0, q_1, ...), nq = 7 nb.  Its rotation matrix is the
 * homogeneous quadratic form
 *     A(p) = E(p) G(p)^T = (e0^2 - e.e) I + 2 e e^T + 2 e0 e~,
 *     E(p) = [-e, e~ + e0 I],   G(p) = [-e, -e~ + e0 I]        (3 x 4, linear in p),
 * so every component of a body-fixed vector A(p) s' is p^T K_c(s') p with a constant
 * symmetric 4 x 4 K_c: its gradient is 2 K_c p, its Hessian 2 K_c, and its third
 * derivatives vanish.  (On |p| = 1 this A is the usual rotation; off the sphere it is
 * |p|^2 times a rotation, a smooth extension whose derivatives differ from those of
 * A = (2 e0^2 - 1) I + ... only by multiples of the normalization row.)
 *
 * Equations of motion (mech.h: M(q) q'' + Phi_q^T lambda = Q(t, q, q')):
 *   M_k = diag(m I3, 4 G^T J' G)                 (J' the body-frame inertia tensor)
 *   Q_k = (m g + forces, 2 Q_p^A + 8 G(p')^T J' G(p') p)
 * where the last term is the quadratic velocity term of the Euler-parameter
 * Lagrangian T = m/2 r'.r' + 2 p'^T G^T J' G p' (Haug eq 11.2.?; derived in
 * spatial.c).  4 G^T J' G is singular (its null vector is p); the normalization
 * constraint p^T p - 1 = 0 of every body (the first nb rows of Phi) makes the
 * saddle-point matrix [M Phi_q^T; Phi_q 0] and the reduced M^ = E^T M E of the
 * state-space formulation nonsingular.
 *
 * Constraint elements (one row of the table each, rows assigned by compile): the four
 * primitives of RN section 3 and two rheonomic rows; joints are made of them in
 * Python (mbint/mbs/spatial.py).  a_i = A_i ai' etc. are body-fixed vectors, P_i =
 * r_i + A_i si' body points, d = P_j - P_i, f(t) a time function (model.h):
 *   MB_SC_DOT1   a_i . a_j - f(t)                                   (1 row, Phi^d1)
 *   MB_SC_DOT2   a_i . d - f(t)                                     (1 row, Phi^d2)
 *   MB_SC_POINT  d = P_j - P_i                                      (3 rows, Phi^s)
 *   MB_SC_DIST   (d . d - f(t)^2) / 2                               (1 row, Phi^dist)
 *   MB_SC_ANGLE  cos f(t) (b_i . a_j) - sin f(t) (a_i . a_j)        (1 row: the
 *                relative rotation angle theta = atan2(a_j.b_i, a_j.a_i) about a_i x b_i
 *                prescribed, sin(theta - f(t)) = 0 for unit a_i ⟂ b_i)
 * Force elements (pair elements like the planar ones):
 *   MB_SF_TSDA      F = k (l - L0) + c l' + fa(t) along d (tension positive)
 *   MB_SF_RSDA      T = k (theta - L0) + c theta' + fa(t), theta = atan2(a_j.b_i, a_j.a_i)
 *                   (theta - L0 wrapped to (-pi, pi]), a restoring torque
 *   MB_SF_BUSHING_T one translational component of a bushing: x = a_i . d - L0
 *   MB_SF_BUSHING_R one rotational component: x = (b_i . a_j - a_i . b_j) / 2 - L0
 *                   (the bushing element law F = k x + c x' along grad x)
 *   MB_SF_TIRE      vertical spring-damper between the body point si and the road
 *                   height h(x) under it: x = z_P - h(x_P) - L0, F_z = -(k x + c x')
 *                   (clamped at 0 when unilateral), a vertical force at P; road h(x) =
 *                   z0 + the half-cylinder bump of radius r centred at x_b, as seen by a
 *                   wheel of radius R_w (the path of the wheel centre: R_w = 0 is the bare
 *                   profile, whose slope is infinite at the bump's edges)
 * and point forces/torques of callbacks (Python or C; derivatives by central
 * differences), and gravity.
 *
 * Pair-element layout: 14 local coordinates ql = (r_i, p_i, r_j, p_j); the ground
 * (index -1) has r = 0, p = (1, 0, 0, 0) and no columns (dropped by the scatter). */
#include "model.h"

enum mb_spatial_con_type {
    MB_SC_DOT1 = 1,
    MB_SC_DOT2 = 2,
    MB_SC_POINT = 3,
    MB_SC_DIST = 4,
    MB_SC_ANGLE = 5
};

enum mb_spatial_force_type {
    MB_SF_TSDA = 1,
    MB_SF_RSDA = 2,
    MB_SF_BUSHING_T = 3,
    MB_SF_BUSHING_R = 4,
    MB_SF_TIRE = 5
};

typedef struct mb_spatial_con {
    int type;
    int i, j;              /* body indices, -1 = ground */
    double ai[3], bi[3];   /* vectors on body i (body frame) */
    double aj[3];          /* vector on body j */
    double si[3], sj[3];   /* points on i and j (body frames) */
    mb_timefn f;           /* f(t): offset, length or angle */
    int row;               /* first row in Phi (rows 0..nb-1 are the normalizations) */
} mb_spatial_con;

typedef struct mb_spatial_force {
    int type;
    int i, j;
    double si[3], sj[3];
    double ai[3], bi[3], aj[3], bj[3];
    double k, c, L0;
    mb_timefn fa;          /* actuator force / torque (TSDA, RSDA) */
    /* tire: road height z0, bump centre x_b, bump radius r (0: flat), wheel radius R_w,
     * unilateral (1: no pull) */
    double z0, bump_x, bump_r, wheel_r;
    int unilateral;
} mb_spatial_force;

/* a point force and torque from a callback: out6 = (F, n) in the global frame, F
 * applied at the body point s; returns 0 or a status (> 0 recoverable, < 0 fatal) */
typedef int (*mb_point_force_fn)(void *ud, double t, const double *q, const double *qd,
                                 double *out6);
typedef struct mb_spatial_cbforce {
    int body;              /* >= 0 */
    double s[3];
    mb_point_force_fn fn;
    void *ud;
} mb_spatial_cbforce;

typedef struct mb_spatial_model {
    int nb;
    const double *body;    /* nb x 7: mass, Jxx, Jyy, Jzz, Jxy, Jxz, Jyz (body frame) */
    double g[3];
    int ncon;
    const mb_spatial_con *cons;
    int nc;                /* nb + the rows of the elements */
    int nf;
    const mb_spatial_force *forces;
    int ncb;
    const mb_spatial_cbforce *cb;
} mb_spatial_model;

/* rows of a constraint element type (0: unknown) */
int mb_spatial_con_rows(int type);
/* 1 when nothing depends on t explicitly (constant time functions, no callbacks) */
int mb_spatial_autonomous(const mb_spatial_model *m);
/* check the tables (types, indices, rows, finite values): MB_OK or MB_ERR_ILL_INPUT */
int mb_spatial_check(const mb_spatial_model *m);
/* Fill mech with the spatial kernels (nq = 7 nb, nc = m->nc, mass_constant 0; the
 * sparse kernels below unless the model has callback forces). */
void mb_spatial_mech(const mb_spatial_model *m, mb_mech *mech);
/* The sparse kernels of the spatial model (spatial_sparse.c; mech.h mb_mech_sparse,
 * ctx = the model); they refuse a model with callback forces (MB_ERR_NOT_SUPPORTED). */
extern const mb_mech_sparse mb_spatial_sparse;

/* the kernels of the mb_mech table (mech.h), the model as their last argument ctx;
 * column-major outputs */
int mb_spatial_phi(double t, const double *q, double *phi, void *ctx);
int mb_spatial_phi_q(double t, const double *q, double *Pq, ptrdiff_t ld, void *ctx);
int mb_spatial_phi_t(double t, const double *q, double *pt, void *ctx);
int mb_spatial_gamma(double t, const double *q, const double *qd,
                     double *g, void *ctx);
int mb_spatial_phiq_x_q(double t, const double *q, const double *x,
                        double *out, ptrdiff_t ld, void *ctx);
int mb_spatial_phiqT_lam_q(double t, const double *q,
                           const double *lam, double *out, ptrdiff_t ld, void *ctx);
int mb_spatial_gamma_q(double t, const double *q, const double *qd,
                       double *out, ptrdiff_t ld, void *ctx);
int mb_spatial_gamma_qd(double t, const double *q, const double *qd,
                        double *out, ptrdiff_t ld, void *ctx);
int mb_spatial_mass(const double *q, double *M, ptrdiff_t ld, void *ctx);
int mb_spatial_mass_x_q(const double *q, const double *x, double *out,
                        ptrdiff_t ld, void *ctx);
int mb_spatial_forces(double t, const double *q, const double *qd,
                      double *Q, void *ctx);
int mb_spatial_forces_q(double t, const double *q, const double *qd,
                        double *out, ptrdiff_t ld, void *ctx);
int mb_spatial_forces_qd(double t, const double *q, const double *qd,
                         double *out, ptrdiff_t ld, void *ctx);
int mb_spatial_energy(double t, const double *q, const double *qd,
                      double *kinetic, double *potential, void *ctx);

/* The largest step from (t, q, q', q'') that cannot carry a tire over a bump of the
 * road unseen (spatial_forces.c; mech.h step_bound); +inf without bumps ahead. */
int mb_spatial_step_bound(double t, const double *q, const double *qd,
                          const double *qdd, double *h_max, void *ctx);
/* road height h, h', h'' at x of a tire element (spatial_forces.c) */
void mb_spatial_road(const mb_spatial_force *F, double x, double *h, double *h1, double *h2);

#endif
