/* SPDX-License-Identifier: MIT */
/* ekcheck EK.der CA EK.pub: ekcert_verify() from the command line, for the integration tests. */
#include <stdio.h>
#include <stdlib.h>

#include "evidence/ekcert.h"

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
        static uint8_t cert[EKCERT_MAX + 1], ek[1024];
        struct attest_err err = {0};
        size_t cl, el;

        if (argc != 4) {
                fprintf(stderr, "usage: ekcheck EK.der CA EK.pub\n");
                return 2;
        }
        cl = slurp(argv[1], cert, sizeof(cert));
        el = slurp(argv[3], ek, sizeof(ek));
        if (ekcert_verify(cert, cl, argv[2], ek, el, &err) < 0) {
                printf("%s: %s\n", attest_code_name(err.code), err.msg);
                return 1;
        }
        printf("ok\n");
        return 0;
}
