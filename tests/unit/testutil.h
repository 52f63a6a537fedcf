/* SPDX-License-Identifier: MIT */
/* Shared bits of the unit tests: literals and filled strings, file loading from the source tree,
 * Check runner. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"

/* a string literal and its length without the NUL, as two arguments */
#define LIT(s) s, sizeof(s) - 1

/* A new NUL-terminated string of n bytes c (the caps tests' long lines and files) */
static inline char *filled(size_t n, char c)
{
        char *b = malloc(n + 1);

        ck_assert_ptr_nonnull(b);
        memset(b, c, n);
        b[n] = '\0';
        return b;
}

/* A fresh directory /tmp/attestd-NAME.XXXXXX and the path of a database file t.db in it. */
struct tu_dbdir {
        char dir[64], db[128];
};

static inline void tu_dbdir_init(struct tu_dbdir *f, const char *name)
{
        snprintf(f->dir, sizeof(f->dir), "/tmp/attestd-%s.XXXXXX", name);
        ck_assert_ptr_nonnull(mkdtemp(f->dir));
        snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
}

/* Removes the directory and everything in it. */
static inline void tu_dbdir_done(struct tu_dbdir *f)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
        ck_assert_int_eq(system(cmd), 0);
}

/* Read ATTEST_TOP/rel (or an absolute path) into a NUL-terminated buffer; NULL if absent. */
static inline char *tu_read(const char *rel, size_t *ret_len)
{
        const char *top = getenv("ATTEST_TOP");
        char path[4096];
        char *buf = NULL;

        *ret_len = 0;
        snprintf(path, sizeof(path), "%s/%s", rel[0] == '/' ? "" : (top ? top : "."), rel);
        if (file_read_alloc(path, 1u << 30, 0, &buf, ret_len, NULL) < 0)
                return NULL;
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
