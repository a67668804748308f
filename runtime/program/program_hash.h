/* program_hash.h - private: the hashes behind program cache keys and file checksums. */
#ifndef TOCL_PROGRAM_HASH_H
#define TOCL_PROGRAM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/device.h"

/* A cache key: two independent 64-bit hashes (XXH64 and MurmurHash64A) over
 * the same fields, so a collision needs both to collide at once. Neither is
 * cryptographic: the disk cache's defence against planted files is the
 * owner/mode check, not the hash. */
typedef struct tocl_program_key {
    uint64_t lo, hi;
} tocl_program_key;

#define TOCL_PROGRAM_KEY_HEX 33 /* 32 hex digits and a NUL */

uint64_t tocl_hash_xxh64(const void *data, size_t len, uint64_t seed);
uint64_t tocl_hash_murmur64a(const void *data, size_t len, uint64_t seed);

/* Key over source, options, device name, driver version, platform version,
 * device OpenCL version and TOCL_CACHE_FORMAT_VERSION. */
tocl_program_key tocl_program_key_make(const char *source, const char *options,
                                       const tocl_device_props *props);
void tocl_program_key_hex(tocl_program_key key, char out[TOCL_PROGRAM_KEY_HEX]);

#endif
