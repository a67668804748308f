/* tocl_ew: 3 nodes, 2 inputs, 0 scalars, 1 outputs, contiguous */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void tocl_ew(long n,
        __global double *o0, long o0_off,
        __global const double *i0, long i0_off,
        __global const double *i1, long i1_off)
{
    long gid = get_global_id(0);
    if (gid >= n)
        return;
    double v0 = i0[i0_off + gid];
    double v1 = i1[i1_off + gid];
    double v2 = (v0 / v1);
    o0[o0_off + gid] = v2;
}
