/* SPDX-License-Identifier: MIT */
/* attestctl quote check: verify a TPM 2.0 quote made by tpm2_quote (or the agent) offline. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "attestctl/attestctl.h"
#include "attestctl/remote.h"
#include "util/hex.h"
#include "evidence/pcrs.h"
#include "evidence/pcrsel.h"
#include "evidence/quote.h"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: attestctl quote check --ak AK.pub --nonce HEX --attest FILE --sig FILE\n"
                "                             --pcrs FILE [--sel SELECTION] [--json]\n\n"
                "Verify a TPM 2.0 quote: the signature with the attestation key, the nonce, the\n"
                "PCR selection and the PCR digest against the given PCR values.\n\n"
                "  --ak FILE       AK public area, TPM2B_PUBLIC (tpm2_createak -u, tss format);\n"
                "                  must be a restricted signing key (RSA >= 2048, ECC "
                "P-256/P-384)\n"
                "  --nonce HEX     the qualifying data the quote must carry (tpm2_quote -q)\n"
                "  --attest FILE   TPMS_ATTEST (tpm2_quote -m) or TPM2B_ATTEST\n"
                "  --sig FILE      TPMT_SIGNATURE (tpm2_quote -s, default tss format)\n"
                "  --pcrs FILE     PCR values: tpm2_pcrread YAML output or 'N HEX' /\n"
                "                  'BANK:N HEX' lines (not the binary tpm2_quote -o file)\n"
                "  --sel SEL       PCR selection the quote must cover, e.g. sha256:0-10+sha1:10;\n"
                "                  default: exactly the PCRs present in --pcrs\n"
                "  --json          the result as one JSON object: {\"valid\": true, \"ak_name\",\n"
                "                  ...} or {\"valid\": false, \"error\": CODE, \"detail\"}\n"
                "  -h, --help      this text\n\n"
                "Exit status: 0 the quote is valid, 1 it is not (the failed check is printed as\n"
                "'CODE: detail'), 2 usage or file errors.\n");
}

static const char *sig_name(uint16_t alg)
{
        return alg == 0x0014 ? "rsassa" : alg == 0x0016 ? "rsapss" : "ecdsa";
}

static int check(int argc, char **argv)
{
        static const struct option opts[] = {
                {"ak", required_argument, NULL, 'k'},
                {"nonce", required_argument, NULL, 'n'},
                {"attest", required_argument, NULL, 'm'},
                {"sig", required_argument, NULL, 's'},
                {"pcrs", required_argument, NULL, 'p'},
                {"sel", required_argument, NULL, 'l'},
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        const char *ak_path = NULL, *nonce_hex = NULL, *attest_path = NULL, *sig_path = NULL,
                   *pcrs_path = NULL, *sel_text = NULL;
        _cleanup_free_ uint8_t *ak_buf = NULL, *attest = NULL, *sig = NULL, *pcrs_text = NULL;
        _cleanup_(quote_ak_freep) struct quote_ak *ak = NULL;
        size_t ak_len, attest_len, sig_len, pcrs_len, nonce_len, name_len;
        uint8_t nonce[QUOTE_NONCE_MAX], name[QUOTE_NAME_MAX];
        char name_hex[2 * QUOTE_NAME_MAX + 1], sel_out[PCR_SEL_TEXT_MAX];
        struct attest_err err = {0};
        struct quote_info info;
        struct pcr_set pcrs;
        struct pcr_sel sel;
        bool json = false;
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'k':
                        ak_path = optarg;
                        break;
                case 'n':
                        nonce_hex = optarg;
                        break;
                case 'm':
                        attest_path = optarg;
                        break;
                case 's':
                        sig_path = optarg;
                        break;
                case 'p':
                        pcrs_path = optarg;
                        break;
                case 'l':
                        sel_text = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind != argc || !ak_path || !nonce_hex || !attest_path || !sig_path || !pcrs_path) {
                fprintf(stderr, "attestctl quote check: --ak, --nonce, --attest, --sig and "
                                "--pcrs are required\n");
                usage(stderr);
                return 2;
        }
        if (hex_decode(nonce_hex, strlen(nonce_hex), nonce, sizeof(nonce), &nonce_len) < 0) {
                fprintf(stderr, "attestctl quote check: --nonce: not hex of at most %d bytes\n",
                        QUOTE_NONCE_MAX);
                return 2;
        }
        if (sel_text && pcr_sel_parse(sel_text, &sel) < 0) {
                fprintf(stderr,
                        "attestctl quote check: --sel '%s': expected e.g. "
                        "sha256:0-10+sha1:10\n",
                        sel_text);
                return 2;
        }
        if (ctl_read_file(ak_path, QUOTE_AK_MAX, &ak_buf, &ak_len) < 0 ||
            ctl_read_file(attest_path, QUOTE_ATTEST_MAX, &attest, &attest_len) < 0 ||
            ctl_read_file(sig_path, QUOTE_SIG_MAX, &sig, &sig_len) < 0 ||
            ctl_read_file(pcrs_path, PCR_FILE_MAX, &pcrs_text, &pcrs_len) < 0)
                return 2;
        if (pcrs_parse((const char *)pcrs_text, pcrs_len, &pcrs, &err) < 0) {
                fprintf(stderr, "attestctl quote check: %s: %s: %s\n", pcrs_path,
                        attest_code_name(err.code), err.msg);
                return 2;
        }
        if (!sel_text)
                pcr_sel_from_set(&pcrs, &sel);
        if (quote_ak_parse(ak_buf, ak_len, &ak, &err) < 0 ||
            quote_verify(ak, attest, attest_len, sig, sig_len, nonce, nonce_len, &sel, &pcrs, &info,
                         &err) < 0) {
                if (json) {
                        json_auto_t *o = json_pack("{s:b, s:s, s:s}", "valid", 0, "error",
                                                   attest_code_name(err.code), "detail", err.msg);

                        return o && print_json(o) == 0 ? 1 : 2;
                }
                printf("quote: FAILED\n%s: %s\n", attest_code_name(err.code), err.msg);
                return 1;
        }
        if (quote_ak_name(ak, name, sizeof(name), &name_len) < 0 ||
            pcr_sel_format(&info.sel, sel_out, sizeof(sel_out)) < 0)
                return 2;
        hex_encode(name, name_len, name_hex);
        if (json) {
                char fw[24], scheme[32];
                json_auto_t *o = NULL;

                snprintf(fw, sizeof(fw), "0x%016" PRIx64, info.firmware_version);
                snprintf(scheme, sizeof(scheme), "%s-%s", sig_name(info.sig_alg),
                         bank_name(info.hash));
                o = json_pack("{s:b, s:s, s:s, s:s, s:I, s:I, s:I, s:b, s:s}", "valid", 1,
                              "ak_name", name_hex, "signature", scheme, "pcrs", sel_out, "clock",
                              (json_int_t)info.clock, "reset_count", (json_int_t)info.reset_count,
                              "restart_count", (json_int_t)info.restart_count, "safe", info.safe,
                              "firmware_version", fw);
                return o && print_json(o) == 0 ? 0 : 2;
        }
        printf("quote: OK\n"
               "ak-name: %s\n"
               "signature: %s-%s\n"
               "pcrs: %s\n"
               "clock: %" PRIu64 "\n"
               "reset-count: %" PRIu32 "\n"
               "restart-count: %" PRIu32 "\n"
               "safe: %s\n"
               "firmware-version: 0x%016" PRIx64 "\n",
               name_hex, sig_name(info.sig_alg), bank_name(info.hash), sel_out, info.clock,
               info.reset_count, info.restart_count, info.safe ? "yes" : "no",
               info.firmware_version);
        return 0;
}

int cmd_quote(int argc, char **argv)
{
        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        if (strcmp(argv[1], "check") == 0)
                return check(argc - 1, argv + 1);
        fprintf(stderr, "attestctl quote: unknown sub-command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
}
