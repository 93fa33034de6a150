/* Documents made from the rows of a columnar file (see rowslot.h). */
#include "stream/rowslot.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/utf8.h"

void sl_rowslots_fill(sl_rowslots *rs, size_t n, uint64_t first_row)
{
    if (n > rs->cap) {
        rs->v = sl_xrealloc(rs->v, n * sizeof *rs->v);
        memset(rs->v + rs->cap, 0, (n - rs->cap) * sizeof *rs->v);
        rs->cap = n;
    }
    for (size_t i = 0; i < n; i++)
        rs->v[i].row = first_row + i;
    rs->n = n;
    rs->next = 0;
}

void sl_rowslot_reset(sl_rowslot *s)
{
    sl_buf_fit(&s->d.id, 64);
    sl_buf_fit(&s->d.text, 0);
    sl_buf_fit(&s->d.meta, 0);
    s->d.id_is_string = 1;
    s->gen_id = 0;
    s->status = 0;
    s->invalid = 0;
}

int sl_rowslot_text(sl_rowslot *s, const char *name, const char *t, size_t n, int mode)
{
    sl_buf *text = &s->d.text;
    size_t bad = sl_utf8_check(t, n);
    if (bad == n) {
        sl_buf_append(text, t, n);
    } else if (mode == SL_UTF8_ERROR) {
        s->status = -1;
        sl_errf(&s->err, "%s: row %llu: invalid UTF-8 (byte %zu of the text)", name, (unsigned long long)s->row, bad);
        return -1;
    } else {
        s->invalid += sl_utf8_repair(text, t, n, mode);
    }
    if (!text->data)
        sl_buf_append(text, "", 0);
    return 0;
}

void sl_rowslot_string_id(sl_rowslot *s, const char *p, size_t n, size_t *invalid)
{
    if (sl_utf8_check(p, n) == n)
        sl_buf_append(&s->d.id, p, n);
    else
        *invalid += sl_utf8_repair(&s->d.id, p, n, SL_UTF8_REPLACE);
}

void sl_rowslot_put_string(sl_buf *out, const char *s, size_t n, int mode, int *error, size_t *invalid)
{
    if (sl_utf8_check(s, n) == n) {
        sl_json_put_str(out, s, n);
        return;
    }
    if (mode == SL_UTF8_ERROR) {
        *error = 1;
        sl_json_put_str(out, "", 0);
        return;
    }
    sl_buf tmp = {0};
    *invalid += sl_utf8_repair(&tmp, s, n, mode);
    sl_json_put_str(out, tmp.data ? tmp.data : "", tmp.len);
    sl_buf_free(&tmp);
}

int sl_rowslots_next(sl_rowslots *rs, sl_textdoc *d, const char *name, int skip_bad, uint64_t *invalid,
                     uint64_t *skipped, sl_err *err)
{
    while (rs->next < rs->n) {
        sl_rowslot *s = &rs->v[rs->next++];
        if (s->status == 0) {
            sl_textdoc_swap(d, &s->d);
            d->id_is_string = s->d.id_is_string;
            d->source = name;
            d->line = 0;
            *invalid += s->invalid;
            if (s->gen_id) {
                sl_buf_clear(&d->id);
                sl_buf_printf(&d->id, "%s:%llu", name, (unsigned long long)s->row);
                d->id_is_string = 1;
            }
            return 1;
        }
        if (s->status == 1 && skip_bad) {
            ++*skipped;
            continue;
        }
        *err = s->err;
        rs->n = rs->next = 0;
        return -1;
    }
    return 0;
}

void sl_rowslots_free(sl_rowslots *rs)
{
    for (size_t i = 0; i < rs->cap; i++)
        sl_textdoc_free(&rs->v[i].d);
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}
