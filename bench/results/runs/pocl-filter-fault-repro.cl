// PoCL 3.1 (Debian 3.1-3+deb12u1, LLVM 15.0.6) fault found on 2026-11-24 (issue 12; commit 2653d3a).
// One work-group of 256 work-items; len[0] must be 4096 (two runs of 32 x 8 packed ones, summed
// by fields). Built with -D ATOMIC, PoCL returns 0: the global atomic of work-item 31 before
// the third barrier makes the roff stores of the same region invisible after it, when the
// barriers sit in a loop whose bound is read from local memory and work-item 0 later writes
// global memory at an address depending on t. Without -D ATOMIC, with -cl-opt-disable, with a
// counted loop, or under Oclgrind it returns 4096. Run: cc -o clrun \
// pocl-filter-fault-repro.c -l:libOpenCL.so.1; ./clrun THIS.cl 4000 -DATOMIC
__attribute__((reqd_work_group_size(256, 1, 1)))
kernel void KERNEL_0(const global float* xs, global float* out, global int* len, global int* st, int N) {
  local ulong scan[576];
  local ulong runsum[64];
  local int roff[18];
  local int tk[2];
  int l = get_local_id(0);
  if (l == 0) tk[0] = atomic_inc(st);
  barrier(CLK_LOCAL_MEM_FENCE);
  int tn = tk[0];
  for (int t = tn; t < 1; t = tn) {
    for (int b = 0; b < 2; b += 1) scan[b * 288 + l + l / 8] = 0x0101010101010101UL;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 32) {
      for (int b = 0; b < 2; b += 1) {
        ulong a = 0;
        for (int j = 0; j < 8; j += 1) a += scan[b * 288 + l * 9 + j];
        runsum[b * 32 + l] = a;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 32) {
      for (int b = 0; b < 2; b += 1) {
        ulong a = 0;
        for (int j = 0; j < 32; j += 1) a += j < l ? runsum[b * 32 + j] : 0;
        if (l == 31) {
          ulong z = runsum[b * 32 + l];
          int run = 0;
          for (int r = 0; r < 8; r += 1) {
            roff[b * 9 + r] = run;
            run += (int)((a >> (8 * r)) & 255) + (int)((z >> (8 * r)) & 255);
          }
          roff[b * 9 + 8] = run;
        }
      }
    }
#ifdef ATOMIC
    if (l == 31) atomic_xchg(st + 2, 1);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    int c = roff[8] + roff[17];
    if (l == 0) { atomic_xchg(st + 1 + t, c + 1); if (t == 0) len[0] = c; }
    if (l == 0) tk[1] = atomic_inc(st);
    barrier(CLK_LOCAL_MEM_FENCE);
    tn = tk[1];
  }
}
