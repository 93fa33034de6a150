/* The shortest decimal digits of a double that read back as it (what
 * Python's repr and the JSON writers print), by exact integer arithmetic:
 * no printf, no strtod (each took 2-3 us a value that way).
 *
 * sl_shortest_digits(v, digits, &n, &e): for a finite v != 0 whose
 * magnitude is within about 1e-19..1e34, the digits of |v| (1 to 17, no
 * trailing zeros, NUL-terminated; digits holds 24 bytes) and the decimal
 * exponent of the first: |v| reads back from d1.d2...dn x 10^e.
 * Among the shortest strings that read back as v it is the nearest to v,
 * a tie going to the even last digit, as Python's dtoa (mode 0) chooses.
 * *nearest (when not NULL): whether they are also |v| rounded to nearest
 * at their length (ties to even), as printf's "%.*e" gives it; near a
 * power of two the shortest can be the next ones up instead.
 * Returns 1, or 0 (nothing written) for 0, NaN, infinities and
 * magnitudes outside that range, which the caller formats another way
 * (printf's digits, read back by strtod). */
#ifndef SLUICE_BASE_DTOA_H
#define SLUICE_BASE_DTOA_H

#include "base/buf.h"

int sl_shortest_digits(double v, char *digits, int *ndig, int *exp10, int *nearest);

/* The number d1.d2...dn x 10^e (n <= 17 digits, no trailing zeros; '-'
 * first when neg) as Python's repr and printf's %g write one: in fixed
 * notation when -4 <= e < fixed_upto ("0.00123", "123.5", "1200", with
 * ".0" after an integer when int_dot0), else as "1.5e-07", "1e+16" (an
 * exponent of two digits at least). repr: fixed_upto 16, int_dot0 1; %g
 * at precision P: P, 0 (fixed_upto at most 17). */
void sl_dtoa_put(sl_buf *b, int neg, const char *digits, int n, int e, int fixed_upto, int int_dot0);

#endif
