/* SPDX-License-Identifier: MIT */
/*
 * Enrolment (docs/architecture.md §3.1): the AK, EK and EK certificate to the verifier with the
 * then TPM2_ActivateCredential on the credential it wraps for this TPM, the proof back; the agent
 * id it assigns kept in state_dir/agent-id.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "agent/agent.h"
#include "evidence/evjson.h"
#include "util/file.h"
#include "util/hex.h"
#include "util/ossl.h"

int agent_read_token(struct agent *a)
{
        char buf[AGENT_TOKEN_FILE_MAX];
        size_t n = 0;
        int x;

        if (!a->token_file)
                return 0;
        x = file_read(a->token_file, buf, sizeof(buf), FILE_SECRET, &n, NULL);
        if (x == 0 && (x = agent_token_parse(buf, n, a->token)) < 0)
                log_err("%s: not one line of at most %d visible ASCII bytes", a->token_file,
                        TOKEN_MAX);
        else if (x == -EACCES) {
                char hint[LOG_LINE_MAX / 2];

                log_err("%s: %s; %s", a->token_file, strerror(-x),
                        log_access_hint(a->token_file, true, hint, sizeof(hint)));
        } else if (x < 0)
                log_err("%s: %s", a->token_file,
                        x == -E2BIG ? "longer than a token"
                        : x == -EPERM
                                ? "readable by group or others: a token is a secret (chmod 600)"
                                : strerror(-x));
        OPENSSL_cleanse(buf, sizeof(buf));
        return x < 0 ? -EINVAL : 0;
}

/*
 * The verifier does not trust this TPM's EK certificate: name its issuer, which the verifier's
 * operator adds to attestd --ek-ca (the verifier's detail names it too, as the agent sent it).
 */
static void ek_issuer_hint(const uint8_t *der, size_t len)
{
        const unsigned char *p = der;
        _cleanup_(X509_freep) X509 *x = d2i_X509(NULL, &p, (long)len);
        BIO *b = x ? BIO_new(BIO_s_mem()) : NULL;
        char raw[256], esc[256];
        int n = 0;

        if (b && X509_NAME_print_ex(b, X509_get_issuer_name(x), 0,
                                    XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) >= 0)
                n = BIO_read(b, raw, sizeof(raw) - 1);
        BIO_free(b);
        ERR_clear_error();
        if (n <= 0)
                return;
        log_err("the verifier does not trust this TPM's EK certificate, issued by %s: its "
                "operator must add that issuer's CA certificate to attestd --ek-ca "
                "(`attestctl tpm ek` shows the certificate)",
                log_escape(raw, (size_t)n, esc, sizeof(esc)));
}

static char *b64_of(const uint8_t *p, size_t n)
{
        char *s = malloc(b64_encoded_size(n));

        if (s)
                b64_encode(p, n, s);
        return s;
}

/* Decode a base64 string member of o into a new buffer (max bytes). */
static int b64_member(json_t *o, const char *key, size_t max, uint8_t **ret, size_t *ret_len)
{
        json_t *v = json_object_get(o, key);
        const char *s;
        uint8_t *buf;
        size_t n;

        if (!json_is_string(v))
                return -EBADMSG;
        s = json_string_value(v);
        if (!(buf = malloc(max ? max : 1)))
                return -ENOMEM;
        if (b64_decode(s, strlen(s), buf, max, &n) < 0) {
                free(buf);
                return -EBADMSG;
        }
        *ret = buf;
        *ret_len = n;
        return 0;
}

/* {"hostname":..,"machine_id":..,"labels":{..}}: the host object, written by the evidence's own
 * writer (evidence/evjson-write.c) and taken into the request as it is. */
static int identity_json(const struct facts *f, const struct agent_config *c, json_t **ret)
{
        _cleanup_free_ char *text = NULL;
        struct evidence_host h = {0};
        int x;

        facts_put_identity(f, c->labels, c->n_labels, &h);
        if ((x = evidence_host_identity_to_json(&h, &text)) < 0)
                return x;
        if (!(*ret = json_loads(text, 0, NULL)))
                return -ENOMEM;
        return 0;
}

/* Enrol the AK (and activate the credential). 0 when enrolled; else negative with *o filled. */
int agent_enrol(struct agent *a, struct agent_outcome *o)
{
        _cleanup_free_ uint8_t *ak = NULL, *ekpub = NULL, *ekcert = NULL, *blob = NULL,
                               *secret = NULL;
        _cleanup_free_ char *ak64 = NULL, *ekpub64 = NULL, *ekcert64 = NULL, *proof64 = NULL;
        json_t *req, *resp = NULL, *cred, *host;
        struct attest_err err = {0};
        struct file_bytes bytes;
        size_t ak_len, ekpub_len, ekcert_len = 0, blob_len, secret_len, plen = TPM_CRED_MAX;
        uint8_t proof[TPM_CRED_MAX];
        struct facts f = {0};
        char path[AGENT_CONFIG_STR_MAX + 32]; /* state_dir + "/agent-id" always fits */
        long status;
        const char *id;
        int x;

        if ((x = tpm_ak_public(a->tpm, &ak, &ak_len)) < 0 ||
            (x = tpm_ek_public(a->tpm, a->ak_alg, &ekpub, &ekpub_len, &err)) < 0) {
                log_err("TPM: %s", err.msg[0] ? err.msg : "no AK");
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        x = tpm_ek_cert(a->tpm, a->ak_alg, &ekcert, &ekcert_len, &err);
        if (x < 0 && x != -ENOENT) {
                log_err("TPM: EK certificate: %s", err.msg);
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        if (!(ak64 = b64_of(ak, ak_len)) || !(ekpub64 = b64_of(ekpub, ekpub_len)) ||
            (ekcert && !(ekcert64 = b64_of(ekcert, ekcert_len))))
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        if ((x = facts_identity(&a->facts_paths, &f, &err)) < 0) {
                log_err("host identity: %s", err.msg);
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        if ((x = identity_json(&f, &a->cfg, &host)) < 0) {
                log_err("host identity: %s", strerror(-x));
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        req = json_pack("{s:s, s:s, s:o}", "ak_public", ak64, "ek_public", ekpub64, "host", host);
        if (!req || (ekcert64 && json_object_set_new(req, "ek_cert", json_string(ekcert64)))) {
                json_decref(req);
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
        }
        x = verifier_call(a, "POST", "/v1/agents", req, &status, &resp, o);
        json_decref(req);
        if (x < 0)
                return x;
        if (status != 201 && status != 200) {
                x = agent_outcome_http(o, "enrolment", status, resp);
                json_decref(resp);
                if (o->code == AE_EK_CERT_UNTRUSTED && ekcert)
                        ek_issuer_hint(ekcert, ekcert_len);
                return x;
        }
        /* the same check as the agent-id file: 1..64 lower-case hex digits (a JSON string may
         * hold a NUL: its whole length is checked) */
        id = json_string_value(json_object_get(resp, "id"));
        if (!id || agent_id_parse(id, json_string_length(json_object_get(resp, "id")), a->id) < 0) {
                log_err("enrolment: the verifier sent no valid agent id");
                json_decref(resp);
                return agent_outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
        }
        cred = json_object_get(resp, "credential");
        if (cred) {
                if (b64_member(cred, "blob", 512, &blob, &blob_len) < 0 ||
                    b64_member(cred, "secret", 1024, &secret, &secret_len) < 0) {
                        log_err("enrolment: malformed credential");
                        json_decref(resp);
                        a->id[0] = '\0';
                        return agent_outcome_set(o, AGENT_OUTCOME_PROTOCOL, -EBADMSG);
                }
                x = tpm_activate_credential(a->tpm, blob, blob_len, secret, secret_len, proof,
                                            &plen, &err);
                if (x < 0) {
                        log_err("enrolment: ActivateCredential: %s", err.msg);
                        json_decref(resp);
                        a->id[0] = '\0';
                        return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
                }
                proof64 = b64_of(proof, plen);
                OPENSSL_cleanse(proof, sizeof(proof));
                json_decref(resp);
                resp = NULL;
                if (!proof64) {
                        a->id[0] = '\0';
                        return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
                }
                req = json_pack("{s:s}", "proof", proof64);
                snprintf(path, sizeof(path), "/v1/agents/%s/activate", a->id);
                x = req ? verifier_call(a, "POST", path, req, &status, &resp, o)
                        : agent_outcome_set(o, AGENT_OUTCOME_LOCAL, -ENOMEM);
                json_decref(req);
                if (x >= 0 && status != 200)
                        x = agent_outcome_http(o, "activation", status, resp);
                if (x < 0) {
                        json_decref(resp);
                        a->id[0] = '\0';
                        return x;
                }
        }
        json_decref(resp);
        snprintf(path, sizeof(path), "%s/agent-id", a->state_dir);
        bytes = FILE_BYTES(a->id, strlen(a->id));
        if ((x = file_write_atomic(path, 0600, file_bytes_read, &bytes, &err)) < 0) {
                log_err("%s", err.msg);
                a->id[0] = '\0';
                return agent_outcome_set(o, AGENT_OUTCOME_LOCAL, x);
        }
        log_info("enrolled as agent %s%s", a->id, cred ? " (credential activated)" : "");
        return agent_outcome_set(o, AGENT_OUTCOME_DONE, 0);
}

int agent_load_id(struct agent *a)
{
        char path[AGENT_CONFIG_STR_MAX + 32], buf[AGENT_ID_MAX];
        size_t n;
        int x;

        if ((size_t)snprintf(path, sizeof(path), "%s/agent-id", a->state_dir) >= sizeof(path))
                return -ENAMETOOLONG;
        if ((x = file_read(path, buf, AGENT_ID_MAX, 0, &n, NULL)) < 0)
                return x == -ENOENT ? 0 : x == -E2BIG ? -EBADMSG : x;
        if (agent_id_parse(buf, n, a->id) < 0)
                return -EBADMSG;
        return 1;
}
