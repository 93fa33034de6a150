/* Values written as Python's json.dumps writes them (what `sluice read`
 * gives for Parquet and Arrow columns, whose reference is pyarrow's
 * Table.to_pylist() passed through json.dumps):
 *  - a float as repr(float): the shortest digits that read back to the same
 *    double, in fixed notation when the decimal exponent is in [-4, 16)
 *    ("1.0", "0.0001", "123.5") and else as "1e+16", "1.5e-07"; NaN,
 *    Infinity and -Infinity as json.dumps writes them (not strict JSON);
 *  - dates and times as ISO 8601 (datetime.isoformat()), binary as base64,
 *    decimals as str(decimal.Decimal). */
#ifndef SLUICE_STREAM_PYJSON_H
#define SLUICE_STREAM_PYJSON_H

#include <stdint.h>

#include "base/buf.h"

void sl_pyjson_float(sl_buf *b, double v);
/* The same by the reference method alone (printf's correctly rounded
 * digits, read back by strtod), which sl_pyjson_float uses outside the
 * range of its integer method; for tests. */
void sl_pyjson_float_ref(sl_buf *b, double v);
/* An IEEE half-precision float (its 16 bits) as sl_pyjson_float writes its value. */
void sl_pyjson_float16(sl_buf *b, uint16_t h);
void sl_pyjson_i64(sl_buf *b, int64_t v);
void sl_pyjson_u64(sl_buf *b, uint64_t v);
/* "YYYY-MM-DD" of a day count since 1970-01-01. */
void sl_pyjson_date(sl_buf *b, int64_t days);
/* Whether a day count is a date Python's datetime can hold (years 1 to
 * 9999, as pyarrow's to_pylist() requires: it raises OverflowError for
 * others), and whether a timestamp's day is (unit as below). */
int sl_pyjson_date_ok(int64_t days);
int sl_pyjson_timestamp_ok(int64_t v, int unit);
/* datetime.isoformat() of a count of units (1 ms, 2 us, 3 ns) since the
 * epoch: "YYYY-MM-DDTHH:MM:SS[.ffffff]" (9 fraction digits when the
 * nanoseconds are not whole microseconds, as pandas.Timestamp writes them),
 * with "+00:00" when utc. */
void sl_pyjson_timestamp(sl_buf *b, int64_t v, int unit, int utc);
/* The same in a time zone of a fixed offset, tzoff minutes east (0: as
 * sl_pyjson_timestamp): the local time with "+05:30" after it, as
 * to_pylist's aware datetime writes itself. -1 (nothing written) where the
 * time, in UTC or local, is outside the years 1 to 9999. */
int sl_pyjson_timestamp_tz(sl_buf *b, int64_t v, int unit, int utc, int tzoff);
/* time.isoformat() of a count of units since midnight (0 <= v < a day:
 * sl_pyjson_time_ok, as datetime.time takes only a time of day);
 * nanoseconds are cut to microseconds, as pyarrow's to_pylist makes a
 * datetime.time of them. */
void sl_pyjson_time(sl_buf *b, int64_t v, int unit);
int sl_pyjson_time_ok(int64_t v, int unit);
/* str(Decimal) of unscaled * 10^-scale (hi:lo a 128-bit two's complement). */
void sl_pyjson_decimal(sl_buf *b, uint64_t hi, uint64_t lo, int scale);
/* The same of a two's complement of nl 64-bit limbs, the lowest first
 * (1 <= nl <= SL_PYJSON_DEC_LIMBS: up to 256 bits, Arrow's Decimal256). */
#define SL_PYJSON_DEC_LIMBS 4
void sl_pyjson_decimal_wide(sl_buf *b, const uint64_t *limb, int nl, int scale);
/* Standard base64 with padding, quoted. */
void sl_pyjson_base64(sl_buf *b, const uint8_t *p, size_t n);
/* Standard base64 s[0..n) (padding optional) decoded into b: 0, or -1 on
 * a byte outside the alphabet or a length no encoding has. */
int sl_base64_decode(sl_buf *b, const char *s, size_t n);

#endif
