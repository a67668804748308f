/* tocl_ew: 3 nodes, 2 inputs, 0 scalars, 1 outputs, strided */

__kernel void tocl_ew(long n,
        __global int *o0, long o0_off,
        __global const int *i0, long i0_off,
        __global const int *i1, long i1_off,
        long size0, long size1,
        long o0_st0, long o0_st1,
        long i0_st0, long i0_st1,
        long i1_st0, long i1_st1)
{
    long c1 = get_global_id(0), r = get_global_id(1);
    if (c1 >= size1 || r * size1 + c1 >= n)
        return;
    long x_o0 = o0_off + c1 * o0_st1;
    long x_i0 = i0_off + c1 * i0_st1;
    long x_i1 = i1_off + c1 * i1_st1;
    x_o0 += r * o0_st0;
    x_i0 += r * i0_st0;
    x_i1 += r * i1_st0;
    int v0 = i0[x_i0];
    int v1 = i1[x_i1];
    int v2 = (v0 * v1);
    o0[x_o0] = v2;
}
