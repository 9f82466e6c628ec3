// The API client: the bearer token, the page's language, idempotency keys, problem+json errors,
// retries of the answers that say when to retry (429 and 503 with Retry-After), and the game
// catalogue of GET /v1/games.

import { lang, t } from './texts.js';

/** How many times a call is sent at most when the server keeps saying "retry after". */
export const ATTEMPTS = 6;
/** The longest wait between two attempts, whatever Retry-After says, in seconds. */
const LONGEST_WAIT = 30;

/** The stored token (the device's key), or null. */
/** An API path with every interpolated value encoded as one path segment:
 * path`/v1/matches/${id}/moves`. */
export const path = (strings, ...values) =>
  strings.reduce((out, s, i) => out + s + (i < values.length ? encodeURIComponent(values[i]) : ''), '');

export const token = () => localStorage.getItem('discs.token');

/** The claims of token `tk` (a JWT), or null. */
function claims(tk) {
  if (!tk) return null;
  try {
    return JSON.parse(atob(tk.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
  } catch {
    // Not a JWT: no player to name; the next call with it says why (401).
    return null;
  }
}

/** The player id of the stored token (its `sub` claim), or null. */
export const me = () => claims(token())?.sub ?? null;

/** An admin's token for this browser: the stored one if it is an admin's, else the one pasted on
 * the admin page for this session (its role claim is what the page goes by; the server decides). */
export function adminToken() {
  return [token(), sessionStorage.getItem('discs.admin_token')].find((tk) => claims(tk)?.role === 'admin') ?? null;
}

/** A failed call: its problem document (`title`, `detail`, `status`, `code`), in the page's language. */
export class Problem extends Error {
  constructor(problem) {
    super(problem.detail || problem.title);
    this.problem = problem;
  }

  get status() { return this.problem.status; }

  get code() { return this.problem.code; }
}

/** Whether `e` is a call or a wait cut short because its view was left (nothing to show then). */
export const isAbort = (e) => e?.name === 'AbortError';

/** Resolves after `ms`, or rejects with an AbortError as soon as `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(signal.reason); return; }
    const id = setTimeout(() => { signal?.removeEventListener('abort', stop); resolve(); }, ms);
    const stop = () => { clearTimeout(id); reject(signal.reason); };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** The seconds a `Retry-After` header asks for (seconds or an HTTP date), or null. */
export function retryAfter(res) {
  const value = res.headers.get('Retry-After');
  if (value === null) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * Calls the API and answers its JSON, or throws a `Problem`. A 429 or 503 with `Retry-After` is
 * sent again after that many seconds (with the same Idempotency-Key), up to `attempts` times;
 * `onWait(problem, seconds, attempt, attempts)` says so before each wait, and `onWait(null)`
 * once the call is over. `signal` cuts the call and its waits short.
 */
export async function api(method, path, body, {
  auth = token(), key = false, signal, onWait = () => {}, attempts = ATTEMPTS,
} = {}) {
  const headers = { 'Accept-Language': lang, Accept: 'application/json' };
  if (auth) headers.Authorization = `Bearer ${auth}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (key) headers['Idempotency-Key'] = crypto.randomUUID();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  try {
    for (let attempt = 1; ; attempt += 1) {
      const res = await send(path, { method, headers, body: payload, signal });
      if (res.ok) return await answer(res);
      const problem = await problemOf(res);
      const wait = res.status === 429 || res.status === 503 ? retryAfter(res) : null;
      if (wait === null || attempt >= attempts) throw new Problem(problem);
      const seconds = Math.min(Math.max(wait, 1), LONGEST_WAIT);
      onWait(problem, seconds, attempt + 1, attempts);
      await sleep(seconds * 1000, signal);
    }
  } finally {
    onWait(null);
  }
}

/** `fetch`, with a network failure turned into a problem the page can show. */
export async function send(path, init) {
  try {
    return await fetch(path, init);
  } catch (e) {
    if (isAbort(e)) throw e;
    throw new Problem({ title: t('error.network'), detail: t('error.networkDetail'), code: 'network' });
  }
}

/** A successful answer's JSON. */
async function answer(res) {
  try {
    return await res.json();
  } catch {
    throw new Problem({ title: t('error.title'), detail: t('error.unreadable', { status: res.status }), status: res.status, code: 'unreadable' });
  }
}

/** A failed answer's problem document; one of our own when the body is not one. */
export async function problemOf(res) {
  const fallback = { title: t('error.title'), detail: t('error.http', { status: res.status }), status: res.status, code: 'http' };
  const type = res.headers.get('Content-Type') || '';
  if (!type.includes('json')) return fallback;
  try {
    const doc = await res.json();
    return doc && typeof doc === 'object' ? { ...fallback, ...doc } : fallback;
  } catch {
    return fallback;
  }
}

let games = null;

/**
 * The game catalogue (GET /v1/games, in the page's language), asked once per page load:
 * `{games, limits, byId(id), name(id)}`; `limits` holds the bounds the server keeps (turn limits,
 * name lengths, a tournament's bounds), which the forms take rather than numbers of their own.
 * It is shared by every view, so no view's leaving cuts it short; a failed ask is forgotten, so
 * the next page asks again.
 */
export function catalogue() {
  if (!games) {
    games = api('GET', '/v1/games', undefined, { auth: null }).then((c) => ({
      games: c.games,
      limits: c.limits,
      byId: (id) => c.games.find((g) => g.id === id) || null,
      name: (id) => c.games.find((g) => g.id === id)?.name ?? id,
    }));
    games.catch(() => { games = null; });
  }
  return games;
}
