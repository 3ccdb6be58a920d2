/** The files a campaign writes: its summary, and paths as shown (relative to the project root). */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { CampaignSummary } from '../harness/campaign.js';
import { writeFileAtomic } from '../harness/files.js';
import { schemaReference, SUMMARY_SCHEMA_FILE } from '../harness/regression.js';

/** A path as written into files and shown: relative to the project root inside it, absolute outside. */
export function rootRelative(root: string, file: string): string {
  const relative = path.relative(root, path.resolve(file));
  return relative.startsWith('..') || path.isAbsolute(relative)
    ? path.resolve(file)
    : relative.split(path.sep).join('/');
}

/** Writes a whole file or nothing (see writeFileAtomic), creating its folder. */
export function writeAtomically(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, text);
}

/** Writes a summary with the `$schema` an editor validates it with (its path from the file). */
export function writeSummary(file: string, summary: CampaignSummary): void {
  const { $schema: _previous, ...rest } = summary;
  writeAtomically(
    file,
    JSON.stringify({ $schema: schemaReference(file, SUMMARY_SCHEMA_FILE), ...rest }, null, 2) +
      '\n',
  );
}
