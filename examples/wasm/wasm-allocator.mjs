// Wraps an allocator compiled to WebAssembly (examples/wasm/build.sh) as the createAllocator of
// an allocator module: the harness calls it in-process, one JavaScript-to-wasm call per alloc
// or free, with no process, no protocol and no copying.
//
// The .wasm module exports create(capacity), alloc(size, align) and free(offset) on doubles
// (see first_fit.cpp), _initialize (clang's -mexec-model=reactor) and its memory; it imports
// nothing, so plain WebAssembly.Instance runs it (no WASI). Compiled once when the module is
// first imported; each worker thread of a campaign imports it, and so has its own instance.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** createAllocator(capacityBytes) over the .wasm file at `wasmUrl` (a file: URL). */
export function wasmAllocator(wasmUrl) {
  const file = fileURLToPath(wasmUrl);
  const compiled = new WebAssembly.Module(readFileSync(file));
  /** The instance's exports; null before the first allocator and after a trap. */
  let wasm = null;
  /** Bumped by every createAllocator: the .wasm holds one allocator at a time. */
  let generation = 0;

  function instantiate() {
    const { exports } = new WebAssembly.Instance(compiled, {});
    exports._initialize();
    return exports;
  }

  return function createAllocator(capacityBytes) {
    // A trap (unreachable from abort(), an out-of-bounds access) can leave the instance's memory
    // in any state: the allocator after it starts from a fresh instance, so a replayed run sees
    // exactly what the first one saw.
    wasm ??= instantiate();
    const { alloc, free } = wasm;
    const mine = ++generation;
    if (wasm.create(capacityBytes) !== 0)
      throw new Error(`${file}: create(${capacityBytes}) refused the capacity`);

    /** Rethrows `error` (a trap) after dropping the instance it happened in. */
    function trapped(error) {
      wasm = null;
      generation++;
      throw error;
    }
    function live(call) {
      if (mine !== generation)
        throw new Error(
          `${call}: this allocator was replaced by a later createAllocator (${file} holds one at a time)`,
        );
    }
    return {
      alloc(sizeBytes, alignBytes) {
        live('alloc');
        let offset;
        try {
          offset = alloc(sizeBytes, alignBytes);
        } catch (error) {
          trapped(error);
        }
        return offset < 0 ? null : offset;
      },
      free(offsetBytes) {
        live('free');
        let status;
        try {
          status = free(offsetBytes);
        } catch (error) {
          trapped(error);
        }
        if (status !== 0) throw new Error(`free(${offsetBytes}): not a live allocation`);
      },
    };
  };
}
