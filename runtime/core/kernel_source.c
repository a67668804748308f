/* kernel_source.c - find a kernel family's OpenCL C text: embedded at build
 * time, or read from kernels/ on disk when TORCH_OCL_KERNEL_DIR is set (a
 * development switch: edit a .cl file and rerun without rebuilding). Files
 * read from disk get their #include "x.h" lines replaced by
 * <dir>/include/x.h exactly as cmake/embed_kernels.cmake does for the
 * embedded text, so development and release sources are the same text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "core/kernel_source.h"

const char *tocl_kernel_source_embedded(const char *name); /* generated */

/* text with every `#include "name"` replaced by <dir>/include/name (one
 * level: headers in kernels/include/ do not include each other). */
static tocl_status splice_includes(const char *dir, char *text, char **out) {
    static const char tag[] = "#include \"";
    size_t cap = strlen(text) + 1, used = 0;
    char *res = malloc(cap);
    if (!res)
        return tocl_fail(TOCL_E_OOM, "out of host memory reading kernels");
    const char *p = text;
    for (;;) {
        const char *inc = strstr(p, tag);
        const char *end = inc ? strchr(inc + sizeof tag - 1, '"') : NULL;
        size_t keep = inc && end ? (size_t)(inc - p) : strlen(p);
        char *h = NULL;
        size_t hlen = 0;
        if (inc && end) {
            char path[4096];
            snprintf(path, sizeof path, "%s/include/%.*s", dir, (int)(end - inc - (sizeof tag - 1)),
                     inc + sizeof tag - 1);
            if (!(h = tocl_read_file(path, &hlen))) {
                free(res);
                return tocl_fail(TOCL_E_IO, "TORCH_OCL_KERNEL_DIR is set but %s (included by a kernel) cannot be "
                                 "read", path);
            }
        }
        if (used + keep + hlen + 1 > cap) {
            cap = (used + keep + hlen + 1) * 2;
            char *nr = realloc(res, cap);
            if (!nr) {
                free(res);
                free(h);
                return tocl_fail(TOCL_E_OOM, "out of host memory reading kernels");
            }
            res = nr;
        }
        memcpy(res + used, p, keep);
        used += keep;
        if (!h)
            break;
        memcpy(res + used, h, hlen);
        used += hlen;
        free(h);
        p = end + 1;
    }
    res[used] = 0;
    *out = res;
    return TOCL_OK;
}

tocl_status tocl_kernel_source(const char *name, const char **out) {
    const char *dir = tocl_env("TORCH_OCL_KERNEL_DIR");
    if (dir) {
        char path[4096];
        size_t n;
        snprintf(path, sizeof path, "%s/%s.cl", dir, name);
        char *text = tocl_read_file(path, &n);
        if (!text)
            return tocl_fail(TOCL_E_IO, "TORCH_OCL_KERNEL_DIR is set but %s cannot be read", path);
        char *full = NULL;
        tocl_status s = splice_includes(dir, text, &full);
        free(text);
        TOCL_TRY(s);
        *out = full; /* kept for the life of the process, like the embedded text */
        return TOCL_OK;
    }
    const char *s = tocl_kernel_source_embedded(name);
    if (!s)
        return tocl_fail(TOCL_E_INTERNAL, "no embedded kernel family named '%s'", name);
    *out = s;
    return TOCL_OK;
}
