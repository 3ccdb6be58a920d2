// Worker-thread entry: registers the TypeScript loader, then runs the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./fuzz-worker.ts');
