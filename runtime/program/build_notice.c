/* build_notice.c - one line on stderr while a cold program cache makes the user wait.
 *
 * A new user's first training step spends tens of seconds compiling OpenCL
 * kernels (PoCL: 0.1-1 s each), silently; it looks like a hang. Once this
 * process has spent NOTICE_AFTER_S seconds building programs from source, a
 * line says what is happening and that it is a one-time cost; while builds
 * go on, another every REPEAT_S seconds. Only builds a caller waits for are
 * counted: not those of the background builder (fused eager runs the graph
 * unfused meanwhile), nor programs loaded from the disk cache, so a warm
 * cache prints nothing.
 *
 * Shown when stderr is a terminal (a progress note, like pip's; logs and
 * test captures stay clean); TORCH_OCL_BUILD_NOTICE=1 shows it anywhere,
 * =0 never. TORCH_OCL_BUILD_NOTICE_S sets the threshold (tests use 0). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "program/kernels.h"
#include "program/program_internal.h"

#define NOTICE_AFTER_S 2.0
#define REPEAT_S 10.0

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_enabled = -1; /* -1: not decided yet */
static double g_after_s = NOTICE_AFTER_S;
static unsigned g_built;
static double g_build_s, g_last_notice;

static void decide(void) {
    const char *v = tocl_env("TORCH_OCL_BUILD_NOTICE");
    g_enabled = v ? tocl_env_flag("TORCH_OCL_BUILD_NOTICE") : isatty(2);
    const char *s = tocl_env("TORCH_OCL_BUILD_NOTICE_S");
    if (s) {
        char *end;
        double d = strtod(s, &end);
        if (end != s && d >= 0)
            g_after_s = d;
    }
}

void tocl_build_notice(const char *devname, double seconds, const char *cache_dir) {
    if (tocl_on_builder_thread())
        return;
    pthread_mutex_lock(&g_lock);
    if (g_enabled < 0)
        decide();
    double now = tocl_program_now();
    g_built++;
    g_build_s += seconds;
    int say = g_enabled && g_build_s >= g_after_s && (g_last_notice == 0 || now - g_last_notice >= REPEAT_S);
    if (say)
        g_last_notice = now;
    unsigned built = g_built;
    double waited = g_build_s;
    pthread_mutex_unlock(&g_lock);
    if (!say)
        return;
    /* One fprintf: a line from another thread does not land inside it. */
    if (cache_dir)
        fprintf(stderr, "torch_ocl: building OpenCL kernels for %s: %u built, %.0f s so far (a one-time cost: "
                        "they are cached in %s for the next run)\n", devname, built, waited, cache_dir);
    else
        fprintf(stderr, "torch_ocl: building OpenCL kernels for %s: %u built, %.0f s so far (kept in memory "
                        "for this process only: the disk cache is off or not writable)\n", devname, built, waited);
}
