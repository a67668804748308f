/* kernel_source.h - lookup of embedded kernel families (kernels/<name>.cl). */
#ifndef TOCL_KERNEL_SOURCE_H
#define TOCL_KERNEL_SOURCE_H
#include "tocl/status.h"
tocl_status tocl_kernel_source(const char *name, const char **out);
#endif
