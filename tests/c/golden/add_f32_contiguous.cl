/* tocl_ew: 3 nodes, 2 inputs, 0 scalars, 1 outputs, contiguous */

__kernel void tocl_ew(long n,
        __global float *o0, long o0_off,
        __global const float *i0, long i0_off,
        __global const float *i1, long i1_off)
{
    long gid = get_global_id(0);
    if (gid >= n)
        return;
    float v0 = i0[i0_off + gid];
    float v1 = i1[i1_off + gid];
    float v2 = (v0 + v1);
    o0[o0_off + gid] = v2;
}
