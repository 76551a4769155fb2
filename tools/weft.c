/* The weft command: dispatches to subcommands (show, bench). */
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("weft %s\n", weft_version());
        return 0;
    }
    fprintf(stderr, "usage: weft <show|bench> ...\n");
    return 2;
}
