/* The message callback (base/log.h). */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>

static sl_log_fn log_fn;
static void *log_user;

void sl_log_set(sl_log_fn fn, void *user)
{
    log_fn = fn;
    log_user = user;
}

sl_log_fn sl_log_get(void **user)
{
    if (user)
        *user = log_user;
    return log_fn;
}

void sl_log(sl_log_level level, const char *stage, const char *fmt, ...)
{
    sl_log_fn fn = log_fn;
    if (!fn)
        return;
    /* on the stack, not the heap: an out-of-memory message comes here */
    char msg[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fn(level, stage, msg, log_user);
}
