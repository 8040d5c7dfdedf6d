#ifndef MB_METHODS_NYSTROM_H
#define MB_METHODS_NYSTROM_H
#include "method.h"
/* The one-evaluation Nystrom midpoint scheme ("Euler 2") of LN section 7.4. */
extern const mb_method mb_method_nystrom_midpoint;
#endif
