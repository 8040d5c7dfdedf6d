#ifndef MB_LINALG_ENVELOPE_H
#define MB_LINALG_ENVELOPE_H
/* Dependent rows of a sparse matrix P (m x n) from its Gram matrix G = P P^T, by an
 * LDL^T factorization of G in the natural order of the rows held in its lower
 * envelope (skyline): row i of L is stored from the first column f_i where row i of G
 * has an entry; the factorization fills in nothing outside that envelope.  Memory and
 * time are O(sum_i (i - f_i + 1)) and O(sum_i (i - f_i + 1)^2): linear in m when every
 * row of P shares columns only with rows a bounded distance before it (the constraint
 * rows of a chain or tree numbered along its bodies).
 *
 * Row i is dependent when its pivot d_i, the squared distance of row i of P from the
 * span of the earlier independent rows, is at most rtol2 times G_ii = |P_i|^2, that
 * is, when row i lies within an angle asin(sqrt(rtol2)) of that span (a zero row is
 * dependent).  A dependent row is left out of the factorization (its pivot and its
 * entries of L are zero), as if it were removed from P: exactly the rows that are
 * combinations of earlier rows, up to that angle. */
#include <stddef.h>

/* dep[i] = 1 for the dependent rows, 0 for the others; *rank = the number of
 * independent rows.  G in CSR: indptr (m + 1), indices (column indices per row, any
 * order), data (entries with the same (row, column) are summed; entries above the
 * diagonal are ignored); rtol2 >= 0.  Work space: O(envelope) doubles, allocated and
 * freed here.  Returns MB_OK, MB_ERR_ILL_INPUT (a column index out of range, a
 * negative or non-finite diagonal, rtol2 < 0) or MB_ERR_MEM. */
int mb_gram_dependent(ptrdiff_t m, const ptrdiff_t *indptr, const ptrdiff_t *indices,
                      const double *data, double rtol2, unsigned char *dep, ptrdiff_t *rank);

#endif
