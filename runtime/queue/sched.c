/* sched.c - the scheduler hooks (internal.h): one pointer, NULL until fused
 * eager records its first op, so strict mode pays one load per call. */
#include <stdatomic.h>
#include <stddef.h>

#include "internal.h"

static _Atomic(const tocl_sched_hooks *) g_hooks;

void tocl_sched_install(const tocl_sched_hooks *hooks) { atomic_store_explicit(&g_hooks, hooks, memory_order_release); }

tocl_status tocl_sched_flush(int dev, int stream) {
    const tocl_sched_hooks *h = atomic_load_explicit(&g_hooks, memory_order_acquire);
    return h ? h->flush(dev, stream) : TOCL_OK;
}

tocl_status tocl_sched_flush_device(int dev) {
    const tocl_sched_hooks *h = atomic_load_explicit(&g_hooks, memory_order_acquire);
    return h ? h->flush_device(dev) : TOCL_OK;
}

void tocl_sched_note_free(int dev, tocl_addr addr, size_t size) {
    const tocl_sched_hooks *h = atomic_load_explicit(&g_hooks, memory_order_acquire);
    if (h)
        h->note_free(dev, addr, size);
}
