/** What the wire showed: every receive with the tasks it handed out, every task-state write. */
interface Wire {
  receives: readonly { t: number; node: string; taskIds?: readonly string[] }[];
  writes: readonly { t: number; kind: 'checkpoint' | 'done'; taskId: string }[];
  extensions: readonly { t: number; taskId: string }[];
}

/**
 * How the tasks a node held when a fault struck were taken up again, from the wire: a task is
 * held by the node that received it last, until a completion of it is written. Each held task
 * resumes at its first receive after the fault, by any node, or when a worker extends its
 * message or completes it, if that comes first (a worker that carried on with it). Pure.
 */
export const resumeAfter = (o: Wire, fault: { at: number; node: string }): { inFlight: number; resumedAt: number | null } => {
  const holder = new Map<string, string>();
  for (const r of [...o.receives].filter((x) => x.t < fault.at).sort((a, b) => a.t - b.t)) for (const id of r.taskIds ?? []) holder.set(id, r.node);
  for (const w of o.writes) if (w.kind === 'done' && w.t < fault.at) holder.delete(w.taskId);
  const held = [...holder].filter(([, node]) => node === fault.node).map(([id]) => id);
  let resumedAt: number | null = null;
  for (const id of held) {
    const received = o.receives.filter((r) => r.t >= fault.at && (r.taskIds ?? []).includes(id)).map((r) => r.t);
    const done = o.writes.filter((w) => w.kind === 'done' && w.t >= fault.at && w.taskId === id).map((w) => w.t);
    const extended = o.extensions.filter((x) => x.t >= fault.at && x.taskId === id).map((x) => x.t);
    const times = [...received, ...done, ...extended];
    if (times.length === 0) return { inFlight: held.length, resumedAt: null };
    resumedAt = Math.max(resumedAt ?? 0, Math.min(...times));
  }
  return { inFlight: held.length, resumedAt };
};
