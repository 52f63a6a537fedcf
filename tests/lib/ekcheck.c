/* SPDX-License-Identifier: MIT */
/* ekcheck EK.der CA EK.pub: ekcert_verify() from the command line, for the integration tests. */
#include <stdio.h>
#include <stdlib.h>

#include "evidence/ekcert.h"
#include "util/file.h"

int main(int argc, char **argv)
{
        static uint8_t cert[EKCERT_MAX + 1], ek[1024];
        struct attest_err err = {0};
        size_t cl, el;

        if (argc != 4) {
                fprintf(stderr, "usage: ekcheck EK.der CA EK.pub\n");
                return 2;
        }
        /* whole files, more than the buffer is an error (not a cut) */
        if (file_read(argv[1], cert, sizeof(cert), 0, &cl, &err) < 0 ||
            file_read(argv[3], ek, sizeof(ek), 0, &el, &err) < 0) {
                fprintf(stderr, "ekcheck: %s\n", err.msg);
                return 2;
        }
        if (ekcert_verify(cert, cl, argv[2], ek, el, &err) < 0) {
                printf("%s: %s\n", attest_code_name(err.code), err.msg);
                return 1;
        }
        printf("ok\n");
        return 0;
}
