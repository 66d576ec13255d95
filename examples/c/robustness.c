/* What a long-running application needs of a library made by `lift build`: no memory growth over
 * many calls, clean errors for every misuse, safe sharing of one context between threads, and
 * calls at sizes the library was not built for. Uses examples/saxpy.lisp and
 * examples/hl_matvec.lisp:
 *
 *   lift build examples/saxpy.lisp -o build --size N=1024
 *   lift build examples/hl_matvec.lisp -o build            # generic sizes only
 *   cc -std=c99 examples/c/robustness.c -Ibuild -Lbuild -lsaxpy -lhl_matvec -lpthread \
 *      -Wl,-rpath,build -o robustness && ./robustness [DEVICE] [CALLS]
 *
 * Every check prints one `name: value` line; the test (crates/lift/tests/it/c_library.rs) reads
 * them. The process exits nonzero only when it cannot go on. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hl_matvec.h"
#include "saxpy.h"

static const char* device;

/* Resident memory of this process in KiB (Linux), from /proc/self/statm. */
static long rss_kib(void) {
    long pages = 0, resident = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * 4;
}

/* Counts elements of saxpy's result `r` (length n) that differ from alpha*x+y. */
static int saxpy_wrong(saxpy_ctx* ctx, saxpy_f32_1d* r, float alpha, const float* x, const float* y, int n) {
    float* out = (float*)malloc(sizeof(float) * (size_t)(n ? n : 1));
    int wrong = 0;
    if (saxpy_values_f32_1d(ctx, r, out)) wrong = n + 1;
    for (int i = 0; i < n && !wrong; i++) {
        float want = alpha * x[i] + y[i];
        if (fabsf(out[i] - want) > 1e-6f * (1.0f + fabsf(want))) wrong++;
    }
    free(out);
    return wrong;
}

/* One run of saxpy at length n on its own arrays; 0 when right. */
static int saxpy_once(saxpy_ctx* ctx, int n, float alpha) {
    float* x = (float*)malloc(sizeof(float) * (size_t)(n ? n : 1));
    float* y = (float*)malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 17) - 8.0f;
        y[i] = 0.25f * (float)(i % 5);
    }
    saxpy_f32_1d* xs = saxpy_new_f32_1d(ctx, x, n);
    saxpy_f32_1d* ys = saxpy_new_f32_1d(ctx, y, n);
    saxpy_f32_1d* r = NULL;
    int bad = !xs || !ys || saxpy_run(ctx, &r, alpha, xs, ys) || saxpy_wrong(ctx, r, alpha, x, y, n);
    saxpy_free_f32_1d(ctx, r);
    saxpy_free_f32_1d(ctx, xs);
    saxpy_free_f32_1d(ctx, ys);
    free(x);
    free(y);
    return bad;
}

struct worker {
    saxpy_ctx* ctx; /* shared, or NULL: the worker opens its own */
    int id;
    int failures;
};

static void* work(void* arg) {
    struct worker* w = (struct worker*)arg;
    saxpy_ctx* ctx = w->ctx ? w->ctx : saxpy_ctx_new(device);
    if (!ctx || saxpy_error(ctx)[0]) {
        w->failures = 1000;
        return NULL;
    }
    /* Threads alternate the built size and others, so both kernels run concurrently. */
    for (int rep = 0; rep < 40; rep++) w->failures += saxpy_once(ctx, rep % 2 ? 1024 : 100 + w->id, 0.5f + (float)w->id);
    if (!w->ctx && saxpy_ctx_free(ctx)) w->failures++;
    return NULL;
}

int main(int argc, char** argv) {
    device = argc > 1 && argv[1][0] ? argv[1] : NULL;
    int calls = argc > 2 ? atoi(argv[2]) : 10000;
    saxpy_ctx* ctx = saxpy_ctx_new(device);
    if (!ctx || saxpy_error(ctx)[0]) {
        fprintf(stderr, "saxpy: %s\n", ctx ? saxpy_error(ctx) : "out of memory");
        return 1;
    }
    enum { N = 1024 };
    static float x[N], y[N], read_back[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i / 7.0f;
        y[i] = 1.0f - (float)i;
    }
    saxpy_f32_1d* xs = saxpy_new_f32_1d(ctx, x, N);
    saxpy_f32_1d* ys = saxpy_new_f32_1d(ctx, y, N);
    if (!xs || !ys) {
        fprintf(stderr, "saxpy: %s\n", saxpy_error(ctx));
        return 1;
    }

    /* 1. Many calls on one context: memory after a tenth of them and after all of them. */
    long rss_tenth = 0;
    int failed = 0;
    for (int i = 1; i <= calls; i++) {
        saxpy_f32_1d* r = NULL;
        if (saxpy_run(ctx, &r, 2.0f, xs, ys) || saxpy_free_f32_1d(ctx, r)) failed++;
        if (i == calls / 10) rss_tenth = rss_kib();
    }
    long rss_all = rss_kib();
    printf("calls: %d\n", calls);
    printf("failed calls: %d\n", failed);
    printf("rss growth KiB: %ld\n", rss_all - rss_tenth);
    printf("live arrays: %lld\n", (long long)saxpy_ctx_arrays(ctx));
    saxpy_f32_1d* r = NULL;
    if (saxpy_run(ctx, &r, 2.0f, xs, ys)) return 1;
    printf("built size wrong elements: %d\n", saxpy_wrong(ctx, r, 2.0f, x, y, N));
    printf("built size used: %s\n", saxpy_used(ctx));
    /* Chained runs on device arrays move nothing between host and device; reading a result moves
     * its bytes. */
    int64_t moved = saxpy_ctx_transfers(ctx);
    for (int i = 0; i < 100; i++) {
        saxpy_f32_1d* next = NULL;
        if (saxpy_run(ctx, &next, 0.5f, xs, r)) return 1;
        saxpy_free_f32_1d(ctx, r);
        r = next;
    }
    printf("bytes moved by 100 chained runs: %lld\n", (long long)(saxpy_ctx_transfers(ctx) - moved));
    moved = saxpy_ctx_transfers(ctx);
    saxpy_values_f32_1d(ctx, r, read_back);
    printf("bytes moved reading a result: %lld\n", (long long)(saxpy_ctx_transfers(ctx) - moved));
    saxpy_free_f32_1d(ctx, r);

    /* 2. Other sizes: the generic kernels, which the library names. */
    printf("other size wrong: %d\n", saxpy_once(ctx, 1000, -1.5f));
    printf("other size used: %s\n", saxpy_used(ctx));
    printf("empty arrays wrong: %d\n", saxpy_once(ctx, 0, 3.0f));

    /* 3. Misuse: each a nonzero code and a message, and the context still works afterwards. */
    saxpy_f32_1d* short_ys = saxpy_new_f32_1d(ctx, y, 8);
    printf("mismatched lengths rc: %d\n", saxpy_run(ctx, &r, 2.0f, xs, short_ys));
    printf("mismatched lengths: %s\n", saxpy_error(ctx));
    printf("result after error: %s\n", r ? "set" : "NULL");
    printf("null out rc: %d\n", saxpy_run(ctx, NULL, 2.0f, xs, ys));
    printf("null out: %s\n", saxpy_error(ctx));
    printf("null array rc: %d\n", saxpy_run(ctx, &r, 2.0f, NULL, ys));
    printf("null array: %s\n", saxpy_error(ctx));
    printf("negative shape: %s\n", saxpy_new_f32_1d(ctx, x, -3) ? "made" : saxpy_error(ctx));
    printf("null data: %s\n", saxpy_new_f32_1d(ctx, NULL, 4) ? "made" : saxpy_error(ctx));
    saxpy_free_f32_1d(ctx, short_ys);
    printf("freed array rc: %d\n", saxpy_run(ctx, &r, 2.0f, xs, short_ys));
    printf("freed array: %s\n", saxpy_error(ctx));
    saxpy_ctx* other = saxpy_ctx_new(device);
    saxpy_f32_1d* theirs = saxpy_new_f32_1d(other, x, N);
    printf("other context's array rc: %d\n", saxpy_run(ctx, &r, 2.0f, xs, theirs));
    printf("other context's array: %s\n", saxpy_error(ctx));
    printf("other context's values rc: %d\n", saxpy_values_f32_1d(ctx, theirs, x));
    saxpy_free_f32_1d(other, theirs);
    printf("other context free: %d\n", saxpy_ctx_free(other));
    printf("freed context rc: %d\n", saxpy_run(other, &r, 2.0f, xs, ys));
    printf("freed context: %s\n", saxpy_error(other));
    printf("freed context twice: %d\n", saxpy_ctx_free(other));
    printf("after errors wrong: %d\n", saxpy_once(ctx, N, 2.0f));

    /* 4. Threads: four sharing this context, four with a context each, all at once. */
    pthread_t t[8];
    struct worker w[8];
    for (int k = 0; k < 8; k++) {
        w[k].ctx = k < 4 ? ctx : NULL;
        w[k].id = k;
        w[k].failures = 0;
        pthread_create(&t[k], NULL, work, &w[k]);
    }
    int shared = 0, own = 0;
    for (int k = 0; k < 8; k++) {
        pthread_join(t[k], NULL);
        if (k < 4) shared += w[k].failures;
        else own += w[k].failures;
    }
    printf("shared context thread failures: %d\n", shared);
    printf("own context thread failures: %d\n", own);

    /* 5. The untyped entry points that bindings use. */
    printf("signature: %s\n", saxpy_signature());
    float alpha = 2.0f;
    void* args[3] = {&alpha, xs, ys};
    void* out = NULL;
    int rank = 0;
    int rc = saxpy_call(ctx, &out, args);
    const int64_t* shape = rc ? NULL : saxpy_array_shape(ctx, out, &rank);
    printf("call: rc %d rank %d length %lld\n", rc, rank, shape ? (long long)shape[0] : -1LL);
    printf("call wrong elements: %d\n", rc ? -1 : saxpy_wrong(ctx, (saxpy_f32_1d*)out, 2.0f, x, y, N));
    saxpy_array_free(ctx, out);
    printf("unknown kind: %s\n", saxpy_array_new(ctx, "f64", 1, shape, x) ? "made" : saxpy_error(ctx));

    saxpy_free_f32_1d(ctx, xs);
    saxpy_free_f32_1d(ctx, ys);
    printf("live arrays at end: %lld\n", (long long)saxpy_ctx_arrays(ctx));
    printf("context free: %d\n", saxpy_ctx_free(ctx));

    /* 6. A library of generic kernels only: any shape, the size conditions of its variant. */
    hl_matvec_ctx* m = hl_matvec_ctx_new(device);
    if (!m || hl_matvec_error(m)[0]) {
        fprintf(stderr, "hl_matvec: %s\n", m ? hl_matvec_error(m) : "out of memory");
        return 1;
    }
    int mv_wrong = 0;
    const int sizes[3][2] = {{3, 5}, {4, 256}, {1, 1}};
    for (int s = 0; s < 3; s++) {
        int rows = sizes[s][0], cols = sizes[s][1];
        float* mat = (float*)malloc(sizeof(float) * (size_t)(rows * cols));
        float* v = (float*)malloc(sizeof(float) * (size_t)cols);
        float res[4];
        for (int i = 0; i < rows * cols; i++) mat[i] = (float)(i % 3) - 1.0f;
        for (int j = 0; j < cols; j++) v[j] = (float)(j % 4);
        hl_matvec_f32_2d* a = hl_matvec_new_f32_2d(m, mat, rows, cols);
        hl_matvec_f32_1d* b = hl_matvec_new_f32_1d(m, v, cols);
        hl_matvec_f32_1d* mv = NULL;
        if (hl_matvec_run(m, &mv, a, b) || hl_matvec_values_f32_1d(m, mv, res)) {
            printf("matvec error: %s\n", hl_matvec_error(m));
            mv_wrong++;
        } else {
            for (int i = 0; i < rows; i++) {
                float want = 0;
                for (int j = 0; j < cols; j++) want += mat[i * cols + j] * v[j];
                if (fabsf(res[i] - want) > 1e-4f * (1.0f + fabsf(want))) mv_wrong++;
            }
        }
        printf("matvec %dx%d used: %s\n", rows, cols, hl_matvec_used(m));
        hl_matvec_free_f32_1d(m, mv);
        hl_matvec_free_f32_2d(m, a);
        hl_matvec_free_f32_1d(m, b);
        free(mat);
        free(v);
    }
    printf("matvec wrong: %d\n", mv_wrong);
    return hl_matvec_ctx_free(m);
}
