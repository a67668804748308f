/* fork.c - a process forked after it used the device refuses OpenCL work with a message instead of hanging.
 *
 * fork() copies the calling thread only. The OpenCL driver's threads (PoCL's
 * workers, a GPU driver's event threads), the background builder and any
 * lock another thread held at that moment stay behind in the parent, so in
 * the child the first enqueue or wait never returns. CUDA refuses the same
 * way ("Cannot re-initialize CUDA in forked subprocess"). A child forked
 * before the first OpenCL call is unaffected: it initialises on its own.
 *
 * The handler is registered when the runtime first initialises, so it runs
 * in every later fork (os.fork, multiprocessing's default start method,
 * DataLoader workers). The child keeps what needs no driver (device count
 * and properties, the current device) and leaks device and pinned memory
 * its copies of the parent's tensors free: those belong to the parent. */
#include <pthread.h>
#include <stdatomic.h>

#include "internal.h"

static atomic_int g_used;      /* this process has made OpenCL calls */
static atomic_int g_bad_fork;  /* ... and this is a child forked after that */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tocl_fork_child_fn g_children[4];
static atomic_int g_nchildren;

static void in_child(void) {
    if (atomic_load(&g_used))
        atomic_store(&g_bad_fork, 1);
    /* Everything registered runs, even in a child of a clean process. */
    int n = atomic_load(&g_nchildren);
    for (int i = 0; i < n; i++)
        g_children[i]();
}

static void register_handler(void) { pthread_atfork(NULL, NULL, in_child); }

void tocl_fork_note_used(void) {
    pthread_once(&g_once, register_handler);
    atomic_store(&g_used, 1);
}

void tocl_fork_on_child(tocl_fork_child_fn fn) {
    pthread_once(&g_once, register_handler);
    int i = atomic_fetch_add(&g_nchildren, 1);
    if (i < (int)(sizeof g_children / sizeof g_children[0]))
        g_children[i] = fn;
    else
        atomic_fetch_sub(&g_nchildren, 1);
}

int tocl_in_bad_fork(void) { return atomic_load_explicit(&g_bad_fork, memory_order_relaxed); }

tocl_status tocl_fork_check(void) {
    if (!tocl_in_bad_fork())
        return TOCL_OK;
    return tocl_fail(TOCL_E_UNSUPPORTED,
                     "Cannot re-initialize OpenCL (torch-ocl) in a forked subprocess: this process was forked "
                     "after its parent used the ocl device, and the OpenCL driver's threads do not survive "
                     "fork(). To use the ocl device with multiprocessing, use the 'spawn' or 'forkserver' "
                     "start method (multiprocessing.set_start_method('spawn'), or "
                     "DataLoader(multiprocessing_context='spawn')), or touch ocl only in the parent");
}
