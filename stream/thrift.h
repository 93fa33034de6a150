/* Thrift compact protocol, reading only: what Parquet's footer and page
 * headers are written in (https://github.com/apache/thrift/blob/master/doc/
 * specs/thrift-compact-protocol.md).
 *
 * The reader is a cursor over a byte range. Errors are sticky: after the
 * first one (truncation, a bad type, nesting deeper than SL_THRIFT_MAX_DEPTH,
 * a list claiming more elements than bytes remain) every read returns 0 and
 * `bad` stays set with a reason and the offset, so a caller decodes a whole
 * struct and checks once. Nothing here allocates. */
#ifndef SLUICE_STREAM_THRIFT_H
#define SLUICE_STREAM_THRIFT_H

#include <stddef.h>
#include <stdint.h>

#define SL_THRIFT_MAX_DEPTH 64

/* Compact-protocol type codes (as they appear in field headers). */
enum {
    SL_TT_STOP = 0,
    SL_TT_TRUE = 1, /* in a field header: a bool field that is true; in a list: bool */
    SL_TT_FALSE = 2,
    SL_TT_BYTE = 3,
    SL_TT_I16 = 4,
    SL_TT_I32 = 5,
    SL_TT_I64 = 6,
    SL_TT_DOUBLE = 7,
    SL_TT_BINARY = 8,
    SL_TT_LIST = 9,
    SL_TT_SET = 10,
    SL_TT_MAP = 11,
    SL_TT_STRUCT = 12,
};

typedef struct sl_thrift {
    const uint8_t *start, *p, *end;
    int depth;
    int bad;         /* set on the first error */
    size_t bad_at;   /* offset from start of that error */
    const char *why; /* what it was */
    int short_input; /* the error was running out of bytes (more input may fix it) */
} sl_thrift;

void sl_thrift_init(sl_thrift *t, const void *data, size_t n);
/* Marks the reader bad (the first reason wins); returns 0. */
int sl_thrift_fail(sl_thrift *t, const char *why);
/* The same for running out of bytes. */
int sl_thrift_short(sl_thrift *t, const char *why);

/* Struct framing: begin before reading a struct's fields (depth check), end
 * after its STOP. */
void sl_thrift_struct_begin(sl_thrift *t);
void sl_thrift_struct_end(sl_thrift *t);
/* The next field header of the current struct: 1 with *id and *type set,
 * 0 at STOP or on error. *last is the previous field's id (start at 0). */
int sl_thrift_field(sl_thrift *t, int16_t *last, int16_t *id, int *type);

int64_t sl_thrift_i64(sl_thrift *t); /* zigzag varint (i16, i32, i64) */
int32_t sl_thrift_i32(sl_thrift *t); /* the same, range-checked */
int sl_thrift_byte(sl_thrift *t);
double sl_thrift_double(sl_thrift *t);
/* A field header's bool (type TRUE/FALSE), or a list element's (one byte). */
int sl_thrift_bool(sl_thrift *t, int type);
/* binary/string: pointer into the input and length. */
const uint8_t *sl_thrift_binary(sl_thrift *t, size_t *n);
/* List or set header: element type and count (at most the bytes left). */
uint32_t sl_thrift_list(sl_thrift *t, int *elem_type);
/* Skips a value of this type (nested values included). */
void sl_thrift_skip(sl_thrift *t, int type);

/* Bytes consumed so far. */
static inline size_t sl_thrift_pos(const sl_thrift *t)
{
    return (size_t)(t->p - t->start);
}

#endif
