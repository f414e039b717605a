import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** Whether to ask before acting: a person at a terminal who did not say yes, about a real change. */
export const mustAsk = (o: { terminal: boolean; yes: boolean; dryRun: boolean; json: boolean }): boolean =>
  o.terminal && !o.yes && !o.dryRun && !o.json;

/** Asks a yes/no question; only "y" or "yes" agrees, and an input that ends unanswered refuses. */
export const confirm = (question: string, input: Readable, output: Writable): Promise<boolean> =>
  new Promise((resolve) => {
    const rl = createInterface({ input, output, terminal: false });
    let answered = false;
    rl.once('close', () => {
      if (!answered) resolve(false);
    });
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
