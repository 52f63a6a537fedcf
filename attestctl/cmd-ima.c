/* SPDX-License-Identifier: MIT */
/*
 * attestctl ima show | replay | hashes: inspect an IMA log and prove it against PCR values. The
 * log is streamed (evidence/ima.h, ima_stream): a file or standard input through a 1 MiB window.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "attestctl/attestctl.h"
#include "attestctl/remote.h"
#include "evidence/cdata.h"
#include "util/hex.h"
#include "evidence/ima.h"

static void ima_usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl ima show [--json] [--format auto|binary|ascii] LOG\n"
                "       attestctl ima replay [--json] [--pcrs FILE] [--bank BANKS] [--format ...] "
                "LOG\n"
                "       attestctl ima hashes [--json] [--bank BANKS] [--format ...] LOG\n"
                "\n"
                "show    print every entry: index, PCR, template, name, and the decoded critical\n"
                "        data (selinux-state, selinux-policy-hash, kernel_version,\n"
                "        trusted-keys-source, cfi-state).\n"
                "replay  replay the log into PCR values per bank and print them; with --pcrs,\n"
                "        compare every replayed PCR with the file and check boot_aggregate.\n"
                "        Exit status 0 only if every compared value matches.\n"
                "hashes  print, per entry, the PCR and the digest each bank extends\n"
                "        (\"10:sha1=HEX,sha256=HEX\", the tpm2_pcrextend argument form; 0xff.. "
                "for\n"
                "        violations), to replay a log into a TPM.\n"
                "\n"
                "LOG is a file, or - for standard input (a pipe works too). The log is read\n"
                "through a 1 MiB window: memory does not grow with its size.\n"
                "\n"
                "Options:\n"
                "  --format F    log format; auto (default) tells binary from ascii\n"
                "  --pcrs FILE   PCR values: lines 'N HEX' or 'BANK:N HEX', or tpm2_pcrread "
                "output\n"
                "  --bank BANKS  banks to replay: sha1,sha256,sha384,sha512 or all (default all)\n"
                "  --big-endian  binary log of a big-endian host (non-canonical format)\n"
                "  --json        show, hashes: one JSON object per entry, one per line;\n"
                "                replay: one JSON object (pcrs, and with --pcrs the comparison\n"
                "                and result)\n"
                "  -h, --help    this text\n"
                "\n"
                "Exit status: 0 ok (replay --pcrs: every compared value matches); 1 the log is\n"
                "malformed or a value does not match (the message names the entry and its byte\n"
                "offset); 2 usage or file errors (also a read failing part-way).\n");
}

struct ima_args {
        const char *log;
        const char *pcrs;
        const char *format;
        unsigned banks;
        bool json;
        bool big_endian;
};

static int parse_args(int argc, char **argv, struct ima_args *a)
{
        static const struct option opts[] = {
                {"json", no_argument, NULL, 'j'},
                {"pcrs", required_argument, NULL, 'p'},
                {"bank", required_argument, NULL, 'b'},
                {"format", required_argument, NULL, 'f'},
                {"big-endian", no_argument, NULL, 'E'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        int c;

        *a = (struct ima_args){.banks = BANK_MASK_ALL, .format = "auto"};
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'j':
                        a->json = true;
                        break;
                case 'p':
                        a->pcrs = optarg;
                        break;
                case 'b':
                        if (bank_mask_parse(optarg, &a->banks) < 0) {
                                fprintf(stderr, "attestctl: --bank: unknown bank in '%s'\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case 'f':
                        if (strcmp(optarg, "auto") && strcmp(optarg, "binary") &&
                            strcmp(optarg, "ascii")) {
                                fprintf(stderr, "attestctl: --format: auto, binary or ascii\n");
                                return -EINVAL;
                        }
                        a->format = optarg;
                        break;
                case 'E':
                        a->big_endian = true;
                        break;
                case 'h':
                        ima_usage(stdout);
                        return 1;
                default:
                        ima_usage(stderr);
                        return -EINVAL;
                }
        }
        if (optind != argc - 1) {
                fprintf(stderr, "attestctl: expected exactly one LOG argument\n");
                ima_usage(stderr);
                return -EINVAL;
        }
        a->log = argv[optind];
        return 0;
}

/* Open and start reading the log: 0, or the exit status (2: file or memory errors). */
static int log_open(const struct ima_args *a, struct ctl_log *in)
{
        struct ima_log_opts o = {.big_endian = a->big_endian, .max_entries = UINT64_MAX};
        enum ima_stream_format f = strcmp(a->format, "binary") == 0  ? IMA_STREAM_BINARY
                                   : strcmp(a->format, "ascii") == 0 ? IMA_STREAM_ASCII
                                                                     : IMA_STREAM_AUTO;

        return ctl_log_open(a->log, f, &o, in) < 0 ? 2 : 0;
}

/* Print bytes as a string, escaping what is not printable (and, for JSON, quotes). */
static void put_escaped(FILE *f, const char *s, size_t n, bool json)
{
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];

                if (json && (c == '"' || c == '\\'))
                        fprintf(f, "\\%c", c);
                else if (c < 0x20 || c >= 0x7f)
                        fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
                else
                        fputc(c, f);
        }
}

static void put_hex(FILE *f, const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%02x", p[i]);
}

static void show_cdata(FILE *f, const struct ima_entry *e, bool json)
{
        enum cdata_kind k = cdata_kind_of(e);
        struct cdata_kvs kvs;

        switch (k) {
        case CDATA_SELINUX_STATE:
        case CDATA_TRUSTED_KEYS:
        case CDATA_CFI:
                if (cdata_kv_parse(e->buf, e->buf_len, &kvs, NULL) < 0) {
                        fputs(json ? ",\"cdata\":null" : "  (malformed key=value buffer)", f);
                        return;
                }
                fputs(json ? ",\"cdata\":{" : "\n      ", f);
                for (uint32_t i = 0; i < kvs.n; i++) {
                        if (json) {
                                fprintf(f, "%s\"", i ? "," : "");
                                put_escaped(f, kvs.kv[i].key, kvs.kv[i].key_len, true);
                                fputs("\":\"", f);
                                put_escaped(f, kvs.kv[i].val, kvs.kv[i].val_len, true);
                                fputc('"', f);
                        } else {
                                fprintf(f, "%s%.*s=%.*s", i ? " " : "", (int)kvs.kv[i].key_len,
                                        kvs.kv[i].key, (int)kvs.kv[i].val_len, kvs.kv[i].val);
                        }
                }
                if (json)
                        fputc('}', f);
                break;
        case CDATA_SELINUX_POLICY_HASH:
                fputs(json ? ",\"cdata\":\"" : "  ", f);
                put_hex(f, e->buf, e->buf_len);
                if (json)
                        fputc('"', f);
                break;
        case CDATA_KERNEL_VERSION:
                fputs(json ? ",\"cdata\":\"" : "  ", f);
                put_escaped(f, (const char *)e->buf, e->buf_len, json);
                if (json)
                        fputc('"', f);
                break;
        case CDATA_NONE:
                break;
        }
}

static void show_entry(const struct ima_entry *e, uint64_t idx, bool json)
{
        if (json) {
                printf("{\"index\":%" PRIu64 ",\"pcr\":%" PRIu32 ",\"template\":\"", idx, e->pcr);
                put_escaped(stdout, e->tmpl_name, e->tmpl_name_len, true);
                printf("\",\"template_hash\":\"");
                put_hex(stdout, e->sha1, 20);
                printf("\",\"violation\":%s", e->violation ? "true" : "false");
                if (e->digest) {
                        printf(",\"digest\":\"%.*s:", (int)e->algo_len, e->algo);
                        put_hex(stdout, e->digest, e->digest_len);
                        putchar('"');
                }
                if (e->name) {
                        printf(",\"name\":\"");
                        put_escaped(stdout, e->name, e->name_len, true);
                        putchar('"');
                }
                if (cdata_kind_of(e) != CDATA_NONE)
                        printf(",\"event\":\"%s\"", cdata_kind_name(cdata_kind_of(e)));
                show_cdata(stdout, e, true);
                printf("}\n");
                return;
        }
        printf("%6" PRIu64 " %2" PRIu32 " %-10.*s ", idx, e->pcr, (int)e->tmpl_name_len,
               e->tmpl_name);
        if (e->violation)
                printf("VIOLATION ");
        if (e->name)
                put_escaped(stdout, e->name, e->name_len, false);
        else
                printf("(opaque template data, %" PRIu32 " bytes)", e->data_len);
        show_cdata(stdout, e, false);
        putchar('\n');
}

/*
 * Why the log could not be read or replayed, on stderr: exit status 1 for a malformed log, 2 when
 * reading the file failed. The binary reader's messages name the entry and its byte offset; the
 * others (ascii lines, a replay's template hash) get them here. read: the reader failed.
 */
static int log_failed(const struct ima_args *a, const struct ctl_log *in,
                      const struct attest_err *err, bool read)
{
        fprintf(stderr, "attestctl: %s: %s: %s", a->log, attest_code_name(err->code), err->msg);
        if (!in->s.read_error && (!read || in->s.rd.format == IMA_FORMAT_ASCII))
                fprintf(stderr, " (entry %" PRIu64 " at byte %" PRIu64 ")", in->s.entry_idx,
                        in->s.entry_at);
        fputc('\n', stderr);
        return in->s.read_error ? 2 : 1;
}

static int ima_show(const struct ima_args *a)
{
        struct ctl_log in;
        struct ima_entry e;
        struct attest_err err = {0};
        int x;

        if ((x = log_open(a, &in)) != 0)
                return x;
        if (!a->json)
                printf("%6s %2s %-10s %s\n", "index", "pcr", "template", "name");
        while ((x = ima_stream_next(&in.s, &e, &err)) > 0)
                show_entry(&e, in.s.rd.idx - 1, a->json);
        if (x < 0)
                x = log_failed(a, &in, &err, true);
        ctl_log_close(&in);
        return x;
}

static int ima_replay(const struct ima_args *a)
{
        _cleanup_free_ uint8_t *pbuf = NULL;
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        json_auto_t *out = NULL, *pcrs_out = NULL, *mism = NULL;
        struct pcr_set pcrs = {0};
        struct ima_replay rp;
        struct ctl_log in;
        struct ima_entry e;
        struct attest_err err = {0}, aerr = {0};
        bool have_pcrs = a->pcrs != NULL, agg_seen = false, agg_ok = true, replay_failed = false;
        uint64_t agg_idx = 0;
        unsigned compared = 0, mismatched = 0;
        size_t plen;
        int x;

        if (have_pcrs) {
                if (ctl_read_file(a->pcrs, PCR_FILE_MAX, &pbuf, &plen) < 0)
                        return 2;
                if (pcrs_parse((const char *)pbuf, plen, &pcrs, &err) < 0) {
                        fprintf(stderr, "attestctl: %s: %s\n", a->pcrs, err.msg);
                        return 2;
                }
        }
        if ((x = hasher_new(&h)) < 0) {
                fprintf(stderr, "attestctl: OpenSSL digests unavailable: %s\n", strerror(-x));
                return 2;
        }
        if ((x = log_open(a, &in)) != 0)
                return x;
        ima_replay_init(&rp, h, a->banks, in.s.rd.format == IMA_FORMAT_ASCII);
        while ((x = ima_stream_next(&in.s, &e, &err)) > 0) {
                uint64_t idx = in.s.rd.idx - 1;

                if ((x = ima_replay_extend(&rp, &e, idx, &err)) < 0) {
                        replay_failed = true;
                        break;
                }
                if (have_pcrs && !agg_seen && ima_entry_is_boot_aggregate(&e)) {
                        agg_seen = true;
                        agg_idx = idx;
                        agg_ok = ima_boot_aggregate_check(h, &e, &pcrs, &aerr) == 0;
                }
        }
        if (x < 0)
                x = log_failed(a, &in, &err, !replay_failed);
        ctl_log_close(&in);
        if (x)
                return x;
        if (!(out = json_object()) || !(pcrs_out = json_object()) || !(mism = json_array()))
                return 2;
        if (agg_seen && !a->json) {
                if (agg_ok)
                        printf("boot_aggregate (entry %" PRIu64 "): ok\n", agg_idx);
                else
                        printf("boot_aggregate (entry %" PRIu64 "): FAIL %s\n", agg_idx, aerr.msg);
        }
        if (!a->json)
                printf("%" PRIu64 " entries (%" PRIu64 " violations)\n", rp.entries, rp.violations);
        for (int b = 0; b < BANK_COUNT; b++) {
                json_t *bank;

                if (!(rp.banks & BANK_MASK(b)))
                        continue;
                if (json_object_set_new(pcrs_out, bank_name(b), json_object()) < 0)
                        return 2;
                bank = json_object_get(pcrs_out, bank_name(b));
                for (unsigned i = 0; i < PCR_COUNT; i++) {
                        char hex[2 * BANK_DIGEST_MAX + 1], want[2 * BANK_DIGEST_MAX + 1], key[8];
                        const char *verdict = "";

                        if (!(rp.used & (1u << i)))
                                continue;
                        hex_encode(rp.pcr[b][i], bank_size(b), hex);
                        snprintf(key, sizeof(key), "%u", i);
                        if (json_object_set_new(bank, key, json_string(hex)) < 0)
                                return 2;
                        if (have_pcrs && pcrs.have[b] & (1u << i)) {
                                compared++;
                                if (memcmp(pcrs.v[b][i], rp.pcr[b][i], bank_size(b)) == 0) {
                                        verdict = "  ok";
                                } else {
                                        verdict = "  MISMATCH";
                                        mismatched++;
                                        hex_encode(pcrs.v[b][i], bank_size(b), want);
                                        if (json_array_append_new(
                                                    mism, json_pack("{s:s, s:i, s:s, s:s}", "bank",
                                                                    bank_name(b), "pcr", (int)i,
                                                                    "replayed", hex, "expected",
                                                                    want)) < 0)
                                                return 2;
                                }
                        } else if (have_pcrs) {
                                verdict = "  (not in PCR file)";
                        }
                        if (!a->json)
                                printf("%s:%u %s%s\n", bank_name(b), i, hex, verdict);
                }
        }
        if (have_pcrs && compared == 0) {
                fprintf(stderr, "attestctl: %s has none of the replayed PCRs\n", a->pcrs);
                return 1;
        }
        if (a->json) {
                if (json_object_set_new(out, "entries", json_integer((json_int_t)rp.entries)) < 0 ||
                    json_object_set_new(out, "violations",
                                        json_integer((json_int_t)rp.violations)) < 0 ||
                    json_object_set(out, "pcrs", pcrs_out) < 0)
                        return 2;
                if (have_pcrs &&
                    (json_object_set_new(out, "compared", json_integer(compared)) < 0 ||
                     json_object_set_new(out, "mismatched", json_integer(mismatched)) < 0 ||
                     json_object_set(out, "mismatches", mism) < 0 ||
                     json_object_set_new(out, "boot_aggregate",
                                         !agg_seen ? json_null()
                                         : agg_ok  ? json_pack("{s:I, s:b}", "entry",
                                                               (json_int_t)agg_idx, "ok", 1)
                                                   : json_pack("{s:I, s:b, s:s}", "entry",
                                                               (json_int_t)agg_idx, "ok", 0,
                                                               "detail", aerr.msg)) < 0 ||
                     json_object_set_new(out, "result",
                                         json_string(mismatched || !agg_ok ? "fail" : "pass")) < 0))
                        return 2;
                if (print_json(out) < 0)
                        return 2;
        } else if (have_pcrs) {
                printf("%u PCR values compared, %u mismatched%s\n", compared, mismatched,
                       agg_seen ? "" : "; no boot_aggregate entry");
        }
        if (!have_pcrs)
                return 0;
        return mismatched || !agg_ok ? 1 : 0;
}

static int ima_hashes(const struct ima_args *a)
{
        _cleanup_(hasher_freep) struct hasher *h = NULL;
        struct ctl_log in;
        struct ima_entry e;
        struct attest_err err = {0};
        int x;

        if (hasher_new(&h) < 0)
                return 2;
        if ((x = log_open(a, &in)) != 0)
                return x;
        while ((x = ima_stream_next(&in.s, &e, &err)) > 0) {
                const char *sep = "";

                if (a->json)
                        printf("{\"index\":%" PRIu64 ",\"pcr\":%" PRIu32, in.s.rd.idx - 1, e.pcr);
                else
                        printf("%" PRIu32 ":", e.pcr);
                for (int b = 0; b < BANK_COUNT; b++) {
                        uint8_t th[BANK_DIGEST_MAX];
                        char hex[2 * BANK_DIGEST_MAX + 1];

                        if (!(a->banks & BANK_MASK(b)))
                                continue;
                        if (e.violation)
                                memset(th, 0xff, sizeof(th));
                        else if ((x = ima_tmpl_hash(h, b, &e, th)) < 0)
                                break;
                        hex_encode(th, bank_size(b), hex);
                        if (a->json)
                                printf(",\"%s\":\"%s\"", bank_name(b), hex);
                        else
                                printf("%s%s=%s", sep, bank_name(b), hex);
                        sep = ",";
                }
                fputs(a->json ? "}\n" : "\n", stdout);
        }
        if (x < 0)
                x = log_failed(a, &in, &err, true);
        ctl_log_close(&in);
        return x;
}

int cmd_ima(int argc, char **argv)
{
        struct ima_args a;
        int x;

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                ima_usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        if ((x = parse_args(argc - 1, argv + 1, &a)) != 0)
                return x > 0 ? 0 : 2;
        if (strcmp(argv[1], "show") == 0)
                return ima_show(&a);
        if (strcmp(argv[1], "replay") == 0)
                return ima_replay(&a);
        if (strcmp(argv[1], "hashes") == 0)
                return ima_hashes(&a);
        fprintf(stderr, "attestctl ima: unknown sub-command '%s'\n", argv[1]);
        ima_usage(stderr);
        return 2;
}
