#!/usr/bin/env node
/**
 * Per-file score and survivors from a Stryker JSON report (default reports/mutation/mutation.json):
 *   node tools/mutation/summary.mjs [report.json ...]
 * Several reports (e.g. one per directory, measured in separate runs) add up; a file found in
 * more than one report counts from the last one given. The `as measured` column says whether
 * the report's copy of the file is the working tree's (a score holds for the code it measured).
 * Score = (killed + timeout) / (all mutants except ignored and compile errors): no-coverage
 * mutants count against the score, as in Stryker's "% Mutation score" (total).
 */
import { existsSync, readFileSync } from 'node:fs';

const files = process.argv.slice(2);
if (files.length === 0) files.push('reports/mutation/mutation.json');
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const latest = new Map();
for (const file of files) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  for (const [name, result] of Object.entries(report.files)) latest.set(name, result);
}
const rows = [];
const survivors = [];
{
  for (const [name, result] of latest) {
    const source = result.source.split('\n');
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
        const original = start.line === end.line ? line.slice(start.column - 1, end.column - 1) : `${line.slice(start.column - 1)}…`;
        survivors.push(`${name}:${start.line}:${start.column} ${mutant.status} ${mutant.mutatorName}: ${original.trim().slice(0, 90)} -> ${(mutant.replacement ?? '').replace(/\s+/g, ' ').slice(0, 90)}`);
      }
    }
    const total = detected + undetected;
    const current = existsSync(name) && readFileSync(name, 'utf8') === result.source ? 'yes' : 'no (changed since)';
    rows.push({ name, total, detected, undetected, counts, current, score: total === 0 ? 100 : (100 * detected) / total });
  }
}
rows.sort((a, b) => a.name.localeCompare(b.name));
let allTotal = 0;
let allDetected = 0;
console.log('| file | mutants | killed+timeout | survived+no-coverage | score | as measured |');
console.log('|---|---:|---:|---:|---:|---|');
for (const row of rows) {
  allTotal += row.total;
  allDetected += row.detected;
  console.log(`| ${row.name} | ${row.total} | ${row.detected} | ${row.undetected} | ${row.score.toFixed(1)} % | ${row.current} |`);
}
console.log(`| all | ${allTotal} | ${allDetected} | ${allTotal - allDetected} | ${allTotal === 0 ? '-' : ((100 * allDetected) / allTotal).toFixed(1)} % | ${rows.every((row) => row.current === 'yes') ? 'yes' : 'no'} |`);
console.log('\nstatus counts:', JSON.stringify(Object.fromEntries(rows.map((r) => [r.name, r.counts]))));
console.log(`\nundetected (${survivors.length}):`);
for (const line of survivors) console.log(`  ${line}`);
