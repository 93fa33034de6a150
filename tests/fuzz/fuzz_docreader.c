/* libFuzzer target: sources + docreader (stream/source.c, stream/docreader.c)
 * on one input file: compression and archive detection, JSON Lines, plain
 * text, JSON arrays, dotted fields, UTF-8 repair, limits. docreader.h opens paths, not sl_inputs, so the
 * input is put in a memfd and opened as /proc/self/fd/N. The first byte
 * picks the options. Every document must be valid UTF-8 with a meta object;
 * an error must be one line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stream/docreader.h"
#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t flags = data[0];
    int fd = memfd_create("fuzz", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    const char *paths[] = {path};
    sl_docreader_opts o = {
        .field = flags & 1 ? (flags & 0x40 ? "t.u" : "t") : NULL, /* (a dotted path into objects) */
        .lines = (flags >> 1) & 1,
        .invalid_utf8 = ((flags >> 2) & 3) % 3,
        .skip_bad_json = (flags >> 4) & 1,
        .max_doc_bytes = flags & 0x20 ? 64 : 0,
        .quiet = 1,
    };
    sl_err err = {{0}};
    sl_docreader *r = sl_docreader_open(paths, 1, &o, &err);
    if (r) {
        sl_textdoc d = {0};
        int rc;
        while ((rc = sl_docreader_next(r, &d, &err)) == 1) {
            if (sl_utf8_check(d.text.data ? d.text.data : "", d.text.len) != d.text.len)
                abort();
            if (!d.id.data || !d.meta.data || d.meta.data[0] != '{')
                abort();
            if (o.max_doc_bytes && d.text.len > 3 * o.max_doc_bytes)
                abort(); /* repair can grow a line 3x, not more */
        }
        if (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n')))
            abort();
        sl_textdoc_free(&d);
        sl_docreader_close(r);
    }
    close(fd);
    return 0;
}
