#ifndef MB_PYTHON_METHOD_OPTIONS_H
#define MB_PYTHON_METHOD_OPTIONS_H
/* Internal to csrc/python: options that belong to one method (SciPy's **options of
 * solve_ivp: e.g. the fast variables of a multirate method, the number of nodes of a
 * block method).
 *
 * A method that takes options defines a struct for them in its own header (the
 * kernel reads it through mb_options.method_options -> mb_stepper.method_options,
 * NULL meaning its defaults) and adds one row to the table in method_options.c: its
 * name, the option names it accepts, and a converter from the Python dict (keys
 * already checked against the names) to a newly allocated struct (PyMem_Malloc; the
 * run frees it with PyMem_Free).  _core.methods() reports the names, so
 * mbint.solve_ivp and mbint.simulate refuse unknown options before any C runs. */
#include <Python.h>
#include <stddef.h>

typedef struct mb_py_method_options {
    const char *method;
    const char *const *names;  /* NULL-terminated */
    /* dict -> *out for a problem of state size n; 0, or -1 with an exception set */
    int (*convert)(PyObject *dict, ptrdiff_t n, void **out);
} mb_py_method_options;

/* The row of a method, or NULL when it takes no options. */
const mb_py_method_options *mb_py_method_options_find(const char *method);

/* The method's options as a struct for the kernel: *out = NULL when opts is None or
 * empty; ValueError when the method takes no options or a key is not one of its
 * names.  0 or -1. */
int mb_py_method_options_convert(const char *method, PyObject *opts, ptrdiff_t n, void **out);

/* A tuple of the option names of a method (empty when it takes none). */
PyObject *mb_py_method_option_names(const char *method);

/* Functions of single methods added to mbint._core (sp_py.c: sp_propose). */
extern PyMethodDef mb_sp_methods[];
/* block_py.c: block_coefficients, block_stability (lstable_block, astable_block) */
extern PyMethodDef mb_block_methods[];
#endif
