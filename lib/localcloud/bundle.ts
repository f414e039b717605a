import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/** Paths of the single-file bundles the local fleet runs. */
export interface Bundles {
  agent: string;
  worker: string;
  nodeHost: string;
}

const ROOT = resolve(__dirname, '..', '..');

/**
 * Bundles the agent, the worker and the node host into single files, as they ship to a node,
 * so a restarted process starts in tens of milliseconds instead of recompiling TypeScript.
 */
export const buildBundles = async (outDir: string): Promise<Bundles> => {
  await build({
    entryPoints: {
      agent: join(ROOT, 'agent/main.ts'),
      worker: join(ROOT, 'agent/worker/main.ts'),
      'node-host': join(ROOT, 'lib/localcloud/node-host.ts'),
    },
    outdir: outDir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'error',
    legalComments: 'none',
  });
  return { agent: join(outDir, 'agent.js'), worker: join(outDir, 'worker.js'), nodeHost: join(outDir, 'node-host.js') };
};
