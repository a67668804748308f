/* kernel_source.c - find a kernel family's OpenCL C text: embedded at build
 * time, or read from kernels/ on disk when TORCH_OCL_KERNEL_DIR is set (a
 * development switch: edit a .cl file and rerun without rebuilding). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "core/kernel_source.h"

const char *tocl_kernel_source_embedded(const char *name); /* generated */

tocl_status tocl_kernel_source(const char *name, const char **out) {
    const char *dir = tocl_env("TORCH_OCL_KERNEL_DIR");
    if (dir) {
        /* Note: files read this way do not resolve #include lines. */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.cl", dir, name);
        FILE *f = fopen(path, "rb");
        if (!f)
            return tocl_fail(TOCL_E_IO, "TORCH_OCL_KERNEL_DIR is set but %s cannot be opened", path);
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *text = malloc((size_t)n + 1);
        if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
            fclose(f);
            free(text);
            return tocl_fail(TOCL_E_IO, "cannot read %s", path);
        }
        fclose(f);
        text[n] = 0;
        *out = text; /* kept for the life of the process, like the embedded text */
        return TOCL_OK;
    }
    const char *s = tocl_kernel_source_embedded(name);
    if (!s)
        return tocl_fail(TOCL_E_INTERNAL, "no embedded kernel family named '%s'", name);
    *out = s;
    return TOCL_OK;
}
