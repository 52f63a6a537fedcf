/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/kv.h"

int kv_init(struct kv *kv, const char *text, size_t len, const char *name,
            const struct kv_limits *lim, struct attest_err *err)
{
        if (lim->line_max >= SIZE_MAX - 1)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: no line cap", name);
        if (len > lim->file_max)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: larger than %zu bytes", name,
                                   lim->file_max);
        *kv = (struct kv){.t = TOK_INIT(text, len), .name = name, .lim = *lim};
        return 0;
}

static bool key_byte(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
}

/* One line that is not blank or a comment: 1 with *ret, 0 skipped, -EINVAL. */
static int kv_line(struct kv *kv, struct tok *ln, struct kv_pair *ret, struct attest_err *err)
{
        struct span all, key, val = {"", 0};
        struct tok l;

        if (tok_rest(ln, kv->lim.line_max, &all) < 0)
                return 0; /* empty line */
        all = span_trim(all);
        if (all.n == 0 || all.p[0] == '#')
                return 0;
        tok_init(&l, all.p, all.n);
        if (tok_field(&l, '=', all.n, &key) < 0 || !l.more)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s:%u: expected 'key = value'",
                                   kv->name, kv->line);
        if (tok_rest(&l, all.n, &val) < 0)
                val = (struct span){"", 0};
        key = span_trim(key);
        val = span_trim(val);
        if (key.n == 0)
                return attest_fail(err, -EINVAL, AE_CONFIG,
                                   "%s:%u: expected 'key = value': no key before '='", kv->name,
                                   kv->line);
        if (key.n > kv->lim.key_max)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s:%u: key longer than %zu bytes",
                                   kv->name, kv->line, kv->lim.key_max);
        for (size_t i = 0; i < key.n; i++)
                if (!key_byte(key.p[i]))
                        return attest_fail(err, -EINVAL, AE_CONFIG,
                                           "%s:%u: key byte %zu is not a letter, digit, '-', "
                                           "'_' or '.'",
                                           kv->name, kv->line, i + 1);
        kv->key = key;
        if (val.n > kv->lim.value_max)
                return kv_fail(kv, err, "value longer than %zu bytes", kv->lim.value_max);
        *ret = (struct kv_pair){.key = key, .value = val, .line = kv->line};
        return 1;
}

int kv_next(struct kv *kv, struct kv_pair *ret, struct attest_err *err)
{
        struct tok ln;
        int x;

        kv->key = (struct span){"", 0};
        /* one byte more for a '\r' that TOK_STRIP_CR drops: the cap is on what is left */
        while ((x = tok_line(&kv->t, kv->lim.line_max + 1, TOK_STRIP_CR, &ln)) != 0) {
                if (kv->line >= kv->lim.lines_max)
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: more than %u lines",
                                           kv->name, kv->lim.lines_max);
                kv->line++;
                if (x == -E2BIG || (x > 0 && tok_left(&ln) > kv->lim.line_max))
                        return attest_fail(err, -EINVAL, AE_CONFIG,
                                           "%s:%u: line longer than %zu bytes", kv->name, kv->line,
                                           kv->lim.line_max);
                if (x < 0)
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s:%u: NUL byte", kv->name,
                                           kv->line);
                if ((x = kv_line(kv, &ln, ret, err)) != 0)
                        return x;
        }
        return 0;
}

int kv_fail(const struct kv *kv, struct attest_err *err, const char *fmt, ...)
{
        char what[sizeof(err->msg)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (kv->key.n)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s:%u: %.*s: %s", kv->name, kv->line,
                                   (int)kv->key.n, kv->key.p, what);
        return attest_fail(err, -EINVAL, AE_CONFIG, "%s:%u: %s", kv->name, kv->line, what);
}

void kv_err_prefix(const struct kv *kv, struct attest_err *err)
{
        attest_err_prefix(err, "%s:%u", kv->name, kv->line);
}
