import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from './aws-wire';

/** How a held request or answer ends: it arrives at last (the fault cleared), or is dropped (the cloud stops). */
export type Arrival = 'arrive' | 'drop';

/**
 * The `blackhole-node` fault at the front door: a caller's packets vanish without a reset. Its
 * requests are neither answered nor refused while the fault lasts, and then arrive, like delayed
 * packets, to be applied even if the client gave up meanwhile (the less kind case). Answers
 * leaving for it during the fault wait the same way. `stop` drops whatever is held.
 */
export class Blackholes {
  private readonly holes = new Map<string, { done: Promise<Arrival>; end: (how: Arrival) => void }>();
  private readonly arriving = new WeakSet<FastifyRequest>();
  private stopped = false;
  /** Requests and answers held now. */
  held = 0;

  start(principal: string): void {
    if (this.stopped || this.holes.has(principal)) return;
    let end: (how: Arrival) => void = () => undefined;
    const done = new Promise<Arrival>((resolve) => (end = resolve));
    this.holes.set(principal, { done, end });
  }

  /** The fault clears: what was held arrives. */
  end(principal: string): void {
    if (this.stopped) return;
    this.holes.get(principal)?.end('arrive');
    this.holes.delete(principal);
  }

  has(principal: string): boolean {
    return this.holes.has(principal);
  }

  /** Until the caller's blackhole ends (`arrive`: at once when there is none) or the cloud stops (`drop`). */
  async wait(principal: string): Promise<Arrival> {
    const hole = this.holes.get(principal);
    if (hole === undefined) return 'arrive';
    if (this.stopped) return 'drop';
    this.held++;
    try {
      return await hole.done;
    } finally {
      this.held--;
    }
  }

  /** A request of a blackholed caller reached the door: it has not arrived yet (`arrival`). */
  hold(request: FastifyRequest): void {
    this.arriving.add(request);
  }

  /** For a held request, when it arrives; null for one that was never held. */
  arrival(request: FastifyRequest): Promise<Arrival> | null {
    return this.arriving.has(request) ? this.wait(principalOf(request)) : null;
  }

  /**
   * The cloud stops: everything held is dropped, and so is whatever a blackholed caller sends or
   * is answered from now on, so no connection keeps the cloud (or a test) waiting.
   */
  stop(): void {
    this.stopped = true;
    for (const hole of this.holes.values()) hole.end('drop');
  }
}

/** Drops a request for good: the socket is destroyed and Fastify leaves the reply alone. */
export const drop = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
  request.raw.socket.destroy();
  return reply.hijack();
};

/** Sockets whose writes are held now. */
const holding = new WeakSet<Socket>();

/**
 * Holds the answers to a blackholed caller until its fault clears (they leave then) or the cloud
 * stops (the connection is dropped). What the reply writes to its socket is queued, so the reply
 * completes as usual: awaiting here would leave it unsent when an async handler returns, and
 * Fastify would send it a second time (Node's own end() undoes a cork). Registered after every
 * other onSend hook: what the request did is applied and observed by then.
 */
export const holdAnswers = (app: FastifyInstance, holes: Blackholes): void => {
  app.addHook('onSend', (request, _reply, payload, done) => {
    const principal = principalOf(request);
    const socket = request.raw.socket;
    if (holes.has(principal) && !holding.has(socket)) {
      holding.add(socket);
      const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
      const own = Object.getOwnPropertyDescriptor(socket, 'write');
      const queued: unknown[][] = [];
      socket.write = (...args: unknown[]) => queued.push(args) > 0;
      void holes.wait(principal).then((how) => {
        if (own === undefined) Reflect.deleteProperty(socket, 'write');
        else Object.defineProperty(socket, 'write', own);
        holding.delete(socket);
        if (how === 'drop') socket.destroy();
        else for (const args of queued) write(...args);
      });
    }
    done(null, payload);
  });
};
