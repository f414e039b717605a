import { stageHangSeconds } from '../../lib/core/config';
import { clientTimeouts } from '../../lib/core/timeouts';
import { describeError } from '../../lib/core/errors';
import type { AlertTopic } from '../../lib/aws/alerts';
import type { TaskQueue } from '../../lib/aws/queue';
import { mono, passHostGate } from '../runtime/clock';
import { TaskRunner, type TaskRunnerDeps } from './task-runner';
import { readProc } from '../proc';
import { workerPidPath, writeJsonAtomic } from '../registry';
import { HangWatch } from './hang-watch';
import { LeaseView } from './lease-view';
import { TaskBook } from './task-book';
import { Custody } from './custody';
import { extendEveryMs } from './held';
import { InHand } from './in-hand';
import { Drain } from './drain';
import { pollStep } from './poll-step';
import { selfTest } from './self-test';
import { sleep } from '../../lib/sleep';
import { Loop } from '../runtime/loop';

export interface WorkerDeps extends Omit<TaskRunnerDeps, 'guard' | 'deadline'> {
  /** Poison-task alerts; null without a topic. */
  alerts: AlertTopic | null;
  /** The dead-letter queue a task that keeps failing is moved to; null or absent: SQS's redrive decides. */
  deadLetters?: TaskQueue | null;
}

/**
 * The reference worker (`queen-fleet-worker`): consumes the task queue while the agent says this node is primary,
 * runs each task's stages, creates `done.json` (If-None-Match: *), then deletes the message. It acts only under a
 * valid lease, extends the messages it holds while it lasts, stops a task whose stage does no work for
 * `stageHangSeconds`, waits out an outage with what it holds, and drains for a switchover.
 */
export class Worker {
  private readonly book: TaskBook;
  /** The messages in hand: their receipts on disk, hand-backs, poison alerts. */
  private readonly custody: Custody;
  /** The tasks in hand, with their messages. */
  private readonly inHand: InHand;
  private readonly stopping = new AbortController();
  private pollDone: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Aborts the receive under way when the lease lapses; undefined while none is open. */
  private receiving: AbortController | undefined;
  /** Writes the registry every tick while tasks change it. */
  private readonly flushLoop: Loop;
  /** Checks the fence and hung stages every tick. */
  private readonly watchLoop: Loop;
  /** Extends the visibility of every message held, a third of the visibility timeout apart. */
  private readonly extendLoop: Loop;
  /** While it does not consume, proves every sample interval that its stages work (self-test). */
  private readonly proofLoop: Loop;
  /** Finds hung stages, not counting time the worker itself was stopped. */
  private readonly hangs: HangWatch;
  /** Set when closing under a valid lease: held messages stay on disk for whoever carries on. */
  private handOn = false;
  /** This process as the sampler names the running worker (`pid:startTicks`), set at start: its proofs name it. */
  private identity: string | undefined;
  /** The agent's last word on the role, re-read every watch tick and before every receive. */
  private readonly lease: LeaseView;

  private readonly runner: TaskRunner;
  /** SIGTERM, and a switchover's drain (drain.ts): running tasks stop after checkpointing their current stage. */
  private readonly draining = new AbortController();
  private readonly drain = new Drain(this.draining.signal);

  constructor(private readonly deps: WorkerDeps) {
    this.lease = new LeaseView(deps.config.dataDir, deps.config.nodeName, 900 * deps.config.leaseRenewSeconds);
    this.runner = new TaskRunner({ ...deps, guard: () => this.lease.guard(), deadline: () => this.lease.deadline() });
    this.hangs = new HangWatch(this.tickMs, stageHangSeconds(deps.config) * 1000);
    this.book = new TaskBook(deps.config.dataDir, deps.log);
    this.custody = new Custody(deps);
    this.inHand = new InHand({
      ...deps,
      runner: this.runner,
      book: this.book,
      custody: this.custody,
      lease: this.lease,
      draining: () => this.drain.signal(),
      stopping: this.stopping.signal,
      handOn: () => this.handOn,
      settled: () => {
        this.wake?.();
        if (this.drain.on) void this.checkDrain().catch(() => undefined);
      },
    });
    const failed = (what: string) => (error: unknown) =>
      deps.log.error({ err: describeError(error) }, `${what} failed`);
    this.flushLoop = new Loop(this.tickMs, () => this.flush(), failed('registry flush'));
    this.watchLoop = new Loop(this.tickMs, () => this.watchOnce(), failed('fence and hang check'));
    this.extendLoop = new Loop(extendEveryMs(deps.config), () => this.inHand.extend(), failed('visibility extension'));
    this.proofLoop = new Loop(deps.config.sampleIntervalSeconds * 1000, () => this.proveIdle(), failed('self-test'));
  }

  /** A consuming worker proves itself by its work (the stall rule), an idle one by a self-test each sample interval. */
  private async proveIdle(): Promise<void> {
    if (this.book.consumingEpoch !== null) return;
    await selfTest(this.deps.config, this.deps.config.sampleIntervalSeconds * 1000, this.deps.log, this.identity);
  }

  /** How often the registry is written and the fence and hung stages are checked. */
  private get tickMs(): number {
    return Math.max(20, Math.min(250, (this.deps.config.sampleIntervalSeconds * 1000) / 4));
  }

  async start(): Promise<void> {
    const me = await readProc(process.pid);
    this.identity = `${process.pid}:${me?.startTicks ?? 0}`;
    const { dataDir, nodeName, taskRetentionSeconds } = this.deps.config;
    await writeJsonAtomic(workerPidPath(dataDir), { pid: process.pid, startTicks: me?.startTicks ?? 0 });
    // Completions past twice the retention were archived by the agent long ago: dropped.
    const damaged = await this.book.load(this.deps.now(), 2 * taskRetentionSeconds * 1000);
    if (damaged !== null) {
      this.deps.log.error({ err: damaged }, 'task registry damaged: copied aside, starting from the manifest');
      const summary = `${nodeName}: local task registry damaged (${damaged}); copied aside.`;
      await this.custody.alert('MANIFEST_DAMAGED', `local-registry-${nodeName}-${this.deps.now()}`, 0, summary);
    }
    // What a worker that died held goes on now, not after its visibility timeout.
    const left = await this.custody.leftovers();
    const role = left.messages.length > 0 ? await this.lease.allowed() : null;
    await this.custody.takeUp(left, role, (message, epoch, sentAt) => this.inHand.begin(message, epoch, sentAt));
    await passHostGate('taken-up');
    await this.flush();
    this.flushLoop.start(this.tickMs);
    this.watchLoop.start(this.tickMs);
    this.extendLoop.start(extendEveryMs(this.deps.config));
    this.proofLoop.start();
    this.pollDone = this.poll();
  }

  /** May this worker act now? (S3 writes of the worker's process are guarded by it too.) */
  mayAct(): boolean {
    return this.lease.mayAct();
  }

  private async watchOnce(): Promise<void> {
    await this.checkFence();
    this.checkHung();
    await this.checkDrain();
  }

  /** Follows a switchover's drain; once nothing is in hand and no receive is open, tells the agent at once. */
  private async checkDrain(): Promise<void> {
    const idle = () => this.inHand.size === 0 && this.receiving === undefined;
    this.book.drained = this.drain.check(await this.lease.allowed(), idle, () => this.receiving?.abort());
    if (this.book.drained !== null) await this.flush();
  }

  /** Self-fencing: a lapsed or lost lease stops the receive and the tasks, and hands their messages back at once. */
  private async checkFence(): Promise<void> {
    // Tasks still running count whatever the poll loop saw first: it may have marked the worker
    // idle already, and a task left to fail its next write would keep its message invisible.
    if ((this.book.consumingEpoch === null && this.inHand.size === 0) || (await this.lease.allowed()) !== null) return;
    this.deps.log.warn({ epoch: this.book.consumingEpoch, tasks: this.inHand.size }, 'lease lapsed or lost: fencing');
    this.book.consumingEpoch = null;
    this.receiving?.abort();
    const abandoned = this.inHand.all();
    for (const r of abandoned) r.abort.abort();
    await Promise.allSettled(abandoned.map((r) => this.custody.handBack(r.message, r.receivedAt)));
    // A parked task has no attempt under way to end it: it ends here.
    for (const r of abandoned.filter((a) => a.parked !== null)) this.inHand.end(r, true);
  }

  /** Stops each task whose stage did no work for `stageHangSeconds` (HangWatch), and gives its message back. */
  private checkHung(): void {
    for (const { run: r, idleMs } of this.hangs.check(this.inHand.all().filter((t) => t.parked === null))) {
      const reason = `stage ${r.task.stage ?? '?'} made no progress for ${Math.round(idleMs / 100) / 10} s: stopped`;
      this.deps.log.warn({ taskId: r.task.taskId, stage: r.task.stage, idleMs: Math.round(idleMs) }, reason);
      r.abort.abort(new Error(reason));
      void this.custody.fail(r.message, reason, this.book.consumingEpoch ?? 0, r.receivedAt);
    }
  }

  private flush(): Promise<void> {
    const running = this.inHand.all();
    this.book.unreachable = this.inHand.waiting ? ['s3'] : [];
    return this.book.flush(running.map((r) => r.task));
  }

  private async poll(): Promise<void> {
    const c = this.deps.config;
    const idleMs = (c.leaseRenewSeconds * 1000) / 4;
    while (!this.stopping.signal.aborted) {
      const role = await this.lease.allowed();
      const free = c.concurrency - this.inHand.size;
      this.book.consumingEpoch = role?.epoch ?? null;
      // What this node holds under its epoch and does not run (a dead worker's messages, ones held
      // before the role came, or a take-up that failed) is carried on with before anything new.
      const mine = role === null ? [] : this.custody.heldUnder(role.epoch, this.inHand.ids()).messages;
      if (role !== null && mine.length > 0) {
        const left = { sameBoot: true, messages: mine };
        const decided = await this.custody.takeUp(left, role, (m, e, sentAt) => this.inHand.begin(m, e, sentAt));
        if (!decided) await this.idle(idleMs);
        continue;
      }
      // While a task waits out an outage, nothing more is taken in: it is tried again in its turn.
      if (role !== null && this.inHand.retryParked(role.epoch)) {
        await this.idle(idleMs);
        continue;
      }
      const step = role?.draining === true ? { kind: 'idle' as const } : pollStep(role, free, mono(), c);
      if (step.kind === 'await-renewal') await sleep(step.ms, this.stopping.signal);
      if (step.kind === 'idle') await this.idle(role === null ? idleMs / 4 : idleMs); // a new primary starts soon
      if (step.kind !== 'receive' || role === null) continue;
      // Not aborted by the stop itself: an answer already on its way (or in the socket of a
      // worker that was frozen) is taken in, so its messages are never left invisible.
      this.receiving = new AbortController();
      const signal = this.receiving.signal;
      try {
        const askedAt = mono();
        const until = AbortSignal.any([signal, this.lease.deadline()]);
        const messages = await this.deps.queue
          .receive(free, step.waitSeconds, c.visibilityTimeoutSeconds, until, role.epoch, clientTimeouts(c).requestMs)
          .finally(() => (this.receiving = undefined));
        const receivedAt = mono();
        if (messages.length === 0) {
          // An empty answer that came back at once (a short poll) waits before the next ask.
          await sleep(Math.max(0, idleMs - (receivedAt - askedAt)), this.stopping.signal);
          continue;
        }
        if (this.stopping.signal.aborted) {
          await this.custody.stoppedWith(messages, askedAt, role.epoch, this.handOn);
          break;
        }
        // The lease may have lapsed, or a drain begun, during the long poll: nothing received then is kept.
        const after = await this.lease.allowed();
        if (after?.epoch !== role.epoch || after.draining === true) {
          await Promise.allSettled(messages.map((m) => this.deps.queue.setVisibility(m.receiptHandle, 0)));
          continue;
        }
        // Visibility runs from when SQS answered, at the earliest when the receive was sent.
        for (const m of messages) this.inHand.begin(m, role.epoch, askedAt);
      } catch (error) {
        if (this.stopping.signal.aborted) break;
        if (signal.aborted) continue;
        this.deps.log.warn({ err: describeError(error) }, 'receive failed; backing off');
        await sleep(idleMs, this.stopping.signal);
      }
    }
  }

  /** Waits `ms`, or until a task ends. */
  private idle(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      void sleep(ms, this.stopping.signal).then(resolve);
    });
  }

  /**
   * What SIGKILL leaves of a worker, for tests that stand one in for a dead worker in-process: every loop stops at
   * once, nothing is handed back or written again; `held.json` and the registry stay; running tasks go on.
   */
  async halt(): Promise<void> {
    this.stopping.abort();
    this.receiving?.abort();
    await Promise.all([this.watchLoop.stop(), this.flushLoop.stop(), this.proofLoop.stop(), this.extendLoop.stop()]);
    this.wake?.();
    await this.pollDone;
  }

  /**
   * Stops taking tasks and flushes the registry. While the node may still consume (a restart, a stop before a
   * handover) its messages stay in `held.json`, checkpointed: the next worker carries on with them at once, where
   * a hand-back would put them behind the whole backlog. Otherwise they go back to the queue.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.handOn = (await this.lease.allowed().catch(() => null)) !== null;
      this.stopping.abort();
      // A long poll with no answer yet is cut after a moment; one answered meanwhile is taken in.
      const cut = setTimeout(() => this.receiving?.abort(), Math.min(1000, 2 * this.tickMs));
      await Promise.all([this.watchLoop.stop(), this.proofLoop.stop(), this.extendLoop.stop()]);
      this.wake?.();
      // Let each task checkpoint its current stage, within half the stop timeout.
      this.draining.abort();
      const grace = new AbortController();
      const graceMs = (this.deps.config.workerStopTimeoutSeconds * 1000) / 2;
      await Promise.race([Promise.allSettled([...this.inHand.attempts]), sleep(graceMs, grace.signal)]);
      grace.abort();
      const inFlight = this.inHand.all();
      for (const r of inFlight) r.abort.abort();
      if (!this.handOn) await Promise.allSettled(inFlight.map((r) => this.custody.handBack(r.message, r.receivedAt)));
      await this.pollDone;
      clearTimeout(cut);
      await this.flushLoop.stop();
      const handedOn = 'stopping under a valid lease: held messages left for the next worker';
      if (this.handOn) this.deps.log.info({ tasks: [...this.custody.held.taskIds()] }, handedOn);
      else for (const r of inFlight) this.custody.held.release(r.task.taskId);
      this.inHand.clear();
      this.book.consumingEpoch = null;
      await this.flush();
      await this.custody.held.flushed();
    })();
    return this.closing;
  }
}
