/** Messages between the local fleet (parent) and a node host (child), over the IPC channel. */
export type HostCommand = 'restart-worker' | 'stop-worker' | 'start-worker' | 'restart-agent';

export type HostRequest =
  | { type: 'command'; id: number; command: HostCommand }
  | { type: 'signal-worker'; signal: NodeJS.Signals }
  /** Freeze every worker this host starts from now on (a stall that restarts do not cure). */
  | { type: 'stall-workers'; on: boolean }
  /** Kill the agent and keep it down, as when systemd's start limit was hit. */
  | { type: 'kill-agent' }
  /** Start the agent again after `kill-agent` (`systemctl reset-failed` + start). */
  | { type: 'start-agent' }
  | { type: 'clock-offset'; offsetMs: number }
  | { type: 'shutdown' };

export type HostEvent =
  | { type: 'worker-started'; pid: number; restarts: number }
  | { type: 'worker-exited'; pid: number; how: string; planned: boolean }
  | { type: 'agent-started'; pid: number }
  | { type: 'agent-exited'; pid: number; how: string }
  | { type: 'command-done'; id: number; ok: boolean; output: string };
