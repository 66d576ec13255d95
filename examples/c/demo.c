/* Calling LIFT programs from C: examples/saxpy.lisp and examples/hl_matvec.lisp, each built with
 * `lift build` into a header and a shared library:
 *
 *   lift build examples/saxpy.lisp -o build --size N=8
 *   lift build examples/hl_matvec.lisp -o build --size M=4 --size N=4
 *   cc examples/c/demo.c -Ibuild -Lbuild -lsaxpy -lhl_matvec -Wl,-rpath,build -o demo && ./demo
 *
 * It prints each result as a JSON array, then the messages of two calls that must fail. The
 * optional argument is a device id (`lift devices`). */
#include <stdio.h>
#include "hl_matvec.h"
#include "saxpy.h"

static void print(const char* label, const float* xs, int n) {
    printf("%s: [", label);
    for (int i = 0; i < n; i++) printf(i ? ", %.9g" : "%.9g", xs[i]);
    printf("]\n");
}

int main(int argc, char** argv) {
    const char* device = argc > 1 ? argv[1] : NULL;
    saxpy_ctx* ctx = saxpy_ctx_new(device);
    if (!ctx || saxpy_error(ctx)[0]) {
        fprintf(stderr, "saxpy: %s\n", ctx ? saxpy_error(ctx) : "out of memory");
        return 1;
    }
    const float xs_data[8] = {1.0f, 2.0f, 3.0f, 4.0f, -1.0f, -2.0f, 0.5f, 0.25f};
    const float ys_data[8] = {0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 2.0f, 3.0f, 4.0f};
    saxpy_f32_1d* xs = saxpy_new_f32_1d(ctx, xs_data, 8);
    saxpy_f32_1d* ys = saxpy_new_f32_1d(ctx, ys_data, 8);
    saxpy_f32_1d *once = NULL, *twice = NULL;
    float out[8];
    /* The first result stays on the device and is the second call's `ys`. */
    if (!xs || !ys || saxpy_run(ctx, &once, 2.0f, xs, ys) || saxpy_run(ctx, &twice, 2.0f, xs, once) ||
        saxpy_values_f32_1d(ctx, once, out)) {
        fprintf(stderr, "saxpy: %s\n", saxpy_error(ctx));
        return 1;
    }
    print("saxpy", out, 8);
    if (saxpy_values_f32_1d(ctx, twice, out)) {
        fprintf(stderr, "saxpy: %s\n", saxpy_error(ctx));
        return 1;
    }
    print("saxpy chained", out, 8);

    /* A library is built for its sizes: an array of another length is refused with a message. */
    saxpy_f32_1d* short_xs = saxpy_new_f32_1d(ctx, xs_data, 4);
    saxpy_f32_1d* bad = NULL;
    if (saxpy_run(ctx, &bad, 2.0f, short_xs, ys) == 0) {
        fprintf(stderr, "a call with a 4-element `xs` succeeded\n");
        return 1;
    }
    printf("wrong length: %s\n", saxpy_error(ctx));
    saxpy_free_f32_1d(ctx, short_xs);
    /* The context cannot be freed while its arrays remain. */
    if (saxpy_ctx_free(ctx) == 0) {
        fprintf(stderr, "a context with arrays was freed\n");
        return 1;
    }
    printf("free with arrays: %s\n", saxpy_error(ctx));
    saxpy_free_f32_1d(ctx, xs);
    saxpy_free_f32_1d(ctx, ys);
    saxpy_free_f32_1d(ctx, once);
    saxpy_free_f32_1d(ctx, twice);
    if (saxpy_ctx_free(ctx)) return 1;

    hl_matvec_ctx* mctx = hl_matvec_ctx_new(device);
    if (!mctx || hl_matvec_error(mctx)[0]) {
        fprintf(stderr, "hl_matvec: %s\n", mctx ? hl_matvec_error(mctx) : "out of memory");
        return 1;
    }
    const float mat_data[16] = {1, 2, 3, 4, 1, 0, 0, 0, 0, -1, 0, -0.5f, 4, 3, 2, 1};
    const float v_data[4] = {2, 4, 0, 0};
    hl_matvec_f32_2d* mat = hl_matvec_new_f32_2d(mctx, mat_data, 4, 4);
    hl_matvec_f32_1d* v = hl_matvec_new_f32_1d(mctx, v_data, 4);
    hl_matvec_f32_1d* mv = NULL;
    float mv_out[4];
    if (!mat || !v || hl_matvec_run(mctx, &mv, mat, v) || hl_matvec_values_f32_1d(mctx, mv, mv_out)) {
        fprintf(stderr, "hl_matvec: %s\n", hl_matvec_error(mctx));
        return 1;
    }
    print("matvec", mv_out, 4);
    /* A high-level program runs as one of its variants: the tuned one, or the cost model's. */
    printf("matvec compiled as: %s\n", hl_matvec_compiled_as());
    /* A vector where the matrix belongs is a handle of another type: refused, not misread. */
    hl_matvec_f32_1d* bad_mv = NULL;
    if (hl_matvec_run(mctx, &bad_mv, (const hl_matvec_f32_2d*)v, v) == 0) {
        fprintf(stderr, "a vector was taken for the matrix\n");
        return 1;
    }
    printf("wrong rank: %s\n", hl_matvec_error(mctx));
    hl_matvec_free_f32_2d(mctx, mat);
    hl_matvec_free_f32_1d(mctx, v);
    hl_matvec_free_f32_1d(mctx, mv);
    return hl_matvec_ctx_free(mctx);
}
