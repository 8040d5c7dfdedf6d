/* Options of individual methods (method_options.h). */
#include "method_options.h"
#include <string.h>

/* One row per method that takes options (none yet: the first ones come with the
 * multirate and block methods). */
static const mb_py_method_options table[] = {
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
