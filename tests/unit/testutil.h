/* SPDX-License-Identifier: MIT */
/* Shared bits of the unit tests: file loading from the source tree, Check runner. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read ATTEST_TOP/rel (or an absolute path) into a NUL-terminated buffer; NULL if absent. */
static inline char *tu_read(const char *rel, size_t *ret_len)
{
        const char *top = getenv("ATTEST_TOP");
        char path[4096];
        FILE *f;
        char *buf = NULL;
        size_t len = 0, cap = 0, n;

        *ret_len = 0;
        snprintf(path, sizeof(path), "%s/%s", rel[0] == '/' ? "" : (top ? top : "."), rel);
        f = fopen(path, "rb");
        if (!f)
                return NULL;
        for (;;) {
                if (len + 4096 + 1 > cap) {
                        cap = cap ? cap * 2 : 65536;
                        char *nb = realloc(buf, cap);
                        ck_assert_ptr_nonnull(nb);
                        buf = nb;
                }
                n = fread(buf + len, 1, cap - len - 1, f);
                if (n == 0)
                        break;
                len += n;
        }
        fclose(f);
        buf[len] = '\0';
        *ret_len = len;
        return buf;
}

/* Names of the real boots under tests/data/ (folders with a binary log); NULL terminated. */
static inline char **tu_boots(void)
{
        const char *top = getenv("ATTEST_TOP");
        char path[4096];
        char **v = calloc(64, sizeof(*v));
        size_t n = 0;
        DIR *d;
        struct dirent *de;

        snprintf(path, sizeof(path), "%s/tests/data", top ? top : ".");
        d = opendir(path);
        ck_assert_msg(d != NULL, "no tests/data (ATTEST_TOP=%s)", top ? top : "unset");
        while ((de = readdir(d)) && n < 63) {
                char p2[4096 + 300];
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(p2, sizeof(p2), "%s/%s/binary_runtime_measurements", path, de->d_name);
                if (!(f = fopen(p2, "rb")))
                        continue;
                fclose(f);
                v[n++] = strdup(de->d_name);
        }
        closedir(d);
        return v;
}

static inline void tu_boots_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

static inline int tu_run(Suite *s)
{
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}

#endif
