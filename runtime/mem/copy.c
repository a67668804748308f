/* copy.c - raw copies between host and device addresses, device to device,
 * and pattern fills, on a given stream. */
#include <inttypes.h>
#include <stdlib.h>

#include "mem_impl.h"
#include "queue/trace.h"

/* Staging chunk for copies between devices of different platforms: big
 * enough to amortise the two host waits per chunk, small enough not to
 * double a huge tensor's footprint in host memory. */
#define STAGE_CHUNK ((size_t)64 << 20)

/* A queue can only touch buffers of its own context. */
static tocl_status reachable(int dev, int buf_dev, tocl_addr addr, const char *what) {
    if (tocl_dev_context(dev) == tocl_dev_context(buf_dev))
        return TOCL_OK;
    return tocl_fail(TOCL_E_INVALID,
                     "%s 0x%" PRIx64 " is on OpenCL device %d, which belongs to another platform than device %d "
                     "running the copy; copy between platforms with tocl_copy_d2d on the destination's device",
                     what, addr, buf_dev, dev);
}

/* Async only from pinned memory: pageable memory may be freed or reused as
 * soon as the call returns, so PyTorch copies it synchronously. */
static int can_async(const void *host, size_t nbytes, int blocking) {
    return !blocking && tocl_host_is_pinned(host) && tocl_host_is_pinned((const char *)host + nbytes - 1);
}

tocl_status tocl_copy_h2d(int dev, int stream, tocl_addr dst, const void *src, size_t nbytes, int blocking) {
    if (nbytes == 0)
        return TOCL_OK;
    if (!src)
        return tocl_fail(TOCL_E_INVALID, "tocl_copy_h2d: source host pointer is NULL for %zu bytes", nbytes);
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    int bdev;
    cl_mem buf;
    size_t off;
    TOCL_TRY(mem_resolve_range(dst, nbytes, "destination", &bdev, &buf, &off));
    TOCL_TRY(reachable(dev, bdev, dst, "destination"));
    int async = can_async(src, nbytes, blocking);
    cl_event ev, *evp = tocl_trace_slot(&ev);
    cl_int err = clEnqueueWriteBuffer(q, buf, async ? CL_FALSE : CL_TRUE, off, nbytes, src, 0, NULL, evp);
    TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_COPY_H2D, dev, stream, "Memcpy HtoD", nbytes);
    TOCL_CL_TRY(err, "clEnqueueWriteBuffer (host to device copy)");
    if (async)
        TOCL_TRY(tocl_host_record_use(src, dev, stream));
    return TOCL_OK;
}

tocl_status tocl_copy_d2h(int dev, int stream, void *dst, tocl_addr src, size_t nbytes, int blocking) {
    if (nbytes == 0)
        return TOCL_OK;
    if (!dst)
        return tocl_fail(TOCL_E_INVALID, "tocl_copy_d2h: destination host pointer is NULL for %zu bytes", nbytes);
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    int bdev;
    cl_mem buf;
    size_t off;
    TOCL_TRY(mem_resolve_range(src, nbytes, "source", &bdev, &buf, &off));
    TOCL_TRY(reachable(dev, bdev, src, "source"));
    int async = can_async(dst, nbytes, blocking);
    cl_event ev, *evp = tocl_trace_slot(&ev);
    cl_int err = clEnqueueReadBuffer(q, buf, async ? CL_FALSE : CL_TRUE, off, nbytes, dst, 0, NULL, evp);
    TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_COPY_D2H, dev, stream, "Memcpy DtoH", nbytes);
    TOCL_CL_TRY(err, "clEnqueueReadBuffer (device to host copy)");
    if (async)
        return tocl_host_record_use(dst, dev, stream);
    return tocl_deferred_collect(dev, stream, 1); /* the host waited: a replay's bad index fails here */
}

tocl_status tocl_copy_flag_later(int dev, int stream, tocl_addr src) {
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    int bdev;
    cl_mem buf;
    size_t off;
    TOCL_TRY(mem_resolve_range(src, 2 * sizeof(int64_t), "flag", &bdev, &buf, &off));
    TOCL_TRY(reachable(dev, bdev, src, "flag"));
    return tocl_deferred_read(dev, stream, q, buf, off, 2 * sizeof(int64_t), 0, 0, 0);
}

/* Between platforms no queue sees both buffers: read a chunk to the host on
 * the source device's current stream, write it on (dev, stream). */
static tocl_status copy_staged(int dev, cl_command_queue q, cl_mem dbuf, size_t doff, int sdev, cl_mem sbuf,
                               size_t soff, size_t nbytes) {
    cl_command_queue sq;
    TOCL_TRY(tocl_queue_get(sdev, tocl_stream_current(sdev), &sq));
    size_t chunk = nbytes < STAGE_CHUNK ? nbytes : STAGE_CHUNK;
    char *tmp = malloc(chunk);
    if (!tmp)
        return tocl_fail(TOCL_E_OOM, "out of host memory staging a %zu-byte copy between OpenCL devices %d and %d",
                         nbytes, sdev, dev);
    cl_int err = CL_SUCCESS;
    const char *what = "";
    for (size_t done = 0; done < nbytes && err == CL_SUCCESS; done += chunk) {
        size_t n = nbytes - done < chunk ? nbytes - done : chunk;
        what = "clEnqueueReadBuffer (staged device to device copy)";
        err = clEnqueueReadBuffer(sq, sbuf, CL_TRUE, soff + done, n, tmp, 0, NULL, NULL);
        if (err == CL_SUCCESS) {
            what = "clEnqueueWriteBuffer (staged device to device copy)";
            err = clEnqueueWriteBuffer(q, dbuf, CL_TRUE, doff + done, n, tmp, 0, NULL, NULL);
        }
    }
    free(tmp);
    TOCL_CL_TRY(err, what);
    return TOCL_OK;
}

/* clEnqueueCopyBuffer refuses overlapping ranges of one buffer; go through a
 * temporary block, as memmove would. */
static tocl_status copy_overlapping(int dev, int stream, cl_command_queue q, cl_mem buf, size_t doff, size_t soff,
                                    size_t nbytes) {
    tocl_addr tmp;
    TOCL_TRY(tocl_mem_alloc(dev, nbytes, &tmp));
    tocl_status s = TOCL_OK;
    if (stream != tocl_stream_current(dev))
        s = tocl_mem_record_stream(tmp, stream);
    int tdev;
    cl_mem tbuf;
    size_t toff;
    if (s == TOCL_OK)
        s = mem_resolve_range(tmp, nbytes, "temporary", &tdev, &tbuf, &toff);
    cl_int err = CL_SUCCESS;
    cl_event ev, *evp = tocl_trace_slot(&ev);
    if (s == TOCL_OK) {
        err = clEnqueueCopyBuffer(q, buf, tbuf, soff, toff, nbytes, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_COPY_D2D, dev, stream, "Memcpy DtoD", nbytes);
    }
    if (s == TOCL_OK && err == CL_SUCCESS) {
        err = clEnqueueCopyBuffer(q, tbuf, buf, toff, doff, nbytes, 0, NULL, evp);
        TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_COPY_D2D, dev, stream, "Memcpy DtoD", nbytes);
    }
    tocl_status fs = tocl_mem_free(tmp);
    TOCL_TRY(s);
    TOCL_CL_TRY(err, "clEnqueueCopyBuffer (overlapping device copy)");
    return fs;
}

tocl_status tocl_copy_d2d(int dev, int stream, tocl_addr dst, tocl_addr src, size_t nbytes) {
    if (nbytes == 0)
        return TOCL_OK;
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    int ddev, sdev;
    cl_mem dbuf, sbuf;
    size_t doff, soff;
    TOCL_TRY(mem_resolve_range(dst, nbytes, "destination", &ddev, &dbuf, &doff));
    TOCL_TRY(mem_resolve_range(src, nbytes, "source", &sdev, &sbuf, &soff));
    TOCL_TRY(reachable(dev, ddev, dst, "destination"));
    if (tocl_dev_context(sdev) != tocl_dev_context(dev))
        return copy_staged(dev, q, dbuf, doff, sdev, sbuf, soff, nbytes);
    /* Same context, other device: the source device's queue is not ordered
     * with ours. Our copy waits for its pending writes, and its later work
     * waits for our copy (PyTorch orders both streams for peer copies). */
    int sstream = tocl_stream_current(sdev);
    if (sdev != dev)
        TOCL_TRY(tocl_stream_wait_stream(dev, stream, sdev, sstream));
    if (dbuf == sbuf && doff < soff + nbytes && soff < doff + nbytes) {
        if (doff == soff)
            return TOCL_OK; /* copying a range onto itself */
        return copy_overlapping(dev, stream, q, dbuf, doff, soff, nbytes);
    }
    cl_event ev, *evp = tocl_trace_slot(&ev);
    cl_int err = clEnqueueCopyBuffer(q, sbuf, dbuf, soff, doff, nbytes, 0, NULL, evp);
    TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_COPY_D2D, dev, stream, "Memcpy DtoD", nbytes);
    TOCL_CL_TRY(err, "clEnqueueCopyBuffer (device to device copy)");
    if (sdev != dev)
        TOCL_TRY(tocl_stream_wait_stream(sdev, sstream, dev, stream));
    return TOCL_OK;
}

tocl_status tocl_mem_fill(int dev, int stream, tocl_addr dst, const void *pattern, size_t pattern_bytes,
                          size_t nbytes) {
    if (!pattern || (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8))
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_fill: the pattern must be 1, 2, 4 or 8 bytes (got %zu%s)",
                         pattern_bytes, pattern ? "" : ", NULL pattern");
    if (nbytes % pattern_bytes)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_fill: %zu bytes is not a multiple of the %zu-byte pattern",
                         nbytes, pattern_bytes);
    if (nbytes == 0)
        return TOCL_OK;
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    int bdev;
    cl_mem buf;
    size_t off;
    TOCL_TRY(mem_resolve_range(dst, nbytes, "destination", &bdev, &buf, &off));
    TOCL_TRY(reachable(dev, bdev, dst, "destination"));
    /* OpenCL requires the offset to be a multiple of the pattern size. */
    if (off % pattern_bytes)
        return tocl_fail(TOCL_E_INVALID, "tocl_mem_fill: address 0x%" PRIx64 " is not aligned to the %zu-byte pattern",
                         dst, pattern_bytes);
    cl_event ev, *evp = tocl_trace_slot(&ev);
    cl_int err = clEnqueueFillBuffer(q, buf, pattern, pattern_bytes, off, nbytes, 0, NULL, evp);
    TOCL_TRACE_KEEP(evp, err, TOCL_TRACE_FILL, dev, stream, "Memset", nbytes);
    TOCL_CL_TRY(err, "clEnqueueFillBuffer");
    return TOCL_OK;
}
