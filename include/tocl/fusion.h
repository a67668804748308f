/* fusion.h - fused eager mode: elementwise ops are recorded per stream and
 * run as few generated kernels as possible when a value is needed.
 *
 * In strict mode every elementwise op is one kernel. In fused mode (the
 * default) an op's operands are checked at once (errors surface at the op that
 * caused them) but its launch is recorded; anything that takes the stream's
 * queue (another kind of op, a copy, a host read, an event, a
 * synchronisation) first renders the recorded ops as merged graphs:
 * producer-consumer chains and independent ops over the same elements
 * become one kernel, an op reading a small dead producer through a
 * broadcast computes it itself, and an intermediate whose storage was freed
 * before the flush is never written to memory. Results equal strict mode
 * bit for bit. A reduction may compute the recorded ops that produce its
 * input in its prologue (tocl_reduce_desc.fuse_producer).
 * A merged graph not yet built runs as its separate kernels while a
 * background thread builds it for the next time. */
#ifndef TOCL_FUSION_H
#define TOCL_FUSION_H

#include <stdint.h>

#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tocl_eager_mode { TOCL_EAGER_STRICT = 0, TOCL_EAGER_FUSED = 1 } tocl_eager_mode;

/* The process-wide mode; the first call reads TORCH_OCL_EAGER (strict|fused,
 * default fused).
 * Switching runs everything recorded so far. */
tocl_status tocl_eager_mode_set(tocl_eager_mode mode);
tocl_eager_mode tocl_eager_mode_get(void);

/* Run everything recorded on every stream of every device (no host wait). */
tocl_status tocl_fusion_flush_all(void);

/* With sync on, a flush builds a merged graph's kernel before running it
 * instead of running the ops separately meanwhile (tests use it to count
 * kernels deterministically). Off by default. */
void tocl_fusion_set_sync_build(int on);
/* Wait until the background thread has built every kernel asked of it. */
void tocl_fusion_wait_builds(void);
/* For the exit: drop the builds not yet started (their graphs keep running
 * as separate kernels), refuse new ones, and wait for the one in progress
 * until `seconds` after the first call. Returns 1 if the thread is idle.
 * The runtime calls it itself at exit() and, if a build is still in the
 * driver then, ends the process with _exit before the driver's destructors
 * run under it. Irreversible. */
int tocl_fusion_abandon_builds(double seconds);

typedef struct tocl_fusion_stats {
    uint64_t ops_recorded;          /* elementwise launches deferred */
    uint64_t flushes;               /* flushes that found recorded ops */
    uint64_t graphs_flushed;        /* groups of ops rendered together (a group of one included) */
    uint64_t fused_launches;        /* kernels that ran a merged graph of two or more ops */
    uint64_t kernels_launched;      /* every kernel the flushes enqueued */
    uint64_t ops_run_separately;    /* ops of merged graphs run alone while their kernel was built */
    uint64_t intermediates_elided;  /* outputs never written to memory */
    uint64_t reductions_fused;      /* reductions that computed recorded ops in their prologue */
    uint64_t broadcasts_inlined;    /* producers over fewer elements computed by their broadcast consumer */
    uint64_t cache_hits;            /* merged graphs whose kernel was built */
    uint64_t cache_misses;          /* merged graphs sent to the background builder */
    uint64_t builds;                /* background builds finished */
    double build_seconds;           /* time those builds took */
    /* Gauges, not counters (a reset leaves them): ops recorded and not yet
     * run, and the free table's entries, one per output of those ops. */
    uint64_t ops_pending;
    uint64_t free_table_entries;
} tocl_fusion_stats;
void tocl_fusion_stats_get(tocl_fusion_stats *out);
void tocl_fusion_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif
