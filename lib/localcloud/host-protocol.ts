/** Messages between the local fleet (parent) and a node host (child), over the IPC channel. */
export type HostRequest =
  | { type: 'restart-worker'; id: number }
  | { type: 'signal-worker'; signal: NodeJS.Signals }
  | { type: 'shutdown' };

export type HostEvent =
  | { type: 'worker-started'; pid: number; restarts: number }
  | { type: 'worker-exited'; pid: number; how: string; planned: boolean }
  | { type: 'agent-started'; pid: number }
  | { type: 'agent-exited'; pid: number; how: string }
  | { type: 'command-done'; id: number; ok: boolean; output: string };
