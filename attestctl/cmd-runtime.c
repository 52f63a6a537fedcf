/* SPDX-License-Identifier: MIT */
/*
 * The runtime half of attestctl policy from-host: the ima.runtime section from a known-good log
 * (policy/policy-host.h), with excludes and a directory's file digests (--rootfs).
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <pcre2.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-keylime.h"
#include "attestctl/keylime.h"
#include "evidence/bank.h"
#include "evidence/ima.h"
#include "policy/policy-host.h"
#include "policy/policy.h"
#include "policy/runtime.h"

/* ---- from-host --runtime ---- */

struct excl {
        pcre2_code *re;
        pcre2_match_data *md;
};

static void excl_done(struct excl *e)
{
        pcre2_match_data_free(e->md);
        pcre2_code_free(e->re);
        *e = (struct excl){0};
}

/* The excludes as one pattern, each matched against the whole path (as ima.runtime does). */
static int excl_compile(const struct ctl_runtime_opts *o, struct excl *ret)
{
        _cleanup_free_ char *all = NULL;
        size_t total = 0, at = 0;
        PCRE2_SIZE eoff;
        int ecode;

        *ret = (struct excl){0};
        if (o->nexcludes == 0)
                return 0;
        for (size_t i = 0; i < o->nexcludes; i++)
                total += strlen(o->excludes[i]) + 5;
        if (!(all = malloc(total + 1)))
                return -ENOMEM;
        for (size_t i = 0; i < o->nexcludes; i++) {
                size_t n = strlen(o->excludes[i]);

                memcpy(all + at, i ? "|(?:" : "(?:", i ? 4 : 3);
                at += i ? 4 : 3;
                memcpy(all + at, o->excludes[i], n);
                at += n;
                all[at++] = ')';
        }
        ret->re = pcre2_compile((PCRE2_SPTR)all, at, PCRE2_ANCHORED | PCRE2_ENDANCHORED, &ecode,
                                &eoff, NULL);
        if (!ret->re) {
                PCRE2_UCHAR msg[120];

                pcre2_get_error_message(ecode, msg, sizeof(msg));
                fprintf(stderr, "attestctl policy from-host: --exclude: %s\n", (char *)msg);
                return -EINVAL;
        }
        if (!(ret->md = pcre2_match_data_create_from_pattern(ret->re, NULL))) {
                excl_done(ret);
                return -ENOMEM;
        }
        return 0;
}

static bool excl_match(void *ctx, const char *path, size_t n)
{
        struct excl *e = ctx;

        return e->re && pcre2_match(e->re, (PCRE2_SPTR)path, n, 0, 0, e->md, NULL) >= 0;
}

struct walk {
        json_t *rt;
        struct excl *excl;
        const EVP_MD *md;
        const char *alg;
        dev_t dev;
        uint64_t files, max_files, skipped_links, skipped_other_fs, skipped_excluded,
                skipped_not_utf8;
        char path[KEYLIME_NAME_MAX + 1]; /* "/" + the path below the root */
        size_t len;
};

#define WALK_DEPTH_MAX 64

static int hash_fd(int fd, const EVP_MD *md, uint8_t *out, unsigned *ret_len)
{
        EVP_MD_CTX *c = EVP_MD_CTX_new();
        uint8_t b[65536];
        ssize_t n;
        int x = 0;

        if (!c || EVP_DigestInit_ex(c, md, NULL) != 1)
                x = -ENOMEM;
        while (x == 0 && (n = read(fd, b, sizeof(b))) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        x = -errno;
                } else if (EVP_DigestUpdate(c, b, (size_t)n) != 1) {
                        x = -ENOMEM;
                }
        }
        if (x == 0 && EVP_DigestFinal_ex(c, out, ret_len) != 1)
                x = -ENOMEM;
        EVP_MD_CTX_free(c);
        return x;
}

static int walk_dir(struct walk *w, int dfd, unsigned depth);

/* One directory entry of dfd (the walk's path already ends with its name). */
static int walk_entry(struct walk *w, int dfd, const char *name, unsigned depth)
{
        struct stat st, st2;
        uint8_t d[EVP_MAX_MD_SIZE];
        unsigned dlen;
        int fd, x;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISLNK(st.st_mode)) {
                /* never followed: it may point anywhere, outside the root too */
                w->skipped_links++;
                return 0;
        }
        if (st.st_dev != w->dev) {
                w->skipped_other_fs++;
                return 0;
        }
        if (excl_match(w->excl, w->path, w->len) ||
            (S_ISDIR(st.st_mode) && w->len + 1 <= KEYLIME_NAME_MAX &&
             (w->path[w->len] = '/', excl_match(w->excl, w->path, w->len + 1)))) {
                w->skipped_excluded++;
                return 0;
        }
        if (S_ISDIR(st.st_mode)) {
                if (depth + 1 >= WALK_DEPTH_MAX) {
                        fprintf(stderr, "attestctl: --rootfs: %s: deeper than %d directories\n",
                                w->path, WALK_DEPTH_MAX);
                        return -E2BIG;
                }
                fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return errno == ENOENT ? 0 : -errno;
                return walk_dir(w, fd, depth + 1); /* closes fd */
        }
        if (!S_ISREG(st.st_mode))
                return 0;
        if (w->files >= w->max_files) {
                fprintf(stderr, "attestctl: --rootfs: more than %" PRIu64 " files (--rootfs-max)\n",
                        w->max_files);
                return -E2BIG;
        }
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        /* the file opened is the one looked at (not swapped for a FIFO or a link since) */
        if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_ino != st.st_ino ||
            st2.st_dev != st.st_dev) {
                close(fd);
                return 0;
        }
        x = hash_fd(fd, w->md, d, &dlen);
        close(fd);
        if (x < 0)
                return x;
        x = policy_runtime_add_digest(w->rt, w->path, w->len, w->alg, d, dlen);
        if (x == -EINVAL) {
                w->skipped_not_utf8++;
                return 0;
        }
        if (x < 0 && x != -ENOSPC)
                return x;
        w->files++;
        return 0;
}

static int walk_dir(struct walk *w, int fd, unsigned depth)
{
        DIR *d = fdopendir(fd);
        struct dirent *de;
        size_t base = w->len;
        int x = 0;

        if (!d) {
                x = -errno;
                close(fd);
                return x;
        }
        while (x == 0 && (errno = 0, de = readdir(d))) {
                size_t n = strlen(de->d_name);

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (base + (base > 1 ? 1 : 0) + n > KEYLIME_NAME_MAX) {
                        fprintf(stderr, "attestctl: --rootfs: a path longer than %u bytes\n",
                                KEYLIME_NAME_MAX);
                        x = -E2BIG;
                        break;
                }
                w->len = base;
                if (base > 1)
                        w->path[w->len++] = '/';
                memcpy(w->path + w->len, de->d_name, n);
                w->len += n;
                w->path[w->len] = '\0';
                x = walk_entry(w, dirfd(d), de->d_name, depth);
        }
        if (x == 0 && errno != 0)
                x = -errno;
        w->len = base;
        w->path[base] = '\0';
        closedir(d);
        return x;
}

static int rootfs_digests(const struct ctl_runtime_opts *o, struct excl *ex, json_t *rt)
{
        struct walk w = {.rt = rt,
                         .excl = ex,
                         .alg = o->rootfs_alg ? o->rootfs_alg : "sha256",
                         .max_files = o->rootfs_max};
        struct stat st;
        int fd, x;

        if (!(w.md = EVP_get_digestbyname(w.alg)) ||
            (strcmp(w.alg, "sha1") && strcmp(w.alg, "sha256") && strcmp(w.alg, "sha384") &&
             strcmp(w.alg, "sha512"))) {
                fprintf(stderr, "attestctl: --rootfs-alg: sha1, sha256, sha384 or sha512\n");
                return -EINVAL;
        }
        fd = open(o->rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "attestctl: --rootfs: %s: %s\n", o->rootfs, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -errno;
        }
        w.dev = st.st_dev;
        w.path[0] = '/';
        w.len = 1;
        x = walk_dir(&w, fd, 0);
        if (x < 0) {
                if (x != -E2BIG)
                        fprintf(stderr, "attestctl: --rootfs: %s%s: %s\n", o->rootfs, w.path,
                                strerror(-x));
                return x;
        }
        fprintf(stderr,
                "attestctl: --rootfs %s: %" PRIu64 " files hashed (%s); skipped: %" PRIu64
                " symbolic links, %" PRIu64 " entries on other file systems, %" PRIu64
                " excluded, %" PRIu64 " paths that are not UTF-8\n",
                o->rootfs, w.files, w.alg, w.skipped_links, w.skipped_other_fs, w.skipped_excluded,
                w.skipped_not_utf8);
        return 0;
}

/* Why the log could not be read: the reader's message; ascii ones get the entry and offset. */
static void log_failed(const struct ctl_log *in, const struct attest_err *err, int x)
{
        if (!err->msg[0]) {
                fprintf(stderr, "attestctl policy from-host: the IMA log: %s\n", strerror(-x));
                return;
        }
        fprintf(stderr, "attestctl policy from-host: the IMA log: %s: %s",
                attest_code_name(err->code), err->msg);
        /* the binary reader's messages name both already, a failed read its byte offset */
        if (in && !in->s.read_error && in->s.rd.format == IMA_FORMAT_ASCII)
                fprintf(stderr, " (entry %" PRIu64 " at byte %" PRIu64 ")", in->s.entry_idx,
                        in->s.entry_at);
        fputc('\n', stderr);
}

/*
 * The section from the log: in memory (log, len) or, with in, streamed through its window
 * (policy_runtime_add_entry() per entry, what policy_runtime_from_log() does over a buffer).
 */
static int runtime_section(const uint8_t *log, size_t len, struct ctl_log *in,
                           const struct ctl_runtime_opts *o, json_t **ret_runtime)
{
        struct policy_runtime_stats st = {0};
        struct attest_err err = {0};
        json_auto_t *rt = NULL, *excl = NULL;
        struct excl ex;
        int x;

        if ((x = excl_compile(o, &ex)) < 0)
                return x;
        if (in) {
                struct ima_entry e;

                if (!(rt = json_object())) {
                        excl_done(&ex);
                        return -ENOMEM;
                }
                while ((x = ima_stream_next(&in->s, &e, &err)) > 0)
                        if ((x = policy_runtime_add_entry(rt, &e, excl_match, &ex, &st)) < 0)
                                break;
        } else {
                x = policy_runtime_from_log(log, len, excl_match, &ex, &rt, &st, &err);
        }
        if (x < 0) {
                log_failed(in, &err, x);
                excl_done(&ex);
                return x;
        }
        if (o->rootfs && (x = rootfs_digests(o, &ex, rt)) < 0) {
                excl_done(&ex);
                return x;
        }
        excl_done(&ex);
        if (o->nexcludes) {
                if (!(excl = json_array()))
                        return -ENOMEM;
                for (size_t i = 0; i < o->nexcludes; i++)
                        if (json_array_append_new(excl, json_string(o->excludes[i])) < 0)
                                return -ENOMEM;
                if (json_object_set(rt, "excludes", excl) < 0)
                        return -ENOMEM;
        }
        /* violations: as asked; by default as many as this known-good log had */
        int64_t allow = o->violations_set ? o->violations_allow : (int64_t)st.violations;
        if (!o->violations_set && st.violations == 0)
                allow = -1;
        if (json_object_set_new(rt, "violations",
                                allow < 0 ? json_string("fail")
                                          : json_pack("{s:I}", "allow", (json_int_t)allow)) < 0)
                return -ENOMEM;
        if (!json_object_get(rt, "digests") && json_object_set_new(rt, "digests", json_object()))
                return -ENOMEM;
        fprintf(stderr,
                "attestctl: runtime policy from %" PRIu64 " entries: %" PRIu64
                " file measurements, %" PRIu64 " key and %" PRIu64 " ima-buf measurements, %" PRIu64
                " violations (%s), %" PRIu64 " excluded, boot_aggregate left to "
                "require_boot_aggregate\n",
                st.entries, st.files, st.keys, st.bufs, st.violations,
                allow < 0 ? "fail" : "allowed", st.excluded);
        if (st.not_utf8 || st.opaque || st.over_cap)
                fprintf(stderr,
                        "attestctl: warning: not in the policy (these entries will fail): %" PRIu64
                        " paths that are not UTF-8, %" PRIu64 " entries of unknown templates, "
                        "%" PRIu64 " digests past %d for one path\n",
                        st.not_utf8, st.opaque, st.over_cap, POLICY_RUNTIME_DIGESTS_PER_PATH);
        *ret_runtime = TAKE_PTR(rt);
        return 0;
}

int ctl_runtime_section(const uint8_t *log, size_t len, const struct ctl_runtime_opts *o,
                        json_t **ret_runtime)
{
        return runtime_section(log, len, NULL, o, ret_runtime);
}

int ctl_runtime_section_stream(struct ctl_log *in, const struct ctl_runtime_opts *o,
                               json_t **ret_runtime)
{
        return runtime_section(NULL, 0, in, o, ret_runtime);
}
