//! End-to-end tests of the web client in a real browser: Debian's headless Chromium driven over
//! WebDriver, against the real server (its workers running) and a real PostgreSQL. Pages are
//! read through the testing contract only (`data-board`, `data-cell`, `data-disc`,
//! `data-chart`, `localStorage["discs.token"]`, `<html lang>`). A failing test leaves a
//! screenshot of every window in `target/tmp/browser-screenshots/`.

#[allow(dead_code)]
#[path = "../it/helpers.rs"]
mod helpers;
mod webdriver;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use database::testing::TestDb;
use discs::startup::Application;
use domain::games::GameId;
use domain::games::any::{AnyPosition, split_moves};
use service::clock::{Clock, ManualClock};
use service::config::QualityNodes;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};
use webdriver::{Driver, Session, Sessions};

/// WebDriver key codes.
const ARROW_LEFT: &str = "\u{E012}";
const ARROW_RIGHT: &str = "\u{E014}";
const HOME: &str = "\u{E011}";
const END: &str = "\u{E010}";

/// The site: the server on a fixed port (so that a restart keeps the address), its clock (the
/// system's, or a manual one the test moves), ChromeDriver, and the windows opened so far.
struct Site {
    db: TestDb,
    clock: Option<Arc<ManualClock>>,
    port: u16,
    base: String,
    http: reqwest::Client,
    state: Mutex<api::state::ApiState>,
    stop: Mutex<Option<(oneshot::Sender<()>, tokio::task::JoinHandle<()>)>>,
    driver: Driver,
    sessions: Sessions,
}

impl Site {
    /// The site on the system clock.
    async fn open() -> Site {
        Site::open_on(None).await
    }

    /// The site with its workers on a manual clock, from the present on.
    async fn on_manual_clock() -> Site {
        let start = OffsetDateTime::now_utc()
            .replace_nanosecond(0)
            .expect("valid");
        Site::open_on(Some(Arc::new(ManualClock::new(start)))).await
    }

    async fn open_on(clock: Option<Arc<ManualClock>>) -> Site {
        helpers::init_logs();
        let db = TestDb::migrated(2).await;
        let (state, port, stop) = serve(&db.url, 0, clock.clone()).await;
        Site {
            clock,
            port,
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
            state: Mutex::new(state),
            stop: Mutex::new(Some(stop)),
            driver: Driver::start().await,
            sessions: Sessions::default(),
            db,
        }
    }

    /// A new browser window asking for `languages`.
    async fn window(&self, languages: &str) -> Session {
        let s = self.driver.session(languages).await;
        self.sessions.keep(&s);
        s
    }

    /// Shuts the server down gracefully (as on SIGTERM) and waits until it has stopped.
    async fn stop(&self) {
        let (tx, done) = self
            .stop
            .lock()
            .expect("not poisoned")
            .take()
            .expect("a running server");
        let _ = tx.send(());
        done.await.expect("the server stops");
    }

    /// Starts a new server on the same port.
    async fn start(&self) {
        let (state, port, stop) = serve(&self.db.url, self.port, self.clock.clone()).await;
        assert_eq!(port, self.port);
        *self.state.lock().expect("not poisoned") = state;
        *self.stop.lock().expect("not poisoned") = Some(stop);
    }

    /// Brings every projection up to the committed log (as the workers soon would).
    async fn project(&self) {
        let state = self.state.lock().expect("not poisoned").clone();
        state
            .projections
            .sync_all()
            .await
            .expect("projections catch up");
    }

    /// The manual clock the site runs on.
    fn clock(&self) -> &ManualClock {
        self.clock.as_deref().expect("a site on a manual clock")
    }

    /// A new player with an admin token (as an operator issues one); their id and the token.
    async fn admin(&self, name: &str) -> (String, String) {
        let p = self.post("/v1/players", "", json!({ "name": name })).await;
        let id = p["player_id"].as_str().expect("an id").to_owned();
        let state = self.state.lock().expect("not poisoned").clone();
        let player: domain::ids::PlayerId = id.parse().expect("a player id");
        let token = state
            .keys
            .issue(player, api::auth::Role::Admin, 0, state.now())
            .expect("a token");
        (id, token)
    }

    async fn get(&self, path: &str, token: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
            .bearer_auth(token)
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("JSON")
    }
    async fn post(&self, path: &str, token: &str, body: Value) -> Value {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("JSON")
    }
}

/// The real application with its workers, on `port` (0: any), on the system clock or `clock`.
async fn serve(
    db_url: &str,
    port: u16,
    clock: Option<Arc<ManualClock>>,
) -> (
    api::state::ApiState,
    u16,
    (oneshot::Sender<()>, tokio::task::JoinHandle<()>),
) {
    let mut config = helpers::config(db_url);
    config.edge.addr = format!("127.0.0.1:{port}");
    config.core.no_workers = false;
    // The shipped pool: every projection's runner holds a connection for its lock.
    config.core.db.pool_size = 16;
    config.edge.shutdown_seconds = 1;
    // The workers judge every finished ranked game ply by ply: at the shipped 8 million nodes a
    // ply that was a fifth of these tests' CPU, and no page here shows how exact a judgement is.
    config.core.quality_ply_nodes = QualityNodes::all(100_000);
    // The replay page's analysis, likewise: at the shipped 2 million nodes a ply, a solo Reversi
    // game's replay cost more CPU than all of its play.
    config.core.analysis_ply_nodes = 100_000;
    // What a replay leaves inexact is queued as analysis jobs, which the workers search for up to
    // ten minutes each: a core busy until the test ends, for answers no page here asks for.
    config.core.analysis_job_seconds = 1;
    let app = match clock {
        Some(clock) => {
            Application::build_with(config, clock, Arc::new(service::chance::SystemChance)).await
        }
        None => Application::build(config).await,
    }
    .expect("the application builds");
    let (state, port) = (app.edge(), app.port());
    let (tx, rx) = oneshot::channel::<()>();
    let done = tokio::spawn(async move {
        app.run_until(async move {
            let _ = rx.await;
            "test"
        })
        .await
        .expect("the server runs");
    });
    (state, port, (tx, done))
}

/// Runs a browser test on a fresh site; if it fails, saves a screenshot of each window first.
async fn run<F, Fut>(name: &str, test: F)
where
    F: FnOnce(Arc<Site>) -> Fut,
    Fut: Future<Output = ()>,
{
    run_on(name, Site::open().await, test).await;
}

/// [`run`] on a given site.
async fn run_on<F, Fut>(name: &str, site: Site, test: F)
where
    F: FnOnce(Arc<Site>) -> Fut,
    Fut: Future<Output = ()>,
{
    let site = Arc::new(site);
    let outcome = AssertUnwindSafe(test(site.clone())).catch_unwind().await;
    if let Err(panic) = outcome {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
        let _ = std::fs::create_dir_all(&dir);
        for (i, s) in site.sessions.all().iter().enumerate() {
            if let Some(png) = s.screenshot().await {
                let path = dir.join(format!("{name}-{i}.png"));
                let _ = std::fs::write(&path, png);
                eprintln!("screenshot: {}", path.display());
            }
        }
        for s in site.sessions.all() {
            s.close().await;
        }
        std::panic::resume_unwind(panic);
    }
    for s in site.sessions.all() {
        s.close().await;
    }
}

/// Opens a room from the play page; returns its code, once the room's page shows it.
async fn open_room(site: &Site, w: &Session) -> String {
    w.goto(&format!("{}/play", site.base)).await;
    w.wait("document.querySelector('#room button[type=submit]')")
        .await;
    w.click("#room button[type=submit]").await;
    let code = w
        .wait("location.pathname.startsWith('/rooms/') && document.querySelector('#room-link') && location.pathname.split('/')[2]")
        .await;
    code.as_str().expect("a room code").to_owned()
}

/// Picks a name on the home page; returns the player's id and the token the page stored.
async fn sign_up(site: &Site, w: &Session, name: &str) -> (String, String) {
    w.goto(&format!("{}/", site.base)).await;
    w.wait("document.querySelector('#signup input[name=name]')")
        .await;
    w.type_into("#signup input[name=name]", name).await;
    w.click("#signup button[type=submit]").await;
    let href = w
        .wait("document.querySelector('#welcome a[href^=\"/players/\"]')?.getAttribute('href')")
        .await;
    let id = href
        .as_str()
        .and_then(|h| h.strip_prefix("/players/"))
        .expect("a link to the profile")
        .to_owned();
    let token = w.eval("return localStorage.getItem('discs.token')").await;
    let token = token.as_str().expect("the token is stored").to_owned();
    (id, token)
}

/// Starts a solo game against CPU level 1 from `/play`, by clicks; returns the match id.
async fn start_solo(site: &Site, w: &Session, game: &str) -> String {
    w.goto(&format!("{}/play", site.base)).await;
    w.wait("document.querySelector('#solo button[type=submit]')")
        .await;
    w.click(&format!("#solo select[name=game] option[value={game}]"))
        .await;
    w.click("#solo select[name=cpu_level] option[value='1']")
        .await;
    w.click("#solo button[type=submit]").await;
    let id = w
        .wait(&format!(
            "document.querySelector('[data-board=\"{game}\"]') && location.pathname.split('/')[2]"
        ))
        .await;
    id.as_str().expect("a match id").to_owned()
}

/// The board's ply on the page.
async fn ply(w: &Session) -> u64 {
    let v = w
        .wait("document.querySelector('[data-board]')?.dataset.ply")
        .await;
    v.as_str()
        .and_then(|s| s.parse().ok())
        .expect("a ply number")
}

/// Whether the page shows a finished match (`true`) or a square to play (`false`), once one
/// of them holds.
async fn finished_or_my_turn(w: &Session) -> bool {
    let v = w
        .wait(
            "document.querySelector('#match-status[data-status=finished]') ? 'finished' \
             : (document.querySelector('[data-board] [data-move]:not([disabled])') ? 'move' : null)",
        )
        .await;
    v == "finished"
}

/// Clicks the first square the page offers, then waits for the board to move past it.
async fn click_a_move(w: &Session) {
    let before = ply(w).await;
    w.click("[data-board] [data-move]:not([disabled])").await;
    w.wait(&format!(
        "Number(document.querySelector('[data-board]')?.dataset.ply) > {before} \
         || document.querySelector('#match-status[data-status=finished]')"
    ))
    .await;
}

/// The board after each ply of a game record, by the domain's rules: cell → disc letter.
fn boards_by_domain(game: GameId, record: &str) -> Vec<Value> {
    let mut position = AnyPosition::start(game);
    let mut out = vec![cells(game, &position.rows())];
    for mv in split_moves(game, record).expect("a valid record") {
        if position.must_pass() {
            position.pass();
        }
        position.play(&mv).expect("a legal move");
        out.push(cells(game, &position.rows()));
    }
    out
}

/// Names the squares of `rows` as the testing contract does.
fn cells(game: GameId, rows: &[String]) -> Value {
    let mut map = serde_json::Map::new();
    for (i, row) in rows.iter().enumerate() {
        for (j, c) in row.chars().enumerate() {
            let cell = match game {
                GameId::Reversi => format!("{}{}", (b'a' + j as u8) as char, i + 1),
                GameId::FourInARow => format!("{}{}", j + 1, rows.len() - i),
            };
            let disc = if c == '.' {
                String::new()
            } else {
                c.to_string()
            };
            map.insert(cell, json!(disc));
        }
    }
    Value::Object(map)
}

/// A solo game played to the end by clicks, then its replay stepped through with the keyboard,
/// the board checked against the domain's replay at every ply.
async fn solo_game_then_replay(site: &Site, game: GameId) {
    let w = site.window("en-GB,en").await;
    let (_, token) = sign_up(site, &w, "Clicker").await;
    let id = start_solo(site, &w, game.as_str()).await;
    // The board's coordinates, named as the moves are written.
    let coordinates = w
        .wait("document.querySelector('[data-coords=files]') && [...document.querySelectorAll('[data-coords]')].map((c) => c.textContent).join('|')")
        .await;
    let expected = match game {
        GameId::Reversi => "abcdefgh|12345678",
        GameId::FourInARow => "1234567",
    };
    assert_eq!(coordinates, expected);
    if game == GameId::Reversi {
        // The live view counts both colours' discs; at the start, two each.
        assert!(!finished_or_my_turn(&w).await);
        let counts = w
            .eval(
                "const on = (c) => document.querySelectorAll(`[data-board] [data-disc=\"${c}\"]`).length; \
                 const shown = (c) => document.querySelector(`#disc-count [data-count=\"${c}\"]`)?.textContent; \
                 return [on('B'), shown('B'), on('W'), shown('W')];",
            )
            .await;
        assert_eq!(counts, json!([2, "2", 2, "2"]));
    }
    while !finished_or_my_turn(&w).await {
        click_a_move(&w).await;
    }
    let view = site.get(&format!("/v1/matches/{id}"), &token).await;
    assert_eq!(view["status"], "finished", "{view}");
    let shown = w
        .wait("document.querySelector('#ply-slider') && document.querySelector('#match-status').textContent")
        .await;
    assert!(
        shown.as_str().is_some_and(|s| s.contains("Game over")),
        "{shown}"
    );

    // The opening's name under the result: every Reversi game has one from its second ply (the
    // three answers to the first move are all named); Four in a Row's is its first columns.
    let replay = site.get(&format!("/v1/matches/{id}/replay"), &token).await;
    let name = replay["opening"]["name"].as_str().expect("a named opening");
    if game == GameId::FourInARow {
        let record = view["moves"].as_str().expect("a record");
        let first: Vec<String> = record.chars().take(3).map(String::from).collect();
        let mirrored: Vec<String> = record
            .chars()
            .take(3)
            .map(|c| (8 - c.to_digit(10).expect("a column")).to_string())
            .collect();
        assert_eq!(name, first.min(mirrored).join("-"));
    }
    let opening = w
        .wait("document.querySelector('#move-list li') && document.querySelector('#opening')?.textContent")
        .await;
    assert!(
        opening
            .as_str()
            .is_some_and(|s| s.starts_with("Opening: ") && s.contains(name)),
        "{opening}"
    );

    let expected = boards_by_domain(game, view["moves"].as_str().expect("a record"));
    let last = expected.len() - 1;
    w.goto(&format!("{}/matches/{id}?ply=0", site.base)).await;
    w.wait("document.querySelector('#ply-slider') && document.querySelector('[data-board][data-ply=\"0\"]')")
        .await;
    for (n, board) in expected.iter().enumerate() {
        assert_eq!(ply(&w).await, n as u64);
        assert_eq!(&w.board().await, board, "ply {n}");
        assert!(
            w.url().await.ends_with(&format!("?ply={n}")),
            "the address follows the ply"
        );
        if n < last {
            w.press(ARROW_RIGHT).await;
            w.wait(&format!(
                "document.querySelector('[data-board][data-ply=\"{}\"]')",
                n + 1
            ))
            .await;
        }
    }
    w.press(ARROW_RIGHT).await;
    assert_eq!(ply(&w).await, last as u64, "the last ply is the end");
    w.press(HOME).await;
    w.wait("document.querySelector('[data-board][data-ply=\"0\"]')")
        .await;
    w.press(END).await;
    w.wait(&format!(
        "document.querySelector('[data-board][data-ply=\"{last}\"]')"
    ))
    .await;
    w.press(ARROW_LEFT).await;
    w.wait(&format!(
        "document.querySelector('[data-board][data-ply=\"{}\"]')",
        last - 1
    ))
    .await;
    assert_eq!(w.board().await, expected[last - 1]);
    // The analysis arrives beside each move.
    let judged = w
        .wait("document.querySelectorAll('#move-list .judged').length")
        .await;
    assert_eq!(judged, json!(last), "one judgement per move");
    // A move's quality is shown exactly where its judgement is exact, with its flag. How far
    // back the solver is exact depends on its budget and the game: a Reversi game won by a
    // wipeout 35 empties before the end may have no exact ply, but the last move of a full
    // board, and a Four in a Row game's winning or drawing move, always are.
    let marks = w
        .eval(
            "return [...document.querySelectorAll('#move-list li')].filter((li) => li.dataset.ply !== '0') \
             .map((li) => [li.dataset.quality, li.querySelector('.judged')?.dataset.exact === 'true', \
             li.querySelector('.flag')?.textContent.trim() ?? '']);",
        )
        .await;
    let marks = marks.as_array().expect("the plies' marks");
    assert_eq!(marks.len(), last, "{marks:?}");
    for (i, mark) in marks.iter().enumerate() {
        let (quality, exact, flag) = (
            mark[0].as_str().unwrap_or(""),
            mark[1].as_bool() == Some(true),
            mark[2].as_str().unwrap_or(""),
        );
        if exact {
            assert!(
                ["best", "inaccuracy", "error"].contains(&quality) && !flag.is_empty(),
                "ply {}: {mark}",
                i + 1
            );
        } else {
            assert_eq!(quality, "", "ply {}: an estimate has no quality", i + 1);
        }
    }
    let full = expected[last]
        .as_object()
        .expect("a board")
        .values()
        .all(|disc| disc != "");
    if game == GameId::FourInARow || full {
        assert_eq!(
            marks[last - 1][1],
            json!(true),
            "the last move is judged exactly"
        );
    }
}

#[tokio::test]
async fn a_solo_four_in_a_row_game_is_played_by_clicks_and_replayed_by_keyboard() {
    run("solo-four", |site| async move {
        solo_game_then_replay(&site, GameId::FourInARow).await;
    })
    .await;
}

#[tokio::test]
async fn a_solo_reversi_game_is_played_by_clicks_and_replayed_by_keyboard() {
    run("solo-reversi", |site| async move {
        solo_game_then_replay(&site, GameId::Reversi).await;
    })
    .await;
}

#[tokio::test]
async fn two_browsers_paired_by_the_ranked_queue_play_to_the_end_and_chart_the_new_rating() {
    run("ranked", |site| async move {
        let a = site.window("en").await;
        let b = site.window("en").await;
        let (a_id, a_token) = sign_up(&site, &a, "Ada").await;
        let (b_id, _) = sign_up(&site, &b, "Bea").await;
        for w in [&a, &b] {
            w.goto(&format!("{}/play", site.base)).await;
            w.wait("document.querySelector('#queue button[type=submit]')")
                .await;
            w.click("#queue button[type=submit]").await;
        }
        // The waiting indicator, until the wave pairs them and both pages open the match.
        let mut ids = Vec::new();
        for w in [&a, &b] {
            let id = w
                .wait("location.pathname.startsWith('/matches/') && document.querySelector('[data-board]') && location.pathname.split('/')[2]")
                .await;
            ids.push(id.as_str().expect("an id").to_owned());
        }
        assert_eq!(ids[0], ids[1], "one match for both");
        let id = ids[0].clone();
        loop {
            let view = site.get(&format!("/v1/matches/{id}"), &a_token).await;
            if view["status"] == "finished" {
                break;
            }
            let to_move = view["to_move"].as_u64().expect("a seat to move");
            let seat = &view["seats"][to_move as usize - 1];
            let w = if seat["player_id"] == json!(a_id) {
                &a
            } else {
                assert_eq!(seat["player_id"], json!(b_id));
                &b
            };
            assert!(!finished_or_my_turn(w).await, "the mover's page offers a move");
            click_a_move(w).await;
        }
        for w in [&a, &b] {
            finished_or_my_turn(w).await;
        }
        site.project().await;
        a.goto(&format!("{}/players/{a_id}", site.base)).await;
        let point = a
            .wait(&format!(
                "document.querySelector('svg[data-chart=rating][data-game=four_in_a_row] [data-match=\"{id}\"]')?.getAttribute('href')"
            ))
            .await;
        assert_eq!(point, json!(format!("/matches/{id}")));
        let points = a
            .eval("return document.querySelectorAll('svg[data-chart=rating] [data-match]').length")
            .await;
        assert_eq!(points, json!(1), "one point per rated match");
        // The history names the match's opening, as its replay does.
        let replay = site.get(&format!("/v1/matches/{id}/replay"), &a_token).await;
        let opening = a
            .wait("document.querySelector('#history td[data-opening]')?.textContent")
            .await;
        assert_eq!(opening, replay["opening"]["name"]);

        // The admin page, with an admin token pasted once: the audit, the rating explained,
        // a rebuild followed to its end.
        let admin = {
            let state = site.state.lock().expect("not poisoned").clone();
            let player: domain::ids::PlayerId = a_id.parse().expect("a player id");
            state
                .keys
                .issue(player, api::auth::Role::Admin, 0, state.now())
                .expect("a token")
        };
        a.goto(&format!("{}/admin", site.base)).await;
        a.wait("document.querySelector('#admin-token input')").await;
        a.type_into("#admin-token input", &admin).await;
        a.click("#admin-token button").await;
        a.click("#audit button[type=submit]").await;
        let chains = a
            .wait("[...document.querySelectorAll('#audit-result dt')].find((dt) => dt.textContent === 'chains_ok')?.nextElementSibling.textContent")
            .await;
        assert_eq!(chains, "true");
        // Ada found by name, her rating explained, the ratings without her: one click each.
        a.type_into("#players input[name=name]", "ad").await;
        a.click("#players button[type=submit]").await;
        let row = format!("#players-result li[data-player='{a_id}']");
        a.wait(&format!("document.querySelector(\"{row}\") !== null"))
            .await;
        let game = site.get(&format!("/v1/matches/{id}"), &a_token).await["game"]
            .as_str()
            .expect("a game")
            .to_owned();
        a.click(&format!("{row} button[data-explain='{game}']")).await;
        a.wait(&format!(
            "document.querySelector('#explain-result')?.textContent.includes('{id}')"
        ))
        .await;
        a.click(&format!("{row} button[data-what-if]")).await;
        let excluded = a
            .wait("document.querySelector('#audit-excluded')?.textContent")
            .await;
        assert!(
            excluded.as_str().is_some_and(|e| e.contains("Ada")),
            "{excluded}"
        );
        // A ban, with its reason, from the same row; then the ban lifted.
        a.type_into(&format!("{row} input[name=reason]"), "a test ban")
            .await;
        a.click(&format!("{row} button[data-decision=banned]")).await;
        a.wait(&format!(
            "document.querySelector(\"{row} .standing\")?.dataset.banned === 'true'"
        ))
        .await;
        let res = site
            .post("/v1/queue", &a_token, json!({"game": game}))
            .await;
        assert_eq!(res["code"], "forbidden", "{res}");
        a.click(&format!("{row} button[data-decision=cleared]")).await;
        a.wait(&format!(
            "document.querySelector(\"{row} .standing\")?.dataset.banned === 'false'"
        ))
        .await;
        a.click("#projections input[name=rebuild]").await;
        a.click("#projections button[type=submit]").await;
        let status = a
            .wait("document.querySelector('#rebuild-progress') && [...document.querySelectorAll('#projections-result dt')].find((dt) => dt.textContent === 'status')?.nextElementSibling.textContent.replace('running', '')")
            .await;
        assert_eq!(status, "done");
    })
    .await;
}

/// The count of games where it is `w`'s player's turn, in the header, once it reads `n`.
async fn turns_shown(w: &Session, n: u64) {
    w.wait(&format!(
        "document.querySelector('#inbox-count')?.dataset.turns === '{n}'"
    ))
    .await;
}

#[tokio::test]
async fn a_challenge_is_sent_from_a_profile_accepted_from_the_inbox_and_played_by_correspondence() {
    run("challenge", |site| async move {
        let a = site.window("en").await;
        let b = site.window("pt-BR,pt").await;
        let (_, a_token) = sign_up(&site, &a, "Ada").await;
        let (b_id, _) = sign_up(&site, &b, "Bea").await;
        // Ada challenges Bea from Bea's page: Four in a Row, a day a move, Ada first.
        a.goto(&format!("{}/players/{b_id}", site.base)).await;
        a.wait("document.querySelector('#challenge button[type=submit]')")
            .await;
        a.click("#challenge select[name=game] option[value=four_in_a_row]")
            .await;
        a.click("#challenge select[name=clock] option[value='d:1']")
            .await;
        a.click("#challenge select[name=first] option[value=challenger]")
            .await;
        a.click("#challenge button[type=submit]").await;
        a.wait("document.querySelector('#challenge-sent a[href=\"/inbox\"]')")
            .await;
        turns_shown(&a, 0).await;
        // Bea, on the home page, opens her inbox from the header and accepts: the match opens.
        b.click("#inbox-link").await;
        let accept = b
            .wait("document.querySelector('#inbox-received [data-accept]')?.dataset.accept")
            .await;
        assert!(accept.is_string(), "{accept}");
        b.click("#inbox-received [data-accept]").await;
        let id = b
            .wait("location.pathname.startsWith('/matches/') && document.querySelector('[data-board]') && location.pathname.split('/')[2]")
            .await;
        let id = id.as_str().expect("a match id").to_owned();
        let view = site.get(&format!("/v1/matches/{id}"), &a_token).await;
        assert_eq!(view["settings"]["days_per_move"], 1, "{view}");
        // Ada's header says it is her turn without a reload; her inbox leads to the match.
        turns_shown(&a, 1).await;
        a.click("#inbox-link").await;
        a.wait(&format!(
            "document.querySelector('#inbox-your-turn [data-match=\"{id}\"] a')"
        ))
        .await;
        a.click(&format!("#inbox-your-turn [data-match=\"{id}\"] a"))
            .await;
        a.wait("document.querySelector('[data-board] [data-move]:not([disabled])')")
            .await;
        click_a_move(&a).await;
        turns_shown(&a, 0).await;
        // Bea's turn appears in her header, live, on the match page; she moves; Ada's comes back.
        turns_shown(&b, 1).await;
        click_a_move(&b).await;
        turns_shown(&b, 0).await;
        turns_shown(&a, 1).await;
        let view = site.get(&format!("/v1/matches/{id}"), &a_token).await;
        // One move each (Four in a Row's moves are one column digit each).
        assert_eq!(view["moves"].as_str().map(str::len), Some(2), "{view}");
        assert_eq!(view["to_move"], 1, "{view}");
    })
    .await;
}

#[tokio::test]
async fn the_interface_speaks_portuguese_and_shows_api_errors_in_it() {
    run("portuguese", |site| async move {
        let w = site.window("pt-BR,pt").await;
        w.goto(&format!("{}/", site.base)).await;
        let heading = w
            .wait("document.documentElement.lang === 'pt' && document.querySelector('#signup h2')?.textContent")
            .await;
        assert_eq!(heading, "Escolha um nome para jogar");
        // A name the API refuses (blank once trimmed): its problem shows in Portuguese.
        w.type_into("#signup input[name=name]", "   ")
            .await;
        w.click("#signup button[type=submit]").await;
        let title = w
            .wait("document.querySelector('.problem strong')?.textContent")
            .await;
        let problem: Value = site
            .http
            .post(format!("{}/v1/players", site.base))
            .header("accept-language", "pt")
            .json(&json!({"name": "   "}))
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("a problem");
        assert_eq!(title, problem["title"]);
        let english = site
            .http
            .post(format!("{}/v1/players", site.base))
            .json(&json!({"name": "   "}))
            .send()
            .await
            .expect("an answer")
            .json::<Value>()
            .await
            .expect("a problem");
        assert_ne!(title, english["title"], "not the English title");

        // A page whose call fails (no token yet) says why, in the API's Portuguese words.
        let missing = "/matches/0190b8a4-1111-7000-8000-000000000000";
        w.goto(&format!("{}{missing}", site.base)).await;
        let detail = w
            .wait("document.querySelector('#errors .problem span')?.textContent")
            .await;
        let problem: Value = site
            .http
            .get(format!("{}/v1{missing}", site.base))
            .header("accept-language", "pt")
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("a problem");
        assert_eq!(problem["status"], 401, "{problem}");
        assert_eq!(detail, problem["detail"]);

        // The switch: an English page turns Portuguese and stays so.
        let e = site.window("en").await;
        e.goto(&format!("{}/", site.base)).await;
        e.wait("document.documentElement.lang === 'en' && document.querySelector('#signup h2')")
            .await;
        e.click("#lang option[value=pt]").await;
        e.wait("document.documentElement.lang === 'pt' && document.querySelector('#signup h2')?.textContent === 'Escolha um nome para jogar'")
            .await;
        e.goto(&format!("{}/play", site.base)).await;
        e.wait("document.documentElement.lang === 'pt' && document.querySelector('h1')?.textContent === 'Jogar'")
            .await;
    })
    .await;
}

#[tokio::test]
async fn the_live_view_reconnects_after_the_server_restarts() {
    run("reconnect", |site| async move {
        let w = site.window("en").await;
        let (_, token) = sign_up(&site, &w, "Phoenix").await;
        let id = start_solo(&site, &w, "four_in_a_row").await;
        // A move from the keyboard (key 4: column 4), and the CPU's reply through the stream.
        assert!(!finished_or_my_turn(&w).await);
        w.press("4").await;
        w.wait("Number(document.querySelector('[data-board]').dataset.ply) >= 2")
            .await;
        assert_eq!(w.board().await["41"], "R", "column 4 took the first disc");
        assert!(!finished_or_my_turn(&w).await);

        site.stop().await;
        w.wait("document.querySelector('#connection')?.dataset.connected === 'no'")
            .await;
        site.start().await;
        // A move made elsewhere while the page reconnects: the page shows it and the CPU's
        // reply, through the new server's stream.
        let view = site.get(&format!("/v1/matches/{id}"), &token).await;
        let res = site
            .http
            .post(format!("{}/v1/matches/{id}/moves", site.base))
            .bearer_auth(&token)
            .json(&json!({"move": view["legal_moves"][0], "expected_version": view["version"]}))
            .send()
            .await
            .expect("the new server answers");
        assert_eq!(res.status(), 200);
        w.wait("document.querySelector('#connection')?.dataset.connected === 'yes' && Number(document.querySelector('[data-board]').dataset.ply) >= 4")
            .await;
        let view = site.get(&format!("/v1/matches/{id}"), &token).await;
        assert_eq!(view["moves"].as_str().map(str::len), Some(4));
        let board = w.board().await;
        assert_eq!(board, cells(GameId::FourInARow, &rows(&view)));
    })
    .await;
}

#[tokio::test]
async fn the_replay_waits_out_a_busy_analysis_and_then_shows_it() {
    run("analysis-retry", |site| async move {
        let w = site.window("en").await;
        let (_, token) = sign_up(&site, &w, "Patient").await;
        // A short finished match: one move each (the CPU's reply commits with the move), then
        // resigned.
        let post = |path: String, body: Value| {
            site.http
                .post(format!("{}{path}", site.base))
                .bearer_auth(&token)
                .json(&body)
                .send()
        };
        let view: Value = post(
            "/v1/matches".into(),
            json!({"game": "four_in_a_row", "cpu_level": 1, "first": "me", "settings": {}}),
        )
        .await
        .expect("an answer")
        .json()
        .await
        .expect("a match");
        let id = view["match_id"].as_str().expect("an id").to_owned();
        let moved = post(
            format!("/v1/matches/{id}/moves"),
            json!({"move": "4", "expected_version": view["version"]}),
        )
        .await
        .expect("an answer");
        assert_eq!(moved.status(), 200);
        let view = site.get(&format!("/v1/matches/{id}"), &token).await;
        assert_eq!(view["moves"].as_str().map(str::len), Some(2), "{view}");
        let resigned = post(
            format!("/v1/matches/{id}/resign"),
            json!({"expected_version": view["version"]}),
        )
        .await
        .expect("an answer");
        assert_eq!(resigned.status(), 200);

        // Every search slot analyses may take is busy: the analysis is refused (429, retry
        // after 1 s), and the page says it waits.
        let state = site.state.lock().expect("not poisoned").clone();
        let mut held = Vec::new();
        for n in 1u128.. {
            let other = domain::ids::PlayerId::from_uuid(uuid::Uuid::from_u128(n));
            match state.searches.for_analysis(other).await {
                Ok(slot) => held.push(slot),
                Err(_) => break,
            }
        }
        assert!(!held.is_empty(), "analyses have slots");
        w.goto(&format!("{}/matches/{id}", site.base)).await;
        let waiting = w
            .wait("document.querySelector('#analysis-status .waiting[data-code=rate_limited]')?.textContent")
            .await;
        assert!(
            waiting.as_str().is_some_and(|s| s.contains("trying again")),
            "{waiting}"
        );
        // Once a slot is free, the page's next attempt gets the analysis.
        drop(held);
        let judged = w
            .wait("!document.querySelector('#analysis-status .waiting') && document.querySelectorAll('#move-list .judged').length")
            .await;
        assert_eq!(judged, json!(2), "one judgement per move");
    })
    .await;
}

#[tokio::test]
async fn a_room_page_follows_its_room_until_the_friend_starts_a_match() {
    run("room", |site| async move {
        let w = site.window("en").await;
        sign_up(&site, &w, "Host").await;
        let code = open_room(&site, &w).await;
        assert_eq!(
            w.eval("return document.querySelectorAll('#members li').length")
                .await,
            json!(1)
        );

        // The friend joins (through the API): the page, looking again, shows them.
        let friend: Value = site
            .http
            .post(format!("{}/v1/players", site.base))
            .json(&json!({"name": "Guest"}))
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("a player");
        let friend_token = friend["token"].as_str().expect("a token").to_owned();
        let room: Value = site
            .http
            .post(format!("{}/v1/rooms/{code}/join", site.base))
            .bearer_auth(&friend_token)
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("a room");
        let members = w
            .wait("document.querySelectorAll('#members li').length === 2 && document.querySelector('#members li[data-seat=\"2\"]').textContent")
            .await;
        assert!(
            members.as_str().is_some_and(|s| s.contains("Guest")),
            "{members}"
        );

        // The friend starts a match: the page opens it.
        let started: Value = site
            .http
            .post(format!(
                "{}/v1/rooms/{}/matches",
                site.base,
                room["room_id"].as_str().expect("a room id")
            ))
            .bearer_auth(&friend_token)
            .json(&json!({}))
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("a match");
        let id = started["match_id"].as_str().expect("a match id");
        w.wait(&format!(
            "location.pathname === '/matches/{id}' && document.querySelector('[data-board=\"four_in_a_row\"]')"
        ))
        .await;
    })
    .await;
}

fn rows(view: &Value) -> Vec<String> {
    view["board"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r.as_str().expect("a row").to_owned())
        .collect()
}

/// Plays `record` to its end in a fresh room match of two new players, over the API.
async fn played_room_game(site: &Site, game: &str, record: &str) {
    let post = async |path: &str, token: Option<&str>, body: Value| -> Value {
        let mut req = site.http.post(format!("{}{path}", site.base)).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let res = req.send().await.expect("the server answers");
        assert!(res.status().is_success(), "{path}: {}", res.status());
        res.json().await.expect("JSON")
    };
    let host = post("/v1/players", None, json!({"name": "Host"})).await;
    let guest = post("/v1/players", None, json!({"name": "Guest"})).await;
    let (host, guest) = (
        host["token"].as_str().expect("a token").to_owned(),
        guest["token"].as_str().expect("a token").to_owned(),
    );
    let room = post(
        "/v1/rooms",
        Some(&host),
        json!({"game": game, "settings": {}}),
    )
    .await;
    let code = room["code"].as_str().expect("a code");
    post(&format!("/v1/rooms/{code}/join"), Some(&guest), json!({})).await;
    let room_id = room["room_id"].as_str().expect("a room id");
    let started = post(
        &format!("/v1/rooms/{room_id}/matches"),
        Some(&host),
        json!({}),
    )
    .await;
    let id = started["match_id"].as_str().expect("a match id");
    let moves = split_moves(game.parse().expect("a game"), record).expect("a record");
    for (i, mv) in moves.iter().enumerate() {
        let token = if i.is_multiple_of(2) { &host } else { &guest };
        post(
            &format!("/v1/matches/{id}/moves"),
            Some(token),
            json!({"move": mv}),
        )
        .await;
    }
}

/// The explorer's move table on the page: `move → games`.
async fn explorer_table(w: &Session, line: &str) -> Value {
    w.wait(&format!(
        "document.querySelector('[data-line=\"{line}\"]') && document.querySelector('#explorer-table, #explorer-moves p') \
         && Object.fromEntries([...document.querySelectorAll('#explorer-table tbody tr')]\
              .map((tr) => [tr.dataset.move, Number(tr.querySelector('[data-games]').dataset.games)]))"
    ))
    .await
}

/// The same table from the API.
async fn api_table(site: &Site, token: &str, moves: &str) -> Value {
    let answer = site
        .get(&format!("/v1/explorer/four_in_a_row?moves={moves}"), token)
        .await;
    Value::Object(
        answer["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .map(|m| {
                (
                    m["move"].as_str().expect("a move").to_owned(),
                    m["games"].clone(),
                )
            })
            .collect(),
    )
}

#[tokio::test]
async fn the_explorer_is_clicked_through_three_plies_in_both_languages() {
    run("explorer", |site| async move {
        for record in ["4343434", "4545454", "3435363", "4141414"] {
            played_room_game(&site, "four_in_a_row", record).await;
        }
        site.project().await;
        let w = site.window("en").await;
        let (_, token) = sign_up(&site, &w, "Explorer").await;
        w.goto(&format!("{}/explorer/four_in_a_row", site.base)).await;
        let start = explorer_table(&w, "").await;
        assert_eq!(start, api_table(&site, &token, "").await);
        assert_eq!(start["4"], 3);
        // Three plies by clicks on the board: 4, then 3 (4 5 is the same line seen in the
        // mirror), then 4; the table follows the API at each, and the address the line.
        let mut line = String::new();
        for column in ["4", "3", "4"] {
            w.click(&format!("[data-board] .target[data-move=\"{column}\"]"))
                .await;
            line.push_str(column);
            let table = explorer_table(&w, &line).await;
            assert_eq!(table, api_table(&site, &token, &line).await, "{line}");
            assert_eq!(ply(&w).await, line.len() as u64);
        }
        let url = w.url().await;
        assert!(url.ends_with("/explorer/four_in_a_row?moves=434"), "{url}");
        let opening = w
            .wait("document.querySelector('#explorer-opening strong')?.textContent")
            .await;
        assert_eq!(opening, "4-3-4");
        // Back one ply: after 43 the table has 4 (two games, one of them played as 45 4).
        w.click("#explorer-back").await;
        assert_eq!(explorer_table(&w, "43").await, json!({"4": 2}));
        // A filter: no ranked game was played.
        w.click("#explorer-filters select[name=ranked] option[value=true]")
            .await;
        w.wait("document.querySelector('#explorer-moves p')").await;

        // In Portuguese, the table's headings.
        let pt = site.window("pt-BR,pt").await;
        pt.goto(&format!("{}/", site.base)).await;
        pt.eval(&format!("localStorage.setItem('discs.token', '{token}'); return 1"))
            .await;
        pt.goto(&format!("{}/explorer/four_in_a_row?moves=4", site.base))
            .await;
        let heading = pt
            .wait("document.documentElement.lang === 'pt' && document.querySelector('#explorer-table th')?.textContent")
            .await;
        assert_eq!(heading, "Lance");
        assert_eq!(
            explorer_table(&pt, "4").await,
            api_table(&site, &token, "4").await
        );
    })
    .await;
}

/// Closing one's account from one's own page, in Portuguese: what it does, the confirmation,
/// then the name gone from the API's answers and the token forgotten.
#[tokio::test]
async fn a_player_closes_their_account_from_their_page_in_two_steps() {
    run("closing", |site| async move {
        let w = site.window("pt-BR,pt").await;
        let (id, _) = sign_up(&site, &w, "Quitéria Fontes").await;
        // Another player's page offers no closing.
        let other = site.post("/v1/players", "", json!({"name": "Outro"})).await;
        let other_id = other["player_id"].as_str().expect("an id").to_owned();
        let other_token = other["token"].as_str().expect("a token").to_owned();
        w.goto(&format!("{}/players/{other_id}", site.base)).await;
        w.wait("document.querySelector('#ratings') !== null").await;
        assert_eq!(
            w.eval("return document.querySelector('#close-account') === null")
                .await,
            json!(true)
        );
        w.goto(&format!("{}/players/{id}", site.base)).await;
        w.wait("document.querySelector('#close-account')").await;
        w.click("#close-account").await;
        let what = w
            .wait("document.querySelector('#closing-what')?.textContent")
            .await;
        assert!(
            what.as_str()
                .is_some_and(|t| t.starts_with("O seu nome é apagado")),
            "{what}"
        );
        w.click("#confirm-close").await;
        let closed = w
            .wait("document.querySelector('#account-closed')?.textContent")
            .await;
        let profile = site.get(&format!("/v1/players/{id}"), &other_token).await;
        let label = profile["name"].as_str().expect("a label");
        assert!(label.starts_with("closed-"), "{profile}");
        assert!(
            closed.as_str().is_some_and(|t| t.contains(label)),
            "{closed}"
        );
        assert_eq!(
            w.eval("return localStorage.getItem('discs.token')").await,
            Value::Null
        );
        // The page says the label, not the name, and no longer links to a profile of one's own.
        assert_eq!(
            w.eval("return [document.querySelector('#main h1').textContent, document.querySelector('#top a[href^=\"/players/\"]') === null]")
                .await,
            json!([label, true])
        );
    })
    .await;
}

/// An instant as the API takes it (RFC 3339).
fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).expect("a time")
}

/// Waits until the page shows tournament `id` with its standings read, and answers the
/// testing contract's view of its lines: `[player, rank, score, streak]` each.
async fn standings_shown(w: &Session, id: &str, lines: usize) -> Value {
    w.wait(&format!(
        "location.pathname === '/tournaments/{id}' \
         && document.querySelectorAll('#standings-table tbody tr').length === {lines} \
         && [...document.querySelectorAll('#standings-table tbody tr')].map((tr) => \
              [tr.dataset.player, Number(tr.dataset.rank), tr.querySelector('[data-score]').dataset.score, \
               Number(tr.querySelector('[data-streak]').dataset.streak)])"
    ))
    .await
}

/// A small arena on the server's manual clock, in two browsers (one English, one Portuguese):
/// an admin creates it through the API; both players find it in the list, open it and join by
/// clicks, the countdown counting on the server's clock (three hours ahead of the browsers');
/// the clock reaches the start, the organiser pairs them and both pages open the game by
/// themselves; it is played to its end by clicks, both pages go back to the tournament, whose
/// standings show the result; the clock passes the end, and both pages show the tournament
/// finished with the winner first on the podium. Two players meet once (an arena refuses an
/// immediate rematch), so the game is the only one.
#[tokio::test]
async fn a_small_arena_is_played_to_its_end_in_two_browsers() {
    run_on("arena", Site::on_manual_clock().await, |site| async move {
        // The server's clock three hours ahead of the browsers': a countdown on the browser's
        // clock would be three hours off.
        site.clock().advance(Duration::hours(3));
        let (_, admin) = site.admin("Organiser").await;
        let starts_at = site.clock().now() + Duration::minutes(1);
        let created = site
            .post(
                "/v1/tournaments",
                &admin,
                json!({"game": "four_in_a_row", "format": "arena", "name": "Browser Arena",
                       "starts_at": rfc3339(starts_at), "minutes": 10, "rated": false,
                       "settings": {"turn_seconds": null}, "private": false}),
            )
            .await;
        assert_eq!(created["status"], "open", "{created}");
        let id = created["tournament_id"].as_str().expect("an id").to_owned();
        site.project().await;

        let a = site.window("en").await;
        let b = site.window("pt-BR,pt").await;
        let (a_id, a_token) = sign_up(&site, &a, "Ada").await;
        let (b_id, _) = sign_up(&site, &b, "Bea").await;
        for w in [&a, &b] {
            w.goto(&format!("{}/tournaments", site.base)).await;
            let link = format!("#tournaments-upcoming a[href='/tournaments/{id}']");
            w.wait(&format!("document.querySelector(\"{link}\")"))
                .await;
            w.click(&link).await;
            w.wait(&format!(
                "location.pathname === '/tournaments/{id}' && document.querySelector('#tournament-join')"
            ))
            .await;
            // A minute to go by the server's clock, whatever the browser's says.
            let seconds = w
                .wait("document.querySelector('#countdown')?.dataset.seconds")
                .await;
            let seconds: u64 = seconds
                .as_str()
                .and_then(|s| s.parse().ok())
                .expect("seconds");
            assert!((1..=60).contains(&seconds), "{seconds} s to the start");
            w.click("#tournament-join").await;
            w.wait("document.querySelector('#my-place')?.dataset.status === 'joined' && document.querySelector('#tournament-withdraw')")
                .await;
        }
        // Ada's page learns of Bea's joining through the stream; each page in its language.
        for (w, open) in [(&a, "open for joining"), (&b, "inscrições abertas")] {
            let lines = standings_shown(w, &id, 2).await;
            let players: Vec<&str> = lines
                .as_array()
                .expect("lines")
                .iter()
                .map(|l| l[0].as_str().expect("a player"))
                .collect();
            assert!(
                players.contains(&a_id.as_str()) && players.contains(&b_id.as_str()),
                "{lines}"
            );
            let status = w
                .wait("document.querySelector('#tournament-status')?.textContent")
                .await;
            assert!(
                status.as_str().is_some_and(|s| s.ends_with(open)),
                "{status}"
            );
        }

        // The start: the organiser (every 250 ms) starts the arena and pairs them; both pages
        // open the game by themselves.
        site.clock().advance(Duration::minutes(1));
        let mut ids = Vec::new();
        for w in [&a, &b] {
            let m = w
                .wait("location.pathname.startsWith('/matches/') && document.querySelector('[data-board]') && location.pathname.split('/')[2]")
                .await;
            ids.push(m.as_str().expect("a match id").to_owned());
            let back = w
                .wait("document.querySelector('#tournament-link a')?.getAttribute('href')")
                .await;
            assert_eq!(back, json!(format!("/tournaments/{id}")));
        }
        assert_eq!(ids[0], ids[1], "one game for both");
        let match_id = ids[0].clone();
        let view = site.get(&format!("/v1/tournaments/{id}"), &a_token).await;
        assert_eq!(view["status"], "running", "{view}");
        assert_eq!(view["me"]["match_id"], json!(match_id), "{view}");
        let game = site.get(&format!("/v1/matches/{match_id}"), &a_token).await;
        assert_eq!(game["tournament_id"], json!(id), "{game}");

        // The game, by clicks, the mover's page each time.
        let finished = loop {
            let view = site.get(&format!("/v1/matches/{match_id}"), &a_token).await;
            if view["status"] == "finished" {
                break view;
            }
            let to_move = view["to_move"].as_u64().expect("a seat to move");
            let seat = &view["seats"][to_move as usize - 1];
            let w = if seat["player_id"] == json!(a_id) {
                &a
            } else {
                assert_eq!(seat["player_id"], json!(b_id));
                &b
            };
            assert!(!finished_or_my_turn(w).await, "the mover's page offers a move");
            click_a_move(w).await;
        };
        let seat = finished["result"]["winner_seat"]
            .as_u64()
            .unwrap_or_else(|| panic!("a winner (first columns first never draws): {finished}"));
        let winner = finished["seats"][seat as usize - 1]["player_id"]
            .as_str()
            .expect("the winner")
            .to_owned();
        let loser = if winner == a_id { &b_id } else { &a_id }.clone();

        // Both pages go back to the tournament by themselves: the winner's two points (the
        // standings read again on the result), the game in the pairings.
        for w in [&a, &b] {
            w.wait(&format!(
                "location.pathname === '/tournaments/{id}' \
                 && document.querySelector('#standings-table tr[data-player=\"{winner}\"] [data-score=\"2\"]') \
                 && document.querySelector('#pairings-list li[data-match=\"{match_id}\"][data-result=win]')"
            ))
            .await;
            let lines = standings_shown(w, &id, 2).await;
            assert_eq!(
                lines,
                json!([[winner, 1, "2", 1], [loser, 2, "0", 0]]),
                "{lines}"
            );
            assert_eq!(
                w.eval("return document.querySelector('#my-place').dataset.status")
                    .await,
                "joined"
            );
        }

        // Past the end: the arena finishes (no game is left), and both pages say so, with the
        // podium.
        site.clock().advance(Duration::minutes(10));
        for (w, finished, over) in [
            (&a, "finished", "The tournament is over."),
            (&b, "terminado", "O torneio terminou."),
        ] {
            let podium = w
                .wait("document.querySelector('#tournament-status')?.dataset.status === 'finished' \
                       && document.querySelectorAll('#podium-list li').length === 2 \
                       && [...document.querySelectorAll('#podium-list li')].map((li) => li.dataset.player)")
                .await;
            assert_eq!(podium, json!([winner, loser]));
            let status = w
                .eval("return document.querySelector('#tournament-status').textContent")
                .await;
            assert!(
                status.as_str().is_some_and(|s| s.ends_with(finished)),
                "{status}"
            );
            assert_eq!(
                w.eval("return [location.pathname, document.querySelector('#countdown').textContent, \
                        document.querySelector('#my-place').textContent, document.querySelectorAll('#tournament-actions button').length]")
                    .await,
                json!([format!("/tournaments/{id}"), "", over, 0])
            );
            let violations = axe_violations(w).await;
            assert!(violations.is_empty(), "{}", violations.join("\n"));
        }
        let view = site.get(&format!("/v1/tournaments/{id}"), &a_token).await;
        assert_eq!(view["status"], "finished", "{view}");
        let pairings = site
            .get(&format!("/v1/tournaments/{id}/pairings"), &a_token)
            .await;
        assert_eq!(
            pairings["pairings"].as_array().map(Vec::len),
            Some(1),
            "{pairings}"
        );
    })
    .await;
}

/// A private tournament created with the form (no admin: private it must be) shows its invite
/// code; a friend joins by typing it, and the same code again is refused in the friend's
/// language, as the API words it.
#[tokio::test]
async fn a_private_tournament_is_created_by_its_form_and_joined_by_its_code() {
    run("private-tournament", |site| async move {
        let a = site.window("en").await;
        sign_up(&site, &a, "Host").await;
        a.goto(&format!("{}/tournaments", site.base)).await;
        a.wait("document.querySelector('#create-tournament input[name=name]')")
            .await;
        assert_eq!(
            a.eval("const p = document.querySelector('#create-tournament input[name=private]'); return [p.checked, p.disabled]")
                .await,
            json!([true, true]),
            "a player's tournament is private"
        );
        a.type_into("#create-tournament input[name=name]", "Friday Four")
            .await;
        a.click("#create-tournament button[type=submit]").await;
        let code = a
            .wait("document.querySelector('#created-code')?.textContent")
            .await;
        let code = code.as_str().expect("a code").to_owned();
        let href = a
            .wait("document.querySelector('#created-link')?.getAttribute('href')")
            .await;
        let id = href
            .as_str()
            .and_then(|h| h.strip_prefix("/tournaments/"))
            .expect("a link to the tournament")
            .to_owned();

        let b = site.window("pt-BR,pt").await;
        let (b_id, b_token) = sign_up(&site, &b, "Amiga").await;
        b.goto(&format!("{}/tournaments", site.base)).await;
        b.wait("document.querySelector('#join-code input[name=code]')")
            .await;
        b.type_into("#join-code input[name=code]", &code).await;
        b.click("#join-code button[type=submit]").await;
        b.wait(&format!(
            "location.pathname === '/tournaments/{id}' && document.querySelector('#my-place')?.dataset.status === 'joined'"
        ))
        .await;
        let lines = standings_shown(&b, &id, 1).await;
        assert_eq!(lines, json!([[b_id, 1, "0", 0]]));
        // The player sees the code to pass on.
        let shown = b
            .wait("document.querySelector('#tournament-code strong')?.textContent")
            .await;
        assert_eq!(shown, json!(code));

        // The code again: the API's refusal, in Portuguese.
        b.goto(&format!("{}/tournaments", site.base)).await;
        b.wait("document.querySelector('#join-code input[name=code]')")
            .await;
        b.type_into("#join-code input[name=code]", &code).await;
        b.click("#join-code button[type=submit]").await;
        let detail = b
            .wait("document.querySelector('#errors .problem[data-code=already_joined] span')?.textContent")
            .await;
        let problem: Value = site
            .http
            .post(format!("{}/v1/tournaments/join/{code}", site.base))
            .bearer_auth(&b_token)
            .header("accept-language", "pt")
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("a problem");
        assert_eq!(problem["code"], "already_joined", "{problem}");
        assert_eq!(detail, problem["detail"]);

        // The host's page of it: the friend in the standings, and a button to join too.
        a.click("#created-link").await;
        let lines = standings_shown(&a, &id, 1).await;
        assert_eq!(lines[0][0], json!(b_id));
        a.wait("document.querySelector('#my-place')?.dataset.status === 'none' && document.querySelector('#tournament-join')")
            .await;
    })
    .await;
}

/// axe-core 4.14.1 (`npm pack axe-core@4.14.1`, MPL-2.0, vendored as published): the
/// accessibility rules a new user's checker runs.
const AXE: &str = include_str!("axe.min.js");

/// The serious and critical accessibility violations axe-core finds on the page as it is now,
/// and any skipped heading level (`heading-order`, moderate to axe, but a page's outline is
/// how a screen reader's user moves through it): `rule (impact): target, target …` for each.
async fn axe_violations(w: &Session) -> Vec<String> {
    w.eval(&format!("{AXE}\n;window.__axe = null; axe.run(document, {{resultTypes: ['violations']}}).then((r) => {{ window.__axe = r.violations; }}); return true;"))
        .await;
    let found = w.wait("window.__axe && JSON.stringify(window.__axe)").await;
    let violations: Vec<Value> =
        serde_json::from_str(found.as_str().unwrap_or("[]")).expect("axe's violations");
    violations
        .iter()
        .filter(|v| {
            matches!(v["impact"].as_str(), Some("serious" | "critical"))
                || v["id"] == "heading-order"
        })
        .map(|v| {
            let targets: Vec<String> = v["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| n["target"].to_string())
                .collect();
            format!("{} ({}): {}", v["id"], v["impact"], targets.join(", "))
        })
        .collect()
}

/// Every page of the site in English has no serious or critical accessibility violation by
/// axe-core: the home page, play, a match, a player, a leaderboard, the admin page, a room, the
/// explorer, the tournaments and a tournament, the inbox, and a page that does not exist.
#[tokio::test]
async fn every_page_in_english_passes_axe_core() {
    every_page_passes_axe_core("en").await;
}

/// [`every_page_in_english_passes_axe_core`] in Portuguese (a test of its own, so that the two
/// languages' pages are read on both cores).
#[tokio::test]
async fn every_page_in_portuguese_passes_axe_core() {
    every_page_passes_axe_core("pt-BR,pt").await;
}

/// Every page of the site, read in `languages` (an `Accept-Language`), passes axe-core.
async fn every_page_passes_axe_core(languages: &'static str) {
    run(&format!("axe-{}", &languages[..2]), |site| async move {
        // A ranked game played to its end through the API: a player with a rating chart and a
        // history, a finished match's replay, an explorer with games.
        let mut players = Vec::new();
        for name in ["Ranked One", "Ranked Two"] {
            let p = site.post("/v1/players", "", json!({ "name": name })).await;
            let token = p["token"].as_str().expect("a token").to_owned();
            let t = site
                .post("/v1/queue", &token, json!({"game": "four_in_a_row"}))
                .await;
            assert_eq!(t["status"], "waiting", "{t}");
            players.push((p["player_id"].as_str().expect("an id").to_owned(), token));
        }
        site.project().await;
        let state = site.state.lock().expect("not poisoned").clone();
        service::ranked::run_waves(&state.ranked).await.expect("a wave");
        let slot = database::testing::raw_client(&site.db.url)
            .await
            .query_one(
                "SELECT match_id::text FROM queue_slots WHERE player_id = $1::text::uuid",
                &[&players[0].0],
            )
            .await
            .expect("a slot");
        let ranked: String = slot.get(0);
        let view = site.get(&format!("/v1/matches/{ranked}"), &players[0].1).await;
        let first = usize::from(view["seats"][0]["player_id"] != json!(players[0].0));
        for (k, mv) in ["4", "1", "4", "1", "4", "1", "4"].into_iter().enumerate() {
            let (_, token) = &players[(first + k) % 2];
            let played = site
                .post(&format!("/v1/matches/{ranked}/moves"), token, json!({ "move": mv }))
                .await;
            assert!(played["version"].is_number(), "{played}");
        }
        site.project().await;
        let rated = players[0].0.clone();
        // A public arena (an admin's) for the lists, and in each language a private Swiss
        // tournament the visitor created and joined: its code, standings and buttons.
        let soon = rfc3339(OffsetDateTime::now_utc() + Duration::minutes(30));
        let (_, admin) = site.admin("Axe Organiser").await;
        let arena = site
            .post(
                "/v1/tournaments",
                &admin,
                json!({"game": "four_in_a_row", "format": "arena", "name": "Axe Arena",
                       "starts_at": soon, "minutes": 30}),
            )
            .await;
        assert_eq!(arena["status"], "open", "{arena}");
        site.project().await;
        let mut failures = Vec::new();
        let w = site.window(languages).await;
        let (id, token) = sign_up(&site, &w, &format!("Axe {}", &languages[..2])).await;
        let swiss = site
            .post(
                "/v1/tournaments",
                &token,
                json!({"game": "reversi", "format": "swiss", "name": "Axe Swiss",
                       "starts_at": soon, "rounds": 3, "private": true}),
            )
            .await;
        let invite = swiss["code"].as_str().expect("an invite code");
        let joined = site
            .post(&format!("/v1/tournaments/join/{invite}"), &token, json!({}))
            .await;
        assert_eq!(joined["status"], "joined", "{joined}");
        let swiss = swiss["tournament_id"].as_str().expect("an id").to_owned();
        // A challenge received, for the inbox.
        let challenge = site
            .post(
                "/v1/challenges",
                &players[0].1,
                json!({"opponent": id, "game": "reversi", "days_per_move": 2}),
            )
            .await;
        assert_eq!(challenge["status"], "open", "{challenge}");
        let match_id = start_solo(&site, &w, "four_in_a_row").await;
        let code = open_room(&site, &w).await;
        for page in [
            "/".to_owned(),
            "/play".to_owned(),
            format!("/matches/{match_id}"),
            format!("/matches/{ranked}"),
            format!("/players/{id}"),
            format!("/players/{rated}"),
            "/explorer/four_in_a_row".to_owned(),
            "/leaderboards/four_in_a_row".to_owned(),
            "/leaderboards/reversi?board=correspondence".to_owned(),
            "/admin".to_owned(),
            format!("/rooms/{code}"),
            "/explorer/reversi".to_owned(),
            "/tournaments".to_owned(),
            format!("/tournaments/{swiss}"),
            "/inbox".to_owned(),
            "/no-such-page".to_owned(),
        ] {
            if page == "/no-such-page" {
                // The server answers a path it has no page for with a problem; the site's
                // own not-found page is the client's, for a link it does not know.
                w.eval("history.pushState({}, '', '/no-such-page'); dispatchEvent(new PopStateEvent('popstate')); return true")
                    .await;
            } else {
                w.goto(&format!("{}{page}", site.base)).await;
            }
            w.wait("document.querySelector('#main h1') && !document.querySelector('#main .loading')")
                .await;
            for v in axe_violations(&w).await {
                failures.push(format!("{languages} {page}: {v}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    })
    .await;
}
