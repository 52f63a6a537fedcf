/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "evidence/bank.h"
#include "util/buf.h"
#include "evidence/jpath.h"

static bool plain_char(unsigned char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
}

/*
 * Escaped, truncated copy of an untrusted key into out (n >= 4 bytes): printable bytes kept,
 * others as \xHH, through a writer that keeps room for "..." and the NUL.
 */
static void escape_key(char *out, size_t n, const char *key)
{
        static const char digits[] = "0123456789abcdef";
        struct wb w = WB_INIT(out, n - 4);
        const unsigned char *p = (const unsigned char *)key;
        size_t len;

        for (; *p; p++) {
                const char esc[4] = {'\\', 'x', digits[*p >> 4], digits[*p & 15]};
                int e;

                if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
                        e = wb_put_u8(&w, *p);
                else
                        e = wb_put(&w, esc, sizeof(esc));
                if (e < 0)
                        break;
        }
        len = wb_len(&w);
        if (*p) {
                memcpy(out + len, "...", 3);
                len += 3;
        }
        out[len] = '\0';
}

void jpath_join(char *out, const char *parent, const char *key)
{
        char k[48];
        bool plain = key[0] != '\0';

        for (const char *p = key; *p; p++)
                if (!plain_char((unsigned char)*p))
                        plain = false;
        escape_key(k, sizeof(k), key);
        if (plain)
                snprintf(out, JPATH_MAX, "%s.%s", parent, k);
        else
                snprintf(out, JPATH_MAX, "%s[\"%s\"]", parent, k);
}

void jpath_index(char *out, const char *parent, size_t i)
{
        snprintf(out, JPATH_MAX, "%s[%zu]", parent, i);
}

int jpath_fail(struct attest_err *err, int e, enum attest_code code, const char *path,
               const char *fmt, ...)
{
        char why[192];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        return attest_fail(err, e, code, "%s: %s", path, why);
}

int jpath_load(const char *buf, size_t len, size_t max, enum attest_code code, json_t **ret,
               struct attest_err *err)
{
        json_error_t je;
        json_t *j;

        if (len > max)
                return attest_fail(err, -E2BIG, code, "$: document of %zu bytes > %zu", len, max);
        j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
        if (!j)
                return attest_fail(err, -EBADMSG, code, "$: invalid JSON at line %d column %d: %s",
                                   je.line, je.column, je.text);
        if (!json_is_object(j)) {
                json_decref(j);
                return attest_fail(err, -EBADMSG, code, "$: not a JSON object");
        }
        *ret = j;
        return 0;
}

int jpath_object(const json_t *obj, const char *path, const char *const *allowed,
                 enum attest_code code_type, enum attest_code code_unknown, struct attest_err *err)
{
        const char *key;
        json_t *v;

        if (!json_is_object(obj))
                return jpath_fail(err, -EBADMSG, code_type, path, "not an object");
        json_object_foreach((json_t *)obj, key, v)
        {
                bool ok = false;

                for (size_t i = 0; allowed[i]; i++)
                        if (strcmp(key, allowed[i]) == 0)
                                ok = true;
                if (!ok) {
                        char p[JPATH_MAX];

                        jpath_join(p, path, key);
                        return jpath_fail(err, -EBADMSG, code_unknown, p, "unknown field");
                }
        }
        return 0;
}

int jpath_pcr_index(const char *key, unsigned *ret)
{
        size_t n = strlen(key);
        unsigned i = 0;

        if (n < 1 || n > 2 || (n == 2 && key[0] == '0'))
                return -EINVAL;
        for (size_t k = 0; k < n; k++) {
                if (key[k] < '0' || key[k] > '9')
                        return -EINVAL;
                i = i * 10 + (unsigned)(key[k] - '0');
        }
        if (i >= PCR_COUNT)
                return -EINVAL;
        *ret = i;
        return 0;
}
