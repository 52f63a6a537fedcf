/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the host-facts parsers of the agent (agent/facts.c) over the same input: the
 * kernel config (facts_parse_config), /proc/cmdline (facts_parse_cmdline), a one-line /proc
 * file (facts_parse_line) and /etc/machine-id (facts_parse_machine_id). Outputs are written only on
 * success; what they hold then is bounded, NUL terminated and printable.
 */
#include <errno.h>
#include <string.h>

#include "agent/facts.h"
#include "tests/fuzz/fuzz.h"

static void check_printable(const char *s, size_t size)
{
        const char *end = memchr(s, '\0', size);

        FUZZ_CHECK(end != NULL);
        for (; s < end; s++)
                FUZZ_CHECK((unsigned char)*s >= 0x20 && (unsigned char)*s <= 0x7e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct facts f, before;
        const char *text = (const char *)data;
        bool en = true, perm = false;
        char line[64];
        int x;

        x = facts_parse_config(text, size, &en, &perm);
        FUZZ_CHECK(x == 0 || x == -E2BIG || x == -EBADMSG);
        if (x < 0)
                FUZZ_CHECK(en && !perm); /* untouched */
        if (size > FACTS_CONFIG_MAX)
                FUZZ_CHECK(x == -E2BIG);

        memset(&f, 0x5a, sizeof(f));
        memcpy(&before, &f, sizeof(f));
        x = facts_parse_cmdline(text, size, &f);
        FUZZ_CHECK(x == 0 || x == -E2BIG || x == -EBADMSG);
        if (x < 0) {
                FUZZ_CHECK(memcmp(&f, &before, sizeof(f)) == 0);
        } else {
                FUZZ_CHECK(size <= FACTS_CMDLINE_MAX + 1);
                check_printable(f.cmdline, sizeof(f.cmdline));
                if (f.tk_present) {
                        check_printable(f.tk_source, sizeof(f.tk_source));
                        FUZZ_CHECK(f.tk_source[0] != '\0');
                        FUZZ_CHECK(strpbrk(f.tk_source, " \"") == NULL);
                        FUZZ_CHECK(strstr(f.cmdline, f.tk_source) != NULL);
                        FUZZ_CHECK(strcmp(f.tk_origin, "cmdline") == 0);
                }
        }

        {
                char mid[EVIDENCE_MACHINE_ID_LEN + 1] = "untouched";

                x = facts_parse_machine_id(text, size, mid);
                FUZZ_CHECK(x == 0 || x == -EBADMSG);
                if (x < 0)
                        FUZZ_CHECK(strcmp(mid, "untouched") == 0);
                else
                        FUZZ_CHECK(evidence_machine_id_valid(mid, strlen(mid)) &&
                                   (size == EVIDENCE_MACHINE_ID_LEN ||
                                    size == EVIDENCE_MACHINE_ID_LEN + 1));
        }

        memcpy(line, "untouched", 10);
        x = facts_parse_line(text, size, line, sizeof(line));
        FUZZ_CHECK(x == 0 || x == -E2BIG || x == -EBADMSG);
        if (x < 0)
                FUZZ_CHECK(strcmp(line, "untouched") == 0);
        else
                check_printable(line, sizeof(line));
        return 0;
}
