/* test_program_race.c - two processes building the same new program at once leave one valid file. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "tocl_test.h"

#define CHILDREN 2
#define ROUNDS 3

static char g_src[ROUNDS][512];

/* Child: wait for the start signal so both compile and write at the same
 * moment, then build through the disk cache. Exit 0 only on success. */
static int child(int round, int start_fd) {
    char go;
    if (read(start_fd, &go, 1) != 1)
        return 2;
    if (tocl_program_prepare(0, g_src[round], "", "raced") != TOCL_OK) {
        fprintf(stderr, "child %d: %s\n", (int)getpid(), tocl_last_error());
        return 1;
    }
    tocl_program_stats s;
    tocl_program_stats_get(&s);
    /* Each child either built and wrote, or found the other's finished file. */
    return (s.builds == 1 && s.disk_writes == 1) || s.disk_hits == 1 ? 0 : 3;
}

static int count_temp_files(const char *dir) {
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

int main(void) {
    /* The counts below expect a build's file on disk at once (test_program.c tests saving later). */
    setenv("TORCH_OCL_CACHE_SAVE", "now", 1);
    /* fork() happens before this process makes any OpenCL call: a child
     * forked after the driver has started its threads inherits locks that
     * no thread will ever release. Clearing the cache touches only files. */
    char dir[4096];
    CHECK_OK(tocl_cache_dir(dir, sizeof dir));
    CHECK_OK(tocl_cache_clear(NULL));
    for (int r = 0; r < ROUNDS; r++)
        snprintf(g_src[r], sizeof g_src[r],
                 "/* race %d-%ld round %d */\n__kernel void raced(__global float *x) { x[get_global_id(0)] *= "
                 "%d.0f; }\n",
                 (int)getpid(), (long)time(NULL), r, r + 2);

    for (int r = 0; r < ROUNDS; r++) {
        int fds[2];
        CHECK(pipe(fds) == 0);
        pid_t pids[CHILDREN];
        for (int c = 0; c < CHILDREN; c++) {
            pids[c] = fork();
            if (pids[c] == 0) {
                close(fds[1]);
                _exit(child(r, fds[0]));
            }
        }
        close(fds[0]);
        CHECK(write(fds[1], "gg", CHILDREN) == CHILDREN); /* one byte per child: go */
        close(fds[1]);
        for (int c = 0; c < CHILDREN; c++) {
            int status = -1;
            waitpid(pids[c], &status, 0);
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
    }
    uint64_t files = 0;
    CHECK_OK(tocl_cache_info(&files, NULL));
    CHECK(files == ROUNDS);           /* one file per program, whoever renamed last */
    CHECK(count_temp_files(dir) == 0); /* no temp file left behind */

    if (tocl_device_count() < 1) {
        printf("no OpenCL device: skipping the lookups\n");
        TOCL_TEST_END();
    }
    /* Now this process: every program is a disk hit and validates. */
    for (int r = 0; r < ROUNDS; r++)
        CHECK_OK(tocl_program_prepare(0, g_src[r], "", "raced"));
    tocl_program_stats s;
    tocl_program_stats_get(&s);
    CHECK(s.disk_hits == ROUNDS && s.builds == 0 && s.disk_rejects == 0);
    tocl_program_cache_drop_memory();
    TOCL_TEST_END();
}
