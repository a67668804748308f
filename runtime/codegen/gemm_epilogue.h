/* gemm_epilogue.h - the GEMM activations rendered from the IR op table
 * (gemm_epilogue.c), for kernels/gemm.cl. */
#ifndef TOCL_GEMM_EPILOGUE_H
#define TOCL_GEMM_EPILOGUE_H

#include <stddef.h>

#include "tocl/status.h"

/* OpenCL C defining gemm_act(acc_t, int act) and gemm_act_v(accv_t, int
 * act), to be placed where gemm.cl has its TOCL_GENERATED marker. */
tocl_status tocl_gemm_epilogue_render(char *buf, size_t cap);

#endif
