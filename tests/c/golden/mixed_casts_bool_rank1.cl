/* tocl_ew: 8 nodes, 2 inputs, 1 scalars, 1 outputs, strided */

__kernel void tocl_ew(long n,
        __global uchar *o0, long o0_off,
        __global const char *i0, long i0_off,
        __global const float *i1, long i1_off,
        uchar s0,
        long size0,
        long o0_st0,
        long i0_st0,
        long i1_st0)
{
    long gid = get_global_id(0);
    if (gid >= n)
        return;
    long x_o0 = o0_off + gid * o0_st0;
    long x_i0 = i0_off + gid * i0_st0;
    long x_i1 = i1_off + gid * i1_st0;
    char v0 = i0[x_i0];
    float v1 = i1[x_i1];
    bool v2 = (s0 != 0);
    short v3 = (short)v0;
    short v4 = (short)convert_int(v1);
    short v5 = (v3 + v4);
    bool v6 = (v5 != 0);
    bool v7 = (v6 * v2);
    o0[x_o0] = (uchar)v7;
}
