/* stats.c - the allocator's per-device state, memory limits and statistics. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_impl.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static mem_dev *g_devs;
static int g_ndev;

static void state_init(void) {
    int n = tocl_device_count();
    if (n > 0 && (g_devs = calloc((size_t)n, sizeof *g_devs)) != NULL)
        g_ndev = n;
}

tocl_status mem_dev_get(int dev, mem_dev **out) {
    TOCL_TRY(tocl_device_check(dev));
    pthread_once(&g_once, state_init);
    if (dev >= g_ndev)
        return tocl_fail(TOCL_E_INTERNAL, "allocator state for OpenCL device %d could not be allocated", dev);
    *out = &g_devs[dev];
    return TOCL_OK;
}

/* TORCH_OCL_MEMORY_LIMIT: bytes, optionally with a K/M/G/T suffix (powers of
 * 1024) because nobody wants to type 8589934592. 0 or garbage: no limit set. */
static uint64_t env_limit(void) {
    const char *v = tocl_env("TORCH_OCL_MEMORY_LIMIT");
    if (!v)
        return 0;
    char *end = NULL;
    double x = strtod(v, &end);
    if (end == v || x <= 0)
        return 0;
    while (*end == ' ')
        end++;
    switch (toupper((unsigned char)*end)) {
    case 'K': x *= 1024.0; break;
    case 'M': x *= 1024.0 * 1024.0; break;
    case 'G': x *= 1024.0 * 1024.0 * 1024.0; break;
    case 'T': x *= 1024.0 * 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return (uint64_t)x;
}

uint64_t mem_limit(int dev) {
    uint64_t o = g_devs[dev].limit_override;
    if (o)
        return o;
    uint64_t e = env_limit();
    return e ? e : tocl_dev_props(dev)->global_mem_bytes;
}

void mem_format_bytes(char *buf, size_t cap, uint64_t n) {
    static const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) {
        snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
        return;
    }
    double x = (double)n / 1024.0;
    int u = 0;
    while (x >= 1024.0 && u < 3) {
        x /= 1024.0;
        u++;
    }
    snprintf(buf, cap, "%.2f %s", x, units[u]);
}

tocl_status tocl_mem_stats_get(int dev, tocl_mem_stats *out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_stats_get: out is NULL");
    mem_dev *d;
    TOCL_TRY(mem_dev_get(dev, &d));
    pthread_mutex_lock(&tocl_mem_lock);
    *out = d->st;
    out->limit_bytes = mem_limit(dev);
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}

tocl_status tocl_mem_reset_peak(int dev) {
    mem_dev *d;
    TOCL_TRY(mem_dev_get(dev, &d));
    pthread_mutex_lock(&tocl_mem_lock);
    d->st.peak_allocated_bytes = d->st.allocated_bytes;
    d->st.peak_reserved_bytes = d->st.reserved_bytes;
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}

tocl_status tocl_mem_reset_counters(int dev) {
    mem_dev *d;
    TOCL_TRY(mem_dev_get(dev, &d));
    pthread_mutex_lock(&tocl_mem_lock);
    d->st.alloc_count = 0;
    d->st.free_count = 0;
    d->st.cache_hits = 0;
    d->st.alloc_retries = 0;
    d->st.ooms = 0;
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}

tocl_status tocl_mem_empty_cache(int dev) {
    mem_dev *d;
    TOCL_TRY(mem_dev_get(dev, &d));
    pthread_mutex_lock(&tocl_mem_lock);
    int guard = mem_guard_on();
    /* Blocks whose other streams are done can go too; in guard mode wait for
     * the canary reads of freed blocks, so their checks run now. */
    mem_process_pending(dev, guard);
    mem_release_free_segments(dev); /* also enqueues deferred elementwise ops */
    if (guard) {
        mem_guard_poll(1);
        mem_guard_check_live(dev);
    }
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}

tocl_status tocl_mem_set_limit(int dev, uint64_t bytes) {
    mem_dev *d;
    TOCL_TRY(mem_dev_get(dev, &d));
    pthread_mutex_lock(&tocl_mem_lock);
    d->limit_override = bytes;
    pthread_mutex_unlock(&tocl_mem_lock);
    return TOCL_OK;
}
