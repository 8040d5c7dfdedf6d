#ifndef MB_MBS_MECHDERIV_H
#define MB_MBS_MECHDERIV_H
/* The derivative kernels of an mb_mech (mech.h), each either the mechanism's own
 * kernel or, when that slot is NULL, central differences of the kernel it
 * differentiates; used by the state-space formulation (statespace.c) and open to
 * every formulation over mb_mech (nothing here knows about planar models).
 *
 *   phi_t      Phi_t:  the kernel, central differences of Phi in t, or 0 (autonomous)
 *   gamma      the kernel, or -d/ds [Phi_q q' + Phi_t](q + s q', t + s) by central
 *              differences, or -d^2/ds^2 Phi(q + s q', t + s) (extrapolated second
 *              differences) when phi_t is NULL too
 *   forces_q, forces_qd, gamma_q, gamma_qd   (rows x nq), differences of forces / gamma
 *   phiq_x_q   (Phi_q x)_q,   nc x nq, differences of phi_q
 *   phiqT_lam_q (Phi_q^T lam)_q, nq x nq, differences of phi_q
 *   mass_x_q   (M x)_q,       nq x nq: zero when mass_constant, else the kernel or
 *              differences of mass
 *   phi_tq     (Phi_q)_t,     nc x nq: zero for an autonomous mechanism, else
 *              differences of phi_q in t
 * Outputs are column-major with leading dimension ld (overwritten).  The scratch
 * lives in the caller's block: mb_mechd_work_size(nq, nc) doubles. */
#include <stddef.h>
#include "mech.h"

typedef struct mb_mechd {
    const mb_mech *me;
    ptrdiff_t nq, nc;
    double *xq, *vq1, *vq2, *vc1, *vc2, *vc3, *vc4, *vc5, *gs, *P1, *P2, *M1, *M2;
} mb_mechd;

size_t mb_mechd_work_size(ptrdiff_t nq, ptrdiff_t nc);
/* carve the scratch out of work (mb_mechd_work_size doubles) */
void mb_mechd_init(mb_mechd *d, const mb_mech *me, double *work);

int mb_mechd_phi_t(mb_mechd *d, double t, const double *q, double *pt);
int mb_mechd_gamma(mb_mechd *d, double t, const double *q, const double *qd, double *g);
int mb_mechd_forces_q(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                      ptrdiff_t ld);
int mb_mechd_forces_qd(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                       ptrdiff_t ld);
int mb_mechd_gamma_q(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                     ptrdiff_t ld);
int mb_mechd_gamma_qd(mb_mechd *d, double t, const double *q, const double *qd, double *out,
                      ptrdiff_t ld);
int mb_mechd_phiq_x_q(mb_mechd *d, double t, const double *q, const double *x, double *out,
                      ptrdiff_t ld);
int mb_mechd_phiqT_lam_q(mb_mechd *d, double t, const double *q, const double *lam,
                         double *out, ptrdiff_t ld);
int mb_mechd_mass_x_q(mb_mechd *d, const double *q, const double *x, double *out, ptrdiff_t ld);
int mb_mechd_phi_tq(mb_mechd *d, double t, const double *q, double *out, ptrdiff_t ld);
/* Blocks of the index-1 and DAE Jacobians (index1.c, dae.c):
 * Qq = dQ/dq, Qv = dQ/dq' (nq x nq, ld; either may be NULL) */
int mb_mechd_forces_jac(mb_mechd *d, double t, const double *q, const double *qd, double *Qq,
                        double *Qv, ptrdiff_t ld);
/* Gq = dgamma/dq, Gv = dgamma/dq' (nc x nq, ld; either may be NULL) */
int mb_mechd_gamma_jac(mb_mechd *d, double t, const double *q, const double *qd, double *Gq,
                       double *Gv, ptrdiff_t ld);
/* T1 = (Phi_q^T lam)_q (nq x nq, ld nq) when lam and T1 are given, T2 = (Phi_q x)_q and
 * T3 = (Phi_q x3)_q (nc x nq, ld nc) when x, T2 and x3, T3 are given; the kernels, or
 * one pass of central differences of Phi_q for all that are missing */
int mb_mechd_phiq_jacs(mb_mechd *d, double t, const double *q, const double *lam, double *T1,
                       const double *x, double *T2, const double *x3, double *T3);
/* out += alpha (M(q) a)_q (nq x nq, ld): mass_x_q, else central differences of M;
 * nothing when the mass matrix is constant */
int mb_mechd_mass_jac_add(mb_mechd *d, const double *q, const double *a, double alpha,
                          double *out, ptrdiff_t ld);

#endif
