/* linalg_scalar.h - the element type of the linear algebra kernels
 * (kernels/linalg.cl, kernels/ldl.cl) and the LA_ macros that make one
 * source serve real and complex: -DLA_F64 selects double, -DLA_COMPLEX
 * makes T a (real, imaginary) pair whose arithmetic differs from the real
 * one only through these macros; R is always the real type. IX / IV
 * address the strided operands of linalg_params.h. */
#ifndef TOCL_LINALG_SCALAR_H
#define TOCL_LINALG_SCALAR_H
#ifdef LA_F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double R;
typedef double2 R2;
#define LA_EPS DBL_EPSILON
#else
typedef float R;
typedef float2 R2;
#define LA_EPS FLT_EPSILON
#endif

#ifdef LA_COMPLEX
typedef R2 T;
#define LA_RE(z) ((z).x)
#define LA_IM(z) ((z).y)
#define LA_CPLX(re, im) ((T)((re), (im)))
#define LA_CONJ(z) ((T)((z).x, -(z).y))
#define LA_MUL(a, b) ((T)((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))
#define LA_ABS2(z) ((z).x * (z).x + (z).y * (z).y)
#define LA_ABS(z) hypot((z).x, (z).y)
/* |re| + |im|: the magnitude LAPACK's i?amax compares for complex pivots */
#define LA_ABS1(z) (fabs((z).x) + fabs((z).y))
#define LA_ISZERO(z) ((z).x == 0 && (z).y == 0)
#define LA_ISNAN(z) (isnan((z).x) || isnan((z).y))
/* a / b by Smith's scaling (no overflow for large |b|), as c10::complex */
inline T la_div(T a, T b)
{
    if (fabs(b.x) >= fabs(b.y)) {
        R r = b.y / b.x, d = b.x + r * b.y;
        return (T)((a.x + a.y * r) / d, (a.y - a.x * r) / d);
    }
    R r = b.x / b.y, d = b.y + r * b.x;
    return (T)((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
#define LA_DIV(a, b) la_div((a), (b))
#else
typedef R T;
#define LA_RE(z) (z)
#define LA_IM(z) ((R)0)
#define LA_CPLX(re, im) (re)
#define LA_CONJ(z) (z)
#define LA_MUL(a, b) ((a) * (b))
#define LA_ABS2(z) ((z) * (z))
#define LA_ABS(z) fabs(z)
#define LA_ABS1(z) fabs(z)
#define LA_ISZERO(z) ((z) == 0)
#define LA_ISNAN(z) isnan(z)
#define LA_DIV(a, b) ((a) / (b))
#endif
/* a real value as T; conj(z) when c (a run-time flag) is set */
#define LA_R(x) LA_CPLX((R)(x), (R)0)
#define LA_CONJ_IF(c, z) ((c) ? LA_CONJ(z) : (z))

#define IX(L, b, i, j) ((L).off + (b) * (L).bs + (i) * (L).rs + (j) * (L).cs)
#define IV(L, b, i) ((L).off + (b) * (L).bs + (i) * (L).rs)
#define LA_BAR barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

#endif
