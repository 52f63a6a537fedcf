/* SPDX-License-Identifier: MIT */
/*
 * Writes seed inputs at cap - 1, cap and cap + 1 for every cap of every parser the fuzzers cover
 * (STYLE "Untrusted bytes": libFuzzer grows inputs slowly, so a fuzzer only explores near a large
 * cap when it starts there). Files go to DIR/TARGET/cap-WHAT-{m1,eq,p1}. They are generated, not
 * committed: tests/fuzz/run.sh makes them before each run and `meson test` replays them
 * (tests/fuzz/replay-caps.sh).
 * Usage: mkseeds [--big] DIR [TARGET...]   (--big adds the 16 MiB evidence and HTTP body seeds)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/cms.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

/* the agent's headers by path: its config.h shares a name with attestd's */
#include "agent/config.h"
#include "agent/facts.h"
#include "daemon/auth.h"
#include "evidence/cdata.h"
#include "daemon/config.h"
#include "daemon/http/http-frame.h"
#include "evidence/evjson.h"
#include "tests/fuzz/fuzz-util-kv.h"
#include "tests/lib/imagen.h"
#include "evidence/pcrs.h"
#include "policy/policy.h"
#include "policy/runtime.h"
#include "evidence/quote.h"
#include "tests/lib/tcglogen.h"
#include "verify/replay-state.h"

#define HASH64 "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

static const char *const suffix[3] = {"m1", "eq", "p1"};
static const char *top_dir;

_Noreturn static void die(const char *what)
{
        fprintf(stderr, "mkseeds: %s: %s\n", what, strerror(errno));
        exit(1);
}

static void put(const char *target, const char *what, int d, const void *p, size_t n)
{
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", top_dir, target);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                die(path);
        snprintf(path, sizeof(path), "%s/%s/cap-%s-%s", top_dir, target, what, suffix[d + 1]);
        f = fopen(path, "wb");
        if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
                die(path);
}

static char *xmalloc(size_t n)
{
        char *p = malloc(n ? n : 1);

        if (!p)
                die("malloc");
        return p;
}

/* ---- IMA: both formats from one imagen log ---- */

static void put_log(const char *what, int d, struct imagen *g, bool ascii, bool binary)
{
        if (ascii)
                put("ima-ascii", what, d, g->txt, g->txt_len);
        if (binary)
                put("ima-binary", what, d, g->bin, g->bin_len);
        imagen_done(g);
}

static void ima_seeds(void)
{
        static const uint8_t dg[64] = {1, 2, 3};
        uint8_t d256[8 + 32];
        uint8_t *big = (uint8_t *)xmalloc(2 * IMA_DATA_MAX);
        char *name = xmalloc(IMA_NAME_MAX + 2);
        struct imagen g;

        memset(big, 0xab, 2 * IMA_DATA_MAX);
        memcpy(d256, "sha256:", 8); /* with its NUL */
        for (int i = 0; i < 32; i++)
                d256[8 + i] = (uint8_t)(i + 1);
        for (int d = -1; d <= 1; d++) {
                /* template data: "buf" alone is 4 + n bytes */
                struct imagen_field buf = {IMA_FIELD_BUF, big, (size_t)(IMA_DATA_MAX - 4 + d)};
                if (imagen_init(&g) < 0 || imagen_ng(&g, 10, "sha256", dg, 32, "boot_aggregate") ||
                    imagen_fields(&g, 10, "buf", &buf, 1, 0) < 0)
                        die("imagen");
                put_log("data", d, &g, true, true);
                /* the fixed scratch overflow: digests after a full buf field */
                struct imagen_field four[] = {{IMA_FIELD_BUF, big, IMA_DATA_MAX - 4 + d},
                                              {IMA_FIELD_D_NG, d256, sizeof(d256)},
                                              {IMA_FIELD_D_NG, d256, sizeof(d256)},
                                              {IMA_FIELD_BUF, big, 2000}};
                if (imagen_init(&g) < 0 || imagen_fields(&g, 10, "buf|d-ng|d-ng|buf", four, 4, 0))
                        die("imagen");
                put_log("overflow4", d, &g, true, true);
                struct imagen_field three[] = {{IMA_FIELD_D_NG, d256, sizeof(d256)},
                                               {IMA_FIELD_BUF, big, IMA_DATA_MAX - 44 - 4 + d}};
                if (imagen_init(&g) < 0 || imagen_fields(&g, 10, "d-ng|buf", three, 2, 0))
                        die("imagen");
                put_log("dng-buf", d, &g, true, true);
                /* names */
                memset(name, 'n', IMA_NAME_MAX + 1);
                name[IMA_NAME_MAX / 2] = ' ';
                name[IMA_NAME_MAX + d] = '\0';
                if (imagen_init(&g) < 0 || imagen_ng(&g, 10, "sha256", dg, 32, name) < 0)
                        die("imagen");
                put_log("name", d, &g, true, true);
                name[IMA_LEGACY_NAME_MAX + d] = '\0';
                if (imagen_init(&g) < 0 || imagen_legacy(&g, 10, dg, name) < 0)
                        die("imagen");
                put_log("legacy-name", d, &g, true, true);
                /* template name: an unknown one of 254, 255, 256 bytes */
                memset(name, 'x', IMA_TMPL_NAME_MAX + 1);
                name[IMA_TMPL_NAME_MAX + d] = '\0';
                if (imagen_init(&g) < 0 || imagen_fields(&g, 10, name, &buf, 1, 0) < 0)
                        die("imagen");
                put_log("tmpl-name", d, &g, true, true);
        }
        /* ascii lines of IMA_ASCII_LINE_MAX - 1, cap, cap + 1 bytes: two sig fields */
        for (int d = -1; d <= 1; d++) {
                size_t total = (size_t)(IMA_ASCII_LINE_MAX + d), pos;
                char *s = xmalloc(total + 1);

                pos = (size_t)snprintf(s, total + 1, "10 %.40s sig|sig ", HASH64);
                memset(s + pos, 'a', total - pos);
                s[pos + (total - pos) / 2] = ' ';
                s[total] = '\n';
                put("ima-ascii", "line", d, s, total + 1);
                free(s);
        }
        free(big);
        free(name);
}

/* ---- key=value ---- */

static void kv_seeds(void)
{
        char *b = xmalloc(CDATA_BUF_MAX + 2);
        size_t n;

        for (int d = -1; d <= 1; d++) {
                n = (size_t)(CDATA_BUF_MAX + d);
                memset(b, 'v', n);
                memcpy(b, "k=", 2);
                b[n - 1] = ';';
                put("kv", "buf", d, b, n);
                n = (size_t)(CDATA_KEY_MAX + d);
                memset(b, 'k', n);
                memcpy(b + n, "=1;", 3);
                put("kv", "key", d, b, n + 3);
                n = 0;
                for (int i = 0; i < CDATA_KV_MAX + d; i++)
                        n += (size_t)snprintf(b + n, CDATA_BUF_MAX + 2 - n, "k%d=1;", i);
                put("kv", "pairs", d, b, n);
        }
        free(b);
}

/* ---- PCR files ---- */

static void pcrs_seeds(void)
{
        char *b = xmalloc(PCR_FILE_MAX + 2);
        static const char line0[] = "0 " HASH64 "\n";
        char t[256];

        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(PCR_FILE_MAX + d);

                memset(b, ' ', n);
                memcpy(b, line0, sizeof(line0) - 1);
                b[sizeof(line0) - 1] = '#';
                b[n - 1] = '\n';
                put("pcrs", "file", d, b, n);
                n = (size_t)snprintf(t, sizeof(t), "sha512:5 %.*s%.*s\n", 64, HASH64,
                                     2 * (BANK_DIGEST_MAX + d) - 64, HASH64 HASH64);
                put("pcrs", "digest", d, t, n);
                n = (size_t)snprintf(t, sizeof(t), "sha256:\n  %d : 0x%s\n", PCR_COUNT - 1 + d,
                                     HASH64);
                put("pcrs", "index", d, t, n);
        }
        free(b);
}

/* ---- util/kv, the config-file parser under both ---- */

static void util_kv_seeds(void)
{
        char *b = xmalloc(FUZZ_KV_FILE_MAX + 2);
        size_t n;

        for (int d = -1; d <= 1; d++) {
                n = (size_t)(FUZZ_KV_VALUE_MAX + d);
                memcpy(b, "k = ", 4);
                memset(b + 4, 'v', n);
                b[4 + n] = '\n';
                put("util-kv", "value", d, b, n + 5);
                n = (size_t)(FUZZ_KV_KEY_MAX + d);
                memset(b, 'k', n);
                memcpy(b + n, "=1\n", 3);
                put("util-kv", "key", d, b, n + 3);
                n = (size_t)(FUZZ_KV_LINE_MAX + d);
                memset(b, ' ', n);
                b[0] = '#';
                memcpy(b + n, "\r\n", 2);
                put("util-kv", "line", d, b, n + 2);
                n = (size_t)(FUZZ_KV_LINES_MAX + d);
                memset(b, '\n', n);
                memcpy(b + n - 1, "a=1\n", 4);
                put("util-kv", "lines", d, b, n + 3);
                n = (size_t)(FUZZ_KV_FILE_MAX + d);
                memset(b, ' ', n);
                for (size_t i = 200; i < n; i += 201)
                        b[i] = '\n';
                put("util-kv", "file", d, b, n);
        }
        free(b);
}

/* ---- attestd's config and tokens files ---- */

static void config_seeds(void)
{
        char *b = xmalloc(CONFIG_FILE_MAX + 2);
        size_t n;

        for (int d = -1; d <= 1; d++) {
                n = (size_t)snprintf(b, 16, "db = ");
                memset(b + n, 'x', (size_t)(CONFIG_STR_MAX - 1 + d));
                n += (size_t)(CONFIG_STR_MAX - 1 + d);
                b[n++] = '\n';
                put("config", "value", d, b, n);
                n = (size_t)(CONFIG_LINE_MAX + d);
                memset(b, ' ', n);
                b[0] = '#';
                b[n] = '\n';
                put("config", "line", d, b, n + 1);
                n = (size_t)(CONFIG_FILE_MAX + d);
                memset(b, '#', n);
                for (size_t i = 4000; i < n; i += 4001)
                        b[i] = '\n';
                memcpy(b, "retain = 5\n", 11);
                put("config", "file", d, b, n);
                n = (size_t)(CONFIG_LINES_MAX + d);
                memset(b, '\n', n);
                memcpy(b + n - 1, "retain = 6\n", 11);
                put("config", "lines", d, b, n + 10);
                n = (size_t)(CONFIG_KEY_MAX + d);
                memset(b, 'k', n);
                memcpy(b + n, " = 1\n", 5);
                put("config", "key", d, b, n + 5);
        }
        free(b);
}

static void tokens_seeds(void)
{
        char *b = xmalloc(AUTH_FILE_MAX + 2), line[160];
        size_t ll = (size_t)snprintf(line, sizeof(line), "reader %s\n", HASH64), n;

        for (int d = -1; d <= 1; d++) {
                size_t k = (size_t)(AUTH_TOKENS_MAX + d);

                for (size_t i = 0; i < k; i++)
                        memcpy(b + i * ll, line, ll);
                put("tokens", "count", d, b, k * ll);
                n = (size_t)(AUTH_FILE_MAX + d);
                memset(b, '\n', n);
                memcpy(b, line, ll);
                put("tokens", "file", d, b, n);
                n = (size_t)(4096 + d);
                memset(b, 'c', n);
                memcpy(b, line, ll - 1);
                b[ll - 1] = ' ';
                b[n] = '\n';
                put("tokens", "line", d, b, n + 1);
                n = (size_t)snprintf(b, 200, "admin %.*s\n", 64 + d, HASH64 "0");
                put("tokens", "hash", d, b, n);
        }
        free(b);
}

/* ---- attest-agent's config file and host facts ---- */

static void agent_config_seeds(void)
{
        char *b = xmalloc(AGENT_CONFIG_FILE_MAX + 2);
        size_t n;

        for (int d = -1; d <= 1; d++) {
                n = (size_t)snprintf(b, 32, "state-dir = ");
                memset(b + n, 'x', (size_t)(AGENT_CONFIG_STR_MAX - 1 + d));
                n += (size_t)(AGENT_CONFIG_STR_MAX - 1 + d);
                b[n++] = '\n';
                put("agent-config", "value", d, b, n);
                n = (size_t)(AGENT_CONFIG_LINE_MAX + d);
                memset(b, ' ', n);
                b[0] = '#';
                b[n] = '\n';
                put("agent-config", "line", d, b, n + 1);
                n = (size_t)(AGENT_CONFIG_FILE_MAX + d);
                memset(b, '\n', n);
                memcpy(b, "timeout = 5\n", 12);
                put("agent-config", "file", d, b, n);
                n = (size_t)snprintf(b, 64, "interval = %d\ntimeout = %d\n", AGENT_INTERVAL_MAX + d,
                                     AGENT_TIMEOUT_MAX + d);
                put("agent-config", "numbers", d, b, n);
                n = (size_t)(AGENT_TOKEN_MAX + d);
                memset(b, 't', n);
                b[n] = '\n';
                put("agent-config", "token", d, b, n + 1);
                n = (size_t)(AGENT_TOKEN_FILE_MAX + d);
                memset(b, ' ', n);
                b[0] = 't';
                put("agent-config", "token-file", d, b, n);
                n = (size_t)(AGENT_ID_MAX + d);
                memset(b, 'a', n);
                put("agent-config", "id", d, b, n);
        }
        free(b);
}

static void facts_seeds(void)
{
        char *b = xmalloc(FACTS_CONFIG_MAX + 2);
        size_t n;

        for (int d = -1; d <= 1; d++) {
                n = (size_t)((long)FACTS_CONFIG_MAX + d);
                memset(b, '\n', n);
                memcpy(b, "CONFIG_CFI_CLANG=y\n", 19);
                put("facts", "config", d, b, n);
                n = (size_t)(FACTS_CONFIG_LINE_MAX + d);
                memset(b, 'x', n);
                memcpy(b, "CONFIG_CMDLINE=\"", 16);
                b[n] = '\n';
                put("facts", "config-line", d, b, n + 1);
                n = (size_t)(FACTS_CMDLINE_MAX - 1 + d);
                memset(b, 'a', n);
                memcpy(b + n - 19, " trusted.source=tpm", 19);
                b[n] = '\n';
                put("facts", "cmdline", d, b, n + 1);
        }
        free(b);
}

/* ---- quotes: fuzz-quote's framing, each length at its cap (contents junk: the caps come first)
 * ---- */

static size_t frame(uint8_t *b, size_t ak, size_t attest, size_t nonce, size_t sig)
{
        size_t n = 0;

        b[n++] = (uint8_t)(ak >> 8), b[n++] = (uint8_t)ak;
        memset(b + n, 0x11, ak), n += ak;
        b[n++] = (uint8_t)(attest >> 8), b[n++] = (uint8_t)attest;
        memset(b + n, 0x22, attest), n += attest;
        b[n++] = (uint8_t)nonce;
        memset(b + n, 0x33, nonce), n += nonce;
        memset(b + n, 0x44, sig), n += sig;
        return n;
}

static void quote_seeds(void)
{
        uint8_t *b = (uint8_t *)xmalloc(8 * 1024);

        for (int d = -1; d <= 1; d++) {
                put("quote", "ak", d, b, frame(b, (size_t)(QUOTE_AK_MAX + d), 64, 32, 256));
                put("quote", "attest", d, b,
                    frame(b, 300, (size_t)(QUOTE_ATTEST_MAX + d), 32, 256));
                put("quote", "nonce", d, b, frame(b, 300, 128, (size_t)(QUOTE_NONCE_MAX + d), 256));
                put("quote", "sig", d, b, frame(b, 300, 128, 32, (size_t)(QUOTE_SIG_MAX + d)));
        }
        free(b);
}

/* ---- JSON bodies: a small valid document padded with blanks to the cap ---- */

static void put_padded(const char *target, const char *what, int d, const char *prefix,
                       const char *doc, size_t total)
{
        size_t pl = strlen(prefix), dl = strlen(doc);
        char *b = xmalloc(total);

        if (total < pl + dl)
                die("padded seed smaller than its document");
        memcpy(b, prefix, pl);
        b[pl] = doc[0];
        memset(b + pl + 1, ' ', total - pl - dl);
        memcpy(b + total - (dl - 1), doc + 1, dl - 1);
        put(target, what, d, b, total);
        free(b);
}

static void json_seeds(bool huge)
{
        static const char policy[] = "{\"name\":\"x\",\"kernel\":{\"versions\":[\"6.1.[0-9]\"]}}";
        static const char evidence[] = "{\"nonce\":\"AAAA\"}";

        for (int d = -1; d <= 1; d++) {
                put_padded("policy", "body", d, "", policy, (size_t)(POLICY_JSON_MAX + d));
                /* http: PUT, admin token, application/json, then path and body */
                put_padded("http", "policy-body", d, "\x02\x01\x01/v1/policies/p\n", policy,
                           strlen("\x02\x01\x01/v1/policies/p\n") + (size_t)(64 * 1024 + d));
                if (huge) {
                        put_padded("evidence", "body", d, "", evidence,
                                   (size_t)(EVIDENCE_JSON_MAX + d));
                        put_padded("http", "evidence-body", d,
                                   "\x01\x06\x01/v1/agents/a/evidence\n", evidence,
                                   strlen("\x01\x06\x01/v1/agents/a/evidence\n") +
                                           (size_t)(16u * 1024 * 1024 + d));
                }
        }
}

/* Request framing (fuzz-http-frame.c's input): a target, a field value and a field name of
 * HTTP_FRAME_LEN_MAX + d bytes, and HTTP_FRAME_FIELDS_MAX + d fields. */
static void http_frame_seeds(void)
{
        static const char head[] = "\x00/x\nHost:a\n";
        const size_t hl = sizeof(head) - 1;

        for (int d = -1; d <= 1; d++) {
                size_t n = (size_t)(HTTP_FRAME_LEN_MAX + d), fields = HTTP_FRAME_FIELDS_MAX + d;
                char *b = xmalloc(hl + n + 8);

                /* the target: '/' and n - 1 more bytes */
                b[0] = '\0';
                b[1] = '/';
                memset(b + 2, 'a', n - 1);
                put("http-frame", "target", d, b, n + 1);
                /* a value of n bytes, then a name of n bytes */
                memcpy(b, head, hl);
                memcpy(b + hl, "X-A:", 4);
                memset(b + hl + 4, 'v', n);
                put("http-frame", "value", d, b, hl + 4 + n);
                memset(b + hl, 'n', n);
                b[hl + n] = ':';
                put("http-frame", "name", d, b, hl + n + 1);
                free(b);
                /* Host and fields - 1 more */
                b = xmalloc(hl + fields * 4);
                memcpy(b, head, hl);
                for (size_t i = 1; i < fields; i++)
                        memcpy(b + hl + (i - 1) * 4, "X:1\n", 4);
                put("http-frame", "fields", d, b, hl + (fields - 1) * 4);
                free(b);
        }
}

/* The replay state: its cap is the size of the largest state (every bank, PCR and claim). */
static void replay_state_seeds(void)
{
        struct replay_state s;
        static struct rt_state rt; /* 21 KiB */
        struct cdata_claims *c = &s.claims;
        uint8_t *b = NULL, *p1;
        size_t n = 0;

        replay_state_init(&s);
        s.valid = s.boot_aggregate_seen = s.boot_aggregate_ok = true;
        s.entries = 100;
        s.banks = BANK_MASK_ALL;
        s.used = (1u << PCR_COUNT) - 1;
        memset(s.pcr, 0x5c, sizeof(s.pcr));
        c->selinux_seen = true;
        c->selinux =
                (struct cdata_selinux_state){.entry = 9, .flags_present = 7, .caps_present = 1};
        c->history = (struct cdata_selinux_history){.states = 2,
                                                    .enforced = true,
                                                    .first_enforcing = 3,
                                                    .lapse = SELINUX_LAPSE_PERMISSIVE,
                                                    .lapse_entry = 9};
        c->policy_hash_seen = true;
        c->policy_hash_count = 1;
        c->policy_hash_len = BANK_DIGEST_MAX;
        c->kernel_version_seen = true;
        memset(c->kernel_version, 'v', CDATA_KERNEL_VERSION_MAX - 1);
        c->trusted_keys_seen = true;
        memset(c->trusted_keys.source_name, 'x', CDATA_WORD_MAX - 1);
        memset(c->trusted_keys.rng_name, 'r', CDATA_WORD_MAX - 1);
        memset(c->trusted_keys.requested_name, 'q', CDATA_WORD_MAX - 1);
        c->cfi_seen = true;
        /* runtime: its section at its largest */
        rt_state_init(&rt);
        memset(rt.ref, 'r', RT_REF_MAX);
        rt.failed = rt.nfail = RT_FAILURES_CAP;
        for (unsigned i = 0; i < RT_FAILURES_CAP; i++) {
                rt.fail[i].entry = 10 + i;
                rt.fail[i].digest_len = RT_DIGEST_MAX;
                rt.fail[i].path_len = RT_FAIL_PATH_MAX;
                memset(rt.fail[i].path, '/', RT_FAIL_PATH_MAX);
        }
        /* the measured-boot section at its largest: 8 algorithms, every claim */
        {
                static const uint16_t algs[8][2] = {{0x0004, 20}, {0x000b, 32}, {0x000c, 48},
                                                    {0x000d, 64}, {0x0012, 32}, {0x0027, 32},
                                                    {0x0028, 48}, {0x0029, 64}};
                struct boot_state *bs = &s.boot;

                bs->valid = true;
                bs->offset = 70000;
                bs->entries = 900;
                bs->spec.n_algs = 8;
                for (int i = 0; i < 8; i++)
                        bs->spec.algs[i] =
                                (struct tcglog_alg){.alg_id = algs[i][0], .size = algs[i][1]};
                bs->banks = BANK_MASK_ALL;
                bs->claims.secureboot_seen = bs->claims.locality_seen = true;
                bs->claims.vars_seen = (1u << BOOT_VAR__COUNT) - 1;
                bs->claims.apps_total = bs->claims.n_apps = BOOT_APPS_MAX;
                for (int i = 0; i < BOOT_APPS_MAX; i++)
                        bs->claims.apps[i].bank = BANK_SHA512;
        }
        if (rt_state_stored_encode(&s, &rt, &b, &n) < 0 || n != REPLAY_STATE_MAX)
                die("replay state");
        put("replay-state", "state", -1, b, n - 1);
        put("replay-state", "state", 0, b, n);
        p1 = (uint8_t *)xmalloc(n + 1);
        memcpy(p1, b, n);
        p1[n] = 0;
        put("replay-state", "state", 1, p1, n + 1);
        free(p1);
        free(b);
}

/* runtime: the ima.runtime caps (policy/runtime.h) at cap - 1, cap and cap + 1, as JSON text */
static void runtime_seeds(void)
{
        static const char h64[] = "\"sha256:0000000000000000000000000000000000000000000000000000"
                                  "0000000000%02x\"";
        for (int d = -1; d <= 1; d++) {
                size_t n, cap = 2u * 1024 * 1024, at = 0;
                char *b = xmalloc(cap);

                /* digests for one path */
                at = (size_t)snprintf(b, cap, "{\"digests\":{\"/p\":[");
                for (int i = 0; i < RT_DIGESTS_PER_PATH_MAX + d; i++) {
                        if (i)
                                b[at++] = ',';
                        at += (size_t)snprintf(b + at, cap - at, h64, i & 0xff);
                }
                at += (size_t)snprintf(b + at, cap - at, "]}}");
                put("runtime", "digests-per-path", d, b, at);
                /* a path of the cap's length */
                at = (size_t)snprintf(b, cap, "{\"digests\":{\"/");
                n = RT_PATH_BYTES_MAX + (size_t)d - 1;
                memset(b + at, 'p', n);
                at += n;
                at += (size_t)snprintf(b + at, cap - at, "\":[");
                at += (size_t)snprintf(b + at, cap - at, h64, 1);
                at += (size_t)snprintf(b + at, cap - at, "]}}");
                put("runtime", "path-bytes", d, b, at);
                /* excludes: count, and one of the cap's length */
                at = (size_t)snprintf(b, cap, "{\"excludes\":[");
                for (int i = 0; i < RT_EXCLUDES_MAX + d; i++)
                        at += (size_t)snprintf(b + at, cap - at, "%s\"/t%d/.*\"", i ? "," : "", i);
                at += (size_t)snprintf(b + at, cap - at, "]}");
                put("runtime", "excludes", d, b, at);
                at = (size_t)snprintf(b, cap, "{\"excludes\":[\"");
                n = RT_REGEX_MAX + (size_t)d;
                memset(b + at, 'x', n);
                at += n;
                at += (size_t)snprintf(b + at, cap - at, "\"]}");
                put("runtime", "regex-bytes", d, b, at);
                /* ignored keyrings, failures_max */
                at = (size_t)snprintf(b, cap, "{\"ignored_keyrings\":[");
                for (int i = 0; i < RT_IGNORED_KEYRINGS_MAX + d; i++)
                        at += (size_t)snprintf(b + at, cap - at, "%s\".k%d\"", i ? "," : "", i);
                at += (size_t)snprintf(b + at, cap - at, "]}");
                put("runtime", "ignored-keyrings", d, b, at);
                at = (size_t)snprintf(b, cap, "{\"failures_max\":%d,\"digests\":{}}",
                                      RT_FAILURES_CAP + d);
                put("runtime", "failures-max", d, b, at);
                free(b);
        }
}

/* runtime-sig: ima-modsig signatures of RT_MODSIG_MAX - 1, RT_MODSIG_MAX and RT_MODSIG_MAX + 1
 * bytes, real CMS signatures (sign-file's flags) by the certificate tests/fuzz/fuzz-runtime-sig.c
 * trusts, over its module content; an unsigned attribute pads each to its size. The key is a
 * test key, made for these seeds only. */
static const char fuzz_modsig_key[] =
        "-----BEGIN PRIVATE KEY-----\n"
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCr+MH0XDTGwoB8\n"
        "nWh48VAV+oikMFnLq5rrKix063sCWKwbOMRiIpLW9jRmoEdvtosI5GSyyBzZERqW\n"
        "OyoUWv9VGXuFJA9hlqu8n3PthzZyCSHBQQCB/Ek9qIVVEVl7bj/bfaRYB9iopNO7\n"
        "LhUFLIXzTQX5mN5afMEUh5Nlbouuj08bwKyMlBguTfuYLQQl6HXtJQimmGbxlCGM\n"
        "dmoD3vjDqIhXR54pZ+ncwWZOMlUSWLj33FOgnn65H5eP5B4gTD/Y6AY2TLKUw78K\n"
        "lztWo5wl1uosrcwbrIkaK5kZ4kbXuhhgo4lAP/0Qv9eRsAaxhBOnpAyb5zcTzwox\n"
        "OzD3XN0dAgMBAAECggEAAPt/UJjiePcYCnqluTHRDFxtiKBc+S5iunQwnLcLcVnS\n"
        "cIrtMvE1SW1rMRqsEyI+xaSCmE/6AqgbaZu9BzChOR27NNseDAssBzU2ptNx+Oaw\n"
        "V7tWm8sLjZ86/8Mhjh8fnQr+UGhtSgnKIBSP0BF54N1wRz54CragEU073GHeHoWo\n"
        "U2ozcDnLBcOxIGfGkICNPJ/ARbFMIoDm64VjqyT8eQ+PuaGxynDMhLjYP1L9P9TG\n"
        "kXTA93+ue1oTcCFJM5XBUJA4hm3+NSFNO0bohPOSqa7V/bEuESH+PuvX/p1sB+0Z\n"
        "olkuPpbybO/5LL2VdzSwj5ynXEmXA1EfxDZEE4flawKBgQDfTZgKlYTW2feUBH8d\n"
        "PiOV+cAgxTeOlswBppp9v5Mc1SIzcwnUYDCea0YqExt55RA/f90Fy1izeJfNvhx4\n"
        "QlVvZD2KUucP+oDqB4pFHIAkWX3SPdXrWs0qrgZY4aP8+X+6pjd2JNj5MkwHcVLK\n"
        "R2HsfZrThBsX8iQYRaU6rr0h/wKBgQDFJwgtbjibK1qeqy9Fa0eKn7cbPZCtCFxn\n"
        "yRSpO65lMAfAJrL1MI67kay3YsbXbMgbQJ5pbfVPnecq47V9sC4xcuTsuSRkaIdX\n"
        "wA72ZiQwBCcsKU26oLGZvfK1ZwZ/phF86df4+f6ADeRyOee2bGHncTr3y0kpfW26\n"
        "RCa5++hI4wKBgAMTp5+ltcHcGPwyH6pAe+8KFOqerQhK7Z6sM/69kAJasXDyCdWi\n"
        "Sak1Iy9bOgqw7EtjsKDuz1cRt02/a9cAWvsA75QjVkmzEummlvIi1WUq0n/+GB95\n"
        "DdCjuzSoT0EiEu94cNUw5shwN/n2RsTAvQmsJWD6tgDbdkHbW852L+bzAoGAeN50\n"
        "Kf4gICmVNh+3LHUX+Enw5Xd6Iks088AYtaRMR+cJaWmQX7f0WdR2sjuRsnMTv3l/\n"
        "ZR2vvq8NEYNnOnZv64sIBIWBZTmceFTcF34Jg5KYPX/ZEqkAGUSV71cJaerzX8Sx\n"
        "zwfdWr6ppsoPYAzUfSMzRsXPxesLAZ5Uq8Nf5ocCgYEAltJYi0se48hdEBS19C61\n"
        "pvmZ1bo+u+3c8EFCAEmbgRg+CAXCiQqQt9rP3x6ppCbnSQGq8slDQkabQPct7Frz\n"
        "2mRXQoIko+rVNPf2xTOnD1fCVBLM8Vskn+6Z7L692PH9txpC2oM6lcfoQCP46rKG\n"
        "bT27By4vnPHBVsji4DvYDKU=\n"
        "-----END PRIVATE KEY-----\n";
static const char fuzz_modsig_cert[] =
        "-----BEGIN CERTIFICATE-----\n"
        "MIIDHzCCAgegAwIBAgIUbwR23o1z205O+r4KzIMDi1+GKWIwDQYJKoZIhvcNAQEL\n"
        "BQAwHjEcMBoGA1UEAwwTYXR0ZXN0ZC1mdXp6LW1vZHNpZzAgFw0yNjEyMDMyMzU0\n"
        "MzZaGA8yMTI2MTEwOTIzNTQzNlowHjEcMBoGA1UEAwwTYXR0ZXN0ZC1mdXp6LW1v\n"
        "ZHNpZzCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAKv4wfRcNMbCgHyd\n"
        "aHjxUBX6iKQwWcurmusqLHTrewJYrBs4xGIiktb2NGagR2+2iwjkZLLIHNkRGpY7\n"
        "KhRa/1UZe4UkD2GWq7yfc+2HNnIJIcFBAIH8ST2ohVURWXtuP9t9pFgH2Kik07su\n"
        "FQUshfNNBfmY3lp8wRSHk2Vui66PTxvArIyUGC5N+5gtBCXode0lCKaYZvGUIYx2\n"
        "agPe+MOoiFdHniln6dzBZk4yVRJYuPfcU6Cefrkfl4/kHiBMP9joBjZMspTDvwqX\n"
        "O1ajnCXW6iytzBusiRormRniRte6GGCjiUA//RC/15GwBrGEE6ekDJvnNxPPCjE7\n"
        "MPdc3R0CAwEAAaNTMFEwHwYDVR0jBBgwFoAUl3paHPY3pRxJJBB5pVR/JnF+p8ww\n"
        "DwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUl3paHPY3pRxJJBB5pVR/JnF+p8ww\n"
        "DQYJKoZIhvcNAQELBQADggEBAFVG1eWDzjPyn+UghY3xyyyM4/90lf5LpcOcein4\n"
        "sluqlbDfZo9XB8zptA0pM0lHzFNNyCnEZ9JdqvbBiPRjWYIBt9QmuexumaoCBeoW\n"
        "OKzDe9vqFTX3rxq8CCVMZFfR+hxQ9xgnqvR4u0qc/+VytUVu9H4fH+laR7qzEQ2P\n"
        "Iwpjqy7qwDw4FbfHS9DGSE/8RVuqvdWNhza7B40bDFZ1ZHVI7qdEKqTwWa1FNsQL\n"
        "rh8hg8E5XyzLiQn8ruIZ2OhxhrwTd+l5zUljyWuLRboK9fRIdrGsWBaCK1/wI2o6\n"
        "XtfbUT0fWohdyMjDPuOqWm2JA7JYNuWxvC+n0VjRHgp11TE=\n"
        "-----END CERTIFICATE-----\n";

static uint8_t *modsig_sized(EVP_PKEY *k, X509 *c, size_t pad, size_t *ret_len)
{
        static const char content[] = "fuzz module content\n";
        unsigned f = CMS_NOCERTS | CMS_BINARY | CMS_DETACHED;
        BIO *in = BIO_new_mem_buf(content, (int)strlen(content));
        CMS_ContentInfo *cms = CMS_sign(NULL, NULL, NULL, NULL, f | CMS_PARTIAL);
        CMS_SignerInfo *si;
        unsigned char *der = NULL;
        uint8_t *z = calloc(1, pad), *out;
        int n = 0;

        if (!in || !cms || !z ||
            !(si = CMS_add1_signer(cms, c, k, EVP_sha256(),
                                   CMS_NOCERTS | CMS_BINARY | CMS_NOSMIMECAP | CMS_NOATTR)) ||
            CMS_final(cms, in, NULL, f) != 1 ||
            CMS_unsigned_add1_attr_by_NID(si, NID_pkcs9_unstructuredAddress, V_ASN1_OCTET_STRING, z,
                                          (int)pad) != 1 ||
            (n = i2d_CMS_ContentInfo(cms, &der)) <= 0)
                die("modsig seed");
        out = (uint8_t *)xmalloc((size_t)n);
        memcpy(out, der, (size_t)n);
        *ret_len = (size_t)n;
        OPENSSL_free(der);
        CMS_ContentInfo_free(cms);
        BIO_free(in);
        free(z);
        return out;
}

static void runtime_sig_seeds(void)
{
        BIO *kb = BIO_new_mem_buf(fuzz_modsig_key, -1), *cb = BIO_new_mem_buf(fuzz_modsig_cert, -1);
        EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
        X509 *c = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;

        if (!k || !c)
                die("modsig seed key");
        for (int d = -1; d <= 1; d++) {
                size_t want = RT_MODSIG_MAX + (size_t)d, n, pad = 1000;
                uint8_t *m = modsig_sized(k, c, pad, &n);

                /* DER lengths of 2 bytes at these sizes: the size grows with the pad 1:1 */
                free(m);
                m = modsig_sized(k, c, pad + want - n, &n);
                if (n != want)
                        die("modsig seed size");
                put("runtime-sig", "modsig-bytes", d, m, n);
                free(m);
        }
        EVP_PKEY_free(k);
        X509_free(c);
        BIO_free(kb);
        BIO_free(cb);
}

/* Firmware event logs at the reader's caps: event size, algorithms, entries. */
static void tcglog_seeds(void)
{
        static const uint16_t algs[9] = {0x0004, 0x000b, 0x000c, 0x000d, 0x0012,
                                         0x0027, 0x0028, 0x0029, 0x0010};
        static const uint16_t sizes[9] = {20, 32, 48, 64, 32, 32, 48, 64, 32};
        uint8_t *zeros = (uint8_t *)xmalloc(TCGLOG_EVENT_MAX + 1);

        memset(zeros, 0, TCGLOG_EVENT_MAX + 1);
        for (int d = -1; d <= 1; d++) {
                struct tlg g;

                tlg_begin(&g, NULL, NULL, 0);
                tlg_event(&g, 2, EV_EFI_HANDOFF_TABLES2, zeros, (size_t)(TCGLOG_EVENT_MAX + d));
                tlg_event(&g, 0, EV_SEPARATOR, zeros, 4);
                put("tcglog", "event", d, g.buf, g.len);
                tlg_free(&g);
                tlg_begin(&g, algs, sizes, (unsigned)(TCGLOG_ALGS_MAX + d));
                tlg_event(&g, 0, EV_SEPARATOR, zeros, 4);
                tlg_event(&g, 7, EV_SEPARATOR, zeros, 4);
                tlg_event(&g, 4, EV_SEPARATOR, zeros, 4);
                put("tcglog", "algs", d, g.buf, g.len);
                tlg_free(&g);
                tlg_begin(&g, algs, sizes, 1);
                for (unsigned i = 1; i < (unsigned)(TCGLOG_ENTRIES_MAX + d); i++)
                        tlg_event(&g, i % 8, EV_SEPARATOR, zeros, 4);
                put("tcglog", "entries", d, g.buf, g.len);
                tlg_free(&g);
        }
        free(zeros);
}

int main(int argc, char **argv)
{
        bool huge = false;
        int i = 1;

        if (i < argc && !strcmp(argv[i], "--big")) {
                huge = true;
                i++;
        }
        if (i >= argc) {
                fprintf(stderr, "Usage: %s [--big] DIR [TARGET...]\n", argv[0]);
                return 2;
        }
        top_dir = argv[i++];
        if (mkdir(top_dir, 0755) < 0 && errno != EEXIST)
                die(top_dir);
        for (bool all = i == argc; all || i < argc; all = false, i++) {
                const char *t = all ? "" : argv[i];

                if (all || !strcmp(t, "ima-ascii") || !strcmp(t, "ima-binary"))
                        ima_seeds();
                if (all || !strcmp(t, "kv"))
                        kv_seeds();
                if (all || !strcmp(t, "util-kv"))
                        util_kv_seeds();
                if (all || !strcmp(t, "pcrs"))
                        pcrs_seeds();
                if (all || !strcmp(t, "config"))
                        config_seeds();
                if (all || !strcmp(t, "tokens"))
                        tokens_seeds();
                if (all || !strcmp(t, "agent-config"))
                        agent_config_seeds();
                if (all || !strcmp(t, "facts"))
                        facts_seeds();
                if (all || !strcmp(t, "quote"))
                        quote_seeds();
                if (all || !strcmp(t, "replay-state"))
                        replay_state_seeds();
                if (all || !strcmp(t, "runtime"))
                        runtime_seeds();
                if (all || !strcmp(t, "runtime-sig"))
                        runtime_sig_seeds();
                if (all || !strcmp(t, "tcglog"))
                        tcglog_seeds();
                if (all || !strcmp(t, "http-frame"))
                        http_frame_seeds();
                if (all || !strcmp(t, "policy") || !strcmp(t, "http") || !strcmp(t, "evidence"))
                        json_seeds(huge);
                if (all)
                        break;
        }
        return 0;
}
