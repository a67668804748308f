/* fft_config.h - the device settings of the FFT kernel (fft_plan.c), and
 * their override, with which tests run a CPU driver with a GPU's. */
#ifndef TOCL_FFT_CONFIG_H
#define TOCL_FFT_CONFIG_H

#include <stdint.h>

#include "tocl/dtype.h"

/* How the kernel runs on (dev, dtype): transforms per work-group in SIMD
 * lanes (CPUs), work-items per group (at most: GPUs use fewer for short
 * lengths), local memory per group, the largest power-of-two radix. */
typedef struct fft_config {
    int lanes, group, big;
    uint64_t local_bytes;
} fft_config;

void fft_config_get(int dev, tocl_dtype dt, fft_config *c);

/* Tests: run every device as if its settings were *c (NULL: each its
 * own), so a CPU driver exercises the GPU settings. Not thread-safe. */
void fft_config_override(const fft_config *c);

#endif
