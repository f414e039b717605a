/**
 * Elementary cycles of a directed graph (Johnson's algorithm), each found once: a cycle is
 * reported starting from its earliest member, so `A → B → A` never comes back as `B → A → B`.
 */

/**
 * The elementary cycles among `nodes` along `edges`, at most `limit` of them. Each cycle lists
 * its members in edge order, starting with the one earliest in `nodes`; cycles come out in the
 * order of their first member, then of the edges followed.
 */
export const findCycles = (
  nodes: readonly string[],
  edges: ReadonlyMap<string, readonly string[]>,
  limit: number,
): string[][] => {
  const order = new Map(nodes.map((node, i) => [node, i]));
  const cycles: string[][] = [];
  for (const [startIndex, start] of nodes.entries()) {
    if (cycles.length >= limit) break;
    // Only members after the start: a cycle through an earlier node was found from that node.
    const next = (node: string): string[] =>
      (edges.get(node) ?? []).filter((target) => (order.get(target) ?? -1) >= startIndex);
    const blocked = new Set<string>();
    const blockedBy = new Map<string, Set<string>>();
    const stack: string[] = [];

    const unblock = (node: string): void => {
      blocked.delete(node);
      const waiting = blockedBy.get(node) ?? new Set();
      blockedBy.delete(node);
      for (const other of waiting) if (blocked.has(other)) unblock(other);
    };

    // Johnson's circuit: a node stays blocked until a path through it reaches the start again.
    const circuit = (node: string): boolean => {
      let found = false;
      stack.push(node);
      blocked.add(node);
      for (const target of next(node)) {
        if (cycles.length >= limit) break;
        if (target === start) {
          cycles.push([...stack]);
          found = true;
        } else if (!blocked.has(target) && circuit(target)) found = true;
      }
      if (found) unblock(node);
      else {
        for (const target of next(node)) {
          const waiting = blockedBy.get(target) ?? new Set<string>();
          waiting.add(node);
          blockedBy.set(target, waiting);
        }
      }
      stack.pop();
      return found;
    };

    circuit(start);
  }
  return cycles;
};
