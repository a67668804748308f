/* round_storage.h - round a float to what float16 / bfloat16 storage holds
 * (round to nearest even, NaN kept), for kernels that must compare or store
 * the value exactly as it will be read back. Shared by factory.cl,
 * philox.cl and sort.cl. */
#ifndef TOCL_ROUND_STORAGE_H
#define TOCL_ROUND_STORAGE_H

inline float tocl_round_f16(float v)
{
    ushort h;
    vstore_half_rte(v, 0, (__private half *)&h);
    return vload_half(0, (__private half *)&h);
}

inline float tocl_round_bf16(float v)
{
    uint u = as_uint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return v;
    return as_float(((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16);
}

#endif
