import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The packaged CloudFormation, as `sls package` writes it offline, and the readers the deploy
 * tests share: a role's statements, inline and from the customer managed policies it attaches.
 */
export const ROOT = join(__dirname, '..', '..');

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
  Sid?: string;
}
export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  Condition?: string;
}
export type Template = {
  Resources: Record<string, Resource>;
  Conditions?: Record<string, unknown>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
};

/**
 * One packaging at a time across test processes: serverless-esbuild works in the service's own
 * `.esbuild` and copies its zips through `.serverless`, both fixed, so two packagings side by
 * side (template.test and node-role.test on two workers) broke each other (ENOENT
 * .esbuild/.serverless, 15 failed tests in a run of tests/deploy). A lock folder naming its
 * holder's pid; one left by a process that is gone is taken over.
 */
const exclusively = <T>(fn: () => T): T => {
  const lock = join(ROOT, '.tmp', 'sls-package.lock');
  const owner = join(lock, 'pid');
  const deadline = Date.now() + 240_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(owner, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!holderAlive(owner)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`another packaging has held ${lock} for 4 minutes`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
};

/** Whether the process named in the lock still runs (a lock made in the last 10 s, with no pid yet, counts as held). */
const holderAlive = (owner: string): boolean => {
  let pid: number;
  try {
    pid = Number(readFileSync(owner, 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(dirname(owner)).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
};

/** Runs `sls package --stage ci` into `.tmp/<dir>` with `params`, and reads the template. */
export const packageTemplate = (dir: string, params: Record<string, string>): { template: Template; out: string } => {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  return exclusively(() => packageNow(dir, params));
};

const packageNow = (dir: string, params: Record<string, string>): { template: Template; out: string } => {
  const out = join(ROOT, '.tmp', dir);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const args = [
    'node_modules/osls/bin/serverless.js',
    'package',
    '--stage',
    'ci',
    '--package',
    out,
    ...Object.entries(params).map(([k, v]) => `--param=${k}=${v}`),
  ];
  // Offline as in CI: no credentials (tests/setup.ts sets test keys), so the framework does not
  // ask CloudFormation about a deployed layer; each packaging builds its layer in a folder of its own.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE)$/.test(k),
    ),
  );
  const run = spawnSync(process.execPath, args, {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...env,
      TMPDIR: join(ROOT, '.tmp'),
      SLS_TELEMETRY_DISABLED: '1',
      QUEEN_FLEET_SDK_LAYER_DIR: `.tmp/${dir}-layer`,
    },
    timeout: 120_000,
  });
  if (run.status !== 0)
    throw new Error(`sls package failed (${run.status ?? run.signal ?? '?'}):\n${run.stdout}\n${run.stderr}`);
  return {
    template: JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8')) as Template,
    out,
  };
};

/**
 * Every optional parameter set, so the conditional resources are there too; three nodes, so each
 * gets a role and a role can be told from another's: two with the managed-instance ids of earlier
 * releases, one by its name alone (the watchdog finds its instance by its role).
 */
export const CI_PARAMS = {
  stateBucket: 'acme-queens-fleet-ci',
  nodes: JSON.stringify([
    { name: 'node-1', instanceId: 'mi-00000000000000001', address: '192.0.2.1' },
    { name: 'node-2', instanceId: 'mi-00000000000000002', address: '192.0.2.2' },
    { name: 'node-3', address: '192.0.2.3' },
  ]),
  alertEmail: 'ops@example.com',
  runbookUrl: 'https://github.com/acme/queens-fleet/blob/main/docs/runbook.md',
  hostedZoneId: 'Z0123456789ABC',
  originRecordName: 'origin.example.com',
  dataPlaneRecordName: 'media.example.com',
  primaryAddress: '192.0.2.1',
  standbyAddress: '192.0.2.2',
  deliveryBucket: 'acme-queens-fleet-delivery-ci',
  cdn: 'true',
};
/** The roles CI_PARAMS's nodes get, in the order of their names. */
export const NODE_ROLES = ['NodeRoleNode1', 'NodeRoleNode2', 'NodeRoleNode3'];

export const asList = (a: string | string[]): string[] => (Array.isArray(a) ? a : [a]);

/** A `Fn::Sub` string, `Ref:<name>` for a Ref, or the JSON of anything else. */
export const sub = (value: unknown): string => {
  const v = value as { 'Fn::Sub'?: string; Ref?: string };
  return v['Fn::Sub'] ?? (v.Ref === undefined ? JSON.stringify(value) : `Ref:${v.Ref}`);
};

/** Reads of one template. */
export const reader = (template: Template) => {
  const props = (id: string): Record<string, unknown> => {
    const r = template.Resources[id];
    if (r === undefined) throw new Error(`no resource ${id}`);
    return r.Properties;
  };
  /** Statements of a policy document; `Fn::If` branches count as statements. */
  const documentStatements = (doc: { Statement: unknown[] }): Statement[] =>
    doc.Statement.flatMap((s) => {
      const branch = (s as { 'Fn::If'?: [string, Statement, unknown] })['Fn::If'];
      return branch === undefined ? [s as Statement] : [branch[1]];
    });
  /**
   * A role's statements: its inline policies, then the customer managed policies it attaches by
   * Ref. An attached policy the template does not hold (an AWS managed one) cannot be read, so
   * it throws rather than count as granting nothing.
   */
  const statements = (roleId: string): Statement[] => {
    const role = props(roleId);
    const inline = ((role.Policies ?? []) as { PolicyDocument: { Statement: unknown[] } }[]).flatMap((p) =>
      documentStatements(p.PolicyDocument),
    );
    const managed = ((role.ManagedPolicyArns ?? []) as unknown[]).flatMap((arn) => {
      const ref = (arn as { Ref?: string }).Ref;
      if (ref === undefined || template.Resources[ref]?.Type !== 'AWS::IAM::ManagedPolicy')
        throw new Error(`${roleId} attaches ${JSON.stringify(arn)}, which this template does not define`);
      return documentStatements(props(ref).PolicyDocument as { Statement: unknown[] });
    });
    return [...inline, ...managed];
  };
  const resources = (type: string): [string, Resource][] =>
    Object.entries(template.Resources).filter(([, r]) => r.Type === type);
  const actionsOf = (roleId: string): string[] =>
    statements(roleId)
      .flatMap((s) => asList(s.Action))
      .sort();
  return { props, statements, documentStatements, resources, actionsOf };
};
