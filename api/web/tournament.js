// A tournament (`/tournaments/<id>`): its name, format and status, the countdown to its start
// (or to an arena's end) on the server's clock, join / withdraw / pause / resume as its status
// allows, the live standings (streak, fire, tie-breaks), the pairings of a round (an arena's
// latest ones) and the podium once it is over. Its event stream keeps the page up to date, and
// a pairing that names the reader (or their game under way when the page opens) opens that game.

import { catalogue, isAbort, me, path, Problem } from './api.js';
import { field, h, mmss, select } from './dom.js';
import { followStream } from './stream.js';
import { t } from './texts.js';
import { when } from './tournaments.js';
import { frame, loadingNote, navigate, showError } from './view.js';

/** The first and the longest wait between two reads of the standings while the projection has
 * not yet read the events the page has seen, in milliseconds. */
const CATCH_UP_FIRST = 250;
const CATCH_UP_LONGEST = 5000;
/** The lines of the standings shown. */
const STANDINGS_LINES = 100;
/** An arena's latest pairings shown. */
const LATEST_PAIRINGS = 20;
/** The medals of the podium. */
const MEDALS = ['🥇', '🥈', '🥉'];

/** `m:ss` under an hour, `h:mm:ss` beyond, with the days first beyond a day. */
function countdown(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 3600) return mmss(ms);
  const p = (n) => String(n).padStart(2, '0');
  const time = `${Math.floor((s % 86400) / 3600)}:${p(Math.floor((s % 3600) / 60))}:${p(s % 60)}`;
  const days = Math.floor(s / 86400);
  return days ? t('tournament.days', { days, time }) : time;
}

/** `fn` run one call at a time: a call while it runs makes it run once more afterwards. */
function serial(fn) {
  let running = false;
  let again = false;
  return async () => {
    if (running) { again = true; return; }
    running = true;
    try {
      do { again = false; await fn(); } while (again);
    } finally {
      running = false;
    }
  };
}

/** Whether match `id` is still being played (one that ended only waits for its result). */
async function underWay(view, id) {
  if (!id) return false;
  try {
    return (await view.call('GET', path`/v1/matches/${id}`)).status !== 'finished';
  } catch (e) {
    if (!isAbort(e)) showError(e);
    return false;
  }
}

/** A score: whole, or with its half. */
const points = (x) => String(Math.round(x * 100) / 100);

export async function show(view, id) {
  frame(t('tournament.title'), loadingNote());
  const base = path`/v1/tournaments/${id}`;
  let tour = await view.load(() => view.call('GET', base));
  if (!tour || view.left) return;
  // The reader's game under way opens at once.
  if (await underWay(view, tour.me?.match_id)) { navigate(`/matches/${tour.me.match_id}`); return; }
  let games = null;
  try {
    games = await catalogue();
  } catch (e) {
    // The game's id stands for its name; the page says why.
    showError(e);
  }
  if (view.left) return;
  /** The server's clock minus the browser's, as of the last read of the tournament. */
  let offset = Date.parse(tour.server_time) - Date.now();
  let standings = null;
  /** The stream version the standings should have reached. */
  let wanted = tour.version;
  let round = null;
  const names = new Map();
  const nameOf = (player) => names.get(player) ?? '?';

  const facts = h('dl', { id: 'tournament-facts' });
  const status = h('p', { id: 'tournament-status' });
  const clock = h('p', { id: 'countdown', class: 'clock' });
  const place = h('p', { id: 'my-place' });
  const code = h('p', { id: 'tournament-code' });
  const actions = h('div', { id: 'tournament-actions', class: 'controls' });
  const conn = h('p', { id: 'connection', class: 'connection' });
  const streamProblem = h('div', { id: 'stream-problem' });
  const podium = h('section', { id: 'podium', hidden: true });
  const table = h('div', { class: 'out', role: 'region', tabindex: 0, 'aria-label': t('tournament.standings') }, loadingNote());
  const standingsSection = h('section', { id: 'standings' }, h('h2', { text: t('tournament.standings') }), table);
  const pairingsList = h('div', { id: 'pairings-list' });
  const roundPick = h('div', { class: 'slot' });
  const pairingsSection = h('section', { id: 'pairings' }, h('h2', { text: t('tournament.pairings') }), roundPick, pairingsList);

  const act = (action, url = `${base}/${action}`) => async () => {
    const done = await view.attempt(() => view.call('POST', url, undefined, { key: true }));
    if (done) refreshView();
  };
  const button = (action, text, onclick = act(action)) => h('button', { type: 'button', id: `tournament-${action}`, 'data-action': action, onclick }, text);
  /** Joining a private tournament one is not in: its code to type (the page shows it to its
   * players only). One form, kept while the page is drawn again, with what is typed in it. */
  let joinForm = null;
  const codeForm = () => {
    if (joinForm) return joinForm;
    const form = h('form', { id: 'tournament-join-code' },
      field(t('tournaments.codeLabel'), h('input', { name: 'code', required: true, maxlength: 32, autocomplete: 'off' })),
      h('button', { type: 'submit' }, t('tournament.join')));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      act('join', path`/v1/tournaments/join/${form.elements.code.value.trim()}`)();
    });
    joinForm = form;
    return form;
  };

  const renderHead = () => {
    document.title = `${tour.name} · discs`;
    const length = tour.format === 'arena' ? t('tournament.minutesOf', { n: tour.minutes })
      : tour.round > 0 ? t('tournament.roundOf', { round: tour.round, rounds: tour.rounds })
        : t('tournament.roundsOf', { n: tour.rounds });
    const limit = tour.turn_seconds === null ? t('setting.turn_seconds.null') : t('setting.turn_seconds.n', { n: tour.turn_seconds });
    facts.replaceChildren(...[
      [t('play.game'), games ? games.name(tour.game) : tour.game],
      [t('tournament.format'), `${t(`tournament.format.${tour.format}`)} · ${length}`],
      [t('tournament.startsAt'), when(tour.starts_at)],
      tour.ends_at && [t('tournament.endsAt'), when(tour.ends_at)],
      [t('tournament.players'), t('tournament.playersOf', { n: tour.players, max: tour.max_players })],
      [t('tournament.games'), `${tour.rated ? t('tournament.rated') : t('tournament.casual')} · ${t('setting.turn_seconds')}: ${limit}`],
    ].filter(Boolean).flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })]));
    status.dataset.status = tour.status;
    status.replaceChildren(h('strong', { text: `${t('tournament.status')}: ` }), t(`tournament.status.${tour.status}`));
    code.replaceChildren(...(tour.code ? [t('tournaments.code'), ' ', h('strong', { text: tour.code })] : []));
    const mine = tour.me?.status ?? null;
    const going = tour.status === 'open' || tour.status === 'running';
    const member = mine === 'joined' || mine === 'paused';
    place.dataset.status = mine ?? 'none';
    place.textContent = t(`tournament.me.${member && !going && tour.status !== 'scheduled' ? 'over' : mine ?? 'none'}`);
    const joinable = tour.status === 'open' || (tour.status === 'running' && tour.format !== 'round_robin');
    actions.replaceChildren(...[
      tour.status === 'scheduled' && h('p', { text: t('tournament.joinsOpen', { at: when(Date.parse(tour.starts_at) - 3600000) }) }),
      joinable && !member && mine !== 'removed' && (!tour.private ? button('join', t('tournament.join'))
        : tour.code ? button('join', t('tournament.join'), act('join', path`/v1/tournaments/join/${tour.code}`)) : codeForm()),
      going && mine === 'joined' && tour.status === 'running' && button('pause', t('tournament.pause')),
      going && mine === 'paused' && button('resume', t('tournament.resume')),
      going && member && button('withdraw', t('tournament.withdraw')),
    ].filter(Boolean));
    // The standings' marks and the podium follow the status.
    if (standings) renderStandings();
    renderPodium();
    tick();
  };

  const renderPodium = () => {
    const top = standings && tour.status === 'finished' ? standings.standings.slice(0, 3) : [];
    podium.hidden = !top.length;
    podium.replaceChildren(...(top.length ? [h('h2', { text: t('tournament.podium') }),
      h('ol', { id: 'podium-list', class: 'podium' }, top.map((line, i) => h('li', { 'data-player': line.player_id, 'data-rank': line.rank },
        h('span', { 'aria-hidden': 'true', text: `${MEDALS[i]} ` }), h('a', { href: `/players/${line.player_id}` }, line.name),
        ` — ${t('tournament.points', { n: points(line.score) })}`)))] : []));
  };

  const renderStandings = () => {
    const lines = [...standings.standings];
    if (standings.me && !lines.some((l) => l.player_id === standings.me.player_id)) lines.push(standings.me);
    if (!lines.length) { table.replaceChildren(h('p', { text: t('tournament.nobody') })); return; }
    const arena = tour.format === 'arena';
    // A pause means nothing once the tournament is over.
    const over = tour.status === 'finished' || tour.status === 'cancelled';
    const marked = (st) => st === 'withdrawn' || st === 'removed' || (st === 'paused' && !over);
    const tiebreaks = arena ? [['performance', t('tournament.performance')]]
      : [['buchholz', t('tournament.buchholz')], ['sonneborn_berger', t('tournament.sonnebornBerger')]];
    table.replaceChildren(h('table', { id: 'standings-table' },
      h('thead', {}, h('tr', {}, [t('leaderboard.rank'), t('leaderboard.player'), t('tournament.score'), t('tournament.streak'),
        t('leaderboard.games'), t('tournament.wdl'), ...tiebreaks.map(([, label]) => label)].map((col) => h('th', { scope: 'col', text: col })))),
      h('tbody', {}, lines.map((l) => h('tr', { 'data-player': l.player_id, 'data-rank': l.rank, 'data-status': l.status, class: l.player_id === me() ? 'me' : null },
        h('td', { text: l.rank }),
        h('td', {}, h('a', { href: `/players/${l.player_id}` }, l.name), marked(l.status) ? ` (${t(`tournament.entrant.${l.status}`)})` : ''),
        h('td', { 'data-score': points(l.score), text: points(l.score) }),
        h('td', { 'data-streak': l.streak, 'data-on-fire': String(l.on_fire) }, String(l.streak),
          l.on_fire ? [' ', h('span', { class: 'fire', 'aria-hidden': 'true', text: '🔥' }), h('span', { class: 'visually-hidden', text: t('tournament.onFire') })] : null),
        h('td', { text: l.games }),
        h('td', { text: `${l.wins}–${l.draws}–${l.losses}` }),
        ...tiebreaks.map(([k]) => h('td', { text: points(l.tiebreaks[k]) })))))));
  };

  const renderPairings = (pairings) => {
    // The round picker, built again only when a round is added (a visitor may be using it).
    if (tour.format !== 'arena' && tour.round > 0 && roundPick.querySelectorAll('option').length !== tour.round) {
      const rounds = Array.from({ length: tour.round }, (_, i) => [String(i + 1), String(i + 1)]);
      const pick = select('round', rounds, String(round ?? tour.round));
      pick.addEventListener('change', () => { round = Number(pick.value); refreshTables(); });
      roundPick.replaceChildren(field(t('tournament.round'), pick));
    }
    const shown = tour.format === 'arena' ? [...pairings].reverse() : pairings;
    pairingsList.replaceChildren(shown.length ? h('ul', { class: 'pairings' }, shown.map((p) => {
      if (!p.match_id) {
        return h('li', { 'data-round': p.round, 'data-bye': p.seats[0] }, t('tournament.bye', { name: nameOf(p.seats[0]), points: points(p.points ?? 0) }));
      }
      const outcome = p.result === 'draw' ? t('match.draw') : p.winner ? t('match.won', { name: nameOf(p.winner) }) : t('tournament.playing');
      return h('li', { 'data-round': p.round, 'data-match': p.match_id, 'data-result': p.result ?? '' },
        h('a', { href: `/matches/${p.match_id}` }, p.seats.map(nameOf).join(' – ')), `: ${outcome}`);
    })) : h('p', { text: t('tournament.noPairings') }));
  };

  const refreshView = serial(async () => {
    try {
      const next = await view.call('GET', base);
      offset = Date.parse(next.server_time) - Date.now();
      if (next.version < tour.version) return;
      const moved = next.version > tour.version;
      tour = next;
      renderHead();
      // A change (one's own command's, say) the standings should show too.
      if (moved && next.version > wanted) {
        wanted = next.version;
        refreshTables();
      }
    } catch (e) {
      if (!isAbort(e)) showError(e);
    }
  });

  // The standings, read again (backing off) until the projection has read every event the page
  // has seen (it always gets there: its version only grows), then the pairings.
  const refreshTables = serial(async () => {
    try {
      for (let wait = CATCH_UP_FIRST; ; wait = Math.min(wait * 2, CATCH_UP_LONGEST)) {
        standings = await view.call('GET', `${base}/standings?limit=${STANDINGS_LINES}`);
        for (const l of [...standings.standings, standings.me].filter(Boolean)) names.set(l.player_id, l.name);
        renderStandings();
        renderPodium();
        if (standings.version >= wanted) break;
        await view.sleep(wait);
      }
      const which = tour.format === 'arena' || tour.round === 0 ? `limit=${LATEST_PAIRINGS}` : `round=${round ?? tour.round}`;
      renderPairings((await view.call('GET', `${base}/pairings?${which}`)).pairings);
    } catch (e) {
      if (!isAbort(e)) showError(e);
    }
  });

  const tick = () => {
    const now = Date.now() + offset;
    let left = null;
    let text = '';
    if (tour.status === 'scheduled' || tour.status === 'open') {
      left = Date.parse(tour.starts_at) - now;
      text = t('tournament.startsIn', { time: countdown(left) });
    } else if (tour.status === 'running' && tour.ends_at) {
      left = Date.parse(tour.ends_at) - now;
      text = t('tournament.endsIn', { time: countdown(left) });
    }
    if (clock.textContent === text) return;
    clock.textContent = text;
    clock.dataset.seconds = left === null ? '' : String(Math.max(0, Math.ceil(left / 1000)));
  };

  frame(tour.name, status, clock, facts, code, place, actions, conn, streamProblem, podium, standingsSection, pairingsSection);
  renderHead();
  view.every(250, tick);
  refreshTables();

  // A tournament that is over has no more events.
  if (tour.status === 'finished' || tour.status === 'cancelled') return;
  const live = view.child();
  followStream(`${base}/stream`, tour.version, {
    signal: live.signal,
    onFrame: (data, event) => {
      // The reader's next game: open it.
      if (event === 'pairing' && data.type === 'pairing_made' && data.data?.players?.includes(me())) {
        navigate(`/matches/${data.data.match_id}`);
        return;
      }
      wanted = Math.max(wanted, data.version ?? 0);
      refreshTables();
      if (event === 'status' || event === 'pairing') refreshView();
      // The server ends the stream with the tournament.
      if (data.type === 'tournament_finished' || data.type === 'tournament_cancelled') live.leave();
    },
    onConnection: (up) => {
      conn.textContent = up ? '' : t('match.reconnecting');
      conn.dataset.connected = up ? 'yes' : 'no';
    },
    onProblem: (p) => (p ? showError(new Problem(p), streamProblem) : streamProblem.replaceChildren()),
  });
}
