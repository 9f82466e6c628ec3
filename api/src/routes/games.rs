//! `GET /v1/games`: the catalogue, in the language the client asks for.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};

use crate::catalogue;
use crate::error::ApiError;
use crate::idempotency::lang_of;
use crate::ratelimit::ByAddress;

pub async fn list(_: ByAddress, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let lang = lang_of(&req);
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_LANGUAGE, lang.tag()))
        .insert_header((header::VARY, "Accept-Language"))
        .json(catalogue::catalogue(lang)?))
}
