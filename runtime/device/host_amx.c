/* host_amx.c - may kernels of a PoCL CPU device use the host's AMX tiles?
 *
 * Intel's AMX (Sapphire Rapids and later) multiplies bfloat16 tiles at
 * several times the rate of float32 FMAs. Linux turns the tile registers on
 * per process, on request (arch_prctl ARCH_REQ_XCOMP_PERM, since 5.16): an
 * instruction run before the request kills the process with SIGILL. PoCL's
 * CPU device runs kernels on threads of this process, so the runtime asks
 * once, here, before any kernel that uses the tiles is built. PyTorch's own
 * CPU kernels (oneDNN) make the same request. */
#include <pthread.h>

#include "internal.h"

#if defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static int cpu_has_amx_bf16(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE: xgetbv is usable */
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 22)) || !(d & (1u << 24)))
        return 0; /* AMX-BF16, AMX-TILE */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & (3u << 17)) == (3u << 17); /* the OS saves XTILECFG and XTILEDATA */
}

static int g_amx;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void amx_request(void) {
    g_amx = cpu_has_amx_bf16() && syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

int tocl_host_amx_permit(void) {
    pthread_once(&g_once, amx_request);
    return g_amx;
}
#else
int tocl_host_amx_permit(void) { return 0; }
#endif

int tocl_host_amx(void) { return !tocl_env_off("TORCH_OCL_AMX") && tocl_host_amx_permit(); }
