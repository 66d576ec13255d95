/* The runtime that every library built by `lift build` carries: OpenCL declarations (so that
 * building needs no OpenCL headers, only the ICD loader libOpenCL.so.1 at link time), the device
 * context (device, queue, lock, arrays, pool of freed buffers), the program's context on it
 * (built kernels, last error) and device arrays. The generated part of the library follows this
 * text; it names everything here `lr_`, and all of it is static, so two libraries loaded in one
 * process do not clash.
 *
 * Libraries of different programs share a device context (`<prog>_ctx_share`): each reads the
 * other's `struct lr_dev` and arrays, which is why their layout is versioned (LR_ABI, in the
 * magic numbers) and checked before a library uses a context or array it did not make. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

/* --- the subset of the OpenCL 1.2 C API that the library calls (Khronos cl.h) --- */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_uint cl_device_info;
typedef cl_uint cl_program_build_info;
typedef cl_uint cl_bool;
typedef intptr_t cl_context_properties;
typedef struct _cl_platform_id* cl_platform_id;
typedef struct _cl_device_id* cl_device_id;
typedef struct _cl_context* cl_context;
typedef struct _cl_command_queue* cl_command_queue;
typedef struct _cl_mem* cl_mem;
typedef struct _cl_program* cl_program;
typedef struct _cl_kernel* cl_kernel;
typedef struct _cl_event* cl_event;
#define CL_SUCCESS 0
#define CL_TRUE 1
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_NAME 0x102B
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_MEM_READ_WRITE (1 << 0)
cl_int clGetPlatformIDs(cl_uint, cl_platform_id*, cl_uint*);
cl_int clGetDeviceIDs(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*);
cl_int clGetDeviceInfo(cl_device_id, cl_device_info, size_t, void*, size_t*);
cl_context clCreateContext(const cl_context_properties*, cl_uint, const cl_device_id*,
                           void (*)(const char*, const void*, size_t, void*), void*, cl_int*);
cl_command_queue clCreateCommandQueue(cl_context, cl_device_id, cl_command_queue_properties, cl_int*);
cl_program clCreateProgramWithSource(cl_context, cl_uint, const char**, const size_t*, cl_int*);
cl_int clBuildProgram(cl_program, cl_uint, const cl_device_id*, const char*,
                      void (*)(cl_program, void*), void*);
cl_int clGetProgramBuildInfo(cl_program, cl_device_id, cl_program_build_info, size_t, void*, size_t*);
cl_kernel clCreateKernel(cl_program, const char*, cl_int*);
cl_int clSetKernelArg(cl_kernel, cl_uint, size_t, const void*);
cl_mem clCreateBuffer(cl_context, cl_mem_flags, size_t, void*, cl_int*);
cl_int clEnqueueWriteBuffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint,
                            const cl_event*, cl_event*);
cl_int clEnqueueReadBuffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint,
                           const cl_event*, cl_event*);
cl_int clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                              const size_t*, cl_uint, const cl_event*, cl_event*);
cl_int clEnqueueCopyBuffer(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event*,
                           cl_event*);
cl_int clFinish(cl_command_queue);
cl_int clReleaseMemObject(cl_mem);
cl_int clReleaseKernel(cl_kernel);
cl_int clReleaseProgram(cl_program);
cl_int clReleaseCommandQueue(cl_command_queue);
cl_int clReleaseContext(cl_context);

/* --- contexts and arrays --- */
#define LR_MAX_RANK 4
#define LR_MAX_DEVICES 64
/* Variants: the kernels built for the sizes, the generic ones, the generic ones as written; a
 * host program's library defines it as its number of units (each its own OpenCL program). */
#ifndef LR_MAX_VARIANTS
#define LR_MAX_VARIANTS 3
#endif
/* Kernel arguments a context remembers per kernel (see lr_arg). */
#define LR_MAX_ARGS 64
/* Freed device buffers a device context keeps for reuse (a result of the same size next call),
 * so that a loop of calls allocates nothing: at most this many, of at most LR_POOL_BYTES together. */
#define LR_POOL 16
#define LR_POOL_BYTES ((size_t)256 << 20)
/* The version of the structures below that libraries share: another library's context or array
 * is used only when its magic number (which holds the version) is this library's. */
#define LR_ABI 1u
#define LR_DEV_MAGIC (0x6c69667464657600ull | LR_ABI) /* "liftdev" */
#define LR_CTX_MAGIC (0x6c69667463747800ull | LR_ABI) /* "liftctx" */
#define LR_ARRAY_MAGIC (0x6c69667461727200ull | LR_ABI) /* "liftarr" */

/* The last value set for one kernel argument: a call whose arguments did not change (the same
 * scalars, the same pooled buffers) sets none, as a hand-written host program would. */
struct lr_argslot {
    int set, local;
    size_t size;
    unsigned char value[8];
};

/* One compiled form of the program: the kernels built for the library's sizes, or the
 * generic ones that take every size as an argument. */
struct lr_variant {
    const char* source;
    const char* const* names;
    int n;
    /* What `lift` compiled (the variant chosen and for which sizes), for `<prog>_used`. */
    const char* description;
};

/* A device with its queue and its arrays, shared by the contexts of one or more programs'
 * libraries (`<prog>_ctx_share`). Its lock serialises every call of every context on it: they
 * share the queue, the arrays and the pool. Freed with its last context. */
struct lr_dev {
    uint64_t magic;
    pthread_mutex_t lock;
    /* Contexts on this device context (under `lock`). */
    int refs;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    /* Live arrays, so that the last context's free can refuse while some remain (their memory
     * is the device context's), and a freed handle passed again is an error rather than a use
     * after free. */
    int64_t arrays;
    struct lr_array* live;
    /* Freed buffers kept for reuse, with their sizes. */
    cl_mem pool[LR_POOL];
    size_t pool_bytes[LR_POOL];
    int npool;
    size_t pooled;
    /* Bytes copied between host and device (arrays made and read, scratch cleared, error flags). */
    int64_t moved;
};

/* One program's context: its device context and, per variant, its built program and kernels. */
struct lr_ctx {
    /* The fields another library reads (`lr_ctx_share`) come first: the arrays below have
     * LR_MAX_VARIANTS entries, which a host program's library raises. */
    uint64_t magic;
    struct lr_dev* dev;
    /* Set when the device could not be opened: every later call fails with `error`. */
    int broken;
    char error[4096];
    /* Per variant: its program and kernels, built when first run (the first at creation). */
    const struct lr_variant* variants;
    int nvariants;
    cl_program program[LR_MAX_VARIANTS];
    cl_kernel* kernels[LR_MAX_VARIANTS];
    int nkernels[LR_MAX_VARIANTS];
    struct lr_argslot* args[LR_MAX_VARIANTS];
    /* The variant the last successful run used, -1 before one. */
    int used;
    /* The error flag the kernels' checks set, made at the first run that has checks. */
    cl_mem flag;
    /* The list of live contexts: a freed context passed again is refused. */
    struct lr_ctx* next_ctx;
};

struct lr_array {
    uint64_t magic;
    struct lr_dev* dev;
    struct lr_array *prev, *next;
    cl_mem mem;
    /* The element type and rank (LR_KIND: the same numbers in every library), so a handle of
     * one type passed where another is expected is a clean error rather than a wrong result. */
    int kind;
    int rank;
    int64_t shape[LR_MAX_RANK];
    size_t bytes;
};

/* A handle type's number: element type (f32 f64 i32 u32 i64 u64 as 0..5) and rank. */
#define LR_KIND(elem, rank) ((elem) * 8 + (rank))

static pthread_mutex_t lr_contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lr_ctx* lr_contexts;

/* Whether `ctx` is a context of this library that has not been freed. */
static int lr_live(const struct lr_ctx* ctx) {
    pthread_mutex_lock(&lr_contexts_lock);
    const struct lr_ctx* c = lr_contexts;
    while (c && c != ctx) c = c->next_ctx;
    pthread_mutex_unlock(&lr_contexts_lock);
    return c != NULL;
}

/* The message for a context that is not live, which has no room for it. */
static const char* const lr_closed = "the context was freed (or is not one of this library)";

static void lr_fail(struct lr_ctx* ctx, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
}

/* Whether `needle` is in `hay`, ignoring ASCII case. */
static int lr_contains(const char* hay, const char* needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && (hay[i] | 32) == (needle[i] | 32)) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

/* The device as `lift` picks it (host-runner's `select`): an id `P:D` as `lift devices` prints
 * it (the platform's and the device's index), else a case-insensitive part of the device's name,
 * first match; without one, the first GPU, else the first device. */
static int lr_select(struct lr_ctx* ctx, const char* wanted, cl_device_id* out) {
    if (wanted && !wanted[0]) wanted = NULL;
    cl_device_id named = NULL;
    cl_platform_id platforms[16];
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(16, platforms, &np);
    if (e != CL_SUCCESS || np == 0) {
        lr_fail(ctx, "no OpenCL platform found (clGetPlatformIDs: error %d)", (int)e);
        return 1;
    }
    if (np > 16) np = 16;
    cl_device_id first = NULL, gpu = NULL;
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id devs[LR_MAX_DEVICES];
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, LR_MAX_DEVICES, devs, &nd) != CL_SUCCESS) continue;
        if (nd > LR_MAX_DEVICES) nd = LR_MAX_DEVICES;
        for (cl_uint d = 0; d < nd; d++) {
            char id[32];
            snprintf(id, sizeof id, "%u:%u", p, d);
            if (wanted && strcmp(wanted, id) == 0) {
                *out = devs[d];
                return 0;
            }
            char name[256] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof name - 1, name, NULL);
            if (wanted && !named && lr_contains(name, wanted)) named = devs[d];
            cl_device_type t = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            if (!first) first = devs[d];
            if (!gpu && (t & CL_DEVICE_TYPE_GPU)) gpu = devs[d];
        }
    }
    if (named) {
        *out = named;
        return 0;
    }
    if (wanted) {
        lr_fail(ctx, "no OpenCL device with id or name `%s` (`lift devices` lists them)", wanted);
        return 1;
    }
    *out = gpu ? gpu : first;
    if (!*out) {
        lr_fail(ctx, "the OpenCL platforms list no device");
        return 1;
    }
    return 0;
}

/* Builds variant `v`'s program and kernels, once; nonzero (with the message) on failure. */
static int lr_build(struct lr_ctx* ctx, int v) {
    if (ctx->kernels[v]) return 0;
    const struct lr_variant* var = &ctx->variants[v];
    cl_int e = CL_SUCCESS;
    const char* source = var->source;
    ctx->program[v] = clCreateProgramWithSource(ctx->dev->context, 1, &source, NULL, &e);
    if (e != CL_SUCCESS) { lr_fail(ctx, "clCreateProgramWithSource failed: error %d", (int)e); return 1; }
    e = clBuildProgram(ctx->program[v], 1, &ctx->dev->device, "-cl-std=CL1.2", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[2048] = "";
        clGetProgramBuildInfo(ctx->program[v], ctx->dev->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        lr_fail(ctx, "the OpenCL driver could not build the kernels (error %d), a bug of lift:\n%s", (int)e, log);
        return 1;
    }
    cl_kernel* ks = (cl_kernel*)calloc((size_t)(var->n ? var->n : 1), sizeof(cl_kernel));
    if (!ks) { lr_fail(ctx, "out of host memory"); return 1; }
    for (int k = 0; k < var->n; k++) {
        ks[k] = clCreateKernel(ctx->program[v], var->names[k], &e);
        if (e != CL_SUCCESS) {
            lr_fail(ctx, "clCreateKernel(%s) failed: error %d", var->names[k], (int)e);
            for (int j = 0; j < k; j++) clReleaseKernel(ks[j]);
            free(ks);
            return 1;
        }
    }
    ctx->args[v] = (struct lr_argslot*)calloc((size_t)(var->n ? var->n : 1) * LR_MAX_ARGS, sizeof(struct lr_argslot));
    if (!ctx->args[v]) {
        lr_fail(ctx, "out of host memory");
        for (int j = 0; j < var->n; j++) clReleaseKernel(ks[j]);
        free(ks);
        return 1;
    }
    ctx->kernels[v] = ks;
    ctx->nkernels[v] = var->n;
    return 0;
}

/* A new context, in the list of live ones, broken until its device context is set. */
static struct lr_ctx* lr_ctx_alloc(const struct lr_variant* variants, int nvariants) {
    struct lr_ctx* ctx = (struct lr_ctx*)calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    ctx->magic = LR_CTX_MAGIC;
    ctx->broken = 1;
    ctx->used = -1;
    ctx->variants = variants;
    ctx->nvariants = nvariants < LR_MAX_VARIANTS ? nvariants : LR_MAX_VARIANTS;
    pthread_mutex_lock(&lr_contexts_lock);
    ctx->next_ctx = lr_contexts;
    lr_contexts = ctx;
    pthread_mutex_unlock(&lr_contexts_lock);
    return ctx;
}

/* Opens the device and builds the first variant's kernels; on failure the context is kept,
 * broken, with its message, so that the caller can read why. */
static struct lr_ctx* lr_ctx_new(const char* wanted, const struct lr_variant* variants, int nvariants) {
    struct lr_ctx* ctx = lr_ctx_alloc(variants, nvariants);
    if (!ctx) return NULL;
    cl_device_id device = NULL;
    if (lr_select(ctx, wanted, &device)) return ctx;
    struct lr_dev* dev = (struct lr_dev*)calloc(1, sizeof *dev);
    if (!dev) { lr_fail(ctx, "out of host memory"); return ctx; }
    dev->magic = LR_DEV_MAGIC;
    pthread_mutex_init(&dev->lock, NULL);
    dev->refs = 1;
    dev->device = device;
    ctx->dev = dev;
    cl_int e = CL_SUCCESS;
    dev->context = clCreateContext(NULL, 1, &dev->device, NULL, NULL, &e);
    if (e != CL_SUCCESS) { lr_fail(ctx, "clCreateContext failed: error %d", (int)e); return ctx; }
    dev->queue = clCreateCommandQueue(dev->context, dev->device, 0, &e);
    if (e != CL_SUCCESS) { lr_fail(ctx, "clCreateCommandQueue failed: error %d", (int)e); return ctx; }
    if (lr_build(ctx, 0)) return ctx;
    ctx->broken = 0;
    return ctx;
}

/* A context of this library on the device context of `other_`, a live context of any library
 * of this runtime version (this one's, or another program's). */
static struct lr_ctx* lr_ctx_share(const void* other_, const struct lr_variant* variants, int nvariants) {
    struct lr_ctx* ctx = lr_ctx_alloc(variants, nvariants);
    if (!ctx) return NULL;
    const struct lr_ctx* other = (const struct lr_ctx*)other_;
    if (!other) { lr_fail(ctx, "the context to share is NULL"); return ctx; }
    if (other->magic != LR_CTX_MAGIC || !other->dev || other->dev->magic != LR_DEV_MAGIC) {
        lr_fail(ctx, "the context to share is not a live context of a library of this version of `lift build`");
        return ctx;
    }
    if (other->broken) {
        lr_fail(ctx, "the context to share is not usable: %s", other->error);
        return ctx;
    }
    struct lr_dev* dev = other->dev;
    pthread_mutex_lock(&dev->lock);
    dev->refs++;
    ctx->dev = dev;
    int failed = lr_build(ctx, 0);
    pthread_mutex_unlock(&dev->lock);
    if (!failed) ctx->broken = 0;
    return ctx;
}

/* Frees a device context whose last context went (its arrays are all freed). */
static void lr_dev_free(struct lr_dev* dev) {
    for (int i = 0; i < dev->npool; i++) clReleaseMemObject(dev->pool[i]);
    if (dev->queue) clReleaseCommandQueue(dev->queue);
    if (dev->context) clReleaseContext(dev->context);
    pthread_mutex_destroy(&dev->lock);
    dev->magic = 0;
    free(dev);
}

static int lr_ctx_free(struct lr_ctx* ctx) {
    if (!ctx) return 0;
    if (!lr_live(ctx)) return 1;
    struct lr_dev* dev = ctx->dev;
    int last = 0;
    if (dev) {
        pthread_mutex_lock(&dev->lock);
        /* The arrays belong to the device context: only its last context must wait for them. */
        if (dev->refs == 1 && dev->arrays > 0) {
            lr_fail(ctx, "the context still has %lld arrays: free them first", (long long)dev->arrays);
            pthread_mutex_unlock(&dev->lock);
            return 1;
        }
        dev->refs--;
        last = dev->refs == 0;
        /* The kernels go while the lock is held: another context may be enqueuing on the queue. */
        if (ctx->flag) clReleaseMemObject(ctx->flag);
        for (int v = 0; v < LR_MAX_VARIANTS; v++) {
            for (int k = 0; k < ctx->nkernels[v]; k++) clReleaseKernel(ctx->kernels[v][k]);
            if (ctx->program[v]) clReleaseProgram(ctx->program[v]);
        }
        pthread_mutex_unlock(&dev->lock);
    }
    pthread_mutex_lock(&lr_contexts_lock);
    struct lr_ctx** at = &lr_contexts;
    while (*at && *at != ctx) at = &(*at)->next_ctx;
    if (*at) *at = ctx->next_ctx;
    pthread_mutex_unlock(&lr_contexts_lock);
    for (int v = 0; v < LR_MAX_VARIANTS; v++) {
        free(ctx->kernels[v]);
        free(ctx->args[v]);
    }
    if (last) lr_dev_free(dev);
    ctx->magic = 0;
    free(ctx);
    return 0;
}

/* The lock of a usable context (its device context's); nonzero (and the lock not held) when it
 * is broken or freed. */
static int lr_enter(struct lr_ctx* ctx) {
    if (!lr_live(ctx)) return 1;
    if (ctx->broken) return 1;
    pthread_mutex_lock(&ctx->dev->lock);
    ctx->error[0] = 0;
    return 0;
}

static int lr_leave(struct lr_ctx* ctx, int rc) {
    pthread_mutex_unlock(&ctx->dev->lock);
    return rc;
}

/* A device buffer, a pooled one of the same size if there is one; OpenCL refuses zero-sized
 * ones, so an empty array takes one byte. */
static cl_mem lr_alloc(struct lr_ctx* ctx, size_t bytes, const char* what) {
    struct lr_dev* dev = ctx->dev;
    for (int i = dev->npool - 1; i >= 0; i--)
        if (dev->pool_bytes[i] == bytes) {
            cl_mem m = dev->pool[i];
            dev->pooled -= bytes;
            dev->npool--;
            dev->pool[i] = dev->pool[dev->npool];
            dev->pool_bytes[i] = dev->pool_bytes[dev->npool];
            return m;
        }
    cl_int e = CL_SUCCESS;
    cl_mem m = clCreateBuffer(dev->context, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &e);
    if (e != CL_SUCCESS) {
        lr_fail(ctx, "cannot allocate %zu bytes on the device for %s: error %d", bytes, what, (int)e);
        return NULL;
    }
    return m;
}

/* Gives a buffer back: to the pool while it has room, else to OpenCL. Work enqueued on it still
 * runs first, as the queue is in order. */
static void lr_release(struct lr_dev* dev, cl_mem m, size_t bytes) {
    if (!m) return;
    if (dev->npool < LR_POOL && dev->pooled + bytes <= LR_POOL_BYTES) {
        dev->pool[dev->npool] = m;
        dev->pool_bytes[dev->npool] = bytes;
        dev->npool++;
        dev->pooled += bytes;
        return;
    }
    clReleaseMemObject(m);
}

/* A device buffer of zeros (the scratch of a one-pass reduction: its counter and partial sums),
 * written rather than filled, which Oclgrind would take as uninitialized. */
static inline cl_mem lr_alloc_zeroed(struct lr_ctx* ctx, size_t bytes, const char* what) {
    cl_mem m = lr_alloc(ctx, bytes, what);
    if (!m || bytes == 0) return m;
    void* zeros = calloc(1, bytes);
    cl_int e = zeros ? clEnqueueWriteBuffer(ctx->dev->queue, m, CL_TRUE, 0, bytes, zeros, 0, NULL, NULL) : -6;
    free(zeros);
    ctx->dev->moved += (int64_t)bytes;
    if (e != CL_SUCCESS) {
        lr_fail(ctx, "clearing %s (%zu bytes) failed: error %d", what, bytes, (int)e);
        lr_release(ctx->dev, m, bytes);
        return NULL;
    }
    return m;
}

/* A device array of `shape` whose contents are not set (a result before its kernels run). */
static struct lr_array* lr_array_alloc(struct lr_ctx* ctx, int kind, int rank, const int64_t* shape, size_t elem_bytes) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0) {
            lr_fail(ctx, "dimension %d of the new array is negative (%lld)", i, (long long)shape[i]);
            return NULL;
        }
        n *= (size_t)shape[i];
    }
    struct lr_array* a = (struct lr_array*)calloc(1, sizeof *a);
    if (!a) { lr_fail(ctx, "out of host memory"); return NULL; }
    struct lr_dev* dev = ctx->dev;
    a->magic = LR_ARRAY_MAGIC;
    a->dev = dev;
    a->kind = kind;
    a->rank = rank;
    for (int i = 0; i < rank; i++) a->shape[i] = shape[i];
    a->bytes = n * elem_bytes;
    a->mem = lr_alloc(ctx, a->bytes, "an array");
    if (!a->mem) { free(a); return NULL; }
    dev->arrays++;
    a->next = dev->live;
    if (dev->live) dev->live->prev = a;
    dev->live = a;
    return a;
}

static void lr_array_free(struct lr_array* a) {
    struct lr_dev* dev = a->dev;
    lr_release(dev, a->mem, a->bytes);
    dev->arrays--;
    if (a->prev) a->prev->next = a->next;
    else dev->live = a->next;
    if (a->next) a->next->prev = a->prev;
    a->magic = 0;
    free(a);
}

static struct lr_array* lr_array_new(struct lr_ctx* ctx, int kind, const void* data, int rank, const int64_t* shape,
                                     size_t elem_bytes) {
    struct lr_array* a = lr_array_alloc(ctx, kind, rank, shape, elem_bytes);
    if (!a) return NULL;
    if (a->bytes > 0 && !data) {
        lr_fail(ctx, "the new array's data is NULL");
        lr_array_free(a);
        return NULL;
    }
    if (a->bytes > 0) {
        cl_int e = clEnqueueWriteBuffer(ctx->dev->queue, a->mem, CL_TRUE, 0, a->bytes, data, 0, NULL, NULL);
        ctx->dev->moved += (int64_t)a->bytes;
        if (e != CL_SUCCESS) {
            lr_fail(ctx, "copying the new array to the device failed: error %d", (int)e);
            lr_array_free(a);
            return NULL;
        }
    }
    return a;
}

static int lr_array_values(struct lr_ctx* ctx, const struct lr_array* a, void* out) {
    if (a->bytes == 0) return 0;
    if (!out) { lr_fail(ctx, "the destination of the values is NULL"); return 1; }
    cl_int e = clEnqueueReadBuffer(ctx->dev->queue, a->mem, CL_TRUE, 0, a->bytes, out, 0, NULL, NULL);
    ctx->dev->moved += (int64_t)a->bytes;
    if (e != CL_SUCCESS) { lr_fail(ctx, "reading the array from the device failed: error %d", (int)e); return 1; }
    return 0;
}

/* Checks that `a` is a live array of this context's device context (made by this library or by
 * another sharing it) and of the handle type the parameter takes (any type for `kind` -1). */
static int lr_check_array(struct lr_ctx* ctx, const struct lr_array* a, int kind, const char* param) {
    if (!a) { lr_fail(ctx, "argument `%s` is NULL", param); return 1; }
    /* Found among the device context's arrays before anything of it is read: it may have been
     * freed. */
    const struct lr_array* l = ctx->dev->live;
    while (l && l != a) l = l->next;
    if (!l) {
        lr_fail(ctx, "argument `%s` is not a live array of this context (freed, or another context's)", param);
        return 1;
    }
    if (kind >= 0 && a->kind != kind) { lr_fail(ctx, "argument `%s` is an array of another element type or rank", param); return 1; }
    return 0;
}

static int lr_arg(struct lr_ctx* ctx, int v, int k, cl_uint i, size_t bytes, const void* value) {
    struct lr_argslot* slot = i < LR_MAX_ARGS ? &ctx->args[v][k * LR_MAX_ARGS + (int)i] : NULL;
    if (slot && (value ? bytes > sizeof slot->value : 0)) slot = NULL;
    if (slot && slot->set && slot->size == bytes && slot->local == !value &&
        (!value || memcmp(slot->value, value, bytes) == 0))
        return 0;
    if (slot) slot->set = 0;
    cl_int e = clSetKernelArg(ctx->kernels[v][k], i, bytes, value);
    if (e != CL_SUCCESS) { lr_fail(ctx, "setting argument %u of kernel %d failed: error %d", i, k, (int)e); return 1; }
    if (slot) {
        slot->set = 1;
        slot->local = !value;
        slot->size = bytes;
        if (value) memcpy(slot->value, value, bytes);
    }
    return 0;
}

static int lr_launch(struct lr_ctx* ctx, int v, int k, cl_uint dims, const size_t* global, const size_t* local) {
    for (cl_uint d = 0; d < dims; d++)
        if (global[d] == 0) return 0; /* no work */
    /* OpenCL 1.2 needs whole work-groups; the plan's global sizes are rounded up to them, so this
     * only fails on a bug, which must be an error rather than a wrong result. */
    for (cl_uint d = 0; local && d < dims; d++)
        if (global[d] % local[d] != 0) {
            lr_fail(ctx, "internal: kernel %d has %zu work-items in dimension %u, not a multiple of %zu", k, global[d],
                    (unsigned)d, local[d]);
            return 1;
        }
    cl_int e = clEnqueueNDRangeKernel(ctx->dev->queue, ctx->kernels[v][k], dims, NULL, global, local, 0, NULL, NULL);
    if (e != CL_SUCCESS) { lr_fail(ctx, "launching kernel %d failed: error %d", k, (int)e); return 1; }
    return 0;
}

/* Integer helpers for the generic variant's lengths (the plan's `min`, `max` and `pow`). */
static inline int64_t lr_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t lr_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t lr_pow(int64_t a, int64_t b) {
    int64_t r = 1;
    while (b-- > 0) r *= a;
    return r;
}

/* The element types by name, for the bindings' untyped entry points (`<prog>_array_new`). */
struct lr_kind {
    const char* elem;
    int rank;
    size_t elem_bytes;
    /* LR_KIND of it. */
    int kind;
};

static int lr_kind_of(struct lr_ctx* ctx, const struct lr_kind* kinds, int nkinds, const char* elem, int rank) {
    for (int k = 0; k < nkinds; k++)
        if (elem && strcmp(kinds[k].elem, elem) == 0 && kinds[k].rank == rank) return k;
    lr_fail(ctx, "this library has no arrays of %s of rank %d (see `<prog>_signature`)", elem ? elem : "(NULL)", rank);
    return -1;
}

/* Before a run whose kernels have checks: the context's error flag, cleared (not waited for: the
 * queue is in order, and the zero it copies is static). */
static const int32_t lr_zero = 0;
static inline int lr_flag_clear(struct lr_ctx* ctx) {
    if (!ctx->flag) ctx->flag = lr_alloc(ctx, 4, "the error flag");
    if (!ctx->flag) return 1;
    ctx->dev->moved += 4;
    if (clEnqueueWriteBuffer(ctx->dev->queue, ctx->flag, 0, 0, 4, &lr_zero, 0, NULL, NULL) != CL_SUCCESS) {
        lr_fail(ctx, "clearing the error flag failed");
        return 1;
    }
    return 0;
}

/* After the launches: waits for them (reading the flag, where there are checks), so that a run
 * returns with its result computed and any failure reported. */
static int lr_wait(struct lr_ctx* ctx, int checks, int32_t* flag) {
    *flag = 0;
    if (checks) ctx->dev->moved += 4;
    cl_int e = checks ? clEnqueueReadBuffer(ctx->dev->queue, ctx->flag, CL_TRUE, 0, 4, flag, 0, NULL, NULL)
                      : clFinish(ctx->dev->queue);
    if (e != CL_SUCCESS) {
        lr_fail(ctx, "running the kernels failed: error %d", (int)e);
        return 1;
    }
    return 0;
}

/* --- host programs (host loops and `if`s): values moved on the device, conditions read --- */

/* Copies `bytes` between two device buffers, on the device. */
static inline int lr_copy(struct lr_ctx* ctx, cl_mem from, cl_mem to, size_t bytes) {
    if (bytes == 0 || from == to) return 0;
    if (!from || !to) {
        lr_fail(ctx, "internal: a value of the host program used before it is computed");
        return 1;
    }
    cl_int e = clEnqueueCopyBuffer(ctx->dev->queue, from, to, 0, 0, bytes, 0, NULL, NULL);
    if (e != CL_SUCCESS) { lr_fail(ctx, "copying on the device failed: error %d", (int)e); return 1; }
    return 0;
}

/* Reads the boolean of an `iterate-until`'s condition or a host `if` (an int on the device). */
static inline int lr_read_int(struct lr_ctx* ctx, cl_mem m, int32_t* v) {
    *v = 0;
    if (!m) {
        lr_fail(ctx, "internal: a condition of the host program read before it is computed");
        return 1;
    }
    cl_int e = clEnqueueReadBuffer(ctx->dev->queue, m, CL_TRUE, 0, 4, v, 0, NULL, NULL);
    ctx->dev->moved += 4;
    if (e != CL_SUCCESS) { lr_fail(ctx, "reading a condition from the device failed: error %d", (int)e); return 1; }
    return 0;
}

/* Zeroes a buffer (a one-pass reduction's scratch, before each launch that uses it). */
static inline int lr_zero_fill(struct lr_ctx* ctx, cl_mem m, size_t bytes) {
    if (bytes == 0) return 0;
    void* zeros = calloc(1, bytes);
    cl_int e = zeros ? clEnqueueWriteBuffer(ctx->dev->queue, m, CL_TRUE, 0, bytes, zeros, 0, NULL, NULL) : -6;
    free(zeros);
    ctx->dev->moved += (int64_t)bytes;
    if (e != CL_SUCCESS) { lr_fail(ctx, "clearing a scratch buffer failed: error %d", (int)e); return 1; }
    return 0;
}
