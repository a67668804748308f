/* ir_special.h - the special-function library of the op table: OpenCL C
 * functions (Bessel, gamma, error-function and zeta families, orthogonal
 * polynomials) that op rows call by name. Each is a template over %T like
 * the op table's helpers (ir_internal.h) and names the functions it calls,
 * so the renderer emits exactly the ones a graph needs, once per dtype
 * class, callees first. */
#ifndef TOCL_IR_SPECIAL_H
#define TOCL_IR_SPECIAL_H

#include <stdint.h>

/* Fragments, in an order where every callee precedes its callers. */
typedef enum tocl_sf_id {
    TOCL_SF_FASTMATH, /* tocl_exp_%T, tocl_erf_%T ...: vectorisable float32 versions */
    TOCL_SF_DEGREE,
    TOCL_SF_POLEVL,
    TOCL_SF_CHBEVL,
    TOCL_SF_RATEVL,
    TOCL_SF_LANCZOS,
    TOCL_SF_IGAM_FAC,
    TOCL_SF_IGAM_SERIES,
    TOCL_SF_IGAMC_SERIES,
    TOCL_SF_IGAM_ASYM,
    TOCL_SF_IGAMC_CF,
    TOCL_SF_IGAMMAC,
    TOCL_SF_IGAMMA,
    TOCL_SF_ZETA,
    TOCL_SF_TRIGAMMA,
    TOCL_SF_NDTRI,
    TOCL_SF_ERFCX_Y100,
    TOCL_SF_ERFCX,
    TOCL_SF_LOG_NDTR,
    TOCL_SF_I0,
    TOCL_SF_I0E,
    TOCL_SF_I1,
    TOCL_SF_I1E,
    TOCL_SF_BESSEL_J0,
    TOCL_SF_BESSEL_J1,
    TOCL_SF_BESSEL_Y0,
    TOCL_SF_BESSEL_Y1,
    TOCL_SF_MODIFIED_BESSEL_I0,
    TOCL_SF_MODIFIED_BESSEL_I1,
    TOCL_SF_MODIFIED_BESSEL_K0,
    TOCL_SF_MODIFIED_BESSEL_K1,
    TOCL_SF_SCALED_MODIFIED_BESSEL_K0,
    TOCL_SF_SCALED_MODIFIED_BESSEL_K1,
    TOCL_SF_SPHERICAL_BESSEL_J0,
    TOCL_SF_AIRY_AI,
    TOCL_SF_CHEBYSHEV_POLYNOMIAL_T,
    TOCL_SF_CHEBYSHEV_POLYNOMIAL_U,
    TOCL_SF_CHEBYSHEV_POLYNOMIAL_V,
    TOCL_SF_CHEBYSHEV_POLYNOMIAL_W,
    TOCL_SF_SHIFTED_CHEBYSHEV_POLYNOMIAL_T,
    TOCL_SF_SHIFTED_CHEBYSHEV_POLYNOMIAL_U,
    TOCL_SF_SHIFTED_CHEBYSHEV_POLYNOMIAL_V,
    TOCL_SF_SHIFTED_CHEBYSHEV_POLYNOMIAL_W,
    TOCL_SF_HERMITE_POLYNOMIAL_H,
    TOCL_SF_HERMITE_POLYNOMIAL_HE,
    TOCL_SF_LAGUERRE_POLYNOMIAL_L,
    TOCL_SF_LEGENDRE_POLYNOMIAL_P,
    TOCL_SF_COUNT
} tocl_sf_id;

#define TOCL_SF_BIT(id) (UINT64_C(1) << TOCL_SF_##id)

typedef struct tocl_sf_fragment {
    const char *name;
    const char *text; /* template: %T type, %F literal suffix */
    uint64_t needs;   /* fragments it calls (TOCL_SF_BIT) */
    const char *text_f64; /* the double class's text where it differs, or NULL */
} tocl_sf_fragment;

extern const tocl_sf_fragment tocl_sf_table[TOCL_SF_COUNT];

/* needs closed over the fragments' own calls. */
uint64_t tocl_sf_closure(uint64_t needs);

#endif
