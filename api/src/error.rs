//! `ApiError`: every error a client can see, mapped in one place to a status, a stable `code` and
//! an `application/problem+json` body in English or Portuguese.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use crate::catalogue::Lang;

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
    #[error("the body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("too many requests; retry in {0} s")]
    RateLimited(u64),
    #[error("no such route")]
    NoRoute,
    #[error("an unexpected error occurred")]
    Unexpected(#[from] anyhow::Error),
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
            ApiError::AlreadyQueued => "already_queued",
            ApiError::InMatch => "in_match",
            ApiError::RoomFull => "room_full",
            ApiError::TicketClosed => "ticket_closed",
            ApiError::IdempotencyKeyReused => "idempotency_key_reused",
            ApiError::Conflict(_) => "conflict",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::RateLimited(_) => "rate_limited",
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
            ApiError::NotYourTurn
            | ApiError::VersionConflict { .. }
            | ApiError::MatchFinished
            | ApiError::AlreadyQueued
            | ApiError::InMatch
            | ApiError::RoomFull
            | ApiError::TicketClosed
            | ApiError::IdempotencyKeyReused
            | ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
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
            ApiError::AlreadyQueued => ("Already queued", "Já está na fila"),
            ApiError::InMatch => ("In a match", "Em partida"),
            ApiError::RoomFull => ("Room full", "Sala cheia"),
            ApiError::TicketClosed => ("Ticket closed", "Bilhete encerrado"),
            ApiError::IdempotencyKeyReused => (
                "Idempotency key reused",
                "Chave de idempotência reutilizada",
            ),
            ApiError::Conflict(_) => ("Conflict", "Conflito"),
            ApiError::PayloadTooLarge(_) => ("Payload too large", "Corpo grande demais"),
            ApiError::RateLimited(_) => ("Rate limited", "Limite de pedidos"),
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
            ApiError::AlreadyQueued => "Você já tem um bilhete aberto na fila".into(),
            ApiError::InMatch => "Você está jogando uma partida classificada".into(),
            ApiError::RoomFull => "A sala já tem dois membros".into(),
            ApiError::TicketClosed => "O bilhete já foi pareado ou cancelado".into(),
            ApiError::IdempotencyKeyReused => {
                "Esta Idempotency-Key já foi usada com outro pedido".into()
            }
            ApiError::Conflict(e) => format!("Conflito: {e}"),
            ApiError::PayloadTooLarge(n) => format!("O corpo passa de {n} bytes"),
            ApiError::RateLimited(s) => format!("Pedidos demais; tente de novo em {s} s"),
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
        }
    }
}

/// An RFC 9457 problem document with our stable `code`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Problem {
    pub r#type: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    pub code: &'static str,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Unexpected(e) = self {
            tracing::error!(error = ?e, "unexpected error");
        }
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
    if let ApiError::RateLimited(secs) = error {
        res.insert_header((header::RETRY_AFTER, secs.to_string()));
    }
    let body = serde_json::to_vec(&error.problem(lang)).unwrap_or_default();
    res.body(body)
}
