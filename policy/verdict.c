/* SPDX-License-Identifier: MIT */
/* The typed verdict and its JSON (the network edge). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/runtime.h"
#include "policy/verdict.h"
#include "util/esc.h"
#include "util/hex.h"

static const char *const claim_names[] = {
#define CLAIM_ID_NAME(id, name) [id] = name,
        CLAIM_IDS(CLAIM_ID_NAME)
#undef CLAIM_ID_NAME
};

static const char *const result_names[] = {
        [CLAIM_PASS] = "pass",
        [CLAIM_FAIL] = "fail",
        [CLAIM_MISSING] = "missing",
};

static const char *const section_names[] = {
        [SECTION_SELINUX] = "selinux", [SECTION_TRUSTED_KEYS] = "trusted_keys",
        [SECTION_CFI] = "cfi",         [SECTION_KERNEL] = "kernel",
        [SECTION_TPM] = "tpm",         [SECTION_IMA] = "ima",
        [SECTION_BOOT] = "boot",
};

const char *claim_id_name(enum claim_id id)
{
        return (unsigned)id < CLAIM__COUNT ? claim_names[id] : "unknown";
}

const char *claim_result_name(enum claim_result r)
{
        return (unsigned)r < ARRAY_SIZE(result_names) ? result_names[r] : "unknown";
}

const char *verdict_status_name(enum verdict_status s)
{
        return s == VERDICT_PASS ? "pass" : s == VERDICT_ERROR ? "error" : "fail";
}

const char *policy_section_name(enum policy_section s)
{
        return (unsigned)s < SECTION__COUNT ? section_names[s] : "unknown";
}

void verdict_init(struct verdict *v)
{
        memset(v, 0, sizeof(*v));
        v->status = VERDICT_PASS;
}

void verdict_done(struct verdict *v)
{
        free(v->claims);
        verdict_init(v);
}

void verdict_claim_name(const struct verdict_claim *c, char *buf, size_t n)
{
        if (c->arg[0])
                snprintf(buf, n, "%s.%s", claim_id_name(c->id), c->arg);
        else
                snprintf(buf, n, "%s", claim_id_name(c->id));
}

/*
 * A JSON string of text made by this process: as is when it is printable UTF-8, else escaped
 * (util/esc.h) with its backslashes kept, so that no verdict is ever refused by the renderer.
 */
static json_t *jstr(const char *s)
{
        char out[2 * VERDICT_REASON_MAX * ESC_BYTE_MAX];
        size_t n = strlen(s);

        if (esc_is_text(s, n))
                return json_stringn(s, n);
        esc_line(out, sizeof(out), s, n);
        return json_string(out);
}

static json_t *hex_json(const uint8_t *p, size_t n)
{
        char s[2 * BANK_DIGEST_MAX + 1];

        if (n > BANK_DIGEST_MAX)
                return NULL;
        hex_encode(p, n, s);
        return json_string(s);
}

static json_t *value_json(const struct verdict_value *v)
{
        json_t *a;

        switch (v->kind) {
        case VV_NULL:
                return json_null();
        case VV_BOOL:
                return json_boolean(v->b);
        case VV_STRING:
                return jstr(v->s);
        case VV_HEX:
                return hex_json(v->hex, v->len);
        case VV_STRINGS:
                if (!(a = json_array()))
                        return NULL;
                for (unsigned i = 0; i < v->n; i++)
                        if (json_array_append_new(a, jstr(v->strs + i * v->stride)) < 0) {
                                json_decref(a);
                                return NULL;
                        }
                return a;
        case VV_HEXES:
                if (!(a = json_array()))
                        return NULL;
                for (unsigned i = 0; i < v->n; i++)
                        if (json_array_append_new(
                                    a, hex_json(v->hexes + i * v->stride, v->lens[i])) < 0) {
                                json_decref(a);
                                return NULL;
                        }
                return a;
        }
        return NULL;
}

static json_t *claim_json(const struct verdict_claim *c)
{
        json_auto_t *o = json_object();
        char name[96];

        if (!o)
                return NULL;
        verdict_claim_name(c, name, sizeof(name));
        if (json_object_set_new(o, "name", jstr(name)) < 0 ||
            json_object_set_new(o, "expected", value_json(&c->expected)) < 0 ||
            json_object_set_new(o, "observed", value_json(&c->observed)) < 0 ||
            json_object_set_new(o, "result", json_string(claim_result_name(c->result))) < 0 ||
            json_object_set_new(o, "anchored", json_boolean(c->anchored)) < 0 ||
            (c->entry >= 0 && json_object_set_new(o, "entry", json_integer(c->entry)) < 0) ||
            (c->reason[0] && verdict_claim_failing(c) &&
             json_object_set_new(o, "reason", jstr(c->reason)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

/* runtime: {"passed":N,...,"failures":[...]} */
static json_t *runtime_json(const struct rt_state *st)
{
        json_auto_t *o = NULL, *a = json_array();

        if (!a)
                return NULL;
        for (unsigned i = 0; i < st->nfail && i < RT_FAILURES_CAP; i++) {
                const struct rt_failure *f = &st->fail[i];
                char d[16 + 2 * RT_DIGEST_MAX + 1];
                char path[RT_FAIL_PATH_MAX * ESC_BYTE_MAX + 4];
                const char *an = rt_algo_name(f->algo);
                int w = snprintf(d, sizeof(d), "%s:", an ? an : "unknown");
                size_t n;

                hex_encode(f->digest, f->digest_len < RT_DIGEST_MAX ? f->digest_len : RT_DIGEST_MAX,
                           d + w);
                /* the path's bytes, escaped whole (the buffer holds the worst case) */
                n = esc_bytes(path, sizeof(path) - 3, f->path,
                              f->path_len < RT_FAIL_PATH_MAX ? f->path_len : RT_FAIL_PATH_MAX,
                              NULL);
                if (f->path_cut)
                        memcpy(path + n, "...", 4);
                if (json_array_append_new(
                            a, json_pack("{s:I, s:s, s:s, s:s}", "entry", (json_int_t)f->entry,
                                         "path", path, "digest", d, "reason",
                                         rt_reason_name((enum rt_reason)f->reason))) < 0)
                        return NULL;
        }
        o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:O}", "passed", (json_int_t)st->passed, "failed",
                      (json_int_t)st->failed, "excluded", (json_int_t)st->excluded, "signed",
                      (json_int_t)st->signed_ok, "violations", (json_int_t)st->violations,
                      "failures", a);
        return TAKE_PTR(o);
}

int verdict_to_json(const struct verdict *v, json_t **ret)
{
        json_auto_t *o = json_object(), *claims = json_array(), *unchecked = json_array();

        if (!o || !claims || !unchecked)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_claims; i++)
                if (json_array_append_new(claims, claim_json(&v->claims[i])) < 0)
                        return -ENOMEM;
        for (unsigned s = 0; s < SECTION__COUNT; s++)
                if ((v->unchecked & (1u << s)) &&
                    json_array_append_new(unchecked, json_string(section_names[s])) < 0)
                        return -ENOMEM;
        if (json_object_set(o, "claims", claims) < 0 ||
            json_object_set_new(o, "status", json_string(verdict_status_name(v->status))) < 0 ||
            json_object_set_new(o, "policy", jstr(v->policy)) < 0 ||
            json_object_set(o, "sections_unchecked", unchecked) < 0 ||
            (v->runtime && json_object_set_new(o, "runtime", runtime_json(v->runtime)) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

int verdict_failing_to_json(const struct verdict *v, json_t **ret)
{
        json_auto_t *a = json_array();

        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < v->n_claims; i++) {
                char name[96];

                if (!verdict_claim_failing(&v->claims[i]))
                        continue;
                verdict_claim_name(&v->claims[i], name, sizeof(name));
                if (json_array_append_new(a, jstr(name)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return 0;
}
