/* compare_f32 GOT REF TOL: both files raw float32 of the same size; exit 0 when
 * max |got - ref| <= TOL * max(1, max |ref|), printing the figures; 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static float *slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *x = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (x && fread(x, 1, (size_t)bytes, f) != (size_t)bytes) {
        free(x);
        x = NULL;
    }
    fclose(f);
    *n = bytes / 4;
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: compare_f32 GOT REF TOL\n");
        return 2;
    }
    long n = 0, m = 0;
    float *got = slurp(argv[1], &n), *ref = slurp(argv[2], &m);
    int rc = 1;
    if (!got || !ref) fprintf(stderr, "compare_f32: cannot read %s\n", got ? argv[2] : argv[1]);
    else if (n != m) fprintf(stderr, "compare_f32: %s has %ld floats, %s has %ld\n", argv[1], n, argv[2], m);
    else {
        double err = 0, scale = 1;
        for (long i = 0; i < n; i++) {
            double d = fabs((double)got[i] - ref[i]);
            if (!(d <= err)) err = d;
            if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
        }
        double tol = atof(argv[3]) * scale;
        printf("%ld floats, max |got - ref| = %.3g (tolerance %.3g)\n", n, err, tol);
        rc = err <= tol ? 0 : 1;
    }
    free(got);
    free(ref);
    return rc;
}
