import type { Heartbeat, Leader } from '../schemas';
import type { NodeStatus } from './status';

/** The role a node reports next to the one leader.json gives it, and a note when they disagree. */
export const describeRole = (
  name: string,
  leader: Leader | null,
  hb: Heartbeat | null,
): Pick<NodeStatus, 'role' | 'designated' | 'roleNote'> => {
  const role = hb?.role ?? null;
  const designated = leader === null ? null : leader.primary === name ? 'primary' : 'standby';
  let roleNote: string | null = null;
  if (leader !== null && role !== null) {
    if (designated === 'primary' && role === 'pending') {
      roleNote =
        leader.handover === 'await-fence'
          ? 'taking over: waits until the old primary has fenced itself'
          : 'taking over';
    } else if (designated === 'primary' && role !== 'primary') {
      roleNote = `leader.json makes it primary of epoch ${leader.epoch}; its agent has not synced yet`;
    } else if (designated === 'standby' && (role === 'primary' || role === 'pending')) {
      roleNote =
        `reports ${role}, but leader.json names ${leader.primary} (epoch ${leader.epoch}): it fences ` +
        `itself at its next lease round`;
    }
  }
  return { role, designated, roleNote };
};
