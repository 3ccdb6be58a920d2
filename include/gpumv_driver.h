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

static void gpumv__run_batch(const gpumv_alloc_driver *d, const unsigned char *p, size_t size, gpumv__answers *a, gpumv__live *live) {
    if (size < 16) gpumv__die("batch frame too short");
    uint32_t flags = gpumv__get32(p);
    uint32_t count = gpumv__get32(p + 4);
    uint64_t capacity = gpumv__get64(p + 8);
    if ((size - 16) / 40 < count || size != 16 + (size_t)count * 40) gpumv__die("batch frame length does not match its command count");
    p += 16;
    live->count = 0;
    uint32_t answered = 0;
    long long flushed_at = gpumv__now_ms();
    void *state = d->create(d->user, capacity);
    if (!state) gpumv__die("create returned NULL");
    for (uint32_t i = 0; i < count; i++, p += 40) {
        uint32_t op = gpumv__get32(p);
        uint64_t x = gpumv__get64(p + 8), y = gpumv__get64(p + 16), z = gpumv__get64(p + 24), w = gpumv__get64(p + 32);
        gpumv__open(a, i);
        gpumv__buf *o = &a->out;
        size_t status_at = o->size;
        gpumv__put32(o, 0);
        size_t n_at = o->size;
        gpumv__put32(o, 0);
        uint32_t n = 0, status = 0;
        if (op == GPUMV_OP_ALLOC) {
            uint64_t offset = 0;
            if (d->alloc(state, x, y, &offset)) gpumv__live_push(live, offset);
            else offset = GPUMV_NONE;
            gpumv__put64(o, offset);
            n = 1;
        } else if (op == GPUMV_OP_FREE) {
            if (live->count > 0) {
                uint64_t offset = live->offsets[x % live->count];
                if (d->free(state, offset) != 0) status = 1;
                else {
                    size_t k = 0; /* the harness drops the first live entry at that offset */
                    while (live->offsets[k] != offset) k++;
                    gpumv__live_remove(live, k);
                }
                gpumv__put64(o, offset);
                n = 1;
            }
        } else if (op == GPUMV_OP_ALLOC_BURST) {
            for (uint64_t k = 0; k < x; k++) {
                uint64_t offset = 0;
                uint64_t request = y + (k * 37u) % (z + 1u);
                int placed = d->alloc(state, request, w, &offset);
                gpumv__put64(o, placed ? offset : GPUMV_NONE);
                n++;
                if (!placed) break;
                gpumv__live_push(live, offset);
            }
        } else if (op == GPUMV_OP_FREE_BURST) {
            for (uint64_t k = 0; k < y && live->count > 0; k++) {
                size_t at = (size_t)((x + k * z) % live->count);
                uint64_t offset = live->offsets[at];
                gpumv__put64(o, offset);
                n++;
                if (d->free(state, offset) != 0) { status = 1; break; }
                gpumv__live_remove(live, at);
            }
        } else {
            status = 2; /* unknown op */
        }
        gpumv__set32(o, status_at, status);
        gpumv__set32(o, n_at, n);
        a->count++;
        answered++;
        if ((flags & GPUMV_FLAG_ANSWER_EACH) || a->out.size >= (1u << 16)) {
            gpumv__flush(a);
        } else if (gpumv__now_ms() - flushed_at >= GPUMV_PROGRESS_MS) {
            gpumv__flush(a); /* progress: a long run is not a hang */
            flushed_at = gpumv__now_ms();
        }
        if (status != 0) break; /* the run ends here on the harness side too */
    }
    gpumv__flush(a);
    if (d->destroy) d->destroy(d->user, state);
    gpumv__open(a, answered); /* an answer frame of no answers: the run is over */
    gpumv__flush(a);
}

/* The driver's main loop; returns the process exit code. */
static int gpumv_run_alloc_driver(const gpumv_alloc_driver *d) {
    if (fcntl(GPUMV_IN_FD, F_GETFD) == -1 || fcntl(GPUMV_OUT_FD, F_GETFD) == -1) {
        fprintf(stderr, "%s: a gpu-memory-verifier driver speaks its protocol on fds 3 and 4; run it with `npm run fuzz -- --exec <this program>`\n", d->name ? d->name : "driver");
        return 2;
    }
    if (!d->create || !d->alloc || !d->free || !d->policy) gpumv__die("the driver needs policy, create, alloc and free");
    gpumv__buf hello = {0, 0, 0};
    size_t at = gpumv__begin_frame(&hello, GPUMV_FRAME_HELLO);
    gpumv__put32(&hello, GPUMV_MAGIC);
    gpumv__put32(&hello, GPUMV_PROTOCOL_VERSION);
    char number[32];
    gpumv__hello_line(&hello, "system", "allocator");
    gpumv__hello_line(&hello, "name", d->name ? d->name : "");
    gpumv__hello_line(&hello, "policy", d->policy);
    if (d->min_block_bytes) {
        snprintf(number, sizeof number, "%llu", (unsigned long long)d->min_block_bytes);
        gpumv__hello_line(&hello, "minBlockBytes", number);
    }
    if (d->pool_align_bytes) {
        snprintf(number, sizeof number, "%llu", (unsigned long long)d->pool_align_bytes);
        gpumv__hello_line(&hello, "poolAlignBytes", number);
    }
    if (d->extra_hello) {
        size_t extra = strlen(d->extra_hello);
        gpumv__reserve(&hello, extra);
        memcpy(hello.data + hello.size, d->extra_hello, extra);
        hello.size += extra;
    }
    gpumv__end_frame(&hello, at);
    gpumv__write_all(hello.data, hello.size);
    free(hello.data);

    gpumv__buf in = {0, 0, 0};
    gpumv__answers answers;
    memset(&answers, 0, sizeof answers);
    answers.frame_at = (size_t)-1;
    gpumv__live live = {0, 0, 0};
    for (;;) {
        unsigned char header[8];
        if (!gpumv__read_all(header, 8)) break;
        uint32_t length = gpumv__get32(header + 4);
        in.size = 0;
        gpumv__reserve(&in, length);
        if (length > 0 && !gpumv__read_all(in.data, length)) gpumv__die("the harness closed the stream inside a frame");
        if (header[0] == GPUMV_FRAME_QUIT) break;
        if (header[0] != GPUMV_FRAME_BATCH) gpumv__die("unknown frame from the harness");
        gpumv__run_batch(d, in.data, length, &answers, &live);
    }
    free(in.data);
    free(answers.out.data);
    free(live.offsets);
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* GPUMV_DRIVER_H */
