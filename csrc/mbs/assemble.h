#ifndef MB_MBS_ASSEMBLE_H
#define MB_MBS_ASSEMBLE_H
/* Element level of the planar model (internal to csrc/mbs).
 *
 * Every joint and force acts on a pair of bodies (i, j), either of which may be
 * the ground (-1).  An element sees only its 6 local coordinates
 *     ql = (x_i, y_i, phi_i, x_j, y_j, phi_j)
 * (the ground's are zeros and stay zero), computes local values and local blocks
 * (rows x 6 or 6 x 6), and assemble.c adds them into the global arrays at the
 * element's row offset and the bodies' column offsets 3 i, 3 j, dropping the
 * ground's columns (Exudyn's local-to-global index arrays, Chrono's offsets).
 * Because the ground is just a pair member with frozen zero coordinates, every
 * element works with the ground in either slot.
 */
#include "model.h"

/* local state of the pair (i, j) */
typedef struct mb_pair {
    int i, j;          /* body indices, -1 = ground */
    double q[6];       /* local coordinates; ground: zeros */
    double qd[6];      /* local velocities (or any vector gathered like them) */
    double ci, si, cj, sj; /* cos, sin of phi_i and phi_j */
} mb_pair;

/* -- the pair (pair.c) -- */
/* the pair state of bodies (i, j) from q and qd (qd NULL: zeros); the rotations (ci, si,
 * cj, sj) from cs (cos and sin per body) when given, else computed when rot, else the
 * identity's (for elements that use the angles only, e.g. the RSDA); MB_ERR_ILL_INPUT for
 * a body index out of range */
int mb_pair_gather_ex(const mb_planar_model *m, int i, int j, const double *q, const double *qd,
                      mb_pair *p, int rot, const double *cs);
/* the same with the rotations computed */
int mb_pair_gather(const mb_planar_model *m, int i, int j, const double *q, const double *qd,
                   mb_pair *p);
/* the rotated attachment vectors ui = A_i si, uj = A_j sj, the segment
 * d = r_j + uj - r_i - ui and D = dd/dq_local (6 x 2) */
void mb_pair_d(const mb_pair *p, const double si[2], const double sj[2], double ui[2],
               double uj[2], double d[2], double D[6][2]);

/* -- time functions (planar.c) -- */
/* f(t), f'(t), f''(t) of f = c0 + c1 t + c2 t^2 + a sin(w t + psi); NULL outputs skipped */
void mb_timefn_eval(const mb_timefn *f, double t, double *f0, double *f1, double *f2);

/* -- joints (planar.c) -- */
enum {
    MB_JL_PHI = 1u << 0,   /* phi */
    MB_JL_PQ = 1u << 1,    /* Pq (rows x 6) */
    MB_JL_PT = 1u << 2,    /* pt */
    MB_JL_GAMMA = 1u << 3, /* gamma (uses qd) */
    MB_JL_HESS = 1u << 4,  /* H: Hessian of every row in the local coordinates */
    MB_JL_GQ = 1u << 5,    /* gamma_q (uses qd) */
    MB_JL_GQD = 1u << 6    /* gamma_qd (uses qd) */
};

typedef struct mb_joint_local {
    int nr;               /* rows of the joint (1..3) */
    double phi[3], pt[3], gamma[3];
    double Pq[3][6];      /* d phi_r / d ql_c */
    double H[3][6][6];    /* d^2 phi_r / d ql_a d ql_b (symmetric) */
    double gq[3][6], gqd[3][6];
    unsigned hmask;       /* local coordinates c (bit c) outside which every H, gq, gqd
                             row and column is zero (revolute: the two angles) */
} mb_joint_local;

/* number of constraint rows of a joint type (0: unknown type) */
int mb_joint_rows(int type);
/* evaluate joint J on pair p at time t; 'what' is an OR of MB_JL_* */
int mb_joint_eval(const mb_planar_joint *J, double t, const mb_pair *p, unsigned what,
                  mb_joint_local *out);

/* -- forces (forces.c: TSDA, RSDA and the dispatch; contact.c: contacts) -- */
enum {
    MB_FL_Q = 1u << 0,   /* Q (6) */
    MB_FL_QQ = 1u << 1,  /* Qq[a][b] = d Q_a / d ql_b */
    MB_FL_QQD = 1u << 2, /* Qqd[a][b] = d Q_a / d qld_b */
    MB_FL_V = 1u << 3    /* potential energy */
};

typedef struct mb_force_local {
    double Q[6];
    double Qq[6][6], Qqd[6][6];
    double V;
    unsigned mask;       /* local coordinates c (bit c) outside which every Qq, Qqd row
                            and column is zero (RSDA: the two angles) */
} mb_force_local;

/* Geometry of the segment between point si on body i and sj on body j (pair.c):
 * d = P_j - P_i, l = |d|, g = dl/dql (6), Hl = d^2 l / dql^2 (6 x 6, when Hl != NULL);
 * returns 0, or 1 when l == 0 (direction undefined; g and Hl are zero). */
int mb_point_pair_geom(const mb_pair *p, const double si[2], const double sj[2], double *l,
                       double g[6], double Hl[6][6]);
/* pair elements: TSDA, RSDA (forces.c), contacts (contact.c); the outputs asked for
 * in 'what' are overwritten, Qq and Qqd only on out->mask x out->mask (zero outside by
 * construction, and not written there), the others are left as they are */
int mb_force_eval(const mb_planar_force *F, double t, const mb_pair *p, unsigned what,
                  mb_force_local *out);
int mb_contact_eval(const mb_planar_force *F, double t, const mb_pair *p, unsigned what,
                    mb_force_local *out);
/* gap (penetration) delta of a contact element, > 0 in contact */
double mb_contact_gap(const mb_planar_force *F, const mb_pair *p);
/* step bound of a contact element (continuous collision detection, contact.c): the
 * largest step from the pair state p (q, q') with local accelerations acc (6) that
 * cannot enter and leave the contact unseen; +inf when none */
double mb_contact_step_bound(const mb_planar_force *F, const mb_pair *p, const double acc[6]);
/* is the force type a pair element (TSDA, RSDA, contacts)? */
int mb_force_is_pair(int type);
int mb_force_is_contact(int type);

#endif
