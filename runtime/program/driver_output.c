/* driver_output.c - keep the OpenCL compiler's own stderr lines off the user's terminal.
 *
 * PoCL's clang prints its summary ("1 error generated.") with
 * llvm::errs(), straight to the process's fd 2, whatever the build log
 * says; the diagnostics themselves go to the build log, which a failed
 * build carries in its error message. So while any build is in the driver,
 * fd 2 points at an anonymous file; when the last build in flight
 * returns, fd 2 is restored and the captured text is sorted: the
 * compiler's summary lines are dropped (logged under TORCH_OCL_LOG=builds),
 * everything else (another thread's output written in the window) is
 * written to the real stderr, late but not lost. A redirect shared by
 * overlapping builds (a count under a lock) keeps builds from waiting on
 * each other. A forked child restores fd 2 if the fork came mid-build. */
#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "program/program_internal.h"

#define KEEP_MAX (256 * 1024) /* more is never a compiler summary; forwarded unread beyond this */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_depth;      /* builds in the driver */
static int g_saved = -1; /* the real fd 2 while redirected */
static int g_capture = -1;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int capture_file(void) {
#if defined(__linux__) && defined(MFD_CLOEXEC)
    int fd = memfd_create("torch_ocl_driver_output", MFD_CLOEXEC);
    if (fd >= 0)
        return fd;
#endif
    FILE *f = tmpfile();
    if (!f)
        return -1;
    int fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
    fclose(f);
    return fd;
}

/* Restore fd 2 and close the capture; under g_lock (or in a fork child). */
static void restore(void) {
    if (g_saved >= 0) {
        dup2(g_saved, 2);
        close(g_saved);
    }
    if (g_capture >= 0)
        close(g_capture);
    g_saved = g_capture = -1;
}

static void child_after_fork(void) {
    /* Only this thread survives: the builds in flight are the parent's. */
    pthread_mutex_init(&g_lock, NULL);
    restore();
    g_depth = 0;
}

static void register_fork(void) { tocl_fork_on_child(child_after_fork); }

void tocl_driver_output_release(void) {
    pthread_mutex_lock(&g_lock);
    restore(); /* the build still in the driver writes to the terminal now; end() finds nothing to read */
    pthread_mutex_unlock(&g_lock);
}

void tocl_driver_output_begin(void) {
    pthread_once(&g_once, register_fork);
    pthread_mutex_lock(&g_lock);
    if (g_depth++ == 0) {
        fflush(stderr);
        int cap = capture_file();
        int saved = cap >= 0 ? fcntl(2, F_DUPFD_CLOEXEC, 3) : -1;
        if (saved >= 0 && dup2(cap, 2) >= 0) {
            g_saved = saved;
            g_capture = cap;
        } else { /* no capture: the driver writes where it always did */
            if (saved >= 0)
                close(saved);
            if (cap >= 0)
                close(cap);
        }
    }
    pthread_mutex_unlock(&g_lock);
}

/* "N error(s) generated." / "N warning(s) generated." / "N warning(s) and
 * N error(s) generated.": clang's count of what the build log lists. */
static int compiler_summary(const char *line, size_t n) {
    static const char tail[] = " generated.";
    size_t m = sizeof tail - 1;
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
        n--;
    if (n <= m || memcmp(line + n - m, tail, m) != 0 || !isdigit((unsigned char)line[0]))
        return 0;
    for (size_t i = 0; i < n - m; i++)
        if (!isdigit((unsigned char)line[i]) && !isalpha((unsigned char)line[i]) && line[i] != ' ' &&
            line[i] != '(' && line[i] != ')')
            return 0;
    return strstr(line, "error") || strstr(line, "warning");
}

static void write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

void tocl_driver_output_end(void) {
    char *text = NULL;
    size_t len = 0;
    pthread_mutex_lock(&g_lock);
    if (--g_depth == 0 && g_capture >= 0) {
        fflush(stderr);
        int cap = g_capture;
        g_capture = -1;
        restore();
        struct stat st;
        if (fstat(cap, &st) == 0 && st.st_size > 0) {
            len = (size_t)st.st_size < KEEP_MAX ? (size_t)st.st_size : KEEP_MAX;
            text = malloc(len + 1);
            ssize_t got = text ? pread(cap, text, len, 0) : -1;
            len = got > 0 ? (size_t)got : 0;
            if (text)
                text[len] = '\0';
            if ((size_t)st.st_size > KEEP_MAX) { /* not the compiler's: pass it on whole */
                free(text);
                text = NULL;
                char buf[65536];
                ssize_t n;
                off_t off = 0;
                while ((n = pread(cap, buf, sizeof buf, off)) > 0) {
                    write_all(2, buf, (size_t)n);
                    off += n;
                }
            }
        }
        close(cap);
    }
    pthread_mutex_unlock(&g_lock);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (compiler_summary(line, n))
            tocl_log(TOCL_LOG_BUILDS, "the OpenCL compiler said: %.*s", (int)n, line);
        else
            write_all(2, line, n + (nl != NULL));
        line += n + (nl != NULL);
    }
    free(text);
}
