/* discover.c - find OpenCL platforms and devices once, order and select them,
 * and make one context per platform. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* More devices than this in one process is not a real machine; the cap lets
 * queue/stream.c keep the thread-local current streams in a fixed array. */
#define DEV_MAX 64

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001 /* cl_khr_icd, in cl_ext.h */
#endif

tocl_status tocl_dev_props_read(cl_platform_id plat, cl_device_id id, tocl_device_props *p); /* props.c */

typedef struct dev_entry {
    cl_platform_id plat;
    cl_device_id id;
    cl_context ctx; /* shared by every selected device of the platform */
    tocl_device_props props;
} dev_entry;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dev_entry *g_devs;      /* selected devices, in user-visible order */
static int g_count;
static tocl_status g_status;   /* a discovery failure, replayed to every caller */
static char g_msg[4096];

/* All devices of all platforms, in the default order (GPU, accelerator,
 * CPU, other; stable within a kind so the platform order is kept). */
static tocl_status enumerate(dev_entry **out, int *n_out) {
    *out = NULL;
    *n_out = 0;
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    /* The ICD loader answers "no platform" when no driver is installed: that
     * is zero devices, which tocl_device_check explains to the user. */
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && np == 0))
        return TOCL_OK;
    TOCL_CL_TRY(err, "clGetPlatformIDs");
    cl_platform_id plats[64];
    if (np > 64)
        np = 64;
    TOCL_CL_TRY(clGetPlatformIDs(np, plats, NULL), "clGetPlatformIDs");

    dev_entry *all = NULL;
    int n = 0;
    tocl_status s = TOCL_OK;
    for (cl_uint p = 0; p < np && s == TOCL_OK; p++) {
        cl_uint nd = 0;
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (err == CL_DEVICE_NOT_FOUND || nd == 0)
            continue; /* a platform without devices (e.g. a GPU driver, no GPU) */
        if (err != CL_SUCCESS) {
            s = tocl_fail(TOCL_E_OPENCL, "clGetDeviceIDs failed: %s (%d)", tocl_cl_error_name(err), err);
            break;
        }
        cl_device_id ids[64];
        if (nd > 64)
            nd = 64;
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        if (err != CL_SUCCESS) {
            s = tocl_fail(TOCL_E_OPENCL, "clGetDeviceIDs failed: %s (%d)", tocl_cl_error_name(err), err);
            break;
        }
        dev_entry *grown = realloc(all, (size_t)(n + (int)nd) * sizeof *all);
        if (!grown) {
            s = tocl_fail(TOCL_E_INTERNAL, "out of host memory while listing OpenCL devices");
            break;
        }
        all = grown;
        for (cl_uint d = 0; d < nd && s == TOCL_OK; d++) {
            dev_entry *e = &all[n++];
            memset(e, 0, sizeof *e);
            e->plat = plats[p];
            e->id = ids[d];
            s = tocl_dev_props_read(plats[p], ids[d], &e->props);
        }
    }
    if (s != TOCL_OK) {
        free(all);
        return s;
    }
    /* Insertion sort by kind: stable, and n is tiny. */
    for (int i = 1; i < n; i++) {
        dev_entry tmp = all[i];
        int j = i - 1;
        while (j >= 0 && all[j].props.kind > tmp.props.kind) {
            all[j + 1] = all[j];
            j--;
        }
        all[j + 1] = tmp;
    }
    *out = all;
    *n_out = n;
    return TOCL_OK;
}

static int contains_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return n == 0;
}

static tocl_status no_match(const char *entry, const dev_entry *all, int n) {
    char list[2048] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "\n  %d: %s (%s)", i, all[i].props.name,
                                all[i].props.platform_name);
    return tocl_fail(TOCL_E_NO_DEVICE,
                     "TORCH_OCL_DEVICES entry '%s' matches no OpenCL device; entries are indices into "
                     "this list or parts of a device name:%s",
                     entry, n ? list : " (no device found)");
}

/* Apply TORCH_OCL_DEVICES: each comma-separated entry is an index into the
 * default order or a case-insensitive part of the device name (selecting
 * every device it matches); the entries' order becomes the device order. */
static tocl_status select_devices(const char *spec, dev_entry *all, int n, int *order, int *count) {
    char *chosen = calloc((size_t)n + 1, 1); /* device already selected */
    if (!chosen)
        return tocl_fail(TOCL_E_INTERNAL, "out of host memory parsing TORCH_OCL_DEVICES");
    int k = 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        for (char *end = tok + strlen(tok); end > tok && isspace((unsigned char)end[-1]);)
            *--end = '\0';
        if (!*tok)
            continue;
        char *end = NULL;
        long idx = strtol(tok, &end, 10);
        int is_index = isdigit((unsigned char)*tok) && *end == '\0';
        int matched = 0;
        for (int i = 0; i < n; i++) {
            int hit = is_index ? (i == idx) : contains_nocase(all[i].props.name, tok);
            if (!hit)
                continue;
            matched = 1;
            if (!chosen[i] && k < DEV_MAX) {
                chosen[i] = 1;
                order[k++] = i;
            }
        }
        if (!matched) {
            free(chosen);
            return no_match(tok, all, n);
        }
    }
    free(chosen);
    *count = k;
    return TOCL_OK;
}

/* One context per platform, holding all of its selected devices, so that
 * buffers move between those devices without a host round trip. */
static tocl_status make_contexts(dev_entry *devs, int n) {
    for (int i = 0; i < n; i++) {
        if (devs[i].ctx)
            continue;
        cl_device_id ids[DEV_MAX];
        int m = 0;
        for (int j = i; j < n; j++)
            if (devs[j].plat == devs[i].plat)
                ids[m++] = devs[j].id;
        cl_context_properties cp[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)devs[i].plat, 0};
        cl_int err = CL_SUCCESS;
        cl_context ctx = clCreateContext(cp, (cl_uint)m, ids, NULL, NULL, &err);
        TOCL_CL_TRY(err, "clCreateContext");
        for (int j = i; j < n; j++)
            if (devs[j].plat == devs[i].plat)
                devs[j].ctx = ctx;
    }
    return TOCL_OK;
}

static tocl_status discover(void) {
    dev_entry *all = NULL;
    int n = 0;
    TOCL_TRY(enumerate(&all, &n));
    int order[DEV_MAX];
    int count = 0;
    const char *spec = tocl_env("TORCH_OCL_DEVICES");
    tocl_status s = TOCL_OK;
    if (spec) {
        s = select_devices(spec, all, n, order, &count);
    } else {
        count = n < DEV_MAX ? n : DEV_MAX;
        for (int i = 0; i < count; i++)
            order[i] = i;
    }
    if (s == TOCL_OK && count > 0) {
        g_devs = calloc((size_t)count, sizeof *g_devs);
        if (!g_devs) {
            s = tocl_fail(TOCL_E_INTERNAL, "out of host memory while listing OpenCL devices");
        } else {
            for (int i = 0; i < count; i++)
                g_devs[i] = all[order[i]];
            s = make_contexts(g_devs, count);
            if (s == TOCL_OK)
                g_count = count;
        }
    }
    free(all);
    return s;
}

static void init_once(void) {
    tocl_fork_note_used(); /* from here on a forked child must not call the driver */
    g_status = discover();
    if (g_status != TOCL_OK) {
        snprintf(g_msg, sizeof g_msg, "%s", tocl_last_error());
        g_count = 0;
    }
}

tocl_status tocl_init(void) {
    TOCL_TRY(tocl_fork_check());
    pthread_once(&g_once, init_once);
    if (g_status != TOCL_OK)
        return tocl_fail(g_status, "%s", g_msg); /* the message is thread-local: set it here too */
    return TOCL_OK;
}

int tocl_device_count(void) {
    if (tocl_in_bad_fork())
        return g_count; /* known from the parent's discovery; asks no driver */
    return tocl_init() == TOCL_OK ? g_count : 0;
}

tocl_status tocl_device_check(int dev) {
    TOCL_TRY(tocl_init());
    if (g_count == 0)
        return tocl_fail(TOCL_E_NO_DEVICE,
                         "no OpenCL device found: install an OpenCL driver, e.g. `apt-get install "
                         "pocl-opencl-icd` for CPUs, or the GPU vendor's OpenCL driver%s",
                         tocl_env("TORCH_OCL_DEVICES") ? " (or check TORCH_OCL_DEVICES)" : "");
    if (dev < 0 || dev >= g_count)
        return tocl_fail(TOCL_E_NO_DEVICE, "OpenCL device index %d is out of range: valid indices are 0..%d (%d device%s)",
                         dev, g_count - 1, g_count, g_count == 1 ? "" : "s");
    return TOCL_OK;
}

tocl_status tocl_device_props_get(int dev, tocl_device_props *out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_device_props_get: out is NULL");
    TOCL_TRY(tocl_device_check(dev));
    *out = g_devs[dev].props;
    return TOCL_OK;
}

/* The internal accessors trust the caller to have checked the index. */
cl_context tocl_dev_context(int dev) { return g_devs[dev].ctx; }
cl_device_id tocl_dev_id(int dev) { return g_devs[dev].id; }
cl_platform_id tocl_dev_platform(int dev) { return g_devs[dev].plat; }
const tocl_device_props *tocl_dev_props(int dev) { return &g_devs[dev].props; }
