/* tocl_ew: 2 nodes, 1 inputs, 0 scalars, 1 outputs, strided */

__kernel void tocl_ew(long n,
        __global half *o0, long o0_off,
        __global const half *i0, long i0_off,
        long size0, long size1, long size2,
        long o0_st0, long o0_st1, long o0_st2,
        long i0_st0, long i0_st1, long i0_st2)
{
    long c2 = get_global_id(0), r = get_global_id(1), row = r;
    long c1 = r % size1;
    r /= size1;
    if (c2 >= size2 || row * size2 + c2 >= n)
        return;
    long x_o0 = o0_off + c2 * o0_st2;
    long x_i0 = i0_off + c2 * i0_st2;
    x_o0 += c1 * o0_st1;
    x_i0 += c1 * i0_st1;
    x_o0 += r * o0_st0;
    x_i0 += r * i0_st0;
    float v0 = vload_half(x_i0, i0);
    float v1 = (-v0);
    vstore_half_rte(v1, x_o0, o0);
}
