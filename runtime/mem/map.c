/* map.c - a device range handed to host code as a pointer, without a copy.
 *
 * For libraries that take host pointers (the distributed backend gives them
 * to Gloo). Offered only on CPU devices: there device memory is host memory
 * and clEnqueueMapBuffer returns the buffer itself, so a map costs nothing,
 * where a copy each way would cost two passes over the data. OpenCL leaves
 * it undefined for kernels to use a buffer while any region of it is mapped,
 * and a segment holds many tensors; on a CPU device, kernels touching other
 * regions are host threads touching disjoint memory. On other devices the
 * caller copies (TOCL_E_UNSUPPORTED says so). */
#include "mem_impl.h"
#include "tocl/device.h"

int tocl_mem_map_supported(int dev) {
    tocl_device_props p;
    return tocl_device_props_get(dev, &p) == TOCL_OK && p.kind == TOCL_DEVICE_CPU;
}

tocl_status tocl_mem_map(int dev, int stream, tocl_addr addr, size_t nbytes, tocl_map *out) {
    if (!out)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_map: out is NULL");
    out->host = NULL;
    out->buf = NULL;
    if (!tocl_mem_map_supported(dev))
        return tocl_fail(TOCL_E_UNSUPPORTED, "tocl_mem_map: device %d is not a CPU device; copy instead", dev);
    int bdev;
    cl_mem buf;
    size_t off;
    TOCL_TRY(mem_resolve_range(addr, nbytes ? nbytes : 1, "mapped range", &bdev, &buf, &off));
    if (bdev != dev)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_map: address 0x%llx is on device %d, not %d",
                         (unsigned long long)addr, bdev, dev);
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    cl_int err = CL_SUCCESS;
    /* Blocking: returns once the work queued before it on the stream is done. */
    void *p = clEnqueueMapBuffer(q, buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, off, nbytes ? nbytes : 1, 0, NULL,
                                 NULL, &err);
    TOCL_CL_TRY(err, "clEnqueueMapBuffer");
    TOCL_CL_TRY(clRetainMemObject(buf), "clRetainMemObject");
    out->host = p;
    out->buf = buf;
    out->dev = dev;
    out->stream = stream;
    return TOCL_OK;
}

tocl_status tocl_mem_unmap(tocl_map *m) {
    if (!m || !m->buf)
        return TOCL_OK;
    cl_command_queue q;
    cl_mem buf = (cl_mem)m->buf;
    m->buf = NULL;
    tocl_status s = tocl_queue_get(m->dev, m->stream, &q);
    if (s == TOCL_OK) {
        cl_event ev = NULL;
        cl_int err = clEnqueueUnmapMemObject(q, buf, m->host, 0, NULL, &ev);
        if (err == CL_SUCCESS) {
            err = clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        if (err != CL_SUCCESS)
            s = tocl_fail(TOCL_E_OPENCL, "clEnqueueUnmapMemObject failed (%d)", err);
    }
    clReleaseMemObject(buf);
    m->host = NULL;
    return s;
}
