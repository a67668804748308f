/* amx_tiles.h - Intel AMX tiles from OpenCL C (kernels/gemm.cl and
 * kernels/conv_amx.cl, built only where runtime/ops/gemm_amx.c found them
 * working). OpenCL C has no matrix instructions; clang's x86 builtins reach
 * them from functions marked with the target features, which PoCL's own CPU
 * target (picked from the host's model name) may lack. Tile loads and
 * stores take flat addresses: on a CPU device every address space is one. */
#ifndef TOCL_AMX_TILES_H
#define TOCL_AMX_TILES_H

#define AMX_TILE 512 /* bfloat16 elements of one 16 x 32 tile (1 KiB) */
#define AMX_PTR(x) ((void *)(size_t)(x))

/* The palette: eight tiles of 16 rows x 64 bytes. Per thread; set at the
 * start of every work-group (PoCL may run it on any of its threads). */
__attribute__((target("amx-tile"))) static void amx_begin(void)
{
    uchar cfg[64];
    for (int i = 0; i < 64; i++)
        cfg[i] = 0;
    cfg[0] = 1;
    for (int t = 0; t < 8; t++) {
        cfg[16 + 2 * t] = 64;
        cfg[48 + t] = 16;
    }
    __builtin_ia32_tile_loadconfig(cfg);
}

/* Tiles 0-3 hold the sums of a 32 x 32 block (rows 0-15 | 16-31 x columns
 * 0-15 | 16-31): from zero (first) or from the floats at `sums`, rows `ps`
 * bytes apart. */
__attribute__((target("amx-tile"))) static void amx_sums_load(void *sums, long ps, int first)
{
    if (first) {
        __builtin_ia32_tilezero(0);
        __builtin_ia32_tilezero(1);
        __builtin_ia32_tilezero(2);
        __builtin_ia32_tilezero(3);
    } else {
        __builtin_ia32_tileloadd64(0, sums, ps);
        __builtin_ia32_tileloadd64(1, (char *)sums + 64, ps);
        __builtin_ia32_tileloadd64(2, (char *)sums + 16 * ps, ps);
        __builtin_ia32_tileloadd64(3, (char *)sums + 16 * ps + 64, ps);
    }
}

/* Tiles 0-3 to the floats at `sums`, rows `ps` bytes apart. */
__attribute__((target("amx-tile"))) static void amx_sums_store(void *sums, long ps)
{
    __builtin_ia32_tilestored64(0, sums, ps);
    __builtin_ia32_tilestored64(1, (char *)sums + 64, ps);
    __builtin_ia32_tilestored64(2, (char *)sums + 16 * ps, ps);
    __builtin_ia32_tilestored64(3, (char *)sums + 16 * ps + 64, ps);
}

/* Tiles back to their initial state: the OS then need not save them. */
__attribute__((target("amx-tile"))) static void amx_end(void) { __builtin_ia32_tilerelease(); }

#endif
