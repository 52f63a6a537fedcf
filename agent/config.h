/* SPDX-License-Identifier: MIT */
/*
 * attest-agent's settings: the config file (`key = value` lines, keys the long option names) and
 * the command-line flags go through the same setter, so both are validated alike. The file is
 * untrusted text read by util/file.h and cut by util/kv.h with the caps below; see
 * attest-agent(8).
 */
#ifndef AGENT_CONFIG_H
#define AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/evidence.h"
#include "util/err.h"
#include "tpm/tpm.h"

#define AGENT_CONFIG_DEFAULT_FILE "/etc/attest-agent/agent.conf"
#define AGENT_CONFIG_STR_MAX 4096                          /* a value, with its NUL */
#define AGENT_CONFIG_LINE_MAX (AGENT_CONFIG_STR_MAX + 128) /* a line, without its newline */
#define AGENT_CONFIG_FILE_MAX (64 * 1024)                  /* the whole file */
#define AGENT_INTERVAL_MAX 86400                           /* --interval, seconds */
#define AGENT_TIMEOUT_MAX 3600                             /* --timeout, seconds */
#define AGENT_TOKEN_MAX 256                                /* the bearer token */
#define AGENT_TOKEN_FILE_MAX (AGENT_TOKEN_MAX + 16)        /* its file: blanks, CRLF */
#define AGENT_ID_MAX 64                                    /* the id the verifier assigned */
#define AGENT_VERIFIERS_MAX 8                              /* `verifier` lines / --verifier flags */
#define AGENT_RETRY_MAX_MAX 86400                          /* --retry-max, seconds */
#define AGENT_FAILBACK_MAX 86400                           /* --failback, seconds */

/* One per key; bit (1u << key) of agent_config.set says the key was given. */
enum agent_config_key {
        AGENT_CFG_VERIFIER,
        AGENT_CFG_CA,
        AGENT_CFG_CERT,
        AGENT_CFG_KEY,
        AGENT_CFG_TOKEN_FILE,
        AGENT_CFG_TCTI,
        AGENT_CFG_STATE_DIR,
        AGENT_CFG_AK_ALG,
        AGENT_CFG_IMA_LOG,
        AGENT_CFG_IMA_FORMAT,
        AGENT_CFG_PCRS,
        AGENT_CFG_INTERVAL,
        AGENT_CFG_ONCE,
        AGENT_CFG_DUMP_EVIDENCE,
        AGENT_CFG_INSECURE_HTTP,
        AGENT_CFG_PROC_ROOT,
        AGENT_CFG_TIMEOUT,
        AGENT_CFG_LABEL,           /* repeatable: one label a line, KEY=VALUE */
        AGENT_CFG_MACHINE_ID_FILE, /* /etc/machine-id */
        AGENT_CFG_RETRY_MAX,       /* the back-off's cap, seconds */
        AGENT_CFG_FAILBACK,        /* seconds on a later verifier before the first is tried again */
        AGENT_CFG_BOOT_LOG,        /* the firmware event log, or "none" */
        AGENT_CFG_KEY_COUNT,
};

struct agent_config {
        uint32_t set; /* 1u << enum agent_config_key for every key given */
        /* `verifier = URL`, repeatable: the verifiers in order of preference (agent/failover.h);
         * the same URL twice or one too many is an error */
        unsigned n_verifiers;
        char verifiers[AGENT_VERIFIERS_MAX][AGENT_CONFIG_STR_MAX];
        char ca[AGENT_CONFIG_STR_MAX];
        char cert[AGENT_CONFIG_STR_MAX];
        char key[AGENT_CONFIG_STR_MAX];
        char token_file[AGENT_CONFIG_STR_MAX];
        char tcti[AGENT_CONFIG_STR_MAX];
        char state_dir[AGENT_CONFIG_STR_MAX];
        char ima_log[AGENT_CONFIG_STR_MAX];
        char pcrs[AGENT_CONFIG_STR_MAX]; /* checked by pcr_sel_parse() */
        char dump_evidence[AGENT_CONFIG_STR_MAX];
        char proc_root[AGENT_CONFIG_STR_MAX];
        enum tpm_key_alg ak_alg;
        bool ima_ascii; /* --ima-format ascii */
        bool once, insecure_http;
        uint32_t interval;  /* 1..AGENT_INTERVAL_MAX */
        uint32_t timeout;   /* 1..AGENT_TIMEOUT_MAX */
        uint32_t retry_max; /* 1..AGENT_RETRY_MAX_MAX */
        uint32_t failback;  /* 1..AGENT_FAILBACK_MAX */
        char machine_id_file[AGENT_CONFIG_STR_MAX];
        char boot_log[AGENT_CONFIG_STR_MAX]; /* a path, or "none": not sent */
        /* operator labels (`label = KEY=VALUE`, repeatable; evidence/evidence.h's syntax and
         * caps: a bad key or value, a key given twice or one label too many is an error) */
        unsigned n_labels;
        struct evidence_label labels[EVIDENCE_LABELS_MAX];
};

static inline bool agent_config_has(const struct agent_config *c, enum agent_config_key k)
{
        return c->set & (1u << k);
}

/* The long option name of a key ("token-file"). */
const char *agent_config_key_name(enum agent_config_key k);
/* The key of a long option name; -ENOENT when none ("config" is not a key). */
int agent_config_key_from_name(const char *name, size_t len, enum agent_config_key *ret) _wur_;

/*
 * Set one key from its text value (a flag's argument, or the value of a file line; NULL for a
 * flag without argument, which means true). -EINVAL with err naming the key when the value is
 * empty, longer than AGENT_CONFIG_STR_MAX - 1, or not valid for the key; c is then unchanged.
 */
int agent_config_set(struct agent_config *c, enum agent_config_key k, const char *val, size_t len,
                     struct attest_err *err) _wur_;

/*
 * Apply the `key = value` lines of text (len bytes, untrusted; util/kv.h, the one parser) on top
 * of c: a later line wins over an earlier one. Errors (-EINVAL, err naming name:line and the
 * key): a file over AGENT_CONFIG_FILE_MAX, a line over AGENT_CONFIG_LINE_MAX, a NUL byte, a line
 * without '=', an unknown key, a bad value. On failure c is unchanged.
 */
int agent_config_parse(const char *text, size_t len, const char *name, struct agent_config *c,
                       struct attest_err *err) _wur_;

/*
 * Read path (at most AGENT_CONFIG_FILE_MAX bytes; one more is an error) and parse it into c.
 * A missing file is 0 unless must_exist; -EACCES when it may not be read (not a usage error).
 */
int agent_config_load(const char *path, bool must_exist, struct agent_config *c,
                      struct attest_err *err) _wur_;

/*
 * The token file: one line, its token at most AGENT_TOKEN_MAX visible ASCII bytes (it goes into
 * an HTTP header), blanks around it and a CRLF allowed, nothing after it; the whole file at most
 * AGENT_TOKEN_FILE_MAX. Into out (AGENT_TOKEN_MAX + 1 bytes), written only on success. -E2BIG
 * over a cap, -EBADMSG otherwise.
 */
int agent_token_parse(const char *text, size_t len, char *out) _wur_;

/* The agent-id state file: 1..AGENT_ID_MAX lower-case hex digits and nothing else, into out
 * (AGENT_ID_MAX + 1 bytes), written only on success. */
int agent_id_parse(const char *text, size_t len, char *out) _wur_;

#endif
