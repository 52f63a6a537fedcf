/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

int attest_fail(struct attest_err *err, int e, enum attest_code code, const char *fmt, ...)
{
        va_list ap;

        if (!err)
                return e;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        return e;
}

void attest_err_prefix(struct attest_err *err, const char *fmt, ...)
{
        char pre[128], old[sizeof(err->msg)];
        va_list ap;

        if (!err)
                return;
        va_start(ap, fmt);
        vsnprintf(pre, sizeof(pre), fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof(old));
        /* "pre: old", truncated to fit */
        size_t n = strnlen(pre, sizeof(pre) - 1), m = strnlen(old, sizeof(old) - 1);
        size_t cap = sizeof(err->msg) - 1;

        if (n > cap - 2)
                n = cap - 2;
        memcpy(err->msg, pre, n);
        memcpy(err->msg + n, ": ", 2);
        if (m > cap - n - 2)
                m = cap - n - 2;
        memcpy(err->msg + n + 2, old, m);
        err->msg[n + 2 + m] = '\0';
}

static const char *const code_names[AE__COUNT] = {[AE_NONE] = "none",
#define ATTEST_CODE_NAME(id, name) [id] = name,
                                                  ATTEST_CODES(ATTEST_CODE_NAME)
#undef ATTEST_CODE_NAME
};

const char *attest_code_name(enum attest_code c)
{
        if ((unsigned)c >= AE__COUNT)
                return "unknown";
        return code_names[c];
}

bool attest_code_from_name(const char *name, enum attest_code *ret)
{
        if (!name)
                return false;
        for (unsigned i = 1; i < AE__COUNT; i++)
                if (!strcmp(code_names[i], name)) {
                        *ret = (enum attest_code)i;
                        return true;
                }
        return false;
}
