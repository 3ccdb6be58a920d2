// @ts-nocheck -- AssemblyScript, compiled by asc (bench/_tlsf/build.mjs), not by tsc
// AssemblyScript module exposing the runtime's TLSF heap (heap.alloc / heap.free) as a
// benchmark peer for bench/alloc.ts. Built by bench/_tlsf/build.mjs.
export function alloc(sizeBytes: usize): usize {
  return heap.alloc(sizeBytes);
}

export function free(pointer: usize): void {
  heap.free(pointer);
}
