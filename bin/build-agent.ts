import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { agentTarball, checksumOf } from '../lib/core/enroll';
import { describeError, FleetError } from '../lib/core/errors';
import { bundleEntries, DAEMON_ENTRIES } from '../lib/harness/localcloud/bundle';
import { VERSION } from '../lib/version';

/**
 * `npm run build:agent [-- --out DIR]`: the release a node installs. The agent and the worker as
 * single files (every dependency inside, nothing to `npm install` on the node), with source maps,
 * the systemd units, install.sh and ssm-register.sh, in a directory and as a tarball beside it with
 * its sha256 checksum; install.sh beside them too, to install the node from the tarball.
 */
const ROOT = resolve(__dirname, '..');
const INSTALL_DIR = join(ROOT, 'agent', 'install');
const DEFAULT_OUT = join(ROOT, 'dist', 'agent');

/** Files of agent/install/ that ship: the units and the installer. */
const shipped = (name: string): boolean =>
  name.endsWith('.service') || name === 'install.sh' || name === 'ssm-register.sh';
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
  chmodSync(join(out, 'ssm-register.sh'), 0o755);
  return readdirSync(out).filter(ours);
};

/** The release files written beside the bundle directory. */
export interface Release {
  tarball: string;
  checksum: string;
  installer: string;
}

/**
 * Packs the built directory `out` as `<release>/queens-fleet-agent-<version>.tar.gz` (one folder
 * of that name inside, the same bytes for the same files: sorted, owned by root, dated 0), writes
 * its `.sha256` as sha256sum does and copies install.sh beside it.
 */
export const packRelease = (out: string, release: string, version: string = VERSION): Release => {
  const name = agentTarball(version);
  const folder = name.replace(/\.tar\.gz$/, '');
  const staging = join(release, `.${folder}.staging`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, folder), { recursive: true });
  try {
    for (const file of readdirSync(out).filter(ours)) copyFileSync(join(out, file), join(staging, folder, file));
    for (const file of ['install.sh', 'ssm-register.sh']) chmodSync(join(staging, folder, file), 0o755);
    const flags = ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-cf', '-'];
    const tar = spawnSync('tar', [...flags, '-C', staging, folder], { maxBuffer: 1 << 30 });
    if (tar.status !== 0) throw new FleetError(`tar failed: ${tar.stderr.toString().trim() || String(tar.error)}`);
    const tarball = join(release, name);
    writeFileSync(tarball, gzipSync(tar.stdout, { level: 9 }));
    const checksum = join(release, checksumOf(name));
    const digest = createHash('sha256').update(readFileSync(tarball)).digest('hex');
    writeFileSync(checksum, `${digest}  ${name}\n`);
    const installer = join(release, 'install.sh');
    copyFileSync(join(out, 'install.sh'), installer);
    chmodSync(installer, 0o755);
    return { tarball, checksum, installer };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
};

const cli = (): Command =>
  new Command()
    .name('build-agent')
    .description(
      'Build the node release: agent.js, worker.js, source maps, systemd units and the installers in one ' +
        'directory, and that directory as a tarball with its sha256 checksum and install.sh beside it.',
    )
    .option('--out <dir>', 'output directory; the tarball goes in its parent', DEFAULT_OUT)
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (opts: { out: string }) => {
      const out = resolve(opts.out);
      try {
        console.log(`built ${out}: ${(await buildAgent(out)).join(', ')}`);
        const release = packRelease(out, dirname(out));
        console.log(`packed ${release.tarball}\nchecksum ${release.checksum}\ninstaller ${release.installer}`);
        console.log(
          `next (docs/install.md): fleet enroll <node> prints the files to copy to the node and ` +
            `the command to run there (${basename(release.installer)} --bundle ${basename(release.tarball)} …)`,
        );
      } catch (error) {
        console.error(`build-agent: ${describeError(error)}`);
        process.exit(1);
      }
    });

if (require.main === module) void cli().parseAsync();
