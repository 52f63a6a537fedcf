/* SPDX-License-Identifier: MIT */
/*
 * attestctl tcglog FILE [--json]: the TCG2 firmware event log parsed (evidence/tcglog.h), its
 * events, the boot claims the verifier takes from it and the replayed PCRs: PCR 0-7 by the
 * verifier's own replay (verify/boot.c), the others extended here.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "attestctl/attestctl.h"
#include "evidence/tcglog.h"
#include "util/hex.h"
#include "verify/boot.h"

#define TCGLOG_FILE_MAX (16u * 1024 * 1024)

static void usage(FILE *f)
{
        fprintf(f, "Usage: attestctl tcglog [--json] LOG\n"
                   "\n"
                   "Parse a TCG2 (crypto-agile) firmware event log such as\n"
                   "/sys/kernel/security/tpm0/binary_bios_measurements and print its events, the\n"
                   "boot claims attestd takes from it (Secure Boot, PK/KEK/db/dbx, boot\n"
                   "applications, separators, startup locality) and the replayed PCRs of every\n"
                   "bank the log carries.\n"
                   "\n"
                   "Options:\n"
                   "  --json      one JSON object: spec, events, claims, pcrs\n"
                   "  -h, --help  this text\n"
                   "\n"
                   "Exit status: 0 ok; 1 the log is malformed; 2 usage or file errors.\n");
}

static char *hexdup(const uint8_t *p, size_t n, char *buf)
{
        hex_encode(p, n, buf);
        return buf;
}

static json_t *digests_json(const struct tcglog_event *e)
{
        json_t *o = json_object();
        char hex[2 * TCGLOG_DIGEST_MAX + 1], name[16];

        for (unsigned i = 0; i < e->n_digests; i++) {
                const struct tcglog_digest *d = &e->d[i];

                if (d->bank >= 0)
                        snprintf(name, sizeof(name), "%s", bank_name((enum bank)d->bank));
                else
                        snprintf(name, sizeof(name), "0x%04x", d->alg_id);
                json_object_set_new(o, name, json_string(hexdup(d->p, d->size, hex)));
        }
        return o;
}

/* What the event's data says, for the types the boot claims read. */
static json_t *decoded_json(const struct tcglog_event *e, struct hasher *h)
{
        struct tcglog_efi_var v;
        struct tcglog_efi_image img;
        uint8_t loc = 0, sha[32];
        char hex[2 * 32 + 1], text[256];

        if (tcglog_event_text(e, text, sizeof(text)) > 0)
                return json_pack("{s:s}", "text", text);
        switch (e->type) {
        case EV_EFI_VARIABLE_DRIVER_CONFIG:
        case EV_EFI_VARIABLE_BOOT:
        case EV_EFI_VARIABLE_BOOT2:
        case EV_EFI_VARIABLE_AUTHORITY:
                if (tcglog_efi_var_parse(e, &v) < 0 ||
                    hasher_digest(h, BANK_SHA256, v.data, (size_t)v.data_len, sha) < 0)
                        return json_pack("{s:b}", "malformed", 1);
                return json_pack("{s:s, s:I, s:s}", "variable", v.name, "data_len",
                                 (json_int_t)v.data_len, "data_sha256", hexdup(sha, 32, hex));
        case EV_EFI_BOOT_SERVICES_APPLICATION:
        case EV_EFI_BOOT_SERVICES_DRIVER:
        case EV_EFI_RUNTIME_SERVICES_DRIVER:
                if (tcglog_efi_image_parse(e, &img) < 0)
                        return json_pack("{s:b}", "malformed", 1);
                return json_pack("{s:I, s:I}", "image_length", (json_int_t)img.length,
                                 "device_path_len", (json_int_t)img.device_path_len);
        case EV_NO_ACTION:
                if (tcglog_startup_locality(e, &loc) > 0)
                        return json_pack("{s:i}", "startup_locality", loc);
                return NULL;
        case EV_SEPARATOR: {
                /* PFP: 00000000h or FFFFFFFFh a delimiter, digests of 00000001h an error */
                struct attest_err err = {0};
                int k = boot_separator_kind(h, (1u << BANK_COUNT) - 1, e, &err);

                if (k < 0)
                        return json_pack("{s:b}", "malformed", 1);
                return json_pack("{s:b}", "error", k > 0);
        }
        default:
                return NULL;
        }
}

static json_t *claims_json(const struct boot_state *s)
{
        const struct boot_claims *c = &s->claims;
        json_t *o = json_object(), *vars = json_object(), *apps = json_array();
        char hex[2 * BANK_DIGEST_MAX + 1], d[2 * BANK_DIGEST_MAX + 16];

        if (c->secureboot_seen)
                json_object_set_new(o, "secureboot", json_boolean(c->secureboot));
        for (int i = 0; i < BOOT_VAR__COUNT; i++)
                if (c->vars_seen & (1u << i))
                        json_object_set_new(vars, boot_var_name((enum boot_var)i),
                                            json_string(hexdup(c->var_sha256[i], 32, hex)));
        json_object_set_new(o, "variables", vars);
        for (unsigned i = 0; i < c->n_apps; i++) {
                snprintf(d, sizeof(d), "%s:%s", bank_name((enum bank)c->apps[i].bank),
                         hexdup(c->apps[i].digest, bank_size((enum bank)c->apps[i].bank), hex));
                json_array_append_new(apps, json_string(d));
        }
        json_object_set_new(o, "applications", apps);
        json_object_set_new(o, "separators", json_integer(c->separators));
        if (c->locality_seen)
                json_object_set_new(o, "startup_locality", json_integer(c->locality));
        return o;
}

int cmd_tcglog(int argc, char **argv)
{
        static const struct option opts[] = {
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        struct tcglog_reader lr;
        struct tcglog_event e;
        struct attest_err err = {0};
        struct boot_state s;
        /* PCRs 8-23 (0-7 are the verifier's, in s) */
        uint8_t hi[BANK_COUNT][PCR_COUNT][BANK_DIGEST_MAX] = {{{0}}};
        uint32_t touched = 0;
        json_t *events = json_array(), *pcrs = json_object();
        json_auto_t *out = NULL;
        char hex[2 * BANK_DIGEST_MAX + 1];
        bool json = false;
        size_t len = 0;
        int c, x;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'h':
                        usage(stdout);
                        json_decref(events);
                        json_decref(pcrs);
                        return 0;
                default:
                        usage(stderr);
                        json_decref(events);
                        json_decref(pcrs);
                        return 2;
                }
        }
        out = json_pack("{s:o, s:o}", "events", events, "pcrs", pcrs);
        if (optind != argc - 1) {
                usage(stderr);
                return 2;
        }
        if (ctl_read_file(argv[optind], TCGLOG_FILE_MAX, &buf, &len) < 0)
                return 2;
        if (hasher_new(&h) < 0) {
                fprintf(stderr, "attestctl tcglog: no hasher\n");
                return 2;
        }
        boot_state_init(&s);
        tcglog_reader_init(&lr, buf, len);
        while ((x = tcglog_next(&lr, &e, &err)) > 0) {
                const char *name = tcglog_event_type_name(e.type);
                char type[16];
                json_t *dec;

                if (e.index == 0)
                        s.spec = lr.spec;
                if ((x = boot_state_feed(&s, h, &e, &err)) < 0)
                        break;
                if (e.type != EV_NO_ACTION && e.pcr >= BOOT_PCRS)
                        for (int b = 0; b < BANK_COUNT; b++) {
                                const struct tcglog_digest *d = tcglog_event_digest(&e, b);

                                if (d && hasher_extend(h, (enum bank)b, hi[b][e.pcr], d->p) < 0)
                                        return 2;
                        }
                if (e.type != EV_NO_ACTION)
                        touched |= 1u << e.pcr;
                snprintf(type, sizeof(type), "0x%08" PRIx32, e.type);
                dec = decoded_json(&e, h);
                if (json) {
                        json_t *j = json_pack("{s:I, s:I, s:i, s:s, s:o, s:i}", "index",
                                              (json_int_t)e.index, "offset", (json_int_t)e.offset,
                                              "pcr", (int)e.pcr, "type", name ? name : type,
                                              "digests", digests_json(&e), "size", (int)e.size);

                        if (dec)
                                json_object_set_new(j, "decoded", dec);
                        json_array_append_new(events, j);
                        continue;
                }
                printf("%" PRIu64 " @%" PRIu64 " PCR %" PRIu32 " %s size %" PRIu32, e.index,
                       e.offset, e.pcr, name ? name : type, e.size);
                for (unsigned i = 0; i < e.n_digests && e.index > 0; i++)
                        if (e.d[i].bank >= 0)
                                printf(" %s=%s", bank_name((enum bank)e.d[i].bank),
                                       hexdup(e.d[i].p, e.d[i].size, hex));
                if (dec) {
                        _cleanup_free_ char *t = json_dumps(dec, JSON_COMPACT | JSON_SORT_KEYS);

                        printf(" %s", t ? t : "");
                        json_decref(dec);
                }
                printf("\n");
        }
        if (x < 0) {
                fprintf(stderr, "attestctl tcglog: %s: %s: %s\n", argv[optind],
                        attest_code_name(err.code), err.msg);
                return 1;
        }
        for (int b = 0; b < BANK_COUNT; b++) {
                json_t *bo;

                if (!(s.banks & BANK_MASK(b)))
                        continue;
                bo = json_object();
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        const uint8_t *v = i < BOOT_PCRS ? s.pcr[b][i] : hi[b][i];
                        char k[4];

                        if (!(touched & (1u << i)) && i != 0)
                                continue;
                        snprintf(k, sizeof(k), "%u", i);
                        json_object_set_new(bo, k,
                                            json_string(hexdup(v, bank_size((enum bank)b), hex)));
                        if (!json)
                                printf("pcr %s %u %s\n", bank_name((enum bank)b), i, hex);
                }
                json_object_set_new(pcrs, bank_name((enum bank)b), bo);
        }
        {
                json_t *algs = json_array();

                for (unsigned i = 0; i < s.spec.n_algs; i++)
                        json_array_append_new(algs, json_pack("{s:i, s:i}", "algorithm_id",
                                                              s.spec.algs[i].alg_id, "digest_size",
                                                              s.spec.algs[i].size));
                json_object_set_new(out, "spec",
                                    json_pack("{s:o, s:i, s:i, s:i}", "algorithms", algs,
                                              "platform_class", (int)s.spec.platform_class,
                                              "version_major", s.spec.version_major,
                                              "version_minor", s.spec.version_minor));
        }
        json_object_set_new(out, "claims", claims_json(&s));
        json_object_set_new(out, "entries", json_integer((json_int_t)lr.index));
        if (json) {
                _cleanup_free_ char *t = json_dumps(out, JSON_COMPACT);

                printf("%s\n", t ? t : "{}");
        } else {
                _cleanup_free_ char *t =
                        json_dumps(json_object_get(out, "claims"), JSON_COMPACT | JSON_SORT_KEYS);

                printf("claims %s\n", t ? t : "{}");
        }
        return 0;
}
