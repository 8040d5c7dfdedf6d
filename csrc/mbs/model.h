#ifndef MB_MBS_MODEL_H
#define MB_MBS_MODEL_H
/* Planar multibody model in body coordinates (Nikravesh, Planar Multibody
 * Dynamics): body k has q_k = (x, y, phi), its centre of mass at r = (x, y) and
 * rotation A(phi).  Points are given in body frames s' (for the ground, body index
 * -1, in the global frame).  The tables are packed once by mbint/mbs/planar.py
 * (PlanarModel.compile) and never change during a run.  mb_planar_mech() presents
 * the model as an mb_mech (mech.h). */
#include "mech.h"

/* prescribed function of time used by drivers and time-dependent forces:
 * f(t) = c0 + c1 t + c2 t^2 + a sin(w t + psi) */
typedef struct mb_timefn {
    double c0, c1, c2, a, w, psi;
} mb_timefn;

enum mb_joint_type {
    MB_JOINT_REVOLUTE = 1,      /* 2 rows: r_i + A_i si - r_j - A_j sj = 0 */
    MB_JOINT_TRANSLATIONAL = 2, /* 2 rows: phi_j - phi_i - phi0 = 0; (A_i ni)^perp . d = 0,
                                   d = r_j + A_j sj - r_i - A_i si */
    MB_JOINT_DISTANCE = 3,      /* 1 row: (d.d - L^2) / 2 = 0 (rigid link between points) */
    MB_JOINT_FIXED = 4,         /* 3 rows: revolute rows and phi_j - phi_i - phi0 = 0 */
    MB_JOINT_DRIVER_COORD = 5,  /* 1 row: q_{3i + coord} - f(t) = 0 */
    MB_JOINT_DRIVER_ANGLE = 6   /* 1 row: phi_j - phi_i - f(t) = 0 (i may be ground) */
};

typedef struct mb_planar_joint {
    int type;
    int i, j;          /* body indices; -1 = ground */
    double si[2], sj[2];
    double ni[2];      /* translational: axis direction in body i's frame (unit) */
    double L;          /* distance */
    double phi0;       /* fixed / translational: relative angle */
    int coord;         /* coordinate driver: 0 = x, 1 = y, 2 = phi of body i */
    mb_timefn f;       /* drivers */
    int row;           /* first row in Phi (set by compile) */
} mb_planar_joint;

enum mb_force_type {
    MB_FORCE_TSDA = 1,           /* spring-damper-actuator between points si, sj:
                                    F = k (l - L0) + c l' + fa(t) along the line */
    MB_FORCE_RSDA = 2,           /* torque between bodies i (or ground) and j:
                                    T = k (theta - theta0) + c theta', theta = phi_j - phi_i
                                    (wrapped to (-pi, pi] around theta0 when wrap) */
    MB_FORCE_CONTACT_LINE = 3,   /* circle of radius r (0: point) at si on body i against
                                    the ground line through p0 with unit normal nrm:
                                    delta = r - (p - p0).nrm; F = K delta^e + c delta' if delta > 0 */
    MB_FORCE_CONTACT_CIRCLES = 4, /* circles (si, ri) on i and (sj, rj) on j:
                                    delta = ri + rj - |p_j - p_i|, same law */
    MB_FORCE_GENERALIZED = 5     /* Q_{coord} += f(t) (coord indexes q globally) */
};

typedef struct mb_planar_force {
    int type;
    int i, j;
    double si[2], sj[2];
    double k, c, L0;     /* TSDA / RSDA (L0 = theta0 for RSDA) */
    mb_timefn fa;        /* TSDA actuator force, generalized force */
    int wrap;            /* RSDA: wrap the angle difference */
    double K, cd, e;     /* contact stiffness, damping, exponent (1 = linear) */
    double ri, rj;       /* contact radii */
    double p0[2], nrm[2];/* contact line */
    int coord;           /* generalized force: global coordinate index */
} mb_planar_force;

typedef struct mb_planar_model {
    int nb;
    const double *body;  /* nb x 2: (mass, inertia) per body */
    double g[2];         /* gravity */
    int nj;
    const mb_planar_joint *joints;
    int nc;              /* number of constraint rows (sum over joints) */
    int nf;
    const mb_planar_force *forces;
    /* optional extra generalized forces (Python add_force: the slow path); adds into Q */
    int (*extra)(double t, const double *q, const double *qd, double *Q, void *ctx);
    void *extra_ctx;
} mb_planar_model;

/* 1 when no joint or force of the model depends on t (drivers and prescribed forces
 * constant, no Python extra forces): mb_mech.autonomous. */
int mb_planar_autonomous(const mb_planar_model *m);
/* Fill mech with the planar kernels of model (nq = 3 nb, nc = model->nc). */
void mb_planar_mech(const mb_planar_model *model, mb_mech *mech);
/* The sparse kernels of the planar model (assemble_sparse.c; mech.h mb_mech_sparse,
 * ctx = the model): mb_planar_mech sets mech->sparse to it unless the model has
 * Python (extra) forces. */
extern const mb_mech_sparse mb_planar_sparse;

/* The kernels of the mb_mech table (mech.h), the model as their last argument ctx;
 * column-major outputs. */
int mb_planar_phi(double t, const double *q, double *phi, void *ctx);
int mb_planar_phi_q(double t, const double *q, double *Pq, ptrdiff_t ld, void *ctx);
int mb_planar_phi_t(double t, const double *q, double *pt, void *ctx);
int mb_planar_gamma(double t, const double *q, const double *qd, double *g, void *ctx);
int mb_planar_phiq_x_q(double t, const double *q, const double *x,
                       double *out, ptrdiff_t ld, void *ctx);
int mb_planar_phiqT_lam_q(double t, const double *q, const double *lam,
                          double *out, ptrdiff_t ld, void *ctx);
int mb_planar_gamma_q(double t, const double *q, const double *qd,
                      double *out, ptrdiff_t ld, void *ctx);
int mb_planar_gamma_qd(double t, const double *q, const double *qd,
                       double *out, ptrdiff_t ld, void *ctx);
int mb_planar_mass(const double *q, double *M, ptrdiff_t ld, void *ctx);
int mb_planar_forces(double t, const double *q, const double *qd, double *Q, void *ctx);
int mb_planar_forces_q(double t, const double *q, const double *qd,
                       double *Qq, ptrdiff_t ld, void *ctx);
int mb_planar_forces_qd(double t, const double *q, const double *qd,
                        double *Qv, ptrdiff_t ld, void *ctx);
/* fused kernels (mech.h fused_qpg, fused_lin) over work of mb_planar_fused_work(m)
 * doubles (cos and sin per body, computed once per call):
 * qpg: Q (nq), Phi_q (nc x nq, ld) and gamma (nc) at (t, q, q');
 * lin: Rq = [Q_q - (Phi_q^T lam)_q ; gamma_q - (Phi_q a)_q], Rv = [Q_qd ; gamma_qd]
 * ((nq + nc) x nq each, ld) */
ptrdiff_t mb_planar_fused_work(const mb_planar_model *m);
int mb_planar_qpg(double t, const double *q, const double *qd,
                  double *Q, double *Pq, ptrdiff_t ld, double *g, double *work, void *ctx);
int mb_planar_lin(double t, const double *q, const double *qd,
                  const double *a, const double *lam, double *Rq, double *Rv, ptrdiff_t ld,
                  double *work, void *ctx);
int mb_planar_energy(double t, const double *q, const double *qd,
                     double *kinetic, double *potential, void *ctx);
/* contact gap functions Psi (one per contact force, > 0 in contact, LLM eq 17-19) */
int mb_planar_contact_gaps(const mb_planar_model *m, const double *q, double *psi);
/* The largest step from (t, q, q', q'') that cannot pass through a contact unseen
 * (continuous collision detection over the contact forces, contact.c; mech.h
 * step_bound); *h_max = +inf when no contact bounds the step. */
int mb_planar_step_bound(double t, const double *q, const double *qd,
                         const double *qdd, double *h_max, void *ctx);

#endif
