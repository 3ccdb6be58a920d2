/*
 * gpumv_driver.h: the driver loop of a native allocator for gpu-memory-verifier.
 *
 * One header, C99 and C++, libc and POSIX read/write only. A team writes four callbacks and a
 * main of a few lines:
 *
 *     #include "gpumv_driver.h"
 *     static void *create(void *user, uint64_t capacity_bytes) { ... }
 *     static void destroy(void *user, void *allocator) { ... }
 *     static int my_alloc(void *allocator, uint64_t size, uint64_t align, uint64_t *offset) { ... }
 *     static int my_free(void *allocator, uint64_t offset) { ... }
 *     int main(void) {
 *         gpumv_alloc_driver d = GPUMV_ALLOC_DRIVER_INIT;
 *         d.name = "my allocator"; d.policy = "first-fit";
 *         d.create = create; d.destroy = destroy; d.alloc = my_alloc; d.free = my_free;
 *         return gpumv_run_alloc_driver(&d);
 *     }
 *
 * and runs it with `npm run fuzz -- --exec ./my_driver`. The wire format is docs/native-protocol.md
 * (protocol version GPUMV_PROTOCOL_VERSION): frames on fd 3 (harness to driver) and fd 4 (driver
 * to harness), so whatever the driver prints on stdout or stderr never touches the protocol.
 * The loop resolves the commands' handles (live allocation number `index` modulo the live count,
 * in allocation order) exactly as the harness does, so a whole run arrives as one batch.
 *
 * A ring upload allocator (gpumv_ring_driver, gpumv_run_ring_driver) or a fence-delayed free list
 * (gpumv_deferred_driver, gpumv_run_deferred_driver) is driven the same way: the harness sends
 * their calls with offsets and fence values resolved (examples/native/ring_upload.cpp and
 * deferred_free.cpp).
 */
#ifndef GPUMV_DRIVER_H
#define GPUMV_DRIVER_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define GPUMV_PROTOCOL_VERSION 1u
#define GPUMV_MAGIC 0x564D5047u /* "GPMV" little endian */
#define GPUMV_IN_FD 3
#define GPUMV_OUT_FD 4

/* Frame kinds (the first byte of a frame's 8-byte header). */
#define GPUMV_FRAME_HELLO 'H'    /* driver -> harness, once, first */
#define GPUMV_FRAME_BATCH 'B'    /* harness -> driver: one run */
#define GPUMV_FRAME_ANSWERS 'A'  /* driver -> harness: answers to consecutive commands */
#define GPUMV_FRAME_CALL 'C'     /* driver -> harness: a call-back during a command (reserved) */
#define GPUMV_FRAME_REPLY 'R'    /* harness -> driver: the call-back's answer (reserved) */
#define GPUMV_FRAME_QUIT 'Q'     /* harness -> driver: exit 0 */

/* Command op codes of the allocator batch (each command is a 40-byte record). */
#define GPUMV_OP_ALLOC 1u        /* a = size, b = align */
#define GPUMV_OP_FREE 2u         /* a = index */
#define GPUMV_OP_ALLOC_BURST 3u  /* a = count, b = size, c = spread, d = align */
#define GPUMV_OP_FREE_BURST 4u   /* a = index, b = count, c = stride */

/* A driver busy with a long run sends the answers it has at least every this many ms of its CPU
 * time: the harness
 * counts a run as hung only when no answer came for its time limit. */
#define GPUMV_PROGRESS_MS 100

/* Batch flags. */
#define GPUMV_FLAG_ANSWER_EACH 1u /* send each command's answer as soon as it is known */

#define GPUMV_NONE UINT64_MAX     /* the answer value of an alloc that found no room */

/* The driver loops are static; a program calls one of them (no warning for the others). */
#if defined(__GNUC__) || defined(__clang__)
#define GPUMV__ENTRY static __attribute__((unused))
#else
#define GPUMV__ENTRY static
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpumv_alloc_driver {
    /* Shown in reports. */
    const char *name;
    /* "first-fit", "best-fit", "buddy" or "any" (safety and empty-pool liveness only). */
    const char *policy;
    /* Policy 'buddy': the order-0 block size (0: the harness default, 256). */
    uint64_t min_block_bytes;
    /* Policy 'best-fit': the pool alignment (0: the harness default, 256). */
    uint64_t pool_align_bytes;
    /* Extra handshake lines "key=value\n" (NULL: none), for fields later harness versions read. */
    const char *extra_hello;
    /* Builds a fresh allocator over [0, capacity_bytes) for one run (NULL: the run fails). */
    void *(*create)(void *user, uint64_t capacity_bytes);
    /* Ends the run's allocator (may be NULL). */
    void (*destroy)(void *user, void *allocator);
    /* 1 and *offset_bytes set: placed; 0: no room. */
    int (*alloc)(void *allocator, uint64_t size_bytes, uint64_t align_bytes, uint64_t *offset_bytes);
    /* 0: accepted; anything else: the allocator rejects the free (a finding). */
    int (*free)(void *allocator, uint64_t offset_bytes);
    /* Passed to create and destroy. */
    void *user;
} gpumv_alloc_driver;

#define GPUMV_ALLOC_DRIVER_INIT {0, "any", 0, 0, 0, 0, 0, 0, 0, 0}

/* ---- system ring-upload: the ring upload allocator (docs/native-protocol.md) ----
 *
 * The harness resolves every call's arguments (offsets, fence values); the callbacks return 0
 * or the GPUMV_ERR_ code of the contract error they refuse the call with. */

/* Call records of a ring-upload batch. */
#define GPUMV_OP_RING_ALLOCATE 16u /* a = size, b = align: the offset, or GPUMV_NONE for no room */
#define GPUMV_OP_RING_SUBMIT 17u   /* a = offset, b = fence value */
#define GPUMV_OP_RING_CANCEL 18u   /* a = offset */
#define GPUMV_OP_RING_COLLECT 19u  /* a = completed fence value: the freed offsets */

/* The contract errors a ring or deferred-free callback refuses a call with (0: accepted). */
#define GPUMV_ERR_BAD_SIZE 1               /* size 0 */
#define GPUMV_ERR_BAD_ALIGN 2              /* alignment 0 or not a power of two */
#define GPUMV_ERR_BAD_FREE 3               /* release of an offset that starts no live allocation */
#define GPUMV_ERR_RING_UNKNOWN_RANGE 4     /* submit/cancel of an offset that starts no live range */
#define GPUMV_ERR_RING_ALREADY_SUBMITTED 5 /* submit or cancel of a submitted range */
#define GPUMV_ERR_RING_FENCE_ORDER 6       /* submit with a fence value below the last submitted one */
#define GPUMV_ERR_DEFERRED_NOT_POOLED 7    /* pool_release of an allocation that did not come from the pool */
#define GPUMV_ERR_DEFERRED_BAD_SIZE_CLASS 8 /* pool_acquire of a size class the pool does not have */

struct gpumv_out;

typedef struct gpumv_ring_driver {
    const char *name;
    /* Extra handshake lines "key=value\n" (NULL: none). */
    const char *extra_hello;
    /* A fresh ring of capacity_bytes for one run (NULL: the run fails). */
    void *(*create)(void *user, uint64_t capacity_bytes);
    void (*destroy)(void *user, void *ring);
    /* Sets *offset_bytes to the reserved range's offset, or GPUMV_NONE when there is no room. */
    int (*allocate)(void *ring, uint64_t size_bytes, uint64_t align_bytes, uint64_t *offset_bytes);
    int (*submit)(void *ring, uint64_t offset_bytes, uint64_t fence_value);
    int (*cancel)(void *ring, uint64_t offset_bytes);
    /* Frees, in submission order, the submitted ranges whose value <= completed_value: gpumv_emit each offset. */
    void (*collect)(void *ring, uint64_t completed_value, struct gpumv_out *freed);
    void *user;
    void *state__; /* the run's ring (the loop's own) */
} gpumv_ring_driver;

#define GPUMV_RING_DRIVER_INIT {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/* ---- system deferred-free: fence-delayed frees and a pool in front of a sub-allocator ---- */

#define GPUMV_OP_DEFERRED_KIND 32u          /* set-up: a = sub-allocator kind (0 buddy, 1 best-fit, 2 first-fit) */
#define GPUMV_OP_DEFERRED_CONFIG 33u        /* set-up: a = min block, b = pool align, c = max allocation, d = object align */
#define GPUMV_OP_DEFERRED_SIZE_CLASS 34u    /* set-up: a = one size class's object size, in class order */
/* Calls: c = the frame fence's next value to signal, d = its completed value. */
#define GPUMV_OP_DEFERRED_ALLOC 40u         /* a = size, b = align: the offset or GPUMV_NONE */
#define GPUMV_OP_DEFERRED_RELEASE 41u       /* a = offset */
#define GPUMV_OP_DEFERRED_END_FRAME 42u     /* the returned offsets, in release order */
#define GPUMV_OP_DEFERRED_POOL_ACQUIRE 43u  /* a = size class: the offset (or GPUMV_NONE) and hit (0/1) */
#define GPUMV_OP_DEFERRED_POOL_RELEASE 44u  /* a = offset */
#define GPUMV_OP_DEFERRED_POOL_TRIM 45u     /* the returned offsets, ascending */

#define GPUMV_MAX_SIZE_CLASSES 16

/* The frame fence as the allocator reads it (it never advances it). */
typedef struct gpumv_fence {
    uint64_t next_value;      /* the value the current frame's work will signal */
    uint64_t completed_value; /* moved only by the (simulated) GPU */
} gpumv_fence;

typedef struct gpumv_deferred_config {
    const char *kind; /* the sub-allocator: "buddy", "best-fit" or "first-fit" (one the driver declares) */
    uint64_t capacity_bytes;
    uint64_t min_block_bytes;      /* buddy: the order-0 block */
    uint64_t pool_align_bytes;     /* best fit: the granularity */
    uint64_t max_allocation_bytes; /* best fit: the single-allocation limit */
    uint64_t object_align_bytes;   /* pooled objects' alignment */
    size_t size_classes;
    const uint64_t *object_sizes_bytes; /* one object size per size class */
} gpumv_deferred_config;

/* What the deferred layer reports after every accepted call. */
typedef struct gpumv_deferred_readings {
    uint64_t pending_bytes; /* released, not yet returned to the sub-allocator */
    uint64_t pooled_bytes;  /* held by pooled objects */
    uint64_t held_count;    /* pending releases plus pooled objects */
    uint64_t free_bytes;    /* the sub-allocator's free, used and waste bytes (they sum to the capacity) */
    uint64_t used_bytes;
    uint64_t waste_bytes;
} gpumv_deferred_readings;

typedef struct gpumv_deferred_driver {
    const char *name;
    /* The sub-allocator kinds it implements, comma separated ("first-fit"): the harness generates these. */
    const char *kinds;
    const char *extra_hello;
    void *(*create)(void *user, const gpumv_deferred_config *config);
    void (*destroy)(void *user, void *state);
    int (*alloc)(void *state, uint64_t size_bytes, uint64_t align_bytes, const gpumv_fence *fence, uint64_t *offset_bytes);
    int (*release)(void *state, uint64_t offset_bytes, const gpumv_fence *fence);
    /* End of frame: returns completed releases to the sub-allocator; gpumv_emit each offset. */
    void (*end_frame)(void *state, const gpumv_fence *fence, struct gpumv_out *returned);
    int (*pool_acquire)(void *state, uint64_t size_class, const gpumv_fence *fence, uint64_t *offset_bytes, int *hit);
    int (*pool_release)(void *state, uint64_t offset_bytes, const gpumv_fence *fence);
    void (*pool_trim)(void *state, const gpumv_fence *fence, struct gpumv_out *returned);
    void (*readings)(void *state, gpumv_deferred_readings *out);
    void *user;
    void *state__; /* the loop's own: the run's state, its config and size classes */
    gpumv_deferred_config config__;
    uint64_t sizes__[GPUMV_MAX_SIZE_CLASSES];
} gpumv_deferred_driver;

#ifdef __cplusplus
#define GPUMV_DEFERRED_DRIVER_INIT {}
#else
#define GPUMV_DEFERRED_DRIVER_INIT {0}
#endif

/* ---- implementation (static: the header may be included by one file of the driver) ---- */

typedef struct gpumv__buf {
    unsigned char *data;
    size_t size;
    size_t cap;
} gpumv__buf;

static void gpumv__die(const char *what) {
    fprintf(stderr, "gpumv driver: %s\n", what);
    exit(3);
}

static void gpumv__reserve(gpumv__buf *b, size_t more) {
    if (b->size + more <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->size + more) cap *= 2;
    unsigned char *grown = (unsigned char *)realloc(b->data, cap);
    if (!grown) gpumv__die("out of memory");
    b->data = grown;
    b->cap = cap;
}

static void gpumv__put32(gpumv__buf *b, uint32_t v) {
    gpumv__reserve(b, 4);
    unsigned char *p = b->data + b->size;
    p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
    b->size += 4;
}

static void gpumv__put64(gpumv__buf *b, uint64_t v) {
    gpumv__put32(b, (uint32_t)v);
    gpumv__put32(b, (uint32_t)(v >> 32));
}

static void gpumv__set32(gpumv__buf *b, size_t at, uint32_t v) {
    unsigned char *p = b->data + at;
    p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}

static uint32_t gpumv__get32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t gpumv__get64(const unsigned char *p) {
    return (uint64_t)gpumv__get32(p) | ((uint64_t)gpumv__get32(p + 4) << 32);
}

static void gpumv__write_all(const unsigned char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(GPUMV_OUT_FD, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) exit(0); /* the harness went away */
        data += n;
        size -= (size_t)n;
    }
}

/* Reads exactly size bytes; 0 at a clean end of stream before the first byte. */
static int gpumv__read_all(unsigned char *data, size_t size) {
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(GPUMV_IN_FD, data + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (got == 0) return 0;
            gpumv__die("the harness closed the stream inside a frame");
        }
        got += (size_t)n;
    }
    return 1;
}

/* Starts a frame in b; returns the offset of its length field. */
static size_t gpumv__begin_frame(gpumv__buf *b, char kind) {
    gpumv__reserve(b, 8);
    b->data[b->size] = (unsigned char)kind;
    b->data[b->size + 1] = b->data[b->size + 2] = b->data[b->size + 3] = 0;
    b->size += 4;
    size_t at = b->size;
    gpumv__put32(b, 0);
    return at;
}

static void gpumv__end_frame(gpumv__buf *b, size_t length_at) {
    gpumv__set32(b, length_at, (uint32_t)(b->size - length_at - 4));
}

static void gpumv__hello_line(gpumv__buf *b, const char *key, const char *value) {
    size_t k = strlen(key), v = strlen(value);
    gpumv__reserve(b, k + v + 2);
    memcpy(b->data + b->size, key, k);
    b->data[b->size + k] = '=';
    memcpy(b->data + b->size + k + 1, value, v);
    b->data[b->size + k + 1 + v] = '\n';
    b->size += k + v + 2;
}

/* The live allocations in allocation order, as the harness tracks them. */
typedef struct gpumv__live {
    uint64_t *offsets;
    size_t count;
    size_t cap;
} gpumv__live;

static void gpumv__live_push(gpumv__live *l, uint64_t offset) {
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        uint64_t *grown = (uint64_t *)realloc(l->offsets, cap * sizeof(uint64_t));
        if (!grown) gpumv__die("out of memory");
        l->offsets = grown;
        l->cap = cap;
    }
    l->offsets[l->count++] = offset;
}

static void gpumv__live_remove(gpumv__live *l, size_t at) {
    memmove(l->offsets + at, l->offsets + at + 1, (l->count - at - 1) * sizeof(uint64_t));
    l->count--;
}

/*
 * Answers of a batch: per command `u32 status, u32 n, n x u64 values`, grouped in 'A' frames
 * `u32 first command, u32 commands` (see docs/native-protocol.md).
 */
typedef struct gpumv__answers {
    gpumv__buf out;
    size_t frame_at;      /* offset of the open frame's length field, or (size_t)-1 */
    size_t first_at;      /* offset of the open frame's command count */
    uint32_t first;       /* first command of the open frame */
    uint32_t count;       /* commands in the open frame */
} gpumv__answers;

static void gpumv__flush(gpumv__answers *a) {
    if (a->frame_at == (size_t)-1) return;
    gpumv__set32(&a->out, a->first_at, a->count);
    gpumv__end_frame(&a->out, a->frame_at);
    gpumv__write_all(a->out.data, a->out.size);
    a->out.size = 0;
    a->frame_at = (size_t)-1;
}

static void gpumv__open(gpumv__answers *a, uint32_t command) {
    if (a->frame_at != (size_t)-1) return;
    a->frame_at = gpumv__begin_frame(&a->out, GPUMV_FRAME_ANSWERS);
    gpumv__put32(&a->out, command);
    a->first_at = a->out.size;
    gpumv__put32(&a->out, 0);
    a->first = command;
    a->count = 0;
}

/* CPU milliseconds (C's clock(): no POSIX feature macro needed); a busy driver's clock runs. */
static long long gpumv__now_ms(void) {
    return (long long)(clock() / (CLOCKS_PER_SEC / 1000));
}

/* A call's answer under construction: callbacks that answer with a list (a ring's collect, a
 * deferred list's end_frame and pool_trim) append its values with gpumv_emit. */
typedef struct gpumv_out {
    gpumv__buf *buf;
    uint32_t n;
} gpumv_out;

static void gpumv_emit(gpumv_out *out, uint64_t value) {
    gpumv__put64(out->buf, value);
    out->n++;
}

/* One record of a batch: handles it, appends its answer's values to out, returns its status
 * (0 answered; 1 or 2 end the batch; GPUMV_STATUS_REFUSED answered with an error number). */
typedef uint32_t (*gpumv__record_fn)(void *ctx, uint32_t op, const uint64_t field[4], gpumv_out *out);

#define GPUMV_STATUS_REFUSED 3u

/* Runs one batch frame: begin(ctx, capacity), one answer per record, end(ctx), the empty answer
 * frame that ends the batch. Answers go out per 64 KiB, each at once under answer each, and
 * every GPUMV_PROGRESS_MS of CPU time of a long run. */
static void gpumv__run_records(const unsigned char *p, size_t size, gpumv__answers *a, void *ctx,
                               void (*begin)(void *ctx, uint64_t capacity), gpumv__record_fn handle, void (*end)(void *ctx)) {
    if (size < 16) gpumv__die("batch frame too short");
    uint32_t flags = gpumv__get32(p);
    uint32_t count = gpumv__get32(p + 4);
    uint64_t capacity = gpumv__get64(p + 8);
    if ((size - 16) / 40 < count || size != 16 + (size_t)count * 40) gpumv__die("batch frame length does not match its command count");
    p += 16;
    uint32_t answered = 0;
    long long flushed_at = gpumv__now_ms();
    begin(ctx, capacity);
    for (uint32_t i = 0; i < count; i++, p += 40) {
        uint64_t field[4];
        for (int k = 0; k < 4; k++) field[k] = gpumv__get64(p + 8 + 8 * k);
        gpumv__open(a, i);
        gpumv__buf *o = &a->out;
        size_t status_at = o->size;
        gpumv__put32(o, 0);
        size_t n_at = o->size;
        gpumv__put32(o, 0);
        gpumv_out out = {o, 0};
        uint32_t status = handle(ctx, gpumv__get32(p), field, &out);
        gpumv__set32(o, status_at, status);
        gpumv__set32(o, n_at, out.n);
        a->count++;
        answered++;
        if ((flags & GPUMV_FLAG_ANSWER_EACH) || a->out.size >= (1u << 16)) {
            gpumv__flush(a);
        } else if (gpumv__now_ms() - flushed_at >= GPUMV_PROGRESS_MS) {
            gpumv__flush(a); /* progress: a long run is not a hang */
            flushed_at = gpumv__now_ms();
        }
        if (status == 1 || status == 2) break; /* the run ends here on the harness side too */
    }
    gpumv__flush(a);
    end(ctx);
    gpumv__open(a, answered); /* an answer frame of no answers: the run is over */
    gpumv__flush(a);
}

/* Sends the hello (the header's keys, then extra lines) and serves batches until quit or the end
 * of fd 3; returns the process exit code. */
static int gpumv__serve(const char *name, const char *system, const char *keys, const char *extra, void *ctx,
                        void (*begin)(void *ctx, uint64_t capacity), gpumv__record_fn handle, void (*end)(void *ctx)) {
    if (fcntl(GPUMV_IN_FD, F_GETFD) == -1 || fcntl(GPUMV_OUT_FD, F_GETFD) == -1) {
        fprintf(stderr, "%s: a gpu-memory-verifier driver speaks its protocol on fds 3 and 4; run it with `npm run fuzz -- --exec <this program>`\n", name ? name : "driver");
        return 2;
    }
    gpumv__buf hello = {0, 0, 0};
    size_t at = gpumv__begin_frame(&hello, GPUMV_FRAME_HELLO);
    gpumv__put32(&hello, GPUMV_MAGIC);
    gpumv__put32(&hello, GPUMV_PROTOCOL_VERSION);
    gpumv__hello_line(&hello, "system", system);
    gpumv__hello_line(&hello, "name", name ? name : "");
    const char *parts[2] = {keys, extra};
    for (int k = 0; k < 2; k++) {
        if (!parts[k]) continue;
        size_t more = strlen(parts[k]);
        gpumv__reserve(&hello, more);
        memcpy(hello.data + hello.size, parts[k], more);
        hello.size += more;
    }
    gpumv__end_frame(&hello, at);
    gpumv__write_all(hello.data, hello.size);
    free(hello.data);

    gpumv__buf in = {0, 0, 0};
    gpumv__answers answers;
    memset(&answers, 0, sizeof answers);
    answers.frame_at = (size_t)-1;
    for (;;) {
        unsigned char header[8];
        if (!gpumv__read_all(header, 8)) break;
        uint32_t length = gpumv__get32(header + 4);
        in.size = 0;
        gpumv__reserve(&in, length);
        if (length > 0 && !gpumv__read_all(in.data, length)) gpumv__die("the harness closed the stream inside a frame");
        if (header[0] == GPUMV_FRAME_QUIT) break;
        if (header[0] != GPUMV_FRAME_BATCH) gpumv__die("unknown frame from the harness");
        gpumv__run_records(in.data, length, &answers, ctx, begin, handle, end);
    }
    free(in.data);
    free(answers.out.data);
    return 0;
}

/* ---- system allocator ---- */

typedef struct gpumv__alloc_run {
    const gpumv_alloc_driver *d;
    void *state;
    gpumv__live live;
} gpumv__alloc_run;

static void gpumv__alloc_begin(void *ctx, uint64_t capacity) {
    gpumv__alloc_run *r = (gpumv__alloc_run *)ctx;
    r->live.count = 0;
    r->state = r->d->create(r->d->user, capacity);
    if (!r->state) gpumv__die("create returned NULL");
}

static void gpumv__alloc_end(void *ctx) {
    gpumv__alloc_run *r = (gpumv__alloc_run *)ctx;
    if (r->d->destroy) r->d->destroy(r->d->user, r->state);
}

static uint32_t gpumv__alloc_record(void *ctx, uint32_t op, const uint64_t f[4], gpumv_out *o) {
    gpumv__alloc_run *r = (gpumv__alloc_run *)ctx;
    const gpumv_alloc_driver *d = r->d;
    gpumv__live *live = &r->live;
    if (op == GPUMV_OP_ALLOC) {
        uint64_t offset = 0;
        if (d->alloc(r->state, f[0], f[1], &offset)) gpumv__live_push(live, offset);
        else offset = GPUMV_NONE;
        gpumv_emit(o, offset);
    } else if (op == GPUMV_OP_FREE) {
        if (live->count > 0) {
            uint64_t offset = live->offsets[f[0] % live->count];
            gpumv_emit(o, offset);
            if (d->free(r->state, offset) != 0) return 1;
            size_t k = 0; /* the harness drops the first live entry at that offset */
            while (live->offsets[k] != offset) k++;
            gpumv__live_remove(live, k);
        }
    } else if (op == GPUMV_OP_ALLOC_BURST) {
        for (uint64_t k = 0; k < f[0]; k++) {
            uint64_t offset = 0;
            uint64_t request = f[1] + (k * 37u) % (f[2] + 1u);
            int placed = d->alloc(r->state, request, f[3], &offset);
            gpumv_emit(o, placed ? offset : GPUMV_NONE);
            if (!placed) break;
            gpumv__live_push(live, offset);
        }
    } else if (op == GPUMV_OP_FREE_BURST) {
        for (uint64_t k = 0; k < f[1] && live->count > 0; k++) {
            size_t at = (size_t)((f[0] + k * f[2]) % live->count);
            uint64_t offset = live->offsets[at];
            gpumv_emit(o, offset);
            if (d->free(r->state, offset) != 0) return 1;
            gpumv__live_remove(live, at);
        }
    } else {
        return 2; /* unknown op */
    }
    return 0;
}

/* The driver's main loop; returns the process exit code. */
GPUMV__ENTRY int gpumv_run_alloc_driver(const gpumv_alloc_driver *d) {
    if (!d->create || !d->alloc || !d->free || !d->policy) gpumv__die("the driver needs policy, create, alloc and free");
    char keys[256];
    int n = snprintf(keys, sizeof keys, "policy=%s\n", d->policy);
    if (d->min_block_bytes && n > 0 && (size_t)n < sizeof keys)
        n += snprintf(keys + n, sizeof keys - (size_t)n, "minBlockBytes=%llu\n", (unsigned long long)d->min_block_bytes);
    if (d->pool_align_bytes && n > 0 && (size_t)n < sizeof keys)
        n += snprintf(keys + n, sizeof keys - (size_t)n, "poolAlignBytes=%llu\n", (unsigned long long)d->pool_align_bytes);
    if (n < 0 || (size_t)n >= sizeof keys) gpumv__die("policy name too long");
    gpumv__alloc_run run;
    memset(&run, 0, sizeof run);
    run.d = d;
    int code = gpumv__serve(d->name, "allocator", keys, d->extra_hello, &run, gpumv__alloc_begin, gpumv__alloc_record, gpumv__alloc_end);
    free(run.live.offsets);
    return code;
}

/* ---- system ring-upload ---- */

static void gpumv__ring_begin(void *ctx, uint64_t capacity) {
    gpumv_ring_driver *d = (gpumv_ring_driver *)ctx;
    d->state__ = d->create(d->user, capacity);
    if (!d->state__) gpumv__die("create returned NULL");
}

static void gpumv__ring_end(void *ctx) {
    gpumv_ring_driver *d = (gpumv_ring_driver *)ctx;
    if (d->destroy) d->destroy(d->user, d->state__);
}

/* A refusal's answer: the error number. */
static uint32_t gpumv__refused(gpumv_out *o, int error) {
    o->buf->size -= 8u * o->n; /* drop what the call emitted before it refused */
    o->n = 0;
    gpumv_emit(o, (uint64_t)error);
    return GPUMV_STATUS_REFUSED;
}

static uint32_t gpumv__ring_record(void *ctx, uint32_t op, const uint64_t f[4], gpumv_out *o) {
    gpumv_ring_driver *d = (gpumv_ring_driver *)ctx;
    int error = 0;
    if (op == GPUMV_OP_RING_ALLOCATE) {
        uint64_t offset = GPUMV_NONE;
        error = d->allocate(d->state__, f[0], f[1], &offset);
        if (!error) gpumv_emit(o, offset);
    } else if (op == GPUMV_OP_RING_SUBMIT) {
        error = d->submit(d->state__, f[0], f[1]);
    } else if (op == GPUMV_OP_RING_CANCEL) {
        error = d->cancel(d->state__, f[0]);
    } else if (op == GPUMV_OP_RING_COLLECT) {
        d->collect(d->state__, f[0], o);
    } else {
        return 2;
    }
    return error ? gpumv__refused(o, error) : 0;
}

/* The ring upload allocator driver's main loop; returns the process exit code. */
GPUMV__ENTRY int gpumv_run_ring_driver(gpumv_ring_driver *d) {
    if (!d->create || !d->allocate || !d->submit || !d->cancel || !d->collect) gpumv__die("the driver needs create, allocate, submit, cancel and collect");
    return gpumv__serve(d->name, "ring-upload", NULL, d->extra_hello, d, gpumv__ring_begin, gpumv__ring_record, gpumv__ring_end);
}

/* ---- system deferred-free ---- */

static const char *const gpumv__kinds[3] = {"buddy", "best-fit", "first-fit"};

static void gpumv__deferred_begin(void *ctx, uint64_t capacity) {
    gpumv_deferred_driver *d = (gpumv_deferred_driver *)ctx;
    memset(&d->config__, 0, sizeof d->config__);
    d->config__.capacity_bytes = capacity;
    d->config__.kind = "";
    d->config__.object_sizes_bytes = d->sizes__;
    d->state__ = NULL;
}

static void gpumv__deferred_end(void *ctx) {
    gpumv_deferred_driver *d = (gpumv_deferred_driver *)ctx;
    if (d->state__ && d->destroy) d->destroy(d->user, d->state__);
    d->state__ = NULL;
}

static uint32_t gpumv__deferred_record(void *ctx, uint32_t op, const uint64_t f[4], gpumv_out *o) {
    gpumv_deferred_driver *d = (gpumv_deferred_driver *)ctx;
    gpumv_deferred_config *c = &d->config__;
    if (op == GPUMV_OP_DEFERRED_KIND) {
        if (f[0] >= 3) gpumv__die("unknown sub-allocator kind");
        c->kind = gpumv__kinds[f[0]];
        return 0;
    }
    if (op == GPUMV_OP_DEFERRED_CONFIG) {
        c->min_block_bytes = f[0]; c->pool_align_bytes = f[1]; c->max_allocation_bytes = f[2]; c->object_align_bytes = f[3];
        return 0;
    }
    if (op == GPUMV_OP_DEFERRED_SIZE_CLASS) {
        if (c->size_classes == GPUMV_MAX_SIZE_CLASSES) gpumv__die("too many size classes");
        d->sizes__[c->size_classes++] = f[0];
        return 0;
    }
    if (!d->state__) {
        d->state__ = d->create(d->user, c);
        if (!d->state__) gpumv__die("create returned NULL");
    }
    gpumv_fence fence = {f[2], f[3]};
    int error = 0;
    void *s = d->state__;
    if (op == GPUMV_OP_DEFERRED_ALLOC) {
        uint64_t offset = GPUMV_NONE;
        error = d->alloc(s, f[0], f[1], &fence, &offset);
        if (!error) gpumv_emit(o, offset);
    } else if (op == GPUMV_OP_DEFERRED_RELEASE) {
        error = d->release(s, f[0], &fence);
    } else if (op == GPUMV_OP_DEFERRED_END_FRAME) {
        d->end_frame(s, &fence, o);
    } else if (op == GPUMV_OP_DEFERRED_POOL_ACQUIRE) {
        uint64_t offset = GPUMV_NONE;
        int hit = 0;
        error = d->pool_acquire(s, f[0], &fence, &offset, &hit);
        if (!error) { gpumv_emit(o, offset); gpumv_emit(o, hit ? 1u : 0u); }
    } else if (op == GPUMV_OP_DEFERRED_POOL_RELEASE) {
        error = d->pool_release(s, f[0], &fence);
    } else if (op == GPUMV_OP_DEFERRED_POOL_TRIM) {
        d->pool_trim(s, &fence, o);
    } else {
        return 2;
    }
    if (error) return gpumv__refused(o, error);
    gpumv_deferred_readings r;
    memset(&r, 0, sizeof r);
    d->readings(s, &r);
    gpumv_emit(o, r.pending_bytes); gpumv_emit(o, r.pooled_bytes); gpumv_emit(o, r.held_count);
    gpumv_emit(o, r.free_bytes); gpumv_emit(o, r.used_bytes); gpumv_emit(o, r.waste_bytes);
    return 0;
}

/* The fence-delayed free list driver's main loop; returns the process exit code. */
GPUMV__ENTRY int gpumv_run_deferred_driver(gpumv_deferred_driver *d) {
    if (!d->create || !d->alloc || !d->release || !d->end_frame || !d->pool_acquire || !d->pool_release || !d->pool_trim || !d->readings || !d->kinds)
        gpumv__die("the driver needs kinds, create, alloc, release, end_frame, pool_acquire, pool_release, pool_trim and readings");
    char keys[128];
    int n = snprintf(keys, sizeof keys, "kinds=%s\n", d->kinds);
    if (n < 0 || (size_t)n >= sizeof keys) gpumv__die("kinds too long");
    return gpumv__serve(d->name, "deferred-free", keys, d->extra_hello, d, gpumv__deferred_begin, gpumv__deferred_record, gpumv__deferred_end);
}

#ifdef __cplusplus
}
#endif

#endif /* GPUMV_DRIVER_H */
