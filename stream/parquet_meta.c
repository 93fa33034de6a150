/* Parquet FileMetaData and PageHeader decoding (see parquet_meta.h). */
#include "stream/parquet_meta.h"

#include <stdlib.h>
#include <string.h>

#include "stream/thrift.h"

static char *dup_bin(sl_thrift *t, size_t *len)
{
    size_t n;
    const uint8_t *s = sl_thrift_binary(t, &n);
    if (len)
        *len = n;
    return sl_xstrndup((const char *)s, n); /* (all n bytes, NULs too) */
}

/* TimeUnit: a union of empty structs */
static int time_unit(sl_thrift *t)
{
    int unit = 0;
    int16_t last = 0, id;
    int ft;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (ft == SL_TT_STRUCT && id >= 1 && id <= 3)
            unit = id;
        sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
    return unit;
}

static void logical_type(sl_thrift *t, pq_schema_el *e)
{
    int16_t last = 0, id;
    int ft;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (ft != SL_TT_STRUCT) {
            sl_thrift_skip(t, ft);
            continue;
        }
        e->logical = id;
        int16_t l2 = 0, id2;
        int f2;
        sl_thrift_struct_begin(t);
        while (sl_thrift_field(t, &l2, &id2, &f2)) {
            if (id == PQ_LT_DECIMAL && id2 == 1 && f2 == SL_TT_I32)
                e->scale = sl_thrift_i32(t);
            else if (id == PQ_LT_DECIMAL && id2 == 2 && f2 == SL_TT_I32)
                e->precision = sl_thrift_i32(t);
            else if ((id == PQ_LT_TIME || id == PQ_LT_TIMESTAMP) && id2 == 1 && f2 <= SL_TT_FALSE)
                e->lt_utc = sl_thrift_bool(t, f2);
            else if ((id == PQ_LT_TIME || id == PQ_LT_TIMESTAMP) && id2 == 2 && f2 == SL_TT_STRUCT)
                e->lt_unit = time_unit(t);
            else if (id == PQ_LT_INTEGER && id2 == 1 && f2 == SL_TT_BYTE)
                e->lt_bits = sl_thrift_byte(t);
            else if (id == PQ_LT_INTEGER && id2 == 2 && f2 <= SL_TT_FALSE)
                e->lt_signed = sl_thrift_bool(t, f2);
            else
                sl_thrift_skip(t, f2);
        }
        sl_thrift_struct_end(t);
    }
    sl_thrift_struct_end(t);
}

static void schema_element(sl_thrift *t, pq_schema_el *e)
{
    memset(e, 0, sizeof *e);
    e->type = -1;
    e->repetition = -1;
    e->converted = -1;
    int16_t last = 0, id;
    int ft;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_I32)
            e->type = sl_thrift_i32(t);
        else if (id == 2 && ft == SL_TT_I32)
            e->type_length = sl_thrift_i32(t);
        else if (id == 3 && ft == SL_TT_I32)
            e->repetition = sl_thrift_i32(t);
        else if (id == 4 && ft == SL_TT_BINARY && !e->name)
            e->name = dup_bin(t, &e->name_len);
        else if (id == 5 && ft == SL_TT_I32)
            e->num_children = sl_thrift_i32(t);
        else if (id == 6 && ft == SL_TT_I32)
            e->converted = sl_thrift_i32(t);
        else if (id == 7 && ft == SL_TT_I32)
            e->scale = sl_thrift_i32(t);
        else if (id == 8 && ft == SL_TT_I32)
            e->precision = sl_thrift_i32(t);
        else if (id == 10 && ft == SL_TT_STRUCT)
            logical_type(t, e);
        else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
    if (!e->name)
        e->name = sl_xstrdup("");
}

static void column_meta(sl_thrift *t, pq_chunk *c)
{
    int16_t last = 0, id;
    int ft;
    c->has_meta = 1;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_I32)
            c->type = sl_thrift_i32(t);
        else if (id == 3 && ft == SL_TT_LIST) {
            int et;
            uint32_t n = sl_thrift_list(t, &et);
            c->path_len = (int)n;
            for (uint32_t i = 0; i < n && !t->bad; i++)
                sl_thrift_skip(t, et);
        } else if (id == 4 && ft == SL_TT_I32)
            c->codec = sl_thrift_i32(t);
        else if (id == 5 && ft == SL_TT_I64)
            c->num_values = sl_thrift_i64(t);
        else if (id == 6 && ft == SL_TT_I64)
            c->total_uncompressed = sl_thrift_i64(t);
        else if (id == 7 && ft == SL_TT_I64)
            c->total_compressed = sl_thrift_i64(t);
        else if (id == 9 && ft == SL_TT_I64)
            c->data_page_offset = sl_thrift_i64(t);
        else if (id == 11 && ft == SL_TT_I64)
            c->dictionary_page_offset = sl_thrift_i64(t);
        else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
}

static void column_chunk(sl_thrift *t, pq_chunk *c)
{
    memset(c, 0, sizeof *c);
    c->dictionary_page_offset = -1;
    c->type = -1;
    int16_t last = 0, id;
    int ft;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_BINARY) {
            size_t n;
            sl_thrift_binary(t, &n);
            c->external = 1;
        } else if (id == 3 && ft == SL_TT_STRUCT)
            column_meta(t, c);
        else if ((id == 8 && ft == SL_TT_STRUCT) || (id == 9 && ft == SL_TT_BINARY)) {
            c->encrypted = 1;
            sl_thrift_skip(t, ft);
        } else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
}

static void row_group(sl_thrift *t, pq_rowgroup *g)
{
    memset(g, 0, sizeof *g);
    int16_t last = 0, id;
    int ft;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_LIST && !g->cols) {
            int et;
            uint32_t n = sl_thrift_list(t, &et);
            if (et != SL_TT_STRUCT && n) {
                sl_thrift_fail(t, "row group columns are not structs");
                break;
            }
            g->cols = sl_xcalloc(n ? n : 1, sizeof *g->cols);
            g->ncols = (int)n;
            for (uint32_t i = 0; i < n && !t->bad; i++)
                column_chunk(t, &g->cols[i]);
        } else if (id == 3 && ft == SL_TT_I64)
            g->num_rows = sl_thrift_i64(t);
        else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
}

static void key_value(sl_thrift *t, pq_kv *kv)
{
    int16_t last = 0, id;
    int ft;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_BINARY && !kv->key)
            kv->key = dup_bin(t, NULL);
        else if (id == 2 && ft == SL_TT_BINARY && !kv->value) {
            size_t n;
            const uint8_t *s = sl_thrift_binary(t, &n);
            kv->value = sl_xstrndup((const char *)s, n);
            kv->value_len = n;
        } else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
}

int pq_meta_decode(const uint8_t *p, size_t n, pq_meta *m, sl_err *err)
{
    memset(m, 0, sizeof *m);
    sl_thrift t;
    sl_thrift_init(&t, p, n);
    int16_t last = 0, id;
    int ft, have_schema = 0, have_rows = 0, have_rgs = 0;
    sl_thrift_struct_begin(&t);
    while (sl_thrift_field(&t, &last, &id, &ft)) {
        if (id == 2 && ft == SL_TT_LIST && !m->schema) {
            int et;
            uint32_t k = sl_thrift_list(&t, &et);
            if (et != SL_TT_STRUCT && k) {
                sl_thrift_fail(&t, "schema elements are not structs");
                break;
            }
            m->schema = sl_xcalloc(k ? k : 1, sizeof *m->schema);
            for (uint32_t i = 0; i < k && !t.bad; i++) {
                m->nschema = (int)i + 1; /* counted first: a half-decoded element is freed too */
                schema_element(&t, &m->schema[i]);
            }
            have_schema = 1;
        } else if (id == 3 && ft == SL_TT_I64) {
            m->num_rows = sl_thrift_i64(&t);
            have_rows = 1;
        } else if (id == 4 && ft == SL_TT_LIST && !m->rgs) {
            int et;
            uint32_t k = sl_thrift_list(&t, &et);
            if (et != SL_TT_STRUCT && k) {
                sl_thrift_fail(&t, "row groups are not structs");
                break;
            }
            m->rgs = sl_xcalloc(k ? k : 1, sizeof *m->rgs);
            for (uint32_t i = 0; i < k && !t.bad; i++) {
                m->nrg = (int)i + 1;
                row_group(&t, &m->rgs[i]);
            }
            have_rgs = 1;
        } else if (id == 5 && ft == SL_TT_LIST && !m->kv) {
            int et;
            uint32_t k = sl_thrift_list(&t, &et);
            if (et != SL_TT_STRUCT && k) {
                sl_thrift_fail(&t, "key-value metadata are not structs");
                break;
            }
            m->kv = sl_xcalloc(k ? k : 1, sizeof *m->kv);
            for (uint32_t i = 0; i < k && !t.bad; i++) {
                m->nkv = (int)i + 1;
                key_value(&t, &m->kv[i]);
            }
        } else if (id == 6 && ft == SL_TT_BINARY && !m->created_by)
            m->created_by = dup_bin(&t, NULL);
        else if (id == 8 && ft == SL_TT_STRUCT) {
            m->encrypted = 1;
            sl_thrift_skip(&t, ft);
        } else
            sl_thrift_skip(&t, ft);
    }
    sl_thrift_struct_end(&t);
    if (t.bad) {
        pq_meta_free(m);
        return sl_errf(err, "footer offset %zu: corrupt metadata (%s)", t.bad_at, t.why);
    }
    if (!have_schema || !have_rows || !have_rgs) {
        pq_meta_free(m);
        return sl_errf(err, "footer: metadata without its %s",
                       !have_schema ? "schema"
                       : !have_rows ? "row count"
                                    : "row groups");
    }
    return 0;
}

void pq_meta_free(pq_meta *m)
{
    for (int i = 0; i < m->nschema; i++)
        free(m->schema[i].name);
    free(m->schema);
    for (int i = 0; i < m->nrg; i++)
        free(m->rgs[i].cols);
    free(m->rgs);
    for (int i = 0; i < m->nkv; i++) {
        free(m->kv[i].key);
        free(m->kv[i].value);
    }
    free(m->kv);
    free(m->created_by);
    memset(m, 0, sizeof *m);
}

static void data_page_header(sl_thrift *t, pq_page_header *h)
{
    int16_t last = 0, id;
    int ft;
    h->has_data = 1;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_I32)
            h->num_values = sl_thrift_i32(t);
        else if (id == 2 && ft == SL_TT_I32)
            h->encoding = sl_thrift_i32(t);
        else if (id == 3 && ft == SL_TT_I32)
            h->def_encoding = sl_thrift_i32(t);
        else if (id == 4 && ft == SL_TT_I32)
            h->rep_encoding = sl_thrift_i32(t);
        else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
}

static void data_page_header_v2(sl_thrift *t, pq_page_header *h)
{
    int16_t last = 0, id;
    int ft;
    h->has_v2 = 1;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_I32)
            h->num_values = sl_thrift_i32(t);
        else if (id == 2 && ft == SL_TT_I32)
            h->num_nulls = sl_thrift_i32(t);
        else if (id == 3 && ft == SL_TT_I32)
            h->num_rows = sl_thrift_i32(t);
        else if (id == 4 && ft == SL_TT_I32)
            h->encoding = sl_thrift_i32(t);
        else if (id == 5 && ft == SL_TT_I32)
            h->def_len = sl_thrift_i32(t);
        else if (id == 6 && ft == SL_TT_I32)
            h->rep_len = sl_thrift_i32(t);
        else if (id == 7 && ft <= SL_TT_FALSE)
            h->is_compressed = sl_thrift_bool(t, ft);
        else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
}

static void dict_page_header(sl_thrift *t, pq_page_header *h)
{
    int16_t last = 0, id;
    int ft;
    h->has_dict = 1;
    sl_thrift_struct_begin(t);
    while (sl_thrift_field(t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_I32)
            h->dict_num_values = sl_thrift_i32(t);
        else if (id == 2 && ft == SL_TT_I32)
            h->dict_encoding = sl_thrift_i32(t);
        else
            sl_thrift_skip(t, ft);
    }
    sl_thrift_struct_end(t);
}

int pq_page_header_decode(const uint8_t *p, size_t n, pq_page_header *h, size_t *used, sl_err *err)
{
    memset(h, 0, sizeof *h);
    h->type = -1;
    h->is_compressed = 1;
    h->uncompressed = h->compressed = -1;
    sl_thrift t;
    sl_thrift_init(&t, p, n);
    int16_t last = 0, id;
    int ft;
    sl_thrift_struct_begin(&t);
    while (sl_thrift_field(&t, &last, &id, &ft)) {
        if (id == 1 && ft == SL_TT_I32)
            h->type = sl_thrift_i32(&t);
        else if (id == 2 && ft == SL_TT_I32)
            h->uncompressed = sl_thrift_i32(&t);
        else if (id == 3 && ft == SL_TT_I32)
            h->compressed = sl_thrift_i32(&t);
        else if (id == 5 && ft == SL_TT_STRUCT)
            data_page_header(&t, h);
        else if (id == 7 && ft == SL_TT_STRUCT)
            dict_page_header(&t, h);
        else if (id == 8 && ft == SL_TT_STRUCT)
            data_page_header_v2(&t, h);
        else
            sl_thrift_skip(&t, ft);
    }
    sl_thrift_struct_end(&t);
    if (t.bad) {
        /* running out of bytes may only mean that the header is longer
         * than what was read: say so, the caller reads more */
        if (t.short_input)
            return 1;
        return sl_errf(err, "corrupt page header (%s at byte %zu)", t.why, t.bad_at);
    }
    if (h->type < 0 || h->uncompressed < 0 || h->compressed < 0)
        return sl_errf(err, "page header without its %s", h->type < 0 ? "type" : "sizes");
    *used = sl_thrift_pos(&t);
    return 0;
}

const char *pq_codec_name(int codec)
{
    static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
    return codec >= 0 && codec < 8 ? names[codec] : "unknown codec";
}

const char *pq_encoding_name(int enc)
{
    static const char *const names[] = {
        "PLAIN",          "GROUP_VAR_INT",       "PLAIN_DICTIONARY",        "RLE",
        "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
        "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
    return enc >= 0 && enc < 10 ? names[enc] : "unknown encoding";
}

const char *pq_type_name(int type)
{
    static const char *const names[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                        "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return type >= 0 && type < 8 ? names[type] : "unknown type";
}
