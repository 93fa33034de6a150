/* Shortest round-trip digits of a double (see dtoa.h). */
#include "base/dtoa.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Steele and White's free-format digit generation as Burger and
 * Dybvig give it ("Printing Floating-Point Numbers Quickly and
 * Accurately", 1996), in 128-bit integers. v = f * 2^e is scaled so that
 * r / s = v / 10^k < 1 with 10^(k-1) <= v; the digits of r / s are made one
 * at a time, with m+ and m- half the gaps to the doubles above and below
 * (as much smaller once scaled), until the digits so far, or those with
 * the last one up, lie strictly inside the rounding interval (or on its
 * bound, which reads back as v when f is even: round half to even). When
 * both do, the nearer wins, and a tie the even digit, as Python's dtoa
 * (mode 0) chooses. */
typedef unsigned __int128 u128;

int sl_shortest_digits(double v, char *digits, int *ndig, int *exp10, int *nearest)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    int be = (int)(bits >> 52 & 0x7FF);
    uint64_t f = bits & ((UINT64_C(1) << 52) - 1);
    if (be == 0x7FF || (be == 0 && f == 0))
        return 0;
    int e;
    if (be == 0) {
        e = -1074;
    } else {
        f |= UINT64_C(1) << 52;
        e = be - 1075;
    }
    int even = !(f & 1), lopsided = be > 1 && f == UINT64_C(1) << 52;
    u128 r, s, mp, mm;
    if (e >= 0) {
        if (e > 60)
            return 0;
        u128 g = (u128)1 << e;
        r = (u128)f * g * (lopsided ? 4 : 2);
        s = lopsided ? 4 : 2;
        mp = lopsided ? 2 * g : g;
        mm = g;
    } else {
        if (e < -120)
            return 0;
        r = (u128)f << (lopsided ? 2 : 1);
        s = (u128)1 << (lopsided ? 2 - e : 1 - e);
        mp = lopsided ? 2 : 1;
        mm = 1;
    }
    /* k: the least with (r + m+) / s below 10^k (reaching it when the
     * upper bound is in the interval); estimated low by at most one */
    int k = (int)ceil(log10(fabs(v)) - 1e-10);
    u128 p10 = 1;
    for (int i = 0; i < (k < 0 ? -k : k); i++) {
        if (p10 > ((u128)-1) / 20)
            return 0;
        p10 *= 10;
    }
    const u128 lim = ((u128)-1) / 32; /* room for 10 (r + m+) and 2 r */
    if (k >= 0) {
        if (s > lim / p10)
            return 0;
        s *= p10;
    } else {
        if (r > lim / p10)
            return 0;
        r *= p10;
        mp *= p10;
        mm *= p10;
    }
    if (s > lim)
        return 0;
    if (even ? r + mp >= s : r + mp > s) {
        if (s > lim / 10)
            return 0;
        s *= 10;
        k++;
    }
    int n = 0;
    for (;;) {
        r *= 10;
        mp *= 10;
        mm *= 10;
        int d = 0;
        u128 s8 = s << 3, s4 = s << 2, s2 = s << 1; /* d = r / s, one digit */
        if (r >= s8)
            r -= s8, d += 8;
        if (r >= s4)
            r -= s4, d += 4;
        if (r >= s2)
            r -= s2, d += 2;
        if (r >= s)
            r -= s, d += 1;
        int low = even ? r <= mm : r < mm;
        int high = even ? r + mp >= s : r + mp > s;
        if (!low && !high) {
            digits[n++] = (char)('0' + d);
            if (n > 17) /* (cannot happen: 17 digits always do) */
                return 0;
            continue;
        }
        /* the n digits rounded to nearest (a tie to the even digit) end in
         * d + 1 rather than d */
        u128 r2 = r << 1;
        int up = r2 > s || (r2 == s && (d & 1));
        if (nearest)
            *nearest = low && high ? 1 : high ? up : !up;
        if (low && high)
            d += up;
        else if (high)
            d++;
        digits[n++] = (char)('0' + d);
        break;
    }
    /* a final digit rounded up to 10 carries into the ones before */
    for (int i = n - 1; i > 0 && digits[i] > '9'; i--) {
        digits[i] = '0';
        digits[i - 1]++;
    }
    if (digits[0] > '9') {
        digits[0] = '1';
        k++;
    }
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = 0;
    *ndig = n;
    *exp10 = k - 1;
    return 1;
}

void sl_dtoa_put(sl_buf *b, int neg, const char *d, int n, int e, int fixed_upto, int int_dot0)
{
    char tmp[48], *o = tmp; /* (fixed_upto <= 17: at most 17 digits, a sign, a point, ".0") */
    if (neg)
        *o++ = '-';
    if (e < -4 || e >= fixed_upto) { /* d.ddde+XX */
        *o++ = d[0];
        if (n > 1) {
            *o++ = '.';
            memcpy(o, d + 1, (size_t)n - 1);
            o += n - 1;
        }
        int ax = e < 0 ? -e : e;
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        if (ax >= 100)
            *o++ = (char)('0' + ax / 100);
        *o++ = (char)('0' + ax / 10 % 10);
        *o++ = (char)('0' + ax % 10);
    } else if (e >= 0) { /* ddd.ddd, or ddd00 (".0" after it for repr) */
        for (int i = 0; i <= e; i++)
            *o++ = i < n ? d[i] : '0';
        if (n > e + 1) {
            *o++ = '.';
            memcpy(o, d + e + 1, (size_t)(n - e - 1));
            o += n - e - 1;
        } else if (int_dot0) {
            *o++ = '.';
            *o++ = '0';
        }
    } else { /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e - 1; i++)
            *o++ = '0';
        memcpy(o, d, (size_t)n);
        o += n;
    }
    sl_buf_append(b, tmp, (size_t)(o - tmp));
}
