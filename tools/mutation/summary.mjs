#!/usr/bin/env node
/**
 * Per-file score and survivors from Stryker JSON reports (default reports/mutation/mutation.json):
 *   node tools/mutation/summary.mjs [--retest] [report.json ...]
 * Several reports add up. Reports of the same code of a file merge mutant by mutant, a later
 * report's result replacing an earlier one's for the same mutant: a file measured in line ranges
 * (`--mutate src/alloc/first-fit.ts:1-200`, ...), or a re-test of its survivors after new tests.
 * A report of different code of a file replaces what earlier reports said about it. The `as
 * measured` column says whether the measured copy of the file is the working tree's (a score
 * holds for the code it measured).
 * Score = (killed + timeout) / (all mutants except ignored and compile errors): no-coverage
 * mutants count against the score, as in Stryker's "% Mutation score" (total).
 * --retest prints, instead of the table, a `--mutate` argument naming exactly the undetected
 * mutants' source ranges, to re-test only them once tests were added:
 *   node tools/mutation/run.mjs --mutate "$(node tools/mutation/summary.mjs --retest REPORT...)"
 */
import { existsSync, readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const retest = args.includes('--retest');
const files = args.filter((arg) => arg !== '--retest');
if (files.length === 0) files.push('reports/mutation/mutation.json');
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
/** name -> { source, mutants: Map(key -> mutant) } */
const latest = new Map();
const mutantKey = (mutant) => {
  const { start, end } = mutant.location;
  return `${start.line}:${start.column}-${end.line}:${end.column} ${mutant.mutatorName} ${mutant.replacement ?? ''}`;
};
for (const file of files) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    console.error(`summary: cannot read the Stryker report ${file}: ${error.message}`);
    process.exit(2);
  }
  if (report === null || typeof report.files !== 'object') {
    console.error(`summary: ${file} is no Stryker JSON report (no "files" object)`);
    process.exit(2);
  }
  for (const [name, result] of Object.entries(report.files)) {
    const known = latest.get(name);
    const entry =
      known !== undefined && known.source === result.source
        ? known
        : { source: result.source, mutants: new Map() };
    for (const mutant of result.mutants) entry.mutants.set(mutantKey(mutant), mutant);
    latest.set(name, entry);
  }
}
if (retest) {
  // Stryker's ranges: 1-based lines, 0-based columns; the report's columns are 1-based.
  const ranges = [];
  for (const [name, entry] of latest) {
    for (const mutant of entry.mutants.values()) {
      if (!UNDETECTED.has(mutant.status)) continue;
      const { start, end } = mutant.location;
      ranges.push(`${name}:${start.line}:${start.column - 1}-${end.line}:${end.column - 1}`);
    }
  }
  console.log([...new Set(ranges)].join(','));
  process.exit(0);
}
const rows = [];
const survivors = [];
for (const [name, result] of latest) {
  const source = result.source.split('\n');
  result.mutants = [...result.mutants.values()];
  let detected = 0;
  let undetected = 0;
  const counts = {};
  for (const mutant of result.mutants) {
    counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
    if (DETECTED.has(mutant.status)) detected++;
    else if (UNDETECTED.has(mutant.status)) {
      undetected++;
      const { start, end } = mutant.location;
      const line = source[start.line - 1] ?? '';
      const original =
        start.line === end.line
          ? line.slice(start.column - 1, end.column - 1)
          : `${line.slice(start.column - 1)}…`;
      survivors.push(
        `${name}:${start.line}:${start.column} ${mutant.status} ${mutant.mutatorName}: ${original.trim().slice(0, 90)} -> ${(mutant.replacement ?? '').replace(/\s+/g, ' ').slice(0, 90)}`,
      );
    }
  }
  const total = detected + undetected;
  const current =
    existsSync(name) && readFileSync(name, 'utf8') === result.source ? 'yes' : 'no (changed since)';
  rows.push({
    name,
    total,
    detected,
    undetected,
    counts,
    current,
    score: total === 0 ? 100 : (100 * detected) / total,
  });
}
rows.sort((a, b) => a.name.localeCompare(b.name));
let allTotal = 0;
let allDetected = 0;
console.log('| file | mutants | killed+timeout | survived+no-coverage | score | as measured |');
console.log('|---|---:|---:|---:|---:|---|');
for (const row of rows) {
  allTotal += row.total;
  allDetected += row.detected;
  console.log(
    `| ${row.name} | ${row.total} | ${row.detected} | ${row.undetected} | ${row.score.toFixed(1)} % | ${row.current} |`,
  );
}
console.log(
  `| all | ${allTotal} | ${allDetected} | ${allTotal - allDetected} | ${allTotal === 0 ? '-' : ((100 * allDetected) / allTotal).toFixed(1)} % | ${rows.every((row) => row.current === 'yes') ? 'yes' : 'no'} |`,
);
console.log(
  '\nstatus counts:',
  JSON.stringify(Object.fromEntries(rows.map((r) => [r.name, r.counts]))),
);
console.log(`\nundetected (${survivors.length}):`);
for (const line of survivors) console.log(`  ${line}`);
