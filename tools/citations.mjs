#!/usr/bin/env node
/**
 * Spec citation checker. Every citation of a specification in the shipped code and docs must
 * name a file the package ships: `docs/spec/<file>.md#<anchor>`, optionally followed by more
 * anchors of the same file (`docs/spec/residency-library.md#rl-4 to #rl-8, #rl-10`). Markdown
 * files may cite with links (`[rl-4](spec/residency-library.md#rl-4)`), resolved from the file.
 *
 * The checker also recognizes the older citation forms, which name files the package does not
 * ship (`residency-library.md §8 step 5.1`, `spec/allocators.md "Buddy"`, the seed documents
 * `*.zh.txt §5.3` or `sections 4 and 6`, and a bare `§7` after one of them), reports each one
 * with the form it maps to, and with `--fix` rewrites them in place. `--fix` is idempotent.
 *
 * Exit status: 0 when every citation resolves, 1 when one does not, 2 on bad usage.
 */
import { readFileSync, writeFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative, dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEFAULT_ROOTS = [
  'src',
  'models',
  'mutants',
  'properties',
  'bench',
  'examples',
  'docs',
  'tools',
  'README.md',
];
const EXTENSIONS = /\.(ts|mts|cts|js|mjs|cjs|md)$/;
/** Files that talk about the citation forms themselves, not citations. */
const SELF = ['tools/citations.mjs', 'properties/citations.test.ts'];
const SPEC_DIR = 'docs/spec';

// ---- grammar ------------------------------------------------------------------------------------

/** Whitespace that may cross a line break of a `*` or `//` comment. */
const WS = String.raw`(?:[ \t]|\r?\n[ \t]*(?:\*(?!\/)|\/\/)?[ \t]*)+`;
const NUM = String.raw`\d+(?:\.\d+)*`;
/** One § item: `§8`, `§8.4`, `§8 step 5.1`, `§7 steps 2-4`, `§1 constraint ④`, `§4-§8`. */
const SECTION_ITEM = `§${NUM}(?:${WS}steps?${WS}${NUM}(?:-${NUM})?|${WS}constraint${WS}[①②③④])?(?:[-–]§${NUM})?`;
const SECTION_CHAIN = String.raw`${SECTION_ITEM}(?:(?:,|\/|${WS}and)${WS}?${SECTION_ITEM})*`;
/** `sections 3.3, 4.3-4.4, 7 and 9.1` */
const NAMED_ITEM = `${NUM}(?:-${NUM})?`;
const NAMED_CHAIN = `sections?${WS}${NAMED_ITEM}(?:(?:,|${WS}and)${WS}${NAMED_ITEM})*`;
const SEED_NAMES = 'd3d12-memory-allocation|ue5-dx12-residency-set|gpu-resource-lifetime';
const SEED_PREFIX = `(?:(?:the${WS})?[Ss]eeds?(?:'s)?,?${WS})?`;
const LIFETIME_SECTIONS = '环形上传区间|池复用';

const SEED_FILE = {
  'd3d12-memory-allocation': 'mem',
  'ue5-dx12-residency-set': 'rs',
  'gpu-resource-lifetime': 'life',
};
const LIFETIME_ANCHOR = { 环形上传区间: 'life-ring', 池复用: 'life-pool' };
const ALLOCATOR_TITLES = [
  ['common contract', 'al-common'],
  ['best-fit', 'al-best-fit'],
  ['first-fit', 'al-first-fit'],
  ['buddy', 'al-buddy'],
  ['ring upload', 'al-ring'],
  ['fence-delayed', 'al-fence'],
  ['transient', 'al-transient'],
];
const CIRCLED = { '①': '1', '②': '2', '③': '3', '④': '4' };

/**
 * The old forms, tried at each position in this order (longest first). Each names the spec the
 * citation belongs to; a § chain after a file sets the context for later bare § chains.
 */
const OLD = new RegExp(
  [
    // 1: spec/allocators.md with an optional "Title" (not a path already under docs/, not a link)
    String.raw`(?<al>)(?<![\w/\[\]#.-]|\]\()(?:spec\/)?allocators\.md(?![#\w\]])(?:,?${WS}"(?<alTitle>[^"]+)")?`,
    // 2: residency-library.md with an optional § chain
    String.raw`(?<rl>)(?<![\w/\[\]#.-]|\]\()(?:spec\/)?residency-library\.md(?![#\w\]])(?:,?${WS}(?<rlChain>${SECTION_CHAIN}))?`,
    // 3: a seed document, with a § chain, "sections ...", a named section, or nothing
    String.raw`${SEED_PREFIX}\x60?(?<seed>${SEED_NAMES})(?:\.zh\.txt)?\x60?(?:,?${WS}\(?(?<seedChain>${SECTION_CHAIN})|,?${WS}\(?(?<seedNamed>${NAMED_CHAIN})|,?${WS}(?<seedLife>${LIFETIME_SECTIONS}))?`,
    // 4: "seed §3.4" without a file: the allocator survey, the only seed numbered with §
    `(?:the${WS})?[Ss]eed(?:'s)?,?${WS}(?<seedless>${SECTION_CHAIN})`,
    // 5: a bare § chain, resolved against the last § chain's spec in the same file
    `(?<bare>${SECTION_CHAIN})`,
  ].join('|'),
  'g',
);

/** New-form citations in any file: `docs/spec/x.md#a` plus chained `#b`. */
const NEW = new RegExp(
  String.raw`docs\/spec\/([\w.-]+\.md)(?:#([\w-]+)((?:(?:,|${WS}to|${WS}and)${WS}#[\w-]+)*))?`,
  'g',
);
/** Markdown links (resolved relative to the file). */
const MD_LINK = /\[[^\]\n]*\]\(([^)\s#]*\.md)?(#[\w-]+)?\)/g;

// ---- mapping old forms to anchors ----------------------------------------------------------------

function dashed(num) {
  return num.replace(/\./g, '-');
}

/** Parses a § chain into a list of [anchor-suffix, joiner] pairs ("to" for ranges). */
function sectionAnchors(chain, prefix) {
  const out = [];
  const items = chain.split(/(?:,|\/|\band\b)(?=[\s\S]*§)/);
  for (const raw of items) {
    const item = raw.replace(new RegExp(WS, 'g'), ' ').trim();
    if (item === '') continue;
    const m =
      /^§(\d+(?:\.\d+)*)(?:\s+steps?\s+(\d+(?:\.\d+)*)(?:-(\d+(?:\.\d+)*))?|\s+constraint\s+([①②③④]))?(?:[-–]§(\d+(?:\.\d+)*))?$/.exec(
        item,
      );
    if (!m) return null;
    const [, sec, step, stepTo, circled, secTo] = m;
    const base = `${prefix}-${dashed(sec)}`;
    if (step !== undefined) {
      out.push([`${base}-${dashed(step)}`, ', ']);
      if (stepTo !== undefined) out.push([`${base}-${dashed(stepTo)}`, ' to ']);
    } else if (circled !== undefined) {
      // "§1 constraint ④": the four hard constraints are section 1.2's list.
      out.push([`${base}-2-${CIRCLED[circled]}`, ', ']);
    } else {
      out.push([base, ', ']);
    }
    if (secTo !== undefined) out.push([`${prefix}-${dashed(secTo)}`, ' to ']);
  }
  return out;
}

function namedAnchors(chain, prefix) {
  const body = chain.replace(new RegExp(WS, 'g'), ' ').replace(/^sections?\s+/, '');
  const out = [];
  for (const raw of body.split(/,|\band\b/)) {
    const item = raw.trim();
    if (item === '') continue;
    const m = /^(\d+(?:\.\d+)*)(?:-(\d+(?:\.\d+)*))?$/.exec(item);
    if (!m) return null;
    out.push([`${prefix}-${dashed(m[1])}`, ', ']);
    if (m[2] !== undefined) out.push([`${prefix}-${dashed(m[2])}`, ' to ']);
  }
  return out;
}

/**
 * Maps one old-form match to { file, anchors: [[anchor, joiner]], context } or null when the match
 * is not a citation (a bare § with no spec before it in the file).
 */
function mapOld(m, context) {
  const g = m.groups;
  if (g.al !== undefined) {
    if (g.alTitle === undefined) return { file: 'allocators.md', anchors: [], context };
    const title = g.alTitle.replace(new RegExp(WS, 'g'), ' ').toLowerCase();
    const hit = ALLOCATOR_TITLES.find(([t]) => title.startsWith(t));
    return { file: 'allocators.md', anchors: [[hit ? hit[1] : `?${g.alTitle}`, ', ']], context };
  }
  if (g.rl !== undefined) {
    if (g.rlChain === undefined)
      return { file: 'residency-library.md', anchors: [], context: 'rl' };
    return {
      file: 'residency-library.md',
      anchors: sectionAnchors(g.rlChain, 'rl'),
      context: 'rl',
    };
  }
  if (g.seed !== undefined) {
    const prefix = SEED_FILE[g.seed];
    if (g.seedChain !== undefined) {
      return { file: 'engine.md', anchors: sectionAnchors(g.seedChain, prefix), context: prefix };
    }
    if (g.seedNamed !== undefined)
      return { file: 'engine.md', anchors: namedAnchors(g.seedNamed, prefix), context };
    if (g.seedLife !== undefined)
      return { file: 'engine.md', anchors: [[LIFETIME_ANCHOR[g.seedLife], ', ']], context };
    return { file: 'engine.md', anchors: [[prefix, ', ']], context };
  }
  if (g.seedless !== undefined) {
    return { file: 'engine.md', anchors: sectionAnchors(g.seedless, 'mem'), context: 'mem' };
  }
  if (context === undefined) return { file: undefined, anchors: null, context };
  const file = context === 'rl' ? 'residency-library.md' : 'engine.md';
  return { file, anchors: sectionAnchors(g.bare, context), context };
}

/** The new text of a citation: plain in code, links in Markdown (relative to `fromFile`). */
function render(file, anchors, fromFile) {
  const isMd = fromFile.endsWith('.md');
  const rel = isMd
    ? relative(dirname(fromFile), join(SPEC_DIR, file)).split(sep).join('/')
    : `${SPEC_DIR}/${file}`;
  if (anchors.length === 0) return isMd ? `[${file}](${rel})` : rel;
  if (isMd) return anchors.map(([a, j], i) => `${i === 0 ? '' : j}[${a}](${rel}#${a})`).join('');
  return anchors.map(([a, j], i) => (i === 0 ? `${rel}#${a}` : `${j}#${a}`)).join('');
}

// ---- anchors of the spec files -------------------------------------------------------------------

function githubSlug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map();
export function anchorsOf(path) {
  if (anchorCache.has(path)) return anchorCache.get(path);
  let set = null;
  if (existsSync(path)) {
    set = new Set();
    const text = readFileSync(path, 'utf8');
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) set.add(m[1]);
    const seen = new Map();
    for (const m of text.matchAll(/^#{1,6}\s+(.+)$/gm)) {
      const slug = githubSlug(m[1]);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      set.add(n === 0 ? slug : `${slug}-${n}`);
    }
  }
  anchorCache.set(path, set);
  return set;
}

// ---- scanning ------------------------------------------------------------------------------------

function lineOf(text, index) {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function short(s) {
  const one = s.replace(new RegExp(WS, 'g'), ' ');
  return one.length > 70 ? `${one.slice(0, 67)}...` : one;
}

/**
 * Scans one file's text. Returns { problems, fixed, count } where `fixed` is the text with every
 * mappable old form rewritten.
 */
export function scanText(text, file, root) {
  const problems = [];
  let count = 0;
  const inSpec = file.startsWith(`${SPEC_DIR}/`);
  const resolveSpec = (specFile, anchor, index, shown) => {
    count++;
    const path = join(root, SPEC_DIR, specFile);
    const anchors = anchorsOf(path);
    if (anchors === null) {
      problems.push({
        file,
        line: lineOf(text, index),
        message: `${shown}: ${SPEC_DIR}/${specFile} does not exist`,
      });
    } else if (anchor !== undefined && !anchors.has(anchor)) {
      problems.push({
        file,
        line: lineOf(text, index),
        message: `${shown}: no anchor #${anchor} in ${SPEC_DIR}/${specFile}`,
      });
    }
  };

  // New forms.
  for (const m of text.matchAll(NEW)) {
    const [whole, specFile, first, rest] = m;
    const anchors =
      first === undefined
        ? [undefined]
        : [first, ...[...(rest ?? '').matchAll(/#([\w-]+)/g)].map((r) => r[1])];
    for (const a of anchors) resolveSpec(specFile, a, m.index, short(whole));
  }
  // Markdown links into docs/spec (and links between the spec files).
  if (file.endsWith('.md')) {
    for (const m of text.matchAll(MD_LINK)) {
      const [whole, target, hash] = m;
      const targetPath =
        target === undefined || target === ''
          ? file
          : join(dirname(file), target).split(sep).join('/');
      if (!targetPath.startsWith(`${SPEC_DIR}/`)) continue;
      if (target === undefined && !inSpec) continue;
      resolveSpec(targetPath.slice(SPEC_DIR.length + 1), hash?.slice(1), m.index, short(whole));
    }
  }
  if (inSpec) return { problems, fixed: text, count };

  // Old forms.
  let context;
  let fixed = '';
  let last = 0;
  for (const m of text.matchAll(OLD)) {
    const mapped = mapOld(m, context);
    if (mapped === null) continue;
    count++;
    const line = lineOf(text, m.index);
    if (mapped.anchors === null) {
      problems.push({
        file,
        line,
        message: `'${short(m[0])}': a section with no spec named before it in this file`,
      });
      continue;
    }
    context = mapped.context;
    const bad = mapped.anchors.find(([a]) => a.startsWith('?'));
    const replacement = bad ? null : render(mapped.file, mapped.anchors, file);
    if (replacement !== null) {
      const anchors = anchorsOf(join(root, SPEC_DIR, mapped.file));
      const missing = mapped.anchors
        .map(([a]) => a)
        .filter((a) => anchors === null || !anchors.has(a));
      if (missing.length > 0) {
        problems.push({
          file,
          line,
          message: `'${short(m[0])}': maps to ${SPEC_DIR}/${mapped.file}#${missing.join(', #')}, which does not exist`,
        });
        continue;
      }
    }
    problems.push({
      file,
      line,
      message:
        replacement === null
          ? `'${short(m[0])}': no section of ${SPEC_DIR}/${mapped.file} is titled so`
          : `'${short(m[0])}': names a file the package does not ship; --fix writes ${replacement}`,
      fixable: replacement !== null,
    });
    if (replacement !== null) {
      fixed += text.slice(last, m.index) + replacement;
      last = m.index + m[0].length;
    }
  }
  fixed += text.slice(last);
  return { problems, fixed: fixed === text ? text : reflow(fixed, file.endsWith('.md')), count };
}

const WIDTH = 100;

/**
 * Keeps rewritten comments within WIDTH columns: a banner (`// ---- title ---`) loses dashes; a
 * comment line that names docs/spec/ and runs over pushes its last words onto the next line of
 * the same paragraph (or a new line with the same prefix). Lines without docs/spec/ stay as they
 * are, so a re-run changes nothing.
 */
function reflow(text, isMd) {
  const lines = text.split('\n');
  let carried = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (
      line.length <= WIDTH ||
      (carried !== i && !line.includes(`${SPEC_DIR}/`) && !(isMd && line.includes('spec/')))
    ) {
      continue;
    }
    const banner = /^(\s*\/\/ -+ .*? )(-{3,})$/.exec(line);
    if (banner) {
      lines[i] = banner[1] + '-'.repeat(Math.max(3, WIDTH - banner[1].length));
      continue;
    }
    const m = isMd ? /^()(.*)$/.exec(line) : /^(\s*(?:\*|\/\/)[ \t]?)(.*)$/.exec(line);
    if (!m || line.trimStart().startsWith('/**') || (isMd && /^\s*[|#`]/.test(line))) continue;
    const [, prefix, body] = m;
    const words = body.split(' ');
    let keep = prefix;
    let k = 0;
    while (k < words.length && (k === 0 || (keep + ' ' + words[k]).length <= WIDTH)) {
      keep = k === 0 ? keep + words[k] : `${keep} ${words[k]}`;
      k++;
    }
    if (k === words.length) continue;
    const overflow = words.slice(k).join(' ');
    const indent = /^- /.test(body) ? '  ' : (/^(\s+)/.exec(body)?.[1] ?? '');
    const next = lines[i + 1];
    const nextBody = next?.startsWith(prefix) ? next.slice(prefix.length) : null;
    const continues =
      nextBody !== null &&
      nextBody.trim() !== '' &&
      !/^\s*(?:- |@|\*\/)/.test(nextBody) &&
      !next.includes('*/') &&
      nextBody.startsWith(indent) &&
      !nextBody.startsWith(`${indent} `);
    lines[i] = keep;
    if (continues) lines[i + 1] = `${prefix}${indent}${overflow} ${nextBody.slice(indent.length)}`;
    else lines.splice(i + 1, 0, `${prefix}${indent}${overflow}`);
    carried = i + 1;
  }
  return lines.join('\n');
}

function walk(root, rel, out) {
  const path = join(root, rel);
  if (!existsSync(path)) return;
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.') || name === 'fixtures')
        continue;
      walk(root, rel === '' ? name : `${rel}/${name}`, out);
    }
  } else if (EXTENSIONS.test(rel) && !SELF.includes(rel)) {
    out.push(rel);
  }
}

export function listFiles(root, paths) {
  const out = [];
  for (const p of paths) walk(root, p.replace(/\/+$/, ''), out);
  return out;
}

// ---- command line --------------------------------------------------------------------------------

const HELP = `usage: node tools/citations.mjs [options] [path ...]

Checks that every spec citation in the given files and folders (default: ${DEFAULT_ROOTS.join(' ')})
resolves to an anchor of a file under ${SPEC_DIR}/, and reports the older citation forms that name
files the package does not ship.

options:
  --fix            rewrite the older forms into ${SPEC_DIR}/<file>.md#<anchor> (idempotent)
  --skip PATH      with --fix, leave this file or folder unchanged (repeatable; still checked)
  --root DIR       the repository root (default: the folder above tools/)
  --list           print every citation found, resolved or not
  -h, --help       this text

exit status: 0 all citations resolve, 1 some do not, 2 bad usage`;

function main(argv) {
  let fix = false;
  let list = false;
  let root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const skip = [];
  const paths = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      console.log(HELP);
      return 0;
    } else if (a === '--fix') fix = true;
    else if (a === '--list') list = true;
    else if (a === '--skip' || a === '--root') {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) {
        console.error(`error: ${a} needs a value`);
        return 2;
      }
      if (a === '--skip') skip.push(v.replace(/\/+$/, ''));
      else root = resolve(v);
    } else if (a.startsWith('-')) {
      console.error(`error: unknown option ${a} (see --help)`);
      return 2;
    } else paths.push(a);
  }
  if (!existsSync(join(root, SPEC_DIR))) {
    console.error(
      `error: ${join(root, SPEC_DIR)}: no such folder (--root names the repository root)`,
    );
    return 2;
  }
  for (const p of paths) {
    if (!existsSync(join(root, p))) {
      console.error(`error: ${p}: no such file or folder under ${root}`);
      return 2;
    }
  }
  const files = listFiles(root, paths.length > 0 ? paths : DEFAULT_ROOTS);
  let unresolved = 0;
  let total = 0;
  let rewritten = 0;
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const { problems, fixed, count } = scanText(text, file, root);
    total += count;
    const skipped = skip.some((s) => file === s || file.startsWith(`${s}/`));
    if (fix && !skipped && fixed !== text) {
      writeFileSync(join(root, file), fixed);
      rewritten++;
      const after = scanText(fixed, file, root);
      for (const p of after.problems) console.log(`${p.file}:${p.line}: ${p.message}`);
      unresolved += after.problems.length;
      continue;
    }
    for (const p of problems) console.log(`${p.file}:${p.line}: ${p.message}`);
    unresolved += problems.length;
    if (list && problems.length === 0 && count > 0)
      console.log(`${file}: ${count} citation(s) resolve`);
  }
  if (fix) console.log(`rewrote ${rewritten} file(s)`);
  console.log(`${total} citation(s) in ${files.length} file(s); ${unresolved} unresolved`);
  return unresolved === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
