// Minimal OpenCL host: runs KERNEL_0(xs, out, len, status, N) of a filter kernel file.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef int32_t cl_int; typedef uint32_t cl_uint; typedef uint64_t cl_ulong; typedef void* P;
typedef cl_ulong cl_bitfield;
extern cl_int clGetPlatformIDs(cl_uint, P*, cl_uint*);
extern cl_int clGetDeviceIDs(P, cl_bitfield, cl_uint, P*, cl_uint*);
extern P clCreateContext(const intptr_t*, cl_uint, const P*, P, P, cl_int*);
extern P clCreateCommandQueue(P, P, cl_bitfield, cl_int*);
extern P clCreateProgramWithSource(P, cl_uint, const char**, const size_t*, cl_int*);
extern cl_int clBuildProgram(P, cl_uint, const P*, const char*, P, P);
extern cl_int clGetProgramBuildInfo(P, P, cl_uint, size_t, void*, size_t*);
extern P clCreateKernel(P, const char*, cl_int*);
extern P clCreateBuffer(P, cl_bitfield, size_t, void*, cl_int*);
extern cl_int clSetKernelArg(P, cl_uint, size_t, const void*);
extern cl_int clEnqueueNDRangeKernel(P, P, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint, const P*, P*);
extern cl_int clEnqueueReadBuffer(P, P, cl_uint, size_t, size_t, void*, cl_uint, const P*, P*);
extern cl_int clFinish(P);
int main(int argc, char** argv) {
  const char* opts = argc > 3 ? argv[3] : "";
  int N = atoi(argv[2]);
  FILE* f = fopen(argv[1], "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
  char* src = malloc(n + 1); fread(src, 1, n, f); src[n] = 0;
  P plat, dev; cl_int e;
  clGetPlatformIDs(1, &plat, NULL); clGetDeviceIDs(plat, 0xFFFFFFFF, 1, &dev, NULL);
  P ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  P q = clCreateCommandQueue(ctx, dev, 0, &e);
  P prog = clCreateProgramWithSource(ctx, 1, (const char**)&src, NULL, &e);
  e = clBuildProgram(prog, 1, &dev, opts, NULL, NULL);
  if (e) { char log[65536]; clGetProgramBuildInfo(prog, dev, 0x1183, sizeof log, log, NULL); printf("build %d\n%s\n", e, log); return 1; }
  P k = clCreateKernel(prog, "KERNEL_0", &e);
  float* xs = malloc(4 * (N + 1)); int expect = 0;
  for (int i = 0; i < N; i++) { xs[i] = (i % 3 == 0) ? 0.75f : 0.25f; expect += xs[i] > 0.5f; }
  int tiles = (N + 4095) / 4096; int* st = calloc(2 * tiles + 1, 4);
  P bx = clCreateBuffer(ctx, 1 | 32, 4 * (N + 1), xs, &e);   // READ_WRITE | COPY_HOST_PTR
  P bo = clCreateBuffer(ctx, 1, 4 * (N + 1), NULL, &e);
  int zero = 0; P bl = clCreateBuffer(ctx, 1 | 32, 4, &zero, &e);
  P bs = clCreateBuffer(ctx, 1 | 32, 4 * (2 * tiles + 1), st, &e);
  clSetKernelArg(k, 0, sizeof(P), &bx); clSetKernelArg(k, 1, sizeof(P), &bo);
  clSetKernelArg(k, 2, sizeof(P), &bl); clSetKernelArg(k, 3, sizeof(P), &bs); clSetKernelArg(k, 4, 4, &N);
  size_t g = 256 * (tiles < 1024 ? tiles : 1024), l = 256;
  e = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL);
  int len = -1; clEnqueueReadBuffer(q, bl, 1, 0, 4, &len, 0, NULL, NULL); clFinish(q);
  printf("launch %d: length %d, expected %d\n", e, len, expect);
  return len != expect;
}
