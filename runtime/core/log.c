/* log.c - the one logging switch. TORCH_OCL_LOG is a comma-separated list
 * of topics (fusion, builds, cache, tune, all); each line goes to stderr as
 * "[torch_ocl <topic>] ...". Warnings, which users must see, are printed
 * whatever the switch says. The older TORCH_OCL_LOG_BUILDS=1 and
 * TORCH_OCL_GEMM_TUNE_LOG=1 still turn their topic on. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const topic_names[TOCL_LOG_TOPIC_COUNT] = {"fusion", "builds", "cache", "tune", "compile"};
static atomic_int g_mask = -1;

static int parse(void) {
    int mask = 0;
    const char *v = tocl_env("TORCH_OCL_LOG");
    while (v && *v) {
        size_t n = strcspn(v, ",");
        if (n == 3 && !strncmp(v, "all", 3))
            mask = (1 << TOCL_LOG_TOPIC_COUNT) - 1;
        int known = n == 3 && !strncmp(v, "all", 3);
        for (int t = 0; t < TOCL_LOG_TOPIC_COUNT; t++)
            if (strlen(topic_names[t]) == n && !strncmp(v, topic_names[t], n)) {
                mask |= 1 << t;
                known = 1;
            }
        if (!known && n)
            fprintf(stderr, "torch_ocl: warning: TORCH_OCL_LOG names an unknown topic '%.*s' (known: fusion, "
                            "builds, cache, tune, compile, all)\n", (int)n, v);
        v += n + (v[n] == ',');
    }
    if (tocl_env_flag("TORCH_OCL_LOG_BUILDS"))
        mask |= 1 << TOCL_LOG_BUILDS;
    if (tocl_env_flag("TORCH_OCL_GEMM_TUNE_LOG"))
        mask |= 1 << TOCL_LOG_TUNE;
    return mask;
}

int tocl_log_on(tocl_log_topic topic) {
    int m = atomic_load_explicit(&g_mask, memory_order_relaxed);
    if (m < 0) {
        m = parse();
        atomic_store(&g_mask, m);
    }
    return (m >> topic) & 1;
}

void tocl_log_reload(void) { atomic_store(&g_mask, -1); }

void tocl_log(tocl_log_topic topic, const char *fmt, ...) {
    if (!tocl_log_on(topic))
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line, so lines from two threads do not interleave. */
    fprintf(stderr, "[torch_ocl %s] %s\n", topic_names[topic], line);
}

void tocl_warn(const char *fmt, ...) {
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "torch_ocl: warning: %s\n", line);
}
