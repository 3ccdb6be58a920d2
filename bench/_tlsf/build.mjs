// Builds bench/_tlsf/tlsf.wasm from tlsf.ts with the AssemblyScript compiler (a devDependency):
//   node bench/_tlsf/build.mjs
// The .wasm is checked in; bench/alloc.ts rebuilds it only when it is missing.
import asc from 'assemblyscript/asc';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { error, stderr } = await asc.main([
  path.join(here, 'tlsf.ts'),
  '--outFile',
  path.join(here, 'tlsf.wasm'),
  '--runtime',
  'minimal',
  '-O3',
  '--noAssert',
  '--maximumMemory',
  '65536',
]);
if (error) {
  console.error(stderr.toString());
  process.exit(1);
}
console.log(`built ${path.join(here, 'tlsf.wasm')}`);
