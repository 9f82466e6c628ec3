// Following an event stream of the API (a match's, a tournament's, the player's own: server-sent
// events read with fetch, so that the request can carry the token and Last-Event-ID),
// reconnecting after a lost connection.

import { isAbort, path, Problem, problemOf, retryAfter, send, sleep, token } from './api.js';
import { t } from './texts.js';

/** The first and the longest wait before reconnecting, in milliseconds. */
const FIRST_DELAY = 250;
const LONGEST_DELAY = 5000;
/** Answers that another attempt will not change: the stream is given up. */
const FINAL = new Set([400, 401, 403, 404, 422]);

/** Follows match `matchId` from `version`: each frame (`{event, match}`) goes to `onFrame`; the
 * rest as for `followStream`. */
export function follow(matchId, version, { onFrame, ...rest }) {
  followStream(path`/v1/matches/${matchId}/stream`, version, { onFrame: (data) => onFrame(data), ...rest });
}

/**
 * Follows the event stream at `url` from `version` (a frame id; `null`: from now on): each
 * frame's data goes to
 * `onFrame(data, event)` (`event`: the frame's name, `message` when it has none).
 * `onConnection(true|false)` tells whether a stream is open (a lost connection is told there);
 * `onProblem(problem)` tells why the server refused a stream or sent an unreadable frame, and
 * `onProblem(null)` that a stream is open again. A lost connection (network, server restart)
 * reconnects with `Last-Event-ID`, backing off to 5 s, or after the `Retry-After` of a 429/503;
 * an answer that retrying cannot change (401, 403, 404…) gives the stream up, and so does a 204 (a
 * stream that has ended, read to its end). Ends when `signal` aborts, or when the page is left
 * (`pagehide`): a stream left to the browser outlives its page, holding one of the few
 * connections the browser opens to the server (each later page then waits for one).
 */
export function followStream(url, version, { onFrame, onConnection = () => {}, onProblem = () => {}, signal: asked }) {
  const ended = new AbortController();
  const end = () => ended.abort();
  if (asked.aborted) end();
  asked.addEventListener('abort', end, { once: true });
  addEventListener('pagehide', end, { once: true });
  const { signal } = ended;
  let last = version;
  (async () => {
    let delay = FIRST_DELAY;
    while (!signal.aborted) {
      let wait = delay;
      try {
        const headers = { Authorization: `Bearer ${token()}`, Accept: 'text/event-stream' };
        if (last !== null) headers['Last-Event-ID'] = String(last);
        const res = await send(url, { headers, signal });
        // 204: a stream that has ended and was read to its end (a finished tournament's).
        if (res.status === 204) {
          onConnection(false);
          return;
        }
        if (!res.ok) {
          const problem = await problemOf(res);
          onConnection(false);
          onProblem(problem);
          if (FINAL.has(res.status)) return;
          const after = retryAfter(res);
          if (after !== null) wait = after * 1000;
        } else {
          onConnection(true);
          onProblem(null);
          delay = FIRST_DELAY;
          wait = delay;
          // The frames that committed while no stream was open come first: the server replays them.
          for await (const frame of frames(res.body)) {
            // A frame that arrives with those before it once the follower is done is not told.
            if (signal.aborted) return;
            if (frame.id !== null) last = frame.id;
            onFrame(frame.data, frame.event);
          }
          if (signal.aborted) return;
          onConnection(false);
        }
      } catch (e) {
        if (isAbort(e) || signal.aborted) return;
        onConnection(false);
        if (!(e instanceof Problem)) console.warn('the stream broke off', e);
        // A lost connection is the connection line's news; a refused or unreadable one is a problem.
        if (e instanceof Problem && e.code !== 'network') onProblem(e.problem);
      }
      try {
        await sleep(wait, signal);
      } catch (e) {
        if (isAbort(e)) return;
        throw e;
      }
      delay = Math.min(delay * 2, LONGEST_DELAY);
    }
  })();
}

/** The frames of an event stream's body: `{id, event, data}` with `data` parsed as JSON. */
async function* frames(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id = null;
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        // An id as sent (a version, or the player stream's `<tx>.<position>`).
        if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      if (data) yield { id, event, data: parse(data) };
    }
  }
}

function parse(data) {
  try {
    return JSON.parse(data);
  } catch {
    throw new Problem({ title: t('error.title'), detail: t('error.unreadableFrame'), code: 'unreadable' });
  }
}
