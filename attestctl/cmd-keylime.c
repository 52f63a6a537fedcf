/* SPDX-License-Identifier: MIT */
/*
 * attestctl policy import-keylime (Keylime runtime policy -> attestd policy, attestctl/keylime.c)
 * and the runtime half of attestctl policy from-host: the ima.runtime section from a known-good
 * log (policy/policy-host.h), with excludes and a directory's file digests (--rootfs).
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <pcre2.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-keylime.h"
#include "attestctl/dsse.h"
#include "attestctl/keylime.h"
#include "attestctl/remote.h"
#include "evidence/bank.h"
#include "evidence/ima.h"
#include "evidence/jpath.h"
#include "policy/policy-host.h"
#include "policy/policy.h"
#include "policy/runtime.h"
#include "util/hex.h"
#include "util/num.h"

#define CTL_IMA_LOG_FILE_MAX (1024u << 20) /* a log file: 1 GiB, far above a million entries */

/* ---- import-keylime ---- */

static void import_usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl policy import-keylime FILE [--name NAME] [-o OUT]\n"
                "                                        [--violations fail|N]\n"
                "                                        [--dsse-key PEM]...\n"
                "\n"
                "Read a Keylime runtime policy (JSON, meta.version 1: digests, excludes, "
                "keyrings,\n"
                "ima.ignored_keyrings, ima.log_hash_alg, ima.dm_policy, ima-buf,\n"
                "verification-keys) and write an attestd policy with its ima.runtime section\n"
                "(docs/runtime-policy.md). Strict: errors name the JSON path; what attestd cannot\n"
                "do (a dm_policy, a legacy allowlist) is refused, what it judges another way is\n"
                "named on stderr. A DSSE-signed policy (Keylime's envelope: payload, payloadType,\n"
                "signatures) is imported only when one of its signatures verifies with a key\n"
                "given by --dsse-key; its payload is then read as a policy file is.\n"
                "\n"
                "Options:\n"
                "  --name NAME      the policy's name (default: keylime)\n"
                "  -o, --output OUT write the policy to OUT (default: stdout)\n"
                "  --violations V   fail: violation entries fail; N: allow N of them (default\n"
                "                   %d, i.e. Keylime's default ignore_tomtou_errors = False,\n"
                "                   which neither checks nor fails them)\n"
                "  --dsse-key PEM   FILE is a DSSE envelope signed by this EC public key or the\n"
                "                   key of this X.509 certificate (PEM; ECDSA with SHA-256, as\n"
                "                   Keylime signs); up to %u, one verifying signature suffices.\n"
                "                   Required for an envelope, refused for a plain policy\n"
                "  -h, --help       this text\n"
                "\n"
                "Exit status: 0 written, 1 the Keylime policy is invalid, uses what attestd\n"
                "does not support, or its envelope does not verify, 2 usage or file errors.\n",
                KEYLIME_VIOLATIONS_MAX, DSSE_KEYS_MAX);
}

int ctl_parse_violations(const char *s, int64_t *ret)
{
        uint64_t v;

        if (strcmp(s, "fail") == 0) {
                *ret = -1;
                return 0;
        }
        if (num_u64(s, strlen(s), 0, KEYLIME_VIOLATIONS_MAX, &v) < 0)
                return -EINVAL;
        *ret = (int64_t)v;
        return 0;
}

static int write_json(const json_t *j, const char *out)
{
        FILE *f;
        int x;

        if (!out)
                return print_json(j);
        if (!(f = fopen(out, "we"))) {
                fprintf(stderr, "attestctl: %s: %s\n", out, strerror(errno));
                return -errno;
        }
        x = json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (x == 0 && fputc('\n', f) == EOF)
                x = -1;
        if (fclose(f) != 0 || x != 0) {
                fprintf(stderr, "attestctl: %s: write failed\n", out);
                return -EIO;
        }
        return 0;
}

/*
 * An import that failed (x < 0) on stderr: "FILE: [WHAT: ]code: message"; the exit status, 2 for
 * memory and argument errors, 1 for what the file holds.
 */
static int import_failed(const char *file, const char *what, int x, const struct attest_err *err)
{
        fprintf(stderr, "%s: %s%s%s: %s\n", file, what ? what : "", what ? ": " : "",
                attest_code_name(err->code), err->msg[0] ? err->msg : strerror(-x));
        return x == -ENOMEM || x == -EINVAL ? 2 : 1;
}

/* The --dsse-key keys, freed together. */
struct dsse_keys {
        size_t n;
        EVP_PKEY *k[DSSE_KEYS_MAX];
        const char *path[DSSE_KEYS_MAX];
};

static void dsse_keys_done(struct dsse_keys *ks)
{
        for (size_t i = 0; i < ks->n; i++)
                EVP_PKEY_free(ks->k[i]);
        ks->n = 0;
}

/* --dsse-key PATH: 0, or 2 (the exit status) with the reason on stderr. */
static int dsse_key_add(struct dsse_keys *ks, const char *path)
{
        _cleanup_free_ uint8_t *pem = NULL;
        struct attest_err err = {0};
        size_t len;
        int x;

        if (ks->n == DSSE_KEYS_MAX) {
                fprintf(stderr, "attestctl policy import-keylime: --dsse-key: at most %u keys\n",
                        DSSE_KEYS_MAX);
                return 2;
        }
        if (ctl_read_file(path, DSSE_KEY_FILE_MAX, &pem, &len) < 0)
                return 2;
        if ((x = dsse_key_load((const char *)pem, len, &ks->k[ks->n], &err)) < 0) {
                fprintf(stderr, "attestctl policy import-keylime: --dsse-key %s: %s\n", path,
                        err.msg[0] ? err.msg : strerror(-x));
                return 2;
        }
        ks->path[ks->n++] = path;
        return 0;
}

/*
 * FILE as a DSSE envelope (doc, parsed): verified with the keys, its payload imported. The
 * envelope is freed as soon as its payload is decoded (a policy may be hundreds of MiB).
 */
static int import_envelope(const char *file, json_t **doc, const struct dsse_keys *ks,
                           const struct keylime_opts *ko, json_t **ret_pol,
                           struct keylime_stats *st, struct keylime_notes *notes)
{
        _cleanup_(dsse_envelope_freep) struct dsse_envelope *env = NULL;
        struct attest_err err = {0};
        const uint8_t *payload;
        size_t plen, si = 0, ki = 0;
        int x;

        if (ks->n == 0) {
                fprintf(stderr,
                        "%s: a DSSE-signed policy (payload, payloadType, signatures): give the key "
                        "that signed it with --dsse-key PEM (an envelope is never imported "
                        "unverified)\n",
                        file);
                return 1;
        }
        x = dsse_envelope_from_json(*doc, KEYLIME_JSON_MAX, &env, &err);
        json_decref(*doc);
        *doc = NULL;
        if (x == 0)
                x = dsse_verify(env, ks->k, ks->n, &payload, &plen, &si, &ki, &err);
        if (x < 0)
                return import_failed(file, NULL, x, &err);
        fprintf(stderr,
                "attestctl: DSSE envelope: signature %zu verifies with --dsse-key %s; importing "
                "its payload (%zu bytes, %s)\n",
                si, ks->path[ki], plen, DSSE_PAYLOAD_TYPE_KEYLIME);
        x = keylime_import((const char *)payload, plen, ko, ret_pol, st, notes, &err);
        if (x < 0)
                return import_failed(file, "the verified payload", x, &err);
        return 0;
}

int ctl_policy_import_keylime(int argc, char **argv)
{
        static const struct option opts[] = {
                {"name", required_argument, NULL, 'n'},
                {"output", required_argument, NULL, 'o'},
                {"violations", required_argument, NULL, 'v'},
                {"dsse-key", required_argument, NULL, 'k'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        struct keylime_opts ko = {.name = "keylime", .violations_allow = KEYLIME_VIOLATIONS_MAX};
        _cleanup_(dsse_keys_done) struct dsse_keys keys = {0};
        _cleanup_free_ uint8_t *buf = NULL;
        struct keylime_notes notes = {0};
        struct keylime_stats st = {0};
        struct attest_err err = {0};
        json_auto_t *pol = NULL, *doc = NULL;
        const char *out = NULL;
        size_t len;
        int c, x;

        optind = 1;
        while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
                switch (c) {
                case 'n':
                        ko.name = optarg;
                        break;
                case 'o':
                        out = optarg;
                        break;
                case 'v':
                        if (ctl_parse_violations(optarg, &ko.violations_allow) < 0) {
                                fprintf(stderr,
                                        "attestctl policy import-keylime: --violations: 'fail' "
                                        "or 0-%d\n",
                                        KEYLIME_VIOLATIONS_MAX);
                                return 2;
                        }
                        break;
                case 'k':
                        if ((x = dsse_key_add(&keys, optarg)) != 0)
                                return x;
                        break;
                case 'h':
                        import_usage(stdout);
                        return 0;
                default:
                        import_usage(stderr);
                        return 2;
                }
        }
        if (argc - optind != 1) {
                import_usage(stderr);
                return 2;
        }
        if (ctl_read_file(argv[optind], KEYLIME_JSON_MAX, &buf, &len) < 0)
                return 2;
        /* parsed once: an envelope or a policy (the same strict JSON reader either way) */
        x = jpath_load((const char *)buf, len, KEYLIME_JSON_MAX, AE_POLICY_JSON, &doc, &err);
        free(TAKE_PTR(buf));
        if (x == 0 && dsse_is_envelope(doc)) {
                if ((x = import_envelope(argv[optind], &doc, &keys, &ko, &pol, &st, &notes)) != 0)
                        return x;
        } else {
                if (x == 0 && keys.n > 0) {
                        fprintf(stderr,
                                "%s: not a DSSE envelope (no payload, payloadType or signatures): "
                                "--dsse-key expects a signed policy; without --dsse-key this file "
                                "imports unsigned\n",
                                argv[optind]);
                        return 1;
                }
                if (x == 0)
                        x = keylime_import_doc(doc, &ko, &pol, &st, &notes, &err);
                if (x == -EINVAL && err.code == AE_POLICY_BAD_VALUE && !err.msg[0]) {
                        fprintf(stderr, "attestctl policy import-keylime: invalid arguments\n");
                        return 2;
                }
                if (x < 0)
                        return import_failed(argv[optind], NULL, x, &err);
        }
        /* what was written must load: the same parser attestd uses */
        {
                _cleanup_(policy_freep) struct policy *p = NULL;
                struct attest_err perr = {0};

                if (policy_from_json(pol, &p, &perr) < 0) {
                        fprintf(stderr, "%s: the imported policy does not load: %s: %s\n",
                                argv[optind], attest_code_name(perr.code), perr.msg);
                        return 1;
                }
        }
        for (unsigned i = 0; i < notes.n; i++)
                fprintf(stderr, "attestctl: note: %s\n", notes.msg[i]);
        if (notes.dropped)
                fprintf(stderr, "attestctl: note: %u more notes\n", notes.dropped);
        fprintf(stderr,
                "attestctl: imported %zu paths (%zu digests), %zu excludes, %zu keyrings "
                "(%zu digests), %zu ima-buf events (%zu digests), %zu verification keys, "
                "%zu ignored keyrings\n",
                st.names, st.digests, st.excludes, st.keyrings, st.keyring_digests, st.buf_names,
                st.buf_digests, st.keys, st.ignored_keyrings);
        return write_json(pol, out) < 0 ? 2 : 0;
}

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

int ctl_runtime_section(const uint8_t *log, size_t len, const struct ctl_runtime_opts *o,
                        json_t **ret_runtime)
{
        struct policy_runtime_stats st = {0};
        struct attest_err err = {0};
        json_auto_t *rt = NULL, *excl = NULL;
        struct excl ex;
        int x;

        if ((x = excl_compile(o, &ex)) < 0)
                return x;
        x = policy_runtime_from_log(log, len, excl_match, &ex, &rt, &st, &err);
        if (x < 0) {
                fprintf(stderr, "attestctl policy from-host: the IMA log: %s: %s\n",
                        attest_code_name(err.code), err.msg);
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

/* ---- runtime-check: a log against a policy's ima.runtime, offline ---- */

static void rtcheck_usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl policy runtime-check POLICY LOG [--entries] [--time]\n"
                "\n"
                "Judge every entry of an IMA log (binary or ascii, from entry 0) by the policy's\n"
                "ima.runtime section, offline: the log is parsed, its sha1 template hashes\n"
                "checked and PCR 10 replayed, but no quote anchors it (use 'policy check' with\n"
                "evidence for that). For trying a policy (one imported from Keylime, one from\n"
                "from-host --runtime) on a log before a fleet uses it.\n"
                "\n"
                "Options:\n"
                "  --entries   print every failing entry: INDEX REASON PATH (all of them; the\n"
                "              verdict names at most the policy's failures_max)\n"
                "  --time      print the CPU time of reading, replaying and judging the log\n"
                "              and the entries per second on stderr\n"
                "  -h, --help  this text\n"
                "\n"
                "Exit status: 0 every entry passes, 1 some fail, 2 usage, file or malformed\n"
                "input errors.\n");
}

static void hasher_freep_(struct hasher **h)
{
        hasher_free(*h);
}

/* A path for a terminal: printable ASCII kept, the rest as \xHH. */
static void print_path(const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)p[i];

                if (ch >= 0x20 && ch < 0x7f && ch != '\\')
                        putchar(ch);
                else
                        printf("\\x%02x", ch);
        }
}

static double cpu_seconds(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
                return 0;
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ctl_policy_runtime_check(int argc, char **argv)
{
        static const struct option opts[] = {
                {"entries", no_argument, NULL, 'e'},
                {"time", no_argument, NULL, 't'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        _cleanup_free_ uint8_t *pbuf = NULL, *log = NULL;
        _cleanup_(policy_freep) struct policy *pol = NULL;
        _cleanup_(rt_ctx_freep) struct rt_ctx *ctx = NULL;
        _cleanup_(hasher_freep_) struct hasher *h = NULL;
        struct attest_err err = {0};
        json_auto_t *doc = NULL;
        struct ima_reader rd;
        struct ima_replay rp;
        struct ima_entry e;
        struct rt_state st;
        const struct rt_policy *rt;
        bool entries = false, timed = false;
        size_t plen, llen;
        double t0, t1;
        uint64_t idx = 0;
        char pcr[41];
        int c, x;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'e':
                        entries = true;
                        break;
                case 't':
                        timed = true;
                        break;
                case 'h':
                        rtcheck_usage(stdout);
                        return 0;
                default:
                        rtcheck_usage(stderr);
                        return 2;
                }
        }
        if (argc - optind != 2) {
                rtcheck_usage(stderr);
                return 2;
        }
        if (ctl_read_file(argv[optind], KEYLIME_JSON_MAX, &pbuf, &plen) < 0)
                return 2;
        /* a policy file may hold a whole distribution's allowlist: larger than a REST body */
        if (jpath_load((const char *)pbuf, plen, KEYLIME_JSON_MAX, AE_POLICY_JSON, &doc, &err) <
                    0 ||
            policy_from_json(doc, &pol, &err) < 0) {
                fprintf(stderr, "%s: %s: %s\n", argv[optind], attest_code_name(err.code), err.msg);
                return 2;
        }
        json_decref(TAKE_PTR(doc));
        free(TAKE_PTR(pbuf));
        if (!(rt = policy_runtime(pol))) {
                fprintf(stderr, "%s: no ima.runtime section\n", argv[optind]);
                return 2;
        }
        if (ctl_read_file(argv[optind + 1], CTL_IMA_LOG_FILE_MAX, &log, &llen) < 0)
                return 2;
        if (hasher_new(&h) < 0 || rt_ctx_new(rt, &ctx) < 0)
                return 2;
        rt_state_init(&st);
        t0 = cpu_seconds();
        if ((x = ima_reader_init_auto(&rd, log, llen, NULL)) < 0) {
                fprintf(stderr, "%s: not an IMA log\n", argv[optind + 1]);
                return 2;
        }
        ima_replay_init(&rp, h, BANK_MASK(BANK_SHA1), true);
        while ((x = ima_reader_next(&rd, &e, &err)) == 1) {
                enum rt_reason why;

                if ((x = ima_replay_extend(&rp, &e, idx, &err)) < 0)
                        break;
                x = rt_eval_entry(ctx, &e, idx, &st, &why);
                if (x < 0)
                        break;
                if (x == RT_FAIL && entries) {
                        printf("%" PRIu64 " %s ", idx, rt_reason_name(why));
                        print_path(e.name ? e.name : "", e.name ? e.name_len : 0);
                        putchar('\n');
                }
                idx++;
        }
        t1 = cpu_seconds();
        ima_reader_done(&rd);
        if (x < 0) {
                fprintf(stderr, "%s: %s: %s\n", argv[optind + 1], attest_code_name(err.code),
                        err.msg[0] ? err.msg : strerror(-x));
                return 2;
        }
        hex_encode(rp.pcr[BANK_SHA1][IMA_PCR], 20, pcr);
        printf("entries %" PRIu64 " passed %" PRIu64 " failed %" PRIu64 " excluded %" PRIu64
               " signed %" PRIu64 " violations %" PRIu64 " pcr10-sha1 %s\n",
               idx, st.passed, st.failed, st.excluded, st.signed_ok, st.violations, pcr);
        if (timed)
                fprintf(stderr,
                        "runtime-check: %" PRIu64 " entries in %.3f s CPU: %.0f entries/s\n", idx,
                        t1 - t0, t1 > t0 ? (double)idx / (t1 - t0) : 0.0);
        if (fflush(stdout) != 0)
                return 2;
        return st.failed ? 1 : 0;
}
