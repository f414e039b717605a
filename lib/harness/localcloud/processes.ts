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

/** Live processes carrying `name` in their environment, with its value (a node's unit, say). */
export const processesWithMark = (name: string, procRoot = '/proc'): { pid: number; value: string }[] => {
  const found: { pid: number; value: string }[] = [];
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const value = readFileSync(`${procRoot}/${entry}/environ`, 'latin1')
        .split('\0')
        .find((v) => v.startsWith(`${name}=`));
      if (value !== undefined) found.push({ pid: Number(entry), value: value.slice(name.length + 1) });
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
};

/** Pids of live processes whose environment has `name=value`. */
export const processesMarked = (name: string, value: string, procRoot = '/proc'): number[] =>
  processesWithMark(name, procRoot)
    .filter((p) => p.value === value)
    .map((p) => p.pid);

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
