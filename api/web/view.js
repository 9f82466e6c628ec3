// The view lifecycle and the page frame: the view on screen and everything it must undo when the
// page changes (listeners, timers, streams, calls in flight), navigation without a reload, and
// where a page shows its errors and its waits.

import { api, isAbort, Problem, sleep, token } from './api.js';
import { h } from './dom.js';
import { t } from './texts.js';

/**
 * What a page registers while it is shown. `leave()` aborts its signal (cutting its calls,
 * streams and waits short), removes its listeners and runs its cleanups, last first.
 */
export class View {
  #controller = new AbortController();
  #cleanups = [];

  /** The signal aborted when the view is left. */
  get signal() { return this.#controller.signal; }

  /** Whether the view was left. */
  get left() { return this.#controller.signal.aborted; }

  /** Runs `fn` when the view is left (at once if it already was). */
  onLeave(fn) {
    if (this.left) fn();
    else this.#cleanups.push(fn);
  }

  /** A listener that lives as long as the view. */
  listen(target, type, fn) {
    target.addEventListener(type, fn, { signal: this.signal });
  }

  /** `setInterval` for as long as the view lives. */
  every(ms, fn) {
    const id = setInterval(fn, ms);
    this.onLeave(() => clearInterval(id));
  }

  /** Waits `ms`; rejects with an AbortError if the view is left first. */
  sleep(ms) { return sleep(ms, this.signal); }

  /** A part of this view that can be left on its own (the live match before its replay). */
  child() {
    const part = new View();
    this.onLeave(() => part.leave());
    return part;
  }

  leave() {
    if (this.left) return;
    this.#controller.abort();
    for (const fn of this.#cleanups.splice(0).reverse()) {
      try { fn(); } catch (e) { console.error('a cleanup failed', e); }
    }
  }

  /**
   * `api()` for this view: cut short when the view is left; a wait the server asks for is
   * shown in `notice` (an element, by default the page's error area) until the call is over.
   */
  call(method, path, body, opts = {}) {
    const { notice, ...rest } = opts;
    return api(method, path, body, { signal: this.signal, onWait: waitNotice(notice), ...rest });
  }

  /** Runs `f` (a visitor's action) after clearing the page's errors; on failure shows the error
   * and answers undefined. */
  async attempt(f, where) {
    clearErrors();
    return this.load(f, where);
  }

  /** Runs `f` (a page's loading); on failure shows the error and answers undefined. */
  async load(f, where) {
    try {
      return await f();
    } catch (e) {
      showError(e, where);
      return undefined;
    }
  }
}

/** The element that shows `onWait`'s news: which answer said to wait, and for how long. */
function waitNotice(where) {
  let note = null;
  return (problem, seconds, attempt, attempts) => {
    if (!problem) { note?.remove(); note = null; return; }
    const place = where || document.getElementById('errors');
    if (!place) return;
    note ??= h('p', { class: 'waiting', role: 'status' });
    note.dataset.code = problem.code || '';
    note.dataset.retryIn = seconds;
    note.replaceChildren(h('strong', { text: problem.title || '' }), ' ',
      t('retry.waiting', { detail: problem.detail || '', seconds, attempt, attempts }));
    if (!note.isConnected) place.append(note);
  };
}

/** A placeholder that says the page is loading; an error shown in the page's area ends it. */
export const loadingNote = (text = t('loading')) => h('p', { class: 'loading', role: 'status' }, text);

/** Shows an error where the page keeps its messages (nothing when the view was left); the
 * page's loading notes go, since what they waited for failed. */
export function showError(e, where = document.getElementById('errors')) {
  if (isAbort(e) || !where) return;
  if (where.id === 'errors') document.querySelectorAll('#main .loading').forEach((note) => note.remove());
  const p = e instanceof Problem ? e.problem : { title: t('error.title'), detail: String(e?.message ?? e) };
  if (!(e instanceof Problem)) console.error(e);
  where.replaceChildren(h('div', { role: 'alert', class: 'problem', 'data-code': p.code || '' },
    h('strong', { text: p.title || '' }), ' ', h('span', { text: p.detail || '' })));
}

export function clearErrors() {
  document.getElementById('errors')?.replaceChildren();
}

/** Fills `<main>` with a page: its heading, its error area, then `content` (null parts left out). */
export function frame(title, ...content) {
  document.title = `${title} · discs`;
  const main = document.getElementById('main');
  main.replaceChildren(h('h1', { text: title, tabindex: -1 }), h('div', { id: 'errors' }), ...content.filter(Boolean));
  return main;
}

let router = () => { location.reload(); };

/** Sets what shows the page of the current address (the entry module's router). */
export function onNavigate(fn) { router = fn; }

/** Opens a page of the site without reloading it (the current view is left first). */
export function navigate(url) {
  history.pushState(null, '', url);
  router({ moved: true });
}

/** Whether the page needs a name first (no token yet); if so it says where to pick one. */
export function needsName() {
  if (token()) return false;
  document.getElementById('main').append(h('p', {}, h('a', { href: '/' }, t('needName'))));
  return true;
}
