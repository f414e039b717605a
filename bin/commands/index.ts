import type { Command } from 'commander';
import { registerAdmission } from './admission';
import { registerDoctor } from './doctor';
import { registerEvents } from './events';
import { registerFailover } from './failover';
import { registerMaintenance } from './maintenance';
import { registerRejoin } from './rejoin';
import { registerReplay } from './replay';
import { registerStatus } from './status';
import { registerSwitchover } from './switchover';

/** Registers the operator commands (status, events, failover, maintenance, rejoin, admission, replay, doctor). */
export const registerOperatorCommands = (program: Command): void => {
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
