//! `GET /v1/games`: the catalogue, in the language the client asks for.

use actix_web::HttpResponse;
use actix_web::http::header;

use crate::catalogue;
use crate::error::ApiError;
use crate::ratelimit::ByAddress;

pub async fn list(_: ByAddress) -> Result<HttpResponse, ApiError> {
    let lang = crate::requests::lang();
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_LANGUAGE, lang.tag()))
        .insert_header((header::VARY, "Accept-Language"))
        .json(catalogue::catalogue(lang)?))
}
