/* custom_internal.h - what the parser (parse.c) and the library/launch code
 * (custom.c) of user kernels share. */
#ifndef TOCL_CUSTOM_INTERNAL_H
#define TOCL_CUSTOM_INTERNAL_H

#include "internal.h"
#include "tocl/custom.h"

/* Devices whose kernel object and limits a kernel remembers, so a launch
 * skips the kernel cache's lock and the driver's queries (about 1-2 us of
 * clGetKernelWorkGroupInfo calls on PoCL); later devices ask each time. */
#define TOCL_CUSTOM_FAST_DEVICES 16

struct tocl_kernel_entry;

struct tocl_custom_kernel {
    const tocl_custom_lib *lib;
    char name[TOCL_CUSTOM_NAME_MAX];
    int nparams;
    tocl_custom_param params[TOCL_CUSTOM_MAX_PARAMS];
    /* Filled on first use per device: entry and limits, then ready = 1
     * (release); readers load ready with acquire. */
    int ready[TOCL_CUSTOM_FAST_DEVICES];
    struct tocl_kernel_entry *entry[TOCL_CUSTOM_FAST_DEVICES];
    tocl_custom_limits limits[TOCL_CUSTOM_FAST_DEVICES];
};

struct tocl_custom_lib {
    struct tocl_custom_lib *next; /* the intern list */
    char *source, *options, *defines; /* as given: the intern key */
    char *text;                       /* what the compiler sees */
    int nkernels;
    tocl_custom_kernel *kernels;
};

/* Parse source's kernels and write the text to build (parse.c): *kernels
 * and *text are malloc'ed. TOCL_E_INVALID names what could not be read. */
tocl_status tocl_custom_parse(const char *source, const char *defines, tocl_custom_kernel **kernels, int *nkernels,
                              char **text);

#endif
