/* guard.c - TORCH_OCL_GUARD=1: canary bytes around every device block, so
 * that an out-of-bounds write by any kernel or copy is reported.
 *
 * Layout of a guarded allocation of n bytes (MEM_GUARD = 512):
 *
 *   block start      user address (512-aligned)        user + n    block end
 *   | front canaries |  the caller's n bytes           | back canaries ... |
 *   |<-- MEM_GUARD ->|                                 |<- >= MEM_GUARD -->|
 *
 * The canaries are written on the block's stream at allocation (queued
 * before anything the caller enqueues), and read back at free on the same
 * stream, after markers of every other stream that used the block, without a
 * host wait: the in-order queue runs the read before any later user of the
 * memory, so the block is reused as usual; the bytes read are compared when
 * the read has completed, at a later allocation or device sync, or at the
 * latest at empty_cache / tocl_mem_guard_check. Fused eager: at free the stream's
 * deferred ops are enqueued first, so their writes are checked and none is
 * left to land on a reused block's new canaries (guard mode thus fuses less).
 * tocl_mem_empty_cache and tocl_mem_guard_check also check every live block.
 * A changed canary prints one line on stderr naming the block, its size and
 * the offset of the first bad byte, and counts in tocl_mem_guard_violations();
 * the canaries are then rewritten so the same damage is not counted twice.
 *
 * With the knob off, blocks have front == 0 and none of this runs: the cost
 * is one branch per allocation and free. Range checks (tocl_mem_bytes_after,
 * copies) then stop at the requested size instead of the rounded block size. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_impl.h"

#define PAT_LEN (2 * MEM_GUARD) /* longest canary region: 512 + 511 bytes */

static int g_guard = -1;        /* -1 unread; written under tocl_mem_lock */
static atomic_uint_fast64_t g_violations;
static unsigned char g_pat[PAT_LEN]; /* never changes after init: safe for non-blocking writes */

int mem_guard_on(void) {
    if (g_guard < 0) {
        /* Position-dependent bytes, none 0x00 or 0xff, so that zeros, -1 and
         * any short repeated value written over a canary are noticed. */
        for (size_t i = 0; i < PAT_LEN; i++) {
            unsigned v = (unsigned)((i * 0x9du + 0x5bu) ^ (i >> 4)) & 0xffu;
            g_pat[i] = (unsigned char)(v == 0 || v == 0xff ? 0xa5 : v);
        }
        g_guard = tocl_env_flag("TORCH_OCL_GUARD");
    }
    return g_guard;
}

int tocl_mem_guard_enabled(void) {
    pthread_mutex_lock(&tocl_mem_lock);
    int on = mem_guard_on();
    pthread_mutex_unlock(&tocl_mem_lock);
    return on;
}

uint64_t tocl_mem_guard_violations(void) { return (uint64_t)atomic_load(&g_violations); }

/* What a check needs of a block; a copy, since a freed block can be merged
 * or reused before its read-back completes. */
typedef struct guard_info {
    tocl_addr user;         /* the caller's address */
    size_t requested, front;
    int dev, stream;
} guard_info;

typedef struct guard_check {
    guard_info g;
    cl_event ev;            /* the second of the two reads */
    unsigned char *buf;     /* front canaries, then the back ones */
} guard_check;

static guard_check *g_checks; /* read-backs of freed blocks in flight; under tocl_mem_lock */
static int g_nchecks, g_capchecks;

static guard_info info_of(const mem_block *b) {
    return (guard_info){b->addr + b->front, b->requested, b->front, b->seg->dev, b->stream};
}
static size_t back_len(size_t requested) {
    size_t rounded = (requested + MEM_ALIGN - 1) / MEM_ALIGN * MEM_ALIGN;
    return rounded + MEM_GUARD - requested;
}
static size_t seg_off(const mem_block *b) { return (size_t)(b->addr - b->seg->base); }

void mem_guard_arm(mem_block *b) {
    cl_command_queue q;
    b->armed = 0;
    /* Without flushing deferred ops: none of those recorded so far writes
     * this block (at free, its stream's were enqueued before the read-back). */
    if (tocl_queue_get_nodefer(b->seg->dev, b->stream, &q) != TOCL_OK)
        return; /* unchecked rather than failing the allocation */
    size_t off = seg_off(b);
    cl_int e1 = clEnqueueWriteBuffer(q, b->seg->buf, CL_FALSE, off, b->front, g_pat, 0, NULL, NULL);
    cl_int e2 = clEnqueueWriteBuffer(q, b->seg->buf, CL_FALSE, off + b->front + b->requested,
                                     back_len(b->requested), g_pat, 0, NULL, NULL);
    b->armed = e1 == CL_SUCCESS && e2 == CL_SUCCESS;
}

/* Compare one region with the pattern; report and return 1 if it changed. */
static int check_region(const guard_info *g, const unsigned char *got, size_t len, int after, const char *when) {
    size_t first = len, bad = 0;
    for (size_t i = 0; i < len; i++) {
        if (got[i] != g_pat[i]) {
            if (first == len)
                first = i;
            bad++;
        }
    }
    if (!bad)
        return 0;
    if (after)
        fprintf(stderr,
                "torch-ocl guard: out-of-bounds write AFTER the end of device block 0x%" PRIx64 " (%zu bytes, "
                "device %d, stream %d): first bad byte at offset %zu (%zu bytes past the end), %zu of %zu canary "
                "bytes changed (byte 0x%02x, expected 0x%02x); detected %s\n",
                g->user, g->requested, g->dev, g->stream, g->requested + first, first, bad, len, got[first],
                g_pat[first], when);
    else
        fprintf(stderr,
                "torch-ocl guard: out-of-bounds write BEFORE the start of device block 0x%" PRIx64 " (%zu bytes, "
                "device %d, stream %d): first bad byte at offset -%zu, %zu of %zu canary bytes changed (byte "
                "0x%02x, expected 0x%02x); detected %s\n",
                g->user, g->requested, g->dev, g->stream, len - first, bad, len, got[first], g_pat[first], when);
    return 1;
}

static int verify(const guard_info *g, const unsigned char *buf, const char *when) {
    int bad = check_region(g, buf, g->front, 0, when);
    bad |= check_region(g, buf + g->front, back_len(g->requested), 1, when);
    if (bad) {
        atomic_fetch_add(&g_violations, 1);
        fflush(stderr);
    }
    return bad;
}

/* Enqueue the two reads of b's canaries into buf on q; 0 on failure (then
 * nothing is left in flight). */
static int enqueue_reads(cl_command_queue q, const mem_block *b, unsigned char *buf, const cl_event *wait, int nwait,
                         cl_bool blocking, cl_event *ev) {
    size_t off = seg_off(b);
    cl_int err = clEnqueueReadBuffer(q, b->seg->buf, CL_FALSE, off, b->front, buf, (cl_uint)nwait,
                                     nwait ? wait : NULL, NULL);
    /* In order: the second read completes after the first. */
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(q, b->seg->buf, blocking, off + b->front + b->requested, back_len(b->requested),
                                  buf + b->front, 0, NULL, ev);
    if (err != CL_SUCCESS)
        clFinish(q); /* the first read may be queued into buf */
    return err == CL_SUCCESS;
}

void mem_guard_read_back(const mem_block *b, const cl_event *wait, int nwait) {
    if (!b->armed)
        return;
    if (g_nchecks == g_capchecks) {
        int cap = g_capchecks ? 2 * g_capchecks : 64;
        guard_check *v = realloc(g_checks, (size_t)cap * sizeof *v);
        if (!v)
            return;
        g_checks = v;
        g_capchecks = cap;
    }
    cl_command_queue q;
    unsigned char *buf = malloc(b->front + back_len(b->requested));
    cl_event ev = NULL;
    /* tocl_queue_get enqueues the stream's deferred ops (fused eager) first:
     * their writes are checked too, and none of them is left to write the
     * block after it has been handed out again over new canaries. */
    if (!buf || tocl_queue_get(b->seg->dev, b->stream, &q) != TOCL_OK) {
        free(buf);
        return;
    }
    /* The check is the guard's, not the work's: a graph capture under way
     * neither records it nor is refused for it (queue/record.h). */
    tocl_rec_bypass(1);
    int queued = enqueue_reads(q, b, buf, wait, nwait, CL_FALSE, &ev);
    tocl_rec_bypass(0);
    if (!queued) {
        free(buf);
        return;
    }
    clFlush(q);
    g_checks[g_nchecks++] = (guard_check){info_of(b), ev, buf};
    if (g_nchecks > 4096)
        mem_guard_poll(1); /* bounds the host memory of checks in flight */
}

void mem_guard_poll(int wait) {
    for (int i = 0; i < g_nchecks;) {
        guard_check *c = &g_checks[i];
        cl_int st = CL_QUEUED;
        if (wait)
            clWaitForEvents(1, &c->ev);
        if (clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS)
            st = -1;
        if (st > CL_COMPLETE) {
            i++;
            continue;
        }
        if (st == CL_COMPLETE) /* a failed read (st < 0) has nothing to check */
            verify(&c->g, c->buf, "when the block was freed");
        clReleaseEvent(c->ev);
        free(c->buf);
        g_checks[i] = g_checks[--g_nchecks];
    }
}

/* After a device sync the read-backs queued on that device's streams have
 * completed: check them and release their events and buffers now rather than
 * at the next allocation (a process that synchronizes and then only frees
 * would otherwise hold them, and a corrupted canary would be reported late). */
void tocl_mem_guard_after_sync(void) {
    pthread_mutex_lock(&tocl_mem_lock);
    if (mem_guard_on())
        mem_guard_poll(0);
    pthread_mutex_unlock(&tocl_mem_lock);
}

int tocl_mem_guard_in_flight(void) {
    pthread_mutex_lock(&tocl_mem_lock);
    int n = g_nchecks;
    pthread_mutex_unlock(&tocl_mem_lock);
    return n;
}

void mem_guard_check_live(int dev) {
    int n;
    mem_segment **segs = mem_seg_all(&n);
    unsigned char *buf = malloc(MEM_GUARD + PAT_LEN);
    if (!buf)
        return;
    for (int i = 0; i < n; i++) {
        mem_segment *seg = segs[i];
        if (seg->dev != dev)
            continue;
        for (int k = 0; k < seg->nblocks; k++) {
            mem_block *b = seg->blocks[k];
            cl_command_queue q;
            /* On the block's own stream: after its canary writes and its work. */
            if (!b->allocated || !b->armed || tocl_queue_get_nodefer(dev, b->stream, &q) != TOCL_OK ||
                !enqueue_reads(q, b, buf, NULL, 0, CL_TRUE, NULL))
                continue;
            guard_info g = info_of(b);
            if (verify(&g, buf, "while the block was live (empty_cache or tocl_mem_guard_check)"))
                mem_guard_arm(b); /* count each corruption once */
        }
    }
    free(buf);
}

tocl_status tocl_mem_guard_check(int dev) {
    mem_dev *d;
    TOCL_TRY(mem_dev_get(dev, &d));
    pthread_mutex_lock(&tocl_mem_lock);
    if (mem_guard_on()) {
        /* Deferred elementwise ops (fused eager) are enqueued first, so their
         * writes are seen too; then the reads of freed blocks complete. */
        tocl_status s = tocl_sched_flush_device(dev); /* fused eager, through its hook */
        mem_process_pending(dev, 1);
        mem_guard_poll(1);
        mem_guard_check_live(dev);
        if (s != TOCL_OK) {
            pthread_mutex_unlock(&tocl_mem_lock);
            return s;
        }
    }
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}
