import { readdirSync, readFileSync } from 'node:fs';

/**
 * The local stand-in for a node's cgroup: every process of a node carries an environment
 * variable naming it, inherited by whatever it starts (stage commands in their own process
 * groups included), so the fleet can freeze, thaw or kill all of a node the way a hypervisor
 * or systemd would, and nothing escapes.
 */
export const NODE_MARK = 'QUEEN_FLEET_NODE_MARK';
/** Names a node's unit (`<mark>/worker`, `<mark>/agent`): what systemd's KillMode reaches. */
export const UNIT_MARK = 'QUEEN_FLEET_UNIT_MARK';

/** Pids of live processes whose environment has `name=value`. */
export const processesMarked = (name: string, value: string, procRoot = '/proc'): number[] => {
  const needle = `\0${name}=${value}\0`;
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (`\0${readFileSync(`${procRoot}/${entry}/environ`, 'latin1')}\0`.includes(needle)) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
};

/**
 * Whether the process is still running code: not gone, and not a zombie (exited, waiting to be
 * reaped), which a signal no longer reaches (field 3 of /proc/PID/stat, after the command's
 * closing parenthesis: proc(5)).
 */
export const isLive = (pid: number, procRoot = '/proc'): boolean => {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== '' && state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
};

/** Sends `signal` to every process marked `name=value`; returns how many there were. */
export const signalMarked = (name: string, value: string, signal: NodeJS.Signals): number => {
  const pids = processesMarked(name, value).filter((pid) => pid !== process.pid);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone meanwhile.
    }
  }
  return pids.length;
};
