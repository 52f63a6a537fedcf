/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config.h"
#include "evidence/pcrsel.h"
#include "util/file.h"
#include "util/hex.h"
#include "util/kv.h"
#include "util/num.h"
#include "util/tok.h"

enum key_type { KEY_STR, KEY_U32, KEY_BOOL, KEY_ALG, KEY_FORMAT, KEY_PCRS, KEY_LABEL, KEY_URL };

struct key {
        const char *name;
        enum key_type type;
        size_t off;
        uint32_t max; /* KEY_U32: 1..max */
};

#define O(f) offsetof(struct agent_config, f)
static const struct key keys[AGENT_CFG_KEY_COUNT] = {
        [AGENT_CFG_VERIFIER] = {"verifier", KEY_URL, O(verifiers), 0},
        [AGENT_CFG_CA] = {"ca", KEY_STR, O(ca), 0},
        [AGENT_CFG_CERT] = {"cert", KEY_STR, O(cert), 0},
        [AGENT_CFG_KEY] = {"key", KEY_STR, O(key), 0},
        [AGENT_CFG_TOKEN_FILE] = {"token-file", KEY_STR, O(token_file), 0},
        [AGENT_CFG_TCTI] = {"tcti", KEY_STR, O(tcti), 0},
        [AGENT_CFG_STATE_DIR] = {"state-dir", KEY_STR, O(state_dir), 0},
        [AGENT_CFG_AK_ALG] = {"ak-alg", KEY_ALG, O(ak_alg), 0},
        [AGENT_CFG_IMA_LOG] = {"ima-log", KEY_STR, O(ima_log), 0},
        [AGENT_CFG_IMA_FORMAT] = {"ima-format", KEY_FORMAT, O(ima_ascii), 0},
        [AGENT_CFG_PCRS] = {"pcrs", KEY_PCRS, O(pcrs), 0},
        [AGENT_CFG_INTERVAL] = {"interval", KEY_U32, O(interval), AGENT_INTERVAL_MAX},
        [AGENT_CFG_ONCE] = {"once", KEY_BOOL, O(once), 0},
        [AGENT_CFG_DUMP_EVIDENCE] = {"dump-evidence", KEY_STR, O(dump_evidence), 0},
        [AGENT_CFG_INSECURE_HTTP] = {"insecure-http", KEY_BOOL, O(insecure_http), 0},
        [AGENT_CFG_PROC_ROOT] = {"proc-root", KEY_STR, O(proc_root), 0},
        [AGENT_CFG_TIMEOUT] = {"timeout", KEY_U32, O(timeout), AGENT_TIMEOUT_MAX},
        [AGENT_CFG_LABEL] = {"label", KEY_LABEL, O(labels), 0},
        [AGENT_CFG_MACHINE_ID_FILE] = {"machine-id-file", KEY_STR, O(machine_id_file), 0},
        [AGENT_CFG_RETRY_MAX] = {"retry-max", KEY_U32, O(retry_max), AGENT_RETRY_MAX_MAX},
        [AGENT_CFG_FAILBACK] = {"failback", KEY_U32, O(failback), AGENT_FAILBACK_MAX},
        [AGENT_CFG_BOOT_LOG] = {"boot-log", KEY_STR, O(boot_log), 0},
};
#undef O

const char *agent_config_key_name(enum agent_config_key k)
{
        return (unsigned)k < AGENT_CFG_KEY_COUNT ? keys[k].name : NULL;
}

int agent_config_key_from_name(const char *name, size_t len, enum agent_config_key *ret)
{
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                if (strlen(keys[i].name) == len && memcmp(keys[i].name, name, len) == 0) {
                        *ret = (enum agent_config_key)i;
                        return 0;
                }
        return -ENOENT;
}

/* KEY=VALUE (blanks around either cut) as a new label of c. */
static int set_label(struct agent_config *c, struct span v, struct attest_err *err)
{
        struct tok t = TOK_INIT(v.p, v.n);
        struct span key, val;
        struct evidence_label *l;

        if (tok_field(&t, '=', AGENT_CONFIG_STR_MAX, &key) < 0 || !t.more ||
            tok_rest(&t, AGENT_CONFIG_STR_MAX, &val) < 0)
                return attest_fail(err, -EINVAL, AE_CONFIG, "label: wants KEY=VALUE");
        key = span_trim(key);
        val = span_trim(val);
        if (!evidence_label_key_valid(key.p, key.n))
                return attest_fail(err, -EINVAL, AE_CONFIG,
                                   "label: key: wants 1..%d of [a-z0-9._-], starting with [a-z0-9]",
                                   EVIDENCE_LABEL_KEY_MAX);
        if (!evidence_label_value_valid(val.p, val.n))
                return attest_fail(err, -EINVAL, AE_CONFIG,
                                   "label: value of %.*s: wants 1..%d of [A-Za-z0-9._-]",
                                   (int)key.n, key.p, EVIDENCE_LABEL_VALUE_MAX);
        for (unsigned i = 0; i < c->n_labels; i++)
                if (span_eq(key, c->labels[i].key))
                        return attest_fail(err, -EINVAL, AE_CONFIG, "label: key %.*s given twice",
                                           (int)key.n, key.p);
        if (c->n_labels >= EVIDENCE_LABELS_MAX)
                return attest_fail(err, -EINVAL, AE_CONFIG, "label: more than %d labels",
                                   EVIDENCE_LABELS_MAX);
        l = &c->labels[c->n_labels];
        if (span_cstr(key, l->key, sizeof(l->key)) < 0 ||
            span_cstr(val, l->value, sizeof(l->value)) < 0)
                return attest_fail(err, -EINVAL, AE_CONFIG, "label: too long");
        c->n_labels++;
        return 0;
}

/* One more verifier URL, after those given before (their order is the order of preference). */
static int set_verifier(struct agent_config *c, struct span v, struct attest_err *err)
{
        for (unsigned i = 0; i < c->n_verifiers; i++)
                if (span_eq(v, c->verifiers[i]))
                        return attest_fail(err, -EINVAL, AE_CONFIG, "verifier: %.*s given twice",
                                           (int)v.n, v.p);
        if (c->n_verifiers >= AGENT_VERIFIERS_MAX)
                return attest_fail(err, -EINVAL, AE_CONFIG, "verifier: more than %d verifiers",
                                   AGENT_VERIFIERS_MAX);
        if (span_cstr(v, c->verifiers[c->n_verifiers], AGENT_CONFIG_STR_MAX) < 0)
                return attest_fail(err, -EINVAL, AE_CONFIG, "verifier: value too long");
        c->n_verifiers++;
        return 0;
}

int agent_config_set(struct agent_config *c, enum agent_config_key k, const char *val, size_t len,
                     struct attest_err *err)
{
        const struct key *o;
        struct span v = {val, len};
        char *base;

        if ((unsigned)k >= AGENT_CFG_KEY_COUNT)
                return attest_fail(err, -EINVAL, AE_CONFIG, "unknown key");
        o = &keys[k];
        base = (char *)c + o->off;
        if (!val && o->type != KEY_BOOL)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: wants a value", o->name);
        if (val && len == 0)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: empty value", o->name);
        if (val && len >= AGENT_CONFIG_STR_MAX)
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: value longer than %d bytes",
                                   o->name, AGENT_CONFIG_STR_MAX - 1);
        if (val && memchr(val, '\0', len))
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: NUL byte in the value", o->name);
        switch (o->type) {
        case KEY_STR:
                if (span_cstr(v, base, AGENT_CONFIG_STR_MAX) < 0)
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: value too long", o->name);
                break;
        case KEY_PCRS: {
                char tmp[AGENT_CONFIG_STR_MAX];
                struct pcr_sel s;

                if (span_cstr(v, tmp, sizeof(tmp)) < 0 || pcr_sel_parse(tmp, &s) < 0)
                        return attest_fail(err, -EINVAL, AE_CONFIG,
                                           "%s: not a PCR selection (sha256:0-10+sha1:10)",
                                           o->name);
                memcpy(base, tmp, strlen(tmp) + 1);
                break;
        }
        case KEY_U32: {
                uint32_t u;

                if (num_u32(v.p, v.n, 1, o->max, &u) < 0)
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: wants a number in 1..%u",
                                           o->name, (unsigned)o->max);
                memcpy(base, &u, sizeof(u));
                break;
        }
        case KEY_BOOL: {
                bool b = true;

                /* a flag: only a true value (there is no --no-once to undo it) */
                if (val && !span_eq(v, "true") && !span_eq(v, "yes") && !span_eq(v, "1"))
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: wants true, yes or 1",
                                           o->name);
                memcpy(base, &b, sizeof(b));
                break;
        }
        case KEY_ALG: {
                enum tpm_key_alg a;

                if (span_eq(v, "rsa"))
                        a = TPM_KEY_RSA2048;
                else if (span_eq(v, "ecc"))
                        a = TPM_KEY_ECCP256;
                else
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: wants rsa or ecc",
                                           o->name);
                memcpy(base, &a, sizeof(a));
                break;
        }
        case KEY_URL: {
                int x = set_verifier(c, v, err);

                if (x < 0)
                        return x;
                break;
        }
        case KEY_LABEL: {
                int x = set_label(c, v, err);

                if (x < 0)
                        return x;
                break;
        }
        case KEY_FORMAT: {
                bool ascii;

                if (span_eq(v, "binary"))
                        ascii = false;
                else if (span_eq(v, "ascii"))
                        ascii = true;
                else
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: wants binary or ascii",
                                           o->name);
                memcpy(base, &ascii, sizeof(ascii));
                break;
        }
        }
        c->set |= 1u << k;
        return 0;
}

int agent_config_parse(const char *text, size_t len, const char *name, struct agent_config *c,
                       struct attest_err *err)
{
        static const struct kv_limits lim = {
                .file_max = AGENT_CONFIG_FILE_MAX,
                .line_max = AGENT_CONFIG_LINE_MAX,
                .key_max = 64,
                .value_max = AGENT_CONFIG_LINE_MAX,
                .lines_max = AGENT_CONFIG_FILE_MAX,
        };
        _cleanup_free_ struct agent_config *tmp = NULL;
        enum agent_config_key k;
        struct kv_pair p;
        struct kv kv;
        int x;

        if ((x = kv_init(&kv, text, len, name, &lim, err)) < 0)
                return x;
        /* lines apply to a copy: a failed parse leaves c as it was */
        if (!(tmp = malloc(sizeof(*tmp))))
                return -ENOMEM;
        memcpy(tmp, c, sizeof(*tmp));
        while ((x = kv_next(&kv, &p, err)) > 0) {
                if (agent_config_key_from_name(p.key.p, p.key.n, &k) < 0)
                        return kv_fail(&kv, err, "unknown key");
                if ((x = agent_config_set(tmp, k, p.value.p, p.value.n, err)) < 0) {
                        kv_err_prefix(&kv, err);
                        return x;
                }
        }
        if (x < 0)
                return x;
        memcpy(c, tmp, sizeof(*c));
        return 0;
}

int agent_config_load(const char *path, bool must_exist, struct agent_config *c,
                      struct attest_err *err)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int x;

        if ((x = file_read_alloc(path, AGENT_CONFIG_FILE_MAX, 0, &buf, &len, err)) < 0) {
                if (x == -ENOENT && !must_exist)
                        return 0;
                if (x == -E2BIG)
                        return attest_fail(err, -EINVAL, AE_CONFIG, "%s: larger than %d bytes",
                                           path, AGENT_CONFIG_FILE_MAX);
                if (x == -EACCES) /* not a usage error: the caller says who needs what */
                        return attest_fail(err, -EACCES, AE_CONFIG, "%s: %s", path, strerror(-x));
                return attest_fail(err, -EINVAL, AE_CONFIG, "%s: %s", path, strerror(-x));
        }
        return agent_config_parse(buf, len, path, c, err);
}

int agent_token_parse(const char *text, size_t len, char *out)
{
        struct tok t = TOK_INIT(text, len), ln;
        struct span s;

        if (len > AGENT_TOKEN_FILE_MAX)
                return -E2BIG;
        if (tok_line(&t, AGENT_TOKEN_FILE_MAX, TOK_STRIP_CR, &ln) <= 0 || !tok_empty(&t) ||
            tok_rest(&ln, AGENT_TOKEN_FILE_MAX, &s) < 0)
                return -EBADMSG;
        s = span_trim(s);
        if (s.n > AGENT_TOKEN_MAX)
                return -E2BIG;
        if (s.n == 0)
                return -EBADMSG;
        /* visible ASCII only: the token goes into an HTTP header */
        for (size_t i = 0; i < s.n; i++)
                if ((unsigned char)s.p[i] <= 0x20 || (unsigned char)s.p[i] >= 0x7f)
                        return -EBADMSG;
        return span_cstr(s, out, AGENT_TOKEN_MAX + 1);
}

int agent_id_parse(const char *text, size_t len, char *out)
{
        struct tok t = TOK_INIT(text, len);
        struct span s;
        int x;

        if ((x = tok_rest(&t, AGENT_ID_MAX, &s)) < 0)
                return x == -E2BIG ? -E2BIG : -EBADMSG;
        if (!hex_is_lower(s.p, s.n))
                return -EBADMSG;
        return span_cstr(s, out, AGENT_ID_MAX + 1);
}
