/* The floor of host overhead: a minimal hand-written OpenCL host program that launches a program's
 * kernels (the text `lift compile --emit cl` gives, which is the library's) as a spec from
 * spec.py describes them. Everything is set up once (context, queue, program, kernels, buffers,
 * arguments); a call is the kernels enqueued and clFinish, as a careful C programmer would write
 * it, without checks.
 *
 *   handwritten SPEC DEVICE CALLS    prints `per call us: X` (the median of five timed loops)
 *
 * DEVICE is `P:D` (platform and device index, as `lift devices` prints them) or a part of the
 * device's name, as the library takes it. Built with
 * `cc -O2 handwritten.c -l:libOpenCL.so.1`: the few OpenCL declarations it needs are below, so no
 * OpenCL headers are needed. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_bitfield;
typedef struct _cl_platform_id* cl_platform_id;
typedef struct _cl_device_id* cl_device_id;
typedef struct _cl_context* cl_context;
typedef struct _cl_command_queue* cl_command_queue;
typedef struct _cl_mem* cl_mem;
typedef struct _cl_program* cl_program;
typedef struct _cl_kernel* cl_kernel;
typedef struct _cl_event* cl_event;
cl_int clGetPlatformIDs(cl_uint, cl_platform_id*, cl_uint*);
cl_int clGetDeviceIDs(cl_platform_id, cl_bitfield, cl_uint, cl_device_id*, cl_uint*);
cl_int clGetDeviceInfo(cl_device_id, cl_uint, size_t, void*, size_t*);
cl_context clCreateContext(const intptr_t*, cl_uint, const cl_device_id*, void*, void*, cl_int*);
cl_command_queue clCreateCommandQueue(cl_context, cl_device_id, cl_bitfield, cl_int*);
cl_program clCreateProgramWithSource(cl_context, cl_uint, const char**, const size_t*, cl_int*);
cl_int clBuildProgram(cl_program, cl_uint, const cl_device_id*, const char*, void*, void*);
cl_kernel clCreateKernel(cl_program, const char*, cl_int*);
cl_int clSetKernelArg(cl_kernel, cl_uint, size_t, const void*);
cl_mem clCreateBuffer(cl_context, cl_bitfield, size_t, void*, cl_int*);
cl_int clEnqueueWriteBuffer(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void*, cl_uint, const cl_event*,
                            cl_event*);
cl_int clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint,
                              const cl_event*, cl_event*);
cl_int clFinish(cl_command_queue);

#define CHECK(what, e)                                              \
    do {                                                            \
        if ((e) != 0) {                                             \
            fprintf(stderr, "%s failed: error %d\n", what, (int)(e)); \
            exit(1);                                                \
        }                                                           \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

struct launch {
    cl_kernel k;
    cl_uint dims;
    size_t global[3], local[3];
    int has_local;
};

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: handwritten SPEC DEVICE CALLS\n");
        return 2;
    }
    int calls = atoi(argv[3]);
    /* The device: `P:D`, or the first whose name contains DEVICE (as the library takes it). */
    unsigned want_p = 0, want_d = 0;
    int by_id = sscanf(argv[2], "%u:%u", &want_p, &want_d) == 2;
    cl_platform_id plats[16];
    cl_uint np = 0;
    CHECK("clGetPlatformIDs", clGetPlatformIDs(16, plats, &np));
    cl_device_id dev = NULL;
    for (cl_uint p = 0; p < np && p < 16 && !dev; p++) {
        cl_device_id devs[64];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], 0xFFFFFFFF, 64, devs, &nd) != 0) continue;
        for (cl_uint d = 0; d < nd && d < 64 && !dev; d++) {
            char n[256] = "";
            clGetDeviceInfo(devs[d], 0x102B /* CL_DEVICE_NAME */, sizeof n - 1, n, NULL);
            if (by_id ? (p == want_p && d == want_d) : strstr(n, argv[2]) != NULL) dev = devs[d];
        }
    }
    if (!dev) CHECK("finding the device", -1);
    char name[256] = "";
    clGetDeviceInfo(dev, 0x102B /* CL_DEVICE_NAME */, sizeof name - 1, name, NULL);
    printf("device: %s\n", name);
    cl_int e = 0;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK("clCreateContext", e);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    CHECK("clCreateCommandQueue", e);

    FILE* spec = fopen(argv[1], "r");
    if (!spec) CHECK("opening the spec", -1);
    char word[256], path[4096];
    cl_program prog = NULL;
    cl_mem bufs[32];
    int nbufs = 0;
    struct launch launches[16];
    int nl = 0;
    cl_uint arg = 0;
    while (fscanf(spec, "%255s", word) == 1) {
        if (!strcmp(word, "source")) {
            if (fscanf(spec, "%4095s", path) != 1) CHECK("spec source", -1);
            FILE* f = fopen(path, "rb");
            if (!f) CHECK("opening the kernels", -1);
            static char text[1 << 20];
            size_t n = fread(text, 1, sizeof text - 1, f);
            fclose(f);
            text[n] = 0;
            const char* src = text;
            prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
            CHECK("clCreateProgramWithSource", e);
            CHECK("clBuildProgram", clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL));
        } else if (!strcmp(word, "buffer")) {
            size_t bytes = 0;
            char kind[8];
            if (fscanf(spec, "%zu %7s", &bytes, kind) != 2) CHECK("spec buffer", -1);
            bufs[nbufs] = clCreateBuffer(ctx, 1 /* CL_MEM_READ_WRITE */, bytes ? bytes : 1, NULL, &e);
            CHECK("clCreateBuffer", e);
            if (!strcmp(kind, "in") && bytes) {
                float* data = (float*)malloc(bytes);
                for (size_t i = 0; i < bytes / sizeof(float); i++) data[i] = (float)(i % 13) * 0.125f;
                CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(q, bufs[nbufs], 1, 0, bytes, data, 0, NULL, NULL));
                free(data);
            }
            nbufs++;
        } else if (!strcmp(word, "kernel")) {
            struct launch* l = &launches[nl++];
            char local[32];
            if (fscanf(spec, "%255s %u", word, &l->dims) != 2) CHECK("spec kernel", -1);
            l->k = clCreateKernel(prog, word, &e);
            CHECK("clCreateKernel", e);
            for (cl_uint d = 0; d < l->dims; d++)
                if (fscanf(spec, "%zu", &l->global[d]) != 1) CHECK("spec global", -1);
            if (fscanf(spec, "%31s", local) != 1) CHECK("spec local", -1);
            l->has_local = strcmp(local, "-") != 0;
            if (l->has_local) {
                l->local[0] = (size_t)atol(local);
                for (cl_uint d = 1; d < l->dims; d++)
                    if (fscanf(spec, "%zu", &l->local[d]) != 1) CHECK("spec local", -1);
            }
            arg = 0;
        } else if (!strcmp(word, "arg")) {
            struct launch* l = &launches[nl - 1];
            char value[64];
            if (fscanf(spec, "%255s", word) != 1) CHECK("spec arg", -1);
            if (!strcmp(word, "flag")) {
                bufs[nbufs] = clCreateBuffer(ctx, 1, 4, NULL, &e);
                CHECK("clCreateBuffer", e);
                int32_t zero = 0;
                CHECK("clEnqueueWriteBuffer", clEnqueueWriteBuffer(q, bufs[nbufs], 1, 0, 4, &zero, 0, NULL, NULL));
                CHECK("clSetKernelArg", clSetKernelArg(l->k, arg++, sizeof(cl_mem), &bufs[nbufs]));
                nbufs++;
                continue;
            }
            if (fscanf(spec, "%63s", value) != 1) CHECK("spec arg value", -1);
            if (!strcmp(word, "buf")) {
                int b = atoi(value);
                CHECK("clSetKernelArg", clSetKernelArg(l->k, arg++, sizeof(cl_mem), &bufs[b]));
            } else if (!strcmp(word, "local")) {
                CHECK("clSetKernelArg", clSetKernelArg(l->k, arg++, (size_t)atol(value), NULL));
            } else if (!strcmp(word, "f32")) {
                float v = (float)atof(value);
                CHECK("clSetKernelArg", clSetKernelArg(l->k, arg++, sizeof v, &v));
            } else if (!strcmp(word, "f64")) {
                double v = atof(value);
                CHECK("clSetKernelArg", clSetKernelArg(l->k, arg++, sizeof v, &v));
            } else if (!strcmp(word, "i64") || !strcmp(word, "u64")) {
                int64_t v = atoll(value);
                CHECK("clSetKernelArg", clSetKernelArg(l->k, arg++, sizeof v, &v));
            } else {
                int32_t v = atoi(value);
                CHECK("clSetKernelArg", clSetKernelArg(l->k, arg++, sizeof v, &v));
            }
        }
    }
    fclose(spec);

    double loops[5];
    for (int rep = -1; rep < 5; rep++) {
        int n = rep < 0 ? calls / 10 + 1 : calls; /* the first loop warms up */
        double t0 = now();
        for (int c = 0; c < n; c++) {
            for (int k = 0; k < nl; k++)
                CHECK("clEnqueueNDRangeKernel",
                      clEnqueueNDRangeKernel(q, launches[k].k, launches[k].dims, NULL, launches[k].global,
                                             launches[k].has_local ? launches[k].local : NULL, 0, NULL, NULL));
            CHECK("clFinish", clFinish(q));
        }
        if (rep >= 0) loops[rep] = (now() - t0) / n;
    }
    qsort(loops, 5, sizeof loops[0], cmp);
    printf("per call us: %.2f\n", loops[2] * 1e6);
    return 0;
}
