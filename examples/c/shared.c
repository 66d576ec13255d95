/* Two programs on one device context: the result of examples/saxpy.lisp is the vector of
 * examples/hl_matvec.lisp, and that product is saxpy's `ys` again, with no copy in between:
 *
 *   lift build examples/saxpy.lisp -o build
 *   lift build examples/hl_matvec.lisp -o build
 *   cc examples/c/shared.c -Ibuild -Lbuild -lsaxpy -lhl_matvec -Wl,-rpath,build -o shared && ./shared
 *
 * `hl_matvec_ctx_share` opens hl_matvec's context on saxpy's device, queue and arrays; an array
 * of one is passed to the other with a cast to its handle type of the same element type and
 * rank. It prints the results as JSON arrays, the bytes the chain moved, and the messages of
 * the misuses that must fail. The optional argument is a device id (`lift devices`). */
#include <stdio.h>
#include "hl_matvec.h"
#include "saxpy.h"

static void print(const char* label, const float* xs, int n) {
    printf("%s: [", label);
    for (int i = 0; i < n; i++) printf(i ? ", %.9g" : "%.9g", xs[i]);
    printf("]\n");
}

#define CHECK(ok, err)                             \
    if (!(ok)) {                                   \
        fprintf(stderr, "line %d: %s\n", __LINE__, err); \
        return 1;                                  \
    }

int main(int argc, char** argv) {
    const char* device = argc > 1 ? argv[1] : NULL;
    saxpy_ctx* sctx = saxpy_ctx_new(device);
    CHECK(sctx && !saxpy_error(sctx)[0], sctx ? saxpy_error(sctx) : "out of memory");
    hl_matvec_ctx* mctx = hl_matvec_ctx_share(sctx);
    CHECK(mctx && !hl_matvec_error(mctx)[0], mctx ? hl_matvec_error(mctx) : "out of memory");

    const float xs_data[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    const float ys_data[4] = {0.5f, -0.5f, 1.0f, -1.0f};
    const float mat_data[16] = {1, 2, 3, 4, 1, 0, 0, 0, 0, -1, 0, -0.5f, 4, 3, 2, 1};
    saxpy_f32_1d* xs = saxpy_new_f32_1d(sctx, xs_data, 4);
    saxpy_f32_1d* ys = saxpy_new_f32_1d(sctx, ys_data, 4);
    hl_matvec_f32_2d* mat = hl_matvec_new_f32_2d(mctx, mat_data, 4, 4);
    CHECK(xs && ys && mat, saxpy_error(sctx));
    int64_t before = saxpy_ctx_transfers(sctx);
    saxpy_f32_1d* v = NULL;
    hl_matvec_f32_1d* mv = NULL;
    saxpy_f32_1d* back = NULL;
    /* saxpy's result is hl_matvec's `v`; hl_matvec's result is saxpy's `ys`. */
    CHECK(saxpy_run(sctx, &v, 2.0f, xs, ys) == 0, saxpy_error(sctx));
    CHECK(hl_matvec_run(mctx, &mv, mat, (const hl_matvec_f32_1d*)v) == 0, hl_matvec_error(mctx));
    CHECK(saxpy_run(sctx, &back, 0.5f, xs, (const saxpy_f32_1d*)mv) == 0, saxpy_error(sctx));
    /* Both contexts count the shared device context's copies. */
    printf("moved by the chain: %lld\n", (long long)(saxpy_ctx_transfers(sctx) - before));
    printf("same counts: %d\n", saxpy_ctx_transfers(sctx) == hl_matvec_ctx_transfers(mctx) &&
                                    saxpy_ctx_arrays(sctx) == 6 && hl_matvec_ctx_arrays(mctx) == 6);
    float out[4];
    CHECK(saxpy_values_f32_1d(sctx, v, out) == 0, saxpy_error(sctx));
    print("saxpy", out, 4);
    CHECK(hl_matvec_values_f32_1d(mctx, mv, out) == 0, hl_matvec_error(mctx));
    print("matvec", out, 4);
    /* Either library reads the other's arrays. */
    CHECK(saxpy_values_f32_1d(sctx, (const saxpy_f32_1d*)mv, out) == 0, saxpy_error(sctx));
    print("matvec read by saxpy", out, 4);
    CHECK(saxpy_values_f32_1d(sctx, back, out) == 0, saxpy_error(sctx));
    print("saxpy again", out, 4);

    /* Misuse: an array of a context that does not share the device context, an array of another
     * rank, sharing NULL. */
    hl_matvec_ctx* apart = hl_matvec_ctx_new(device);
    CHECK(apart && !hl_matvec_error(apart)[0], apart ? hl_matvec_error(apart) : "out of memory");
    hl_matvec_f32_1d* theirs = hl_matvec_new_f32_1d(apart, ys_data, 4);
    saxpy_f32_1d* bad = NULL;
    CHECK(saxpy_run(sctx, &bad, 2.0f, xs, (const saxpy_f32_1d*)theirs) != 0, "another context's array was taken");
    printf("another context: %s\n", saxpy_error(sctx));
    hl_matvec_f32_1d* bad_mv = NULL;
    CHECK(hl_matvec_run(mctx, &bad_mv, (const hl_matvec_f32_2d*)v, (const hl_matvec_f32_1d*)v) != 0,
          "a vector was taken for the matrix");
    printf("wrong rank: %s\n", hl_matvec_error(mctx));
    hl_matvec_ctx* none = hl_matvec_ctx_share(NULL);
    CHECK(none != NULL, "out of memory");
    printf("share NULL: %s\n", hl_matvec_error(none));
    CHECK(hl_matvec_ctx_free(none) == 0, "freeing the failed context");
    CHECK(hl_matvec_free_f32_1d(apart, theirs) == 0 && hl_matvec_ctx_free(apart) == 0, hl_matvec_error(apart));

    /* saxpy's context goes first; the arrays live on in hl_matvec's, the last, which frees them
     * all (saxpy's included) before it can be freed itself. */
    CHECK(saxpy_ctx_free(sctx) == 0, "freeing the first of two sharing contexts");
    CHECK(hl_matvec_ctx_free(mctx) != 0, "the last context was freed with arrays");
    printf("last free with arrays: %s\n", hl_matvec_error(mctx));
    CHECK(hl_matvec_free_f32_1d(mctx, (hl_matvec_f32_1d*)xs) == 0 && hl_matvec_free_f32_1d(mctx, (hl_matvec_f32_1d*)ys) == 0 &&
              hl_matvec_free_f32_1d(mctx, (hl_matvec_f32_1d*)v) == 0 && hl_matvec_free_f32_1d(mctx, (hl_matvec_f32_1d*)back) == 0 &&
              hl_matvec_free_f32_1d(mctx, mv) == 0 && hl_matvec_free_f32_2d(mctx, mat) == 0,
          hl_matvec_error(mctx));
    CHECK(hl_matvec_ctx_free(mctx) == 0, hl_matvec_error(mctx));
    return 0;
}
