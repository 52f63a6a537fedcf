/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "evidence/evidence.h"

struct evidence *evidence_free(struct evidence *ev)
{
        if (!ev)
                return NULL;
        free(ev->attest);
        free(ev->sig);
        free(ev->ima);
        free(ev->host.cmdline);
        free(ev->boot_log);
        free(ev);
        return NULL;
}
