/* tocl_ew: 5 nodes, 2 inputs, 1 scalars, 1 outputs, contiguous */

inline ushort tocl_f2bf(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ushort)0x7fc0;
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

__kernel void tocl_ew(long n,
        __global ushort *o0, long o0_off,
        __global const ushort *i0, long i0_off,
        __global const ushort *i1, long i1_off,
        float s0)
{
    long gid = get_global_id(0);
    if (gid >= n)
        return;
    float v0 = as_float((uint)i0[i0_off + gid] << 16);
    float v1 = as_float((uint)i1[i1_off + gid] << 16);
    float v2 = s0;
    float v3 = (v2 * v1);
    float v4 = (v0 + v3);
    o0[o0_off + gid] = tocl_f2bf(v4);
}
