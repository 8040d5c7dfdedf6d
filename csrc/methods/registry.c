#include <string.h>
#include "registry.h"
#include "erk.h"
#include "nystrom.h"
#include "adams.h"
#include "implicit_rk.h"
#include "bdf.h"
#include "implicit_simple.h"
#include "rosenbrock.h"
#include "rosenbrock_nystrom.h"
#include "llm.h"
#include "auto_switch.h"
#include "singular_perturbation.h"
#include "block_lstable.h"

static const mb_method *const all_methods[] = {
#define MB_METHOD(name, obj) &obj,
#include "methods.def"
#undef MB_METHOD
};

size_t mb_method_count(void)
{
    return sizeof all_methods / sizeof all_methods[0];
}

const mb_method *mb_method_at(size_t i)
{
    return i < mb_method_count() ? all_methods[i] : NULL;
}

const mb_method *mb_method_find(const char *name)
{
    for (size_t i = 0; i < mb_method_count(); i++)
        if (strcmp(all_methods[i]->name, name) == 0)
            return all_methods[i];
    return NULL;
}
