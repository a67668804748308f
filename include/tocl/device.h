/* device.h - OpenCL platform and device discovery, ordering and properties. */
#ifndef TOCL_DEVICE_H
#define TOCL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tocl_device_kind {
    TOCL_DEVICE_GPU = 0,
    TOCL_DEVICE_ACCELERATOR = 1,
    TOCL_DEVICE_CPU = 2,
    TOCL_DEVICE_OTHER = 3
} tocl_device_kind;

typedef struct tocl_device_props {
    char name[256];
    char vendor[256];
    char platform_name[256];
    char platform_version[256]; /* CL_PLATFORM_VERSION */
    char driver_version[256];   /* CL_DRIVER_VERSION */
    char opencl_version[256];   /* CL_DEVICE_VERSION */
    char opencl_c_version[256]; /* CL_DEVICE_OPENCL_C_VERSION */
    tocl_device_kind kind;
    uint32_t compute_units;
    uint64_t global_mem_bytes;
    uint64_t local_mem_bytes;
    uint64_t max_alloc_bytes;   /* CL_DEVICE_MAX_MEM_ALLOC_SIZE: largest one buffer */
    uint64_t max_work_group_size;
    uint32_t mem_base_align_bytes; /* sub-buffer origin alignment, in bytes */
    int has_fp64;
    int has_fp16;
    char extensions[8192];
} tocl_device_props;

/* Discover platforms and devices once (idempotent, thread-safe).
 * Order: GPUs, then accelerators, then CPUs, then others; stable within a kind.
 * TORCH_OCL_DEVICES="1,0" or "pthread,NVIDIA" selects and orders devices by
 * index into that default order or by a case-insensitive substring of the
 * device name. Finding no device is not an error (count is 0). An OpenCL
 * failure during discovery is remembered and returned by every later call. */
tocl_status tocl_init(void);

/* Number of usable devices (calls tocl_init; 0 on failure or none). */
int tocl_device_count(void);

/* TOCL_OK if dev is usable; otherwise TOCL_E_NO_DEVICE with a message that
 * says either how to install a driver (no devices at all: e.g.
 * "apt-get install pocl-opencl-icd") or the valid index range. */
tocl_status tocl_device_check(int dev);

tocl_status tocl_device_props_get(int dev, tocl_device_props *out);

#ifdef __cplusplus
}
#endif
#endif
