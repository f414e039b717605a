import { accessSync, constants, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ValidationError, describeError } from '../lib/core/errors';
import { drillHtml } from '../lib/core/drill/html';
import type { Report } from '../lib/core/drill/report';
import { parseScenario, pipelineFrom, withPipelineFrom, type Scenario } from '../lib/core/drill/scenario';
import { parseJsonText } from '../lib/core/validate';
import { DEMO_SCENARIO, DEMO_TIME_SCALE, MEDIA_DEMO_SCENARIO, MEDIA_DEMO_TIME_SCALE } from '../lib/harness/drill/demo';
import { requireFfmpeg } from '../lib/harness/drill/media';
import { formatEntry, formatSummary } from '../lib/harness/drill/render';
import { runDrill } from '../lib/harness/drill/run';
import { resolveBehaviour } from '../lib/harness/localcloud/behaviour';
import { registerOperatorCommands } from './commands';
import { addExamples } from './commands/examples';
import { VERSION } from '../lib/version';

/** The CLI's exit codes. */
const EXIT = { ok: 0, failed: 1, badInput: 2 } as const;

const positiveNumber =
  (name: string, max: number) =>
  (raw: string): number => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0 || n > max)
      throw new InvalidArgumentError(`${name} must be a number in (0, ${max}]`);
    return n;
  };
const integer = (raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return n;
};

const readText = (file: string, what: string, flag: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? describeError(error);
    throw new ValidationError(`${what} ${file}: cannot be read (${reason})`, flag);
  }
};

/** A pipeline file (as examples/ffmpeg/pipeline.json), its `./` commands made relative to its folder. */
const readPipeline = (file: string, flag: string): unknown => {
  const stages = parseJsonText(readText(file, 'pipeline file', flag), `pipeline file ${file}`);
  return pipelineFrom(stages, dirname(resolve(file)));
};

const readScenario = (file: string): Scenario => {
  const text = readText(file, 'scenario file', '--scenario');
  const raw = parseJsonText(text, `scenario file ${file}`) as { config?: { pipeline?: unknown } };
  // `config.pipeline` may name a pipeline file, relative to the scenario.
  const ref = raw?.config?.pipeline;
  if (typeof ref === 'string') {
    raw.config = { ...raw.config, pipeline: readPipeline(resolve(dirname(resolve(file)), ref), '--scenario') };
  }
  const scenario = withPipelineFrom(parseScenario(raw), dirname(resolve(file)));
  // The cloud's behaviour overrides are checked here too, so bad ones exit 2 before anything starts.
  resolveBehaviour(scenario.behaviour);
  if (scenario.media !== undefined) requireFfmpeg();
  return scenario;
};

/** A report's file must be writable before the drill starts, not found unwritable minutes later. */
const checkWritable = (file: string | undefined, flag: string): void => {
  if (file === undefined) return;
  const dir = dirname(resolve(file));
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new ValidationError(
      `${flag} ${file}: its folder ${dir} is not a writable directory ` +
        `(${(error as NodeJS.ErrnoException).code ?? describeError(error)})`,
      flag,
    );
  }
};

/** Keeps a finished drill's fleet running until Ctrl-C, for `fleet status --local` and friends. */
const holdUntil =
  (signal: AbortSignal) =>
  async (report: Report): Promise<void> => {
    console.log(formatSummary(report));
    if (signal.aborted) return;
    console.log(
      'Holding the local fleet: try `npx fleet status --local`, `npx fleet events --local`. Ctrl-C stops it.',
    );
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  };

type DrillOptions = { timeScale: number; seed: number; json?: string; html?: string; keep?: boolean; hold?: boolean };

/** Runs a scenario with the live timeline on stdout; returns the exit code. */
const drill = async (scenario: Scenario, opts: DrillOptions): Promise<number> => {
  checkWritable(opts.json, '--json');
  checkWritable(opts.html, '--html');
  const abort = new AbortController();
  const stop = (): void => {
    process.stderr.write('\ninterrupted: stopping the local fleet…\n');
    abort.abort();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(
    `Scenario "${scenario.name}": ${scenario.nodes} nodes, ${scenario.seconds}s at ×${opts.timeScale} ` +
      `(≈${Math.round(scenario.seconds / opts.timeScale)}s + drain), seed ${opts.seed}`,
  );
  const report: Report = await runDrill(scenario, {
    timeScale: opts.timeScale,
    seed: opts.seed,
    signal: abort.signal,
    keep: opts.keep === true,
    ...(opts.hold === true ? { hold: holdUntil(abort.signal) } : {}),
    onEntry: (e) => console.log(formatEntry(e)),
    onPhase: (p) => console.log(`… ${p}`),
  });
  if (opts.hold !== true) console.log(formatSummary(report));
  if (opts.json !== undefined) writeFileSync(opts.json, `${JSON.stringify(report, null, 2)}\n`);
  if (opts.html !== undefined) {
    writeFileSync(opts.html, drillHtml(report));
    console.log(`The report as a page (timeline, heartbeat ages, backlog, checks): ${resolve(opts.html)}`);
  }
  if (abort.signal.aborted && opts.hold !== true) return EXIT.failed;
  return report.ok ? EXIT.ok : EXIT.failed;
};

const program = new Command()
  .name('fleet')
  .version(VERSION)
  .description("Queen's Fleet: self-healing media fleet. Drills run on the embedded local cloud.")
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

program
  .command('drill')
  .description('run a scenario file on the local cloud and check its expectations and invariants')
  .requiredOption('--scenario <file>', 'scenario JSON file (docs/drills.md, docs/pipeline.md; see tests/scenarios/)')
  .addOption(
    new Option('--time-scale <n>', 'divide every duration by n')
      .argParser(positiveNumber('--time-scale', 100))
      .default(20),
  )
  .addOption(new Option('--seed <n>', 'workload seed').argParser(integer).default(1))
  .option('--json <file>', 'write the report as JSON')
  .option('--html <file>', 'write the report as a self-contained HTML page (charts, no script, no network)')
  .option('--keep', 'keep the run directory with the node logs')
  .option('--hold', 'keep the fleet running after the report, until Ctrl-C')
  .action(async (o: { scenario: string } & DrillOptions) => {
    process.exitCode = await drill(readScenario(o.scenario), o);
  });

type DemoOptions = { pipeline?: string; seed: number; json?: string; html?: string; keep?: boolean; hold?: boolean };

/** The media demo with the pipeline in DIR/pipeline.json; refused at once without ffmpeg. */
const mediaDemo = (dir: string): Scenario => {
  const pipeline = readPipeline(join(resolve(dir), 'pipeline.json'), '--pipeline');
  requireFfmpeg();
  return parseScenario({ ...MEDIA_DEMO_SCENARIO, config: { pipeline } });
};

program
  .command('demo')
  .description('a 2-node fleet whose primary worker stalls: detection, restart, recovery (≈45 s)')
  .option('--pipeline <dir>', 'instead, run DIR/pipeline.json on four ffmpeg episodes; the primary dies mid-transcode')
  .addOption(new Option('--seed <n>', 'workload seed').argParser(integer).default(1))
  .option('--json <file>', 'write the report as JSON')
  .option('--html <file>', 'where to write the report as an HTML page', join(tmpdir(), 'queens-fleet-demo.html'))
  .option('--keep', "keep the run directory (node logs, and the media demo's deliveries)")
  .option('--hold', 'keep the fleet running after the report, until Ctrl-C')
  .addHelpText('after', '\nExamples:\n  fleet demo\n  fleet demo --pipeline examples/ffmpeg --keep\n')
  .action(async (o: DemoOptions) => {
    const { pipeline, ...opts } = o;
    if (pipeline === undefined) process.exitCode = await drill(DEMO_SCENARIO, { timeScale: DEMO_TIME_SCALE, ...opts });
    else process.exitCode = await drill(mediaDemo(pipeline), { timeScale: MEDIA_DEMO_TIME_SCALE, ...opts });
  });

registerOperatorCommands(program);
addExamples(program);

const main = async (): Promise<void> => {
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    const e = error as { code?: string; exitCode?: number };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      process.exitCode =
        e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help'
          ? EXIT.ok
          : EXIT.badInput;
      return;
    }
    if (error instanceof ValidationError) {
      console.error(`fleet: ${error.message}`);
      process.exitCode = EXIT.badInput;
      return;
    }
    console.error(`fleet: ${describeError(error)}`);
    process.exitCode = EXIT.failed;
  }
};

void main();
