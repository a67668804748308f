/* graph.c - graph capture and replay (tocl/graph.h): the recorder
 * (queue/record.c) keeps the commands, the allocator (mem/alloc.c) keeps
 * the memory the graph allocated reserved for its replays. */
#include <stdatomic.h>
#include <stdlib.h>

#include "internal.h"
#include "tocl/graph.h"

struct tocl_graph {
    int dev, stream;
    uint64_t id;           /* the allocator's owner tag */
    tocl_rec *rec;
    int capturing;
    const char *why;
};

static _Atomic uint64_t g_next_id = 1;

tocl_status tocl_graph_begin(int dev, tocl_graph **out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_graph_begin: out is NULL");
    *out = NULL;
    int stream = tocl_stream_current(dev);
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q)); /* runs work deferred before the capture */
    tocl_graph *g = calloc(1, sizeof *g);
    if (!g)
        return tocl_fail(TOCL_E_OOM, "out of host memory starting a graph capture");
    g->dev = dev;
    g->stream = stream;
    g->id = atomic_fetch_add(&g_next_id, 1);
    tocl_status s = tocl_rec_begin(q, &g->rec);
    if (s != TOCL_OK) {
        free(g);
        return s;
    }
    g->capturing = 1;
    tocl_mem_capture_owner(g->id);
    *out = g;
    return TOCL_OK;
}

tocl_status tocl_graph_end(tocl_graph *g, const char **why) {
    if (!g || !g->capturing)
        return tocl_fail(TOCL_E_INVALID, "tocl_graph_end: no capture under way on this graph");
    cl_command_queue q;
    tocl_status s = tocl_queue_get(g->dev, g->stream, &q); /* deferred work of the capture, recorded */
    tocl_mem_capture_owner(0);
    g->capturing = 0;
    tocl_status e = tocl_rec_end(g->rec, &g->why);
    if (s == TOCL_OK)
        s = e;
    if (why)
        *why = g->why;
    return s;
}

tocl_status tocl_graph_replay(tocl_graph *g) {
    if (!g || g->capturing)
        return tocl_fail(TOCL_E_INVALID, "tocl_graph_replay: the graph is %s", g ? "still capturing" : "NULL");
    if (g->why)
        return tocl_fail(TOCL_E_INVALID, "this graph cannot be replayed: %s", g->why);
    int stream = tocl_stream_current(g->dev);
    cl_command_queue q;
    /* A bad index an earlier replay's check found, if its read has arrived. */
    TOCL_TRY(tocl_deferred_collect(g->dev, -1, 0));
    TOCL_TRY(tocl_queue_get(g->dev, stream, &q)); /* after the work deferred on this stream */
    return tocl_rec_replay(g->rec, q, g->dev, stream);
}

int tocl_graph_commands(const tocl_graph *g) { return g && g->rec ? tocl_rec_commands(g->rec) : 0; }

void tocl_graph_destroy(tocl_graph *g) {
    if (!g)
        return;
    if (g->capturing) {
        tocl_mem_capture_owner(0);
        const char *why;
        tocl_rec_end(g->rec, &why);
    }
    tocl_rec_free(g->rec);
    tocl_mem_owner_release(g->id);
    free(g);
}

void tocl_graph_check_bounds(int64_t lo, int64_t hi) { tocl_rec_check_bounds(lo, hi); }

void tocl_graph_next_read_is_flag(void) { tocl_rec_next_read_is_flag(); }

int tocl_graph_capturing(void) { return tocl_rec_active(); }
