/* SPDX-License-Identifier: MIT */
/* attestctl policy import-keylime, and the ima.runtime half of attestctl policy from-host. */
#ifndef ATTESTCTL_CMD_KEYLIME_H
#define ATTESTCTL_CMD_KEYLIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define CTL_EXCLUDES_MAX 1024          /* --exclude, as many as a policy holds (RT_EXCLUDES_MAX) */
#define CTL_ROOTFS_MAX_DEFAULT 1000000 /* files --rootfs hashes at most */

struct ctl_runtime_opts {
        const char *excludes[CTL_EXCLUDES_MAX]; /* PCRE2, whole path */
        size_t nexcludes;
        const char *rootfs; /* a directory whose files are added, as "/" + their path below it */
        const char *rootfs_alg; /* NULL: sha256 */
        uint64_t rootfs_max;
        bool violations_set;      /* --violations given */
        int64_t violations_allow; /* < 0: fail */
};

/* --violations: "fail" (*ret -1) or 0..KEYLIME_VIOLATIONS_MAX. 0 or -EINVAL. */
int ctl_parse_violations(const char *s, int64_t *ret);

/* argv[0] is "import-keylime"; the exit status. */
int ctl_policy_import_keylime(int argc, char **argv);
/* argv[0] is "runtime-check"; the exit status. */
int ctl_policy_runtime_check(int argc, char **argv);

/*
 * The ima.runtime section from a known-good log (binary or ascii, from entry 0), with o's
 * excludes and --rootfs digests; prints what it did (and what it left out) on stderr, and why
 * the log could not be read (the entry and its byte offset). ctl_runtime_section(): a log in
 * memory (the evidence's); ctl_runtime_section_stream(): one opened with ctl_log_open() (a file
 * or standard input, through its window: memory flat in the log's size), the same section and
 * messages for the same bytes.
 */
struct ctl_log;
int ctl_runtime_section(const uint8_t *log, size_t len, const struct ctl_runtime_opts *o,
                        json_t **ret_runtime);
int ctl_runtime_section_stream(struct ctl_log *in, const struct ctl_runtime_opts *o,
                               json_t **ret_runtime);

#endif
