/* Options of individual methods (method_options.h). */
#include "method_options.h"
#include <math.h>
#include <string.h>
#include "singular_perturbation.h"
#include "status.h"
#include "block_lstable.h"

/* ---- singular_perturbation: fast = indices into y, or "auto" (propose at t0) ---- */
static const char *const sp_names[] = {"fast", NULL};

static int sp_convert(PyObject *dict, ptrdiff_t n, void **out)
{
    PyObject *v = PyDict_GetItemString(dict, "fast");  /* borrowed */
    if (!v || v == Py_None)
        return 0;  /* no fast variable: RK4 */
    if (PyUnicode_Check(v) && PyUnicode_CompareWithASCIIString(v, "auto") == 0) {
        mb_sp_options *o = PyMem_Malloc(sizeof *o + sizeof(ptrdiff_t));
        if (!o) {
            PyErr_NoMemory();
            return -1;
        }
        o->n_fast = MB_SP_PROPOSE;
        *out = o;
        return 0;
    }
    PyObject *seq = NULL;
    if (PySequence_Check(v) && !PyUnicode_Check(v) && !PyBytes_Check(v)) {
        seq = PySequence_Fast(v, "fast must be a sequence of indices into y.");
        if (!seq && PyErr_ExceptionMatches(PyExc_TypeError)) {  /* e.g. a 0-d array */
            PyErr_Clear();
            if (PyIndex_Check(v))
                seq = PyTuple_Pack(1, v);
        }
    } else if (PyIndex_Check(v) && !PyBool_Check(v)) {
        seq = PyTuple_Pack(1, v);
    }
    if (!seq) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "fast must be 'auto', an index or a sequence of "
                         "indices into y, got %R.", v);
        return -1;
    }
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    mb_sp_options *o = PyMem_Malloc(sizeof *o + (size_t)(k > 0 ? k : 1) * sizeof(ptrdiff_t));
    if (!o) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    o->n_fast = k;
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        if (PyBool_Check(e) || !PyIndex_Check(e)) {
            PyErr_Format(PyExc_ValueError, "fast: every entry must be an integer index into y, "
                         "got %R.", e);
            goto fail;
        }
        Py_ssize_t j = PyNumber_AsSsize_t(e, NULL);
        if (j == -1 && PyErr_Occurred())
            goto fail;
        o->fast[i] = (ptrdiff_t)j;
    }
    char msg[200];
    if (mb_sp_check_split(n, o->n_fast, o->fast, msg, sizeof msg) != 0) {
        PyErr_SetString(PyExc_ValueError, msg);
        goto fail;
    }
    Py_DECREF(seq);
    *out = o;
    return 0;
fail:
    Py_DECREF(seq);
    PyMem_Free(o);
    return -1;
}

/* ---- lstable_block, astable_block: r, nodes, pade, newton_tol, newton (block_lstable.h) ---- */
static const char *const block_names[] = {"r", "nodes", "pade", "newton_tol", "newton", NULL};
static const char *const block_families[] = {"equidistant", "chebyshev", "legendre", NULL};

/* an int option (not bool); 0, or -1 with ValueError naming it */
static int int_option(PyObject *v, const char *name, int *out)
{
    if (PyBool_Check(v) || !PyIndex_Check(v)) {
        PyErr_Format(PyExc_ValueError, "%s must be an integer, got %R.", name, v);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x < -1000 || x > 1000) {
        PyErr_Format(PyExc_ValueError, "%s = %ld is out of range.", name, x);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int block_convert(int variant, PyObject *dict, void **out)
{
    mb_block_options o = {0, MB_BLOCK_EQUIDISTANT, -1, -1, 0.0, 0};
    PyObject *v;
    if ((v = PyDict_GetItemString(dict, "r")) && v != Py_None && int_option(v, "r", &o.r))
        return -1;
    if (v && v != Py_None && (o.r < 2 || o.r > MB_BLOCK_RMAX)) {
        PyErr_Format(PyExc_ValueError, "r must be an integer from 2 to %d (nodes per step), "
                     "got %d.", MB_BLOCK_RMAX, o.r);
        return -1;
    }
    if ((v = PyDict_GetItemString(dict, "nodes")) && v != Py_None) {
        int found = -1;
        for (int i = 0; PyUnicode_Check(v) && block_families[i]; i++)
            if (PyUnicode_CompareWithASCIIString(v, block_families[i]) == 0)
                found = i;
        if (found < 0) {
            PyErr_Format(PyExc_ValueError, "nodes must be 'equidistant', 'chebyshev' or "
                         "'legendre', got %R.", v);
            return -1;
        }
        o.nodes = found;  /* the order of mb_block_nodes */
    }
    if ((v = PyDict_GetItemString(dict, "pade")) && v != Py_None) {
        PyObject *seq = PySequence_Check(v) && !PyUnicode_Check(v)
                            ? PySequence_Fast(v, "pade must be a pair (k, j).") : NULL;
        if (!seq || PySequence_Fast_GET_SIZE(seq) != 2) {
            Py_XDECREF(seq);
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "pade must be a pair (k, j) of integers (the degrees "
                         "of the Pade approximant's numerator and denominator), got %R.", v);
            return -1;
        }
        int bad = int_option(PySequence_Fast_GET_ITEM(seq, 0), "pade[0]", &o.pade_k) ||
                  int_option(PySequence_Fast_GET_ITEM(seq, 1), "pade[1]", &o.pade_j);
        Py_DECREF(seq);
        if (bad)
            return -1;
        if (o.pade_k < 0 || o.pade_j < 0) {
            PyErr_Format(PyExc_ValueError, "pade: the degrees must not be negative, got (%d, %d).",
                         o.pade_k, o.pade_j);
            return -1;
        }
    }
    if ((v = PyDict_GetItemString(dict, "newton_tol")) && v != Py_None) {
        o.newton_tol = PyFloat_AsDouble(v);
        if (o.newton_tol == -1.0 && PyErr_Occurred())
            return -1;
        if (!(o.newton_tol > 0) || !isfinite(o.newton_tol)) {
            PyErr_Format(PyExc_ValueError, "newton_tol must be positive and finite, got %R.", v);
            return -1;
        }
    }
    if ((v = PyDict_GetItemString(dict, "newton")) && v != Py_None) {
        int split = PyUnicode_Check(v) && PyUnicode_CompareWithASCIIString(v, "split") == 0;
        o.newton_full = PyUnicode_Check(v) && PyUnicode_CompareWithASCIIString(v, "full") == 0;
        if (!split && !o.newton_full) {
            PyErr_Format(PyExc_ValueError, "newton must be 'split' (the Newton system split "
                         "by the eigenvalues of B, the default) or 'full' (the r n x r n "
                         "system), got %R.", v);
            return -1;
        }
    }
    mb_block_coeffs co;
    char msg[300];
    if (mb_block_resolve(variant, &o, &co, NULL, msg, sizeof msg) != MB_OK) {
        PyErr_SetString(PyExc_ValueError, msg);
        return -1;
    }
    mb_block_options *p = PyMem_Malloc(sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *p = o;
    *out = p;
    return 0;
}

#include "rosenbrock_nystrom.h"

/* ---- rosenbrock_nystrom, w_nystrom (RN Theorem 2.1): error_estimate, jacobian ---- */
static const char *const rn_names[] = {"error_estimate", "jacobian", NULL};

/* the string value of key in d among two choices (codes 1, 2), 0 when absent or None;
 * -1 with ValueError naming the option */
static int rn_choice(PyObject *d, const char *key, const char *c1, const char *c2, int *out)
{
    PyObject *v = PyDict_GetItemString(d, key);
    *out = 0;
    if (!v || v == Py_None)
        return 0;
    const char *str = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    if (str && strcmp(str, c1) == 0)
        *out = 1;
    else if (str && strcmp(str, c2) == 0)
        *out = 2;
    else {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "%s must be '%s' or '%s', got %R.", key, c1, c2, v);
        return -1;
    }
    return 0;
}

static int rn_convert(PyObject *d, ptrdiff_t n, void **out)
{
    (void)n;
    mb_rn_options o = {0, 0};
    if (rn_choice(d, "error_estimate", "plain", "scaled", &o.error_estimate) ||
        rn_choice(d, "jacobian", "exact", "fd", &o.jacobian))
        return -1;
    mb_rn_options *p = PyMem_Malloc(sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *p = o;
    *out = p;
    return 0;
}

static int lstable_convert(PyObject *dict, ptrdiff_t n, void **out)
{
    (void)n;
    return block_convert(MB_BLOCK_LSTABLE, dict, out);
}

static int astable_convert(PyObject *dict, ptrdiff_t n, void **out)
{
    (void)n;
    return block_convert(MB_BLOCK_ASTABLE, dict, out);
}

/* One row per method that takes options. */
static const mb_py_method_options table[] = {
    {"singular_perturbation", sp_names, sp_convert},
    {"lstable_block", block_names, lstable_convert},
    {"astable_block", block_names, astable_convert},
    {"rosenbrock_nystrom", rn_names, rn_convert},
    {"w_nystrom", rn_names, rn_convert},
    {NULL, NULL, NULL},
};

const mb_py_method_options *mb_py_method_options_find(const char *method)
{
    for (const mb_py_method_options *r = table; method && r->method; r++)
        if (strcmp(r->method, method) == 0)
            return r;
    return NULL;
}

static int known(const mb_py_method_options *r, const char *key)
{
    for (const char *const *nm = r->names; *nm; nm++)
        if (strcmp(*nm, key) == 0)
            return 1;
    return 0;
}

int mb_py_method_options_convert(const char *method, PyObject *opts, ptrdiff_t n, void **out)
{
    *out = NULL;
    if (opts == NULL || opts == Py_None)
        return 0;
    if (!PyDict_Check(opts)) {
        PyErr_SetString(PyExc_TypeError, "method_options must be a dict or None.");
        return -1;
    }
    if (PyDict_Size(opts) == 0)
        return 0;
    const mb_py_method_options *r = mb_py_method_options_find(method);
    if (!r) {
        PyErr_Format(PyExc_ValueError, "method '%s' takes no options.", method);
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(opts, &pos, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!k || !known(r, k)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "method '%s' takes no option %R.", method, key);
            return -1;
        }
    }
    return r->convert(opts, n, out);
}

PyObject *mb_py_method_option_names(const char *method)
{
    const mb_py_method_options *r = mb_py_method_options_find(method);
    Py_ssize_t k = 0;
    while (r && r->names[k])
        k++;
    PyObject *t = PyTuple_New(k);
    for (Py_ssize_t i = 0; t && i < k; i++) {
        PyObject *s = PyUnicode_FromString(r->names[i]);
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}
