/* PyTorch checkpoint files (torch.save's zip layout: ARCHIVE/data.pkl plus
 * one ARCHIVE/data/KEY entry per storage) behind model/tensors.h.
 *
 * The zip is read from its central directory (stored entries only, as
 * torch writes them; ZIP64 sizes and offsets understood). data.pkl is run
 * through a restricted unpickler that knows only what a state dict uses:
 * the opcodes of protocols 2-4 that build None/bool/int/float/str, tuples,
 * lists and dicts, the memo, persistent ids ('storage', TYPE, KEY, LOCATION,
 * NUMEL), and the globals collections.OrderedDict,
 * torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and
 * torch.*Storage. Any other global or opcode is an error: a checkpoint never
 * runs code. The result must be a dict of name -> tensor (other values are
 * skipped). Tensors may be views (offset, strides) of shared storages;
 * every view is checked to lie inside its storage, and every storage inside
 * its zip entry. Data is memory-mapped, not read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/model_impl.h"
#include "model/safetensors.h"
#include "model/tensors_impl.h"

typedef struct pt_storage {
    char *key;
    int st_dtype; /* sl_st_dtype */
    uint64_t numel;
    const unsigned char *data; /* numel elements, checked against the entry */
} pt_storage;

typedef struct pt_tensor {
    char *name;
    size_t storage;
    uint64_t offset; /* elements into the storage */
    int ndim;
    int64_t shape[SL_TENSOR_MAX_DIMS], stride[SL_TENSOR_MAX_DIMS];
    uint64_t numel;
} pt_tensor;

typedef struct pt_file {
    char *name;
    void *map; /* the file's bytes */
    size_t len;
    int mapped; /* map is an mmap (else the caller's memory) */
    pt_storage *s;
    size_t ns;
    pt_tensor *t;
    size_t nt;
} pt_file;

/* --- zip ------------------------------------------------------------------ */

typedef struct zentry {
    const char *name; /* not NUL-terminated */
    size_t name_len;
    const unsigned char *data;
    uint64_t size;
} zentry;

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Reads the central directory into *out (n entries). */
static int zip_entries(const pt_file *f, zentry **out, size_t *n, sl_err *err)
{
    const unsigned char *b = f->map;
    size_t len = f->len;
    if (len < 22)
        return sl_errf(err, "%s: not a zip file (PyTorch checkpoints are zip archives)", f->name);
    size_t eocd = SIZE_MAX;
    for (size_t i = len - 22 + 1; i-- > 0 && len - i <= 22 + 65535;)
        if (le(b + i, 4) == 0x06054b50) {
            eocd = i;
            break;
        }
    if (eocd == SIZE_MAX)
        return sl_errf(err, "%s: no zip end-of-central-directory record (not a zip file, or truncated)", f->name);
    uint64_t count = le(b + eocd + 10, 2), cd_size = le(b + eocd + 12, 4), cd_off = le(b + eocd + 16, 4);
    if (count == 0xFFFF || cd_off == 0xFFFFFFFF || cd_size == 0xFFFFFFFF) { /* ZIP64 */
        if (eocd < 20 || le(b + eocd - 20, 4) != 0x07064b50)
            return sl_errf(err, "%s: offset %zu: ZIP64 locator missing", f->name, eocd);
        uint64_t z = le(b + eocd - 20 + 8, 8);
        if (len < 56 || z > len - 56 || le(b + z, 4) != 0x06064b50)
            return sl_errf(err, "%s: offset %llu: bad ZIP64 end-of-central-directory record", f->name,
                           (unsigned long long)z);
        count = le(b + z + 32, 8);
        cd_size = le(b + z + 40, 8);
        cd_off = le(b + z + 48, 8);
    }
    if (cd_off > len || cd_size > len - cd_off || count > cd_size / 46)
        return sl_errf(err,
                       "%s: zip central directory (offset %llu, %llu bytes, %llu entries) past the end of the file",
                       f->name, (unsigned long long)cd_off, (unsigned long long)cd_size, (unsigned long long)count);
    zentry *e = sl_xcalloc(count + 1, sizeof *e);
    size_t p = (size_t)cd_off, end = (size_t)(cd_off + cd_size);
    for (uint64_t k = 0; k < count; k++) {
        if (p + 46 > end || le(b + p, 4) != 0x02014b50) {
            free(e);
            return sl_errf(err, "%s: offset %zu: bad zip central directory entry", f->name, p);
        }
        uint64_t method = le(b + p + 10, 2), csize = le(b + p + 20, 4), usize = le(b + p + 24, 4);
        uint64_t nlen = le(b + p + 28, 2), xlen = le(b + p + 30, 2), clen = le(b + p + 32, 2);
        uint64_t loff = le(b + p + 42, 4);
        if (p + 46 + nlen + xlen + clen > end) {
            free(e);
            return sl_errf(err, "%s: offset %zu: zip central directory entry past its end", f->name, p);
        }
        /* ZIP64 extra field: the 0xFFFFFFFF values, in order */
        for (size_t x = p + 46 + nlen; x + 4 <= p + 46 + nlen + xlen;) {
            uint64_t id = le(b + x, 2), sz = le(b + x + 2, 2);
            size_t q = x + 4;
            if (q + sz > p + 46 + nlen + xlen)
                break;
            if (id == 1) {
                uint64_t *vals[3] = {&usize, &csize, &loff};
                for (int i = 0; i < 3; i++)
                    if (*vals[i] == 0xFFFFFFFF && q + 8 <= x + 4 + sz) {
                        *vals[i] = le(b + q, 8);
                        q += 8;
                    }
            }
            x += 4 + sz;
        }
        e[k].name = (const char *)b + p + 46;
        e[k].name_len = (size_t)nlen;
        if (method != 0 || csize != usize) {
            free(e);
            return sl_errf(err, "%s: zip entry '%.*s' is compressed (method %llu); torch.save stores entries", f->name,
                           (int)nlen, (const char *)b + p + 46, (unsigned long long)method);
        }
        if (loff > len - 30 || le(b + loff, 4) != 0x04034b50) {
            free(e);
            return sl_errf(err, "%s: zip entry '%.*s': local header at offset %llu missing", f->name, (int)nlen,
                           (const char *)b + p + 46, (unsigned long long)loff);
        }
        uint64_t data = loff + 30 + le(b + loff + 26, 2) + le(b + loff + 28, 2);
        if (data > len || usize > len - data) {
            free(e);
            return sl_errf(err, "%s: zip entry '%.*s' (%llu bytes at offset %llu) runs past the end of the file",
                           f->name, (int)nlen, (const char *)b + p + 46, (unsigned long long)usize,
                           (unsigned long long)data);
        }
        e[k].data = b + data;
        e[k].size = usize;
        p += 46 + nlen + xlen + clen;
    }
    *out = e;
    *n = (size_t)count;
    return 0;
}

/* --- the restricted unpickler ---------------------------------------------- */

enum { V_NONE, V_BOOL, V_INT, V_FLOAT, V_STR, V_LIST, V_DICT, V_GLOBAL, V_STORAGE, V_TENSOR, V_MARK };
enum { G_ODICT, G_REBUILD_TENSOR, G_REBUILD_PARAM, G_STORAGE };

typedef struct val {
    int type;
    int64_t i;                  /* INT, BOOL; GLOBAL: G_*; STORAGE: index */
    int st;                     /* GLOBAL G_STORAGE: sl_st_dtype */
    char *s;                    /* STR (NUL-terminated copy) */
    size_t len;                 /* STR */
    struct val **items, **keys; /* LIST/tuple items; DICT values and keys */
    size_t n, cap;
    pt_tensor t; /* TENSOR */
} val;

typedef struct unpickler {
    pt_file *f;
    const unsigned char *p;
    size_t n, i, op_at;
    const zentry *entries;
    size_t nentries;
    const char *prefix;
    size_t prefix_len;
    val **pool;
    size_t npool, cappool;
    val **stack;
    size_t nstack, capstack;
    val **memo;
    size_t nmemo;
    sl_err *err;
} unpickler;

static val *mk(unpickler *u, int type)
{
    if (u->npool == u->cappool) {
        u->cappool = u->cappool ? 2 * u->cappool : 256;
        u->pool = sl_xrealloc(u->pool, u->cappool * sizeof *u->pool);
    }
    val *v = sl_xcalloc(1, sizeof *v);
    v->type = type;
    return u->pool[u->npool++] = v;
}

static void add_item(val *l, val *key, val *v)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->items = sl_xrealloc(l->items, l->cap * sizeof *l->items);
        if (l->type == V_DICT)
            l->keys = sl_xrealloc(l->keys, l->cap * sizeof *l->keys);
    }
    if (l->type == V_DICT)
        l->keys[l->n] = key;
    l->items[l->n++] = v;
}

static int perr(unpickler *u, const char *what)
{
    return sl_errf(u->err, "%s: data.pkl offset %zu: %s", u->f->name, u->op_at, what);
}

static void push(unpickler *u, val *v)
{
    if (u->nstack == u->capstack) {
        u->capstack = u->capstack ? 2 * u->capstack : 64;
        u->stack = sl_xrealloc(u->stack, u->capstack * sizeof *u->stack);
    }
    u->stack[u->nstack++] = v;
}

static val *pop(unpickler *u)
{
    if (!u->nstack || u->stack[u->nstack - 1]->type == V_MARK) {
        perr(u, "stack underflow");
        return NULL;
    }
    return u->stack[--u->nstack];
}

/* Index of the topmost mark, or SIZE_MAX. */
static size_t find_mark(unpickler *u)
{
    for (size_t k = u->nstack; k-- > 0;)
        if (u->stack[k]->type == V_MARK)
            return k;
    perr(u, "no mark on the stack");
    return SIZE_MAX;
}

static int need(unpickler *u, size_t k)
{
    if (u->n - u->i < k)
        return perr(u, "truncated pickle");
    return 0;
}

static const struct {
    const char *name;
    int st;
} storages[] = {
    {"FloatStorage", SL_ST_F32},  {"HalfStorage", SL_ST_F16}, {"BFloat16Storage", SL_ST_BF16},
    {"DoubleStorage", SL_ST_F64}, {"LongStorage", SL_ST_I64}, {"IntStorage", SL_ST_I32},
    {"ShortStorage", SL_ST_I16},  {"CharStorage", SL_ST_I8},  {"ByteStorage", SL_ST_U8},
    {"BoolStorage", SL_ST_BOOL},
};

static val *global(unpickler *u, const char *mod, size_t ml, const char *name, size_t nl)
{
#define IS(s, l, lit) ((l) == sizeof(lit) - 1 && !memcmp((s), (lit), (l)))
    val *g = mk(u, V_GLOBAL);
    if (IS(mod, ml, "collections") && IS(name, nl, "OrderedDict"))
        g->i = G_ODICT;
    else if (IS(mod, ml, "torch._utils") && IS(name, nl, "_rebuild_tensor_v2"))
        g->i = G_REBUILD_TENSOR;
    else if (IS(mod, ml, "torch._utils") && IS(name, nl, "_rebuild_parameter"))
        g->i = G_REBUILD_PARAM;
    else {
        for (size_t k = 0; IS(mod, ml, "torch") && k < sizeof storages / sizeof *storages; k++)
            if (strlen(storages[k].name) == nl && !memcmp(name, storages[k].name, nl)) {
                g->i = G_STORAGE;
                g->st = storages[k].st;
                return g;
            }
        char msg[400];
        snprintf(msg, sizeof msg, "global '%.*s.%.*s' is not allowed (a checkpoint must not run code)",
                 (int)(ml > 100 ? 100 : ml), mod, (int)(nl > 100 ? 100 : nl), name);
        perr(u, msg);
        return NULL;
    }
#undef IS
    return g;
}

/* BINPERSID: ('storage', TYPE, KEY, LOCATION, NUMEL) -> the storage. */
static val *persistent(unpickler *u, val *pid)
{
    if (pid->type != V_LIST || pid->n < 5 || pid->items[0]->type != V_STR || strcmp(pid->items[0]->s, "storage") ||
        pid->items[1]->type != V_GLOBAL || pid->items[1]->i != G_STORAGE || pid->items[2]->type != V_STR ||
        pid->items[4]->type != V_INT || pid->items[4]->i < 0) {
        perr(u, "persistent id is not ('storage', torch.*Storage, key, location, numel)");
        return NULL;
    }
    const char *key = pid->items[2]->s;
    int st = pid->items[1]->st;
    uint64_t numel = (uint64_t)pid->items[4]->i;
    pt_file *f = u->f;
    for (size_t k = 0; k < f->ns; k++)
        if (!strcmp(f->s[k].key, key)) {
            if (f->s[k].st_dtype != st || f->s[k].numel != numel) {
                perr(u, "storage referenced twice with different types or sizes");
                return NULL;
            }
            val *v = mk(u, V_STORAGE);
            v->i = (int64_t)k;
            return v;
        }
    /* its entry: PREFIX/data/KEY */
    const zentry *e = NULL;
    size_t kl = strlen(key);
    for (size_t k = 0; k < u->nentries && !e; k++)
        if (u->entries[k].name_len == u->prefix_len + 5 + kl && !memcmp(u->entries[k].name, u->prefix, u->prefix_len) &&
            !memcmp(u->entries[k].name + u->prefix_len, "data/", 5) &&
            !memcmp(u->entries[k].name + u->prefix_len + 5, key, kl))
            e = &u->entries[k];
    char msg[300];
    if (!e) {
        snprintf(msg, sizeof msg, "storage '%.100s' has no entry %.*sdata/%.100s in the zip", key, (int)u->prefix_len,
                 u->prefix, key);
        perr(u, msg);
        return NULL;
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(numel, (uint64_t)sl_st_dtype_size(st), &bytes) || bytes > e->size) {
        snprintf(msg, sizeof msg, "storage '%.100s': %llu %s elements need more than its %llu bytes (truncated?)", key,
                 (unsigned long long)numel, sl_st_dtype_name(st), (unsigned long long)e->size);
        perr(u, msg);
        return NULL;
    }
    f->s = sl_xrealloc(f->s, (f->ns + 1) * sizeof *f->s);
    f->s[f->ns] = (pt_storage){.key = sl_xstrdup(key), .st_dtype = st, .numel = numel, .data = e->data};
    val *v = mk(u, V_STORAGE);
    v->i = (int64_t)f->ns++;
    return v;
}

static int int_tuple(const val *v, int64_t *out, int *n)
{
    if (v->type != V_LIST || v->n > SL_TENSOR_MAX_DIMS)
        return -1;
    for (size_t k = 0; k < v->n; k++) {
        if (v->items[k]->type != V_INT || v->items[k]->i < 0)
            return -1;
        out[k] = v->items[k]->i;
    }
    *n = (int)v->n;
    return 0;
}

/* REDUCE: callable global applied to an argument tuple. */
static val *reduce(unpickler *u, val *fn, val *args)
{
    if (fn->type != V_GLOBAL || args->type != V_LIST) {
        perr(u, "REDUCE of something other than an allowed global");
        return NULL;
    }
    if (fn->i == G_ODICT) {
        if (args->n) {
            perr(u, "OrderedDict with arguments");
            return NULL;
        }
        return mk(u, V_DICT);
    }
    if (fn->i == G_REBUILD_PARAM) {
        if (args->n < 1 || args->items[0]->type != V_TENSOR) {
            perr(u, "_rebuild_parameter without a tensor");
            return NULL;
        }
        return args->items[0];
    }
    if (fn->i != G_REBUILD_TENSOR || args->n < 4 || args->items[0]->type != V_STORAGE ||
        args->items[1]->type != V_INT || args->items[1]->i < 0) {
        perr(u, "_rebuild_tensor_v2 arguments are not (storage, offset, size, stride, ...)");
        return NULL;
    }
    val *v = mk(u, V_TENSOR);
    pt_tensor *t = &v->t;
    t->storage = (size_t)args->items[0]->i;
    t->offset = (uint64_t)args->items[1]->i;
    int ns = 0;
    if (int_tuple(args->items[2], t->shape, &t->ndim) < 0 || int_tuple(args->items[3], t->stride, &ns) < 0 ||
        ns != t->ndim) {
        perr(u, "tensor size/stride are not tuples of non-negative integers of the same length (at most 8)");
        return NULL;
    }
    /* every element inside the storage */
    uint64_t numel = 1, last = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        if (__builtin_mul_overflow(numel, (uint64_t)t->shape[d], &numel)) {
            perr(u, "tensor size overflows");
            return NULL;
        }
        uint64_t span;
        if (t->shape[d] && (__builtin_mul_overflow((uint64_t)(t->shape[d] - 1), (uint64_t)t->stride[d], &span) ||
                            __builtin_add_overflow(last, span, &last))) {
            perr(u, "tensor view overflows");
            return NULL;
        }
    }
    t->numel = numel;
    if (numel && last >= u->f->s[t->storage].numel) {
        char msg[200];
        snprintf(msg, sizeof msg, "tensor view (offset %llu, last element %llu) outside its storage of %llu elements",
                 (unsigned long long)t->offset, (unsigned long long)last,
                 (unsigned long long)u->f->s[t->storage].numel);
        perr(u, msg);
        return NULL;
    }
    return v;
}

static val *unpickle(unpickler *u)
{
    for (;;) {
        u->op_at = u->i;
        if (need(u, 1) < 0)
            return NULL;
        unsigned op = u->p[u->i++];
        val *v = NULL, *a, *b;
        size_t k, m;
        switch (op) {
        case 0x80: /* PROTO */
            if (need(u, 1) < 0)
                return NULL;
            u->i++;
            continue;
        case 0x95: /* FRAME */
            if (need(u, 8) < 0)
                return NULL;
            u->i += 8;
            continue;
        case '.': /* STOP */
            if (u->nstack != 1) {
                perr(u, "STOP with a stack of other than one value");
                return NULL;
            }
            return u->stack[0];
        case '(': push(u, mk(u, V_MARK)); continue;
        case 'N': push(u, mk(u, V_NONE)); continue;
        case 0x88:
        case 0x89:
            v = mk(u, V_BOOL);
            v->i = op == 0x88;
            push(u, v);
            continue;
        case ')':
        case ']': push(u, mk(u, V_LIST)); continue;
        case '}': push(u, mk(u, V_DICT)); continue;
        case 'K':
        case 'M':
        case 'J': {
            int w = op == 'K' ? 1 : op == 'M' ? 2 : 4;
            if (need(u, (size_t)w) < 0)
                return NULL;
            v = mk(u, V_INT);
            uint64_t x = le(u->p + u->i, w);
            v->i = w == 4 ? (int64_t)(int32_t)(uint32_t)x : (int64_t)x;
            u->i += (size_t)w;
            push(u, v);
            continue;
        }
        case 0x8a: { /* LONG1 */
            if (need(u, 1) < 0)
                return NULL;
            size_t w = u->p[u->i++];
            if (w > 8 || need(u, w) < 0) {
                perr(u, "LONG1 wider than 8 bytes");
                return NULL;
            }
            uint64_t x = w ? le(u->p + u->i, (int)w) : 0;
            if (w && w < 8 && (u->p[u->i + w - 1] & 0x80))
                x |= ~0ull << (8 * w); /* sign-extend */
            v = mk(u, V_INT);
            v->i = (int64_t)x;
            u->i += w;
            push(u, v);
            continue;
        }
        case 'G': { /* BINFLOAT, big-endian */
            if (need(u, 8) < 0)
                return NULL;
            uint64_t x = 0;
            for (int j = 0; j < 8; j++)
                x = x << 8 | u->p[u->i + (size_t)j];
            v = mk(u, V_FLOAT);
            v->i = (int64_t)x; /* the bits; no float is used */
            u->i += 8;
            push(u, v);
            continue;
        }
        case 'X':
        case 0x8c: { /* BINUNICODE, SHORT_BINUNICODE */
            int w = op == 'X' ? 4 : 1;
            if (need(u, (size_t)w) < 0)
                return NULL;
            uint64_t l = le(u->p + u->i, w);
            u->i += (size_t)w;
            if (l > u->n - u->i) {
                perr(u, "string past the end of the pickle");
                return NULL;
            }
            v = mk(u, V_STR);
            v->s = sl_xstrndup((const char *)u->p + u->i, (size_t)l);
            v->len = (size_t)l;
            u->i += (size_t)l;
            push(u, v);
            continue;
        }
        case 'c': { /* GLOBAL module\nname\n */
            const char *s = (const char *)u->p + u->i, *nl1 = memchr(s, '\n', u->n - u->i);
            const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)((const char *)u->p + u->n - nl1 - 1)) : NULL;
            if (!nl2) {
                perr(u, "truncated GLOBAL");
                return NULL;
            }
            if (!(v = global(u, s, (size_t)(nl1 - s), nl1 + 1, (size_t)(nl2 - nl1 - 1))))
                return NULL;
            u->i = (size_t)(nl2 + 1 - (const char *)u->p);
            push(u, v);
            continue;
        }
        case 0x93: /* STACK_GLOBAL */
            if (!(b = pop(u)) || !(a = pop(u)))
                return NULL;
            if (a->type != V_STR || b->type != V_STR) {
                perr(u, "STACK_GLOBAL of non-strings");
                return NULL;
            }
            if (!(v = global(u, a->s, a->len, b->s, b->len)))
                return NULL;
            push(u, v);
            continue;
        case 't':
        case 'l': /* TUPLE, LIST from the mark */
            if ((k = find_mark(u)) == SIZE_MAX)
                return NULL;
            v = mk(u, V_LIST);
            for (m = k + 1; m < u->nstack; m++)
                add_item(v, NULL, u->stack[m]);
            u->nstack = k;
            push(u, v);
            continue;
        case 0x85:
        case 0x86:
        case 0x87: { /* TUPLE1..3 */
            size_t w = op - 0x84;
            if (u->nstack < w) {
                perr(u, "stack underflow");
                return NULL;
            }
            v = mk(u, V_LIST);
            for (m = u->nstack - w; m < u->nstack; m++) {
                if (u->stack[m]->type == V_MARK) {
                    perr(u, "mark inside a tuple");
                    return NULL;
                }
                add_item(v, NULL, u->stack[m]);
            }
            u->nstack -= w;
            push(u, v);
            continue;
        }
        case 'a': /* APPEND */
            if (!(a = pop(u)))
                return NULL;
            if (!u->nstack || u->stack[u->nstack - 1]->type != V_LIST) {
                perr(u, "APPEND to a non-list");
                return NULL;
            }
            add_item(u->stack[u->nstack - 1], NULL, a);
            continue;
        case 'e':
        case 'u': /* APPENDS, SETITEMS */
            if ((k = find_mark(u)) == SIZE_MAX)
                return NULL;
            if (!k || u->stack[k - 1]->type != (op == 'e' ? V_LIST : V_DICT) ||
                (op == 'u' && (u->nstack - k - 1) % 2)) {
                perr(u, op == 'e' ? "APPENDS to a non-list" : "SETITEMS to a non-dict");
                return NULL;
            }
            for (m = k + 1; m < u->nstack; m += op == 'e' ? 1 : 2)
                add_item(u->stack[k - 1], op == 'e' ? NULL : u->stack[m], u->stack[op == 'e' ? m : m + 1]);
            u->nstack = k;
            continue;
        case 's': /* SETITEM */
            if (!(b = pop(u)) || !(a = pop(u)))
                return NULL;
            if (!u->nstack || u->stack[u->nstack - 1]->type != V_DICT) {
                perr(u, "SETITEM to a non-dict");
                return NULL;
            }
            add_item(u->stack[u->nstack - 1], a, b);
            continue;
        case 'q':
        case 'r':
        case 0x94: { /* BINPUT, LONG_BINPUT, MEMOIZE */
            size_t idx = u->nmemo;
            if (op != 0x94) {
                int w = op == 'q' ? 1 : 4;
                if (need(u, (size_t)w) < 0)
                    return NULL;
                idx = (size_t)le(u->p + u->i, w);
                u->i += (size_t)w;
            }
            if (!u->nstack || u->stack[u->nstack - 1]->type == V_MARK || idx > u->n) {
                perr(u, "bad memo put");
                return NULL;
            }
            if (idx >= u->nmemo) {
                u->memo = sl_xrealloc(u->memo, (idx + 1) * sizeof *u->memo);
                memset(u->memo + u->nmemo, 0, (idx + 1 - u->nmemo) * sizeof *u->memo);
                u->nmemo = idx + 1;
            }
            u->memo[idx] = u->stack[u->nstack - 1];
            continue;
        }
        case 'h':
        case 'j': { /* BINGET, LONG_BINGET */
            int w = op == 'h' ? 1 : 4;
            if (need(u, (size_t)w) < 0)
                return NULL;
            size_t idx = (size_t)le(u->p + u->i, w);
            u->i += (size_t)w;
            if (idx >= u->nmemo || !u->memo[idx]) {
                perr(u, "memo get of an unset index");
                return NULL;
            }
            push(u, u->memo[idx]);
            continue;
        }
        case 'Q': /* BINPERSID */
            if (!(a = pop(u)) || !(v = persistent(u, a)))
                return NULL;
            push(u, v);
            continue;
        case 'R': /* REDUCE */
            if (!(b = pop(u)) || !(a = pop(u)) || !(v = reduce(u, a, b)))
                return NULL;
            push(u, v);
            continue;
        case 'b': /* BUILD: state for a dict (OrderedDict's _metadata) or a tensor: ignored */
            if (!(b = pop(u)))
                return NULL;
            if (!u->nstack || (u->stack[u->nstack - 1]->type != V_DICT && u->stack[u->nstack - 1]->type != V_TENSOR)) {
                perr(u, "BUILD of something other than a dict or tensor");
                return NULL;
            }
            continue;
        default: {
            char msg[100];
            snprintf(msg, sizeof msg, "pickle opcode 0x%02x is not allowed in a checkpoint", op);
            perr(u, msg);
            return NULL;
        }
        }
    }
}

static void pt_close(void *p)
{
    pt_file *f = p;
    if (!f)
        return;
    for (size_t k = 0; k < f->ns; k++)
        free(f->s[k].key);
    free(f->s);
    for (size_t k = 0; k < f->nt; k++)
        free(f->t[k].name);
    free(f->t);
    if (f->map && f->mapped)
        munmap(f->map, f->len);
    free(f->name);
    free(f);
}

static int parse(pt_file *f, sl_err *err)
{
    zentry *e = NULL;
    size_t ne = 0;
    if (zip_entries(f, &e, &ne, err) < 0)
        return -1;
    const zentry *pkl = NULL;
    for (size_t k = 0; k < ne; k++) {
        const char *sl = memchr(e[k].name, '/', e[k].name_len);
        if (sl && e[k].name_len - (size_t)(sl - e[k].name) == 9 && !memcmp(sl, "/data.pkl", 9)) {
            pkl = &e[k];
            break;
        }
    }
    if (!pkl) {
        free(e);
        return sl_errf(err, "%s: no ARCHIVE/data.pkl in the zip (not a torch.save checkpoint)", f->name);
    }
    unpickler u = {.f = f,
                   .p = pkl->data,
                   .n = (size_t)pkl->size,
                   .entries = e,
                   .nentries = ne,
                   .prefix = pkl->name,
                   .prefix_len = pkl->name_len - 8,
                   .err = err};
    val *root = unpickle(&u);
    int rc = -1;
    if (root && root->type != V_DICT)
        sl_errf(err, "%s: data.pkl is not a dict of tensors (a state dict)", f->name);
    else if (root) {
        rc = 0;
        f->t = sl_xcalloc(root->n + 1, sizeof *f->t);
        for (size_t k = 0; k < root->n && !rc; k++) {
            if (root->keys[k]->type != V_STR || root->items[k]->type != V_TENSOR)
                continue; /* not a tensor entry */
            for (size_t j = 0; j < f->nt; j++)
                if (!strcmp(f->t[j].name, root->keys[k]->s))
                    rc = sl_errf(err, "%s: tensor '%s' appears twice", f->name, root->keys[k]->s);
            f->t[f->nt] = root->items[k]->t;
            f->t[f->nt++].name = sl_xstrdup(root->keys[k]->s);
        }
    }
    for (size_t k = 0; k < u.npool; k++) {
        free(u.pool[k]->s);
        free(u.pool[k]->items);
        free(u.pool[k]->keys);
        free(u.pool[k]);
    }
    free(u.pool);
    free(u.stack);
    free(u.memo);
    free(e);
    return rc;
}

static void *pt_open(const char *path, sl_err *err)
{
    void *map;
    size_t len;
    if (sl_model_map_file(path, &map, &len, err) < 0)
        return NULL;
    pt_file *f = sl_xcalloc(1, sizeof *f);
    f->name = sl_xstrdup(path);
    f->map = map;
    f->len = len;
    f->mapped = 1;
    if (parse(f, err) < 0) {
        pt_close(f);
        return NULL;
    }
    return f;
}

void *sl_tensors_pt_parse(const void *bytes, size_t len, const char *name, sl_err *err)
{
    pt_file *f = sl_xcalloc(1, sizeof *f);
    f->name = sl_xstrdup(name);
    f->map = (void *)bytes;
    f->len = len;
    if (parse(f, err) < 0) {
        pt_close(f);
        return NULL;
    }
    return f;
}

static const char *pt_name(const void *p)
{
    return ((const pt_file *)p)->name;
}

static size_t pt_count(const void *p)
{
    return ((const pt_file *)p)->nt;
}

static void fill(const pt_file *f, const pt_tensor *t, sl_tensor_info *info)
{
    sl_tensors_st_info(info, t->name, f->name, f->s[t->storage].st_dtype, t->ndim, t->shape, t->numel);
}

static void pt_at(const void *p, size_t i, sl_tensor_info *info)
{
    fill(p, &((const pt_file *)p)->t[i], info);
}

static const pt_tensor *lookup(const pt_file *f, const char *name)
{
    for (size_t k = 0; k < f->nt; k++)
        if (!strcmp(f->t[k].name, name))
            return &f->t[k];
    return NULL;
}

static int pt_find(const void *p, const char *name, sl_tensor_info *info)
{
    const pt_tensor *t = lookup(p, name);
    if (t)
        fill(p, t, info);
    return t != NULL;
}

static int pt_read_f32(const void *p, const sl_tensor_info *info, float *out, sl_err *err)
{
    const pt_file *f = p;
    const pt_tensor *t = lookup(f, info->name);
    if (!t)
        return sl_errf(err, "%s: missing tensor '%s'", f->name, info->name);
    const pt_storage *s = &f->s[t->storage];
    size_t es = sl_st_dtype_size(s->st_dtype);
    /* row-major strides: read in place; otherwise gather the elements first */
    int contiguous = 1;
    int64_t want = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->stride[d] != want)
            contiguous = 0;
        want *= t->shape[d];
    }
    unsigned char *tmp = NULL;
    const unsigned char *src = s->data + t->offset * es;
    if (!contiguous && t->numel) {
        tmp = sl_xmalloc((size_t)t->numel * es);
        int64_t idx[SL_TENSOR_MAX_DIMS] = {0};
        for (uint64_t k = 0; k < t->numel; k++) {
            uint64_t at = t->offset;
            for (int d = 0; d < t->ndim; d++)
                at += (uint64_t)idx[d] * (uint64_t)t->stride[d];
            memcpy(tmp + k * es, s->data + at * es, es);
            for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->shape[d]; d--)
                idx[d] = 0;
        }
        src = tmp;
    }
    sl_st_tensor view = {.name = t->name, .dtype = (sl_st_dtype)s->st_dtype, .numel = t->numel, .data = src};
    int rc = sl_st_to_f32(NULL, &view, out, err);
    free(tmp);
    return rc;
}

const sl_tensors_fmt sl_tensors_pytorch = {
    .name = "pytorch",
    .single = "pytorch_model.bin",
    .index = "pytorch_model.bin.index.json",
    .open_file = pt_open,
    .close_file = pt_close,
    .file_name = pt_name,
    .count = pt_count,
    .at = pt_at,
    .find = pt_find,
    .read_f32 = pt_read_f32,
};
