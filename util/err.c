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
#define ATTEST_CODE_NAME(id, name, cls) [id] = name,
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

/* cls is an enum attest_class constant: a code without a class, or with a misspelt one, does not
 * compile */
static const unsigned char code_classes[AE__COUNT] = {[AE_NONE] = AEC_SERVER,
#define ATTEST_CODE_CLASS(id, name, cls) [id] = cls,
                                                      ATTEST_CODES(ATTEST_CODE_CLASS)
#undef ATTEST_CODE_CLASS
};
_Static_assert(AEC__COUNT <= 256, "code_classes holds a class in a byte");

enum attest_class attest_code_class(enum attest_code c)
{
        if ((unsigned)c >= AE__COUNT)
                return AEC_SERVER;
        return (enum attest_class)code_classes[c];
}

const char *attest_class_name(enum attest_class k)
{
        static const char *const names[AEC__COUNT] = {
                [AEC_CLIENT] = "client", [AEC_UNAUTHENTICATED] = "unauthenticated",
                [AEC_STALE] = "stale",   [AEC_VERDICT] = "verdict",
                [AEC_SERVER] = "server",
        };

        return (unsigned)k < AEC__COUNT ? names[k] : "unknown";
}
