/**
 * The simulator kernel: what the Twilio simulator (./server.ts) and the AWS simulator
 * (./aws/server.ts) share, so each of them is only its protocol. HTTP plumbing (bounded bodies,
 * held requests, listen and stop), the clock and its tracked timers, the message ledger (memory
 * plus the optional sealed file) and the provider-neutral control API over the fault plans
 * (docs/design.md#local-stack). Nothing here decides what a provider answers.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock, type SimulatorClock } from './clock.js';
import { type CatalogueMode, modesWhere } from './fault-catalogue.js';
import type { LedgerFile } from './ledger-file.js';

/** A keyed destination fingerprint, per simulator run: correlates within a run, cannot be reversed by hashing every number. */
export function defaultFingerprinter(): (value: string) => string {
  const key = randomBytes(32);
  return (value) => `sim1:${createHmac('sha256', key).update(value).digest('hex').slice(0, 32)}`;
}

/** The request body as text, or null when it exceeds `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The clock, timers, held requests and listener of one simulator. */
export interface SimulatorKernel {
  readonly clock: SimulatorClock;
  /** The clock's now as ISO 8601. */
  isoNow(): string;
  readonly log: (line: string) => void;
  /** Aborted by {@link SimulatorKernel.stop}: outgoing requests (callbacks, events) pass it. */
  readonly stopping: AbortSignal;
  /** Runs `run` after `ms` on the clock; the timer is cancelled by reset and stop. */
  later(ms: number, run: () => void): void;
  /** Cancels every pending timer. */
  cancelTimers(): void;
  /**
   * The `down` fault: closes the listener for `ms` on the clock, so a new connection is refused
   * (ECONNREFUSED: nothing of a request is ever written, as in a real outage); idle keep-alive
   * connections are closed, answers in progress close their connection, and a request that still
   * arrives on an old connection has its socket destroyed unread. Then listens again on the same
   * port and calls `onUp`. Held requests stay held. A no-op while already down or not listening.
   */
  down(ms: number, onUp: () => void): void;
  /** Whether the listener is closed by {@link SimulatorKernel.down}. */
  isDown(): boolean;
  /** Resolves once the listener accepts connections (at once when it does). */
  whenUp(): Promise<void>;
  /** Never answers `res`: the socket stays open until the client gives up or stop() destroys it. */
  hold(res: ServerResponse, what: string): void;
  heldCount(): number;
  /**
   * Listens on `host:port` (0 = a free port). `handle` answers each request; a rejection (a client
   * that vanished mid-request, or a bug) goes to `onError`, which answers if it still can.
   */
  listen(
    handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
    onError: (res: ServerResponse) => void,
    port: number,
    host: string,
  ): Promise<{ readonly url: string; readonly port: number }>;
  /** Cancels timers, aborts outgoing requests, destroys held and idle sockets. Idempotent. */
  stop(): Promise<void>;
}

/** A kernel on `clock` (default the real one) that logs through `log`. */
export function createKernel(
  log: (line: string) => void,
  clock: SimulatorClock = realClock,
): SimulatorKernel {
  const timers = new Set<() => void>();
  const held = new Set<ServerResponse>();
  /** Answers not finished yet, held ones included: `down` closes their connections. */
  const inFlight = new Set<ServerResponse>();
  const stopping = new AbortController();
  let server: Server | undefined;
  /** Listeners closed by `down`, kept for their connections (held requests) until stop. */
  const retired: Server[] = [];
  let listenOn: { readonly port: number; readonly host: string } | undefined;
  let onRequest: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let outage: { readonly cancel: () => void; readonly up: Promise<void> } | undefined;
  let stopped: Promise<void> | undefined;
  const cancelTimers = () => {
    for (const cancel of timers) cancel();
    timers.clear();
  };
  const bind = (listener: Server, port: number, host: string) =>
    new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, host, () => {
        listener.off('error', reject);
        resolve();
      });
    });
  const newListener = () => {
    const request = onRequest;
    if (request === undefined) throw new Error('listen() first');
    return createServer((req, res) => {
      // A request on a connection opened before `down`: dropped unread, as a dead host drops it.
      if (outage !== undefined) {
        req.socket.destroy();
        return;
      }
      inFlight.add(res);
      res.on('close', () => inFlight.delete(res));
      request(req, res);
    });
  };
  /** Listens again on the same port after an outage; retries while the port is taken. */
  const relisten = (resolveUp: () => void, onUp: () => void) => {
    if (stopping.signal.aborted || listenOn === undefined) return;
    const { port, host } = listenOn;
    const listener = newListener();
    bind(listener, port, host).then(
      () => {
        if (stopping.signal.aborted) {
          listener.close();
          return;
        }
        server = listener;
        outage = undefined;
        log('up again');
        onUp();
        resolveUp();
      },
      () => {
        log('could not listen again; retrying');
        const cancel = clock.setTimer(() => relisten(resolveUp, onUp), 1_000);
        if (outage !== undefined) outage = { cancel, up: outage.up };
      },
    );
  };
  return {
    clock,
    isoNow: () => new Date(clock.now()).toISOString(),
    log,
    stopping: stopping.signal,
    later(ms, run) {
      const cancel = clock.setTimer(
        () => {
          timers.delete(cancel);
          run();
        },
        Math.max(0, ms),
      );
      timers.add(cancel);
    },
    cancelTimers,
    hold(res, what) {
      held.add(res);
      res.on('close', () => held.delete(res));
      log(`holding ${what}`);
    },
    heldCount: () => held.size,
    async listen(handle, onError, port, host) {
      onRequest = (req, res) => {
        handle(req, res).catch(() => {
          log('request failed');
          onError(res);
        });
      };
      const listener = newListener();
      server = listener;
      await bind(listener, port, host);
      const bound = (listener.address() as AddressInfo).port;
      listenOn = { port: bound, host };
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
      log(`listening on ${url}`);
      return { url, port: bound };
    },
    down(ms, onUp) {
      const listener = server;
      if (listener === undefined || outage !== undefined || stopping.signal.aborted) return;
      server = undefined;
      retired.push(listener);
      listener.close();
      listener.closeIdleConnections();
      for (const res of inFlight) {
        if (!res.headersSent) res.setHeader('connection', 'close');
        else if (!held.has(res)) {
          const socket = res.socket;
          res.once('finish', () => socket?.end());
        }
      }
      let resolveUp = () => {};
      const up = new Promise<void>((resolve) => {
        resolveUp = resolve;
      });
      const cancel = clock.setTimer(() => relisten(resolveUp, onUp), Math.max(0, ms));
      outage = { cancel, up };
      log(`down for ${ms} ms`);
    },
    isDown: () => outage !== undefined,
    whenUp: () => outage?.up ?? Promise.resolve(),
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        cancelTimers();
        outage?.cancel();
        stopping.abort();
        if (server === undefined) resolve();
        else server.close(() => resolve());
        for (const res of held) res.destroy();
        held.clear();
        // Idle keep-alive sockets and held requests alike: close() alone would wait for them.
        server?.closeAllConnections();
        // Closed by `down` already: only their connections are left.
        for (const old of retired) old.closeAllConnections();
        log('stopped');
      });
      return stopped;
    },
  };
}

/** The accepted messages of a simulator: in memory, and in the ledger file when one is kept. */
export class MessageLedger<M> {
  readonly all: M[] = [];
  private readonly byId = new Map<string, M>();
  /** The messages the file held at start (already in {@link all}). */
  readonly reloaded: readonly M[];

  constructor(
    private readonly idOf: (message: M) => string,
    private readonly file: LedgerFile<M> | undefined,
  ) {
    this.reloaded = file?.load() ?? [];
    for (const message of this.reloaded) this.remember(message);
  }

  get(id: string): M | undefined {
    return this.byId.get(id);
  }

  /** Adds an accepted message and writes it. */
  add(message: M): void {
    this.remember(message);
    this.persist(message);
  }

  /** Writes a changed message again: the file's last line of a message wins. */
  persist(message: M): void {
    this.file?.append(message);
  }

  clear(): void {
    this.file?.clear();
    this.all.length = 0;
    this.byId.clear();
  }

  private remember(message: M): void {
    this.all.push(message);
    this.byId.set(this.idOf(message), message);
  }
}

/** What the control API needs of a simulator's fault plans. */
interface PlanLike {
  readonly mode: CatalogueMode;
  readonly remaining: number | null;
  readonly probability: number;
}

/** The fault catalogue's outages (`down`, `brownout`): plans that end on their own (./fault-catalogue.ts). */
export const OUTAGE_MODES: readonly CatalogueMode[] = modesWhere('lane', 'outage');

/** The provider-neutral control API (`/_sim/...`) of one simulator. */
export interface ControlApi<P extends PlanLike> {
  /** Answers with a JSON body (each simulator keeps its own content type and headers). */
  readonly reply: (res: ServerResponse, status: number, body: unknown) => void;
  readonly faults: {
    view(): unknown[];
    set(plans: P[]): void;
    clear(): void;
    /** Removes one plan (an outage that ended); a no-op when it is gone already. */
    drop(plan: P): void;
  };
  /** How long an outage plan lasts, in ms from when it is set (its `ms`). */
  readonly lasts: (plan: P) => number;
  readonly parsePlans: (
    input: unknown,
  ) => { readonly ok: true; readonly plans: P[] } | { readonly ok: false; readonly message: string };
  /** Accepted messages, for `/_sim/health`. */
  readonly messageCount: () => number;
  /** Every send request, in arrival order (`/_sim/requests`). */
  readonly requests: readonly unknown[];
  /** Clears the simulator's own state on `POST /_sim/reset` (the kernel clears faults and timers). */
  readonly reset: () => void;
  /** Further routes by `METHOD /path` (the ledger view, receipts, configuration). */
  readonly routes: Readonly<
    Record<string, (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>>
  >;
  readonly maxBodyBytes: number;
}

/** Parses a JSON control body; undefined when it is not JSON. */
export async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  try {
    return JSON.parse((await readBody(req, maxBytes)) ?? '');
  } catch {
    return undefined;
  }
}

/** Whether a path is the control API's. */
export const isControlPath = (pathname: string) => pathname === '/_sim' || pathname.startsWith('/_sim/');

/**
 * The control API's handler: health, requests, fault plans (GET, POST replacing them, DELETE)
 * and reset, plus the simulator's own routes. An outage plan ends on its own after its `ms`; a
 * `down` plan closes the listener once its answer is written, control API included (nothing can
 * reach the simulator until it is up again: `SimulatorKernel.down`).
 */
export function controlHandler<P extends PlanLike>(kernel: SimulatorKernel, api: ControlApi<P>) {
  const { reply, faults } = api;
  const setFaults = async (req: IncomingMessage, res: ServerResponse) => {
    const input = await readJson(req, api.maxBodyBytes);
    if (input === undefined)
      return reply(res, 400, { code: 'invalid_fault_plan', message: 'body must be JSON' });
    const parsed = api.parsePlans(input);
    if (!parsed.ok) return reply(res, 400, { code: 'invalid_fault_plan', message: parsed.message });
    faults.set(parsed.plans);
    kernel.log(
      `faults set: ${parsed.plans.map((p) => `${p.mode}x${p.remaining ?? 'inf'}@${p.probability}`).join(', ')}`,
    );
    const down = parsed.plans.find((p) => p.mode === 'down');
    for (const plan of parsed.plans) {
      if (plan === down || !OUTAGE_MODES.includes(plan.mode)) continue;
      kernel.later(api.lasts(plan), () => {
        faults.drop(plan);
        kernel.log(`${plan.mode} ended`);
      });
    }
    // Closed before the answer is written: idle connections are gone by the time the client reads
    // it, and this one closes with it (an answer in flight when the listener closes).
    if (down !== undefined) kernel.down(api.lasts(down), () => faults.drop(down));
    return reply(res, 200, { faults: faults.view() });
  };
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    const own = api.routes[route];
    if (own !== undefined) return own(req, res, url);
    switch (route) {
      case 'GET /_sim/health':
        return reply(res, 200, {
          status: 'ok',
          messages: api.messageCount(),
          held_requests: kernel.heldCount(),
        });
      case 'GET /_sim/requests':
        return reply(res, 200, { requests: api.requests });
      case 'GET /_sim/faults':
        return reply(res, 200, { faults: faults.view() });
      case 'POST /_sim/faults':
        return setFaults(req, res);
      case 'DELETE /_sim/faults':
        faults.clear();
        kernel.log('faults cleared');
        return reply(res, 200, { faults: [] });
      case 'POST /_sim/reset':
        api.reset();
        faults.clear();
        kernel.cancelTimers();
        kernel.log('reset');
        return reply(res, 200, { status: 'reset' });
      default:
        return reply(res, 404, { code: 'not_found', message: `no control route ${route}` });
    }
  };
}
