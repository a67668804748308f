/* tocl_ew: 1 nodes, 1 inputs, 0 scalars, 1 outputs, contiguous */

__kernel void tocl_ew(long n,
        __global float *o0, long o0_off,
        __global const half *i0, long i0_off)
{
    long gid = get_global_id(0);
    if (gid >= n)
        return;
    float v0 = vload_half(i0_off + gid, i0);
    o0[o0_off + gid] = v0;
}
