/* Python json.dumps conventions for typed values (see pyjson.h). */
#include "stream/pyjson.h"

#include "base/dtoa.h"
#include "base/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sl_pyjson_float16(sl_buf *b, uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    sl_pyjson_float(b, s ? -v : v);
}

void sl_pyjson_i64(sl_buf *b, int64_t v)
{
    sl_json_put_int(b, v); /* (Python's int and JSON's integer read the same) */
}

void sl_pyjson_u64(sl_buf *b, uint64_t u)
{
    char tmp[24];
    char *q = tmp + sizeof tmp;
    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    sl_buf_append(b, q, (size_t)(tmp + sizeof tmp - q));
}

/* p significant digits of a (> 0) that read back as a, if there are any:
 * the correctly rounded ones, or else the next p-digit number up. (Next to
 * a power of two the doubles below a are closer together than those
 * above, so the nearest p-digit number can lie below a and read back as
 * another double where the one above it reads back as a: 2^-24 is
 * 5.960464477539063e-08, as Python's repr writes it; the one below is no
 * closer then, and elsewhere the nearest is the best.) digits: the p digits
 * without the point; *e: the decimal exponent of the first. */
static int digits_p(double a, int p, char *digits, int *e)
{
    char tmp[48];
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, a);
    const char *s = tmp;
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            digits[n++] = *s;
    digits[n] = 0;
    *e = atoi(s + 1);
    double r = strtod(tmp, NULL);
    if (r == a)
        return 1;
    if (r > a)
        return 0;
    int k = n - 1; /* one unit up in the last digit */
    while (k >= 0 && digits[k] == '9')
        digits[k--] = '0';
    if (k < 0)
        digits[0] = '1', ++*e; /* 9.99 up: 10.0, so 1.00 a power of ten up */
    else
        digits[k]++;
    snprintf(tmp, sizeof tmp, "%c.%se%d", digits[0], digits + 1, *e);
    return strtod(tmp, NULL) == a;
}

/* The shortest digits that read back as v, as Python's repr finds them:
 * the smallest p for which digits_p finds p digits. The property is
 * monotone in p (p digits are also p + 1 digits), so p is found by
 * bisection; 17 always do. digits: without the point or trailing zeros;
 * returns the decimal exponent of the first digit. */
static int shortest_slow(double v, char *digits, int *ndig)
{
    double a = fabs(v);
    int lo = 1, hi = 17, e;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (digits_p(a, mid, digits, &e))
            hi = mid;
        else
            lo = mid + 1;
    }
    digits_p(a, lo, digits, &e);
    int n = (int)strlen(digits);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = 0;
    *ndig = n;
    return e;
}

static int shortest(double v, char *digits, int *ndig, int slow)
{
    int e;
    if (!slow && sl_shortest_digits(v, digits, ndig, &e, NULL))
        return e;
    return shortest_slow(v, digits, ndig);
}

static void put_float(sl_buf *b, double v, int slow)
{
    if (isnan(v)) {
        sl_buf_puts(b, "NaN");
        return;
    }
    if (isinf(v)) {
        sl_buf_puts(b, v < 0 ? "-Infinity" : "Infinity");
        return;
    }
    if (v == 0) {
        sl_buf_puts(b, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char d[24];
    int n;
    int e = shortest(v, d, &n, slow);
    sl_dtoa_put(b, v < 0, d, n, e, 16, 1); /* repr's layout */
}

void sl_pyjson_float(sl_buf *b, double v)
{
    put_float(b, v, 0);
}

void sl_pyjson_float_ref(sl_buf *b, double v)
{
    put_float(b, v, 1);
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's
 * days_from_civil inverse). */
static void civil(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static void put_date(sl_buf *b, int64_t days)
{
    int64_t y;
    int m, d;
    civil(days, &y, &m, &d);
    sl_buf_printf(b, "%04lld-%02d-%02d", (long long)y, m, d);
}

void sl_pyjson_date(sl_buf *b, int64_t days)
{
    sl_buf_putc(b, '"');
    put_date(b, days);
    sl_buf_putc(b, '"');
}

/* HH:MM:SS[.ffffff | .fffffffff] of ns nanoseconds into a day. */
static void put_clock(sl_buf *b, int64_t ns)
{
    int64_t s = ns / 1000000000, frac = ns % 1000000000;
    sl_buf_printf(b, "%02d:%02d:%02d", (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60));
    if (frac % 1000)
        sl_buf_printf(b, ".%09lld", (long long)frac);
    else if (frac)
        sl_buf_printf(b, ".%06lld", (long long)(frac / 1000));
}

static const int64_t unit_ns[] = {1, 1000000, 1000, 1}; /* by PQ_UNIT_*: ms, us, ns */

int sl_pyjson_date_ok(int64_t days)
{
    return days >= -719162 && days <= 2932896; /* 0001-01-01 to 9999-12-31 */
}

/* v's day since the epoch and the units into it, floored (no product that
 * can overflow near INT64_MIN) */
static int64_t split_day(int64_t v, int unit, int64_t *rem)
{
    int64_t per_day = 86400 * (1000000000 / unit_ns[unit]);
    int64_t days = v / per_day;
    *rem = v % per_day;
    if (*rem < 0)
        days--, *rem += per_day;
    return days;
}

int sl_pyjson_timestamp_ok(int64_t v, int unit)
{
    int64_t rem;
    return sl_pyjson_date_ok(split_day(v, unit, &rem));
}

void sl_pyjson_timestamp(sl_buf *b, int64_t v, int unit, int utc)
{
    int64_t rem, days = split_day(v, unit, &rem);
    sl_buf_putc(b, '"');
    put_date(b, days);
    sl_buf_putc(b, 'T');
    put_clock(b, rem * unit_ns[unit]);
    if (utc)
        sl_buf_puts(b, "+00:00");
    sl_buf_putc(b, '"');
}

int sl_pyjson_timestamp_tz(sl_buf *b, int64_t v, int unit, int utc, int tzoff)
{
    static const int64_t per_min[] = {0, 60000, 60000000, INT64_C(60000000000)};
    int64_t local = v;
    if (tzoff && __builtin_add_overflow(v, (int64_t)tzoff * per_min[unit], &local))
        return -1;
    if (!sl_pyjson_timestamp_ok(v, unit) || !sl_pyjson_timestamp_ok(local, unit))
        return -1;
    if (!tzoff) {
        sl_pyjson_timestamp(b, v, unit, utc);
        return 0;
    }
    sl_pyjson_timestamp(b, local, unit, 0);
    b->len--; /* the closing quote */
    int m = tzoff < 0 ? -tzoff : tzoff;
    sl_buf_printf(b, "%c%02d:%02d\"", tzoff < 0 ? '-' : '+', m / 60, m % 60);
    return 0;
}

int sl_pyjson_time_ok(int64_t v, int unit)
{
    return v >= 0 && v < 86400 * (1000000000 / unit_ns[unit]);
}

void sl_pyjson_time(sl_buf *b, int64_t v, int unit)
{
    int64_t ns = v * unit_ns[unit];
    sl_buf_putc(b, '"');
    put_clock(b, ns - ns % 1000); /* datetime.time holds microseconds: pyarrow drops the rest */
    sl_buf_putc(b, '"');
}

void sl_pyjson_decimal(sl_buf *b, uint64_t hi, uint64_t lo, int scale)
{
    uint64_t limb[2] = {lo, hi};
    sl_pyjson_decimal_wide(b, limb, 2, scale);
}

void sl_pyjson_decimal_wide(sl_buf *b, const uint64_t *limb, int nl, int scale)
{
    uint64_t u[SL_PYJSON_DEC_LIMBS];
    int neg = (int64_t)limb[nl - 1] < 0;
    /* the magnitude: the two's complement negated, limb by limb */
    for (int i = 0, carry = 1; i < nl; i++) {
        u[i] = neg ? ~limb[i] + (uint64_t)carry : limb[i];
        carry = neg && carry && u[i] == 0;
    }
    /* its digits, 19 at a time from the lowest: u divided by 10^19 */
    const uint64_t d19 = UINT64_C(10000000000000000000);
    char digits[SL_PYJSON_DEC_LIMBS * 20 + 20];
    int n = 0, top = nl; /* u[top..] are zero */
    while (top > 0 && !u[top - 1])
        top--;
    for (;;) {
        unsigned __int128 rem = 0;
        for (int i = top - 1; i >= 0; i--) {
            unsigned __int128 cur = rem << 64 | u[i];
            u[i] = (uint64_t)(cur / d19);
            rem = cur % d19;
        }
        uint64_t r = (uint64_t)rem;
        while (top > 0 && !u[top - 1])
            top--;
        for (int k = 0; k < 19 && (r || top); k++) { /* (leading zeros only below a higher chunk) */
            digits[n++] = (char)('0' + (int)(r % 10));
            r /= 10;
        }
        if (!top)
            break;
    }
    if (!n)
        digits[n++] = '0';
    for (int i = 0; i < n / 2; i++) {
        char t = digits[i];
        digits[i] = digits[n - 1 - i];
        digits[n - 1 - i] = t;
    }
    /* Python's Decimal.__str__ (the to-sci-string rules) */
    int exp = -scale;
    int left = exp + n; /* digits left of the point */
    int dot = exp <= 0 && left > -6 ? left : 1;
    sl_buf_putc(b, '"');
    if (neg)
        sl_buf_putc(b, '-');
    if (dot <= 0) {
        sl_buf_puts(b, "0.");
        for (int i = 0; i < -dot; i++)
            sl_buf_putc(b, '0');
        sl_buf_append(b, digits, (size_t)n);
    } else if (dot >= n) {
        sl_buf_append(b, digits, (size_t)n);
        for (int i = n; i < dot; i++)
            sl_buf_putc(b, '0');
    } else {
        sl_buf_append(b, digits, (size_t)dot);
        sl_buf_putc(b, '.');
        sl_buf_append(b, digits + dot, (size_t)(n - dot));
    }
    if (left != dot)
        sl_buf_printf(b, "E%+d", left - dot);
    sl_buf_putc(b, '"');
}

void sl_pyjson_base64(sl_buf *b, const uint8_t *p, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    sl_buf_reserve(b, (n + 2) / 3 * 4 + 2);
    sl_buf_putc(b, '"');
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        char q[4] = {t[v >> 18], t[v >> 12 & 63], t[v >> 6 & 63], t[v & 63]};
        sl_buf_append(b, q, 4);
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        char q[4] = {t[v >> 18], t[v >> 12 & 63], '=', '='};
        sl_buf_append(b, q, 4);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        char q[4] = {t[v >> 18], t[v >> 12 & 63], t[v >> 6 & 63], '='};
        sl_buf_append(b, q, 4);
    }
    sl_buf_putc(b, '"');
}

int sl_base64_decode(sl_buf *b, const char *s, size_t n)
{
    while (n && s[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return -1;
    sl_buf_reserve(b, n / 4 * 3 + 3);
    uint32_t v = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '+'             ? 62
                : c == '/'             ? 63
                                       : -1;
        if (d < 0)
            return -1;
        v = v << 6 | (uint32_t)d;
        if (++k == 4) {
            char q[3] = {(char)(v >> 16), (char)(v >> 8), (char)v};
            sl_buf_append(b, q, 3);
            v = 0, k = 0;
        }
    }
    if (k == 2) {
        char q = (char)(v >> 4);
        sl_buf_append(b, &q, 1);
    } else if (k == 3) {
        char q[2] = {(char)(v >> 10), (char)(v >> 2)};
        sl_buf_append(b, q, 2);
    }
    return 0;
}
