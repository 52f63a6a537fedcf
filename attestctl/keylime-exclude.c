/* SPDX-License-Identifier: MIT */
/*
 * Keylime's excludes (Python re, matched with re.match) as PCRE2 patterns matched against the
 * whole path (keylime.h), and the check that PCRE2 reads the result.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcre2.h>

#include "attestctl/keylime.h"
#include "evidence/jpath.h"
#include "util/buf.h"

/* ---- excludes: Python re (re.match) -> PCRE2 matched against the whole path ---- */

int keylime_exclude_to_pcre(const char *py, size_t n, char *out, size_t size, const char **ret_why)
{
        static const char free_rest[] = ")[\\s\\S]*";
        struct wb w;
        bool in_class = false;
        size_t class_start = 0;
        int e = 0;

        if (size == 0)
                return -E2BIG;
        wb_init(&w, out, size - 1);
        e = wb_put(&w, "(?:", 3);
        for (size_t i = 0; i < n && e == 0; i++) {
                char c = py[i];

                if (c == '\0') {
                        *ret_why = "a NUL byte";
                        return -EBADMSG;
                }
                if (c == '\\') {
                        if (i + 1 >= n) {
                                *ret_why = "a trailing backslash";
                                return -EBADMSG;
                        }
                        char d = py[++i];
                        if (d == '\0') {
                                /* escaped, it is still a NUL: the text would end there */
                                *ret_why = "a NUL byte";
                                return -EBADMSG;
                        }
                        if (!in_class && d == 'Z') {
                                /* Python's \Z is the very end; PCRE2's is \z */
                                e = wb_put(&w, "\\z", 2);
                                continue;
                        }
                        if (!in_class && d >= '1' && d <= '9') {
                                /* Keylime joins the excludes as "(R1)|(R2)...": group numbers
                                 * inside one regex mean another group there than here */
                                *ret_why = "a numbered back-reference (Keylime renumbers groups "
                                           "when it joins the excludes; use (?P<name>...))";
                                return -EBADMSG;
                        }
                        if ((e = wb_put_u8(&w, (uint8_t)c)) == 0)
                                e = wb_put_u8(&w, (uint8_t)d);
                        continue;
                }
                if (in_class) {
                        if (c == ']' && i != class_start)
                                in_class = false;
                        e = wb_put_u8(&w, (uint8_t)c);
                        continue;
                }
                if (c == '[') {
                        in_class = true;
                        class_start = i + 1;
                        if (class_start < n && py[class_start] == '^')
                                class_start++;
                } else if (c == '{' && i + 1 < n && py[i + 1] == ',') {
                        /* Python reads "{,n}" as "{0,n}"; PCRE2 10.42 as literal text */
                        e = wb_put(&w, "{0", 2);
                        continue;
                }
                e = wb_put_u8(&w, (uint8_t)c);
        }
        /* re.match anchors at the start only: the rest of the path is free */
        if (e == 0)
                e = wb_put(&w, free_rest, sizeof(free_rest) - 1);
        if (e < 0)
                return -E2BIG;
        out[wb_len(&w)] = '\0';
        return 0;
}

int keylime_exclude_check(const char *pat, const char *p, struct attest_err *err)
{
        int ecode;
        PCRE2_SIZE eoff;
        pcre2_code *re =
                pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &ecode, &eoff, NULL);
        PCRE2_UCHAR msg[128];

        if (re) {
                pcre2_code_free(re);
                return 0;
        }
        if (pcre2_get_error_message(ecode, msg, sizeof(msg)) < 0)
                snprintf((char *)msg, sizeof(msg), "error %d", ecode);
        return jpath_fail(err, -EBADMSG, AE_POLICY_BAD_VALUE, p,
                          "not a regex PCRE2 reads alike: %s", msg);
}
