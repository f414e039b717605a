import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Command } from 'commander';
import { describeError } from '../lib/core/errors';
import { bundleEntries, DAEMON_ENTRIES } from '../lib/harness/localcloud/bundle';

/**
 * `npx tsx bin/build-agent.ts [--out DIR]`: the directory to copy to a node. The agent and the
 * worker as single files (every dependency inside, nothing to `npm install` on the node), with
 * source maps, the systemd units and install.sh beside them.
 */
const ROOT = resolve(__dirname, '..');
const INSTALL_DIR = join(ROOT, 'agent', 'install');
const DEFAULT_OUT = join(ROOT, 'dist', 'agent');

/** Files of agent/install/ that ship: the units and the installer. */
const shipped = (name: string): boolean => name.endsWith('.service') || name === 'install.sh';
/** Every file this build writes. */
const ours = (name: string): boolean => shipped(name) || /^(agent|worker)\.js(\.map)?$/.test(name);

/** Builds the node bundle into `out` and returns the names of the files written there. */
export const buildAgent = async (out: string): Promise<string[]> => {
  mkdirSync(out, { recursive: true });
  // A unit left from an older build must not ship; --out may hold other files: keep those.
  for (const name of readdirSync(out).filter(ours)) rmSync(join(out, name), { force: true });
  await bundleEntries(DAEMON_ENTRIES, out, { minify: true, sourcemap: true });
  for (const name of readdirSync(INSTALL_DIR).filter(shipped)) copyFileSync(join(INSTALL_DIR, name), join(out, name));
  chmodSync(join(out, 'install.sh'), 0o755);
  return readdirSync(out).filter(ours);
};

const cli = (): Command =>
  new Command()
    .name('build-agent')
    .description(
      'Build the node bundle: agent.js, worker.js, source maps, systemd units and install.sh in one directory.',
    )
    .option('--out <dir>', 'output directory', DEFAULT_OUT)
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (opts: { out: string }) => {
      const out = resolve(opts.out);
      try {
        console.log(`built ${out}: ${(await buildAgent(out)).join(', ')}`);
        console.log(
          `next (docs/install.md): scp -r ${out} <node>:  ` +
            `then on the node: sudo ./${basename(out)}/install.sh --config config.json --node <name>`,
        );
      } catch (error) {
        console.error(`build-agent: ${describeError(error)}`);
        process.exit(1);
      }
    });

if (require.main === module) void cli().parseAsync();
