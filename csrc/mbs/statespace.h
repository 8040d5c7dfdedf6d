#ifndef MB_MBS_STATESPACE_H
#define MB_MBS_STATESPACE_H
/* The state-space formulation of a constrained mechanical system (mech.h) by
 * generalized coordinate partitioning (RN paper section 1, eqs 4-10; Wehage & Haug
 * 1982): the coordinates q are split into nd = nq - nc independent ones v and nc
 * dependent ones u with Phi_u nonsingular (Gauss-Jordan with full pivoting on Phi_q,
 * eq 6); u follows from Phi(t, u, v) = 0 by Newton (eq 8), u' from the velocity
 * constraint (eq 7d), and v obeys the reduced second-order ODE
 *     M^(v) v'' = Q^(t, v, v')                                   (eqs 9-10)
 * whose Jacobians J1 = dv''/dv, J2 = dv''/dv' are analytic (eqs 26-35).  The
 * formulation is written over the mb_mech table only: nothing here knows about
 * planar bodies, so it runs unchanged on any mechanism that fills the table.
 *
 * mb_ss_problem() presents it as an mb_problem on y = (v, v') (n = 2 nd, nq = nd):
 * rhs, jac (first-order view), acc (second-order view), dfdt, acc_mjac (M^, M^ J1,
 * M^ J2 and M^ dv''/dt for the Rosenbrock-Nystrom method, RN eqs 43-46), a check
 * hook (Newton for u at the end of a step that passed its error test: a failure there
 * rejects the step, as one at a stage does), and a project hook called after every
 * accepted step (Algorithm 1 steps 13-14): it
 * recovers u and u' (|Phi|_inf <= newton_tol), appends the full state to the run's
 * log, and checks the partition: it is kept while cond_1(Phi_u) <= cond_factor
 * (1.25) times its value at the last (re)partitioning (and |Phi_q| |Phi_u^-1| likewise,
 * statespace.c); otherwise Gauss-Jordan runs
 * again at the current configuration, and when it picks other coordinates y is
 * rewritten in them and the hook returns MB_NEW_COORDINATES (the driver restarts the
 * method; problem.h).
 *
 * Every evaluation at (t, v, v') starts Newton from the last accepted point's u plus
 * the linear prediction H (v - v_n) (H = -Phi_u^-1 Phi_v there); a Newton failure is
 * a recoverable failure (the step is retried smaller).
 *
 * The log (one entry per accepted step: its end time, the partition used during the
 * step and the full q, q' there) lets a caller map any output of the run back to
 * full coordinates afterwards (mb_ss_recover): points inside a step use that step's
 * partition and start Newton from the step's start.
 *
 * Conventions: mech.h (column-major, ld explicit).  Sign of lambda as mech.h:
 * M q'' + Phi_q^T lambda = Q. */
#include <stddef.h>
#include "mech.h"
#include "mechderiv.h"
#include "problem.h"

/* one evaluation of the state-space ODE at (t, v, v') (private to statespace.c) */
typedef struct mb_ss_point {
    int ok;
    double t;
    double *v, *vd;                 /* the key, nd each */
    double *q, *qd, *qdd, *lam;     /* full coordinates (nq; lam nc) */
    double *Pq;                     /* Phi_q, nc x nq */
    double *Fu;                     /* LU of Phi_u, nc x nc */
    int *ipiv_u;
    double *H;                      /* -Phi_u^-1 Phi_v, nc x nd */
    double *w;                      /* Phi_u^-1 gamma, nc */
    double *M;                      /* M(q), nq x nq */
    double *Q;                      /* Q(t, q, q'), nq */
    double *Mh, *Mh_lu;             /* M^ and its LU, nd x nd */
    int *ipiv_m;
    double *vdd;                    /* v'' (nd) */
    int iters;                      /* Newton iterations of this evaluation */
} mb_ss_point;

struct mb_ss_sparse;

typedef struct mb_ss {
    const mb_mech *mech;
    ptrdiff_t nq, nc, nd;
    /* options (defaults set by mb_ss_init) */
    double newton_tol;     /* |Phi|_inf target of the dependent positions (1e-10) */
    int newton_max_iter;   /* per evaluation (10) */
    double cond_factor;    /* repartition when cond(Phi_u) > cond_factor * reference (1.25) */
    double rank_tol;       /* Gauss-Jordan: pivot below rank_tol max|Phi_q| = dependent rows */
    const double *pivot_w; /* optional (nq): full pivoting ranks |a_ij| w_j (NULL: w = 1); a
                            * small w_j prefers coordinate j as independent */
    /* current partition: indep[nd], dep[nc] (ascending coordinate indices) */
    int *indep, *dep;
    int part_id;           /* index into the partition table */
    double cond_ref;       /* cond_1(Phi_u) at the last (re)partitioning */
    double rel_ref;        /* |Phi_q|_1 |Phi_u^-1|_1 there (the second test, statespace.c) */
    /* optional tolerance mapping: atol_q (2 nq: q then q') of the caller, written into
     * atol_v (2 nd: v then v') at the start and at every change of partition */
    const double *atol_q;
    double *atol_v;
    /* statistics */
    long nrepartition;     /* Gauss-Jordan runs after the first (the 1.25 rule fired) */
    long nchange;          /* ... that changed the independent coordinates */
    long neval, niter;     /* evaluations, Newton iterations in them */
    long nnewton_fail;     /* evaluations whose Newton iteration failed */
    double cond_max;       /* largest cond_1(Phi_u) met at an accepted step */
    /* the log: entry 0 the start, entry k the end of accepted step k */
    ptrdiff_t nlog, cap_log;
    double *log_t, *log_y;     /* times; full (q, q') per entry (2 nq) */
    double *log_a;             /* q'' and lambda per entry (nq + nc) of the run's own log
                                * (NULL for a log loaded with mb_ss_load_log) */
    int *log_part;             /* partition used during step k (entry 0: the first) */
    ptrdiff_t npart, cap_part;
    int *parts;                /* npart x nd independent coordinates */
    double *part_t;            /* time each partition was adopted */
    /* private */
    double t_b;                /* base point: the last accepted (t, q, q') and H there */
    double *q_b, *qd_b, *H_b;
    int base_ok;
    mb_mechd d;
    mb_ss_point cur, aux;
    double *work;
    int *iwork;
    double *A1, *A2, *A3, *C1, *C2, *C3, *G, *JJ, *LL, *NN, *B, *Ed, *r_q, *r_c, *r_c2,
        *Fcond, *GJ, *yv, *vt;
    int *ipiv_c, *gj_row, *gj_col, *mark, *prev_indep;
    /* sparse mode (statespace_sparse.h), or NULL: dense.  It allocates none of the
     * dense arrays above (the points' Pq, Fu, H, M, Mh, and A1 ... GJ, H_b, d) */
    struct mb_ss_sparse *sp;
    char msg[256];
} mb_ss;

/* Allocate for mech (nq > 0, nd = nq - nc > 0, mass, forces, phi, phi_q when nc > 0).
 * MB_OK, MB_ERR_ILL_INPUT or MB_ERR_MEM (s->msg says why). */
int mb_ss_init(mb_ss *s, const mb_mech *mech);
/* sparse: 0 dense (mb_ss_init); 1 sparse (MB_ERR_NOT_SUPPORTED, s->msg saying why, when
 * the mechanism lacks the sparse kernels or has no constraints); -1 sparse when available
 * and nq >= MB_INDEX1_SPARSE_MIN_NQ, else dense.  Sparse mode (statespace_sparse.h):
 * the partition by a sparse LU of Phi_q^T with row pivoting, KLU of Phi_u, v'' from the
 * saddle-point system; O(nnz) memory and work per evaluation; J1, J2 (implicit methods)
 * dense in v by central differences of v''. */
int mb_ss_init_ex(mb_ss *s, const mb_mech *mech, int sparse);
void mb_ss_free(mb_ss *s);
/* Gauss-Jordan elimination with full pivoting on Phi_q(t, q) (RN eq 6): the pivot
 * columns become the dependent coordinates.  Sets indep/dep (not the partition table
 * or cond_ref).  MB_ERR_LINALG when Phi_q is rank deficient (redundant constraints or
 * a singular configuration): s->msg names the dependent rows (0-based) and
 * *bad_rows (may be NULL) receives a bit per row (rows < 64). */
int mb_ss_partition(mb_ss *s, double t, const double *q, unsigned long long *bad_rows);
/* Start a run at a consistent (t0, q0, q0'): partition, base, log entry 0; writes
 * y0 = (v0, v0') (2 nd) and atol_v when atol_q is set. */
int mb_ss_start(mb_ss *s, double t0, const double *q0, const double *qd0, double *y0);
/* fill p (see above); every other field zero */
void mb_ss_problem(mb_ss *s, mb_problem *p);
/* Full coordinates of y = (v, v') at t in the current partition, Newton from the
 * base: q, q' (nq each), q'' (nq) and lambda (nc); any output may be NULL. */
int mb_ss_full(mb_ss *s, double t, const double *y, double *q, double *qd, double *qdd,
               double *lam);
/* J1 = dv''/dv, J2 = dv''/dv' (nd x nd, ld) at (t, y) (RN eqs 31, 35 solved with M^);
 * also M^, M^ J1, M^ J2, M^ dv''/dt (RN eq 46) through the problem's acc_mjac. */
int mb_ss_jacobians(mb_ss *s, double t, const double *y, double *J1, double *J2, ptrdiff_t ld);
/* The condition number cond_1(Phi_u) at (t, y) in the current partition. */
int mb_ss_cond(mb_ss *s, double t, const double *y, double *cond);
/* After a run: the full state of an output (t, y) of that run (y in the partition of
 * the step containing t, found in the log), q, q', q'', lambda (any may be NULL). */
int mb_ss_recover(mb_ss *s, double t, const double *y, double *q, double *qd, double *qdd,
                  double *lam);
/* Load a log (e.g. handed back from Python after the run) instead of the run's own:
 * nlog entries (t, partition index, full y) and npart partitions (nd each). */
int mb_ss_load_log(mb_ss *s, ptrdiff_t nlog, const double *log_t, const int *log_part,
                   const double *log_y, ptrdiff_t npart, const int *parts);
/* The partition with index id of the table as the current one (no base change). */
int mb_ss_use_partition(mb_ss *s, int id);
/* Base point of the Newton iterations: a consistent (t, q, q') (H computed there). */
int mb_ss_set_base(mb_ss *s, double t, const double *q, const double *qd);

#endif
