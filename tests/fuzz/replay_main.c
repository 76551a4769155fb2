/* Replays inputs through a fuzz target without libFuzzer, for ctest under the gcc builds (Debug,
 * ASan+UBSan): each argument is a file, or a folder whose files are replayed in name order.
 * Exits 0 when every input ran (the target aborts on a finding), 1 when an input cannot be
 * read or no input was found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return -1;
    }
    /* A copy of exactly len bytes, so that ASan sees reads past the input's end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (exact) memcpy(exact, buf, len);
    free(buf);
    if (!exact) return -1;
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open folder %s\n", dir);
        return -1;
    }
    char **names = NULL;
    int n = 0, cap = 0, count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **bigger = realloc(names, (size_t)cap * sizeof *names);
            if (!bigger) break;
            names = bigger;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int r = names[i] ? replay_file(path) : -1;
        if (r < 0) count = -1;
        else if (count >= 0) count += r;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: no such file or folder: %s\n", argv[i]);
            return 1;
        }
        int r = S_ISDIR(sb.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
        if (r < 0) return 1;
        total += r;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    fprintf(stderr, "replay: %d input(s), no finding\n", total);
    return 0;
}
