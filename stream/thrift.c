/* Thrift compact protocol reader (see thrift.h). */
#include "stream/thrift.h"
#include "base/byteorder.h"

#include <string.h>

void sl_thrift_init(sl_thrift *t, const void *data, size_t n)
{
    memset(t, 0, sizeof *t);
    t->start = t->p = data;
    t->end = t->p + n;
}

int sl_thrift_fail(sl_thrift *t, const char *why)
{
    if (!t->bad) {
        t->bad = 1;
        t->why = why;
        t->bad_at = (size_t)(t->p - t->start);
    }
    t->p = t->end; /* later reads see no bytes */
    return 0;
}

int sl_thrift_short(sl_thrift *t, const char *why)
{
    if (!t->bad)
        t->short_input = 1;
    return sl_thrift_fail(t, why);
}

static uint64_t varint(sl_thrift *t)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (t->p >= t->end) {
            sl_thrift_short(t, "truncated varint");
            return 0;
        }
        uint8_t b = *t->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    sl_thrift_fail(t, "varint longer than 10 bytes");
    return 0;
}

int64_t sl_thrift_i64(sl_thrift *t)
{
    uint64_t u = varint(t);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

int32_t sl_thrift_i32(sl_thrift *t)
{
    int64_t v = sl_thrift_i64(t);
    if (v < INT32_MIN || v > INT32_MAX) {
        sl_thrift_fail(t, "i32 out of range");
        return 0;
    }
    return (int32_t)v;
}

int sl_thrift_byte(sl_thrift *t)
{
    if (t->p >= t->end)
        return sl_thrift_short(t, "truncated byte");
    return (int8_t)*t->p++;
}

double sl_thrift_double(sl_thrift *t)
{
    if (t->end - t->p < 8) {
        sl_thrift_short(t, "truncated double");
        return 0;
    }
    uint64_t u = sl_get_le64(t->p);
    t->p += 8;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

int sl_thrift_bool(sl_thrift *t, int type)
{
    if (type == SL_TT_TRUE)
        return 1;
    if (type == SL_TT_FALSE)
        return 0;
    int b = sl_thrift_byte(t); /* list element: 1 true, 0 or 2 false */
    return b == 1;
}

const uint8_t *sl_thrift_binary(sl_thrift *t, size_t *n)
{
    uint64_t len = varint(t);
    if (len > (uint64_t)(t->end - t->p)) {
        sl_thrift_short(t, "string longer than the bytes left");
        *n = 0;
        return t->p;
    }
    const uint8_t *s = t->p;
    t->p += len;
    *n = (size_t)len;
    return s;
}

uint32_t sl_thrift_list(sl_thrift *t, int *elem_type)
{
    if (t->p >= t->end) {
        sl_thrift_short(t, "truncated list header");
        *elem_type = 0;
        return 0;
    }
    uint8_t h = *t->p++;
    *elem_type = h & 15;
    uint64_t n = h >> 4;
    if (n == 15)
        n = varint(t);
    /* every element takes at least one byte (a bool, a STOP, a length) */
    if (n > (uint64_t)(t->end - t->p)) {
        sl_thrift_short(t, "list longer than the bytes left");
        return 0;
    }
    if (*elem_type == SL_TT_STOP && n) {
        sl_thrift_fail(t, "list of a bad element type");
        return 0;
    }
    return (uint32_t)n;
}

void sl_thrift_struct_begin(sl_thrift *t)
{
    if (++t->depth > SL_THRIFT_MAX_DEPTH)
        sl_thrift_fail(t, "nesting too deep");
}

void sl_thrift_struct_end(sl_thrift *t)
{
    t->depth--;
}

int sl_thrift_field(sl_thrift *t, int16_t *last, int16_t *id, int *type)
{
    if (t->bad)
        return 0;
    if (t->p >= t->end)
        return sl_thrift_short(t, "struct without its end (truncated)");
    uint8_t h = *t->p++;
    if (h == 0)
        return 0;
    *type = h & 15;
    int delta = h >> 4;
    if (delta)
        *id = (int16_t)(*last + delta);
    else {
        int64_t v = sl_thrift_i64(t);
        if (v < INT16_MIN || v > INT16_MAX)
            return sl_thrift_fail(t, "field id out of range");
        *id = (int16_t)v;
    }
    if (*type > SL_TT_STRUCT)
        return sl_thrift_fail(t, "unknown field type");
    *last = *id;
    return !t->bad;
}

void sl_thrift_skip(sl_thrift *t, int type)
{
    switch (type) {
    case SL_TT_TRUE:
    case SL_TT_FALSE: break; /* field header bool: no payload */
    case SL_TT_BYTE: sl_thrift_byte(t); break;
    case SL_TT_I16:
    case SL_TT_I32:
    case SL_TT_I64: varint(t); break;
    case SL_TT_DOUBLE: sl_thrift_double(t); break;
    case SL_TT_BINARY: {
        size_t n;
        sl_thrift_binary(t, &n);
        break;
    }
    case SL_TT_LIST:
    case SL_TT_SET: {
        int et;
        uint32_t n = sl_thrift_list(t, &et);
        sl_thrift_struct_begin(t);
        for (uint32_t i = 0; i < n && !t->bad; i++) {
            if (et == SL_TT_TRUE || et == SL_TT_FALSE)
                sl_thrift_byte(t);
            else
                sl_thrift_skip(t, et);
        }
        sl_thrift_struct_end(t);
        break;
    }
    case SL_TT_MAP: {
        uint64_t n = varint(t);
        if (n > (uint64_t)(t->end - t->p)) {
            sl_thrift_short(t, "map longer than the bytes left");
            break;
        }
        if (!n)
            break;
        int kv = sl_thrift_byte(t) & 0xff;
        sl_thrift_struct_begin(t);
        for (uint64_t i = 0; i < n && !t->bad; i++) {
            int kt = kv >> 4, vt = kv & 15;
            if (kt == SL_TT_TRUE || kt == SL_TT_FALSE)
                sl_thrift_byte(t);
            else
                sl_thrift_skip(t, kt);
            if (vt == SL_TT_TRUE || vt == SL_TT_FALSE)
                sl_thrift_byte(t);
            else
                sl_thrift_skip(t, vt);
        }
        sl_thrift_struct_end(t);
        break;
    }
    case SL_TT_STRUCT: {
        sl_thrift_struct_begin(t);
        int16_t last = 0, id;
        int ft;
        while (sl_thrift_field(t, &last, &id, &ft))
            sl_thrift_skip(t, ft);
        sl_thrift_struct_end(t);
        break;
    }
    default: sl_thrift_fail(t, "unknown type"); break;
    }
}
