import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  loadRegistry,
  pidFileSchema,
  proofSchema,
  readJsonFile,
  registryPath,
  registrySchema,
  roleFileSchema,
} from '../../agent/registry';
import { HeldMessages, heldPath } from '../../agent/worker/held';
import { bootId } from '../../agent/runtime/boot';
import { taskIdSchema } from '../../lib/core/schemas';
import { memoryLogger } from '../helpers/memory-logger';
import { expectNoPollution, hostileJsonTextArb, mutationArb, outcomeOfAsync, POLLUTERS } from '../helpers/hostile';

/**
 * Hostile input on the node: the files in the data directory (registry, role, proof, pid,
 * held messages) may be damaged by a crash mid-write, a full disk or a person. Each read is a
 * value or a ValidationError naming the field; the loops that read them go on.
 */
const REGISTRY = {
  version: 1,
  completedTotal: 3,
  recentCompletions: [1_700_000_000_000],
  inFlight: [{ taskId: 'task-0001', progress: 2 }],
  consumingEpoch: 2,
  tasks: { 'task-0001': { status: 'running', stages: 1, progress: 2, epoch: 2, done: null } },
};
const HELD = {
  version: 1,
  boot: bootId(),
  messages: {
    'task-0001': {
      receipt: 'rh-1',
      id: 'm-1',
      body: '{}',
      receiveCount: 1,
      invisibleUntilMono: Number.MAX_SAFE_INTEGER,
      invisibleUntilWall: Number.MAX_SAFE_INTEGER,
    },
  },
};

// File I/O per case: fewer runs than the pure properties.
const RUNS = 100;
const textOf = (valid: unknown): fc.Arbitrary<string> =>
  fc.oneof(
    hostileJsonTextArb,
    mutationArb(valid).map((m) => JSON.stringify(m.value) ?? ''),
    fc.constantFrom(...POLLUTERS.map((p) => JSON.stringify(p))),
  );

describe('data-directory files, over hostile content', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qf-hostile-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    expectNoPollution();
  });

  it.each([
    ['registry.json', registrySchema, REGISTRY],
    ['role.json', roleFileSchema, { role: 'primary', epoch: 2, validUntil: 5_000, boot: 'b-1' }],
    ['proof.json', proofSchema, { boot: 'b-1', at: 5_000, ok: true, detail: 'passed' }],
    ['worker.pid.json', pidFileSchema, { pid: 123, startTicks: 456 }],
  ] as const)('reads any %s as a value, or refuses it naming the field', async (name, schema, valid) => {
    await fc.assert(
      fc.asyncProperty(textOf(valid), async (text) => {
        writeFileSync(join(dir, name), text);
        await outcomeOfAsync(() => readJsonFile(join(dir, name), schema));
        expectNoPollution();
      }),
      { numRuns: RUNS },
    );
  });

  it('loads any registry, starting empty and keeping a copy when it is damaged', async () => {
    await fc.assert(
      fc.asyncProperty(textOf(REGISTRY), fc.nat(), async (text, now) => {
        rmSync(dir, { recursive: true, force: true });
        dir = mkdtempSync(join(tmpdir(), 'qf-hostile-'));
        writeFileSync(registryPath(dir), text);
        const { registry, damaged } = await loadRegistry(dir, now);
        expect(registrySchema.safeParse(registry).success).toBe(true);
        if (damaged !== null) expect(readdirSync(dir)).toContain(`registry.json.quarantine.${now}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('hands the next worker only well-formed leftovers from any held.json, and rewrites the file whole', async () => {
    await fc.assert(
      fc.asyncProperty(textOf(HELD), async (text) => {
        writeFileSync(heldPath(dir), text);
        const left = await new HeldMessages(dir, 300_000, memoryLogger().log).leftovers(0);
        for (const { taskId, message } of left.messages) {
          expect(taskIdSchema.safeParse(taskId).success).toBe(true);
          expect(typeof message.receiptHandle).toBe('string');
        }
        expect(existsSync(heldPath(dir))).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
