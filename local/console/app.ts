/**
 * The console page's script (runs in the browser; served compiled by route.ts). It reads only:
 * the public API (`/v1/notifications/...`) and the console's `/console/api/...` lists (unknown,
 * waiting, circuits). Everything it shows is set
 * with `textContent`, never as HTML.
 *
 * The project compiles without the DOM library, so the few browser APIs used here are declared
 * below, locally to this module. The view shapes are the API's own (type-only import, erased
 * when compiled).
 */

import type { EvidenceView, NotificationView, WaitingForView } from '../../shared/usecases/view.js';

interface El {
  textContent: string | null;
  className: string;
  hidden: boolean;
  title: string;
  type: string;
  readonly dataset: Record<string, string | undefined>;
  readonly style: { setProperty(name: string, value: string): void };
  append(...nodes: Array<El | string>): void;
  replaceChildren(...nodes: Array<El | string>): void;
  addEventListener(type: string, listener: (event: { preventDefault(): void }) => void): void;
  setAttribute(name: string, value: string): void;
}
interface Field extends El {
  value: string;
  focus(): void;
}
declare const document: {
  getElementById(id: string): El | null;
  createElement(tag: string): El;
};
declare const window: {
  readonly location: { readonly search: string; readonly pathname: string };
  readonly history: { replaceState(data: unknown, unused: string, url: string): void };
};

interface UnknownItem {
  readonly idempotency_key: string;
  readonly checks: number;
  readonly unknown_since: string | null;
  readonly next_check_at: string | null;
  readonly reason_detail: string | null;
  readonly waiting_for: WaitingForView | null;
}

interface WaitingItem {
  readonly idempotency_key: string;
  readonly state: string;
  readonly reason_detail: string | null;
  readonly waiting_for: WaitingForView;
}

/** A provider's circuit, as `/console/api/circuits` lists it (docs/providers/failover.md#circuit). */
interface CircuitItem {
  readonly provider: string;
  readonly state: 'closed' | 'open' | 'half_open';
  readonly since: string | null;
}

function byId<T extends El = El>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing`);
  return el as T;
}

function el(tag: string, className?: string, text?: string): El {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const kind = byId<Field>('kind');
const query = byId<Field>('query');
const message = byId('message');

function say(text: string, isError = false): void {
  message.textContent = text;
  message.className = isError ? 'message error' : 'message';
}

class NotFound extends Error {}

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: 'application/json' } });
  if (response.status === 404) throw new NotFound(path);
  if (!response.ok) throw new Error(`${response.status} from ${path}`);
  return (await response.json()) as T;
}

/** `+1.234s`, `+2m 05s`: time since admission. */
function offset(ms: number): string {
  if (ms < 60_000) return `+${(ms / 1000).toFixed(3)}s`;
  const s = Math.floor(ms / 1000);
  return `+${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** `45s`, `3m 10s`, `2h 05m`: an age. */
function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function clock(isoTime: string): string {
  return isoTime.slice(11, 23);
}

/** `second_absence_read until 12:00:10.000 (in 4s)`; `, then expires` when expiry ends the wait. */
function waitingText(waiting: WaitingForView, now: number): string {
  const left = Date.parse(waiting.until) - now;
  const when = left > 0 ? `in ${age(left)}` : `${age(-left)} ago`;
  return `${waiting.what} until ${clock(waiting.until)} (${when})${waiting.bounded_by_expiry ? ', then expires' : ''}`;
}

/** The lists' "waiting for" cell: what on one line, until when below (the next check when no answer is known). */
function waitingCell(item: Pick<UnknownItem, 'waiting_for' | 'next_check_at'>, now: number): El {
  const td = el('td', 'waiting');
  const waiting = item.waiting_for;
  if (waiting === null) {
    td.textContent = item.next_check_at ? `next check ${clock(item.next_check_at)}` : '-';
    return td;
  }
  const text = waitingText(waiting, now);
  td.append(el('span', 'what', waiting.what), ' ', el('span', 'until', text.slice(waiting.what.length + 1)));
  return td;
}

function renderFacts(view: NotificationView): void {
  const facts: Array<[string, string]> = [
    ['event_id', view.event_id],
    ['last reason', view.last_reason ?? '-'],
    ['reason detail', view.reason_detail ?? '-'],
    ['waiting for', view.waiting_for ? waitingText(view.waiting_for, Date.now()) : 'nothing (final)'],
    ['attempts', String(view.attempts)],
    ['template', `${view.template} (${view.channel})`],
    ['created', view.created_at],
    ['updated', view.updated_at],
    ['expires', view.expires_at],
    [
      'provider',
      view.provider.message_id ? `${view.provider.name} · ${view.provider.message_id}` : view.provider.name,
    ],
    ['destination', view.destination_fingerprint],
  ];
  byId('facts').replaceChildren(
    ...facts.flatMap(([name, value]) => {
      const dd = el('dd', '', value);
      dd.dataset.fact = name.replaceAll(' ', '_');
      return [el('dt', '', name), dd];
    }),
  );
}

/** The horizontal track: one mark per record, placed by time between admission and the last record. */
function renderTrack(evidence: readonly EvidenceView[]): void {
  const track = byId('track');
  const times = evidence.map((e) => Date.parse(e.at));
  const start = times[0] ?? 0;
  const span = Math.max(1, (times.at(-1) ?? start) - start);
  const marks = evidence.map((e, i) => {
    const mark = el('span', 'mark');
    mark.dataset.state = e.to_state;
    mark.title = `${e.to_state} (${e.reason}) ${offset((times[i] ?? start) - start)}`;
    mark.style.setProperty('left', `${(((times[i] ?? start) - start) / span) * 100}%`);
    return mark;
  });
  const startTick = el('span', 'tick start', clock(evidence[0]?.at ?? ''));
  startTick.style.setProperty('left', '0%');
  const endTick = el('span', 'tick end', `${offset(span)}  ${clock(evidence.at(-1)?.at ?? '')}`);
  endTick.style.setProperty('left', '100%');
  track.replaceChildren(...marks, startTick, ...(evidence.length > 1 ? [endTick] : []));
}

function renderTimeline(evidence: readonly EvidenceView[]): void {
  const start = Date.parse(evidence[0]?.at ?? '');
  const items = evidence.map((e) => {
    const li = el('li', 'entry');
    li.dataset.state = e.to_state;
    li.dataset.seq = String(e.seq);
    const when = el('div', 'when');
    const time = el('time', '', e.at);
    time.setAttribute('datetime', e.at);
    when.append(el('span', 'offset', offset(Date.parse(e.at) - start)), time, el('span', '', `#${e.seq}`));
    const what = el('div', 'what');
    const to = el('span', 'badge to', e.to_state);
    to.dataset.state = e.to_state;
    what.append(el('span', 'from', e.from_state ?? 'new'), ' → ', to);
    const why = el('div', 'why');
    const details = [`reason ${e.reason}`, `actor ${e.actor}`, `attempt ${e.attempt}`];
    if (e.reason_detail) details.splice(1, 0, `detail ${e.reason_detail}`);
    if (e.provider_message_id) details.push(`message ${e.provider_message_id}`);
    why.textContent = details.join(' · ');
    li.append(el('span', 'dot'), when, what, why);
    return li;
  });
  byId('timeline').replaceChildren(...items);
}

/** Shows one notification: its view and its evidence timeline. */
async function showKey(key: string): Promise<void> {
  say(`Loading ${key}…`);
  const path = `/v1/notifications/${encodeURIComponent(key)}`;
  try {
    const [view, evidence] = await Promise.all([
      getJson<NotificationView>(path),
      getJson<{ transitions: EvidenceView[] }>(`${path}/evidence`),
    ]);
    byId('detail-key').textContent = view.idempotency_key;
    const state = byId('state');
    state.textContent = view.state;
    state.dataset.state = view.state;
    renderFacts(view);
    renderTrack(evidence.transitions);
    renderTimeline(evidence.transitions);
    byId('detail').hidden = false;
    say(`${evidence.transitions.length} evidence records`);
  } catch (error) {
    byId('detail').hidden = true;
    say(error instanceof NotFound ? `No notification with key ${key}` : String(error), true);
  }
}

/** Lists the notifications of one business event; the first is shown. */
async function showEvent(eventId: string): Promise<void> {
  say(`Loading event ${eventId}…`);
  try {
    const { items } = await getJson<{ items: NotificationView[] }>(
      `/v1/notifications?event_id=${encodeURIComponent(eventId)}`,
    );
    byId('matches-event').textContent = eventId;
    byId('match-list').replaceChildren(
      ...items.map((view) => {
        const li = el('li');
        const button = el('button', '', view.idempotency_key);
        button.type = 'button';
        button.addEventListener('click', () => void showKey(view.idempotency_key));
        const badge = el('span', 'badge', view.state);
        badge.dataset.state = view.state;
        li.append(button, ' ', badge);
        return li;
      }),
    );
    byId('matches').hidden = items.length === 0;
    const first = items[0];
    if (first) await showKey(first.idempotency_key);
    else {
      byId('detail').hidden = true;
      say(`No notification for event ${eventId}`, true);
    }
  } catch (error) {
    say(String(error), true);
  }
}

function search(): void {
  const value = query.value.trim();
  if (!value) return;
  const param = kind.value === 'event' ? 'event_id' : 'key';
  window.history.replaceState(null, '', `${window.location.pathname}?${param}=${encodeURIComponent(value)}`);
  if (kind.value === 'event') void showEvent(value);
  else {
    byId('matches').hidden = true;
    void showKey(value);
  }
}

let unknownItems: UnknownItem[] = [];

function renderUnknown(): void {
  const now = Date.now();
  byId('unknown-count').textContent = String(unknownItems.length);
  byId('unknown-empty').hidden = unknownItems.length > 0;
  byId('unknown-rows').replaceChildren(
    ...unknownItems.map((item) => {
      const tr = el('tr');
      tr.dataset.key = item.idempotency_key;
      const keyCell = el('td');
      keyCell.append(keyButton(item.idempotency_key));
      const since = item.unknown_since ? Date.parse(item.unknown_since) : undefined;
      tr.append(
        keyCell,
        el('td', 'age', since === undefined ? '-' : age(now - since)),
        el('td', '', String(item.checks)),
        waitingCell(item, now),
        el('td', 'detail', item.reason_detail ?? '-'),
      );
      return tr;
    }),
  );
}

let waitingItems: WaitingItem[] = [];

/** A key that opens its timeline when clicked. */
function keyButton(key: string): El {
  const button = el('button', '', key);
  button.type = 'button';
  button.addEventListener('click', () => {
    kind.value = 'key';
    query.value = key;
    search();
  });
  return button;
}

function renderWaiting(): void {
  const now = Date.now();
  byId('waiting-count').textContent = String(waitingItems.length);
  byId('waiting-empty').hidden = waitingItems.length > 0;
  byId('waiting-rows').replaceChildren(
    ...waitingItems.map((item) => {
      const tr = el('tr');
      tr.dataset.key = item.idempotency_key;
      const keyCell = el('td');
      keyCell.append(keyButton(item.idempotency_key));
      const state = el('span', 'badge', item.state);
      state.dataset.state = item.state;
      const stateCell = el('td');
      stateCell.append(state);
      const waiting = waitingCell({ waiting_for: item.waiting_for, next_check_at: null }, now);
      if (item.reason_detail) waiting.append(' ', el('span', 'detail', item.reason_detail));
      tr.append(keyCell, stateCell, waiting);
      return tr;
    }),
  );
}

async function loadWaiting(): Promise<void> {
  try {
    waitingItems = (await getJson<{ items: WaitingItem[] }>('/console/api/waiting')).items;
    renderWaiting();
  } catch {
    byId('waiting-count').textContent = '?';
  }
}

async function loadUnknown(): Promise<void> {
  try {
    unknownItems = (await getJson<{ items: UnknownItem[] }>('/console/api/unknown')).items;
    renderUnknown();
  } catch {
    byId('unknown-count').textContent = '?';
  }
}

let circuitItems: CircuitItem[] = [];

/** Each provider's circuit, in the order the sender tries them: a brownout shows here as `open`. */
function renderCircuits(): void {
  const now = Date.now();
  byId('circuits-empty').hidden = circuitItems.length > 0;
  byId('circuit-rows').replaceChildren(
    ...circuitItems.map((item) => {
      const tr = el('tr');
      tr.dataset.provider = item.provider;
      const state = el('span', 'badge', item.state);
      state.dataset.state = `circuit_${item.state}`;
      const stateCell = el('td');
      stateCell.append(state);
      const since = item.since === null ? '-' : `${clock(item.since)} (${age(now - Date.parse(item.since))})`;
      tr.append(el('td', '', item.provider), stateCell, el('td', item.since === null ? '' : 'age', since));
      return tr;
    }),
  );
}

async function loadCircuits(): Promise<void> {
  try {
    circuitItems = (await getJson<{ items: CircuitItem[] }>('/console/api/circuits')).items;
    renderCircuits();
  } catch {
    byId('circuits-empty').hidden = false;
    byId('circuits-empty').textContent = 'Circuits could not be read.';
  }
}

byId('search-form').addEventListener('submit', (event) => {
  event.preventDefault();
  search();
});

const params = new URLSearchParams(window.location.search);
const initialKey = params.get('key');
const initialEvent = params.get('event_id');
if (initialKey) {
  query.value = initialKey;
  search();
} else if (initialEvent) {
  kind.value = 'event';
  query.value = initialEvent;
  search();
} else query.focus();

void loadUnknown();
void loadWaiting();
void loadCircuits();
setInterval(() => void loadCircuits(), 2000);
setInterval(renderCircuits, 1000);
setInterval(() => void loadUnknown(), 5000);
setInterval(() => void loadWaiting(), 5000);
setInterval(renderUnknown, 1000);
setInterval(renderWaiting, 1000);
