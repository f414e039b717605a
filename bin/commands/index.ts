import type { Command } from 'commander';
import { registerAdmission } from './admission';
import { registerDoctor } from './doctor';
import { registerEvents } from './events';
import { registerFailover } from './failover';
import { registerMaintenance } from './maintenance';
import { registerRejoin } from './rejoin';
import { registerReplay } from './replay';
import { configFlag } from './common';
import { registerEnroll, registerInit } from './setup';
import { registerStatus } from './status';
import { registerSwitchover } from './switchover';

/**
 * Registers the global `--config FILE` and the operator commands (init, enroll, status, events, failover,
 * maintenance, rejoin, admission, replay, doctor).
 */
export const registerOperatorCommands = (program: Command): void => {
  program
    .option('--config <file>', 'the fleet config file (before FLEET_CONFIG_FILE; FLEET_* variables override its keys)')
    .hook('preAction', (_program, action) => {
      configFlag.file = action.optsWithGlobals<{ config?: string }>().config;
    });
  registerInit(program);
  registerEnroll(program);
  registerStatus(program);
  registerEvents(program);
  registerFailover(program);
  registerSwitchover(program);
  registerMaintenance(program);
  registerRejoin(program);
  registerAdmission(program);
  registerReplay(program);
  registerDoctor(program);
};
