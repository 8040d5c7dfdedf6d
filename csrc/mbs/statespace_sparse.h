#ifndef MB_MBS_STATESPACE_SPARSE_H
#define MB_MBS_STATESPACE_SPARSE_H
/* The sparse linear algebra of the state-space formulation (statespace.c in sparse
 * mode; statespace_sparse.c), private to csrc/mbs.  Everything is O(nnz) in memory and
 * per call; nothing is O(nq^2):
 *   - the partition: an LU with row pivoting (UMFPACK, threshold 1: partial pivoting)
 *     of Phi_q^T (nq x nc) scaled by the pivot weights w_j in its rows; the nc pivot
 *     rows are the dependent coordinates (Phi_q^T's rows are the coordinates, so the
 *     pivot search runs over the coordinates, as the columns of Gauss-Jordan with full
 *     pivoting do in the dense path);
 *   - Phi_u in compressed columns (the columns dep of Phi_q), one KLU symbolic analysis
 *     per partition and a numeric factorization per slot (MB_SS_SLOTS: the evaluation
 *     points cur and aux of statespace.c, and the base of the Newton prediction),
 *     refactored with the kept pivot order while its pivot ratio stays within 1e-3 of
 *     the slot's last full factorization (as index1_sparse.c does with S);
 *   - the accelerations q'' and lambda from the index-1 saddle-point system
 *     [M Phi_q^T; Phi_q 0] (index1_sparse.c: KLU), so that v'' = q''_v solves
 *     M^ v'' = Q^ without forming M^ = E^T M E;
 *   - products with Phi_v, Phi_v^T, M (sparse kernels) and solves with Phi_u, Phi_u^T.
 * Kernels: mech->sparse (mech.h) with what index1_sparse.c needs (mb_ss_sparse_unavailable). */
#include <stddef.h>
#include "mech.h"
#include "statespace.h"

#define MB_SS_SLOTS 3  /* 0: cur, 1: aux (the evaluation points), 2: the base */

typedef struct mb_ss_sparse mb_ss_sparse;

/* NULL when the mechanism supports the sparse mode, else why not */
const char *mb_ss_sparse_unavailable(const mb_mech *me);
/* allocate and analyze for me (nc > 0); *out NULL and msg (len) saying why on failure */
int mb_ss_sparse_init(mb_ss_sparse **out, const mb_mech *me, char *msg, size_t len);
void mb_ss_sparse_free(mb_ss_sparse *sp);
/* The partition at (t, q): indep (nd), dep (nc), both ascending.  w (nq) pivot weights or
 * NULL; a pivot below rank_tol times the largest weighted |entry| of Phi_q means rank
 * deficiency: MB_ERR_LINALG, msg naming the constraint rows without an acceptable pivot
 * (and a bit per row < 64 in *bad_rows, may be NULL). */
int mb_ss_sparse_partition(mb_ss_sparse *sp, double t, const double *q, const double *w,
                           double rank_tol, int *indep, int *dep, unsigned long long *bad_rows,
                           char *msg, size_t len);
/* adopt the partition (Phi_u's pattern, its KLU analysis; every slot's factors dropped) */
int mb_ss_sparse_use(mb_ss_sparse *sp, const int *indep, const int *dep);
/* Phi_q at (t, q) into the slot and the factors of its Phi_u: MB_OK, MB_ERR_LINALG when
 * Phi_u is singular (pivot ratio below 64 nc eps), MB_ERR_MEM, or a kernel's status */
int mb_ss_sparse_factor(mb_ss_sparse *sp, int slot, double t, const double *q);
/* the slot to's Phi_q and factors := those of from (refactored) */
int mb_ss_sparse_copy(mb_ss_sparse *sp, int from, int to);
/* b (nc) := Phi_u^-1 b, or Phi_u^-T b (trans), with the slot's factors */
int mb_ss_sparse_solve(mb_ss_sparse *sp, int slot, double *b, int trans);
/* y (nc) += Phi_v x (x: nd) with the slot's values */
void mb_ss_sparse_phiv(const mb_ss_sparse *sp, int slot, const double *x, double *y);
/* y (nd) += Phi_v^T x (x: nc) with the slot's values */
void mb_ss_sparse_phivt(const mb_ss_sparse *sp, int slot, const double *x, double *y);
/* cond_1(Phi_u) of the slot (KLU's estimate, Hager-Higham) and, in *rel (may be NULL),
 * |Phi_q|_1 |Phi_u^-1|_1; inf when it fails */
double mb_ss_sparse_cond(mb_ss_sparse *sp, int slot, double *rel);
/* q'' (nq) and lambda (nc) at (t, q, q') from the saddle-point system (sparse KLU) */
int mb_ss_sparse_saddle(mb_ss_sparse *sp, double t, const double *q, const double *qd,
                        double *qdd, double *lam);
/* y (nq) = M(q) x (sparse mass kernels) */
int mb_ss_sparse_mass_mul(mb_ss_sparse *sp, const double *q, const double *x, double *y);
/* why the saddle-point solve failed */
const char *mb_ss_sparse_msg(const mb_ss_sparse *sp);

/* The evaluation of statespace.c in sparse mode (s->sp set; cached on (t, v, v') as
 * there): u by Newton with KLU of Phi_u from the base's u - Phi_u^-1 Phi_v (v - v_b)
 * (the base's factors: slot 2), u' from Phi_u u' = -Phi_v v' - Phi_t, q'' and lambda from
 * the saddle-point system, v'' = q''_v.  P is s->cur (slot 0) or s->aux (slot 1); it
 * fills P's v, vd, q, qd, qdd, lam, vdd, iters (none of its dense arrays). */
int mb_ss_sparse_eval(mb_ss *s, mb_ss_point *P, double t, const double *v, const double *vd);
/* out (nd) = M^ x = E^T M E x at the evaluated point P, without forming M^ (O(nnz)) */
int mb_ss_sparse_mhat(mb_ss *s, mb_ss_point *P, const double *x, double *out);
/* J1 = dv''/dv, J2 = dv''/dv' (nd x nd, ld; either may be NULL) at the evaluated point
 * P (s->cur) by central differences of v'' (evaluations in s->aux): the implicit methods'
 * Jacobian stays dense in v, O(nd) evaluations of O(nnz) each */
int mb_ss_sparse_jac(mb_ss *s, mb_ss_point *P, double *J1, double *J2, ptrdiff_t ld);
/* acc_mjac (problem.h) at the evaluated s->cur: M^ by nd products E^T M E e_j, J1 and J2
 * by differences, M^ J1 and M^ J2 column by column (O(nd nnz) each, no O(nd^3)), and
 * Mat = M^ vdd_t (vdd_t: dv''/dt, from statespace.c) */
int mb_ss_sparse_acc_mjac(mb_ss *s, double *M, double *MJ1, double *MJ2, const double *vdd_t,
                          double *Mat);
/* the diagonals of M(q) (md), Q_q (kd) and Q_q' (cd) at (t, q, q') (nq each), from the
 * sparse kernels (the force rows of C at lambda = 0, x = 0) */
int mb_ss_sparse_diagonals(mb_ss_sparse *sp, double t, const double *q, const double *qd,
                           double *md, double *kd, double *cd);

#endif
