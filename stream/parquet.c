/* Parquet files as documents (see parquet.h).
 *
 * The schema (a flattened tree in the footer) becomes a tree of nodes;
 * each leaf is a column chunk per row group, read by parquet_col.c a batch
 * of rows at a time. A row is then assembled from its leaves' levels (the
 * Dremel record assembly): a node's first leaf tells, by its definition
 * level, whether the node is null or (for a list) empty, and by its
 * repetition level whether a list goes on. Each row knows where its entries
 * and values start in every leaf, so rows are assembled independently, on
 * OpenMP threads. */
#include "stream/parquet.h"

#include <omp.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "stream/arrow_ipc.h"
#include "stream/parquet_col.h"
#include "stream/pyjson.h"
#include "stream/rowslot.h"

#define MAX_FOOTER ((uint64_t)1 << 30)
#define MAX_SCHEMA_DEPTH 100
#define BATCH_ROWS 4096

enum { K_PRIM, K_STRUCT, K_LIST, K_MAP };

/* How a leaf's values are written (pyarrow's type for the column). */
enum {
    F_BOOL,
    F_I32,
    F_U32,
    F_I64,
    F_U64,
    F_FLOAT,
    F_DOUBLE,
    F_FLOAT16,
    F_STRING,
    F_BINARY,
    F_DATE,
    F_TIME32,
    F_TIME64,
    F_TIMESTAMP,
    F_INT96,
    F_DECIMAL,
    F_NULL,
    F_UUID,
    F_BOOL8, /* INT(8) of the Arrow schema's arrow.bool8: nonzero true */
};

typedef struct pq_node {
    const pq_schema_el *el;
    char *name_json; /* the name as a JSON string with ':' */
    int kind;
    int repeated, optional;
    int def, rep; /* levels at this node, itself included */
    int nkids, *kids;
    int leaf; /* K_PRIM: its leaf index */
    int first_leaf, nleaves;
    int rnode;      /* K_LIST, K_MAP: the repeated node */
    int elem;       /* K_LIST: the element node (== rnode for 2-level lists) */
    int key, value; /* K_MAP: key and value nodes (value -1 when absent) */
    int fmt, unit, utc, scale;
    int tzoff; /* F_TIMESTAMP: the Arrow schema's fixed offset, minutes east */
} pq_node;

struct sl_pq {
    sl_pq_opts o;
    char *name;
    sl_pread_fn rd;
    void *rd_ctx;
    uint64_t size;
    pq_meta m;
    pq_node *nodes;
    int nnodes;
    int nleaves;
    int *leaf_node; /* node of each leaf */
    pq_leafinfo *leaves;
    char **leaf_paths;
    int text_leaf, id_leaf; /* -1 when none */
    int text_node, id_node;
    /* the current row group */
    int64_t rg;     /* next row group to start */
    int64_t rg_cur; /* the one being read, -1 none */
    int64_t rg_rows_left;
    uint64_t row_base; /* rows of the file before the current batch */
    pq_col *cols;
    pq_colbatch *cb;
    /* the batch's documents */
    sl_rowslots slots;
    size_t batch_bytes;
    size_t max_entries;
    uint64_t invalid, skipped;
    int warned_skip;
};

int sl_pq_sniff(const void *head, size_t n)
{
    return n >= 4 && !memcmp(head, "PAR1", 4);
}

int sl_pq_pread_fd(void *ctx, void *buf, size_t n, uint64_t off, sl_err *err)
{
    int fd = *(int *)ctx;
    size_t done = 0;
    while (done < n) {
        ssize_t got = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return sl_errf(err, "read error at offset %llu: %s", (unsigned long long)(off + done), strerror(errno));
        }
        if (got == 0)
            return sl_errf(err, "unexpected end of file at offset %llu", (unsigned long long)(off + done));
        done += (size_t)got;
    }
    return 0;
}

int sl_pq_pread_mem(void *ctx, void *buf, size_t n, uint64_t off, sl_err *err)
{
    const sl_pq_mem *m = ctx;
    if (off > m->len || n > m->len - off)
        return sl_errf(err, "unexpected end of data at offset %llu", (unsigned long long)off);
    memcpy(buf, m->data + off, n);
    return 0;
}

/* ---- schema --------------------------------------------------------------- */

typedef struct {
    sl_pq *q;
    int pos; /* next schema element */
    sl_err *err;
} schema_ctx;

static int leaf_fmt(pq_node *nd, sl_err *err, const char *file)
{
    const pq_schema_el *e = nd->el;
    int lt = e->logical, ct = e->converted;
    nd->scale = e->scale;
    switch (e->type) {
    case PQ_BOOLEAN: nd->fmt = F_BOOL; break;
    case PQ_INT32:
        if (lt == PQ_LT_DATE || ct == PQ_CT_DATE)
            nd->fmt = F_DATE;
        else if (lt == PQ_LT_TIME || ct == PQ_CT_TIME_MILLIS)
            nd->fmt = F_TIME32, nd->unit = PQ_UNIT_MILLIS;
        else if (lt == PQ_LT_DECIMAL || ct == PQ_CT_DECIMAL)
            nd->fmt = F_DECIMAL;
        else if ((lt == PQ_LT_INTEGER && !e->lt_signed) || ct == PQ_CT_UINT_8 || ct == PQ_CT_UINT_16 ||
                 ct == PQ_CT_UINT_32)
            nd->fmt = F_U32;
        else if (lt == PQ_LT_UNKNOWN)
            nd->fmt = F_NULL;
        else
            nd->fmt = F_I32;
        break;
    case PQ_INT64:
        if (lt == PQ_LT_TIMESTAMP)
            nd->fmt = F_TIMESTAMP, nd->unit = e->lt_unit ? e->lt_unit : PQ_UNIT_MICROS, nd->utc = e->lt_utc;
        else if (ct == PQ_CT_TIMESTAMP_MILLIS || ct == PQ_CT_TIMESTAMP_MICROS)
            nd->fmt = F_TIMESTAMP, nd->unit = ct == PQ_CT_TIMESTAMP_MILLIS ? PQ_UNIT_MILLIS : PQ_UNIT_MICROS,
            nd->utc = 1;
        else if (lt == PQ_LT_TIME)
            nd->fmt = F_TIME64, nd->unit = e->lt_unit ? e->lt_unit : PQ_UNIT_MICROS;
        else if (ct == PQ_CT_TIME_MICROS)
            nd->fmt = F_TIME64, nd->unit = PQ_UNIT_MICROS;
        else if (lt == PQ_LT_DECIMAL || ct == PQ_CT_DECIMAL)
            nd->fmt = F_DECIMAL;
        else if ((lt == PQ_LT_INTEGER && !e->lt_signed) || ct == PQ_CT_UINT_64)
            nd->fmt = F_U64;
        else if (lt == PQ_LT_UNKNOWN)
            nd->fmt = F_NULL;
        else
            nd->fmt = F_I64;
        break;
    case PQ_INT96: nd->fmt = F_INT96; break;
    case PQ_FLOAT: nd->fmt = F_FLOAT; break;
    case PQ_DOUBLE: nd->fmt = F_DOUBLE; break;
    case PQ_BYTE_ARRAY:
        if (lt == PQ_LT_STRING || lt == PQ_LT_ENUM || lt == PQ_LT_JSON || ct == PQ_CT_UTF8 || ct == PQ_CT_ENUM ||
            ct == PQ_CT_JSON)
            nd->fmt = F_STRING;
        else if (lt == PQ_LT_DECIMAL || ct == PQ_CT_DECIMAL)
            nd->fmt = F_DECIMAL;
        else if (lt == PQ_LT_UNKNOWN)
            nd->fmt = F_NULL;
        else
            nd->fmt = F_BINARY;
        break;
    case PQ_FLBA:
        if (e->type_length < 0 || e->type_length > (1 << 20))
            return sl_errf(err, "%s: column %s: FIXED_LEN_BYTE_ARRAY of length %d", file, e->name, e->type_length);
        if (lt == PQ_LT_DECIMAL || ct == PQ_CT_DECIMAL)
            nd->fmt = F_DECIMAL;
        else if (lt == PQ_LT_FLOAT16 && e->type_length == 2)
            nd->fmt = F_FLOAT16;
        else if (lt == PQ_LT_UUID && e->type_length == 16)
            nd->fmt = F_UUID;
        else
            nd->fmt = F_BINARY;
        break;
    default: return sl_errf(err, "%s: column %s: unknown physical type %d", file, e->name, e->type);
    }
    if (nd->fmt == F_DECIMAL && e->type == PQ_FLBA && e->type_length > 32) /* (Arrow's widest: 76 digits) */
        return sl_errf(err, "%s: column %s: decimals wider than 32 bytes are not supported", file, e->name);
    if ((nd->fmt == F_TIMESTAMP || nd->fmt == F_TIME64) && (nd->unit < 1 || nd->unit > 3))
        return sl_errf(err, "%s: column %s: unknown time unit", file, e->name);
    return 0;
}

/* Whether a schema element's whole name is s (a name holding a NUL is not
 * its part before the NUL) */
static int name_is(const pq_schema_el *e, const char *s, size_t n)
{
    return e->name_len == n && !memcmp(e->name, s, n);
}

/* Builds the node for schema element ctx->pos and its subtree; returns its
 * index or -1. */
static int build(schema_ctx *c, int depth, int def, int rep, const char *prefix)
{
    sl_pq *q = c->q;
    if (depth > MAX_SCHEMA_DEPTH)
        return sl_errf(c->err, "%s: schema nested deeper than %d", q->name, MAX_SCHEMA_DEPTH);
    if (c->pos >= q->m.nschema)
        return sl_errf(c->err, "%s: schema has fewer elements than its groups claim", q->name);
    const pq_schema_el *e = &q->m.schema[c->pos++];
    int idx = q->nnodes++;
    pq_node *nd = &q->nodes[idx];
    memset(nd, 0, sizeof *nd);
    nd->el = e;
    nd->leaf = -1;
    nd->rnode = nd->elem = nd->key = nd->value = -1;
    nd->repeated = e->repetition == PQ_REPEATED;
    nd->optional = e->repetition == PQ_OPTIONAL;
    nd->def = def + (depth > 0 && e->repetition != PQ_REQUIRED);
    nd->rep = rep + nd->repeated;
    sl_buf nm = {0};
    sl_json_put_str(&nm, e->name, e->name_len);
    sl_buf_putc(&nm, ':');
    nd->name_json = nm.data;
    sl_buf path = {0};
    if (prefix && *prefix)
        sl_buf_printf(&path, "%s.%s", prefix, e->name);
    else
        sl_buf_puts(&path, depth > 0 ? e->name : "");
    nd->first_leaf = q->nleaves;
    if (e->num_children < 0 || e->num_children > q->m.nschema) {
        sl_buf_free(&path);
        return sl_errf(c->err, "%s: schema element %s has %d children", q->name, e->name, e->num_children);
    }
    if (e->num_children == 0 && depth > 0) {
        if (e->type < 0) {
            sl_buf_free(&path);
            return sl_errf(c->err, "%s: schema element %s has no type and no children", q->name, e->name);
        }
        nd->kind = K_PRIM;
        nd->leaf = q->nleaves++;
        q->leaf_node[nd->leaf] = idx;
        q->leaf_paths[nd->leaf] = path.data ? path.data : sl_xstrdup("");
        pq_leafinfo *li = &q->leaves[nd->leaf];
        li->type = e->type;
        li->type_length = e->type_length;
        li->max_def = nd->def;
        li->max_rep = nd->rep;
        li->path = q->leaf_paths[nd->leaf];
        nd->nleaves = 1;
        if (nd->rep > 32767 || nd->def > 32767)
            return sl_errf(c->err, "%s: schema too deep", q->name);
        return leaf_fmt(nd, c->err, q->name) < 0 ? -1 : idx;
    }
    nd->kind = K_STRUCT;
    nd->nkids = e->num_children;
    nd->kids = sl_xcalloc((size_t)(nd->nkids ? nd->nkids : 1), sizeof *nd->kids);
    for (int i = 0; i < nd->nkids; i++) {
        int k = build(c, depth + 1, q->nodes[idx].def, q->nodes[idx].rep, path.data);
        if (k < 0) {
            sl_buf_free(&path);
            return -1;
        }
        q->nodes[idx].kids[i] = k;
    }
    sl_buf_free(&path);
    nd = &q->nodes[idx];
    nd->nleaves = q->nleaves - nd->first_leaf;
    if (depth > 0 && nd->nleaves == 0)
        return sl_errf(c->err, "%s: group %s has no columns", q->name, e->name);
    int lt = e->logical, ct = e->converted;
    if (depth > 0 && (lt == PQ_LT_LIST || ct == PQ_CT_LIST) && nd->nkids == 1 && q->nodes[nd->kids[0]].repeated) {
        pq_node *r = &q->nodes[nd->kids[0]];
        nd->kind = K_LIST;
        nd->rnode = nd->kids[0];
        /* the element: parquet-format's backward-compatibility rules */
        const pq_schema_el *re = r->el;
        if (r->kind == K_PRIM || r->nkids != 1 || name_is(re, "array", 5) ||
            (re->name_len == e->name_len + 6 && !memcmp(re->name, e->name, e->name_len) &&
             !memcmp(re->name + e->name_len, "_tuple", 6)))
            nd->elem = nd->rnode;
        else
            nd->elem = r->kids[0];
    } else if (depth > 0 && (lt == PQ_LT_MAP || ct == PQ_CT_MAP || ct == PQ_CT_MAP_KEY_VALUE) && nd->nkids == 1 &&
               q->nodes[nd->kids[0]].repeated && q->nodes[nd->kids[0]].kind == K_STRUCT &&
               (q->nodes[nd->kids[0]].nkids == 1 || q->nodes[nd->kids[0]].nkids == 2)) {
        pq_node *r = &q->nodes[nd->kids[0]];
        nd->kind = K_MAP;
        nd->rnode = nd->kids[0];
        nd->key = r->kids[0];
        nd->value = r->nkids == 2 ? r->kids[1] : -1;
    }
    return idx;
}

/* The Arrow schema's hint h for node nd (the same shape, checked as it
 * goes: where the two differ, the Parquet types stand). */
static void apply_hint(sl_pq *q, pq_node *nd, const sl_arrow_hint *h)
{
    switch (nd->kind) {
    case K_PRIM:
        if (h->bool8 && nd->fmt == F_I32 && nd->el->logical == PQ_LT_INTEGER && nd->el->lt_bits == 8)
            nd->fmt = F_BOOL8;
        if (h->tz && nd->fmt == F_TIMESTAMP && nd->utc)
            nd->tzoff = h->tzoff;
        return;
    case K_STRUCT:
        if (h->nkids == nd->nkids)
            for (int i = 0; i < nd->nkids; i++)
                apply_hint(q, &q->nodes[nd->kids[i]], &h->kids[i]);
        return;
    case K_LIST:
        if (h->nkids == 1)
            apply_hint(q, &q->nodes[nd->elem], &h->kids[0]);
        return;
    case K_MAP:
        if (h->nkids == 1 && h->kids[0].nkids == 2) {
            apply_hint(q, &q->nodes[nd->key], &h->kids[0].kids[0]);
            if (nd->value >= 0)
                apply_hint(q, &q->nodes[nd->value], &h->kids[0].kids[1]);
        }
        return;
    }
}

/* What pyarrow's Arrow schema (ARROW:schema in the footer's metadata) adds
 * to the Parquet types: the arrow.bool8 extension, time zones. A schema
 * that cannot be read is passed over, as the metadata is optional. */
static void arrow_hints(sl_pq *q)
{
    for (int i = 0; i < q->m.nkv; i++) {
        const pq_kv *kv = &q->m.kv[i];
        if (!kv->key || !kv->value || strcmp(kv->key, "ARROW:schema"))
            continue;
        sl_buf msg = {0};
        int n = 0;
        sl_arrow_hint *h = NULL;
        if (sl_base64_decode(&msg, kv->value, kv->value_len) == 0 && msg.len)
            h = sl_arrow_schema_hints(msg.data, msg.len, &n);
        sl_buf_free(&msg);
        if (h && n == q->nodes[0].nkids) /* (the root: a struct of the top-level columns) */
            apply_hint(q, &q->nodes[0], &(sl_arrow_hint){.nkids = n, .kids = h});
        sl_arrow_hints_free(h, n);
        return;
    }
}

/* The node named by the dotted path `field` below node `at` (a name that
 * itself holds dots is matched whole first). */
static int find_path(const sl_pq *q, int at, const char *field)
{
    const pq_node *nd = &q->nodes[at];
    if (nd->kind != K_STRUCT)
        return -1;
    for (int i = 0; i < nd->nkids; i++)
        if (name_is(q->nodes[nd->kids[i]].el, field, strlen(field)))
            return nd->kids[i];
    for (const char *dot = strchr(field, '.'); dot; dot = strchr(dot + 1, '.')) {
        size_t n = (size_t)(dot - field);
        for (int i = 0; i < nd->nkids; i++) {
            const pq_node *k = &q->nodes[nd->kids[i]];
            if (name_is(k->el, field, n) && !k->repeated) {
                int r = find_path(q, nd->kids[i], dot + 1);
                if (r >= 0)
                    return r;
            }
        }
    }
    return -1;
}

static int schema_init(sl_pq *q, sl_err *err)
{
    int ns = q->m.nschema;
    if (ns < 1)
        return sl_errf(err, "%s: empty schema", q->name);
    q->nodes = sl_xcalloc((size_t)ns, sizeof *q->nodes);
    q->leaf_node = sl_xcalloc((size_t)ns, sizeof *q->leaf_node);
    q->leaves = sl_xcalloc((size_t)ns, sizeof *q->leaves);
    q->leaf_paths = sl_xcalloc((size_t)ns, sizeof *q->leaf_paths);
    schema_ctx c = {q, 0, err};
    if (build(&c, 0, 0, 0, NULL) < 0)
        return -1;
    if (c.pos != ns)
        return sl_errf(err, "%s: schema has %d elements outside its tree", q->name, ns - c.pos);
    for (int g = 0; g < q->m.nrg; g++)
        if (q->m.rgs[g].ncols != q->nleaves)
            return sl_errf(err, "%s: row group %d has %d columns, the schema %d", q->name, g, q->m.rgs[g].ncols,
                           q->nleaves);
    arrow_hints(q);
    /* the text column */
    int t = find_path(q, 0, q->o.field);
    if (t < 0) {
        sl_buf cols = {0};
        const pq_node *root = &q->nodes[0];
        for (int i = 0; i < root->nkids && cols.len < 300; i++)
            sl_buf_printf(&cols, "%s%s", i ? ", " : "", q->nodes[root->kids[i]].el->name);
        sl_errf(err, "%s: no column \"%s\" for the text (columns: %s%s); --field names it", q->name, q->o.field,
                cols.data ? cols.data : "none", cols.len >= 300 ? ", ..." : "");
        sl_buf_free(&cols);
        return -1;
    }
    const pq_node *tn = &q->nodes[t];
    if (tn->kind != K_PRIM || tn->el->type != PQ_BYTE_ARRAY || tn->rep > 0)
        return sl_errf(err, "%s: column \"%s\" is not a string column (the text must be one)", q->name, q->o.field);
    q->text_node = t;
    q->text_leaf = tn->leaf;
    q->id_node = q->id_leaf = -1;
    const pq_node *root = &q->nodes[0];
    for (int i = 0; i < root->nkids; i++) {
        const pq_node *k = &q->nodes[root->kids[i]];
        if (!name_is(k->el, "id", 2) || root->kids[i] == t)
            continue;
        if (k->kind != K_PRIM || k->repeated ||
            !(k->fmt == F_STRING || k->fmt == F_I32 || k->fmt == F_U32 || k->fmt == F_I64 || k->fmt == F_U64 ||
              k->fmt == F_FLOAT || k->fmt == F_DOUBLE || k->fmt == F_FLOAT16 || k->fmt == F_NULL))
            return sl_errf(err, "%s: column \"id\" is not a string or a number column", q->name);
        q->id_node = root->kids[i];
        q->id_leaf = k->leaf;
    }
    return 0;
}

/* ---- values ------------------------------------------------------------------ */

typedef struct {
    const sl_pq *q;
    size_t *e, *v; /* per leaf: the next entry and value */
    size_t *e_end; /* per leaf: the row's end entry */
    sl_buf *out;
    int invalid_mode;
    size_t invalid;
    int bad; /* levels inconsistent with the schema */
    int utf8_error;
    const char *bad_col;  /* the column of a value pyarrow refuses (bad_value) */
    const char *bad_what; /* and what it is */
    int depth;
} asm_ctx;

/* A value pyarrow refuses (a date Python's datetime cannot hold, a
 * decimal wider than Arrow's): the first one is the row's error; null
 * stands in the output. */
static void bad_value(asm_ctx *a, const pq_leafinfo *li, const char *what)
{
    if (!a->bad_col)
        a->bad_col = li->path, a->bad_what = what;
    sl_buf_puts(a->out, "null");
}

/* Writes value i of leaf l (node nd). */
static void put_value(asm_ctx *a, const pq_node *nd, int l, size_t i)
{
    const pq_colbatch *b = &a->q->cb[l];
    const pq_leafinfo *li = &a->q->leaves[l];
    sl_buf *out = a->out;
    int w = pq_value_width(li);
    const char *p = w ? b->fixed.data + i * (size_t)w : b->bytes.data + b->off[i];
    size_t n = w ? (size_t)w : b->off[i + 1] - b->off[i];
    int32_t i32;
    int64_t i64;
    switch (nd->fmt) {
    case F_BOOL: sl_buf_puts(out, p[0] ? "true" : "false"); return;
    case F_BOOL8:
        memcpy(&i32, p, 4);
        sl_buf_puts(out, i32 ? "true" : "false");
        return;
    case F_I32:
        memcpy(&i32, p, 4);
        sl_pyjson_i64(out, i32);
        return;
    case F_U32:
        memcpy(&i32, p, 4);
        sl_pyjson_u64(out, (uint32_t)i32);
        return;
    case F_I64:
        memcpy(&i64, p, 8);
        sl_pyjson_i64(out, i64);
        return;
    case F_U64:
        memcpy(&i64, p, 8);
        sl_pyjson_u64(out, (uint64_t)i64);
        return;
    case F_FLOAT: {
        float f;
        memcpy(&f, p, 4);
        sl_pyjson_float(out, (double)f);
        return;
    }
    case F_DOUBLE: {
        double d;
        memcpy(&d, p, 8);
        sl_pyjson_float(out, d);
        return;
    }
    case F_FLOAT16: sl_pyjson_float16(out, (uint16_t)((uint8_t)p[0] | (uint8_t)p[1] << 8)); return;
    case F_STRING: sl_rowslot_put_string(out, p, n, a->invalid_mode, &a->utf8_error, &a->invalid); return;
    case F_BINARY: sl_pyjson_base64(out, (const uint8_t *)p, n); return;
    case F_DATE:
        memcpy(&i32, p, 4);
        if (!sl_pyjson_date_ok(i32)) {
            bad_value(a, li, "a date out of range (years 1 to 9999)");
            return;
        }
        sl_pyjson_date(out, i32);
        return;
    case F_TIME32:
    case F_TIME64:
        if (nd->fmt == F_TIME32) {
            memcpy(&i32, p, 4);
            i64 = i32;
        } else {
            memcpy(&i64, p, 8);
        }
        if (!sl_pyjson_time_ok(i64, nd->unit)) {
            /* no time of day: refused, as in Arrow IPC files (pyarrow
             * wraps some such values around the day, refuses others) */
            bad_value(a, li, "a time of day out of range");
            return;
        }
        sl_pyjson_time(out, i64, nd->unit);
        return;
    case F_TIMESTAMP:
        memcpy(&i64, p, 8);
        if (sl_pyjson_timestamp_tz(out, i64, nd->unit, nd->utc, nd->tzoff) < 0)
            bad_value(a, li, "a timestamp out of range (years 1 to 9999)");
        return;
    case F_INT96: {
        uint64_t nanos;
        uint32_t jd;
        memcpy(&nanos, p, 8);
        memcpy(&jd, p + 8, 4);
        int64_t days = (int64_t)jd - 2440588;
        sl_pyjson_timestamp(out, (int64_t)((uint64_t)days * UINT64_C(86400000000000) + nanos), PQ_UNIT_NANOS, 0);
        return;
    }
    case F_DECIMAL: {
        uint64_t hi, lo;
        if (li->type == PQ_INT32) {
            memcpy(&i32, p, 4);
            lo = (uint64_t)(int64_t)i32;
            hi = i32 < 0 ? UINT64_MAX : 0;
        } else if (li->type == PQ_INT64) {
            memcpy(&i64, p, 8);
            lo = (uint64_t)i64;
            hi = i64 < 0 ? UINT64_MAX : 0;
        } else { /* big-endian two's complement of n bytes (FIXED_LEN_BYTE_ARRAY, BYTE_ARRAY), up to 32 */
            if (n > 32) {
                bad_value(a, li, "a decimal wider than 32 bytes");
                return;
            }
            uint64_t limb[4], ext = n && (p[0] & 0x80) ? UINT64_MAX : 0;
            for (int k = 0; k < 4; k++)
                limb[k] = ext;
            for (size_t k = 0; k < n; k++) { /* byte k from the end: bits 8k on */
                unsigned sh = 8 * (unsigned)(k & 7);
                limb[k >> 3] = (limb[k >> 3] & ~((uint64_t)0xFF << sh)) | (uint64_t)(uint8_t)p[n - 1 - k] << sh;
            }
            sl_pyjson_decimal_wide(out, limb, 4, nd->scale);
            return;
        }
        sl_pyjson_decimal(out, hi, lo, nd->scale);
        return;
    }
    case F_UUID: {
        static const char hex[] = "0123456789abcdef";
        char u[38];
        int k = 0;
        u[k++] = '"';
        for (int j = 0; j < 16; j++) {
            if (j == 4 || j == 6 || j == 8 || j == 10)
                u[k++] = '-';
            u[k++] = hex[(uint8_t)p[j] >> 4];
            u[k++] = hex[(uint8_t)p[j] & 15];
        }
        u[k++] = '"';
        sl_buf_append(out, u, (size_t)k);
        return;
    }
    case F_NULL:
    default: sl_buf_puts(out, "null"); return;
    }
}

static inline int def_at(const asm_ctx *a, int l)
{
    return a->q->leaves[l].max_def ? a->q->cb[l].def[a->e[l]] : 0;
}

static inline int rep_at(const asm_ctx *a, int l)
{
    return a->q->leaves[l].max_rep ? a->q->cb[l].rep[a->e[l]] : 0;
}

/* Passes over one entry of every leaf of nd (a null or empty node has one
 * per leaf). */
static void skip_node(asm_ctx *a, const pq_node *nd)
{
    for (int l = nd->first_leaf; l < nd->first_leaf + nd->nleaves; l++) {
        if (a->e[l] >= a->e_end[l]) {
            a->bad = 1;
            return;
        }
        if (def_at(a, l) == a->q->leaves[l].max_def)
            a->v[l]++;
        a->e[l]++;
    }
}

static void write_field(asm_ctx *a, const pq_node *nd);

static void write_content(asm_ctx *a, const pq_node *nd);

static int more(const asm_ctx *a, int l, int rep)
{
    return a->e[l] < a->e_end[l] && rep_at(a, l) == rep;
}

static void write_list(asm_ctx *a, const pq_node *nd)
{
    const sl_pq *q = a->q;
    const pq_node *r = &q->nodes[nd->rnode];
    int l = nd->first_leaf;
    if (def_at(a, l) < r->def) {
        sl_buf_puts(a->out, "[]");
        skip_node(a, nd);
        return;
    }
    sl_buf_putc(a->out, '[');
    int first = 1;
    do {
        if (!first)
            sl_buf_putc(a->out, ',');
        first = 0;
        if (nd->kind == K_MAP) {
            sl_buf_putc(a->out, '[');
            write_field(a, &q->nodes[nd->key]);
            sl_buf_putc(a->out, ',');
            if (nd->value >= 0)
                write_field(a, &q->nodes[nd->value]);
            else
                sl_buf_puts(a->out, "null");
            sl_buf_putc(a->out, ']');
        } else if (nd->elem == nd->rnode)
            write_content(a, r);
        else
            write_field(a, &q->nodes[nd->elem]);
    } while (!a->bad && more(a, l, r->rep));
    sl_buf_putc(a->out, ']');
}

static void write_content(asm_ctx *a, const pq_node *nd)
{
    const sl_pq *q = a->q;
    if (a->bad)
        return;
    switch (nd->kind) {
    case K_PRIM: {
        int l = nd->leaf;
        if (a->e[l] >= a->e_end[l] || def_at(a, l) != q->leaves[l].max_def) {
            a->bad = 1;
            return;
        }
        put_value(a, nd, l, a->v[l]);
        a->e[l]++;
        a->v[l]++;
        return;
    }
    case K_STRUCT: {
        sl_buf_putc(a->out, '{');
        int first = 1;
        for (int i = 0; i < nd->nkids; i++) {
            const pq_node *k = &q->nodes[nd->kids[i]];
            if (nd->kids[i] == q->text_node) {
                skip_node(a, k);
                continue;
            }
            if (!first)
                sl_buf_putc(a->out, ',');
            first = 0;
            sl_buf_puts(a->out, k->name_json);
            write_field(a, k);
        }
        sl_buf_putc(a->out, '}');
        return;
    }
    default: write_list(a, nd); return;
    }
}

/* A bare repeated field (no LIST annotation): a list of its contents. */
static void write_repeated(asm_ctx *a, const pq_node *nd)
{
    int l = nd->first_leaf;
    if (def_at(a, l) < nd->def) {
        sl_buf_puts(a->out, "[]");
        skip_node(a, nd);
        return;
    }
    sl_buf_putc(a->out, '[');
    int first = 1;
    do {
        if (!first)
            sl_buf_putc(a->out, ',');
        first = 0;
        write_content(a, nd);
    } while (!a->bad && more(a, l, nd->rep));
    sl_buf_putc(a->out, ']');
}

static void write_field(asm_ctx *a, const pq_node *nd)
{
    if (a->bad)
        return;
    int l = nd->first_leaf;
    if (a->e[l] >= a->e_end[l]) {
        a->bad = 1;
        return;
    }
    if (++a->depth > MAX_SCHEMA_DEPTH * 2) {
        a->bad = 1;
        return;
    }
    if (nd->repeated)
        write_repeated(a, nd);
    else if (nd->optional && def_at(a, l) < nd->def) {
        sl_buf_puts(a->out, "null");
        skip_node(a, nd);
    } else
        write_content(a, nd);
    a->depth--;
}

/* ---- batches ------------------------------------------------------------------ */

/* Assembles row r of the batch into slot s. */
static void assemble(const sl_pq *q, size_t r, sl_rowslot *s, size_t *e, size_t *v, size_t *e_end)
{
    sl_textdoc *d = &s->d;
    sl_rowslot_reset(s);
    for (int l = 0; l < q->nleaves; l++) {
        const pq_colbatch *b = &q->cb[l];
        if (q->leaves[l].max_rep) {
            e[l] = b->row_e[r];
            e_end[l] = b->row_e[r + 1];
        } else {
            e[l] = r;
            e_end[l] = r + 1;
        }
        v[l] = b->row_v[r];
    }
    /* the text */
    int tl = q->text_leaf;
    const pq_colbatch *tb = &q->cb[tl];
    if (def_at(&(asm_ctx){.q = q, .e = e}, tl) != q->leaves[tl].max_def) {
        s->status = 1;
        sl_errf(&s->err, "%s: row %llu: the text column \"%s\" is null", q->name, (unsigned long long)s->row,
                q->o.field);
        return;
    }
    const char *t = tb->bytes.data + tb->off[v[tl]];
    if (sl_rowslot_text(s, q->name, t, tb->off[v[tl] + 1] - tb->off[v[tl]], q->o.invalid_utf8) < 0)
        return;
    asm_ctx a = {.q = q, .e = e, .v = v, .e_end = e_end, .invalid_mode = q->o.invalid_utf8};
    /* the id */
    if (q->id_leaf >= 0 && q->nodes[q->id_node].fmt != F_NULL &&
        def_at(&a, q->id_leaf) == q->leaves[q->id_leaf].max_def) {
        const pq_node *in = &q->nodes[q->id_node];
        a.out = &d->id;
        if (in->fmt == F_STRING || in->fmt == F_BINARY) {
            const pq_colbatch *ib = &q->cb[q->id_leaf];
            const char *p = ib->bytes.data + ib->off[v[q->id_leaf]];
            sl_rowslot_string_id(s, p, ib->off[v[q->id_leaf] + 1] - ib->off[v[q->id_leaf]], &a.invalid);
        } else {
            put_value(&a, in, q->id_leaf, v[q->id_leaf]);
            d->id_is_string = 0;
        }
    } else {
        s->gen_id = 1;
    }
    /* the other columns */
    a.out = &d->meta;
    sl_buf_putc(&d->meta, '{');
    const pq_node *root = &q->nodes[0];
    int first = 1;
    for (int i = 0; i < root->nkids && !a.bad; i++) {
        int k = root->kids[i];
        if (k == q->text_node || k == q->id_node)
            continue;
        if (!first)
            sl_buf_putc(&d->meta, ',');
        first = 0;
        sl_buf_puts(&d->meta, q->nodes[k].name_json);
        write_field(&a, &q->nodes[k]);
    }
    sl_buf_putc(&d->meta, '}');
    s->invalid += a.invalid;
    for (int l = 0; l < q->nleaves && !a.bad; l++) {
        if (l == q->text_leaf || l == q->id_leaf)
            continue;
        if (e[l] != e_end[l])
            a.bad = 1;
    }
    if (a.bad) {
        s->status = -1;
        sl_errf(&s->err, "%s: row %llu: the columns' levels do not agree with the schema", q->name,
                (unsigned long long)s->row);
    } else if (a.bad_col) {
        s->status = -1;
        sl_errf(&s->err, "%s: row %llu, column %s: %s", q->name, (unsigned long long)s->row, a.bad_col, a.bad_what);
    } else if (a.utf8_error) {
        s->status = -1;
        sl_errf(&s->err, "%s: row %llu: invalid UTF-8 in a string column", q->name, (unsigned long long)s->row);
    }
}

/* The first byte of a row group: its earliest column chunk. */
static uint64_t rowgroup_start(const pq_rowgroup *rg)
{
    uint64_t first = UINT64_MAX;
    for (int i = 0; i < rg->ncols; i++) {
        const pq_chunk *c = &rg->cols[i];
        int64_t s = c->data_page_offset;
        if (c->dictionary_page_offset > 0 && c->dictionary_page_offset < s)
            s = c->dictionary_page_offset;
        if (s >= 0 && (uint64_t)s < first)
            first = (uint64_t)s;
    }
    return first;
}

/* Ends the current row group; keep: its columns' buffers stay for the
 * next one (pq_col_open empties them), else they are freed. */
static void close_rowgroup(sl_pq *q, int keep)
{
    if (!q->cols)
        return;
    for (int l = 0; l < q->nleaves && !keep; l++)
        pq_col_close(&q->cols[l]);
    q->rg_cur = -1;
}

/* Decodes the next batch of rows into the slots: 1, 0 at the end, -1 error. */
static int next_batch(sl_pq *q, sl_err *err)
{
    q->slots.n = q->slots.next = 0;
    while (q->rg_cur < 0 || q->rg_rows_left == 0) {
        close_rowgroup(q, 1);
        if (q->rg >= q->o.rg_end)
            return 0;
        int g = (int)q->rg++;
        const pq_rowgroup *rg = &q->m.rgs[g];
        if (rg->num_rows < 0)
            return sl_errf(err, "%s: row group %d: negative row count", q->name, g);
        if (rg->num_rows == 0) /* no rows: its chunks are not read (pyarrow writes an empty table's with offset 0) */
            continue;
        if (q->o.byte_end > 0) { /* a part's share: the row groups that start in it */
            uint64_t first = rowgroup_start(rg);
            if (first < q->o.byte_begin || first >= q->o.byte_end) {
                q->row_base += (uint64_t)rg->num_rows;
                continue;
            }
        }
        for (int l = 0; l < q->nleaves; l++)
            if (pq_col_open(&q->cols[l], &q->leaves[l], &rg->cols[l], g, q->name, q->size, q->rd, q->rd_ctx,
                            q->max_entries, err) < 0)
                return -1;
        q->rg_cur = g;
        q->rg_rows_left = rg->num_rows;
    }
    size_t want = q->rg_rows_left < BATCH_ROWS ? (size_t)q->rg_rows_left : BATCH_ROWS;
    size_t got = 0;
    /* the text column first: it decides how many rows fit the batch */
    if (pq_col_read(&q->cols[q->text_leaf], want, q->batch_bytes, &q->cb[q->text_leaf], &got, err) < 0)
        return -1;
    if (got == 0)
        return sl_errf(err, "%s: row group %lld, column %s: the chunk ends %lld rows early", q->name,
                       (long long)q->rg_cur, q->leaves[q->text_leaf].path, (long long)q->rg_rows_left);
    size_t n = got;
    int failed = 0;
    sl_err ferr = {{0}};
    int nl = q->nleaves;
#pragma omp parallel for schedule(dynamic, 1) if (nl > 2)
    for (int l = 0; l < nl; l++) {
        if (l == q->text_leaf)
            continue;
        sl_err e = {{0}};
        size_t g = 0;
        int rc = pq_col_read(&q->cols[l], n, 0, &q->cb[l], &g, &e);
        if (rc == 0 && g != n)
            rc = sl_errf(&e, "%s: row group %lld, column %s: the chunk ends %zu rows early", q->name,
                         (long long)q->rg_cur, q->leaves[l].path, n - g);
        if (rc < 0) {
#pragma omp critical(pq_err)
            if (!failed || l < failed - 1) {
                failed = l + 1;
                ferr = e;
            }
        }
    }
    if (failed) {
        *err = ferr;
        return -1;
    }
    q->rg_rows_left -= (int64_t)n;
    sl_rowslots_fill(&q->slots, n, q->row_base + 1);
    q->row_base += n;
    const sl_pq *cq = q;
#pragma omp parallel
    {
        size_t *e = sl_xmalloc(3 * (size_t)nl * sizeof *e);
#pragma omp for schedule(dynamic, 16)
        for (size_t r = 0; r < n; r++)
            assemble(cq, r, &q->slots.v[r], e, e + nl, e + 2 * nl);
        free(e);
    }
    return 1;
}

/* ---- API ------------------------------------------------------------------------ */

sl_pq *sl_pq_open(const char *name, sl_pread_fn rd, void *ctx, uint64_t size, const sl_pq_opts *o, sl_err *err)
{
    sl_pq *q = sl_xcalloc(1, sizeof *q);
    q->o = *o;
    if (!q->o.field || !*q->o.field)
        q->o.field = "text";
    q->name = sl_xstrdup(name);
    q->rd = rd;
    q->rd_ctx = ctx;
    q->size = size;
    q->rg_cur = -1;
    size_t budget = q->o.mem_budget ? q->o.mem_budget : SL_DOCS_DEFAULT_MEM_BUDGET;
    q->batch_bytes = sl_docs_batch_cap(sl_mem_budget_split(budget).read_batch, 0);
    if (q->batch_bytes < ((size_t)64 << 10))
        q->batch_bytes = (size_t)64 << 10;
    q->max_entries = budget / 8 > ((size_t)1 << 20) ? budget / 8 : ((size_t)1 << 20);
    uint8_t tail[8], head[4];
    if (size < 12) {
        sl_errf(err, "%s: truncated Parquet file (%llu bytes, no footer)", name, (unsigned long long)size);
        goto fail;
    }
    if (rd(ctx, head, 4, 0, err) < 0 || rd(ctx, tail, 8, size - 8, err) < 0) {
        sl_err_prefix(err, "%s", name);
        goto fail;
    }
    if (memcmp(head, "PAR1", 4)) {
        sl_errf(err, "%s: not a Parquet file (no PAR1 magic)", name);
        goto fail;
    }
    if (!memcmp(tail + 4, "PARE", 4)) {
        sl_errf(err, "%s: encrypted Parquet file (encrypted footer): not supported", name);
        goto fail;
    }
    if (memcmp(tail + 4, "PAR1", 4)) {
        sl_errf(err, "%s: truncated Parquet file (no PAR1 footer magic at the end)", name);
        goto fail;
    }
    uint32_t flen = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
    if ((uint64_t)flen > size - 12 || flen > MAX_FOOTER) {
        sl_errf(err, "%s: footer length %u exceeds the file (%llu bytes)", name, flen, (unsigned long long)size);
        goto fail;
    }
    {
        uint8_t *f = sl_xmalloc(flen ? flen : 1);
        if (rd(ctx, f, flen, size - 8 - flen, err) < 0) {
            free(f);
            sl_err_prefix(err, "%s", name);
            goto fail;
        }
        int rc = pq_meta_decode(f, flen, &q->m, err);
        free(f);
        if (rc < 0) {
            sl_err_prefix(err, "%s", name);
            goto fail;
        }
    }
    if (q->m.encrypted) {
        sl_errf(err, "%s: encrypted Parquet file: not supported", name);
        goto fail;
    }
    if (schema_init(q, err) < 0)
        goto fail;
    if (q->o.rg_end <= 0 || q->o.rg_end > q->m.nrg)
        q->o.rg_end = q->m.nrg;
    if (q->o.rg_first < 0)
        q->o.rg_first = 0;
    q->rg = q->o.rg_first;
    for (int64_t g = 0; g < q->o.rg_first && g < q->m.nrg; g++)
        q->row_base += (uint64_t)q->m.rgs[g].num_rows;
    q->cols = sl_xcalloc((size_t)q->nleaves, sizeof *q->cols);
    q->cb = sl_xcalloc((size_t)q->nleaves, sizeof *q->cb);
    return q;
fail:
    sl_pq_close(q);
    return NULL;
}

int sl_pq_next(sl_pq *q, sl_textdoc *d, sl_err *err)
{
    for (;;) {
        int got = sl_rowslots_next(&q->slots, d, q->name, q->o.skip_bad, &q->invalid, &q->skipped, err);
        if (got > 0)
            return 1;
        if (got < 0) {
            q->o.rg_end = q->rg; /* nothing more is read */
            close_rowgroup(q, 0);
            return -1;
        }
        int rc = next_batch(q, err);
        if (rc <= 0) {
            if (rc < 0)
                q->o.rg_end = q->rg;
            return rc;
        }
    }
}

uint64_t sl_pq_invalid_utf8(const sl_pq *q)
{
    return q->invalid;
}

uint64_t sl_pq_skipped(const sl_pq *q)
{
    return q->skipped;
}

int64_t sl_pq_row_groups(const sl_pq *q)
{
    return q->m.nrg;
}

uint64_t sl_pq_row_group_bytes(const sl_pq *q, int64_t g)
{
    uint64_t n = 0;
    const pq_rowgroup *rg = &q->m.rgs[g];
    for (int i = 0; i < rg->ncols; i++)
        if (rg->cols[i].total_compressed > 0)
            n += (uint64_t)rg->cols[i].total_compressed;
    return n;
}

void sl_pq_close(sl_pq *q)
{
    if (!q)
        return;
    close_rowgroup(q, 0);
    for (int l = 0; q->cb && l < q->nleaves; l++)
        pq_colbatch_free(&q->cb[l]);
    free(q->cb);
    free(q->cols);
    sl_rowslots_free(&q->slots);
    for (int i = 0; i < q->nnodes; i++) {
        free(q->nodes[i].kids);
        free(q->nodes[i].name_json);
    }
    free(q->nodes);
    for (int i = 0; q->leaf_paths && i < q->nleaves; i++)
        free(q->leaf_paths[i]);
    free(q->leaf_paths);
    free(q->leaf_node);
    free(q->leaves);
    pq_meta_free(&q->m);
    free(q->name);
    free(q);
}
