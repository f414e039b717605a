import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { createActivation, readStackOutputs } from '../aws/stack';
import { activationRequest, installCommand, type InstallFacts } from '../core/enroll';
import { ValidationError } from '../core/errors';
import { configFromOutputs, refreshConfig } from '../core/stack-config';
import { parseJsonText } from '../core/validate';
import { nodeRoleOutputOf, stackNameOf } from '../core/stack-names';

export interface InitRequest {
  stage: string;
  region: string;
  /** The config file to write. */
  file: string;
  overwrite: boolean;
}

/** The JSON object in `path`; anything else is bad input, named. */
const readObject = (path: string): Record<string, unknown> => {
  const value = parseJsonText(readFileSync(path, 'utf8'), `config file ${path}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(`config file ${path}: must be a JSON object`, '--overwrite');
  return value as Record<string, unknown>;
};

/** `fleet init`: writes the fleet config from the stack's outputs; refuses to replace a file unless told. */
export const initConfig = async (
  cfn: CloudFormationClient,
  req: InitRequest,
): Promise<{ path: string; stack: string; nodes: string[]; missing: string[] }> => {
  const path = resolve(req.file);
  if (!req.overwrite && existsSync(path))
    throw new ValidationError(`${path} exists: pass --overwrite to replace it`, '--overwrite');
  const stack = stackNameOf(req.stage);
  const made = configFromOutputs(await readStackOutputs(cfn, stack, req.region), req.region);
  const { missing } = made;
  // The stage is the stack's name: a stack of an older release has no Stage output, and a file
  // without one would name every role and table after the default stage.
  made.file.stage = req.stage;
  // Updating keeps what the operator added (a pipeline, timings); the stack's own keys are its.
  const existing = req.overwrite && existsSync(path) ? readObject(path) : null;
  const file = existing === null ? made.file : refreshConfig(existing, made.file);
  // Not `wx` when told to overwrite; otherwise a file that appeared meanwhile is not replaced either.
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { flag: req.overwrite ? 'w' : 'wx', mode: 0o644 });
  const nodes = Array.isArray(file.nodes) ? (file.nodes as { name: string }[]).map((n) => n.name) : [];
  return { path, stack, nodes, missing };
};

export interface EnrollRequest {
  stage: string;
  region: string;
  node: string;
  expiresInHours: number;
  configFile: string;
  version: string;
  now: number;
}

/** `fleet enroll`: the node's activation, with its role and tag from the stack, and the command for the node. */
export const enrollNode = async (
  clients: { cfn: CloudFormationClient; ssm: SSMClient },
  req: EnrollRequest,
): Promise<{ activationId: string; activationCode: string; expires: Date; role: string; command: string }> => {
  const stack = stackNameOf(req.stage);
  const outputs = await readStackOutputs(clients.cfn, stack, req.region);
  const role = outputs[nodeRoleOutputOf(req.node)];
  if (role === undefined)
    throw new ValidationError(
      `${req.node} has no role in stack ${stack}: add {"name":"${req.node}"} to its nodes parameter and deploy`,
      'NODE',
    );
  const request = activationRequest({
    stage: req.stage,
    node: req.node,
    role,
    tagValue: outputs.InstanceTagValue ?? req.stage,
    now: req.now,
    expiresInHours: req.expiresInHours,
  });
  const { activationId, activationCode } = await createActivation(clients.ssm, request);
  const facts: InstallFacts = { ...req, activationId, activationCode };
  return { activationId, activationCode, expires: request.ExpirationDate, role, command: installCommand(facts) };
};
