/* SPDX-License-Identifier: MIT */
/*
 * keylime_import (attestctl policy import-keylime) on arbitrary bytes: no crash, no leak; a
 * refusal fills err; an import loads with attestd's own policy parser (whatever imports, loads),
 * holds an ima.runtime section whose counts are the stats', and every exclude it wrote compiles.
 */
#include <string.h>

#include <jansson.h>

#include "attestctl/keylime.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

static size_t list_total(const json_t *o)
{
        const char *k;
        json_t *v;
        size_t n = 0;

        json_object_foreach((json_t *)o, k, v) n += json_array_size(v);
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct keylime_opts o = {.name = "fuzz", .violations_allow = 3};
        struct keylime_stats st;
        struct keylime_notes notes = {0};
        struct attest_err err = {0};
        struct policy *p = NULL;
        json_t *pol = NULL, *rt;
        char pat[KEYLIME_EXCLUDE_MAX + 1];
        const char *why = NULL;

        /* the translation alone: any bytes, bounded output, NUL terminated */
        if (keylime_exclude_to_pcre((const char *)data, size, pat, sizeof(pat), &why) == 0)
                FUZZ_CHECK(strlen(pat) <= KEYLIME_EXCLUDE_MAX && strlen(pat) >= 11 &&
                           !strcmp(pat + strlen(pat) - 8, ")[\\s\\S]*"));

        if (keylime_import((const char *)data, size, &o, &pol, &st, &notes, &err) < 0) {
                FUZZ_CHECK(pol == NULL && err.code != AE_NONE);
                return 0;
        }
        FUZZ_CHECK(notes.n <= KEYLIME_NOTES_MAX);
        rt = json_object_get(json_object_get(pol, "ima"), "runtime");
        FUZZ_CHECK(json_is_object(rt));
        FUZZ_CHECK(json_object_size(json_object_get(rt, "digests")) == st.names);
        FUZZ_CHECK(list_total(json_object_get(rt, "digests")) == st.digests);
        FUZZ_CHECK(list_total(json_object_get(rt, "ima_buf")) == st.buf_digests);
        FUZZ_CHECK(json_array_size(json_object_get(rt, "excludes")) == st.excludes);
        FUZZ_CHECK(json_array_size(json_object_get(rt, "keys")) == st.keys);
        if (policy_from_json(pol, &p, &err) < 0) {
                fprintf(stderr, "imported policy does not load: %s\n", err.msg);
                FUZZ_CHECK(!"an imported policy loads");
        }
        FUZZ_CHECK(policy_runtime(p) != NULL);
        policy_free(p);
        p = NULL;
        json_decref(pol);
        /* the same document with its 64-digit digests read as sm3: the same counts, and it loads */
        {
                struct keylime_opts o3 = o;
                struct keylime_stats st3;

                o3.alg_256 = hashalg_get(HASHALG_SM3_256);
                pol = NULL;
                FUZZ_CHECK(keylime_import((const char *)data, size, &o3, &pol, &st3, NULL, &err) ==
                           0);
                FUZZ_CHECK(st3.names == st.names && st3.digests == st.digests &&
                           st3.digests_256 == st.digests_256);
                FUZZ_CHECK(policy_from_json(pol, &p, &err) == 0);
                policy_free(p);
                json_decref(pol);
        }
        return 0;
}
