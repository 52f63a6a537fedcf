/* SPDX-License-Identifier: MIT */
/*
 * A plain main() for the fuzz targets (built with -DFUZZ_REPLAY_MAIN): runs LLVMFuzzerTestOneInput
 * over every file named on the command line or found in a directory named there, so the corpora
 * run under gcc and ASan in `meson test`. Each input is copied into a buffer of its exact size, so
 * a read one byte past the end is caught. No input at all is a failure: a corpus that went missing
 * must not pass silently.
 */
#ifndef FUZZ_REPLAY_MAIN
#error "replay-main.c is only linked into the replay-* executables (-DFUZZ_REPLAY_MAIN)"
#endif

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"
#include "util/file.h"

#define REPLAY_FILE_MAX (33u * 1024 * 1024) /* POLICY_JSON_MAX 32 MiB seeds + 1 */

static int run_file(const char *path)
{
        struct attest_err err = {0};
        uint8_t *exact;
        char *buf;
        size_t len;
        int rc;

        if ((rc = file_read_alloc(path, REPLAY_FILE_MAX, 0, &buf, &len, &err)) < 0) {
                fprintf(stderr, "replay: %s\n", err.msg);
                return rc;
        }
        /* exact-size heap copy; an empty file is passed as a zero-length buffer */
        exact = malloc(len ? len : 1);
        if (!exact) {
                free(buf);
                return -ENOMEM;
        }
        if (len)
                memcpy(exact, buf, len);
        free(buf);
        (void)LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        return 0;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every regular file of a directory, in name order so failures are reproducible. */
static int run_dir(const char *dir, unsigned *count)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        char **names = NULL;
        size_t n = 0, cap = 0;
        int rc = 0;

        if (!d) {
                fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
                return -errno;
        }
        while ((de = readdir(d))) {
                char **nn;

                if (de->d_name[0] == '.')
                        continue;
                if (n == cap) {
                        cap = cap ? 2 * cap : 64;
                        nn = realloc(names, cap * sizeof(*names));
                        if (!nn) {
                                rc = -ENOMEM;
                                break;
                        }
                        names = nn;
                }
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        rc = -ENOMEM;
                        break;
                }
                n++;
        }
        closedir(d);
        if (rc == 0)
                qsort(names, n, sizeof(*names), cmp_names);
        for (size_t i = 0; i < n; i++) {
                char path[4096];
                struct stat st;

                if (rc == 0 &&
                    snprintf(path, sizeof(path), "%s/%s", dir, names[i]) < (int)sizeof(path) &&
                    stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                        rc = run_file(path);
                        if (rc == 0)
                                (*count)++;
                }
                free(names[i]);
        }
        free(names);
        return rc;
}

int main(int argc, char **argv)
{
        unsigned count = 0;

        if (argc < 2) {
                fprintf(stderr, "Usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;
                int rc;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                if (S_ISDIR(st.st_mode)) {
                        rc = run_dir(argv[i], &count);
                } else {
                        rc = run_file(argv[i]);
                        if (rc == 0)
                                count++;
                }
                if (rc < 0)
                        return 1;
        }
        if (count == 0) {
                fprintf(stderr, "replay: no inputs found\n");
                return 1;
        }
        printf("replay: %u inputs ran\n", count);
        return 0;
}
