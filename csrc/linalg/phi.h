#ifndef MB_LINALG_PHI_H
#define MB_LINALG_PHI_H
/* Linear combinations of the phi functions of a matrix,
 *   phi_0(z) = e^z,  phi_{k+1}(z) = (phi_k(z) - 1/k!) / z,
 * i.e. h^k phi_k(h A) v = int_0^h e^{A (h - s)} v s^{k-1} / (k-1)! ds, from ONE
 * exponential of a block matrix (Van Loan 1978, Theorem 1; the "augmented matrix"
 * of exponential integrators):
 *
 *   K = [[h A, V], [0, N]]  ((m + p) x (m + p)),  V = [v_0 ... v_{p-1}]  (m x p),
 *   N the p x p shift (N_{j, j+1} = 1),
 *   exp(K) = [[e^{hA}, W], [0, e^N]],   W[:, j] = sum_{i <= j} phi_{j-i+1}(h A) v_i.
 *
 * For example (p = 2, V = [h^2 b, h a]): W[:, 1] = h phi_1(hA) a + h^2 phi_2(hA) b is
 * w(h) for w' = A w + a + b s, w(0) = 0.  V is scaled by a power of two c >= max |V_ij| before the
 * exponential and W by c after (W is linear in V), so that large vectors do not
 * inflate the norm that sets the number of squarings (as llm.c does).
 *
 * Work: mb_phi_work_size(m, p) doubles (the ints of the exponential included),
 * provided by the caller; column-major, no allocation, no global state.
 * Returns MB_OK (W = 0 without an exponential when V = 0), MB_ERR_LINALG when the
 * exponential fails or overflows (W is then unspecified), MB_ERR_ILL_INPUT for bad
 * sizes. */
#include <stddef.h>

size_t mb_phi_work_size(ptrdiff_t m, ptrdiff_t p);
int mb_phi_columns(ptrdiff_t m, const double *A, ptrdiff_t lda, double h, ptrdiff_t p,
                   const double *V, ptrdiff_t ldv, double *W, ptrdiff_t ldw, double *work);
#endif
