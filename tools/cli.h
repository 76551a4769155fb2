/* Subcommands of the weft command and the argument helpers they share. */
#ifndef WEFT_TOOLS_CLI_H
#define WEFT_TOOLS_CLI_H
#include <stdbool.h>
#include <stdint.h>

#include "schedule/schedule.h"

int weft_cmd_show(int argc, char **argv);
int weft_cmd_bench(int argc, char **argv);
int weft_cmd_run(int argc, char **argv);
int weft_cmd_show_model(int argc, char **argv);
int weft_cmd_bench_model(int argc, char **argv);
int weft_cmd_tune(int argc, char **argv);
int weft_cmd_db(int argc, char **argv);

/* Applies a built-in schedule (naive, default, manual, random:SEED; NULL = naive) and then
 * step text (inline, or @FILE) to s. */
weft_status weft_cli_apply_schedule(weft_schedule *s, const char *which, const char *steps, const weft_target_caps *caps);
/* Parses "a,b,c" into up to max integers; returns the count or -1 on a malformed list. */
int weft_cli_parse_shape(const char *s, int64_t *out, int max);
/* Value of --name in argv (NULL when absent); a flag without value gives "". */
const char *weft_cli_opt(int argc, char **argv, const char *name);
/* Reads a whole file into a malloc'd string (NULL on error). */
char *weft_cli_read_file(const char *path);

#endif
