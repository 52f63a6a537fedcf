/* SPDX-License-Identifier: MIT */
/*
 * attestctl policy import-keylime: a Keylime runtime policy (attestctl/keylime.c), bare or in a
 * DSSE envelope, made an attestd policy. The runtime half of from-host is cmd-runtime.c, the
 * offline runtime-check cmd-rtcheck.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "attestctl/attestctl.h"
#include "attestctl/cmd-keylime.h"
#include "attestctl/dsse.h"
#include "attestctl/keylime.h"
#include "attestctl/remote.h"
#include "evidence/hashalg.h"
#include "evidence/jpath.h"
#include "policy/policy.h"
#include "policy/runtime.h"
#include "util/num.h"

/* ---- import-keylime ---- */

static void import_usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl policy import-keylime FILE [--name NAME] [-o OUT]\n"
                "                                        [--violations fail|N]\n"
                "                                        [--dsse-key PEM]... [--digest-alg ALG]\n"
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
                "  --digest-alg ALG what digests of 64 hex digits are: sha256 (the default) or\n"
                "                   sm3 (files hashed with ima_hash=sm3). Keylime compares\n"
                "                   digests as hex whatever the algorithm; attestd judges the\n"
                "                   algorithm too\n"
                "  -h, --help       this text\n"
                "\n"
                "Digests are 40-128 lowercase hex digits, as Keylime's schema has them; one whose\n"
                "length names no algorithm matches nothing, in Keylime or here: it is not\n"
                "carried (a note names it). A flat allowlist (\"HEX PATH\" lines) or a legacy\n"
                "JSON allowlist is refused with the command that converts it.\n"
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
                {"digest-alg", required_argument, NULL, 'a'},
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
                case 'a':
                        ko.alg_256 = hashalg_from_name(optarg, strlen(optarg));
                        if (!ko.alg_256 || ko.alg_256->size != 32 ||
                            !(ko.alg_256->flags & HASHALG_POLICY)) {
                                fprintf(stderr,
                                        "attestctl policy import-keylime: --digest-alg %s: "
                                        "sha256 or sm3 (an algorithm of 32-byte digests)\n",
                                        optarg);
                                return 2;
                        }
                        if (ko.alg_256->id == HASHALG_SHA256)
                                ko.alg_256 = NULL; /* the default: carried as written */
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
        if (x < 0) /* a flat allowlist ("HEX PATH" lines) is not JSON: say how to convert it */
                x = keylime_flat_refusal((const char *)buf, len, x, &err);
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
