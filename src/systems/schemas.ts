/**
 * The JSON Schema files of the built-in systems' files (regression files, campaign summaries),
 * as `npm run schemas` writes them to schema/.
 */
import { CampaignSummarySchema } from '../harness/campaign';
import { regressionJsonSchema } from '../harness/regression';
import { BUILTIN_SYSTEMS } from './index';
import { userAllocatorSchemas } from './user-allocator';

function text(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** File name -> contents. */
export function schemaFiles(): Record<string, string> {
  return {
    'regression.schema.json': text(regressionJsonSchema([...BUILTIN_SYSTEMS, userAllocatorSchemas])),
    'campaign-summary.schema.json': text({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://gpu-memory-verifier.invalid/schema/campaign-summary.schema.json',
      ...CampaignSummarySchema,
    }),
  };
}
