/**
 * The simulator kernel: what the Twilio simulator (./server.ts) and the AWS simulator
 * (./aws/server.ts) share, so each of them is only its protocol. HTTP plumbing (bounded bodies,
 * held requests, listen and stop), the clock and its tracked timers, the message ledger (memory
 * plus the optional sealed file) and the provider-neutral control API over the fault plans
 * (docs/design.md#local-stack). Nothing here decides what a provider answers.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realClock, type SimulatorClock } from './clock.js';
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
  const stopping = new AbortController();
  let server: ReturnType<typeof createServer> | undefined;
  let stopped: Promise<void> | undefined;
  const cancelTimers = () => {
    for (const cancel of timers) cancel();
    timers.clear();
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
      const listener = createServer((req, res) => {
        handle(req, res).catch(() => {
          log('request failed');
          onError(res);
        });
      });
      server = listener;
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject);
        listener.listen(port, host, () => {
          listener.off('error', reject);
          resolve();
        });
      });
      const bound = (listener.address() as AddressInfo).port;
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
      log(`listening on ${url}`);
      return { url, port: bound };
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        cancelTimers();
        stopping.abort();
        if (server === undefined) resolve();
        else server.close(() => resolve());
        for (const res of held) res.destroy();
        held.clear();
        // Idle keep-alive sockets and held requests alike: close() alone would wait for them.
        server?.closeAllConnections();
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
  readonly mode: string;
  readonly remaining: number | null;
  readonly probability: number;
}

/** The provider-neutral control API (`/_sim/...`) of one simulator. */
export interface ControlApi<P extends PlanLike> {
  /** Answers with a JSON body (each simulator keeps its own content type and headers). */
  readonly reply: (res: ServerResponse, status: number, body: unknown) => void;
  readonly faults: { view(): unknown[]; set(plans: P[]): void; clear(): void };
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
 * and reset, plus the simulator's own routes.
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
