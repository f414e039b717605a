import { readFile, readdir } from 'node:fs/promises';

/** What /proc tells about one process. */
export interface ProcInfo {
  pid: number;
  /** R, S, D, T (stopped), Z (zombie), … */
  state: string;
  /** utime + stime in milliseconds. */
  cpuMs: number;
  /** Start time in clock ticks since boot: with the pid it names a process uniquely. */
  startTicks: number;
  rssBytes: number;
}

const CLK_TCK = 100;
const PAGE_SIZE = 4096;

/** Parses /proc/<pid>/stat; null when the process is gone. */
export const readProc = async (pid: number, procRoot = '/proc'): Promise<ProcInfo | null> => {
  let stat: string;
  try {
    stat = await readFile(`${procRoot}/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name may hold spaces and parentheses: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const num = (i: number): number => Number(fields[i - 3] ?? '0');
  return {
    pid,
    state: fields[0] ?? '?',
    cpuMs: ((num(14) + num(15)) * 1000) / CLK_TCK,
    startTicks: num(22),
    rssBytes: num(24) * PAGE_SIZE,
  };
};

/** Direct children of a process, from /proc/<pid>/task/<tid>/children. */
export const childrenOf = async (pid: number, procRoot = '/proc'): Promise<number[]> => {
  try {
    const tids = await readdir(`${procRoot}/${pid}/task`);
    const lists = await Promise.all(
      tids.map((t) => readFile(`${procRoot}/${pid}/task/${t}/children`, 'utf8').catch(() => '')),
    );
    return lists.flatMap((l) =>
      l
        .split(' ')
        .filter((s) => s.trim() !== '')
        .map(Number),
    );
  } catch {
    return [];
  }
};

/** A process and all its descendants that are alive (not zombies). */
export const processTree = async (pid: number, procRoot = '/proc'): Promise<ProcInfo[]> => {
  const root = await readProc(pid, procRoot);
  if (root === null || root.state === 'Z') return [];
  const kids = await childrenOf(pid, procRoot);
  const subtrees = await Promise.all(kids.map((k) => processTree(k, procRoot)));
  return [root, ...subtrees.flat()];
};
