#ifndef MB_CORE_CARVE_H
#define MB_CORE_CARVE_H
/* mb_carver: one layout function both sizes a work block and carves it, so that the
 * size asked for and the pointers handed out can never disagree.
 *
 *     static size_t layout(mb_carver *c, ptrdiff_t n, my_work *w)
 *     {
 *         w->st = mb_carve_bytes(c, sizeof *w->st);  // a struct, in whole doubles
 *         w->J = mb_carve(c, (size_t)(n * n));       // n x n doubles
 *         w->ipiv = mb_carve_int(c, (size_t)n);      // n ints, in whole doubles
 *         return c->off;
 *     }
 *     size = layout(&(mb_carver){NULL, 0}, n, &scratch);   // count: nothing assigned
 *     layout(&(mb_carver){block, 0}, n, &w);               // carve the block
 *
 * Counting (base NULL) hands out NULL; carving hands out base + offset, or NULL for a
 * part of size 0.  Every part starts on a double boundary (a block from malloc is
 * aligned for any type), so ints, indices and structs of doubles, ints and pointers
 * can share the block.  Header only; no state. */
#include <stddef.h>

typedef struct mb_carver {
    double *base;  /* the block, or NULL: count only */
    size_t off;    /* doubles handed out so far (the block's size when done) */
} mb_carver;

/* the number of doubles that hold `bytes` bytes */
static inline size_t mb_doubles_for(size_t bytes)
{
    return (bytes + sizeof(double) - 1) / sizeof(double);
}

/* n doubles */
static inline double *mb_carve(mb_carver *c, size_t n)
{
    double *p = c->base && n ? c->base + c->off : NULL;
    c->off += n;
    return p;
}

/* `bytes` bytes (a struct), rounded up to whole doubles */
static inline void *mb_carve_bytes(mb_carver *c, size_t bytes)
{
    return mb_carve(c, mb_doubles_for(bytes));
}

/* n ints */
static inline int *mb_carve_int(mb_carver *c, size_t n)
{
    return mb_carve_bytes(c, n * sizeof(int));
}

/* n ptrdiff_t indices */
static inline ptrdiff_t *mb_carve_index(mb_carver *c, size_t n)
{
    return mb_carve_bytes(c, n * sizeof(ptrdiff_t));
}

#endif
