/* builder.c - the background builder.
 *
 * Fused eager meets many new graphs; building one takes 0.1-1 s on PoCL.
 * Rather than stall the stream, the flush runs the ops one kernel each (their
 * kernels are already built) and asks this thread for the fused kernel, which
 * later flushes of the same graph find in the cache.
 *
 * At exit nobody needs the queued builds: they are dropped, and the one in
 * the driver gets EXIT_BOUND_S to finish. The thread must not be inside the
 * driver when exit() runs the driver's static destructors: LLVM's pass
 * registry is destroyed under a running compile and the process segfaults
 * (it did every time in a test that skipped the wait). So the exit guard
 * below runs before those destructors and, if the build outlives the bound,
 * ends the process with _exit (the status kept, stdio flushed) instead of
 * running them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "program/kernels.h"
#include "program/program_internal.h"

#define EXIT_BOUND_S 1.0

typedef struct build_job {
    struct build_job *next;
    void (*fn)(const void *key);
    uint64_t hash;
    size_t size;
    unsigned char key[]; /* what fn builds; compared byte for byte */
} build_job;

static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t build_cv = PTHREAD_COND_INITIALIZER, build_done_cv = PTHREAD_COND_INITIALIZER;
static build_job *build_head, *build_tail, *build_current;
static int build_thread_started;
static int build_exiting;     /* set at exit: no job is queued or taken any more */
static double exit_deadline;  /* when the build in the driver stops being waited for */
static pid_t build_pid;       /* the process the thread runs in (a fork child has none) */
static uint64_t builds_finished;
static double build_seconds;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static _Thread_local int on_builder_thread;

int tocl_on_builder_thread(void) { return on_builder_thread; }

static void *build_main(void *arg) {
    (void)arg;
    on_builder_thread = 1;
    pthread_mutex_lock(&build_lock);
    for (;;) {
        /* At exit the queue stays empty: the thread sleeps here, outside the
         * driver, until the process ends. */
        while (!build_head || build_exiting)
            pthread_cond_wait(&build_cv, &build_lock);
        build_job *j = build_head;
        build_head = j->next;
        if (!build_head)
            build_tail = NULL;
        build_current = j;
        pthread_mutex_unlock(&build_lock);
        double t0 = now_seconds();
        j->fn(j->key);
        double dt = now_seconds() - t0;
        pthread_mutex_lock(&build_lock);
        build_current = NULL;
        builds_finished++;
        build_seconds += dt;
        free(j);
        pthread_cond_broadcast(&build_done_cv);
    }
    return NULL;
}

static int same_job(const build_job *j, void (*fn)(const void *), const void *key, size_t size, uint64_t h) {
    return j && j->fn == fn && j->hash == h && j->size == size && !memcmp(j->key, key, size);
}

static void exit_guard(int status, void *arg);

void tocl_build_async(void (*fn)(const void *key), const void *key, size_t size, uint64_t hash) {
    pthread_mutex_lock(&build_lock);
    int dup = build_exiting || same_job(build_current, fn, key, size, hash);
    for (build_job *j = build_head; j && !dup; j = j->next)
        dup = same_job(j, fn, key, size, hash);
    build_job *j = dup ? NULL : malloc(sizeof *j + size);
    if (j && !build_thread_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, build_main, NULL) == 0) {
            pthread_detach(t);
            build_thread_started = 1;
            build_pid = getpid();
            /* Registered now, after the driver has loaded and built kernels,
             * so that exit() runs it before the driver's destructors. */
#if defined(__GLIBC__)
            on_exit(exit_guard, NULL);
#else
            atexit(tocl_builder_wait); /* no exit status to keep: wait as long as it takes */
#endif
        }
    }
    if (j && build_thread_started) {
        j->next = NULL;
        j->fn = fn;
        j->hash = hash;
        j->size = size;
        memcpy(j->key, key, size);
        if (build_tail)
            build_tail->next = j;
        else
            build_head = j;
        build_tail = j;
        pthread_cond_signal(&build_cv);
    } else {
        free(j);
    }
    pthread_mutex_unlock(&build_lock);
}

void tocl_builder_wait(void) {
    pthread_mutex_lock(&build_lock);
    while (build_head || build_current)
        pthread_cond_wait(&build_done_cv, &build_lock);
    pthread_mutex_unlock(&build_lock);
}

int tocl_builder_abandon(double seconds) {
    if (!build_thread_started || build_pid != getpid())
        return 1; /* no thread here; a fork child must not take a lock the parent's thread held */
    pthread_mutex_lock(&build_lock);
    build_exiting = 1;
    while (build_head) {
        build_job *j = build_head;
        build_head = j->next;
        free(j);
    }
    build_tail = NULL;
    /* One deadline for every call, so that the wait at exit stays within the
     * first caller's bound however many callers there are. */
    double now = now_seconds();
    if (exit_deadline == 0 || now + seconds < exit_deadline)
        exit_deadline = now + seconds;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until); /* the condition variable's clock */
    double wait = exit_deadline - now;
    if (wait > 0) {
        double t = (double)until.tv_sec + 1e-9 * (double)until.tv_nsec + wait;
        until.tv_sec = (time_t)t;
        until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
        while (build_current && pthread_cond_timedwait(&build_done_cv, &build_lock, &until) == 0)
            ;
    }
    int idle = build_current == NULL;
    pthread_cond_broadcast(&build_done_cv); /* wake tocl_builder_wait: the queue is empty */
    pthread_mutex_unlock(&build_lock);
    if (!idle)
        tocl_driver_output_release();
    return idle;
}

static void exit_guard(int status, void *arg) {
    (void)arg;
    if (!tocl_builder_abandon(EXIT_BOUND_S)) {
        fflush(NULL);
        _exit(status);
    }
}

void tocl_builder_stats(uint64_t *builds, double *seconds) {
    pthread_mutex_lock(&build_lock);
    if (builds)
        *builds = builds_finished;
    if (seconds)
        *seconds = build_seconds;
    pthread_mutex_unlock(&build_lock);
}

