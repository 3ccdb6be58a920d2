/*
 * The header from C: a bump allocator with a free count, under policy 'any' (safety and
 * empty-pool liveness only). It places each request at the lowest aligned offset after the last
 * live block and starts over at 0 when everything is freed, so an empty pool always places a
 * request that fits. Build: cc -std=c99 -I$(gpumv include-dir) bump.c
 */
#include "gpumv_driver.h"

typedef struct bump {
    uint64_t capacity;
    uint64_t top;   /* end of the highest block handed out since the pool was last empty */
    uint64_t live;  /* blocks handed out and not freed */
} bump;

static void *create(void *user, uint64_t capacity) {
    bump *b = (bump *)calloc(1, sizeof(bump));
    (void)user;
    if (b) b->capacity = capacity;
    return b;
}

static void destroy(void *user, void *state) {
    (void)user;
    free(state);
}

static int bump_alloc(void *state, uint64_t size, uint64_t align, uint64_t *offset) {
    bump *b = (bump *)state;
    uint64_t aligned = (b->top + align - 1) & ~(align - 1);
    if (aligned < b->top || aligned > b->capacity || size > b->capacity - aligned) return 0;
    *offset = aligned;
    b->top = aligned + size;
    b->live++;
    return 1;
}

static int bump_free(void *state, uint64_t offset) {
    bump *b = (bump *)state;
    (void)offset;
    if (b->live == 0) return 1;
    if (--b->live == 0) b->top = 0;
    return 0;
}

int main(void) {
    gpumv_alloc_driver driver = GPUMV_ALLOC_DRIVER_INIT;
    driver.name = "examples/native/bump.c";
    driver.policy = "any";
    driver.create = create;
    driver.destroy = destroy;
    driver.alloc = bump_alloc;
    driver.free = bump_free;
    return gpumv_run_alloc_driver(&driver);
}
