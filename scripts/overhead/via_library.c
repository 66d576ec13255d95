/* Per-call time of a library's entry point (`lift build`'s saxpy and hl_mm): the inputs are
 * uploaded once, then each call is `<prog>_run` (which waits for its kernels) and freeing its
 * result, as an application loop would do it.
 *
 *   via_library DEVICE CALLS    prints `saxpy per call us: X` and `mm per call us: X` (the
 *                               median of five timed loops) and which kernels ran */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "hl_mm.h"
#include "saxpy.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static float data[64 * 64];

int main(int argc, char** argv) {
    const char* device = argc > 1 ? argv[1] : NULL;
    int calls = argc > 2 ? atoi(argv[2]) : 10000;
    for (int i = 0; i < 64 * 64; i++) data[i] = (float)(i % 13) * 0.125f;
    double loops[5];

    saxpy_ctx* s = saxpy_ctx_new(device);
    if (!s || saxpy_error(s)[0]) return fprintf(stderr, "saxpy: %s\n", s ? saxpy_error(s) : "NULL"), 1;
    saxpy_f32_1d* xs = saxpy_new_f32_1d(s, data, 1024);
    saxpy_f32_1d* ys = saxpy_new_f32_1d(s, data + 1024, 1024);
    for (int rep = -1; rep < 5; rep++) {
        int n = rep < 0 ? calls / 10 + 1 : calls;
        double t0 = now();
        for (int c = 0; c < n; c++) {
            saxpy_f32_1d* r = NULL;
            if (saxpy_run(s, &r, 2.0f, xs, ys)) return fprintf(stderr, "saxpy: %s\n", saxpy_error(s)), 1;
            saxpy_free_f32_1d(s, r);
        }
        if (rep >= 0) loops[rep] = (now() - t0) / n;
    }
    qsort(loops, 5, sizeof loops[0], cmp);
    printf("saxpy per call us: %.2f\nsaxpy used: %s\n", loops[2] * 1e6, saxpy_used(s));

    hl_mm_ctx* m = hl_mm_ctx_new(device);
    if (!m || hl_mm_error(m)[0]) return fprintf(stderr, "hl_mm: %s\n", m ? hl_mm_error(m) : "NULL"), 1;
    hl_mm_f32_2d* a = hl_mm_new_f32_2d(m, data, 64, 64);
    hl_mm_f32_2d* b = hl_mm_new_f32_2d(m, data, 64, 64);
    for (int rep = -1; rep < 5; rep++) {
        int n = rep < 0 ? calls / 10 + 1 : calls;
        double t0 = now();
        for (int c = 0; c < n; c++) {
            hl_mm_f32_2d* r = NULL;
            if (hl_mm_run(m, &r, a, b)) return fprintf(stderr, "hl_mm: %s\n", hl_mm_error(m)), 1;
            hl_mm_free_f32_2d(m, r);
        }
        if (rep >= 0) loops[rep] = (now() - t0) / n;
    }
    qsort(loops, 5, sizeof loops[0], cmp);
    printf("mm per call us: %.2f\nmm used: %s\n", loops[2] * 1e6, hl_mm_used(m));
    saxpy_free_f32_1d(s, xs);
    saxpy_free_f32_1d(s, ys);
    hl_mm_free_f32_2d(m, a);
    hl_mm_free_f32_2d(m, b);
    return saxpy_ctx_free(s) || hl_mm_ctx_free(m);
}
