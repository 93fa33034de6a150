#include "shard/view.h"

int sl_view_row(const sl_row *row, uint32_t L, uint32_t l, sl_view_fn fn, void *ctx, sl_err *err)
{
    uint64_t base = row->index * (uint64_t)L;
    for (size_t i = 0; i < row->n_pieces; i++) {
        const sl_piece *p = &row->pieces[i];
        uint64_t g = base + p->offset;
        uint32_t done = 0;
        while (done < p->length) {
            uint64_t vr = g / l;
            uint32_t vo = (uint32_t)(g % l);
            uint32_t take = p->length - done < l - vo ? p->length - done : l - vo;
            sl_piece v = *p;
            v.offset = vo;
            v.length = take;
            v.doc_offset = p->doc_offset + done;
            if (fn(ctx, vr, &v, row->tokens + p->offset + done, err))
                return -1;
            done += take;
            g += take;
        }
    }
    return 0;
}
