import { FLEET_TAG, NODE_TAG } from './stack-names';

/** The agent's release tarball `npm run build:agent` writes, and its checksum beside it. */
export const agentTarball = (version: string): string => `queens-fleet-agent-${version}.tar.gz`;
export const checksumOf = (file: string): string => `${file}.sha256`;

/** AWS's longest activation is 30 days; an enrolment needs minutes. */
export const MAX_EXPIRY_HOURS = 720;
export const DEFAULT_EXPIRY_HOURS = 1;

export interface EnrollFacts {
  stage: string;
  node: string;
  /** The node's role, from the stack's `NodeRole<Node>Name` output. */
  role: string;
  /** The stack's `InstanceTagValue`: the watchdog may command only instances with this `queen-fleet` tag. */
  tagValue: string;
  now: number;
  expiresInHours: number;
}

/**
 * The node's own activation: its role (so it writes only its own heartbeat), the tags the
 * watchdog's ssm:SendCommand requires, one registration (a leaked code cannot register a second
 * machine as this node) and a short life.
 */
export const activationRequest = (f: EnrollFacts) => ({
  IamRole: f.role,
  DefaultInstanceName: `queen-fleet-${f.node}`,
  Description: `Queen's Fleet ${f.stage} ${f.node}`,
  RegistrationLimit: 1,
  ExpirationDate: new Date(f.now + f.expiresInHours * 3_600_000),
  Tags: [
    { Key: FLEET_TAG, Value: f.tagValue },
    { Key: NODE_TAG, Value: f.node },
  ],
});

/** Single quotes for a shell, whatever the text holds. */
const quote = (s: string): string => (/^[A-Za-z0-9@%+=:,./_-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export interface InstallFacts {
  node: string;
  region: string;
  version: string;
  /** The fleet config's file name, as copied to the node. */
  configFile: string;
  activationId: string;
  activationCode: string;
}

/** What to copy to the node: the installer, the release and its checksum, the config. */
export const copyFiles = (f: Pick<InstallFacts, 'version' | 'configFile'>): string[] => {
  const tarball = agentTarball(f.version);
  return ['dist/install.sh', `dist/${tarball}`, `dist/${checksumOf(tarball)}`, f.configFile];
};

/** The command to run on the node, from the directory the files were copied to. */
export const installCommand = (f: InstallFacts): string =>
  [
    'sudo bash install.sh',
    `--bundle ${agentTarball(f.version)}`,
    `--config ${quote(f.configFile.split('/').pop() ?? f.configFile)}`,
    `--node ${f.node}`,
    `--region ${quote(f.region)}`,
    `--activation-id ${quote(f.activationId)}`,
    `--activation-code ${quote(f.activationCode)}`,
  ].join(' ');
