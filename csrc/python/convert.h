#ifndef MB_PYTHON_CONVERT_H
#define MB_PYTHON_CONVERT_H
/* Internal to csrc/python: converting between NumPy arrays and C buffers at the
 * boundary (once per argument or per callback result), building result dicts,
 * calling Python callables with leading arguments, and reading the signature of
 * a LowLevelCallable capsule.  Every function returns NULL / -1 with a Python
 * exception set on failure. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

/* new 1-D float64 array with a copy of x[0..m-1] */
PyObject *vec_from(const double *x, ptrdiff_t m);
/* new (rows, cols) float64 array with a copy of x (C order, row k at x + k cols) */
PyObject *mat_from(const double *x, ptrdiff_t rows, ptrdiff_t cols);
/* new reference to a contiguous float64 array of 0 or 1 dimensions with exactly
 * m entries (m < 0: any size), else ValueError "<what> must have m entries" */
PyObject *as_vec_object(PyObject *o, ptrdiff_t m, const char *what);
#define as_vec(o, m, what) ((PyArrayObject *)as_vec_object((o), (m), (what)))
/* new reference to a Fortran-contiguous (n, n) array of NumPy type typenum,
 * else ValueError "<what> must have shape (n, n)." */
PyObject *as_square_object(PyObject *o, int typenum, ptrdiff_t n, const char *what);
#define as_square(o, typenum, n, what) \
    ((PyArrayObject *)as_square_object((o), (typenum), (n), (what)))
/* d[k] = v, releasing v (v NULL: a failed constructor, returns -1) */
int dict_set(PyObject *d, const char *k, PyObject *v);

/* fun(lead[0], ..., lead[nl-1], *args); args is a tuple or NULL */
PyObject *call_lead(PyObject *fun, PyObject *args, PyObject *const *lead, int nl);

/* The exception set while converting r, what the callback `who` (e.g. "fun(t, y)")
 * returned, replaced by a TypeError or ValueError (as the conversion raised) saying
 * "<who> returned <r: its repr and type, or its dtype and shape>; expected
 * <expected>.", with the conversion's own exception as its __cause__; any other
 * exception (MemoryError...) stays as it is. */
void returned_error(PyObject *r, const char *who, const char *expected);
/* The result r of a Python callback `who` (a reference the call takes over) as a
 * contiguous float64 array of at most maxdim dimensions holding n values; a value
 * that does not convert: returned_error; a wrong size: ValueError formatted from
 * fmt with (size returned, n) as two %zd. */
PyObject *returned_vector_object(PyObject *r, int maxdim, ptrdiff_t n, const char *who,
                                 const char *fmt);
#define returned_vector(r, maxdim, n, who, fmt) \
    ((PyArrayObject *)returned_vector_object((r), (maxdim), (n), (who), (fmt)))
/* The result r of a Python callback `what` (taken over) as an n x n matrix written
 * column-major into J (leading dimension ld); a value that does not convert:
 * returned_error; otherwise ValueError "<what> must return shape (n, n)."  Returns
 * 0 or -1. */
int returned_matrix(PyObject *r, ptrdiff_t n, double *J, ptrdiff_t ld, const char *what);

/* The signature of a LowLevelCallable capsule with spaces and 'const' removed
 * (e.g. "int(double,double*,double*,void*)") into sig (len bytes), with its
 * function pointer (*ptr, may be NULL to skip) and user data (*ud, may be NULL).
 * Returns 0 or -1. */
int capsule_signature(PyObject *capsule, char *sig, size_t len, void **ptr, void **ud);

/* new reference to a C-contiguous float64 table of shape (rows, cols) (rows free when
 * rows < 0) with finite entries, or NULL with ValueError naming `what` */
PyObject *as_table_object(PyObject *o, ptrdiff_t rows, ptrdiff_t cols, const char *what);
/* the integer stored in a table entry, or -1 with ValueError when it is not one in
 * [lo, hi) ("<what> row <row>: <col> = ...") */
int table_int(double v, int lo, int hi, const char *what, ptrdiff_t row, const char *col,
              int *out);

#endif
