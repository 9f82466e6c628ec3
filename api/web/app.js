// discs web client: every page of the site, built from the public REST API and the event
// stream only. Plain modern JavaScript, no build step: the server embeds this file as is.
// Testing contract (README): the board is [data-board][data-ply] holding [data-cell][data-disc];
// the rating chart is svg[data-chart="rating"] with one [data-match] per point; the token is
// localStorage["discs.token"]; <html lang> is the language in use.

const TEXTS = {
  en: {
    home: 'Home', play: 'Play', leaderboards: 'Leaderboards', profile: 'My profile', admin: 'Admin',
    language: 'Language', pickName: 'Pick a name to play', name: 'Your name', start: 'Start',
    welcome: 'Welcome back, {name}.', notYou: 'Not you? Pick another name',
    games: 'The games', rules: 'Rules', loading: 'Loading…', needName: 'Pick a name on the home page first.',
    solo: 'Play against the computer', game: 'Game', level: 'CPU level', first: 'Who starts',
    firstMe: 'Me', firstCpu: 'The computer', turnLimit: 'Turn limit', noLimit: 'No limit',
    seconds: '{n} seconds', showLegal: 'Show legal moves', startSolo: 'Start the game',
    room: 'Play with a friend', createRoom: 'Create a room', roomCode: 'Room code: {code}',
    shareLink: 'Share this link:', members: 'Members', waitingGuest: 'Waiting for your friend to join…',
    startMatch: 'Start the match', startAlone: 'Play alone against the computer', joining: 'Joining the room…',
    ranked: 'Ranked game', queue: 'Find an opponent', cancel: 'Cancel', waiting: 'Waiting for an opponent: {time}',
    window: 'Your rating {rating}, opponents within ±{gap}', cancelled: 'You left the queue.',
    toMove: '{name} to move', yourTurn: 'Your turn', clock: 'Time left: {time}', leave: 'Leave', back: 'Return to my seat',
    resign: 'Resign', confirmResign: 'Resign this game?', away: 'away (the computer plays)', cpu: 'Computer',
    finished: 'Game over', won: '{name} wins', draw: 'Draw', because: {four_in_a_row: 'four in a row', board_full: 'the board is full', no_moves: 'no move left', resigned: 'resignation'},
    live: 'Live', reconnecting: 'Connection lost, reconnecting…', replay: 'Replay', ply: 'Ply {n} of {total}',
    firstPly: 'First', prev: 'Previous', next: 'Next', lastPly: 'Last', moves: 'Moves', startPos: 'Start',
    analysis: 'Analysis', analysing: 'Analysing the game…', scoreBeforeAfter: '{before} → {after}', best: 'best: {moves}',
    mistake: 'mistake', exact: 'exact', estimate: 'estimate', pass: 'pass',
    ratings: 'Ratings', provisional: 'provisional', games_: '{n} games', ratingChart: 'Rating over time: {game}',
    noRated: 'No rated match yet.', history: 'Match history', opponent: 'Opponent', result: 'Result',
    ratingCol: 'Rating', when: 'When', win: 'win', loss: 'loss', drawR: 'draw', rankedMark: 'ranked', casual: 'casual',
    rank: 'Rank', player: 'Player', deviation: 'Deviation', noEntries: 'No established player yet.',
    adminToken: 'Admin token (kept in this browser)', save: 'Save', audit: 'Rating audit', excludePlayers: 'Leave out players (ids, comma-separated)',
    run: 'Run', explain: 'Explain a rating', playerId: 'Player id', flags: 'Flags', queueStats: 'Queue statistics',
    projections: 'Projections', status: 'Status', rebuild: 'Rebuild', progress: 'Progress: {p}',
    square: '{cell}: {disc}', column: 'column {c}, row {r}', empty: 'empty',
    discs: {R: 'red', Y: 'yellow', B: 'black', W: 'white'}, seat: 'seat {n}', vs: '{a} vs {b}',
    notFound: 'There is no such page.', error: 'Error',
  },
  pt: {
    home: 'Início', play: 'Jogar', leaderboards: 'Classificação', profile: 'Meu perfil', admin: 'Administração',
    language: 'Idioma', pickName: 'Escolha um nome para jogar', name: 'Seu nome', start: 'Começar',
    welcome: 'Bem-vindo de volta, {name}.', notYou: 'Não é você? Escolha outro nome',
    games: 'Os jogos', rules: 'Regras', loading: 'Carregando…', needName: 'Escolha um nome na página inicial primeiro.',
    solo: 'Jogar contra o computador', game: 'Jogo', level: 'Nível do computador', first: 'Quem começa',
    firstMe: 'Eu', firstCpu: 'O computador', turnLimit: 'Limite por jogada', noLimit: 'Sem limite',
    seconds: '{n} segundos', showLegal: 'Mostrar jogadas válidas', startSolo: 'Começar a partida',
    room: 'Jogar com um amigo', createRoom: 'Criar uma sala', roomCode: 'Código da sala: {code}',
    shareLink: 'Compartilhe este link:', members: 'Membros', waitingGuest: 'Esperando seu amigo entrar…',
    startMatch: 'Começar a partida', startAlone: 'Jogar sozinho contra o computador', joining: 'Entrando na sala…',
    ranked: 'Partida ranqueada', queue: 'Procurar um adversário', cancel: 'Cancelar', waiting: 'Procurando um adversário: {time}',
    window: 'Sua pontuação {rating}, adversários a até ±{gap}', cancelled: 'Você saiu da fila.',
    toMove: 'Vez de {name}', yourTurn: 'Sua vez', clock: 'Tempo restante: {time}', leave: 'Sair', back: 'Voltar ao meu lugar',
    resign: 'Desistir', confirmResign: 'Desistir desta partida?', away: 'ausente (o computador joga)', cpu: 'Computador',
    finished: 'Fim de jogo', won: '{name} venceu', draw: 'Empate', because: {four_in_a_row: 'quatro em linha', board_full: 'tabuleiro cheio', no_moves: 'sem jogadas', resigned: 'desistência'},
    live: 'Ao vivo', reconnecting: 'Conexão perdida, reconectando…', replay: 'Reprodução', ply: 'Lance {n} de {total}',
    firstPly: 'Primeiro', prev: 'Anterior', next: 'Próximo', lastPly: 'Último', moves: 'Jogadas', startPos: 'Início',
    analysis: 'Análise', analysing: 'Analisando a partida…', scoreBeforeAfter: '{before} → {after}', best: 'melhor: {moves}',
    mistake: 'erro', exact: 'exato', estimate: 'estimativa', pass: 'passa',
    ratings: 'Pontuações', provisional: 'provisória', games_: '{n} partidas', ratingChart: 'Pontuação ao longo do tempo: {game}',
    noRated: 'Nenhuma partida ranqueada ainda.', history: 'Histórico de partidas', opponent: 'Adversário', result: 'Resultado',
    ratingCol: 'Pontuação', when: 'Quando', win: 'vitória', loss: 'derrota', drawR: 'empate', rankedMark: 'ranqueada', casual: 'amistosa',
    rank: 'Posição', player: 'Jogador', deviation: 'Desvio', noEntries: 'Nenhum jogador estabelecido ainda.',
    adminToken: 'Token de administrador (guardado neste navegador)', save: 'Salvar', audit: 'Auditoria das pontuações', excludePlayers: 'Deixar de fora jogadores (ids, separados por vírgula)',
    run: 'Executar', explain: 'Explicar uma pontuação', playerId: 'Id do jogador', flags: 'Alertas', queueStats: 'Estatísticas da fila',
    projections: 'Projeções', status: 'Estado', rebuild: 'Reconstruir', progress: 'Progresso: {p}',
    square: '{cell}: {disc}', column: 'coluna {c}, linha {r}', empty: 'vazia',
    discs: {R: 'vermelha', Y: 'amarela', B: 'preta', W: 'branca'}, seat: 'lugar {n}', vs: '{a} contra {b}',
    notFound: 'Esta página não existe.', error: 'Erro',
  },
};

const GAMES = ['four_in_a_row', 'reversi'];
const root = document.documentElement;
let lang = localStorage.getItem('discs.lang') || root.dataset.serverLang || 'en';
if (!TEXTS[lang]) lang = 'en';
root.lang = lang;

/** The text `key` in the page's language, `{name}` replaced from `vars`. */
function t(key, vars = {}) {
  const text = TEXTS[lang][key] ?? TEXTS.en[key] ?? key;
  return typeof text === 'string' ? text.replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? '')) : text;
}

/** An element: `h('a', {href: '/'}, 'home')`; `on*` attributes are listeners. */
function h(tag, attrs = {}, ...children) {
  const svg = ['svg', 'g', 'path', 'circle', 'polyline', 'polygon', 'line', 'text', 'title'].includes(tag)
    || (tag === 'a' && attrs.svg);
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false || k === 'svg') continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

// ---- the API ------------------------------------------------------------------------------

const token = () => localStorage.getItem('discs.token');

/** The player id of the stored token (its `sub` claim), or null. */
function me() {
  const tk = token();
  if (!tk) return null;
  try {
    const claims = JSON.parse(atob(tk.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    return claims.sub ?? null;
  } catch { return null; }
}

/** An API error: the problem+json document, in the page's language. */
class Problem extends Error {
  constructor(p) { super(p.detail || p.title); this.problem = p; }
}

async function api(method, path, body, { auth = token(), key = false } = {}) {
  const headers = { 'Accept-Language': lang, Accept: 'application/json' };
  if (auth) headers.Authorization = `Bearer ${auth}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (key) headers['Idempotency-Key'] = crypto.randomUUID();
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new Problem({ title: t('reconnecting'), detail: String(e), code: 'network' });
  }
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Problem(data || { title: res.statusText, detail: `HTTP ${res.status}`, code: 'http' });
  return data;
}

/** Shows an API error where the page keeps its messages. */
function showError(e, where = document.getElementById('errors')) {
  const p = e instanceof Problem ? e.problem : { title: t('error'), detail: String(e) };
  where.replaceChildren(h('div', { role: 'alert', class: 'problem', 'data-code': p.code || '' },
    h('strong', { text: p.title }), ' ', h('span', { text: p.detail || '' })));
}
const clearErrors = () => document.getElementById('errors').replaceChildren();

/** Runs `f`, showing its error instead of throwing. */
async function attempt(f) {
  try { clearErrors(); return await f(); } catch (e) { showError(e); return undefined; }
}

// ---- layout -------------------------------------------------------------------------------

function header() {
  const id = me();
  const links = [
    h('a', { href: '/' }, t('home')),
    h('a', { href: '/play' }, t('play')),
    h('a', { href: '/leaderboards/four_in_a_row' }, t('leaderboards')),
    id && h('a', { href: `/players/${id}` }, t('profile')),
    h('a', { href: '/admin' }, t('admin')),
  ];
  const select = h('select', { id: 'lang', 'aria-label': t('language'), onchange: (e) => {
    localStorage.setItem('discs.lang', e.target.value);
    location.reload();
  } }, h('option', { value: 'en', selected: lang === 'en' }, 'English'),
  h('option', { value: 'pt', selected: lang === 'pt' }, 'Português'));
  document.getElementById('top').replaceChildren(
    h('nav', { 'aria-label': 'discs' }, h('a', { href: '/', class: 'brand' }, '● discs'), ...links.filter(Boolean)),
    h('label', { class: 'lang' }, t('language'), ' ', select));
}

function page(title, ...content) {
  document.title = `${title} · discs`;
  document.getElementById('main').replaceChildren(h('h1', { text: title }), h('div', { id: 'errors' }), ...content);
}

const gameNames = {};
async function catalogue() {
  const c = await api('GET', '/v1/games', undefined, { auth: null });
  for (const g of c.games) gameNames[g.id] = g.name;
  return c;
}
const gameName = (id) => gameNames[id] || id;

function field(label, control) {
  return h('label', { class: 'field' }, h('span', { text: label }), control);
}

function select(name, options, value) {
  return h('select', { name }, options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
}

const turnOptions = () => [['', t('noLimit')], ['30', t('seconds', { n: 30 })], ['60', t('seconds', { n: 60 })]];
const turnSeconds = (v) => (v ? Number(v) : null);
const mmss = (ms) => {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

// ---- home ---------------------------------------------------------------------------------

async function homePage() {
  page('discs', h('section', { id: 'who' }, t('loading')), h('section', { id: 'games' }));
  const who = document.getElementById('who');
  const id = me();
  let profile = null;
  if (id) {
    try { profile = await api('GET', `/v1/players/${id}`); } catch (e) {
      if (e instanceof Problem && e.problem.status === 401) localStorage.removeItem('discs.token');
      else showError(e);
    }
  }
  const form = h('form', { id: 'signup', onsubmit: async (e) => {
    e.preventDefault();
    const name = e.target.elements.name.value;
    const created = await attempt(() => api('POST', '/v1/players', { name }, { auth: null, key: true }));
    if (created) {
      localStorage.setItem('discs.token', created.token);
      header();
      homePage();
    }
  } }, h('h2', { text: t('pickName') }), field(t('name'), h('input', { name: 'name', required: true, maxlength: 32, autocomplete: 'nickname' })),
  h('button', { type: 'submit' }, t('start')));
  if (profile) {
    who.replaceChildren(h('p', { id: 'welcome' }, t('welcome', { name: profile.name }), ' ',
      h('a', { href: `/players/${profile.player_id}` }, t('profile')), ' · ', h('a', { href: '/play' }, t('play'))),
    h('details', {}, h('summary', { text: t('notYou') }), form));
  } else {
    who.replaceChildren(form);
  }
  const c = await attempt(catalogue);
  if (!c) return;
  document.getElementById('games').replaceChildren(h('h2', { text: t('games') }), ...c.games.map((g) => h('article', { class: 'game', 'data-game': g.id },
    h('h3', { text: g.name }), h('p', { text: g.summary }),
    h('details', {}, h('summary', { text: t('rules') }), h('ol', {}, g.rules.map((r) => h('li', { text: r })))),
    h('p', {}, h('a', { href: '/play' }, t('play')), ' · ', h('a', { href: `/leaderboards/${g.id}` }, t('leaderboards'))))));
}

// ---- play: solo, rooms, the ranked queue --------------------------------------------------

function needToken() {
  if (token()) return false;
  document.getElementById('main').append(h('p', {}, h('a', { href: '/' }, t('needName'))));
  return true;
}

async function playPage() {
  page(t('play'));
  if (needToken()) return;
  const c = await attempt(catalogue);
  if (!c) return;
  const games = c.games.map((g) => [g.id, g.name]);
  const solo = h('form', { id: 'solo', onsubmit: async (e) => {
    e.preventDefault();
    const f = e.target.elements;
    const settings = { turn_seconds: turnSeconds(f.turn_seconds.value) };
    if (f.game.value === 'reversi') settings.show_legal_moves = f.show_legal_moves.checked;
    const view = await attempt(() => api('POST', '/v1/matches', {
      game: f.game.value, cpu_level: Number(f.cpu_level.value), first: f.first.value, settings,
    }, { key: true }));
    if (view) location.assign(`/matches/${view.match_id}`);
  } }, h('h2', { text: t('solo') }),
  field(t('game'), select('game', games, 'four_in_a_row')),
  field(t('level'), select('cpu_level', (c.games[0].cpu_levels || [1, 2, 3, 4, 5]).map((l) => [String(l), String(l)]), '2')),
  field(t('first'), select('first', [['me', t('firstMe')], ['cpu', t('firstCpu')]], 'me')),
  field(t('turnLimit'), select('turn_seconds', turnOptions(), '')),
  h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'show_legal_moves', checked: true }), ' ', t('showLegal')),
  h('button', { type: 'submit' }, t('startSolo')));

  const room = h('form', { id: 'room', onsubmit: async (e) => {
    e.preventDefault();
    const f = e.target.elements;
    const r = await attempt(() => api('POST', '/v1/rooms', { game: f.game.value, settings: { turn_seconds: turnSeconds(f.turn_seconds.value) } }, { key: true }));
    if (r) location.assign(`/rooms/${r.code}`);
  } }, h('h2', { text: t('room') }), field(t('game'), select('game', games, 'four_in_a_row')),
  field(t('turnLimit'), select('turn_seconds', turnOptions(), '')), h('button', { type: 'submit' }, t('createRoom')));

  const status = h('div', { id: 'queue-status', role: 'status' });
  const queue = h('form', { id: 'queue', onsubmit: async (e) => {
    e.preventDefault();
    const f = e.target.elements;
    const ticket = await attempt(() => api('POST', '/v1/queue', { game: f.game.value, turn_seconds: turnSeconds(f.turn_seconds.value) }, { key: true }));
    if (ticket) waitForOpponent(ticket, status);
  } }, h('h2', { text: t('ranked') }), field(t('game'), select('game', games, 'four_in_a_row')),
  field(t('turnLimit'), select('turn_seconds', turnOptions(), '')), h('button', { type: 'submit' }, t('queue')), status);
  document.getElementById('main').append(solo, room, queue);
  const open = sessionStorage.getItem('discs.ticket');
  if (open) {
    const ticket = await api('GET', `/v1/queue/${open}`).catch(() => null);
    if (ticket && ticket.status === 'waiting') waitForOpponent(ticket, status);
  }
}

/** The live waiting indicator of a ticket: time waited and rating window, until matched. */
function waitForOpponent(ticket, status) {
  sessionStorage.setItem('discs.ticket', ticket.ticket_id);
  const opened = Date.parse(ticket.opened_at);
  const text = h('p', { id: 'waited' });
  const windowText = h('p', { id: 'window' });
  const cancel = h('button', { type: 'button', onclick: async () => {
    const closed = await attempt(() => api('DELETE', `/v1/queue/${ticket.ticket_id}`));
    if (closed) { stop(); status.replaceChildren(h('p', { text: t('cancelled') })); }
  } }, t('cancel'));
  status.replaceChildren(h('div', { class: 'spinner', 'aria-hidden': 'true' }), text, windowText, cancel);
  status.dataset.ticket = ticket.ticket_id;
  const show = (tk) => {
    text.textContent = t('waiting', { time: mmss(Date.now() - opened) });
    if (tk.allowed_gap !== null) windowText.textContent = t('window', { rating: Math.round(tk.rating), gap: Math.round(tk.allowed_gap) });
  };
  show(ticket);
  const tick = setInterval(() => show(ticket), 250);
  let polling = true;
  const stop = () => { polling = false; clearInterval(tick); sessionStorage.removeItem('discs.ticket'); };
  (async () => {
    while (polling) {
      try {
        ticket = await api('GET', `/v1/queue/${ticket.ticket_id}`);
        if (ticket.status === 'matched') { stop(); location.assign(`/matches/${ticket.match_id}`); return; }
        if (ticket.status === 'cancelled') { stop(); return; }
      } catch (e) { showError(e); }
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
}

async function roomPage(code) {
  page(t('room'), h('p', { text: t('joining') }));
  if (needToken()) return;
  let room = await attempt(() => api('POST', `/v1/rooms/${encodeURIComponent(code)}/join`, undefined, { key: true }));
  if (!room) return;
  await attempt(catalogue);
  const firstMatch = room.match_id;
  const body = h('section', { id: 'room-view' });
  const render = () => {
    const link = `${location.origin}/rooms/${room.code}`;
    body.replaceChildren(
      h('p', { text: t('roomCode', { code: room.code }) }),
      h('p', {}, t('shareLink'), ' ', h('a', { href: link, id: 'room-link' }, link)),
      h('h2', { text: `${gameName(room.game)} · ${t('members')}` }),
      h('ul', {}, room.members.map((m) => h('li', {}, h('a', { href: `/players/${m.player_id}` }, m.name), ` (${t('seat', { n: m.seat })})`))),
      room.members.length < 2 ? h('p', { text: t('waitingGuest') }) : null,
      h('button', { type: 'button', id: 'start-match', onclick: async () => {
        const view = await attempt(() => api('POST', `/v1/rooms/${room.room_id}/matches`, {}, { key: true }));
        if (view) location.assign(`/matches/${view.match_id}`);
      } }, room.members.length < 2 ? t('startAlone') : t('startMatch')));
  };
  document.getElementById('main').replaceChildren(h('h1', { text: t('room') }), h('div', { id: 'errors' }), body);
  render();
  for (;;) {
    await new Promise((r) => setTimeout(r, 1500));
    const next = await api('GET', `/v1/rooms/${room.room_id}`).catch(() => null);
    if (!next) continue;
    if (next.match_id && next.match_id !== firstMatch) { location.assign(`/matches/${next.match_id}`); return; }
    if (next.members.length !== room.members.length) { room = next; render(); }
  }
}

// ---- the board ----------------------------------------------------------------------------

/** The squares of a board as [cell name, disc letter or ''] in display order, row by row. */
function squares(game, rows) {
  const out = [];
  rows.forEach((row, i) => {
    [...row].forEach((ch, j) => {
      const cell = game === 'reversi' ? `${'abcdefgh'[j]}${i + 1}` : `${j + 1}${rows.length - i}`;
      out.push([cell, ch === '.' ? '' : ch]);
    });
  });
  return out;
}

/** The board element; `playable(cell)` is the move a click on `cell` plays, or null. */
function board(game, rows, ply, { playable = () => null, onPlay = null, last = null, legal = [] } = {}) {
  const el = h('div', { class: `board ${game}`, 'data-board': game, 'data-ply': ply, role: 'group', 'aria-label': gameName(game) });
  const discName = (d) => (d ? TEXTS[lang].discs[d] : t('empty'));
  // Four in a Row: a click anywhere in a column plays it, but only the square where the disc
  // would land is marked and takes the keyboard focus (one stop per column).
  const landing = new Set();
  if (game === 'four_in_a_row') {
    for (let c = 1; c <= rows[0].length; c++) {
      for (let r = 1; r <= rows.length; r++) {
        if (rows[rows.length - r][c - 1] === '.') { landing.add(`${c}${r}`); break; }
      }
    }
  }
  for (const [cell, disc] of squares(game, rows)) {
    const move = playable(cell);
    const target = move !== null && (game === 'reversi' || landing.has(cell));
    const label = game === 'reversi' ? cell : t('column', { c: cell[0], r: cell[1] });
    const hint = game === 'reversi' ? legal.includes(cell) : false;
    const sq = h('button', {
      type: 'button', class: `sq${hint ? ' hint' : ''}${target ? ' target' : ''}${last === cell ? ' last' : ''}`,
      'data-cell': cell, 'data-disc': disc, tabindex: move !== null && !target ? -1 : null,
      'aria-label': t('square', { cell: label, disc: discName(disc) }), disabled: move === null,
      'data-move': move, onclick: move === null ? null : () => onPlay(move),
    }, disc ? h('span', { class: `disc ${disc}`, 'aria-hidden': 'true' }, disc) : null);
    el.append(sq);
  }
  return el;
}

// ---- a match: live, then its replay ------------------------------------------------------

function resultText(view) {
  const r = view.result;
  if (!r) return '';
  const why = t('because')[r.reason] || r.reason;
  const discs = Object.entries(r.discs || {}).map(([c, n]) => `${c} ${n}`).join(' · ');
  if (r.outcome === 'draw') return `${t('draw')} (${why}) ${discs}`;
  const winner = view.seats.find((s) => s.seat === r.winner_seat);
  return `${t('won', { name: winner ? winner.name : '?' })} (${why}) ${discs}`;
}

function seatsLine(view) {
  return h('ul', { class: 'seats' }, view.seats.map((s) => h('li', { 'data-seat': s.seat, class: view.to_move === s.seat ? 'turn' : '' },
    h('span', { class: `disc small ${s.color}`, 'aria-hidden': 'true' }, s.color), ' ',
    s.player_id ? h('a', { href: `/players/${s.player_id}` }, s.name) : (s.name || t('cpu')),
    s.controller === 'away' ? ` — ${t('away')}` : '')));
}

async function matchPage(id) {
  page(t('play'), h('p', { text: t('loading') }));
  const view = await attempt(() => api('GET', `/v1/matches/${id}`));
  if (!view) return;
  await catalogue().catch(() => null);
  if (view.status === 'finished') return replayPage(view);
  return livePage(view);
}

function livePage(initial) {
  let view = initial;
  const mine = () => view.seats.find((s) => s.player_id && s.player_id === me());
  const status = h('p', { id: 'match-status', role: 'status' });
  const clock = h('p', { id: 'clock', class: 'clock' });
  const conn = h('p', { id: 'connection', class: 'connection' });
  const holder = h('div', { id: 'board-holder' });
  const controls = h('div', { class: 'controls' });
  let sending = false;
  const play = async (move) => {
    if (sending) return;
    sending = true;
    const next = await attempt(() => api('POST', `/v1/matches/${view.match_id}/moves`, { move, expected_version: view.version }, { key: true }));
    sending = false;
    update(next || view);
  };
  const command = (name) => async () => {
    if (name === 'resign' && !confirm(t('confirmResign'))) return;
    const next = await attempt(() => api('POST', `/v1/matches/${view.match_id}/${name}`, { expected_version: view.version }, { key: true }));
    if (next) update(next);
  };
  const render = () => {
    const seat = mine();
    const myTurn = view.status === 'active' && seat && view.to_move === seat.seat && seat.controller === 'human';
    const legal = new Set(view.legal_moves);
    const playable = (cell) => {
      if (!myTurn || sending) return null;
      const move = view.game === 'reversi' ? cell : cell.slice(0, 1);
      return legal.has(move) ? move : null;
    };
    const ply = view.moves.length / (view.game === 'reversi' ? 2 : 1);
    holder.replaceChildren(board(view.game, view.board, ply, { playable, onPlay: play, legal: view.legal_moves }));
    const turn = view.seats.find((s) => s.seat === view.to_move);
    status.textContent = view.status === 'finished' ? `${t('finished')}: ${resultText(view)}`
      : myTurn ? t('yourTurn') : turn ? t('toMove', { name: turn.name }) : '';
    status.dataset.status = view.status;
    const active = seat && view.status === 'active';
    controls.replaceChildren(...[
      active && seat.controller !== 'away' && h('button', { type: 'button', id: 'leave', onclick: command('leave') }, t('leave')),
      active && seat.controller === 'away' && h('button', { type: 'button', id: 'return', onclick: command('return') }, t('back')),
      active && h('button', { type: 'button', id: 'resign', onclick: command('resign') }, t('resign')),
    ].filter(Boolean));
    document.getElementById('seats').replaceWith(Object.assign(seatsLine(view), { id: 'seats' }));
  };
  let over = false;
  // A newer view (a command's answer or a frame of the stream; they may come in any order).
  const update = (next) => {
    if (over) return;
    if (next.version > view.version) view = next;
    render();
    if (view.status === 'finished') {
      over = true;
      stream.close();
      clearInterval(tick);
      replayPage(view);
    }
  };
  document.getElementById('main').replaceChildren(
    h('h1', { text: `${gameName(view.game)} · ${t('live')}` }), h('div', { id: 'errors' }),
    h('ul', { id: 'seats' }), status, clock, conn, holder, controls);
  render();
  const tick = setInterval(() => {
    clock.textContent = view.deadline && view.status === 'active' ? t('clock', { time: mmss(Date.parse(view.deadline) - Date.now()) }) : '';
  }, 250);
  // Keys 1–7 play a column in Four in a Row.
  document.addEventListener('keydown', (e) => {
    if (view.game !== 'four_in_a_row' || e.target.tagName === 'INPUT') return;
    const target = holder.querySelector(`[data-move="${e.key}"]:not([disabled])`);
    if (target) target.click();
  });
  const stream = follow(view.match_id, view.version, (frame) => update(frame.match), (up) => {
    conn.textContent = up ? '' : t('reconnecting');
    conn.dataset.connected = up ? 'yes' : 'no';
  });
}

/**
 * Follows a match's event stream from `version`: each frame to `onFrame`; on a lost connection
 * (a network loss, a server restart) reconnects with `Last-Event-ID`, backing off to 5 s.
 */
function follow(matchId, version, onFrame, onConnection) {
  let last = version;
  let closed = false;
  let controller = null;
  (async () => {
    let delay = 250;
    while (!closed) {
      controller = new AbortController();
      try {
        const res = await fetch(`/v1/matches/${matchId}/stream`, {
          headers: { Authorization: `Bearer ${token()}`, 'Last-Event-ID': String(last), Accept: 'text/event-stream' },
          signal: controller.signal,
        });
        if (res.ok && res.body) {
          onConnection(true);
          delay = 250;
          // Frames that committed while no stream was open: the stream replays them.
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value;
            let end;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              let id = null;
              let data = '';
              for (const line of block.split('\n')) {
                if (line.startsWith('id:')) id = Number(line.slice(3).trim());
                else if (line.startsWith('data:')) data += line.slice(5).trim();
              }
              if (data) {
                if (id !== null) last = id;
                onFrame(JSON.parse(data));
              }
            }
          }
        }
      } catch (e) {
        if (closed) return;
      }
      if (closed) return;
      onConnection(false);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5000);
    }
  })();
  return { close() { closed = true; if (controller) controller.abort(); } };
}

async function replayPage(view) {
  const data = await attempt(() => api('GET', `/v1/matches/${view.match_id}/replay`));
  if (!data) return;
  const plies = data.plies;
  const total = plies.length - 1;
  const asked = Number(new URLSearchParams(location.search).get('ply'));
  let at = Number.isInteger(asked) && new URLSearchParams(location.search).has('ply') ? Math.min(Math.max(asked, 0), total) : total;
  const holder = h('div', { id: 'board-holder' });
  const where = h('p', { id: 'ply-label', role: 'status' });
  const slider = h('input', { type: 'range', id: 'ply-slider', min: 0, max: total, value: at, 'aria-label': t('replay'),
    oninput: (e) => show(Number(e.target.value)) });
  const list = h('ol', { id: 'move-list', class: 'moves', start: 0 });
  const judged = {};
  const show = (n) => {
    at = Math.min(Math.max(n, 0), total);
    const p = plies[at];
    const lastCell = p.move ? (view.game === 'reversi' ? p.move : lastFourCell(plies, at)) : null;
    holder.replaceChildren(board(view.game, p.board, at, { last: lastCell }));
    where.textContent = t('ply', { n: at, total });
    slider.value = at;
    for (const li of list.querySelectorAll('li')) {
      const current = Number(li.dataset.ply) === at;
      li.classList.toggle('current', current);
      if (current) li.scrollIntoView({ block: 'nearest' });
    }
    const url = new URL(location.href);
    url.searchParams.set('ply', at);
    history.replaceState(null, '', url);
  };
  const renderList = () => {
    list.replaceChildren(...plies.map((p) => {
      const a = judged[p.ply];
      const mistake = a && a.score_after < a.score_before;
      return h('li', { 'data-ply': p.ply, class: mistake ? 'mistake' : '' },
        h('button', { type: 'button', onclick: () => show(p.ply) }, p.ply === 0 ? t('startPos') : `${p.ply}. ${p.move}`),
        a ? h('span', { class: 'judged' }, ` ${t('scoreBeforeAfter', { before: a.score_before, after: a.score_after })}`,
          a.best_moves.length ? ` · ${t('best', { moves: a.best_moves.join(', ') })}` : '',
          mistake ? h('strong', { class: 'flag' }, ` ✗ ${t('mistake')}`) : '',
          ` · ${a.exact ? t('exact') : t('estimate')}`) : null);
    }));
    show(at);
  };
  const btn = (id, text, f) => h('button', { type: 'button', id, onclick: f }, text);
  const analysisNote = h('p', { id: 'analysis-status', text: t('analysing') });
  document.getElementById('main').replaceChildren(
    h('h1', { text: `${gameName(view.game)} · ${t('replay')}` }), h('div', { id: 'errors' }),
    h('ul', { id: 'seats' }), h('p', { id: 'match-status', 'data-status': 'finished', text: `${t('finished')}: ${resultText(view)}` }),
    h('div', { class: 'replay' }, h('div', {}, holder, where,
      h('div', { class: 'controls' }, btn('first', `« ${t('firstPly')}`, () => show(0)), btn('prev', `◀ ${t('prev')}`, () => show(at - 1)),
        btn('next', `${t('next')} ▶`, () => show(at + 1)), btn('last', `${t('lastPly')} »`, () => show(total))), slider),
    h('section', {}, h('h2', { text: `${t('moves')} · ${t('analysis')}` }), analysisNote, list)));
  document.getElementById('seats').replaceWith(Object.assign(seatsLine(view), { id: 'seats' }));
  document.addEventListener('keydown', (e) => {
    if (e.target === slider || e.target.tagName === 'INPUT') return;
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: total }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    show(to);
  });
  renderList();
  try {
    const analysis = await api('GET', `/v1/matches/${view.match_id}/analysis`);
    for (const a of analysis.plies) judged[a.ply] = a;
    analysisNote.textContent = '';
    renderList();
  } catch (e) { showError(e, analysisNote); }
}

/** The cell where the disc of ply `n` landed in Four in a Row (the column's new top disc). */
function lastFourCell(plies, n) {
  const before = squares('four_in_a_row', plies[n - 1].board);
  const after = squares('four_in_a_row', plies[n].board);
  const i = after.findIndex(([, d], k) => d !== before[k][1]);
  return i >= 0 ? after[i][0] : null;
}

// ---- players, leaderboards ----------------------------------------------------------------

async function playerPage(id) {
  page(t('profile'), h('p', { text: t('loading') }));
  const profile = await attempt(() => api('GET', `/v1/players/${id}`));
  if (!profile) return;
  await catalogue().catch(() => null);
  const main = document.getElementById('main');
  main.replaceChildren(h('h1', { text: profile.name }), h('div', { id: 'errors' }));
  const ratings = h('section', { id: 'ratings' }, h('h2', { text: t('ratings') }));
  main.append(ratings);
  for (const game of GAMES) {
    const r = profile.ratings[game];
    const history = await attempt(() => api('GET', `/v1/players/${id}/ratings/${game}`));
    ratings.append(h('article', { class: 'rating', 'data-game': game }, h('h3', { text: gameName(game) }),
      r ? h('p', {}, h('strong', { text: Math.round(r.rating) }), ` ±${Math.round(r.deviation)} · ${t('games_', { n: r.games })}`,
        r.provisional ? h('span', { class: 'provisional', title: t('provisional') }, ` (${t('provisional')})`) : '') : null,
      chart(game, history ? history.points : [])));
  }
  const matches = await attempt(() => api('GET', `/v1/players/${id}/matches`));
  if (!matches) return;
  const resultName = { win: t('win'), loss: t('loss'), draw: t('drawR') };
  main.append(h('section', { id: 'history' }, h('h2', { text: t('history') }), h('table', {},
    h('thead', {}, h('tr', {}, [t('when'), t('game'), t('opponent'), t('result'), t('ratingCol')].map((c) => h('th', { text: c })))),
    h('tbody', {}, matches.matches.map((m) => h('tr', {},
      h('td', {}, h('a', { href: `/matches/${m.match_id}` }, new Date(m.ended_at).toLocaleString(lang))),
      h('td', { text: `${gameName(m.game)} (${m.ranked ? t('rankedMark') : t('casual')})` }),
      h('td', {}, m.opponent.player_id ? h('a', { href: `/players/${m.opponent.player_id}` }, m.opponent.name ?? '?') : t('cpu')),
      h('td', { text: resultName[m.result] || m.result }),
      h('td', { text: m.rating_after === null ? '' : `${Math.round(m.rating_before)} → ${Math.round(m.rating_after)}` })))))));
}

/** The rating chart: one point per rated match (linking to it), the deviation as a band. */
function chart(game, points) {
  const W = 640; const H = 220; const pad = 36;
  const svg = h('svg', { 'data-chart': 'rating', 'data-game': game, viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': t('ratingChart', { game: gameName(game) }), class: 'chart' });
  if (!points.length) {
    svg.setAttribute('viewBox', `0 0 ${W} 40`);
    svg.append(h('text', { x: W / 2, y: 25, 'text-anchor': 'middle', text: t('noRated') }));
    return svg;
  }
  const lo = Math.min(...points.map((p) => p.rating - p.deviation));
  const hi = Math.max(...points.map((p) => p.rating + p.deviation));
  const x = (i) => pad + (points.length === 1 ? (W - 2 * pad) / 2 : (i * (W - 2 * pad)) / (points.length - 1));
  const y = (v) => H - pad - ((v - lo) * (H - 2 * pad)) / Math.max(hi - lo, 1);
  const band = [...points.map((p, i) => `${x(i)},${y(p.rating + p.deviation)}`), ...points.map((p, i) => `${x(i)},${y(p.rating - p.deviation)}`).reverse()];
  svg.append(
    h('polygon', { class: 'band', points: band.join(' ') }),
    h('polyline', { class: 'line', points: points.map((p, i) => `${x(i)},${y(p.rating)}`).join(' ') }),
    h('text', { x: 4, y: y(hi) + 4, class: 'axis', text: Math.round(hi) }),
    h('text', { x: 4, y: y(lo), class: 'axis', text: Math.round(lo) }));
  points.forEach((p, i) => svg.append(h('a', { svg: true, href: `/matches/${p.match_id}`, 'data-match': p.match_id },
    h('circle', { cx: x(i), cy: y(p.rating), r: 5, class: 'point' },
      h('title', { text: `${Math.round(p.rating)} ±${Math.round(p.deviation)} · ${new Date(p.at).toLocaleString(lang)}` })))));
  return svg;
}

async function leaderboardPage(game) {
  page(t('leaderboards'), h('nav', { class: 'tabs' }, GAMES.map((g) => h('a', { href: `/leaderboards/${g}`, 'aria-current': g === game ? 'page' : null }, g))));
  if (needToken()) return;
  await catalogue().catch(() => null);
  document.querySelectorAll('.tabs a').forEach((a, i) => { a.textContent = gameName(GAMES[i]); });
  const board = await attempt(() => api('GET', `/v1/leaderboards/${encodeURIComponent(game)}`));
  if (!board) return;
  document.querySelector('h1').textContent = `${t('leaderboards')} · ${gameName(game)}`;
  document.getElementById('main').append(board.entries.length ? h('table', { id: 'leaderboard' },
    h('thead', {}, h('tr', {}, [t('rank'), t('player'), t('ratingCol'), t('deviation'), t('games_', { n: '' }).trim()].map((c) => h('th', { text: c })))),
    h('tbody', {}, board.entries.map((e) => h('tr', {}, h('td', { text: e.rank }),
      h('td', {}, h('a', { href: `/players/${e.player_id}` }, e.name)), h('td', { text: Math.round(e.rating) }),
      h('td', { text: Math.round(e.deviation) }), h('td', { text: e.games })))))
    : h('p', { text: t('noEntries') }));
}

// ---- admin --------------------------------------------------------------------------------

/** Any JSON value as nested tables and lists, for the admin views. */
function show(value) {
  if (Array.isArray(value)) {
    if (value.length && value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
      const keys = [...new Set(value.flatMap(Object.keys))];
      return h('table', {}, h('thead', {}, h('tr', {}, keys.map((k) => h('th', { text: k })))),
        h('tbody', {}, value.map((row) => h('tr', {}, keys.map((k) => h('td', {}, show(row[k])))))));
    }
    return h('ul', {}, value.map((v) => h('li', {}, show(v))));
  }
  if (value && typeof value === 'object') {
    return h('dl', {}, Object.entries(value).flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, show(v))]));
  }
  return document.createTextNode(value === null ? '—' : typeof value === 'number' ? String(Math.round(value * 1000) / 1000) : String(value));
}

async function adminPage() {
  page(t('admin'));
  const adminToken = () => localStorage.getItem('discs.admin_token') || token();
  const call = (method, path) => api(method, path, undefined, { auth: adminToken() });
  const out = (id) => h('div', { id, class: 'out' });
  const section = (id, title, controls, run) => {
    const result = out(`${id}-result`);
    return h('section', { id }, h('h2', { text: title }), h('form', { onsubmit: async (e) => {
      e.preventDefault();
      result.replaceChildren(t('loading'));
      try { result.replaceChildren(...[].concat(await run(e.target.elements, result))); } catch (err) { showError(err, result); }
    } }, ...controls, h('button', { type: 'submit' }, t('run'))), result);
  };
  const gameSelect = () => select('game', GAMES.map((g) => [g, g]), 'four_in_a_row');
  document.getElementById('main').append(
    h('form', { id: 'admin-token', onsubmit: (e) => {
      e.preventDefault();
      const v = e.target.elements.token.value.trim();
      if (v) localStorage.setItem('discs.admin_token', v); else localStorage.removeItem('discs.admin_token');
    } }, field(t('adminToken'), h('input', { name: 'token', type: 'password', value: localStorage.getItem('discs.admin_token') || '' })),
    h('button', { type: 'submit' }, t('save'))),
    section('audit', t('audit'), [field(t('excludePlayers'), h('input', { name: 'exclude' }))], async (f) => {
      const q = f.exclude.value.trim() ? `?exclude_players=${encodeURIComponent(f.exclude.value.trim())}` : '';
      return show(await call('GET', `/v1/admin/audits/ratings${q}`));
    }),
    section('explain', t('explain'), [field(t('playerId'), h('input', { name: 'player', required: true })), field(t('game'), gameSelect())],
      async (f) => show(await call('GET', `/v1/admin/players/${encodeURIComponent(f.player.value.trim())}/ratings/${f.game.value}/explain`))),
    section('flags', t('flags'), [], async () => show(await call('GET', '/v1/admin/flags'))),
    section('queue-stats', t('queueStats'), [], async () => show(await call('GET', '/v1/admin/queue/stats'))),
    section('projections', t('projections'), [field(t('projections'), select('name', ['ratings', 'history', 'leaderboards', 'queue'].map((n) => [n, n]), 'ratings')),
      h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'rebuild' }), ' ', t('rebuild'))], async (f, result) => {
      const name = f.name.value;
      if (f.rebuild.checked) {
        const started = await api('POST', `/v1/admin/projections/${name}/rebuild`, undefined, { auth: adminToken(), key: true });
        for (;;) {
          const s = await call('GET', `/v1/admin/projections/${name}`);
          const r = s.rebuild && s.rebuild.rebuild_id === started.rebuild_id ? s.rebuild : null;
          const done = r && r.status !== 'running';
          result.replaceChildren(h('p', { id: 'rebuild-progress' }, t('progress', { p: `${r ? r.events : 0} / ${s.log_position}` }), ' ',
            h('progress', { max: Math.max(s.log_position, 1), value: done ? s.log_position : (r ? r.events : 0) })), show(s));
          if (done) return [...result.childNodes];
          await new Promise((res) => setTimeout(res, 1000));
        }
      }
      return show(await call('GET', `/v1/admin/projections/${name}`));
    }));
}

// ---- routing ------------------------------------------------------------------------------

async function route() {
  header();
  const path = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  try {
    if (path.length === 0) return await homePage();
    if (path[0] === 'play' && path.length === 1) return await playPage();
    if (path[0] === 'matches' && path.length === 2) return await matchPage(path[1]);
    if (path[0] === 'players' && path.length === 2) return await playerPage(path[1]);
    if (path[0] === 'leaderboards' && path.length === 2) return await leaderboardPage(path[1]);
    if (path[0] === 'admin' && path.length === 1) return await adminPage();
    if (path[0] === 'rooms' && path.length === 2) return await roomPage(path[1]);
    page(t('notFound'));
  } catch (e) {
    showError(e);
  }
  return undefined;
}

route();
