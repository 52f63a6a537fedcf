/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: attest-agent's config file parser (agent_config_parse, agent/config.c). On
 * success every string is NUL terminated within AGENT_CONFIG_STR_MAX, every number within its
 * key's range, and only known keys are marked set; on failure err names the cause and the
 * config is byte for byte what it was before. The same input also goes through the token and
 * agent-id file parsers (agent_token_parse, agent_id_parse): written only on success, then bounded
 * and made of visible ASCII (hex digits for the id).
 */
#include <errno.h>
#include <string.h>

#include "agent/config.h"
#include "tests/fuzz/fuzz.h"

static void check_str(const struct agent_config *c, enum agent_config_key k, const char *s)
{
        FUZZ_CHECK(memchr(s, '\0', AGENT_CONFIG_STR_MAX) != NULL);
        FUZZ_CHECK(!agent_config_has(c, k) || s[0] != '\0'); /* empty values are refused */
}

static void check_small_files(const uint8_t *data, size_t size)
{
        char tok[AGENT_TOKEN_MAX + 1], id[AGENT_ID_MAX + 1];
        int x;

        memcpy(tok, "untouched", 10);
        x = agent_token_parse((const char *)data, size, tok);
        FUZZ_CHECK(x == 0 || x == -E2BIG || x == -EBADMSG);
        if (x < 0) {
                FUZZ_CHECK(strcmp(tok, "untouched") == 0);
        } else {
                FUZZ_CHECK(size <= AGENT_TOKEN_FILE_MAX && tok[0] != '\0');
                for (const char *p = tok; *p; p++)
                        FUZZ_CHECK(*p > 0x20 && *p < 0x7f);
        }
        memcpy(id, "untouched", 10);
        x = agent_id_parse((const char *)data, size, id);
        FUZZ_CHECK(x == 0 || x == -E2BIG || x == -EBADMSG);
        if (x < 0)
                FUZZ_CHECK(strcmp(id, "untouched") == 0);
        else
                FUZZ_CHECK(size <= AGENT_ID_MAX && strspn(id, "0123456789abcdef") == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct agent_config c, before;
        struct attest_err err = {0};
        int x;

        /* something set before the parse, which a failure must leave as it was */
        check_small_files(data, size);
        memset(&c, 0, sizeof(c));
        FUZZ_CHECK(agent_config_set(&c, AGENT_CFG_CA, "/ca.pem", 7, &err) == 0);
        FUZZ_CHECK(agent_config_set(&c, AGENT_CFG_TIMEOUT, "9", 1, &err) == 0);
        memcpy(&before, &c, sizeof(c));
        x = agent_config_parse((const char *)data, size, "fuzz", &c, &err);
        if (x < 0) {
                FUZZ_CHECK(x == -EINVAL);
                FUZZ_CHECK(err.code != AE_NONE);
                FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
                FUZZ_CHECK(memcmp(&c, &before, sizeof(c)) == 0);
                return 0;
        }
        FUZZ_CHECK(x == 0 && size <= AGENT_CONFIG_FILE_MAX);
        FUZZ_CHECK((c.set >> AGENT_CFG_KEY_COUNT) == 0);
        FUZZ_CHECK(c.n_verifiers <= AGENT_VERIFIERS_MAX);
        FUZZ_CHECK((c.n_verifiers > 0) == agent_config_has(&c, AGENT_CFG_VERIFIER));
        for (unsigned i = 0; i < c.n_verifiers; i++) {
                FUZZ_CHECK(c.verifiers[i][0] != '\0');
                FUZZ_CHECK(memchr(c.verifiers[i], '\0', AGENT_CONFIG_STR_MAX) != NULL);
                for (unsigned j = 0; j < i; j++)
                        FUZZ_CHECK(strcmp(c.verifiers[i], c.verifiers[j]) != 0);
        }
        check_str(&c, AGENT_CFG_CA, c.ca);
        check_str(&c, AGENT_CFG_CERT, c.cert);
        check_str(&c, AGENT_CFG_KEY, c.key);
        check_str(&c, AGENT_CFG_TOKEN_FILE, c.token_file);
        check_str(&c, AGENT_CFG_TCTI, c.tcti);
        check_str(&c, AGENT_CFG_STATE_DIR, c.state_dir);
        check_str(&c, AGENT_CFG_IMA_LOG, c.ima_log);
        check_str(&c, AGENT_CFG_PCRS, c.pcrs);
        check_str(&c, AGENT_CFG_DUMP_EVIDENCE, c.dump_evidence);
        check_str(&c, AGENT_CFG_PROC_ROOT, c.proc_root);
        FUZZ_CHECK(c.ak_alg == TPM_KEY_RSA2048 || c.ak_alg == TPM_KEY_ECCP256);
        FUZZ_CHECK(!agent_config_has(&c, AGENT_CFG_INTERVAL) ||
                   (c.interval >= 1 && c.interval <= AGENT_INTERVAL_MAX));
        FUZZ_CHECK(c.timeout >= 1 && c.timeout <= AGENT_TIMEOUT_MAX);
        FUZZ_CHECK(!agent_config_has(&c, AGENT_CFG_RETRY_MAX) ||
                   (c.retry_max >= 1 && c.retry_max <= AGENT_RETRY_MAX_MAX));
        FUZZ_CHECK(!agent_config_has(&c, AGENT_CFG_FAILBACK) ||
                   (c.failback >= 1 && c.failback <= AGENT_FAILBACK_MAX));
        return 0;
}
