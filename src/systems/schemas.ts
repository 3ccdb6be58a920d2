/**
 * The JSON Schema files of the built-in systems' files (regression files, campaign summaries),
 * as `npm run schemas` writes them to schema/.
 */
import { CampaignSummarySchema } from '../harness/campaign.js';
import { regressionJsonSchema } from '../harness/regression.js';
import type { AnySystem } from '../harness/system.js';
import { BUILTIN_SYSTEMS } from './index.js';
import { userAllocatorSchemas } from './user-allocator.js';
import { nativeAllocatorSchemas } from '../native/native-allocator.js';
import { nativeRingUploadSchemas } from '../native/native-ring-upload.js';
import { nativeDeferredFreeSchemas } from '../native/native-deferred-free.js';
import { nativeResidencySchemas } from '../native/native-residency.js';

function text(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** File name -> contents, for the given systems (default: the built-in ones). */
export function schemaFiles(
  systems: readonly AnySystem[] = BUILTIN_SYSTEMS,
): Record<string, string> {
  return {
    'regression.schema.json': text(
      regressionJsonSchema([
        ...systems,
        userAllocatorSchemas,
        nativeAllocatorSchemas,
        nativeRingUploadSchemas,
        nativeDeferredFreeSchemas,
        nativeResidencySchemas,
      ]),
    ),
    'campaign-summary.schema.json': text({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://gpu-memory-verifier.invalid/schema/campaign-summary.schema.json',
      ...CampaignSummarySchema,
    }),
  };
}
