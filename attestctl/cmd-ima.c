/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "attestctl.h"

int cmd_ima(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "attestctl ima: not yet\n");
        return 2;
}
