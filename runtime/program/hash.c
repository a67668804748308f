/* hash.c - XXH64 and MurmurHash64A, and the program cache key built from both. */
#include <stdio.h>
#include <string.h>

#include "program/program_hash.h"
#include "tocl/program.h"

/* Reads go through memcpy: sources are char strings with no alignment. The
 * byte order is the host's, which is fine: a key only has to be stable on
 * the machine that wrote it (binaries are per device anyway). */
static uint64_t rd64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rd32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

#define XP1 0x9E3779B185EBCA87ULL
#define XP2 0xC2B2AE3D27D4EB4FULL
#define XP3 0x165667B19E3779F9ULL
#define XP4 0x85EBCA77C2B2AE63ULL
#define XP5 0x27D4EB2F165667C5ULL

static uint64_t xxh_round(uint64_t acc, uint64_t in) {
    acc += in * XP2;
    acc = rotl64(acc, 31);
    return acc * XP1;
}

static uint64_t xxh_merge(uint64_t acc, uint64_t v) {
    acc ^= xxh_round(0, v);
    return acc * XP1 + XP4;
}

uint64_t tocl_hash_xxh64(const void *data, size_t len, uint64_t seed) {
    const unsigned char *p = data, *end = p + len;
    uint64_t h;
    if (len >= 32) {
        /* Four independent lanes keep the multiplier pipelines busy. */
        uint64_t v1 = seed + XP1 + XP2, v2 = seed + XP2, v3 = seed, v4 = seed - XP1;
        const unsigned char *limit = end - 32;
        do {
            v1 = xxh_round(v1, rd64(p));
            v2 = xxh_round(v2, rd64(p + 8));
            v3 = xxh_round(v3, rd64(p + 16));
            v4 = xxh_round(v4, rd64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxh_merge(h, v1);
        h = xxh_merge(h, v2);
        h = xxh_merge(h, v3);
        h = xxh_merge(h, v4);
    } else {
        h = seed + XP5;
    }
    h += (uint64_t)len;
    for (; p + 8 <= end; p += 8) {
        h ^= xxh_round(0, rd64(p));
        h = rotl64(h, 27) * XP1 + XP4;
    }
    if (p + 4 <= end) {
        h ^= (uint64_t)rd32(p) * XP1;
        h = rotl64(h, 23) * XP2 + XP3;
        p += 4;
    }
    for (; p < end; p++) {
        h ^= (uint64_t)*p * XP5;
        h = rotl64(h, 11) * XP1;
    }
    h ^= h >> 33;
    h *= XP2;
    h ^= h >> 29;
    h *= XP3;
    h ^= h >> 32;
    return h;
}

uint64_t tocl_hash_murmur64a(const void *data, size_t len, uint64_t seed) {
    const uint64_t m = 0xC6A4A7935BD1E995ULL;
    const int r = 47;
    const unsigned char *p = data;
    uint64_t h = seed ^ ((uint64_t)len * m);
    size_t n8 = len / 8;
    for (size_t i = 0; i < n8; i++, p += 8) {
        uint64_t k = rd64(p);
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t tail = len & 7;
    if (tail) {
        for (size_t i = tail; i-- > 0;)
            h ^= (uint64_t)p[i] << (8 * i);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

/* Each field is hashed on its own, then the (length, hash) pairs are hashed
 * again: lengths make field boundaries unambiguous ("ab"+"c" != "a"+"bc"),
 * and no large buffer has to be assembled on the memory-hit path. */
enum { KEY_FIELDS = 6 };

tocl_program_key tocl_program_key_make(const char *source, const char *options,
                                       const tocl_device_props *props) {
    const char *fields[KEY_FIELDS] = {source, options ? options : "", props->name,
                                      props->driver_version, props->platform_version,
                                      props->opencl_version};
    /* Seeds differ per lane so the two lanes never see identical inputs. */
    const uint64_t seed_a = 0x746F636C5F6B6579ULL, seed_b = 0x70726F6772616D31ULL;
    uint64_t words_a[2 + 2 * KEY_FIELDS], words_b[2 + 2 * KEY_FIELDS];
    words_a[0] = words_b[0] = 0x544F434C42494E00ULL; /* domain tag "TOCLBIN" */
    words_a[1] = words_b[1] = TOCL_CACHE_FORMAT_VERSION;
    for (int i = 0; i < KEY_FIELDS; i++) {
        size_t n = strlen(fields[i]);
        words_a[2 + 2 * i] = words_b[2 + 2 * i] = (uint64_t)n;
        words_a[3 + 2 * i] = tocl_hash_xxh64(fields[i], n, seed_a);
        words_b[3 + 2 * i] = tocl_hash_murmur64a(fields[i], n, seed_b);
    }
    tocl_program_key key;
    key.lo = tocl_hash_xxh64(words_a, sizeof words_a, seed_a);
    key.hi = tocl_hash_murmur64a(words_b, sizeof words_b, seed_b);
    return key;
}

void tocl_program_key_hex(tocl_program_key key, char out[TOCL_PROGRAM_KEY_HEX]) {
    snprintf(out, TOCL_PROGRAM_KEY_HEX, "%016llx%016llx", (unsigned long long)key.hi,
             (unsigned long long)key.lo);
}
