/* SPDX-License-Identifier: MIT */
/*
 * mkcred EK.pub NAME SECRET OUT: our MakeCredential, written in the file format tpm2-tools'
 * tpm2_activatecredential reads (BE32 0xBADCC0DE, BE32 1, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET).
 * A test tool: lets the tests check cred_make() against a real TPM's ActivateCredential.
 */
#include <stdio.h>
#include <stdlib.h>

#include "evidence/credential.h"

static size_t slurp(const char *path, uint8_t *buf, size_t max)
{
        FILE *f = fopen(path, "rb");
        size_t n;

        if (!f) {
                perror(path);
                exit(2);
        }
        n = fread(buf, 1, max, f);
        fclose(f);
        return n;
}

int main(int argc, char **argv)
{
        static const uint8_t head[8] = {0xba, 0xdc, 0xc0, 0xde, 0, 0, 0, 1};
        uint8_t ek[1024], name[128], secret[128];
        size_t ek_len, name_len, secret_len;
        struct credential c;
        struct attest_err err = {0};
        FILE *out;

        if (argc != 5) {
                fprintf(stderr, "usage: mkcred EK.pub NAME SECRET OUT\n");
                return 2;
        }
        ek_len = slurp(argv[1], ek, sizeof(ek));
        name_len = slurp(argv[2], name, sizeof(name));
        secret_len = slurp(argv[3], secret, sizeof(secret));
        if (cred_make(ek, ek_len, name, name_len, secret, secret_len, &c, &err) < 0) {
                fprintf(stderr, "mkcred: %s: %s\n", attest_code_name(err.code), err.msg);
                return 1;
        }
        out = fopen(argv[4], "wb");
        if (!out || fwrite(head, 1, 8, out) != 8 ||
            fwrite(c.blob, 1, c.blob_len, out) != c.blob_len ||
            fwrite(c.secret, 1, c.secret_len, out) != c.secret_len || fclose(out) != 0) {
                perror(argv[4]);
                return 2;
        }
        return 0;
}
