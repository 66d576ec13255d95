// Whether cp.async (global to local, 16 bytes) works through NVIDIA OpenCL's inline PTX with a
// local pointer cast to its 32-bit shared address: out4[b*256 + i] must be in4[b*256 + (i+1)%256].
kernel void probe(const global float* restrict a, global float* restrict out) {
  local float4 s[256];
  int i = get_local_id(0);
  int b = get_group_id(0);
  const global float4* src = (const global float4*)a + b * 256 + i;
#ifdef PLAIN
  s[i] = *src;
#else
  uint dst = (uint)(size_t)(&s[i]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"((ulong)src) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  ((global float4*)out)[b * 256 + i] = s[(i + 1) % 256];
}
