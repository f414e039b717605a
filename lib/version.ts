import { version } from '../package.json';

/** The release, as package.json names it: `fleet --version` shows it, and every heartbeat carries it. */
export const VERSION: string = version;
