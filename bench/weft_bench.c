/* weft-bench: the benchmark executable behind `weft bench op` (tools/bench_spec.c execs it).
 * It links the vendor peers (OpenBLAS, oneDNN), which the weft command itself does not.
 *
 *   weft-bench op OP --shape S [...]     the same arguments as `weft bench op`
 */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "op")) return weft_cmd_bench(argc - 2, argv + 2);
    fprintf(stderr, "usage: weft-bench op OP --shape S [...] (the arguments of 'weft bench op'; see 'weft help bench op')\n");
    return 2;
}
