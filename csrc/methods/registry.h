#ifndef MB_METHODS_REGISTRY_H
#define MB_METHODS_REGISTRY_H
#include <stddef.h>
#include "method.h"
/* name -> method; NULL when unknown */
const mb_method *mb_method_find(const char *name);
/* number of registered methods and the i-th one */
size_t mb_method_count(void);
const mb_method *mb_method_at(size_t i);
#endif
