/**
 * The `engine-frame` system's invariants: untracked objects stay untracked, residency sets
 * closed exactly once and never inserted into once closed, every GPU touch resident, transients
 * with overlapping lifetimes disjoint, no block reused before its frame fence, and defrag moving
 * only unlocked blocks.
 */
import type { Invariant } from '../harness/system.js';
import { bothSides } from './common.js';
import { releasesHeld } from './engine-frame-judges.js';
import type { EngineSide, EngineSystemConfig } from './engine-frame-side.js';

function touchViolation(s: EngineSide): string | null {
  const violations = s.manager.gpu.violations;
  for (let i = 0; i < violations.length; i++) {
    const v = violations[i]!;
    if (
      v.kind === 'touch-not-resident' ||
      v.kind === 'touch-before-paging' ||
      v.kind === 'deadlock'
    ) {
      return v.message; // the simulated GPU's message already ends with the object's history (none for a deadlock)
    }
  }
  return null;
}

function transientsDisjoint(s: EngineSide): string | null {
  const t = s.transients;
  for (let i = 0; i < t.length; i++) {
    const a = s.info[t[i]!]!;
    for (let j = i + 1; j < t.length; j++) {
      const b = s.info[t[j]!]!;
      if (
        !(
          a.offsetBytes < b.offsetBytes + b.sizeBytes && b.offsetBytes < a.offsetBytes + a.sizeBytes
        )
      )
        continue;
      if (a.firstPass <= b.lastPass && b.firstPass <= a.lastPass) {
        return `transients ${t[i]} [${a.offsetBytes}, ${a.offsetBytes + a.sizeBytes}) passes ${a.firstPass}..${a.lastPass} and ${t[j]} [${b.offsetBytes}, ${b.offsetBytes + b.sizeBytes}) passes ${b.firstPass}..${b.lastPass} share bytes while both alive`;
      }
    }
  }
  return null;
}

export const invariants: Invariant<EngineSide, EngineSystemConfig>[] = [
  {
    name: 'untracked-never-tracked',
    description: 'back buffers and external resources never enter residency tracking',
    check: bothSides((s) => {
      const L = s.engine.layout;
      for (let object = L.backBufferBase; object < L.queryHeap; object++) {
        if (s.manager.status(object) !== 'untracked')
          return `object ${object} (a back buffer or external resource) is tracked (${s.manager.status(object)})`;
      }
      return null;
    }),
  },
  {
    name: 'sets-closed-exactly-once',
    description:
      'every residency set is closed exactly once between its open and its submission (path A or path B, never both, never neither)',
    check: bothSides((s) => s.closeLog[0] ?? null),
  },
  {
    name: 'no-insert-into-closed-set',
    description:
      'no registration inserts into a closed residency set (the submission thread registers on a freshly opened list)',
    check: bothSides((s) => s.insertLog[0] ?? null),
  },
  {
    name: 'gpu-touches-resident',
    description:
      "every pageable a list's commands touch (indirect ones included, mapped at execution time) is resident and paged in when the GPU runs the list",
    check: bothSides(touchViolation),
  },
  {
    name: 'transient-no-overlap',
    description: 'transients whose pass lifetimes overlap never share bytes of the transient heap',
    check: bothSides(transientsDisjoint),
  },
  {
    name: 'no-reuse-before-frame-fence',
    description:
      "a block released in a frame whose fence has not completed stays held by its pool heap's sub-allocator, and no block is handed out (created or defrag destination) over such bytes or bytes a list of an incomplete frame reads",
    check: bothSides((s) => s.handoutLog[0] ?? releasesHeld(s)),
  },
  {
    name: 'defrag-only-unlocked',
    description: 'defrag moves only blocks whose initial upload is done (unlocked)',
    check: bothSides((s) => s.defragLog[0] ?? null),
  },
];
