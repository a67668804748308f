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

/* Tiles back to their initial state: the OS then need not save them. */
__attribute__((target("amx-tile"))) static void amx_end(void) { __builtin_ia32_tilerelease(); }

#endif
