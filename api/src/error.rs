//! `ApiError`: every error a client can see, mapped in one place to a status, a stable `code` and
//! an `application/problem+json` body in English or Portuguese.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use domain::matches::DomainError;

use crate::lang::Lang;

/// An error answered to a client. Unexpected errors log their cause and show nothing internal.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not JSON at all.
    #[error("the body is not valid JSON: {0}")]
    MalformedJson(String),
    /// Well-formed input with wrong fields or values, or a bad id in the path.
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    IllegalMove(String),
    #[error("it is not your turn")]
    NotYourTurn,
    #[error("the match is at version {actual}, not {expected}")]
    VersionConflict { expected: u64, actual: u64 },
    #[error("the match is over")]
    MatchFinished,
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("you already have an open ticket")]
    AlreadyQueued,
    #[error("you are playing a ranked match")]
    InMatch,
    #[error("the room already has two members")]
    RoomFull,
    #[error("the ticket is already matched or cancelled")]
    TicketClosed,
    #[error("this Idempotency-Key was used with another request")]
    IdempotencyKeyReused,
    #[error("{0}")]
    Conflict(String),
    /// A room already playing a match, settings changed during a match, the analysis of a
    /// match still being played.
    #[error("{0}")]
    MatchActive(&'static str),
    #[error("the body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("too many requests; retry in {0} s")]
    RateLimited(u64),
    /// The player already has this many active solo matches against CPU levels 4–5.
    #[error("you already play {0} matches against CPU levels 4-5; finish or resign one first")]
    StrongSoloLimit(u32),
    #[error("no such route")]
    NoRoute,
    /// The path exists, with other methods (answered in `Allow`).
    #[error("this path takes {}", .0.join(", "))]
    MethodNotAllowed(Vec<&'static str>),
    /// The database is out of reach: the request may be retried (a command with its
    /// `Idempotency-Key`, whose outcome may be unknown). The cause is logged, not shown.
    #[error("the service is unavailable for a moment; retry in {RETRY_UNAVAILABLE} s")]
    Unavailable(String),
    #[error("an unexpected error occurred")]
    Unexpected(anyhow::Error),
}

/// Seconds a client is asked to wait after `unavailable` (`Retry-After`).
pub const RETRY_UNAVAILABLE: u64 = 2;

/// Seconds a client is asked to wait when it has too many strong solo matches (one of them
/// must end first: a guess at how long a move of theirs takes).
pub const RETRY_STRONG_SOLO: u64 = 60;

/// How often an outage is logged at most: one line per interval, with the count of the
/// failures it stands for.
const OUTAGE_LOG_INTERVAL: Duration = Duration::from_secs(10);

impl From<anyhow::Error> for ApiError {
    /// An unexpected error, or [`ApiError::Unavailable`] when its cause is the database being
    /// out of reach.
    fn from(e: anyhow::Error) -> Self {
        if e.chain().any(is_outage) {
            ApiError::Unavailable(format!("{e:#}"))
        } else {
            ApiError::Unexpected(e)
        }
    }
}

/// Whether an error (one link of a chain) is the database being out of reach.
fn is_outage(e: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(e) = e.downcast_ref::<crate::commit::CommitError>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<eventlog::AppendError>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<eventlog::Error>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<tokio_postgres::Error>() {
        return eventlog::db_outage(e);
    }
    if let Some(e) = e.downcast_ref::<deadpool_postgres::PoolError>() {
        return eventlog::pool_outage(e);
    }
    // A connection that broke, under an error type that forwards to its cause.
    e.downcast_ref::<std::io::Error>().is_some_and(|e| {
        use std::io::ErrorKind::*;
        matches!(
            e.kind(),
            ConnectionRefused
                | ConnectionReset
                | ConnectionAborted
                | NotConnected
                | BrokenPipe
                | UnexpectedEof
                | TimedOut
        )
    })
}

/// Logs an error the client cannot do anything about: an unexpected one each time (its cause
/// chain on one line), an outage at most once per [`OUTAGE_LOG_INTERVAL`].
pub fn log(error: &ApiError) {
    match error {
        ApiError::Unexpected(e) => tracing::error!(error = %format!("{e:#}"), "unexpected error"),
        ApiError::Unavailable(cause) => log_outage(cause),
        _ => {}
    }
}

/// One log line per [`OUTAGE_LOG_INTERVAL`] while the database is out of reach.
pub fn log_outage(cause: &str) {
    static LAST: Mutex<Option<(Instant, u64)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    let now = Instant::now();
    match &mut *last {
        Some((at, muted)) if now.duration_since(*at) < OUTAGE_LOG_INTERVAL => *muted += 1,
        _ => {
            let muted = last.map_or(0, |(_, m)| m);
            tracing::warn!(
                cause,
                failures_since_last_line = muted,
                "the database is out of reach"
            );
            *last = Some((now, 0));
        }
    }
}

impl ApiError {
    /// The stable snake_case code clients match on.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::MalformedJson(_) | ApiError::InvalidRequest(_) => "invalid_request",
            ApiError::IllegalMove(_) => "illegal_move",
            ApiError::NotYourTurn => "not_your_turn",
            ApiError::VersionConflict { .. } => "version_conflict",
            ApiError::MatchFinished => "match_finished",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) | ApiError::NoRoute => "not_found",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::AlreadyQueued => "already_queued",
            ApiError::InMatch => "in_match",
            ApiError::RoomFull => "room_full",
            ApiError::TicketClosed => "ticket_closed",
            ApiError::IdempotencyKeyReused => "idempotency_key_reused",
            ApiError::Conflict(_) => "conflict",
            ApiError::MatchActive(_) => "match_active",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::RateLimited(_) | ApiError::StrongSoloLimit(_) => "rate_limited",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Unexpected(_) => "internal",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::MalformedJson(_) => StatusCode::BAD_REQUEST,
            ApiError::InvalidRequest(_) | ApiError::IllegalMove(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) | ApiError::NoRoute => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotYourTurn
            | ApiError::VersionConflict { .. }
            | ApiError::MatchFinished
            | ApiError::AlreadyQueued
            | ApiError::InMatch
            | ApiError::RoomFull
            | ApiError::TicketClosed
            | ApiError::IdempotencyKeyReused
            | ApiError::Conflict(_)
            | ApiError::MatchActive(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited(_) | ApiError::StrongSoloLimit(_) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Unexpected(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The short, fixed title of the problem type.
    fn title(&self, lang: Lang) -> &'static str {
        let (en, pt) = match self {
            ApiError::MalformedJson(_) | ApiError::InvalidRequest(_) => {
                ("Invalid request", "Pedido inválido")
            }
            ApiError::IllegalMove(_) => ("Illegal move", "Jogada ilegal"),
            ApiError::NotYourTurn => ("Not your turn", "Não é a sua vez"),
            ApiError::VersionConflict { .. } => ("Version conflict", "Conflito de versão"),
            ApiError::MatchFinished => ("Match finished", "Partida encerrada"),
            ApiError::Unauthorized(_) => ("Unauthorized", "Não autenticado"),
            ApiError::Forbidden(_) => ("Forbidden", "Proibido"),
            ApiError::NotFound(_) | ApiError::NoRoute => ("Not found", "Não encontrado"),
            ApiError::MethodNotAllowed(_) => ("Method not allowed", "Método não permitido"),
            ApiError::AlreadyQueued => ("Already queued", "Já está na fila"),
            ApiError::InMatch => ("In a match", "Em partida"),
            ApiError::RoomFull => ("Room full", "Sala cheia"),
            ApiError::TicketClosed => ("Ticket closed", "Bilhete encerrado"),
            ApiError::IdempotencyKeyReused => (
                "Idempotency key reused",
                "Chave de idempotência reutilizada",
            ),
            ApiError::Conflict(_) => ("Conflict", "Conflito"),
            ApiError::MatchActive(_) => ("Match active", "Partida em andamento"),
            ApiError::PayloadTooLarge(_) => ("Payload too large", "Corpo grande demais"),
            ApiError::RateLimited(_) | ApiError::StrongSoloLimit(_) => {
                ("Rate limited", "Limite de pedidos")
            }
            ApiError::Unavailable(_) => ("Unavailable", "Indisponível"),
            ApiError::Unexpected(_) => ("Internal error", "Erro interno"),
        };
        match lang {
            Lang::En => en,
            Lang::Pt => pt,
        }
    }

    /// The human explanation of this occurrence.
    fn detail(&self, lang: Lang) -> String {
        if lang == Lang::En {
            return self.to_string();
        }
        match self {
            ApiError::MalformedJson(e) => format!("O corpo não é JSON válido: {e}"),
            ApiError::InvalidRequest(e) => format!("Pedido inválido: {e}"),
            ApiError::IllegalMove(e) => format!("Jogada ilegal: {e}"),
            ApiError::NotYourTurn => "Não é a sua vez de jogar".into(),
            ApiError::VersionConflict { expected, actual } => {
                format!("A partida está na versão {actual}, não {expected}")
            }
            ApiError::MatchFinished => "A partida já terminou".into(),
            ApiError::Unauthorized(e) => format!("Autenticação necessária: {e}"),
            ApiError::Forbidden(e) => format!("Acesso negado: {e}"),
            ApiError::NotFound(what) => format!("Não encontrado: {what}"),
            ApiError::NoRoute => "Esta rota não existe".into(),
            ApiError::MethodNotAllowed(methods) => {
                format!("Este caminho aceita {}", methods.join(", "))
            }
            ApiError::AlreadyQueued => "Você já tem um bilhete aberto na fila".into(),
            ApiError::InMatch => "Você está jogando uma partida classificada".into(),
            ApiError::RoomFull => "A sala já tem dois membros".into(),
            ApiError::TicketClosed => "O bilhete já foi pareado ou cancelado".into(),
            ApiError::IdempotencyKeyReused => {
                "Esta Idempotency-Key já foi usada com outro pedido".into()
            }
            ApiError::Conflict(e) => format!("Conflito: {e}"),
            ApiError::MatchActive(_) => "Há uma partida em andamento".into(),
            ApiError::PayloadTooLarge(n) => format!("O corpo passa de {n} bytes"),
            ApiError::RateLimited(s) => format!("Pedidos demais; tente de novo em {s} s"),
            ApiError::StrongSoloLimit(n) => format!(
                "Você já joga {n} partidas contra a CPU nos níveis 4-5; termine ou abandone uma antes"
            ),
            ApiError::Unavailable(_) => {
                format!(
                    "O serviço está indisponível por um momento; tente de novo em {RETRY_UNAVAILABLE} s"
                )
            }
            ApiError::Unexpected(_) => "Ocorreu um erro inesperado".into(),
        }
    }

    /// The problem document in a language.
    pub fn problem(&self, lang: Lang) -> Problem {
        Problem {
            r#type: format!("https://discs.dev/problems/{}", self.code()),
            title: self.title(lang),
            status: self.status().as_u16(),
            detail: self.detail(lang),
            code: self.code(),
            request_id: crate::requests::current(),
        }
    }
}

/// An RFC 9457 problem document with our stable `code`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Problem {
    pub r#type: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    /// Stable: clients branch on it (SPEC §6).
    pub code: &'static str,
    /// The request's id (`X-Request-Id`), to quote when reporting it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        log(self);
        render(self, Lang::En)
    }
}

/// The response of an error in a language.
pub fn render(error: &ApiError, lang: Lang) -> HttpResponse {
    let mut res = HttpResponse::build(error.status());
    res.insert_header((
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    ));
    res.insert_header((header::CONTENT_LANGUAGE, lang.tag()));
    match error {
        ApiError::RateLimited(secs) => {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        ApiError::Unavailable(_) => {
            res.insert_header((header::RETRY_AFTER, RETRY_UNAVAILABLE.to_string()));
        }
        ApiError::StrongSoloLimit(_) => {
            res.insert_header((header::RETRY_AFTER, RETRY_STRONG_SOLO.to_string()));
        }
        ApiError::MethodNotAllowed(methods) => {
            res.insert_header((header::ALLOW, methods.join(", ")));
        }
        _ => {}
    }
    let body = serde_json::to_vec(&error.problem(lang)).unwrap_or_default();
    res.body(body)
}

/// A refusal of the domain, as the client sees it.
impl From<DomainError> for ApiError {
    fn from(e: DomainError) -> ApiError {
        match e {
            DomainError::MatchFinished => ApiError::MatchFinished,
            DomainError::NotYourTurn(_) => ApiError::NotYourTurn,
            DomainError::IllegalMove(e) => ApiError::IllegalMove(e.to_string()),
            DomainError::NotCreated => ApiError::NotFound("match"),
            DomainError::NotAHumanSeat(_) => ApiError::Forbidden("that seat is not yours".into()),
            DomainError::AlreadyAway(_) => ApiError::Conflict("you already left this match".into()),
            DomainError::NotAway(_) => ApiError::Conflict("you are not away".into()),
            DomainError::BadCpuLevel(_)
            | DomainError::SamePlayerTwice
            | DomainError::RankedNeedsHumans
            | DomainError::SettingNotForGame(_) => ApiError::InvalidRequest(e.to_string()),
            DomainError::AlreadyCreated
            | DomainError::NotCpuControlled(_)
            | DomainError::AlreadyReplaced(_)
            | DomainError::NoTurnLimit
            | DomainError::TooEarly => ApiError::Conflict(e.to_string()),
        }
    }
}

/// An error the client cannot act on; its cause chain is logged, not shown.
pub fn unexpected<E: std::error::Error + Send + Sync + 'static>(e: E) -> ApiError {
    ApiError::from(anyhow::Error::new(e))
}
