//! The route table: every route is declared once, and that one declaration both registers the
//! handler and describes it in the OpenAPI document served at `/openapi.json`.

use crate::error::ApiError;
use crate::ratelimit::ByAddress;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ResourceDef, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};
use openapi::Reply::{EventStream, Html, Json, Prometheus};
use openapi::{Reply, SchemaFn, fields, of};

pub mod admin;
pub mod analysis;
pub mod challenges;
pub mod explorer;
pub mod games;
pub mod health;
pub mod history;
pub mod leaderboards;
pub mod matches;
pub mod openapi;
pub mod players;
pub mod queue;
pub mod rooms;
pub mod stream;
pub mod tournaments;

/// One documented route.
pub struct RouteDoc {
    pub method: &'static str,
    pub path: &'static str,
    /// The handler as the table names it (`matches::play`), for the tests that read its source.
    pub handler: &'static str,
    /// What clients call the operation (`playMove`): unique, and stable, since generated
    /// clients name their functions by it.
    pub operation_id: &'static str,
    /// The group the operation is listed (and a generated client's module is) in.
    pub tag: Tag,
    pub summary: &'static str,
    pub auth: bool,
    /// The schema of the JSON body, if the call takes one.
    pub body: Option<SchemaFn>,
    /// The schema of the query string's parameters (a struct), if the call reads any.
    pub query: Option<SchemaFn>,
    /// The success status.
    pub status: u16,
    /// What the success answer holds.
    pub reply: Reply,
}

macro_rules! routes {
    ($( $method:ident $path:literal => $handler:path, id = $id:ident, tag = $tag:ident, $status:literal, auth = $auth:literal, body = $body:expr, query = $query:expr, reply = $reply:expr, $summary:literal; )*) => {
        /// Registers every route of the table, grouped by [`Routes`].
        pub fn configure(cfg: &mut web::ServiceConfig) {
            let mut routes = Routes::default();
            $( routes.add(stringify!($method), $path, web::$method().to($handler)); )*
            routes.register(cfg);
        }

        /// The table, for the OpenAPI document.
        pub fn table() -> Vec<RouteDoc> {
            vec![$( RouteDoc {
                method: stringify!($method),
                path: $path,
                handler: stringify!($handler),
                operation_id: stringify!($id),
                tag: Tag::$tag,
                summary: $summary,
                auth: $auth,
                body: $body,
                query: $query,
                status: $status,
                reply: $reply,
            }, )*]
        }
    };
}

/// The groups of operations, in the document's order: a generated client puts each group's
/// operations in a module of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    Players,
    Games,
    Leaderboards,
    Queue,
    Rooms,
    Challenges,
    Tournaments,
    Matches,
    Analysis,
    Admin,
    Health,
    History,
    Docs,
}

impl Tag {
    pub const ALL: [Tag; 13] = [
        Tag::Players,
        Tag::Games,
        Tag::Leaderboards,
        Tag::Queue,
        Tag::Rooms,
        Tag::Challenges,
        Tag::Tournaments,
        Tag::Matches,
        Tag::Analysis,
        Tag::Admin,
        Tag::History,
        Tag::Health,
        Tag::Docs,
    ];

    /// The tag's name in the document.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Players => "players",
            Tag::Games => "games",
            Tag::Leaderboards => "leaderboards",
            Tag::Queue => "queue",
            Tag::Rooms => "rooms",
            Tag::Challenges => "challenges",
            Tag::Tournaments => "tournaments",
            Tag::Matches => "matches",
            Tag::Analysis => "analysis",
            Tag::Admin => "admin",
            Tag::History => "history",
            Tag::Health => "health",
            Tag::Docs => "docs",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Tag::Players => {
                "Sign up (a name is enough: the answer holds the device's token), refresh the token, read a player's profile, finished matches and rating history."
            }
            Tag::Games => "The games served: rules, glossary, settings and CPU levels.",
            Tag::Leaderboards => "The non-provisional players of a game by rating.",
            Tag::History => {
                "Signed checkpoints of the whole log (Ed25519 over a Merkle root, kept outside the database too) and a finished match's proof against one, to check offline with `discs verify-match`."
            }
            Tag::Queue => {
                "Ranked matchmaking: a ticket per player in a pool (game and turn limit), paired by rating; poll the ticket for its match."
            }
            Tag::Rooms => {
                "Private rooms: invite by code, change settings between matches, start matches and rematches (alone, against the CPU)."
            }
            Tag::Challenges => {
                "Challenge a player to a game on your terms (the game, rated or not, the turn limit, who moves first): they accept (the match starts), decline with a reason, or let it lapse; you may cancel. Every step is an event of the challenge's own stream. Say whom you accept challenges from."
            }
            Tag::Tournaments => {
                "Arenas, Swiss tournaments and round robins over ordinary matches: create (admins public ones, any player a private one with an invite code), list, join, withdraw, pause and resume; standings with tie-breaks, pairings by round, your current match, and the tournament's event stream to open your next game."
            }
            Tag::Matches => {
                "Solo matches against the CPU, and playing any match: the view, moves, leaving, returning, resigning, presence, the events, the replay and the live stream."
            }
            Tag::Analysis => {
                "Scores and best moves: of a position now, of a finished match ply by ply, and deep analyses run as background jobs."
            }
            Tag::Admin => {
                "Admin tokens only: rating audits and explanations, suspicious patterns, queue statistics, projection rebuilds."
            }
            Tag::Health => "Liveness, readiness and Prometheus metrics.",
            Tag::Docs => "This document and its page.",
        }
    }
}

/// A route of a group: the rest of its path after the group's prefix, its method, its route.
type Declared = (&'static str, &'static str, actix_web::Route);

/// Routes grouped by the static part of their path before the first `{parameter}`: each group
/// is a scope whose prefix is matched by comparing strings, so a request runs the patterns (regular
/// expressions) of its own group only, not of every route registered before its own.
#[derive(Default)]
struct Routes {
    /// The groups (prefix and routes), in the order their first route was declared.
    groups: Vec<(&'static str, Vec<Declared>)>,
}

impl Routes {
    fn add(&mut self, method: &'static str, path: &'static str, route: actix_web::Route) {
        let prefix = prefix_of(path);
        let rest = &path[prefix.len()..];
        let method = method_name(method);
        match self.groups.iter_mut().find(|(p, _)| *p == prefix) {
            Some((_, routes)) => routes.push((rest, method, route)),
            None => self.groups.push((prefix, vec![(rest, method, route)])),
        }
    }

    fn register(mut self, cfg: &mut web::ServiceConfig) {
        // A scope takes every path under its prefix: `/v1/analysis/jobs` must be tried before
        // `/v1/analysis`, which would answer it 404.
        self.groups
            .sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        for (prefix, routes) in self.groups {
            let mut scope = web::scope(prefix);
            let mut patterns: Vec<(ResourceDef, &'static str)> = Vec::new();
            for (rest, method, route) in routes {
                patterns.push((ResourceDef::new(rest), method));
                scope = scope.route(rest, route);
            }
            let patterns = std::sync::Arc::new(patterns);
            scope = scope.default_service(web::to(move |req: actix_web::HttpRequest| {
                let patterns = patterns.clone();
                async move { Err::<HttpResponse, ApiError>(unmatched(&req, &patterns)) }
            }));
            cfg.service(scope.wrap(actix_web::middleware::from_fn(query_texts)));
        }
    }
}

/// Refuses, before any handler, a query string with a text the one checker refuses
/// (`crate::input::query_texts`); the refusal is rendered here, in the request's language.
async fn query_texts(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    match crate::input::query_texts(req.query_string()) {
        Ok(()) => Ok(next.call(req).await?.map_into_left_body()),
        Err(e) => Ok(req.error_response(e).map_into_right_body()),
    }
}

/// Why a request of a group's prefix matched none of its routes: 405 with the methods its path
/// takes, or 404 when no route has its path.
fn unmatched(req: &actix_web::HttpRequest, patterns: &[(ResourceDef, &'static str)]) -> ApiError {
    let rest = req.match_info().unprocessed();
    let mut allowed: Vec<&'static str> = patterns
        .iter()
        .filter(|(def, _)| def.is_match(rest))
        .map(|(_, method)| *method)
        .collect();
    allowed.dedup();
    if allowed.is_empty() {
        ApiError::NoRoute
    } else {
        ApiError::MethodNotAllowed(allowed)
    }
}

/// The HTTP name of a route table method (`get` → `GET`).
fn method_name(method: &str) -> &'static str {
    match method {
        "get" => "GET",
        "post" => "POST",
        "put" => "PUT",
        "patch" => "PATCH",
        "delete" => "DELETE",
        _ => "OPTIONS",
    }
}

/// The part of `path` before its first `/{parameter}` segment (the whole path if it has none).
fn prefix_of(path: &str) -> &str {
    path.find("/{").map_or(path, |i| &path[..i])
}

/// No body, or no query parameters.
const NONE: Option<SchemaFn> = None;

routes! {
    get "/healthz" => health::healthz, id = checkLiveness, tag = Health, 200, auth = false, body = NONE, query = NONE, reply = Json(of::<health::Alive>), "The process answers.";
    get "/readyz" => health::readyz, id = checkReadiness, tag = Health, 200, auth = false, body = NONE, query = NONE, reply = Json(of::<health::Readiness>), "The database answers and every migration is applied (503 not_ready otherwise).";
    get "/v1/games" => games::list, id = listGames, tag = Games, 200, auth = false, body = NONE, query = NONE, reply = Json(of::<crate::catalogue::Catalogue>), "The games, their rules, boards, move notations, settings and CPU levels (English or Portuguese by Accept-Language), and the limits the server holds input to (turn limits, name lengths, a tournament's bounds), each defined once and read by the schemas, the error texts and the web client's forms.";
    post "/v1/players" => players::create, id = signUp, tag = Players, 201, auth = false, body = Some(of::<players::NewPlayer>), query = NONE, reply = Json(of::<players::Created>), "Create a player by name; returns the device's token. With an Idempotency-Key (a secret: a random UUID or 128 random bits, since a retry with it gets the player's token; a key under 16 characters or 64 bits by its characters is refused with 422), a retry finds the player its first attempt created and gets a fresh token for it; once the key's record is purged (DISCS_IDEMPOTENCY_HOURS) the key is spent: 409 idempotency_key_reused.";
    post "/v1/tokens/refresh" => players::refresh, id = refreshToken, tag = Players, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<players::Token>), "Trade a valid token for a fresh one.";
    post "/v1/tokens/revoke" => players::end_my_tokens, id = endMyTokens, tag = Players, 200, auth = true, body = Some(of::<players::EndTokens>), query = NONE, reply = Json(of::<players::TokensEnded>), "Sign out everywhere (`{\"scope\":\"everywhere\"}`): end every token of yours issued so far, this one included, refused at once by every instance; the answer is a fresh token for this device (keep it: it is the account's only key). With an Idempotency-Key, the answer is stored without its token (the generation it reached), and a retry gets a token minted again at that generation, as good as the first.";
    post "/v1/players/me/closing" => players::ask_closing, id = askToCloseAccount, tag = Players, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<players::ClosingAsked>), "Closing your account, step one: what it does, and a confirmation (valid 10 minutes) to send to `POST /v1/players/me/close`.";
    post "/v1/players/me/close" => players::close, id = closeAccount, tag = Players, 200, auth = true, body = Some(of::<players::CloseBody>), query = NONE, reply = Json(of::<players::AccountClosed>), "Closing your account, step two, with the confirmation of step one: your name is erased from the database and every answer (your games, ratings and results stay under an anonymous label), every token of yours ends, your open correspondence games are resigned (your opponents win them at once), and the closing is recorded outside the database so that a restore from an older backup closes the account again. Refused while you hold a queue ticket (409 already_queued) or sit in an active ranked match (409 in_ranked_match); 403 confirmation for a confirmation that is not yours or expired.";
    get "/v1/players/{id}" => players::get, id = getPlayer, tag = Players, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<players::Profile>), "A player's name and ratings.";
    get "/v1/players/{id}/matches" => players::matches, id = listPlayerMatches, tag = Players, 200, auth = true, body = NONE, query = Some(fields::<players::HistoryQuery>), reply = Json(of::<players::History>), "A player's finished matches, newest first, with ratings before and after for ranked ones.";
    get "/v1/players/{id}/ratings/{game}" => players::rating_history, id = getRatingHistory, tag = Players, 200, auth = true, body = NONE, query = Some(fields::<players::LadderQuery>), reply = Json(of::<players::RatingHistory>), "A player's rating after each ranked match of a game, oldest first.";
    get "/v1/leaderboards/{game}" => leaderboards::get, id = getLeaderboard, tag = Leaderboards, 200, auth = true, body = NONE, query = Some(fields::<leaderboards::BoardQuery>), reply = Json(of::<leaderboards::Leaderboard>), "The non-provisional players of a game by rating.";
    get "/v1/explorer/{game}" => explorer::get, id = exploreOpenings, tag = Analysis, 200, auth = true, body = NONE, query = Some(fields::<explorer::ExplorerQuery>), reply = Json(of::<explorer::Explorer>), "The opening explorer: the moves played from a position (given by `moves`, or `board` and `side`; the start by default) in every finished game, counted up to the game's symmetries over each game's first plies (DISCS_EXPLORER_PLIES: 30 in Four in a Row, 40 in Reversi by default), with wins, draws and losses for the side that played each move, its share and average rating, the proven outcome after it where known (`outcome`, `value`, `exact`), the named opening, and the last and highest-rated games through it; filtered by rating band (`ratings`), months (`since`, `until`) and ranked or casual (`ranked`). Refused (409 in_ranked_match) to a player seated in an active ranked match, and to anyone for a position of an active ranked match beyond the public opening or any position that can follow it within its horizon (12 plies in Four in a Row, 7 in Reversi, or to the end where the rest of the game is short; a finished board never) (in any image of the board; in Reversi also with the colours exchanged); a move whose position after it lies within that boundary has its `value` and `outcome` withheld (`withheld`: `live_ranked_position`).";
    post "/v1/queue" => queue::open, id = joinQueue, tag = Queue, 201, auth = true, body = Some(of::<queue::NewTicket>), query = NONE, reply = Json(of::<service::ranked::TicketView>), "Queue for a ranked match in a pool (game, and turn_seconds or, for a correspondence pool rated on its own ladder, days_per_move); one open ticket per player. Refused to a banned player or a declared bot (403 forbidden); for real-time play, to one seated in a live ranked match, from the queue or a rated tournament (409 in_match), and while a tournament of theirs runs (409 in_tournament).";
    get "/v1/queue/{ticket}" => queue::get, id = getTicket, tag = Queue, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::ranked::TicketView>), "Your ticket: waiting, matched (with its match_id) or cancelled.";
    delete "/v1/queue/{ticket}" => queue::cancel, id = cancelTicket, tag = Queue, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::ranked::TicketView>), "Cancel your waiting ticket (ticket_closed once matched or cancelled).";
    post "/v1/challenges" => challenges::send, id = sendChallenge, tag = Challenges, 201, auth = true, body = Some(of::<challenges::NewChallenge>), query = NONE, reply = Json(of::<challenges::ChallengeView>), "Challenge a player (`opponent`, their id) to a game on your terms; it lapses unanswered after the catalogue's `limits.challenge.lifetime_hours`. Refused to a banned player (403 forbidden); 403 forbidden where the opponent cannot be challenged by you (banned, closed, or accepting challenges from nobody, or only from players they have played); 404 for no such player; 422 for yourself; beyond `limits.challenge.open_max` open challenges sent, or `limits.challenge.per_minute` sent in a minute, 429 rate_limited with Retry-After.";
    get "/v1/challenges" => challenges::list, id = listChallenges, tag = Challenges, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<challenges::ChallengeList>), "Your open challenges, received and sent, oldest first.";
    get "/v1/challenges/{id}" => challenges::get, id = getChallenge, tag = Challenges, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<challenges::ChallengeView>), "A challenge with its history (its two players only; 404 for anyone else).";
    post "/v1/challenges/{id}/accept" => challenges::accept, id = acceptChallenge, tag = Challenges, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<challenges::ChallengeView>), "Accept a challenge sent to you: its match starts (`match_id`), ranked when the challenge is rated. Refused where either player is banned or closed (403 forbidden), for a rated challenge where either is seated in a live ranked match (409 in_ranked_match), and once it is answered, cancelled or lapsed (409 challenge_closed).";
    post "/v1/challenges/{id}/decline" => challenges::decline, id = declineChallenge, tag = Challenges, 200, auth = true, body = Some(of::<challenges::DeclineBody>), query = NONE, reply = Json(of::<challenges::ChallengeView>), "Decline a challenge sent to you, with a reason from the list (`generic` by default), shown to the challenger in their language.";
    post "/v1/challenges/{id}/cancel" => challenges::cancel, id = cancelChallenge, tag = Challenges, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<challenges::ChallengeView>), "Take back a challenge you sent, while it is open.";
    get "/v1/players/me/inbox" => challenges::inbox, id = getInbox, tag = Challenges, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<challenges::Inbox>), "What waits for you: your correspondence games where it is your turn, the nearest deadline first (past it you lose on time), your others (your opponent to move), and your open challenges, received and sent.";
    get "/v1/players/me/stream" => challenges::stream, id = streamMine, tag = Challenges, 200, auth = true, body = NONE, query = NONE, reply = EventStream, "Server-sent events of what happens to you anywhere, as it commits: `challenge` (sent, received, accepted, declined, cancelled, expired or withdrawn: its `type`), `match_started` (a match of yours created), `your_turn` (in a correspondence game, with its deadline), `match_ended` and `tournament_started` (a tournament you entered: its first round); `resync` when a reconnection is too far behind (read the inbox again). Each frame's id is its event's place in the log: reconnect with `Last-Event-ID` on any instance to get what you missed. Under the same caps and rights as every stream.";
    get "/v1/players/me/challenge-settings" => challenges::settings, id = getChallengeSettings, tag = Challenges, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<challenges::ChallengeSettings>), "Whom you accept challenges from.";
    put "/v1/players/me/challenge-settings" => challenges::set_settings, id = setChallengeSettings, tag = Challenges, 200, auth = true, body = Some(of::<challenges::SettingsBody>), query = NONE, reply = Json(of::<challenges::ChallengeSettings>), "Say whom you accept challenges from: `everyone`, `played` (players you have finished a match with) or `nobody`; challenges already received stay open.";
    post "/v1/rooms" => rooms::create, id = createRoom, tag = Rooms, 201, auth = true, body = Some(of::<rooms::NewRoom>), query = NONE, reply = Json(of::<rooms::RoomView>), "Open a room with settings; returns its invite code.";
    get "/v1/rooms/{room_id}" => rooms::get, id = getRoom, tag = Rooms, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<rooms::RoomView>), "A room (members only).";
    patch "/v1/rooms/{room_id}" => rooms::patch, id = changeRoomSettings, tag = Rooms, 200, auth = true, body = Some(of::<rooms::Patch>), query = NONE, reply = Json(of::<rooms::RoomView>), "Change a room's settings between matches.";
    post "/v1/rooms/{code}/join" => rooms::join, id = joinRoom, tag = Rooms, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<rooms::RoomView>), "Join a room by its invite code (two members at most).";
    post "/v1/rooms/{room_id}/matches" => rooms::start, id = startRoomMatch, tag = Rooms, 201, auth = true, body = Some(of::<rooms::StartBody>), query = NONE, reply = Json(of::<service::views::MatchView>), "Start a match or a rematch in a room; alone, against the CPU. Refused to a banned member (403 forbidden), though they joined before the ban.";
    post "/v1/tournaments" => tournaments::create, id = createTournament, tag = Tournaments, 201, auth = true, body = Some(of::<tournaments::NewTournament>), query = NONE, reply = Json(of::<service::tournaments::views::TournamentView>), "Create a tournament: an arena (`minutes`: idle players are paired continuously until a minute before the end; win 2, draw 1, doubled after two wins in a row), a Swiss tournament (`rounds`) or a round robin (a few players, each pair twice with the first move swapped); the bounds of each are in the body's schema and the catalogue's `limits.tournament` (`GET /v1/games`); `rated` games move Glicko-2 ratings as ranked ones do. Admins create public tournaments; any player a private one, answered with its invite `code`. Players join from an hour before `starts_at`.";
    get "/v1/tournaments" => tournaments::index, id = listTournaments, tag = Tournaments, 200, auth = true, body = NONE, query = Some(fields::<tournaments::ListQuery>), reply = Json(of::<tournaments::TournamentList>), "Public tournaments: upcoming (soonest first), running or finished (latest first), by game; paged with `before`.";
    get "/v1/tournaments/{id}" => tournaments::get, id = getTournament, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::tournaments::views::TournamentView>), "A tournament, with your place and your game under way (`me.match_id`: open it); a private one's code to its creator and players. A player's read counts as following the tournament.";
    post "/v1/tournaments/join/{code}" => tournaments::join_by_code, id = joinTournamentByCode, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<tournaments::Membership>), "Join a private tournament by its invite code.";
    post "/v1/tournaments/{id}/join" => tournaments::join, id = joinTournament, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<tournaments::Membership>), "Join a public tournament (from an hour before its start; an arena until near its end, a Swiss tournament until half its rounds, with a half-point bye per round missed). While a tournament of yours runs, the ranked queue refuses you (409 in_tournament).";
    post "/v1/tournaments/{id}/withdraw" => tournaments::withdraw, id = withdrawFromTournament, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<tournaments::Membership>), "Withdraw: you are not paired again; your games stand.";
    post "/v1/tournaments/{id}/pause" => tournaments::pause, id = pauseInTournament, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<tournaments::Membership>), "Pause: you are not paired until you resume. An arena player who follows the tournament neither by its stream nor by a heartbeat or read for two minutes is paused by the organiser.";
    post "/v1/tournaments/{id}/resume" => tournaments::resume, id = resumeInTournament, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<tournaments::Membership>), "Resume after a pause; refused to a banned player (403 forbidden).";
    post "/v1/tournaments/{id}/heartbeat" => tournaments::heartbeat, id = followTournament, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<tournaments::Membership>), "Say you follow the tournament (writes no event).";
    get "/v1/tournaments/{id}/standings" => tournaments::get_standings, id = getTournamentStandings, tag = Tournaments, 200, auth = true, body = NONE, query = Some(fields::<tournaments::StandingsQuery>), reply = Json(of::<service::tournaments::views::StandingsPage>), "The standings, paged, with your own line: score, games, wins, draws, losses, the current streak (on fire: the next arena win scores double), the tie-breaks (performance; Buchholz and Sonneborn-Berger) and each player's status; a projection of the log, audited like ratings.";
    get "/v1/tournaments/{id}/pairings" => tournaments::get_pairings, id = listTournamentPairings, tag = Tournaments, 200, auth = true, body = NONE, query = Some(fields::<tournaments::PairingsQuery>), reply = Json(of::<tournaments::Pairings>), "Pairings and byes, oldest first: of a round, of a player, or the latest; each with its match, who moves first, and its result.";
    get "/v1/tournaments/{id}/stream" => tournaments::stream, id = streamTournament, tag = Tournaments, 200, auth = true, body = NONE, query = NONE, reply = EventStream, "Server-sent events of the tournament's stream: `pairing`, `result`, `standings` (read them again) and `status`, each with its version as id; resumable with Last-Event-ID. An open stream counts as following the tournament. Under the same caps as match streams (429 rate_limited beyond); refused to a banned player (403 forbidden); ended with an `ended` event (`{\"reason\": \"revoked\"}` or `\"banned\"`) when the player's tokens are revoked, their account closes or an admin bans them.";
    post "/v1/admin/tournaments/{id}/removals" => tournaments::remove, id = removeFromTournament, tag = Admin, 201, auth = true, body = Some(of::<tournaments::RemovalBody>), query = NONE, reply = Json(of::<tournaments::Removed>), "Admin: remove a player from a tournament, with a reason (an event of its stream): every game of theirs is scored as a forfeit, every pairing kept, every standing and tie-break recomputed from the log; the answer is each player's rank and score before and after.";
    post "/v1/matches" => matches::create_solo, id = createSoloMatch, tag = Matches, 201, auth = true, body = Some(of::<matches::NewSolo>), query = NONE, reply = Json(of::<service::views::MatchView>), "Start a solo match against the CPU; refused to a banned player (403 forbidden), and with a CPU of level 3 to 5 (those that search) to a player seated in a live ranked match (409 in_ranked_match). At a position the fair-play boundary guards (a live ranked position or one that can follow it within its horizon), a CPU of level 3 to 5 plays level 2's policy: it never relays a solver's, a solved position's or a book's move there.";
    get "/v1/matches/{id}" => matches::get, id = getMatch, tag = Matches, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::views::MatchView>), "The match view.";
    post "/v1/matches/{id}/moves" => matches::post_move, id = playMove, tag = Matches, 200, auth = true, body = Some(of::<matches::MoveBody>), query = NONE, reply = Json(of::<service::views::MatchView>), "Play a move; answers with the view right after it (the CPU's reply follows).";
    post "/v1/matches/{id}/leave" => matches::leave, id = leaveMatch, tag = Matches, 200, auth = true, body = Some(of::<matches::VersionBody>), query = NONE, reply = Json(of::<service::views::MatchView>), "Leave the match (the CPU plays for you after return_seconds).";
    post "/v1/matches/{id}/return" => matches::return_, id = returnToMatch, tag = Matches, 200, auth = true, body = Some(of::<matches::VersionBody>), query = NONE, reply = Json(of::<service::views::MatchView>), "Come back to your seat.";
    post "/v1/matches/{id}/resign" => matches::resign, id = resignMatch, tag = Matches, 200, auth = true, body = Some(of::<matches::VersionBody>), query = NONE, reply = Json(of::<service::views::MatchView>), "Resign: the opponent wins.";
    post "/v1/matches/{id}/heartbeat" => matches::heartbeat, id = sendHeartbeat, tag = Matches, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::views::MatchView>), "Say you are here (writes no event).";
    get "/v1/matches/{id}/events" => matches::events, id = listMatchEvents, tag = Matches, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<matches::Events>), "Every event of the match.";
    get "/v1/matches/{id}/replay" => matches::replay, id = getReplay, tag = Matches, 200, auth = true, body = NONE, query = Some(fields::<matches::PlyQuery>), reply = Json(of::<matches::Replay>), "The match ply by ply.";
    get "/v1/matches/{id}/analysis" => analysis::of_match, id = analyseMatch, tag = Analysis, 200, auth = true, body = NONE, query = Some(fields::<analysis::BudgetQuery>), reply = Json(of::<analysis::MatchAnalysis>), "A finished match ply by ply: each move's score before and after it for the mover, the best moves, whether exact and whether answered from the shared cache of solved positions; the plies left inexact get background jobs (their ids in `jobs`) that make the analysis exact over time (409 match_active while the match is played). Through the fair-play boundary: refused (409 in_ranked_match) to a player seated in an active ranked match; a ply whose position before or after the move is that of an active ranked match beyond the public opening, or can follow one within its horizon, answers without its values (scores null, best moves empty, `withheld`: `live_ranked_position`) and gets no job, until that match ends.";
    post "/v1/analysis" => analysis::position, id = analysePosition, tag = Analysis, 200, auth = true, body = Some(analysis::position_forms), query = Some(fields::<analysis::BudgetQuery>), reply = Json(of::<analysis::PositionAnalysis>), "The score and every best move of a position given by moves or by board and side. An exact answer is kept in the cache of solved positions shared by all instances, which answers the position and its symmetric images at once (`source`: `cache` or `search`); it changes no game, so it takes no Idempotency-Key. Refused (409 in_ranked_match) while the caller is seated in an active ranked match, and to anyone for a position of an active ranked match beyond the public opening (DISCS_PUBLIC_PLIES: 8 plies in Four in a Row, 12 in Reversi by default) or any position that can follow it within its horizon (12 plies in Four in a Row, 7 in Reversi, or to the end where the rest of the game is short; a finished board never), in any image of the board and, in Reversi, with the colours exchanged and the other side to move.";
    post "/v1/analysis/jobs" => analysis::create_job, id = createAnalysisJob, tag = Analysis, 202, auth = true, body = Some(analysis::position_forms), query = NONE, reply = Json(of::<service::analysis::jobs::JobView>), "Queue a deep analysis of a position (the body of POST /v1/analysis): any instance runs it in the background until its score is exact or its time cap (10 minutes by default) is spent (in Reversi it goes on to the exact solve however many squares are empty, where POST /v1/analysis gives an estimate above 26); a job whose instance dies is taken up by another one. A position already solved is answered from the shared cache at once (the job is done as it is queued). Refused (409 in_ranked_match) while the caller is seated in an active ranked match, and to anyone for a position of an active ranked match beyond the public opening (DISCS_PUBLIC_PLIES: 8 plies in Four in a Row, 12 in Reversi by default) or any position that can follow it within its horizon (12 plies in Four in a Row, 7 in Reversi, or to the end where the rest of the game is short; a finished board never), in any image of the board and, in Reversi, with the colours exchanged and the other side to move.";
    get "/v1/analysis/jobs/{job_id}" => analysis::get_job, id = getAnalysisJob, tag = Analysis, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::analysis::jobs::JobView>), "Your analysis job: queued, running (with its progress: nodes, elapsed_ms), done (with its result, exact or the best estimate at the cap) or failed. While its owner is seated in an active ranked match the job runs on, but its answer waits: 409 in_ranked_match until the match ends; likewise while its position is that of an active ranked match or can follow it.";
    get "/v1/matches/{id}/proof" => matches::proof, id = proveMatch, tag = History, 200, auth = true, body = NONE, query = Some(fields::<matches::ProofQuery>), reply = Json(of::<service::history::MatchProof>), "A finished match's proof: its events with every field their hashes cover, chained from the first, and the inclusion of its last event in a signed checkpoint's Merkle tree (the latest, or `checkpoint`, one you hold). Check it offline with `discs verify-match`. 409 match_active while it is played, 409 not_checkpointed until a checkpoint covers it.";
    get "/v1/checkpoints/latest" => history::latest, id = getLatestCheckpoint, tag = History, 200, auth = false, body = NONE, query = NONE, reply = Json(of::<service::history::SignedCheckpoint>), "The latest signed checkpoint of the log: the log's id (made once, kept in its database), its size, Merkle root, time and the operator's Ed25519 signature over them (404 not_found before the first).";
    get "/v1/checkpoints/{seq}/consistency" => history::consistency, id = proveCheckpointConsistency, tag = History, 200, auth = false, body = NONE, query = Some(fields::<history::FromQuery>), reply = Json(of::<service::history::Consistency>), "That the log of checkpoint `seq` extends the log of an earlier checkpoint `from` (one you hold): both checkpoints and RFC 9162's consistency proof between their Merkle trees (404 not_found when either is unknown or `from` is the later).";
    get "/v1/checkpoints/{seq}" => history::get, id = getCheckpoint, tag = History, 200, auth = false, body = NONE, query = NONE, reply = Json(of::<service::history::SignedCheckpoint>), "A signed checkpoint by its number.";
    get "/v1/matches/{id}/stream" => stream::stream, id = streamMatch, tag = Matches, 200, auth = true, body = NONE, query = NONE, reply = EventStream, "Server-sent events: each new event with the match view; resumable with Last-Event-ID. At most DISCS_STREAMS_PER_PLAYER streams of a player (match and tournament streams together) and DISCS_MAX_STREAMS per instance (429 rate_limited beyond; the stream of a match you are seated in always gets a place, up to DISCS_STREAMS_PER_PLAYER of those); refused to a banned player (403 forbidden); ended with an `ended` event (`{\"reason\": \"revoked\"}` or `\"banned\"`) when the player's tokens are revoked, their account closes or an admin bans them, and no longer counted as presence. Names are rendered when a frame is sent: after a closing, frames show the label.";
    get "/v1/admin/audits/ratings" => admin::audit_ratings, id = auditRatings, tag = Admin, 200, auth = true, body = NONE, query = Some(fields::<admin::AuditQuery>), reply = Json(of::<service::audits::RatingsAudit>), "Admin: recompute every rating from the log and diff it against the projection; verify every hash chain; a what-if without some players.";
    get "/v1/admin/audits/tournaments" => tournaments::audit, id = auditTournaments, tag = Admin, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::audits::TournamentsAudit>), "Admin: recount every tournament's standings and tie-breaks from the log (each at the version its projection has read) and diff them against the projection, line by line.";
    get "/v1/admin/players/{id}/ratings/{game}/explain" => admin::explain, id = explainRating, tag = Admin, 200, auth = true, body = NONE, query = Some(fields::<players::LadderQuery>), reply = Json(of::<admin::Explained>), "Admin: a player's rating step by step, each with its match and event positions, and log_check: whether the ratings recomputed from the log give the same steps (else the first diverging match).";
    get "/v1/admin/flags" => admin::flags, id = listFlags, tag = Admin, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<service::audits::Flags>), "Admin: suspicious patterns (repeated pairs with alternating results, very short lost games, engine assistance: optimal moves at critical positions beyond what the player's rating leads to expect, by a pooled test and a test over games, with the suspect games) and the thresholds used.";
    get "/v1/admin/queue/stats" => admin::queue_stats, id = getQueueStats, tag = Admin, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<admin::QueueStats>), "Admin: per pool, waiting tickets, wait and rating-gap percentiles, repeat-pair rate, waves run; and the allowed-gap schedule.";
    get "/v1/admin/players" => admin::find_players, id = findPlayers, tag = Admin, 200, auth = true, body = NONE, query = Some(fields::<admin::FindQuery>), reply = Json(of::<admin::Found>), "Admin: find players by name (a part of it, case aside; those it starts first; at most 20), each with whether they are banned.";
    post "/v1/admin/players/{id}/decisions" => admin::decide, id = decideOnPlayer, tag = Admin, 201, auth = true, body = Some(of::<admin::DecisionBody>), query = NONE, reply = Json(of::<admin::Decided>), "Admin: a decision on a flagged player, `cleared` or `banned` (with a reason), recorded as an event of the player's stream (`player-<id>`: `player_cleared`, `player_banned`); a banned player cannot queue, open, join or start a match in a room, open a solo match, join a tournament or resume in one until cleared. A ban, in its own transaction, also cancels the player's waiting queue ticket (`ticket_cancelled`), and then pauses them in every tournament of theirs that has not ended (`player_paused`); the queue's waves and the tournaments' organiser never pair a banned player.";
    post "/v1/admin/players/{id}/close" => admin::close_player, id = closePlayerAccount, tag = Admin, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<players::AccountClosed>), "Admin: close a player's account on their request (as `POST /v1/players/me/close` does: name erased, tokens ended, recorded outside the database); not your own.";
    post "/v1/admin/players/{id}/tokens/revoke" => admin::end_player_tokens, id = endPlayerTokens, tag = Admin, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<admin::PlayerTokensEnded>), "Admin: end every token of a player (refused at once by every instance); the player gets no new one.";
    post "/v1/admin/projections/{name}/rebuild" => admin::start_rebuild, id = rebuildProjection, tag = Admin, 202, auth = true, body = NONE, query = NONE, reply = Json(of::<admin::RebuildStarted>), "Admin: rebuild a projection beside the live one and switch when caught up.";
    get "/v1/admin/projections/{name}" => admin::get_projection, id = getProjection, tag = Admin, 200, auth = true, body = NONE, query = NONE, reply = Json(of::<admin::ProjectionStatus>), "Admin: a projection's checkpoint and its latest rebuild's progress.";
    get "/metrics" => admin::prometheus, id = getMetrics, tag = Health, 200, auth = false, body = NONE, query = NONE, reply = Prometheus, "Prometheus metrics: this instance's limits, refusals and searches, and the projections' positions; nothing here runs a heavy query. With an admin token (Authorization: Bearer), also the pools' statistics of /v1/admin/queue/stats (waiting tickets, waits, rating gaps, repeat pairs) and this instance's waves; any other caller, a player's token included, gets the public text.";
    get "/openapi.json" => openapi, id = getOpenApiDocument, tag = Docs, 200, auth = false, body = NONE, query = NONE, reply = Json(of::<openapi::OpenApiDocument>), "This document.";
    get "/docs" => docs, id = getDocsPage, tag = Docs, 200, auth = false, body = NONE, query = NONE, reply = Html, "A readable page of this document (works offline).";
}

/// The routes that honour an `Idempotency-Key` (their handlers go through
/// `idempotency::command*`, or the sign-up's own keyed path): the only ones the document
/// offers it on (`the_document_offers_an_idempotency_key_only_where_it_is_honoured` reads the
/// handlers' source against this list).
pub const KEYED: [(&str, &str); 27] = [
    ("post", "/v1/players"),
    ("post", "/v1/tokens/revoke"),
    ("put", "/v1/players/me/challenge-settings"),
    ("post", "/v1/challenges"),
    ("post", "/v1/challenges/{id}/accept"),
    ("post", "/v1/challenges/{id}/decline"),
    ("post", "/v1/challenges/{id}/cancel"),
    ("post", "/v1/queue"),
    ("post", "/v1/rooms"),
    ("patch", "/v1/rooms/{room_id}"),
    ("post", "/v1/rooms/{code}/join"),
    ("post", "/v1/rooms/{room_id}/matches"),
    ("post", "/v1/matches"),
    ("post", "/v1/matches/{id}/moves"),
    ("post", "/v1/matches/{id}/leave"),
    ("post", "/v1/matches/{id}/return"),
    ("post", "/v1/matches/{id}/resign"),
    ("post", "/v1/analysis/jobs"),
    ("post", "/v1/tournaments"),
    ("post", "/v1/tournaments/join/{code}"),
    ("post", "/v1/tournaments/{id}/join"),
    ("post", "/v1/tournaments/{id}/withdraw"),
    ("post", "/v1/tournaments/{id}/pause"),
    ("post", "/v1/tournaments/{id}/resume"),
    ("post", "/v1/admin/tournaments/{id}/removals"),
    ("post", "/v1/admin/players/{id}/decisions"),
    ("post", "/v1/admin/players/{id}/tokens/revoke"),
];

async fn openapi(_: ByAddress) -> HttpResponse {
    // The document depends on nothing but the build: generated once, served as is.
    static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HttpResponse::Ok().content_type("application/json").body(
        DOCUMENT
            .get_or_init(|| openapi::document().to_string())
            .as_str(),
    )
}

async fn docs(_: ByAddress) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(openapi::docs_page())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_grouped_by_its_path_before_the_first_parameter() {
        assert_eq!(prefix_of("/v1/matches/{id}/moves"), "/v1/matches");
        assert_eq!(prefix_of("/v1/matches"), "/v1/matches");
        assert_eq!(prefix_of("/healthz"), "/healthz");
        assert_eq!(
            prefix_of("/v1/admin/players/{id}/ratings/{game}/explain"),
            "/v1/admin/players"
        );
    }
}
