#ifndef MB_LINALG_SPECTRAL_H
#define MB_LINALG_SPECTRAL_H
/* Eigenvalues and spectral projectors of a real square matrix through its real Schur
 * form (LAPACK dgees, dtrsen, dtrsyl).
 *
 * mb_schur: T (n x n, ld ldt) is overwritten by its real Schur form Q^T T Q
 * (quasi-upper triangular), Q (n x n, ld ldq) receives the orthogonal Schur vectors,
 * wr, wi (n) the eigenvalues in the order of T's diagonal (complex pairs adjacent,
 * positive imaginary part first).
 *
 * mb_projector_diag: with T, Q from mb_schur and select[k] (n ints, nonzero for the
 * eigenvalues of the invariant subspace, in the order of wr/wi; both members of a
 * complex pair must agree), the diagonal of the spectral projector P onto that
 * invariant subspace along the complementary one (P A = A P, P^2 = P):
 *   T is reordered (dtrsen) to [[T11, T12], [0, T22]] with the selected eigenvalues in
 *   T11 (k x k), Y solves T11 Y - Y T22 = T12 (dtrsyl), P = Q [[I, Y], [0, 0]] Q^T,
 *   pdiag[i] = P_ii = sum_{a < k} Q_ia^2 + sum_{a < k <= b} Q_ia Y_ab Q_ib.
 * P_ii is the participation of coordinate i in the selected modes (for a
 * diagonalizable matrix, sum over selected modes j of v_ij w_ji, right and left
 * eigenvectors normalized by w_j^T v_j = 1; sum_i P_ii = k).  T, Q, wr, wi are
 * overwritten (reordered); *k receives the dimension of the subspace.
 *
 * Work: mb_spectral_work_size(n) doubles for either call (the ints included).
 * Returns MB_OK, MB_ERR_LINALG (no convergence of the QR algorithm, reordering
 * failed, non-finite input) or MB_ERR_ILL_INPUT. */
#include <stddef.h>

size_t mb_spectral_work_size(ptrdiff_t n);
int mb_schur(ptrdiff_t n, double *T, ptrdiff_t ldt, double *Q, ptrdiff_t ldq, double *wr,
             double *wi, double *work);
int mb_projector_diag(ptrdiff_t n, double *T, ptrdiff_t ldt, double *Q, ptrdiff_t ldq,
                      const int *select, double *wr, double *wi, double *pdiag, ptrdiff_t *k,
                      double *work);
#endif
