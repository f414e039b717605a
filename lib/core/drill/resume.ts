/** What the wire showed: every receive with the tasks it handed out, every task-state write. */
interface Wire {
  receives: readonly { t: number; node: string; taskIds?: readonly string[] }[];
  writes: readonly { t: number; kind: 'checkpoint' | 'done'; taskId: string }[];
  extensions: readonly { t: number; node: string; taskId: string }[];
}

export interface Resume {
  /** Tasks the node held when the fault struck whose receipts it had kept (all of them when that is not known). */
  inFlight: number;
  /** When the last of those was taken up again; null when one never was. */
  resumedAt: number | null;
  /**
   * Tasks received an instant before the fault whose receipts never reached disk: only their
   * visibility timeout frees them.
   */
  unrecorded: number;
  unrecordedResumedAt: number | null;
}

/**
 * When each task was first taken up after the fault: received anew, extended by a worker carrying
 * on with it, or completed; null if never. The faulted node's own receives and extensions count
 * only from `backAt`: before it, they are requests its stopped worker sent before the fault.
 */
const takenUp = (o: Wire, fault: Fault, ids: readonly string[]): number | null => {
  const { at, node, backAt = at } = fault;
  const after = (x: { t: number; node: string }): boolean =>
    x.node === node ? backAt !== null && x.t >= backAt : x.t >= at;
  let last: number | null = null;
  for (const id of ids) {
    const received = o.receives.filter((r) => after(r) && (r.taskIds ?? []).includes(id)).map((r) => r.t);
    const done = o.writes.filter((w) => w.kind === 'done' && w.t >= at && w.taskId === id).map((w) => w.t);
    const extended = o.extensions.filter((x) => after(x) && x.taskId === id).map((x) => x.t);
    const times = [...received, ...done, ...extended];
    if (times.length === 0) return null;
    last = Math.max(last ?? 0, Math.min(...times));
  }
  return last;
};

/**
 * A fault on `node` at `at`. `backAt`: when its worker could act again (thawed, restarted,
 * rebooted), null when never; `at` when the fault leaves it running. `recorded`: see Resume.
 */
export interface Fault {
  at: number;
  node: string;
  backAt?: number | null;
  recorded?: readonly string[];
}

/**
 * How the tasks a node held when a fault struck were taken up again, from the wire: a task is
 * held by the node that received it last, until a completion of it is written. Each held task
 * resumes at its first receive after the fault, by any node, or when a worker extends its
 * message or completes it, if that comes first (a worker that carried on with it). Those whose
 * receipts the node had not kept (`recorded`) are counted apart. Pure.
 */
export const resumeAfter = (o: Wire, fault: Fault): Resume => {
  const holder = new Map<string, string>();
  for (const r of [...o.receives].filter((x) => x.t < fault.at).sort((a, b) => a.t - b.t))
    for (const id of r.taskIds ?? []) holder.set(id, r.node);
  for (const w of o.writes) if (w.kind === 'done' && w.t < fault.at) holder.delete(w.taskId);
  const held = [...holder].filter(([, node]) => node === fault.node).map(([id]) => id);
  const recorded = fault.recorded === undefined ? held : held.filter((id) => fault.recorded?.includes(id));
  const unrecorded = held.filter((id) => !recorded.includes(id));
  return {
    inFlight: recorded.length,
    resumedAt: takenUp(o, fault, recorded),
    unrecorded: unrecorded.length,
    unrecordedResumedAt: takenUp(o, fault, unrecorded),
  };
};
