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
 * running them.
 *
 * A second, lower lane holds saves: writing a program built from source to
 * the disk cache (cache.c). On PoCL asking for a program's binary compiles
 * every kernel in it once more (12 of the demo's 19 s first step on a cold
 * cache), and only the next process gains from it. So a save runs only when
 * no build job is queued and no program has been built for QUIET_S, and at
 * exit the saves still queued are dropped like the builds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "program/kernels.h"
#include "program/program_internal.h"

#define EXIT_BOUND_S 1.0
/* A save waits this long after the last build. PoCL compiles a kernel's code
 * when it first runs, on its own threads, under the same compiler lock a save
 * takes; 1 s was too short (the demo's first step went from 10 to 14 s). */
#define QUIET_S 3.0

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
static build_job *save_head, *save_tail; /* the lower lane */
static int current_is_save;               /* build_current came from the save lane */
static int save_flushers;                 /* callers of tocl_builder_flush_saves: saves run now */
static int builds_in_flight;              /* programs being built from source, on any thread */
static double last_build_s;               /* when a build from source last began or ended */
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

/* Take the first job off a lane. */
static build_job *pop(build_job **head, build_job **tail, int is_save) {
    build_job *j = *head;
    *head = j->next;
    if (!*head)
        *tail = NULL;
    current_is_save = is_save;
    return j;
}

/* The job the thread should run next (taken off its lane), or NULL with
 * *wait_s set: how long to sleep before asking again (< 0: until signalled). */
static build_job *next_job(double *wait_s) {
    *wait_s = -1;
    if (build_exiting)
        return NULL;
    if (build_head)
        return pop(&build_head, &build_tail, 0);
    if (!save_head)
        return NULL;
    double quiet = last_build_s + QUIET_S - now_seconds();
    if (!save_flushers && (builds_in_flight > 0 || quiet > 0)) {
        *wait_s = quiet > 0.01 ? quiet : QUIET_S;
        return NULL;
    }
    return pop(&save_head, &save_tail, 1);
}

/* `seconds` from now on the condition variables' clock. */
static struct timespec realtime_in(double seconds) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double t = (double)until.tv_sec + 1e-9 * (double)until.tv_nsec + seconds;
    until.tv_sec = (time_t)t;
    until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
    return until;
}

static void wait_for_work(double seconds) {
    if (seconds < 0) {
        pthread_cond_wait(&build_cv, &build_lock);
        return;
    }
    struct timespec until = realtime_in(seconds);
    pthread_cond_timedwait(&build_cv, &build_lock, &until);
}

static void *build_main(void *arg) {
    (void)arg;
    on_builder_thread = 1;
    pthread_mutex_lock(&build_lock);
    for (;;) {
        /* At exit the queues stay empty: the thread sleeps here, outside the
         * driver, until the process ends. */
        double wait_s;
        build_job *j;
        while (!(j = next_job(&wait_s)))
            wait_for_work(wait_s);
        build_current = j;
        pthread_mutex_unlock(&build_lock);
        double t0 = now_seconds();
        j->fn(j->key);
        double dt = now_seconds() - t0;
        pthread_mutex_lock(&build_lock);
        build_current = NULL;
        if (!current_is_save) {
            builds_finished++;
            build_seconds += dt;
        }
        current_is_save = 0;
        free(j);
        pthread_cond_broadcast(&build_done_cv);
    }
    return NULL;
}

static int same_job(const build_job *j, void (*fn)(const void *), const void *key, size_t size, uint64_t h) {
    return j && j->fn == fn && j->hash == h && j->size == size && !memcmp(j->key, key, size);
}

static void exit_guard(int status, void *arg);
#if !defined(__GLIBC__)
static void exit_wait(void) { (void)tocl_builder_abandon(1e30); }
#endif

static int queued(const build_job *head, void (*fn)(const void *), const void *key, size_t size, uint64_t h) {
    for (const build_job *j = head; j; j = j->next)
        if (same_job(j, fn, key, size, h))
            return 1;
    return 0;
}

static int enqueue(int save, void (*fn)(const void *key), const void *key, size_t size, uint64_t hash) {
    pthread_mutex_lock(&build_lock);
    int dup = build_exiting || same_job(build_current, fn, key, size, hash) ||
              queued(build_head, fn, key, size, hash) || queued(save_head, fn, key, size, hash);
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
            atexit(exit_wait); /* no exit status to keep: wait as long as the job in the driver takes */
#endif
        }
    }
    if (j && build_thread_started) {
        j->next = NULL;
        j->fn = fn;
        j->hash = hash;
        j->size = size;
        memcpy(j->key, key, size);
        build_job **head = save ? &save_head : &build_head, **tail = save ? &save_tail : &build_tail;
        if (*tail)
            (*tail)->next = j;
        else
            *head = j;
        *tail = j;
        pthread_cond_signal(&build_cv);
    } else {
        free(j);
        j = NULL;
    }
    int taken = build_exiting ? 0 : dup ? 2 : j != NULL;
    pthread_mutex_unlock(&build_lock);
    return taken;
}

void tocl_build_async(void (*fn)(const void *key), const void *key, size_t size, uint64_t hash) {
    enqueue(0, fn, key, size, hash);
}

int tocl_build_save_later(void (*fn)(const void *key), const void *key, size_t size, uint64_t hash) {
    return enqueue(1, fn, key, size, hash);
}

void tocl_builder_note_build(int begin) {
    pthread_mutex_lock(&build_lock);
    builds_in_flight += begin ? 1 : -1;
    last_build_s = now_seconds();
    pthread_mutex_unlock(&build_lock);
}

void tocl_builder_flush_saves(void) {
    pthread_mutex_lock(&build_lock);
    save_flushers++;
    pthread_cond_signal(&build_cv);
    while (!build_exiting && (save_head || (build_current && current_is_save)))
        pthread_cond_wait(&build_done_cv, &build_lock);
    save_flushers--;
    pthread_mutex_unlock(&build_lock);
}

void tocl_builder_wait(void) {
    pthread_mutex_lock(&build_lock);
    while (build_head || (build_current && !current_is_save))
        pthread_cond_wait(&build_done_cv, &build_lock);
    pthread_mutex_unlock(&build_lock);
}

int tocl_builder_abandon(double seconds) {
    if (!build_thread_started || build_pid != getpid())
        return 1; /* no thread here; a fork child must not take a lock the parent's thread held */
    pthread_mutex_lock(&build_lock);
    build_exiting = 1;
    for (build_job **lane = &build_head; lane; lane = lane == &build_head ? &save_head : NULL)
        while (*lane) {
            build_job *j = *lane;
            *lane = j->next;
            free(j);
        }
    build_tail = save_tail = NULL;
    /* One deadline for every call, so that the wait at exit stays within the
     * first caller's bound however many callers there are. */
    double now = now_seconds();
    if (exit_deadline == 0 || now + seconds < exit_deadline)
        exit_deadline = now + seconds;
    double wait = exit_deadline - now;
    if (wait > 0) {
        struct timespec until = realtime_in(wait);
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

