/* props.c - read an OpenCL device's properties into a tocl_device_props. */
#include <string.h>

#include "internal.h"

/* Used by device/discover.c only, so it is declared there, not in internal.h. */
tocl_status tocl_dev_props_read(cl_platform_id plat, cl_device_id id, tocl_device_props *p);

static void copy_truncated(char *out, size_t cap, const char *src) {
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, src, n);
    out[n] = '\0';
}

static tocl_status read_str(cl_device_id id, cl_device_info what, char *out, size_t cap, const char *name) {
    size_t len = 0;
    /* Ask for the length first: a string longer than `cap` (extensions on
     * some GPU drivers) is truncated rather than failing the whole init. */
    TOCL_CL_TRY(clGetDeviceInfo(id, what, 0, NULL, &len), name);
    char buf[16384];
    if (len > sizeof buf)
        len = sizeof buf;
    TOCL_CL_TRY(clGetDeviceInfo(id, what, len, buf, NULL), name);
    buf[len ? len - 1 : 0] = '\0';
    copy_truncated(out, cap, buf);
    return TOCL_OK;
}

static tocl_status read_plat_str(cl_platform_id plat, cl_platform_info what, char *out, size_t cap,
                                 const char *name) {
    size_t len = 0;
    TOCL_CL_TRY(clGetPlatformInfo(plat, what, 0, NULL, &len), name);
    char buf[4096];
    if (len > sizeof buf)
        len = sizeof buf;
    TOCL_CL_TRY(clGetPlatformInfo(plat, what, len, buf, NULL), name);
    buf[len ? len - 1 : 0] = '\0';
    copy_truncated(out, cap, buf);
    return TOCL_OK;
}

/* Whole-word match in the space-separated extension list, so that
 * "cl_khr_fp16" does not match a hypothetical "cl_khr_fp16_ext". */
static int has_extension(const char *list, const char *ext) {
    size_t n = strlen(ext);
    for (const char *p = strstr(list, ext); p; p = strstr(p + 1, ext)) {
        int start_ok = (p == list) || p[-1] == ' ';
        int end_ok = p[n] == '\0' || p[n] == ' ';
        if (start_ok && end_ok)
            return 1;
    }
    return 0;
}

static tocl_device_kind kind_of(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU)
        return TOCL_DEVICE_GPU;
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return TOCL_DEVICE_ACCELERATOR;
    if (t & CL_DEVICE_TYPE_CPU)
        return TOCL_DEVICE_CPU;
    return TOCL_DEVICE_OTHER;
}

tocl_status tocl_dev_props_read(cl_platform_id plat, cl_device_id id, tocl_device_props *p) {
    memset(p, 0, sizeof *p);
    TOCL_TRY(read_str(id, CL_DEVICE_NAME, p->name, sizeof p->name, "clGetDeviceInfo(CL_DEVICE_NAME)"));
    TOCL_TRY(read_str(id, CL_DEVICE_VENDOR, p->vendor, sizeof p->vendor, "clGetDeviceInfo(CL_DEVICE_VENDOR)"));
    TOCL_TRY(read_str(id, CL_DRIVER_VERSION, p->driver_version, sizeof p->driver_version,
                      "clGetDeviceInfo(CL_DRIVER_VERSION)"));
    TOCL_TRY(read_str(id, CL_DEVICE_VERSION, p->opencl_version, sizeof p->opencl_version,
                      "clGetDeviceInfo(CL_DEVICE_VERSION)"));
    TOCL_TRY(read_str(id, CL_DEVICE_OPENCL_C_VERSION, p->opencl_c_version, sizeof p->opencl_c_version,
                      "clGetDeviceInfo(CL_DEVICE_OPENCL_C_VERSION)"));
    TOCL_TRY(read_str(id, CL_DEVICE_EXTENSIONS, p->extensions, sizeof p->extensions,
                      "clGetDeviceInfo(CL_DEVICE_EXTENSIONS)"));
    TOCL_TRY(read_plat_str(plat, CL_PLATFORM_NAME, p->platform_name, sizeof p->platform_name,
                           "clGetPlatformInfo(CL_PLATFORM_NAME)"));
    TOCL_TRY(read_plat_str(plat, CL_PLATFORM_VERSION, p->platform_version, sizeof p->platform_version,
                           "clGetPlatformInfo(CL_PLATFORM_VERSION)"));

    cl_device_type type = 0;
    cl_uint cu = 0, align_bits = 0;
    cl_ulong gmem = 0, lmem = 0, maxalloc = 0;
    size_t wg = 0;
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL), "clGetDeviceInfo(CL_DEVICE_TYPE)");
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL),
                "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gmem, &gmem, NULL),
                "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)");
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL),
                "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)");
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxalloc, &maxalloc, NULL),
                "clGetDeviceInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
                "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)");
    /* CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits. */
    TOCL_CL_TRY(clGetDeviceInfo(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL),
                "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)");

    p->kind = kind_of(type);
    p->compute_units = cu;
    p->global_mem_bytes = gmem;
    p->local_mem_bytes = lmem;
    p->max_alloc_bytes = maxalloc;
    p->max_work_group_size = wg;
    p->mem_base_align_bytes = align_bits / 8;

    /* Before OpenCL 1.2 fp64 was only an extension; since 1.2 a device may
     * report it through CL_DEVICE_DOUBLE_FP_CONFIG alone. A driver that does
     * not know the query is treated as "no fp64" rather than an error. */
    cl_device_fp_config dcfg = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof dcfg, &dcfg, NULL) != CL_SUCCESS)
        dcfg = 0;
    p->has_fp64 = has_extension(p->extensions, "cl_khr_fp64") || dcfg != 0;
    p->has_fp16 = has_extension(p->extensions, "cl_khr_fp16");
    return TOCL_OK;
}

/* PoCL (the CPU driver the project is built and tested with): its
 * program builds and CPU kernels have paths of their own. */
int tocl_dev_is_pocl(int dev) {
    const tocl_device_props *p = tocl_dev_props(dev);
    return strstr(p->platform_name, "Portable Computing Language") || strstr(p->platform_version, "PoCL");
}
