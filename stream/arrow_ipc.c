/* Arrow IPC files and streams as documents (see arrow_ipc.h).
 *
 * A file is "ARROW1\0\0", a stream of messages, a footer and "ARROW1"; a
 * stream is the messages alone. Each message is 0xFFFFFFFF (absent before
 * Arrow 0.15), a 32-bit metadata length, the metadata (a flatbuffer
 * Message) and a body. A stream is read message after message: the Schema
 * first, then DictionaryBatch and RecordBatch messages. A file is read as
 * pyarrow reads it, by its footer: the Schema there, then the messages its
 * blocks list, the dictionaries first, then the record batches in order
 * (the stream a file holds is not read: polars writes its Schema message
 * unframed).
 *
 * A record batch's body holds the buffers of its columns, depth first (a
 * validity bitmap, then offsets and/or values, by type); its columns become
 * a tree of arrays pointing into the body (or into the buffers' decompressed
 * copies). Every length and offset is checked when the batch is loaded, so
 * writing a row only reads inside its buffers; dictionary indices are
 * checked as they are used. */
#include "stream/arrow_ipc.h"
#include "base/byteorder.h"

#include <omp.h>

#include <dirent.h>
#include <lz4frame.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "base/json.h"
#include "stream/pyjson.h"
#include "stream/rowslot.h"
#include "base/utf8.h"

#define MAX_META ((uint32_t)64 << 20) /* a message's metadata */
#define MAX_DEPTH 64                  /* nesting of the schema */
#define BATCH_ROWS 4096               /* rows written at a time */
#define POOL_MAX 256                  /* decompression buffers kept for the next record batch */

/* ---- flatbuffers ---------------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    size_t n;
    int bad; /* an offset led outside the buffer */
} fb;

typedef struct {
    size_t pos, vt; /* the table and its vtable; pos 0: absent */
    unsigned vtn, tn;
} fbt;

static int fb_tab(fb *f, size_t pos, fbt *t)
{
    memset(t, 0, sizeof *t);
    if (f->n < 8 || pos < 4 || pos > f->n - 4)
        return f->bad = 1, -1;
    int64_t vt = (int64_t)pos - (int32_t)sl_get_le32(f->p + pos);
    if (vt < 0 || (uint64_t)vt > f->n - 4)
        return f->bad = 1, -1;
    unsigned vtn = sl_get_le16(f->p + vt), tn = sl_get_le16(f->p + vt + 2);
    if (vtn < 4 || (uint64_t)vt + vtn > f->n || tn < 4 || (uint64_t)pos + tn > f->n)
        return f->bad = 1, -1;
    t->pos = pos;
    t->vt = (size_t)vt;
    t->vtn = vtn;
    t->tn = tn;
    return 0;
}

/* Position of field i of t (width bytes wide), 0 when absent. */
static size_t fb_field(fb *f, const fbt *t, int i, size_t width)
{
    if (!t->pos)
        return 0;
    size_t o = 4 + 2 * (size_t)i;
    if (o + 2 > t->vtn)
        return 0;
    unsigned fo = sl_get_le16(f->p + t->vt + o);
    if (!fo)
        return 0;
    if (fo + width > t->tn) {
        f->bad = 1;
        return 0;
    }
    return t->pos + fo;
}

static int64_t fb_i64(fb *f, const fbt *t, int i, int64_t def)
{
    size_t at = fb_field(f, t, i, 8);
    return at ? (int64_t)sl_get_le64(f->p + at) : def;
}

static int32_t fb_i32(fb *f, const fbt *t, int i, int32_t def)
{
    size_t at = fb_field(f, t, i, 4);
    return at ? (int32_t)sl_get_le32(f->p + at) : def;
}

static int fb_i16(fb *f, const fbt *t, int i, int def)
{
    size_t at = fb_field(f, t, i, 2);
    return at ? (int16_t)sl_get_le16(f->p + at) : def;
}

static int fb_u8(fb *f, const fbt *t, int i, int def)
{
    size_t at = fb_field(f, t, i, 1);
    return at ? f->p[at] : def;
}

/* The table that field i refers to: 1, 0 when absent, -1 when corrupt. */
static int fb_sub(fb *f, const fbt *t, int i, fbt *out)
{
    memset(out, 0, sizeof *out);
    size_t at = fb_field(f, t, i, 4);
    if (!at)
        return 0;
    return fb_tab(f, at + sl_get_le32(f->p + at), out) < 0 ? -1 : 1;
}

/* The vector of field i: its first element's position and its count. */
static int fb_vec(fb *f, const fbt *t, int i, size_t elem, size_t *start, size_t *count)
{
    *start = *count = 0;
    size_t at = fb_field(f, t, i, 4);
    if (!at)
        return 0;
    uint64_t v = (uint64_t)at + sl_get_le32(f->p + at);
    if (v > f->n - 4)
        return f->bad = 1, -1;
    uint64_t k = sl_get_le32(f->p + v);
    if (k > (f->n - v - 4) / elem)
        return f->bad = 1, -1;
    *start = (size_t)v + 4;
    *count = (size_t)k;
    return 1;
}

static int fb_vec_tab(fb *f, size_t start, size_t k, fbt *out)
{
    size_t at = start + 4 * k;
    return fb_tab(f, at + sl_get_le32(f->p + at), out);
}

/* A string field as a malloc'd NUL-terminated copy ("" when absent). */
static char *fb_str_n(fb *f, const fbt *t, int i, size_t *len)
{
    size_t s, n;
    if (fb_vec(f, t, i, 1, &s, &n) <= 0)
        s = n = 0;
    *len = n;
    return sl_xstrndup((const char *)f->p + s, n); /* (all n bytes, NULs too) */
}

static char *fb_str(fb *f, const fbt *t, int i)
{
    size_t n;
    return fb_str_n(f, t, i, &n);
}

/* ---- schema ------------------------------------------------------------------ */

/* Schema.fbs's Type union. */
enum {
    T_NULL = 1,
    T_INT = 2,
    T_FLOAT = 3,
    T_BINARY = 4,
    T_UTF8 = 5,
    T_BOOL = 6,
    T_DECIMAL = 7,
    T_DATE = 8,
    T_TIME = 9,
    T_TIMESTAMP = 10,
    T_INTERVAL = 11,
    T_LIST = 12,
    T_STRUCT = 13,
    T_UNION = 14,
    T_FSB = 15,
    T_FSL = 16,
    T_MAP = 17,
    T_DURATION = 18,
    T_LBINARY = 19,
    T_LUTF8 = 20,
    T_LLIST = 21,
    T_REE = 22,
    T_BINARY_VIEW = 23,
    T_UTF8_VIEW = 24,
    T_LIST_VIEW = 25,
    T_LLIST_VIEW = 26,
};

static const char *const type_names[] = {
    "NONE",          "Null",      "Int",           "FloatingPoint",
    "Binary",        "Utf8",      "Bool",          "Decimal",
    "Date",          "Time",      "Timestamp",     "Interval",
    "List",          "Struct",    "Union",         "FixedSizeBinary",
    "FixedSizeList", "Map",       "Duration",      "LargeBinary",
    "LargeUtf8",     "LargeList", "RunEndEncoded", "BinaryView",
    "Utf8View",      "ListView",  "LargeListView",
};

typedef struct ar_field {
    char *name; /* NUL-terminated (a name may hold NULs: name_len) */
    size_t name_len;
    char *name_json; /* "name": */
    char *path;      /* dotted, for messages */
    int type;
    int bits, is_signed; /* Int; Time, Decimal: bit width */
    int prec;            /* FloatingPoint: 0 half, 1 single, 2 double */
    int unit;            /* Date: 0 day, 1 ms; Time, Timestamp: 0 s .. 3 ns */
    int scale;           /* Decimal */
    int width;           /* FixedSizeBinary bytes, FixedSizeList size */
    int utc;             /* Timestamp with a time zone: +00:00 (tzoff minutes east) */
    int tzoff;
    int uuid;     /* FixedSizeBinary(16) of the arrow.uuid extension */
    int bool8;    /* Int8 of the arrow.bool8 extension: to_pylist's booleans (nonzero true) */
    int dict;     /* index in sl_arrow.dicts of its dictionary, -1 none */
    int idx_bits; /* dictionary indices */
    int idx_signed;
    int nkids;
    struct ar_field *kids;
} ar_field;

/* An array of a record batch (or a dictionary): buffers point into the
 * body or into decompressed copies. */
typedef struct ar_arr {
    const ar_field *f;
    int64_t len;
    const uint8_t *valid;   /* NULL: no nulls */
    const uint8_t *b1, *b2; /* values or offsets (or indices, or views); variable-size data */
    size_t n1, n2;          /* their sizes */
    const uint8_t **vb;     /* BinaryView, Utf8View: the variadic data buffers */
    size_t *vn, nvb;        /* their sizes, their number */
    int is_index;           /* b1 holds dictionary indices */
    struct ar_arr *kids;
} ar_arr;

/* A message's memory: its body and the buffers decompressed from it. */
typedef struct {
    uint8_t *body;
    size_t body_cap;
    uint8_t **own;
    size_t *owncap; /* their capacities */
    size_t nown, cap;
} ar_mem;

typedef struct {
    ar_mem mem;
    ar_arr arr;   /* one array of the value type */
    int64_t base; /* index of its first entry in the dictionary */
} ar_chunk;

typedef struct {
    int64_t id;
    const ar_field *f; /* the field it encodes (its value type) */
    ar_chunk *chunks;  /* a dictionary and its deltas */
    size_t nchunks;
    int64_t len;
} ar_dict;

struct sl_arrow {
    sl_pq_opts o;
    char *name;
    sl_pread_fn rd;
    void *rd_ctx;
    uint64_t size;
    int kind;
    uint64_t pos, end; /* next message, end of the messages */
    /* a file: the messages its footer lists (dictionaries, then record
     * batches: the first nblock_dicts are dictionaries), the next one */
    uint64_t *blocks;
    size_t nblocks, nblock_dicts, bnext;
    sl_buf meta;      /* the current message's metadata */
    uint64_t msg_off; /* offset of the current message */
    ar_field *fields; /* the top-level columns */
    int nfields;
    ar_dict *dicts;
    int ndicts, dicts_cap;
    const ar_field *text_path[MAX_DEPTH + 1]; /* the text column: fields from the top */
    int text_depth;
    int id_col; /* -1 none */
    /* the current record batch */
    int64_t batch;      /* record batches seen (the current one is batch - 1) */
    uint64_t batch_off; /* its message's offset */
    ar_mem mem;
    /* the buffers of the record batch before (its body, the buffers its
     * compressed buffers were decompressed into), for the next batch's
     * (fresh memory faults its pages in again) */
    uint8_t *pool[POOL_MAX];
    size_t poolcap[POOL_MAX];
    int npool;
    /* the decompression contexts, made at the first compressed buffer and
     * kept (one made for each buffer allocates its tables afresh) */
    ZSTD_DStream *zs;
    LZ4F_dctx *lz;
    ar_arr *cols;
    int64_t rows, row0; /* its rows, the next one to write */
    uint64_t row_base;  /* rows of the file before it */
    int done;
    int hints_only; /* sl_arrow_schema_hints: a type this reader refuses is passed over */
    /* documents of the rows being handed out */
    sl_rowslots slots;
    size_t batch_bytes;
    uint64_t invalid, skipped;
};

int sl_arrow_sniff(const void *head, size_t n)
{
    const uint8_t *p = head;
    if (n >= 6 && !memcmp(p, "ARROW1", 6))
        return SL_ARROW_FILE;
    if (n < 16 || sl_get_le32(p) != 0xFFFFFFFFu)
        return 0;
    uint32_t len = sl_get_le32(p + 4);
    if (len < 8 || len > MAX_META)
        return 0;
    /* the root table: a Message whose header is a Schema (type 1) */
    size_t have = n - 8 < len ? n - 8 : len;
    fb f = {p + 8, have, 0};
    if (have < 8)
        return 0;
    fbt t;
    if (fb_tab(&f, sl_get_le32(p + 8), &t) < 0)
        return 0;
    int version = fb_i16(&f, &t, 0, 0);
    return !f.bad && fb_u8(&f, &t, 1, 0) == 1 && version >= 0 && version <= 4 ? SL_ARROW_STREAM : 0;
}

static void mem_free(ar_mem *m)
{
    free(m->body);
    for (size_t i = 0; i < m->nown; i++)
        free(m->own[i]);
    free(m->own);
    free(m->owncap);
    memset(m, 0, sizeof *m);
}

static uint8_t *mem_own(ar_mem *m, uint8_t *p, size_t cap)
{
    if (m->nown == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->own = sl_xrealloc(m->own, m->cap * sizeof *m->own);
        m->owncap = sl_xrealloc(m->owncap, m->cap * sizeof *m->owncap);
    }
    m->owncap[m->nown] = cap;
    return m->own[m->nown++] = p;
}

static void arr_free(ar_arr *a)
{
    free(a->vb);
    free(a->vn);
    if (a->kids) {
        for (int i = 0; i < a->f->nkids; i++)
            arr_free(&a->kids[i]);
        free(a->kids);
    }
    memset(a, 0, sizeof *a);
}

static void field_free(ar_field *f)
{
    for (int i = 0; i < f->nkids; i++)
        field_free(&f->kids[i]);
    free(f->kids);
    free(f->name);
    free(f->name_json);
    free(f->path);
}

/* A fixed offset "+HH:MM" / "-HH:MM" in minutes east, or -1. */
static int tz_offset(const char *tz)
{
    if ((tz[0] != '+' && tz[0] != '-') || strlen(tz) != 6 || tz[3] != ':')
        return INT32_MIN;
    for (int i = 1; i < 6; i++)
        if (i != 3 && (tz[i] < '0' || tz[i] > '9'))
            return INT32_MIN;
    int m = ((tz[1] - '0') * 10 + tz[2] - '0') * 60 + (tz[4] - '0') * 10 + tz[5] - '0';
    return tz[0] == '-' ? -m : m;
}

static int unsupported(sl_arrow *a, const ar_field *f, int type, sl_err *err)
{
    const char *tn = type >= 0 && type < (int)(sizeof type_names / sizeof *type_names) ? type_names[type] : NULL;
    if (tn)
        return sl_errf(err, "%s: column %s: Arrow type %s is not supported", a->name, f->path, tn);
    return sl_errf(err, "%s: column %s: unknown Arrow type %d", a->name, f->path, type);
}

/* Reads field table ft into out (and its children). */
static int build_field(sl_arrow *a, fb *f, const fbt *ft, ar_field *out, int depth, const char *prefix, sl_err *err)
{
    memset(out, 0, sizeof *out);
    out->dict = -1;
    size_t rn;
    char *raw = fb_str_n(f, ft, 0, &rn);
    if (sl_utf8_check(raw, rn) == rn) { /* a name is text; invalid UTF-8 repaired */
        out->name = raw;
        out->name_len = rn;
    } else {
        sl_buf rep = {0};
        sl_utf8_repair(&rep, raw, rn, SL_UTF8_REPLACE);
        out->name_len = rep.len;
        sl_buf_putc(&rep, 0);
        out->name = rep.data;
        free(raw);
    }
    sl_buf nm = {0};
    sl_json_put_str(&nm, out->name, out->name_len);
    sl_buf_putc(&nm, ':');
    out->name_json = nm.data;
    sl_buf path = {0};
    if (prefix && *prefix)
        sl_buf_printf(&path, "%s.%s", prefix, out->name);
    else
        sl_buf_puts(&path, out->name);
    out->path = path.data ? path.data : sl_xstrdup("");
    for (char *c = out->path; *c; c++) /* messages stay on one line */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    if (depth > MAX_DEPTH)
        return sl_errf(err, "%s: schema nested deeper than %d", a->name, MAX_DEPTH);
    int type = fb_u8(f, ft, 2, 0);
    fbt tt;
    if (fb_sub(f, ft, 3, &tt) < 0)
        goto corrupt;
    out->type = type;
    switch (type) {
    case T_NULL:
    case T_BINARY:
    case T_UTF8:
    case T_BOOL:
    case T_LIST:
    case T_STRUCT:
    case T_MAP:
    case T_LBINARY:
    case T_LUTF8:
    case T_LLIST:
    case T_BINARY_VIEW:
    case T_UTF8_VIEW: break;
    case T_INT:
        out->bits = fb_i32(f, &tt, 0, 0);
        out->is_signed = fb_u8(f, &tt, 1, 0);
        if (out->bits != 8 && out->bits != 16 && out->bits != 32 && out->bits != 64)
            return sl_errf(err, "%s: column %s: Int of %d bits", a->name, out->path, out->bits);
        break;
    case T_FLOAT:
        out->prec = fb_i16(f, &tt, 0, 0);
        if (out->prec < 0 || out->prec > 2)
            return sl_errf(err, "%s: column %s: unknown float precision %d", a->name, out->path, out->prec);
        break;
    case T_DECIMAL:
        out->scale = fb_i32(f, &tt, 1, 0);
        out->bits = fb_i32(f, &tt, 2, 128);
        if (out->bits != 32 && out->bits != 64 && out->bits != 128 && out->bits != 256)
            return sl_errf(err, "%s: column %s: Decimal of %d bits", a->name, out->path, out->bits);
        if (out->scale < -1000 || out->scale > 1000)
            return sl_errf(err, "%s: column %s: Decimal scale %d", a->name, out->path, out->scale);
        break;
    case T_DATE:
        out->unit = fb_i16(f, &tt, 0, 1);
        if (out->unit != 0 && out->unit != 1)
            return sl_errf(err, "%s: column %s: unknown date unit %d", a->name, out->path, out->unit);
        break;
    case T_TIME:
        out->unit = fb_i16(f, &tt, 0, 1);
        out->bits = fb_i32(f, &tt, 1, 32);
        if (out->unit < 0 || out->unit > 3 || out->bits != (out->unit <= 1 ? 32 : 64))
            return sl_errf(err, "%s: column %s: Time of unit %d and %d bits", a->name, out->path, out->unit, out->bits);
        break;
    case T_TIMESTAMP: {
        out->unit = fb_i16(f, &tt, 0, 0);
        if (out->unit < 0 || out->unit > 3)
            return sl_errf(err, "%s: column %s: unknown time unit %d", a->name, out->path, out->unit);
        char *tz = fb_str(f, &tt, 1);
        if (*tz) {
            out->utc = 1;
            int off = tz_offset(tz);
            out->tzoff = off == INT32_MIN ? 0 : off; /* a named zone: written in UTC (docs/read.md) */
        }
        free(tz);
        break;
    }
    case T_FSB:
        out->width = fb_i32(f, &tt, 0, 0);
        if (out->width < 0 || out->width > (1 << 24))
            return sl_errf(err, "%s: column %s: FixedSizeBinary of %d bytes", a->name, out->path, out->width);
        break;
    case T_FSL:
        out->width = fb_i32(f, &tt, 0, 0);
        if (out->width < 0 || out->width > (1 << 24))
            return sl_errf(err, "%s: column %s: FixedSizeList of %d", a->name, out->path, out->width);
        break;
    default:
        if (!a->hints_only)
            return unsupported(a, out, type, err);
    }
    /* the extensions arrow.uuid (a FixedSizeBinary(16)) and arrow.bool8 (an
     * Int8): to_pylist gives UUIDs and booleans */
    size_t ms, mn;
    if (fb_vec(f, ft, 6, 4, &ms, &mn) < 0)
        goto corrupt;
    for (size_t i = 0; i < mn; i++) {
        fbt kv;
        if (fb_vec_tab(f, ms, i, &kv) < 0)
            goto corrupt;
        char *k = fb_str(f, &kv, 0), *v = fb_str(f, &kv, 1);
        if (!strcmp(k, "ARROW:extension:name")) {
            out->uuid |= !strcmp(v, "arrow.uuid") && type == T_FSB && out->width == 16;
            out->bool8 |= !strcmp(v, "arrow.bool8") && type == T_INT && out->bits == 8 && out->is_signed;
        }
        free(k);
        free(v);
    }
    /* the dictionary encoding */
    fbt de;
    int rc = fb_sub(f, ft, 4, &de);
    if (rc < 0)
        goto corrupt;
    if (rc > 0) {
        int64_t id = fb_i64(f, &de, 0, 0);
        fbt it;
        int irc = fb_sub(f, &de, 1, &it);
        if (irc < 0)
            goto corrupt;
        out->idx_bits = irc ? fb_i32(f, &it, 0, 0) : 32;
        out->idx_signed = irc ? fb_u8(f, &it, 1, 0) : 1;
        if (out->idx_bits != 8 && out->idx_bits != 16 && out->idx_bits != 32 && out->idx_bits != 64)
            return sl_errf(err, "%s: column %s: dictionary indices of %d bits", a->name, out->path, out->idx_bits);
        for (int i = 0; i < a->ndicts; i++)
            if (a->dicts[i].id == id)
                return sl_errf(err, "%s: column %s: dictionary id %lld used twice", a->name, out->path, (long long)id);
        if (a->ndicts == a->dicts_cap) {
            a->dicts_cap = a->dicts_cap ? 2 * a->dicts_cap : 4;
            a->dicts = sl_xrealloc(a->dicts, (size_t)a->dicts_cap * sizeof *a->dicts);
        }
        out->dict = a->ndicts;
        a->dicts[a->ndicts++] = (ar_dict){.id = id};
    }
    /* the children */
    size_t cs, cn;
    if (fb_vec(f, ft, 5, 4, &cs, &cn) < 0)
        goto corrupt;
    if (cn > (1u << 20))
        return sl_errf(err, "%s: column %s: %zu children", a->name, out->path, cn);
    int want = type == T_LIST || type == T_LLIST || type == T_FSL || type == T_MAP ? 1
               : type == T_STRUCT || a->hints_only                                 ? -1
                                                                                   : 0;
    if (want >= 0 && (int)cn != want)
        return sl_errf(err, "%s: column %s: a %s with %zu children", a->name, out->path, type_names[type], cn);
    out->kids = sl_xcalloc(cn ? cn : 1, sizeof *out->kids);
    for (size_t i = 0; i < cn; i++) {
        out->nkids = (int)i + 1;
        fbt kt;
        if (fb_vec_tab(f, cs, i, &kt) < 0)
            goto corrupt;
        if (build_field(a, f, &kt, &out->kids[i], depth + 1, out->path, err) < 0)
            return -1;
    }
    if (type == T_MAP && (out->kids[0].type != T_STRUCT || out->kids[0].nkids != 2))
        return sl_errf(err, "%s: column %s: a Map whose entries are not a struct of key and value", a->name, out->path);
    if (out->dict >= 0)
        a->dicts[out->dict].f = out;
    return 0;
corrupt:
    return sl_errf(err, "%s: column %s: corrupt schema (flatbuffer offsets out of bounds)", a->name, out->path);
}

static int is_string_type(int t)
{
    return t == T_UTF8 || t == T_LUTF8 || t == T_BINARY || t == T_LBINARY || t == T_UTF8_VIEW || t == T_BINARY_VIEW;
}

/* Whether a field's whole name is s[0..n) (a name holding a NUL is not its
 * part before the NUL) */
static int name_is(const ar_field *f, const char *s, size_t n)
{
    return f->name_len == n && !memcmp(f->name, s, n);
}

/* Finds the text column along the dotted path `field` below the fields
 * fs[0, n) (a name holding dots is matched whole first). */
static int find_path(sl_arrow *a, const ar_field *fs, int n, const char *field, int depth)
{
    if (depth >= MAX_DEPTH)
        return -1;
    for (int i = 0; i < n; i++)
        if (name_is(&fs[i], field, strlen(field))) {
            a->text_path[depth] = &fs[i];
            a->text_depth = depth + 1;
            return 0;
        }
    for (const char *dot = strchr(field, '.'); dot; dot = strchr(dot + 1, '.')) {
        size_t k = (size_t)(dot - field);
        for (int i = 0; i < n; i++)
            if (fs[i].type == T_STRUCT && fs[i].dict < 0 && name_is(&fs[i], field, k)) {
                a->text_path[depth] = &fs[i];
                if (find_path(a, fs[i].kids, fs[i].nkids, dot + 1, depth + 1) == 0)
                    return 0;
            }
    }
    return -1;
}

/* The top-level fields of schema table st (and their children). */
static int schema_fields(sl_arrow *a, fb *f, const fbt *st, sl_err *err)
{
    if (fb_i16(f, st, 0, 0) != 0)
        return sl_errf(err, "%s: big-endian Arrow data is not supported", a->name);
    size_t s, n;
    if (fb_vec(f, st, 1, 4, &s, &n) < 0)
        return sl_errf(err, "%s: corrupt schema (flatbuffer offsets out of bounds)", a->name);
    if (n > (1u << 20))
        return sl_errf(err, "%s: schema of %zu columns", a->name, n);
    a->fields = sl_xcalloc(n ? n : 1, sizeof *a->fields);
    for (size_t i = 0; i < n; i++) {
        a->nfields = (int)i + 1;
        fbt ft;
        if (fb_vec_tab(f, s, i, &ft) < 0)
            return sl_errf(err, "%s: corrupt schema (flatbuffer offsets out of bounds)", a->name);
        if (build_field(a, f, &ft, &a->fields[i], 0, NULL, err) < 0)
            return -1;
    }
    if (f->bad)
        return sl_errf(err, "%s: corrupt schema (flatbuffer offsets out of bounds)", a->name);
    return 0;
}

static int schema_init(sl_arrow *a, fb *f, const fbt *st, sl_err *err)
{
    if (schema_fields(a, f, st, err) < 0)
        return -1;
    if (find_path(a, a->fields, a->nfields, a->o.field, 0) < 0) {
        sl_buf cols = {0};
        for (int i = 0; i < a->nfields && cols.len < 300; i++)
            sl_buf_printf(&cols, "%s%s", i ? ", " : "", a->fields[i].path);
        sl_errf(err, "%s: no column \"%s\" for the text (columns: %s%s); --field names it", a->name, a->o.field,
                cols.data ? cols.data : "none", cols.len >= 300 ? ", ..." : "");
        sl_buf_free(&cols);
        return -1;
    }
    if (!is_string_type(a->text_path[a->text_depth - 1]->type))
        return sl_errf(err, "%s: column \"%s\" is not a string column (the text must be one)", a->name, a->o.field);
    a->id_col = -1;
    for (int i = 0; i < a->nfields; i++) {
        const ar_field *k = &a->fields[i];
        if (!name_is(k, "id", 2) || k == a->text_path[0])
            continue;
        /* (Null: all null, FILE:N for every row, as for a null id) */
        if (!(k->type == T_UTF8 || k->type == T_LUTF8 || k->type == T_UTF8_VIEW || (k->type == T_INT && !k->bool8) ||
              k->type == T_FLOAT || k->type == T_NULL))
            return sl_errf(err, "%s: column \"id\" is not a string or a number column", a->name);
        a->id_col = i;
    }
    return 0;
}

/* ---- messages ------------------------------------------------------------------ */

enum { H_SCHEMA = 1, H_DICT = 2, H_BATCH = 3 };

typedef struct {
    int type;
    fbt header;
    uint64_t body_off;
    int64_t body_len;
} ar_msg;

/* Reads the message at a->pos: 1, 0 at the end of the messages, -1 error. */
static int read_msg(sl_arrow *a, fb *f, ar_msg *m, sl_err *err)
{
    uint64_t at = a->pos;
    a->msg_off = at;
    if (at >= a->end)
        return 0;
    if (a->end - at < 4)
        return sl_errf(err, "%s: message at offset %llu: truncated (%llu bytes left)", a->name, (unsigned long long)at,
                       (unsigned long long)(a->end - at));
    uint8_t h[8];
    if (a->rd(a->rd_ctx, h, 4, at, err) < 0)
        return sl_err_prefix(err, "%s", a->name), -1;
    uint64_t hdr = 4;
    uint32_t len = sl_get_le32(h);
    if (len == 0xFFFFFFFFu) { /* the continuation marker */
        if (a->end - at < 8)
            return sl_errf(err, "%s: message at offset %llu: truncated", a->name, (unsigned long long)at);
        if (a->rd(a->rd_ctx, h + 4, 4, at + 4, err) < 0)
            return sl_err_prefix(err, "%s", a->name), -1;
        len = sl_get_le32(h + 4);
        hdr = 8;
    }
    if (len == 0) /* end of stream */
        return 0;
    if (len > MAX_META || len > a->end - at - hdr)
        return sl_errf(err, "%s: message at offset %llu: metadata length %u exceeds the %s", a->name,
                       (unsigned long long)at, len, len > MAX_META ? "limit (64 MiB)" : "data");
    sl_buf_clear(&a->meta);
    sl_buf_reserve(&a->meta, len);
    if (a->rd(a->rd_ctx, a->meta.data, len, at + hdr, err) < 0)
        return sl_err_prefix(err, "%s", a->name), -1;
    a->meta.len = len;
    *f = (fb){(const uint8_t *)a->meta.data, len, 0};
    fbt root;
    if (len < 8 || fb_tab(f, sl_get_le32(f->p), &root) < 0)
        return sl_errf(err, "%s: message at offset %llu: corrupt metadata (not a flatbuffer Message)", a->name,
                       (unsigned long long)at);
    int version = fb_i16(f, &root, 0, 0);
    m->type = fb_u8(f, &root, 1, 0);
    int rc = fb_sub(f, &root, 2, &m->header);
    m->body_len = fb_i64(f, &root, 3, 0);
    m->body_off = at + hdr + len;
    if (f->bad || rc <= 0)
        return sl_errf(err, "%s: message at offset %llu: corrupt metadata (flatbuffer offsets out of bounds)", a->name,
                       (unsigned long long)at);
    if (version < 3)
        return sl_errf(err, "%s: message at offset %llu: Arrow metadata version V%d (before 1.0) is not supported",
                       a->name, (unsigned long long)at, version + 1);
    if (m->body_len < 0 || (uint64_t)m->body_len > a->end - m->body_off)
        return sl_errf(err, "%s: message at offset %llu: body of %lld bytes exceeds the data (%llu bytes left)",
                       a->name, (unsigned long long)at, (long long)m->body_len,
                       (unsigned long long)(a->end - m->body_off));
    a->pos = m->body_off + (uint64_t)m->body_len;
    return 1;
}

/* ---- record batches -------------------------------------------------------------- */

typedef struct {
    sl_arrow *a;
    fb *f;
    size_t nodes, nnodes, ni; /* FieldNode structs (16 bytes) */
    size_t bufs, nbufs, bi;   /* Buffer structs (16 bytes) */
    size_t vcs, nvcs, vci;    /* variadicBufferCounts (int64), one a view array */
    int codec;                /* -1 none, 0 LZ4_FRAME, 1 ZSTD */
    ar_mem *mem;
    int64_t body_len;
    const char *what; /* "record batch N" or "dictionary N" */
    uint64_t off;     /* the message's offset */
    sl_err *err;
} rb_ctx;

static int rb_err(rb_ctx *c, const ar_field *fl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int rb_err(rb_ctx *c, const ar_field *fl, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sl_errf(c->err, "%s: %s (message at offset %llu), column %s: %s", c->a->name, c->what,
                   (unsigned long long)c->off, fl->path, msg);
}

/* A buffer of at least *cap bytes for ulen bytes: the pool's smallest that
 * holds ulen, else its largest (grown by the caller as it fills) when that
 * holds *cap, else a new one; *cap is set to what it holds. */
static uint8_t *pool_take(sl_arrow *a, size_t *cap, size_t ulen)
{
    int best = -1;
    for (int i = 0; i < a->npool; i++)
        if (a->poolcap[i] >= ulen && (best < 0 || a->poolcap[i] < a->poolcap[best]))
            best = i;
    if (best < 0) /* none holds ulen: the largest */
        for (int i = 0; i < a->npool; i++)
            if (best < 0 || a->poolcap[i] > a->poolcap[best])
                best = i;
    if (best < 0 || a->poolcap[best] < *cap)
        return sl_xmalloc(*cap ? *cap : 1);
    uint8_t *p = a->pool[best];
    *cap = a->poolcap[best];
    a->pool[best] = a->pool[--a->npool];
    a->poolcap[best] = a->poolcap[a->npool];
    return p;
}

/* Decompresses a buffer (LZ4 frame or zstd) into exactly ulen bytes. The
 * output grows as it is produced, so a lying length costs no memory. */
static uint8_t *decompress(rb_ctx *c, const ar_field *fl, const uint8_t *src, size_t n, size_t ulen)
{
    size_t cap = ulen < ((size_t)1 << 20) ? ulen : ((size_t)1 << 20), out = 0;
    uint8_t *dst = pool_take(c->a, &cap, ulen);
    const char *name = c->codec == 0 ? "LZ4_FRAME" : "ZSTD";
    int ok = 0;
    if (c->codec == 1) {
        if (!c->a->zs && !(c->a->zs = ZSTD_createDStream())) {
            free(dst);
            rb_err(c, fl, "ZSTD: out of memory");
            return NULL;
        }
        ZSTD_DStream *z = c->a->zs;
        ZSTD_DCtx_reset(z, ZSTD_reset_session_only); /* (after an error too) */
        ZSTD_inBuffer in = {src, n, 0};
        size_t rc = 1;
        for (;;) {
            if (out == cap && cap < ulen) {
                cap = cap * 2 < ulen ? cap * 2 : ulen;
                dst = sl_xrealloc(dst, cap);
            }
            ZSTD_outBuffer ob = {dst, cap, out};
            size_t in0 = in.pos;
            rc = ZSTD_decompressStream(z, &ob, &in);
            if (ZSTD_isError(rc)) {
                free(dst);
                rb_err(c, fl, "ZSTD decompression error: %s", ZSTD_getErrorName(rc));
                return NULL;
            }
            int progress = ob.pos != out || in.pos != in0;
            out = ob.pos;
            if ((rc == 0 && in.pos == in.size) || !progress)
                break;
        }
        ok = rc == 0 && in.pos == in.size;
    } else {
        if (!c->a->lz && LZ4F_isError(LZ4F_createDecompressionContext(&c->a->lz, LZ4F_VERSION))) {
            c->a->lz = NULL;
            free(dst);
            rb_err(c, fl, "LZ4: cannot start");
            return NULL;
        }
        LZ4F_dctx *z = c->a->lz;
        LZ4F_resetDecompressionContext(z); /* (after an error too) */
        size_t pos = 0, rc = 1;
        for (;;) {
            if (out == cap && cap < ulen) {
                cap = cap * 2 < ulen ? cap * 2 : ulen;
                dst = sl_xrealloc(dst, cap);
            }
            size_t dn = cap - out, sn = n - pos;
            rc = LZ4F_decompress(z, dst + out, &dn, src + pos, &sn, NULL);
            if (LZ4F_isError(rc)) {
                free(dst);
                rb_err(c, fl, "LZ4_FRAME decompression error: %s", LZ4F_getErrorName(rc));
                return NULL;
            }
            out += dn;
            pos += sn;
            if ((rc == 0 && pos == n) || (dn == 0 && sn == 0))
                break;
        }
        ok = rc == 0 && pos == n;
    }
    if (!ok || out != ulen) {
        free(dst);
        rb_err(c, fl, "%s data does not decompress to the %zu bytes the buffer says (%zu%s)", name, ulen, out,
               ok ? "" : " before the data ends or goes on");
        return NULL;
    }
    return mem_own(c->mem, dst, cap);
}

/* The next buffer of the batch: *p, *n (an empty buffer: n 0). */
static int next_buf(rb_ctx *c, const ar_field *fl, const uint8_t **p, size_t *n)
{
    if (c->bi >= c->nbufs)
        return rb_err(c, fl, "the batch lists %zu buffers, the schema needs more", c->nbufs);
    const uint8_t *b = c->f->p + c->bufs + 16 * c->bi++;
    int64_t off = (int64_t)sl_get_le64(b), len = (int64_t)sl_get_le64(b + 8);
    if (off < 0 || len < 0 || off > c->body_len || len > c->body_len - off)
        return rb_err(c, fl, "buffer %zu [%lld, +%lld) lies outside the body (%lld bytes)", c->bi - 1, (long long)off,
                      (long long)len, (long long)c->body_len);
    const uint8_t *q = c->mem->body + off;
    *p = q;
    *n = (size_t)len;
    if (c->codec < 0 || len == 0)
        return 0;
    if (len < 8)
        return rb_err(c, fl, "compressed buffer %zu of %lld bytes (no length prefix)", c->bi - 1, (long long)len);
    int64_t ulen = (int64_t)sl_get_le64(q);
    if (ulen == -1) { /* stored uncompressed */
        *p = q + 8;
        *n = (size_t)len - 8;
        return 0;
    }
    if (ulen < 0 || (uint64_t)ulen > ((uint64_t)1 << 40))
        return rb_err(c, fl, "compressed buffer %zu claims %lld bytes", c->bi - 1, (long long)ulen);
    if (ulen == 0) {
        *n = 0;
        return 0;
    }
    uint8_t *d = decompress(c, fl, q + 8, (size_t)len - 8, (size_t)ulen);
    if (!d)
        return -1;
    *p = d;
    *n = (size_t)ulen;
    return 0;
}

static int value_width(const ar_field *f)
{
    switch (f->type) {
    case T_INT: return f->bits / 8;
    case T_FLOAT: return f->prec == 0 ? 2 : f->prec == 1 ? 4 : 8;
    case T_DECIMAL: return f->bits / 8;
    case T_DATE: return f->unit == 0 ? 4 : 8;
    case T_TIME: return f->bits / 8;
    case T_TIMESTAMP: return 8;
    case T_FSB: return f->width;
    default: return 0;
    }
}

/* Checks n+1 offsets of width w (4 or 8) in b: non-decreasing, from >= 0,
 * the last at most limit. */
static int check_offsets(rb_ctx *c, const ar_field *fl, const uint8_t *b, int64_t n, int w, uint64_t limit)
{
    int64_t prev = 0;
    for (int64_t i = 0; i <= n; i++) {
        int64_t o = w == 4 ? (int32_t)sl_get_le32(b + 4 * i) : (int64_t)sl_get_le64(b + 8 * i);
        if (o < prev || (i == 0 && o < 0))
            return rb_err(c, fl, "offset %lld of %lld is %lld, below the one before", (long long)i, (long long)n,
                          (long long)o);
        prev = o;
    }
    if ((uint64_t)prev > limit)
        return rb_err(c, fl, "the last offset %lld exceeds the data (%llu)", (long long)prev,
                      (unsigned long long)limit);
    return 0;
}

static int is_valid(const ar_arr *x, int64_t i)
{
    return !x->valid || (x->valid[i >> 3] >> (i & 7) & 1);
}

static int64_t offset_at(const ar_arr *x, int64_t i)
{
    int large = x->f->type == T_LUTF8 || x->f->type == T_LBINARY || x->f->type == T_LLIST;
    return large ? (int64_t)sl_get_le64(x->b1 + 8 * i) : (int32_t)sl_get_le32(x->b1 + 4 * i);
}

/* The bytes of entry i of a string or binary array (offsets or views;
 * checked when the batch was loaded). */
static const uint8_t *bytes_at(const ar_arr *x, int64_t i, size_t *n)
{
    int t = x->f->type;
    if (t == T_UTF8_VIEW || t == T_BINARY_VIEW) {
        const uint8_t *v = x->b1 + 16 * i;
        *n = sl_get_le32(v);
        return *n <= 12 ? v + 4 : x->vb[sl_get_le32(v + 8)] + sl_get_le32(v + 12);
    }
    int64_t b = offset_at(x, i), e = offset_at(x, i + 1);
    *n = (size_t)(e - b);
    return x->b2 + b;
}

/* A view array's buffers: the views (16 bytes each: the length, then up to
 * 12 bytes inline, or a 4-byte prefix, the data buffer's index and the
 * offset in it), then as many data buffers as the batch's
 * variadicBufferCounts says for it. Every view of a valid entry is checked
 * to lie inside its buffer. */
static int load_views(rb_ctx *c, const ar_field *fl, ar_arr *x)
{
    if (next_buf(c, fl, &x->b1, &x->n1) < 0)
        return -1;
    if (c->vci >= c->nvcs)
        return rb_err(c, fl, "the batch lists %zu variadic buffer counts, the schema needs more", c->nvcs);
    int64_t k = (int64_t)sl_get_le64(c->f->p + c->vcs + 8 * c->vci++);
    if (k < 0 || (uint64_t)k > c->nbufs - c->bi)
        return rb_err(c, fl, "%lld variadic data buffers (the batch lists %zu more buffers)", (long long)k,
                      c->nbufs - c->bi);
    x->nvb = (size_t)k;
    x->vb = sl_xcalloc(x->nvb ? x->nvb : 1, sizeof *x->vb);
    x->vn = sl_xcalloc(x->nvb ? x->nvb : 1, sizeof *x->vn);
    for (size_t i = 0; i < x->nvb; i++)
        if (next_buf(c, fl, &x->vb[i], &x->vn[i]) < 0)
            return -1;
    if (x->n1 / 16 < (uint64_t)x->len)
        return rb_err(c, fl, "%zu bytes of views for %lld entries", x->n1, (long long)x->len);
    for (int64_t i = 0; i < x->len; i++) {
        if (!is_valid(x, i))
            continue;
        const uint8_t *v = x->b1 + 16 * i;
        int32_t n = (int32_t)sl_get_le32(v);
        if (n <= 12 && n >= 0)
            continue;
        int32_t b = (int32_t)sl_get_le32(v + 8), o = (int32_t)sl_get_le32(v + 12);
        if (n < 0)
            return rb_err(c, fl, "view %lld: length %d", (long long)i, n);
        if (b < 0 || (size_t)b >= x->nvb)
            return rb_err(c, fl, "view %lld: data buffer %d of %zu", (long long)i, b, x->nvb);
        if (o < 0 || (uint64_t)o + (uint64_t)n > x->vn[b])
            return rb_err(c, fl, "view %lld: %d bytes at offset %d run past data buffer %d (%zu bytes)", (long long)i,
                          n, o, b, x->vn[b]);
    }
    return 0;
}

/* Loads the array of field fl (as_value: a dictionary's values, not its
 * indices). */
static int load_arr(rb_ctx *c, const ar_field *fl, ar_arr *x, int as_value, int depth)
{
    memset(x, 0, sizeof *x);
    x->f = fl;
    if (depth > MAX_DEPTH)
        return rb_err(c, fl, "nested too deep");
    if (c->ni >= c->nnodes)
        return rb_err(c, fl, "the batch lists %zu field nodes, the schema needs more", c->nnodes);
    const uint8_t *nd = c->f->p + c->nodes + 16 * c->ni++;
    int64_t len = (int64_t)sl_get_le64(nd), nulls = (int64_t)sl_get_le64(nd + 8);
    if (len < 0 || len > ((int64_t)1 << 40) || nulls < 0 || nulls > len)
        return rb_err(c, fl, "field node of length %lld with %lld nulls", (long long)len, (long long)nulls);
    x->len = len;
    int dict = fl->dict >= 0 && !as_value;
    const uint8_t *p;
    size_t n;
    if (fl->type == T_NULL && !dict)
        return 0; /* no buffers */
    if (next_buf(c, fl, &p, &n) < 0)
        return -1;
    if (nulls > 0) {
        if (n < (uint64_t)(len + 7) / 8)
            return rb_err(c, fl, "validity bitmap of %zu bytes for %lld entries", n, (long long)len);
        x->valid = p;
    }
    if (dict) {
        if (next_buf(c, fl, &x->b1, &x->n1) < 0)
            return -1;
        if (x->n1 / (size_t)(fl->idx_bits / 8) < (uint64_t)len)
            return rb_err(c, fl, "%zu bytes of dictionary indices for %lld entries", x->n1, (long long)len);
        x->is_index = 1;
        return 0;
    }
    int w = value_width(fl);
    switch (fl->type) {
    case T_BOOL:
        if (next_buf(c, fl, &x->b1, &x->n1) < 0)
            return -1;
        if (x->n1 < (uint64_t)(len + 7) / 8)
            return rb_err(c, fl, "%zu bytes of booleans for %lld entries", x->n1, (long long)len);
        return 0;
    case T_BINARY:
    case T_UTF8:
    case T_LBINARY:
    case T_LUTF8: {
        int ow = fl->type == T_LBINARY || fl->type == T_LUTF8 ? 8 : 4;
        if (next_buf(c, fl, &x->b1, &x->n1) < 0 || next_buf(c, fl, &x->b2, &x->n2) < 0)
            return -1;
        if (len == 0)
            return 0;
        if (x->n1 / (size_t)ow < (uint64_t)len + 1)
            return rb_err(c, fl, "%zu bytes of offsets for %lld entries", x->n1, (long long)len);
        return check_offsets(c, fl, x->b1, len, ow, x->n2);
    }
    case T_BINARY_VIEW:
    case T_UTF8_VIEW: return load_views(c, fl, x);
    case T_LIST:
    case T_LLIST:
    case T_MAP: {
        int ow = fl->type == T_LLIST ? 8 : 4;
        if (next_buf(c, fl, &x->b1, &x->n1) < 0)
            return -1;
        x->kids = sl_xcalloc(1, sizeof *x->kids);
        if (load_arr(c, &fl->kids[0], &x->kids[0], 0, depth + 1) < 0)
            return -1;
        if (len == 0)
            return 0;
        if (x->n1 / (size_t)ow < (uint64_t)len + 1)
            return rb_err(c, fl, "%zu bytes of offsets for %lld entries", x->n1, (long long)len);
        return check_offsets(c, fl, x->b1, len, ow, (uint64_t)x->kids[0].len);
    }
    case T_FSL:
        x->kids = sl_xcalloc(1, sizeof *x->kids);
        if (load_arr(c, &fl->kids[0], &x->kids[0], 0, depth + 1) < 0)
            return -1;
        if ((uint64_t)x->kids[0].len < (uint64_t)len * (uint64_t)fl->width)
            return rb_err(c, fl, "%lld lists of %d need %llu values, the child has %lld", (long long)len, fl->width,
                          (unsigned long long)len * (uint64_t)fl->width, (long long)x->kids[0].len);
        return 0;
    case T_STRUCT:
        x->kids = sl_xcalloc(fl->nkids ? (size_t)fl->nkids : 1, sizeof *x->kids);
        for (int i = 0; i < fl->nkids; i++) {
            if (load_arr(c, &fl->kids[i], &x->kids[i], 0, depth + 1) < 0)
                return -1;
            if (x->kids[i].len < len)
                return rb_err(c, &fl->kids[i], "%lld entries in a struct of %lld", (long long)x->kids[i].len,
                              (long long)len);
        }
        return 0;
    default:
        if (next_buf(c, fl, &x->b1, &x->n1) < 0)
            return -1;
        if (x->n1 / (size_t)(w ? w : 1) < (uint64_t)len && w)
            return rb_err(c, fl, "%zu bytes of values for %lld entries of %d bytes", x->n1, (long long)len, w);
        return 0;
    }
}

/* Reads the body of the message and the RecordBatch table rt; loads the
 * arrays of fields fs[0, n) into xs. */
static int load_batch(sl_arrow *a, fb *f, const fbt *rt, const ar_msg *m, ar_mem *mem, const ar_field *fs, int n,
                      ar_arr *xs, int as_value, const char *what, int64_t *rows, sl_err *err)
{
    rb_ctx c = {
        .a = a, .f = f, .mem = mem, .body_len = m->body_len, .what = what, .off = a->msg_off, .err = err, .codec = -1};
    *rows = fb_i64(f, rt, 0, 0);
    fbt ct;
    if (fb_vec(f, rt, 1, 16, &c.nodes, &c.nnodes) < 0 || fb_vec(f, rt, 2, 16, &c.bufs, &c.nbufs) < 0 ||
        fb_sub(f, rt, 3, &ct) < 0 || fb_vec(f, rt, 4, 8, &c.vcs, &c.nvcs) < 0 || f->bad)
        return sl_errf(err, "%s: %s (message at offset %llu): corrupt metadata (flatbuffer offsets out of bounds)",
                       a->name, what, (unsigned long long)a->msg_off);
    if (*rows < 0)
        return sl_errf(err, "%s: %s (message at offset %llu): %lld rows", a->name, what, (unsigned long long)a->msg_off,
                       (long long)*rows);
    if (ct.pos) {
        c.codec = fb_u8(f, &ct, 0, 0);
        if (c.codec > 1 || fb_u8(f, &ct, 1, 0) != 0)
            return sl_errf(err, "%s: %s (message at offset %llu): unknown body compression %d", a->name, what,
                           (unsigned long long)a->msg_off, c.codec);
    }
    mem->body_cap = m->body_len ? (size_t)m->body_len : 1;
    mem->body = pool_take(a, &mem->body_cap, mem->body_cap);
    if (m->body_len && a->rd(a->rd_ctx, mem->body, (size_t)m->body_len, m->body_off, err) < 0)
        return sl_err_prefix(err, "%s: %s", a->name, what), -1;
    for (int i = 0; i < n; i++) {
        if (load_arr(&c, &fs[i], &xs[i], as_value, 0) < 0)
            return -1;
        if (xs[i].len < *rows)
            return rb_err(&c, &fs[i], "%lld entries in a batch of %lld rows", (long long)xs[i].len, (long long)*rows);
    }
    return 0;
}

static int read_dict(sl_arrow *a, fb *f, const ar_msg *m, int64_t ndict, sl_err *err)
{
    int64_t id = fb_i64(f, &m->header, 0, 0);
    int delta = fb_u8(f, &m->header, 2, 0);
    fbt rt;
    if (fb_sub(f, &m->header, 1, &rt) <= 0)
        return sl_errf(err, "%s: dictionary batch %lld (message at offset %llu): no data", a->name, (long long)ndict,
                       (unsigned long long)a->msg_off);
    ar_dict *d = NULL;
    for (int i = 0; i < a->ndicts; i++)
        if (a->dicts[i].id == id)
            d = &a->dicts[i];
    if (!d)
        return sl_errf(err, "%s: dictionary batch %lld (message at offset %llu): no column has dictionary id %lld",
                       a->name, (long long)ndict, (unsigned long long)a->msg_off, (long long)id);
    if (!delta && d->nchunks && a->kind == SL_ARROW_FILE) /* (read before the batches: it would apply to all) */
        return sl_errf(err,
                       "%s: dictionary batch (message at offset %llu): a second dictionary for id %lld that is "
                       "no delta (a file cannot replace a dictionary; pyarrow refuses it too)",
                       a->name, (unsigned long long)a->msg_off, (long long)id);
    if (!delta) {
        for (size_t i = 0; i < d->nchunks; i++) {
            arr_free(&d->chunks[i].arr);
            mem_free(&d->chunks[i].mem);
        }
        d->nchunks = 0;
        d->len = 0;
    }
    d->chunks = sl_xrealloc(d->chunks, (d->nchunks + 1) * sizeof *d->chunks);
    ar_chunk *ch = &d->chunks[d->nchunks++];
    memset(ch, 0, sizeof *ch);
    ch->base = d->len;
    char what[64];
    snprintf(what, sizeof what, "dictionary %lld", (long long)id);
    int64_t rows;
    if (load_batch(a, f, &rt, m, &ch->mem, d->f, 1, &ch->arr, 1, what, &rows, err) < 0)
        return -1;
    ch->arr.len = rows; /* the dictionary's entries */
    d->len += rows;
    return 0;
}

static void batch_free(sl_arrow *a)
{
    if (a->cols)
        for (int i = 0; i < a->nfields; i++)
            arr_free(&a->cols[i]);
    /* its buffers to the pool, for the next batch */
    if (a->mem.body && a->npool < POOL_MAX) {
        a->pool[a->npool] = a->mem.body;
        a->poolcap[a->npool++] = a->mem.body_cap;
        a->mem.body = NULL;
    }
    for (size_t i = 0; i < a->mem.nown && a->npool < POOL_MAX; i++) {
        a->pool[a->npool] = a->mem.own[i];
        a->poolcap[a->npool++] = a->mem.owncap[i];
        a->mem.own[i] = NULL;
    }
    mem_free(&a->mem);
    a->rows = a->row0 = 0;
}

/* Reads messages up to the next record batch of this part and loads it:
 * 1, 0 at the end, -1 error. */
static int next_record_batch(sl_arrow *a, sl_err *err)
{
    for (;;) {
        batch_free(a);
        fb f;
        ar_msg m;
        int want = 0; /* a file: the type its footer says the block holds */
        if (a->kind == SL_ARROW_FILE) {
            if (a->bnext >= a->nblocks)
                return 0;
            want = a->bnext < a->nblock_dicts ? H_DICT : H_BATCH;
            a->pos = a->blocks[a->bnext++];
        }
        int rc = read_msg(a, &f, &m, err);
        if (rc == 0 && want)
            return sl_errf(err, "%s: the footer's block at offset %llu holds no message", a->name,
                           (unsigned long long)a->pos);
        if (rc <= 0)
            return rc;
        if (want && m.type != want)
            return sl_errf(err, "%s: message at offset %llu: the footer lists a %s, the message is type %d", a->name,
                           (unsigned long long)a->msg_off, want == H_DICT ? "dictionary batch" : "record batch",
                           m.type);
        if (m.type == H_SCHEMA)
            return sl_errf(err, "%s: message at offset %llu: a second schema", a->name, (unsigned long long)a->msg_off);
        if (m.type == H_DICT) {
            if (read_dict(a, &f, &m, 0, err) < 0)
                return -1;
            continue;
        }
        if (m.type != H_BATCH)
            return sl_errf(err, "%s: message at offset %llu: message type %d is not a record or dictionary batch",
                           a->name, (unsigned long long)a->msg_off, m.type);
        int64_t b = a->batch++;
        int64_t rows = fb_i64(&f, &m.header, 0, 0);
        if (f.bad || rows < 0)
            return sl_errf(err, "%s: record batch %lld (message at offset %llu): corrupt metadata", a->name,
                           (long long)b, (unsigned long long)a->msg_off);
        if (a->o.byte_end > 0 && (a->msg_off < a->o.byte_begin || a->msg_off >= a->o.byte_end)) {
            if (a->msg_off >= a->o.byte_end && !want) /* the next part's: nothing more is this part's */
                return 0;
            a->row_base += (uint64_t)rows;
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "record batch %lld", (long long)b);
        a->batch_off = a->msg_off;
        int lrc = load_batch(a, &f, &m.header, &m, &a->mem, a->fields, a->nfields, a->cols, 0, what, &a->rows, err);
        while (a->npool) /* what this batch did not take back: memory stays one batch's */
            free(a->pool[--a->npool]);
        if (lrc < 0)
            return -1;
        a->row0 = 0;
        if (a->rows == 0)
            continue;
        return 1;
    }
}

/* ---- values ------------------------------------------------------------------ */

typedef struct {
    const sl_arrow *a;
    sl_buf *out;
    int invalid_mode;
    size_t invalid;
    int depth;
    const ar_field *bad_field; /* a dictionary index out of range, a too deep value */
    int64_t bad_index;         /* -2: too deep, -3: bad_what, else the index */
    const char *bad_what;      /* a value Python's datetime cannot hold */
    int utf8_error;
} wctx;

/* A value pyarrow's to_pylist() refuses (Python's datetime cannot hold
 * it): the row's error, null in the output. */
static void bad_datetime(wctx *w, const ar_field *f, const char *what)
{
    if (!w->bad_field)
        w->bad_field = f, w->bad_index = -3, w->bad_what = what;
    sl_buf_puts(w->out, "null");
}

static int64_t read_int(const uint8_t *p, int bits, int is_signed)
{
    switch (bits) {
    case 8: return is_signed ? (int8_t)p[0] : p[0];
    case 16: return is_signed ? (int16_t)sl_get_le16(p) : sl_get_le16(p);
    case 32: return is_signed ? (int64_t)(int32_t)sl_get_le32(p) : (int64_t)sl_get_le32(p);
    default: return (int64_t)sl_get_le64(p);
    }
}

/* Entry i of a dictionary: its chunk's array and index, or NULL. */
static const ar_arr *dict_entry(const sl_arrow *a, const ar_arr *x, int64_t i, int64_t *k)
{
    const ar_field *f = x->f;
    int64_t idx = read_int(x->b1 + (size_t)i * (size_t)(f->idx_bits / 8), f->idx_bits, f->idx_signed);
    const ar_dict *d = &a->dicts[f->dict];
    *k = idx;
    if (idx < 0 || idx >= d->len)
        return NULL;
    for (size_t c = d->nchunks; c-- > 0;)
        if (idx >= d->chunks[c].base) {
            *k = idx - d->chunks[c].base;
            return &d->chunks[c].arr;
        }
    return NULL;
}

static void put_scalar(wctx *w, const ar_arr *x, int64_t i)
{
    const ar_field *f = x->f;
    sl_buf *out = w->out;
    int wd = value_width(f);
    const uint8_t *p = x->b1 + (size_t)i * (size_t)wd;
    switch (f->type) {
    case T_BOOL: sl_buf_puts(out, x->b1[i >> 3] >> (i & 7) & 1 ? "true" : "false"); return;
    case T_INT:
        if (f->bool8)
            sl_buf_puts(out, *p ? "true" : "false");
        else if (f->bits == 64 && !f->is_signed)
            sl_pyjson_u64(out, sl_get_le64(p));
        else
            sl_pyjson_i64(out, read_int(p, f->bits, f->is_signed));
        return;
    case T_FLOAT:
        if (f->prec == 0)
            sl_pyjson_float16(out, sl_get_le16(p));
        else if (f->prec == 1) {
            uint32_t u = sl_get_le32(p);
            float v;
            memcpy(&v, &u, 4);
            sl_pyjson_float(out, (double)v);
        } else {
            uint64_t u = sl_get_le64(p);
            double v;
            memcpy(&v, &u, 8);
            sl_pyjson_float(out, v);
        }
        return;
    case T_DECIMAL: {
        uint64_t lo, hi;
        if (f->bits <= 64) {
            int64_t v = f->bits == 32 ? (int32_t)sl_get_le32(p) : (int64_t)sl_get_le64(p);
            lo = (uint64_t)v;
            hi = v < 0 ? UINT64_MAX : 0;
        } else if (f->bits == 256) {
            uint64_t limb[4] = {sl_get_le64(p), sl_get_le64(p + 8), sl_get_le64(p + 16), sl_get_le64(p + 24)};
            sl_pyjson_decimal_wide(out, limb, 4, f->scale);
            return;
        } else {
            lo = sl_get_le64(p);
            hi = sl_get_le64(p + 8);
        }
        sl_pyjson_decimal(out, hi, lo, f->scale);
        return;
    }
    case T_DATE: {
        int64_t days;
        if (f->unit == 0)
            days = (int32_t)sl_get_le32(p);
        else {
            int64_t ms = (int64_t)sl_get_le64(p);
            days = ms / 86400000 - (ms % 86400000 < 0);
        }
        if (!sl_pyjson_date_ok(days)) {
            bad_datetime(w, f, "a date out of range (years 1 to 9999)");
            return;
        }
        sl_pyjson_date(out, days);
        return;
    }
    case T_TIME: {
        int64_t v = f->bits == 32 ? (int32_t)sl_get_le32(p) : (int64_t)sl_get_le64(p);
        int unit = f->unit ? f->unit : 1; /* seconds (32 bits) as milliseconds; the others are pyjson's units */
        if (!f->unit)
            v *= 1000;
        if (!sl_pyjson_time_ok(v, unit)) { /* not a time of day (datetime.time refuses it) */
            bad_datetime(w, f, "a time of day out of range");
            return;
        }
        sl_pyjson_time(out, v, unit);
        return;
    }
    case T_TIMESTAMP: {
        int64_t v = (int64_t)sl_get_le64(p);
        int unit = f->unit, over = 0;
        if (unit == 0) { /* seconds as milliseconds (pyjson's units) */
            over = __builtin_mul_overflow(v, 1000, &v);
            unit = 1;
        }
        /* the time as Python's datetime holds it, in UTC and, where there
         * is an offset, local (pyarrow makes both): years 1 to 9999 */
        if (over || sl_pyjson_timestamp_tz(out, v, unit, f->utc, f->tzoff) < 0)
            bad_datetime(w, f, "a timestamp out of range (years 1 to 9999)");
        return;
    }
    case T_FSB:
        if (f->uuid) {
            static const char hex[] = "0123456789abcdef";
            char u[38];
            int k = 0;
            u[k++] = '"';
            for (int j = 0; j < 16; j++) {
                if (j == 4 || j == 6 || j == 8 || j == 10)
                    u[k++] = '-';
                u[k++] = hex[p[j] >> 4];
                u[k++] = hex[p[j] & 15];
            }
            u[k++] = '"';
            sl_buf_append(out, u, (size_t)k);
        } else
            sl_pyjson_base64(out, p, (size_t)wd);
        return;
    default: sl_buf_puts(out, "null"); return;
    }
}

static void put_arr(wctx *w, const ar_arr *x, int64_t i, const ar_field *skip);

/* Elements [b, e) of child array k as a JSON list. */
static void put_list(wctx *w, const ar_arr *k, int64_t b, int64_t e)
{
    sl_buf_putc(w->out, '[');
    for (int64_t j = b; j < e; j++) {
        if (j > b)
            sl_buf_putc(w->out, ',');
        put_arr(w, k, j, NULL);
    }
    sl_buf_putc(w->out, ']');
}

/* Writes entry i of x; skip: a struct child left out (the text). */
static void put_arr(wctx *w, const ar_arr *x, int64_t i, const ar_field *skip)
{
    const ar_field *f = x->f;
    if (!is_valid(x, i) || f->type == T_NULL) {
        sl_buf_puts(w->out, "null");
        return;
    }
    if (w->depth > 2 * MAX_DEPTH) {
        w->bad_field = f;
        w->bad_index = -2;
        sl_buf_puts(w->out, "null");
        return;
    }
    w->depth++;
    if (x->is_index) {
        int64_t k;
        const ar_arr *d = dict_entry(w->a, x, i, &k);
        if (!d) {
            w->bad_field = f;
            w->bad_index = k;
            sl_buf_puts(w->out, "null");
        } else
            put_arr(w, d, k, NULL);
        w->depth--;
        return;
    }
    switch (f->type) {
    case T_UTF8:
    case T_LUTF8:
    case T_UTF8_VIEW: {
        size_t n;
        const uint8_t *p = bytes_at(x, i, &n);
        sl_rowslot_put_string(w->out, (const char *)p, n, w->invalid_mode, &w->utf8_error, &w->invalid);
        break;
    }
    case T_BINARY:
    case T_LBINARY:
    case T_BINARY_VIEW: {
        size_t n;
        const uint8_t *p = bytes_at(x, i, &n);
        sl_pyjson_base64(w->out, p, n);
        break;
    }
    case T_LIST:
    case T_LLIST: put_list(w, &x->kids[0], offset_at(x, i), offset_at(x, i + 1)); break;
    case T_FSL: put_list(w, &x->kids[0], i * f->width, (i + 1) * f->width); break;
    case T_MAP: { /* to_pylist's list of (key, value) tuples */
        const ar_arr *en = &x->kids[0];
        int64_t b = offset_at(x, i), e = offset_at(x, i + 1);
        sl_buf_putc(w->out, '[');
        for (int64_t j = b; j < e; j++) {
            if (j > b)
                sl_buf_putc(w->out, ',');
            sl_buf_putc(w->out, '[');
            put_arr(w, &en->kids[0], j, NULL);
            sl_buf_putc(w->out, ',');
            put_arr(w, &en->kids[1], j, NULL);
            sl_buf_putc(w->out, ']');
        }
        sl_buf_putc(w->out, ']');
        break;
    }
    case T_STRUCT: {
        sl_buf_putc(w->out, '{');
        int first = 1;
        for (int c = 0; c < f->nkids; c++) {
            if (&f->kids[c] == skip)
                continue;
            if (!first)
                sl_buf_putc(w->out, ',');
            first = 0;
            sl_buf_puts(w->out, f->kids[c].name_json);
            put_arr(w, &x->kids[c], i, skip);
        }
        sl_buf_putc(w->out, '}');
        break;
    }
    default: put_scalar(w, x, i); break;
    }
    w->depth--;
}

/* ---- rows ---------------------------------------------------------------------- */

/* The text of row r: 1 with (*p, *n), 0 when null (or a struct above it
 * is), -1 for a dictionary index out of range (*bad). */
static int text_at(const sl_arrow *a, int64_t r, const uint8_t **p, size_t *n, int64_t *bad)
{
    const ar_arr *x = &a->cols[a->text_path[0] - a->fields];
    for (int d = 1; d < a->text_depth; d++) {
        if (!is_valid(x, r))
            return 0;
        x = &x->kids[a->text_path[d] - x->f->kids];
    }
    if (!is_valid(x, r))
        return 0;
    if (x->is_index) {
        int64_t k;
        const ar_arr *dx = dict_entry(a, x, r, &k);
        if (!dx) {
            *bad = k;
            return -1;
        }
        x = dx;
        r = k;
        if (!is_valid(x, r))
            return 0;
    }
    *p = bytes_at(x, r, n);
    return 1;
}

static void assemble(const sl_arrow *a, int64_t r, sl_rowslot *s)
{
    sl_textdoc *d = &s->d;
    sl_rowslot_reset(s);
    int64_t b = a->batch - 1;
    const uint8_t *t;
    size_t tn;
    int64_t bad = 0;
    int rc = text_at(a, r, &t, &tn, &bad);
    if (rc < 0) {
        s->status = -1;
        sl_errf(
            &s->err,
            "%s: record batch %lld (message at offset %llu), row %llu, column %s: dictionary index %lld out of range",
            a->name, (long long)b, (unsigned long long)a->batch_off, (unsigned long long)s->row, a->o.field,
            (long long)bad);
        return;
    }
    if (rc == 0) {
        s->status = 1;
        sl_errf(&s->err, "%s: row %llu: the text column \"%s\" is null", a->name, (unsigned long long)s->row,
                a->o.field);
        return;
    }
    if (sl_rowslot_text(s, a->name, (const char *)t, tn, a->o.invalid_utf8) < 0)
        return;
    wctx w = {.a = a, .invalid_mode = a->o.invalid_utf8};
    /* the id */
    if (a->id_col >= 0 && a->fields[a->id_col].type != T_NULL && is_valid(&a->cols[a->id_col], r)) {
        const ar_arr *x = &a->cols[a->id_col];
        int64_t k = r;
        if (x->is_index)
            x = dict_entry(a, x, r, &k);
        if (!x) {
            w.bad_field = &a->fields[a->id_col];
            w.bad_index = k;
        } else if (!is_valid(x, k)) {
            s->gen_id = 1;
        } else if (x->f->type == T_UTF8 || x->f->type == T_LUTF8 || x->f->type == T_UTF8_VIEW) {
            size_t n;
            const uint8_t *p = bytes_at(x, k, &n);
            sl_rowslot_string_id(s, (const char *)p, n, &w.invalid);
        } else {
            w.out = &d->id;
            put_scalar(&w, x, k);
            d->id_is_string = 0;
        }
    } else {
        s->gen_id = 1;
    }
    /* the other columns */
    w.out = &d->meta;
    sl_buf_putc(&d->meta, '{');
    int first = 1;
    const ar_field *skip = a->text_path[a->text_depth - 1];
    for (int i = 0; i < a->nfields; i++) {
        if (i == a->id_col || (a->text_depth == 1 && &a->fields[i] == skip))
            continue;
        if (!first)
            sl_buf_putc(&d->meta, ',');
        first = 0;
        sl_buf_puts(&d->meta, a->fields[i].name_json);
        put_arr(&w, &a->cols[i], r, skip);
    }
    sl_buf_putc(&d->meta, '}');
    s->invalid += w.invalid;
    if (w.bad_field) {
        s->status = -1;
        if (w.bad_index == -3)
            sl_errf(&s->err, "%s: record batch %lld (message at offset %llu), row %llu, column %s: %s", a->name,
                    (long long)b, (unsigned long long)a->batch_off, (unsigned long long)s->row, w.bad_field->path,
                    w.bad_what);
        else if (w.bad_index == -2)
            sl_errf(
                &s->err, "%s: record batch %lld (message at offset %llu), row %llu, column %s: value nested too deep",
                a->name, (long long)b, (unsigned long long)a->batch_off, (unsigned long long)s->row, w.bad_field->path);
        else
            sl_errf(&s->err,
                    "%s: record batch %lld (message at offset %llu), row %llu, column %s: dictionary index %lld out of "
                    "range",
                    a->name, (long long)b, (unsigned long long)a->batch_off, (unsigned long long)s->row,
                    w.bad_field->path, (long long)w.bad_index);
    } else if (w.utf8_error) {
        s->status = -1;
        sl_errf(&s->err, "%s: row %llu: invalid UTF-8 in a string column", a->name, (unsigned long long)s->row);
    }
}

/* Writes the next rows of the current batch into the slots: 1, 0 at the
 * end, -1 error. */
static int next_rows(sl_arrow *a, sl_err *err)
{
    a->slots.n = a->slots.next = 0;
    if (a->done)
        return 0;
    if (a->row0 >= a->rows) {
        a->row_base += (uint64_t)a->rows;
        int rc = next_record_batch(a, err);
        if (rc <= 0) {
            a->done = 1;
            batch_free(a);
            return rc;
        }
    }
    /* as many rows as fit the batch's bytes of text */
    int64_t r0 = a->row0, r1 = r0;
    size_t bytes = 0;
    while (r1 < a->rows && r1 - r0 < BATCH_ROWS && bytes < a->batch_bytes) {
        const uint8_t *p;
        size_t n = 0;
        int64_t bad;
        if (text_at(a, r1, &p, &n, &bad) > 0)
            bytes += n;
        r1++;
    }
    size_t n = (size_t)(r1 - r0);
    sl_rowslots_fill(&a->slots, n, a->row_base + (uint64_t)r0 + 1);
    const sl_arrow *ca = a;
    sl_rowslot *slots = a->slots.v;
#pragma omp parallel for schedule(dynamic, 16) if (n > 64)
    for (size_t i = 0; i < n; i++)
        assemble(ca, r0 + (int64_t)i, &slots[i]);
    a->row0 = r1;
    return 1;
}

/* ---- a file's footer ------------------------------------------------------------ */

/* Reads the footer (flen bytes before the length and the end magic): its
 * Schema into the fields, its blocks into a->blocks. File.fbs: Footer
 * {version, schema, dictionaries: [Block], recordBatches: [Block]}, Block
 * {offset: long, metaDataLength: int, bodyLength: long} (24 bytes). */
static int read_footer(sl_arrow *a, uint32_t flen, sl_err *err)
{
    uint64_t at = a->end; /* the footer starts where the messages end */
    uint8_t *p = sl_xmalloc(flen ? flen : 1);
    if (a->rd(a->rd_ctx, p, flen, at, err) < 0) {
        free(p);
        return sl_err_prefix(err, "%s", a->name), -1;
    }
    fb f = {p, flen, 0};
    fbt root, st;
    size_t ds = 0, dn = 0, bs = 0, bn = 0;
    int rc = -1;
    if (flen < 8 || fb_tab(&f, sl_get_le32(p), &root) < 0 || fb_sub(&f, &root, 1, &st) < 0 ||
        fb_vec(&f, &root, 2, 24, &ds, &dn) < 0 || fb_vec(&f, &root, 3, 24, &bs, &bn) < 0 || f.bad) {
        sl_errf(err, "%s: footer at offset %llu: corrupt (not a flatbuffer Footer)", a->name, (unsigned long long)at);
        goto out;
    }
    if (!st.pos) {
        sl_errf(err, "%s: footer at offset %llu: no schema", a->name, (unsigned long long)at);
        goto out;
    }
    a->nblock_dicts = dn;
    a->nblocks = dn + bn;
    a->blocks = sl_xmalloc((a->nblocks ? a->nblocks : 1) * sizeof *a->blocks);
    for (size_t i = 0; i < a->nblocks; i++) {
        int64_t off = (int64_t)sl_get_le64(p + (i < dn ? ds + 24 * i : bs + 24 * (i - dn)));
        if (off < 8 || (uint64_t)off >= a->end) {
            sl_errf(err, "%s: footer at offset %llu: %s block %zu at offset %lld lies outside the messages (8 to %llu)",
                    a->name, (unsigned long long)at, i < dn ? "dictionary" : "record batch", i < dn ? i : i - dn,
                    (long long)off, (unsigned long long)a->end);
            goto out;
        }
        a->blocks[i] = (uint64_t)off;
    }
    a->msg_off = at;
    rc = schema_init(a, &f, &st, err);
out:
    free(p);
    return rc;
}

/* ---- API ------------------------------------------------------------------------ */

sl_arrow *sl_arrow_open(const char *name, sl_pread_fn rd, void *ctx, uint64_t size, const sl_pq_opts *o, sl_err *err)
{
    sl_arrow *a = sl_xcalloc(1, sizeof *a);
    a->o = *o;
    if (!a->o.field || !*a->o.field)
        a->o.field = "text";
    a->name = sl_xstrdup(name);
    a->rd = rd;
    a->rd_ctx = ctx;
    a->size = size;
    a->id_col = -1;
    size_t budget = a->o.mem_budget ? a->o.mem_budget : SL_DOCS_DEFAULT_MEM_BUDGET;
    a->batch_bytes = sl_docs_batch_cap(sl_mem_budget_split(budget).read_batch, 0);
    if (a->batch_bytes < ((size_t)64 << 10))
        a->batch_bytes = (size_t)64 << 10;
    uint8_t head[8];
    size_t hn = size < 8 ? (size_t)size : 8;
    if (rd(ctx, head, hn, 0, err) < 0) {
        sl_err_prefix(err, "%s", name);
        goto fail;
    }
    a->end = size;
    if (hn >= 6 && !memcmp(head, "ARROW1", 6)) {
        a->kind = SL_ARROW_FILE;
        uint8_t tail[10];
        if (size < 8 + 10 || rd(ctx, tail, 10, size - 10, err) < 0 || memcmp(tail + 4, "ARROW1", 6)) {
            sl_errf(err, "%s: truncated Arrow file (no ARROW1 magic at the end)", name);
            goto fail;
        }
        uint32_t flen = sl_get_le32(tail);
        if (flen > size - 18) {
            sl_errf(err, "%s: footer length %u exceeds the file (%llu bytes)", name, flen, (unsigned long long)size);
            goto fail;
        }
        a->pos = 8;
        a->end = size - 10 - flen; /* the messages end where the footer starts */
        if (read_footer(a, flen, err) < 0)
            goto fail;
    } else {
        a->kind = SL_ARROW_STREAM;
        a->pos = 0;
    }
    if (a->kind == SL_ARROW_STREAM) {
        fb f;
        ar_msg m;
        int rc = read_msg(a, &f, &m, err);
        if (rc == 0)
            sl_errf(err, "%s: Arrow %s without a schema", name, a->kind == SL_ARROW_FILE ? "file" : "stream");
        if (rc <= 0)
            goto fail;
        if (m.type != H_SCHEMA) {
            sl_errf(err, "%s: message at offset %llu: the first message is not a schema (type %d)", name,
                    (unsigned long long)a->msg_off, m.type);
            goto fail;
        }
        if (schema_init(a, &f, &m.header, err) < 0)
            goto fail;
    }
    a->cols = sl_xcalloc(a->nfields ? (size_t)a->nfields : 1, sizeof *a->cols);
    return a;
fail:
    sl_arrow_close(a);
    return NULL;
}

int sl_arrow_next(sl_arrow *a, sl_textdoc *d, sl_err *err)
{
    for (;;) {
        int got = sl_rowslots_next(&a->slots, d, a->name, a->o.skip_bad, &a->invalid, &a->skipped, err);
        if (got > 0)
            return 1;
        if (got < 0) {
            a->done = 1;
            batch_free(a);
            return -1;
        }
        int rc = next_rows(a, err);
        if (rc <= 0)
            return rc;
    }
}

uint64_t sl_arrow_invalid_utf8(const sl_arrow *a)
{
    return a->invalid;
}

uint64_t sl_arrow_skipped(const sl_arrow *a)
{
    return a->skipped;
}

void sl_arrow_close(sl_arrow *a)
{
    if (!a)
        return;
    batch_free(a);
    free(a->cols);
    for (int i = 0; i < a->ndicts; i++) {
        for (size_t c = 0; c < a->dicts[i].nchunks; c++) {
            arr_free(&a->dicts[i].chunks[c].arr);
            mem_free(&a->dicts[i].chunks[c].mem);
        }
        free(a->dicts[i].chunks);
    }
    free(a->dicts);
    free(a->blocks);
    for (int i = 0; i < a->npool; i++)
        free(a->pool[i]);
    ZSTD_freeDStream(a->zs);
    if (a->lz)
        LZ4F_freeDecompressionContext(a->lz);
    for (int i = 0; i < a->nfields; i++)
        field_free(&a->fields[i]);
    free(a->fields);
    sl_rowslots_free(&a->slots);
    sl_buf_free(&a->meta);
    free(a->name);
    free(a);
}

/* ---- the Arrow schema of a Parquet file ------------------------------------------ */

/* (pyarrow restores neither for a dictionary-encoded column: its values
 * come back as the Parquet types say) */
static void hint_of(const ar_field *f, sl_arrow_hint *h)
{
    h->bool8 = f->bool8 && f->dict < 0;
    h->tz = f->type == T_TIMESTAMP && f->utc && f->dict < 0;
    h->tzoff = f->tzoff;
    h->nkids = f->nkids;
    h->kids = sl_xcalloc(f->nkids ? (size_t)f->nkids : 1, sizeof *h->kids);
    for (int i = 0; i < f->nkids; i++)
        hint_of(&f->kids[i], &h->kids[i]);
}

sl_arrow_hint *sl_arrow_schema_hints(const void *msg, size_t n, int *n_fields)
{
    sl_pq_mem m = {msg, n};
    sl_arrow *a = sl_xcalloc(1, sizeof *a);
    a->name = sl_xstrdup("ARROW:schema");
    a->rd = sl_pq_pread_mem;
    a->rd_ctx = &m;
    a->size = a->end = n;
    a->hints_only = 1;
    sl_arrow_hint *h = NULL;
    sl_err err = {{0}};
    fb f;
    ar_msg mm;
    if (read_msg(a, &f, &mm, &err) == 1 && mm.type == H_SCHEMA && schema_fields(a, &f, &mm.header, &err) == 0) {
        h = sl_xcalloc(a->nfields ? (size_t)a->nfields : 1, sizeof *h);
        for (int i = 0; i < a->nfields; i++)
            hint_of(&a->fields[i], &h[i]);
        *n_fields = a->nfields;
    }
    sl_arrow_close(a);
    return h;
}

void sl_arrow_hints_free(sl_arrow_hint *h, int n)
{
    for (int i = 0; h && i < n; i++)
        sl_arrow_hints_free(h[i].kids, h[i].nkids);
    free(h);
}

/* ---- datasets.save_to_disk folders ------------------------------------------------ */

static char *join(const char *dir, const char *name)
{
    sl_buf b = {0};
    size_t n = strlen(dir);
    sl_buf_printf(&b, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
    return b.data;
}

static void push(char ***files, size_t *n, size_t *cap, char *s)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        *files = sl_xrealloc(*files, *cap * sizeof **files);
    }
    (*files)[(*n)++] = s;
}

/* A plain name inside the folder (no directory part). */
static int plain_name(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int dataset_files(const char *dir, char ***files, size_t *n, size_t *cap, int depth, sl_err *err)
{
    struct stat st;
    char *state = join(dir, "state.json"), *dd = join(dir, "dataset_dict.json");
    int is_state = stat(state, &st) == 0 && S_ISREG(st.st_mode);
    int is_dict = !is_state && stat(dd, &st) == 0 && S_ISREG(st.st_mode);
    char *path = is_state ? state : dd;
    int rc = 0;
    char *text = NULL;
    size_t len = 0;
    sl_json_doc *doc = NULL;
    if (!is_state && !is_dict)
        goto out;
    rc = -1;
    if (depth > 2) {
        sl_errf(err, "%s: dataset folders nested too deep", dir);
        goto out;
    }
    if (sl_read_file(path, &text, &len, err) < 0)
        goto out;
    sl_json_opts jo = {0};
    doc = sl_json_parse(text, len, &jo, err);
    if (!doc) {
        sl_err_prefix(err, "%s", path);
        goto out;
    }
    const sl_json *root = sl_json_root(doc);
    const sl_json *list = sl_json_get(root, is_state ? "_data_files" : "splits");
    if (!list || list->type != SL_JSON_ARRAY) {
        sl_errf(err, "%s: no \"%s\" list", path, is_state ? "_data_files" : "splits");
        goto out;
    }
    if (is_state) {
        const sl_json *ix = sl_json_get(root, "_indices_data_files");
        if (ix && ix->type == SL_JSON_ARRAY && ix->n > 0) {
            sl_errf(err, "%s: a dataset with an indices mapping (flatten_indices() it first) is not supported", path);
            goto out;
        }
    }
    for (size_t i = 0; i < list->n; i++) {
        const sl_json *e = list->kids[i];
        const char *nm = is_state ? sl_json_get_str(e, "filename") : e->type == SL_JSON_STRING ? e->str : NULL;
        if (!nm || !plain_name(nm)) {
            sl_errf(err, "%s: entry %zu of \"%s\" is not a file name in the folder", path, i,
                    is_state ? "_data_files" : "splits");
            goto out;
        }
        char *p = join(dir, nm);
        if (is_state) {
            push(files, n, cap, p);
            continue;
        }
        int sub = dataset_files(p, files, n, cap, depth + 1, err);
        if (sub == 0)
            sl_errf(err, "%s: split folder %s has no state.json", path, p);
        free(p);
        if (sub <= 0)
            goto out;
    }
    rc = 1;
out:
    sl_json_free(doc);
    free(text);
    free(state);
    free(dd);
    return rc;
}

int sl_arrow_dataset_files(const char *dir, char ***files, size_t *n, sl_err *err)
{
    size_t cap = 0;
    *files = NULL;
    *n = 0;
    int rc = dataset_files(dir, files, n, &cap, 0, err);
    if (rc <= 0) {
        sl_list_free(*files, *n);
        *files = NULL;
        *n = 0;
    }
    return rc;
}
