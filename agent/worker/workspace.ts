import { renameSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A task's folder on the node: `task.json` (the message body as received) and `stages/<name>/`,
 * one folder per stage. A stage's OUTPUT_DIR is its own folder and its INPUT_DIR is `stages/`,
 * where the earlier stages' folders are.
 */
export class Workspace {
  readonly taskFile: string;
  readonly inputDir: string;

  constructor(readonly root: string) {
    this.taskFile = join(root, 'task.json');
    this.inputDir = join(root, 'stages');
  }

  static of(dataDir: string, taskId: string): Workspace {
    return new Workspace(join(dataDir, 'work', taskId));
  }

  outputDir(stage: string): string {
    return join(this.inputDir, stage);
  }

  /** Writes the task file: the body byte for byte, so a stage reads the producer's fields untouched. */
  async open(body: string): Promise<void> {
    await mkdir(this.inputDir, { recursive: true });
    await writeFile(this.taskFile, body);
  }

  /**
   * Readies a stage's folder for an attempt: emptied, unless the attempt resumes (it has a resume
   * token), when what an earlier attempt left is the stage's to pick up.
   */
  async stageDir(stage: string, resuming: boolean): Promise<string> {
    const dir = this.outputDir(stage);
    if (!resuming) await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /**
   * Its files go, moved out of the way at once: the same task taken up again right after (its
   * message sent back and received anew) opens a fresh folder while the old one is deleted.
   */
  discard(): void {
    const gone = `${this.root}.gone-${process.pid}-${Date.now()}`;
    try {
      renameSync(this.root, gone);
    } catch {
      return;
    }
    void rm(gone, { recursive: true, force: true }).catch(() => undefined);
  }
}
