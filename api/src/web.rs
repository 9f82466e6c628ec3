//! The web client's pages and assets: every page is the same small HTML shell (its language
//! from `Accept-Language`) that loads one script and one stylesheet, embedded in the binary,
//! gzipped once and served under a content-hashed path so browsers may cache them for good.
//! The script builds each page from the public REST API and the event stream only.

use std::io::Write;
use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::lang::Lang;
use crate::ratelimit::ByAddress;
use service::Error;
use service::reasons::Missing;

/// The pages; each answers the shell, and the script renders the page its address names.
pub const PAGES: [&str; 7] = [
    "/",
    "/play",
    "/matches/{id}",
    "/players/{id}",
    "/leaderboards/{game}",
    "/admin",
    "/rooms/{code}",
];

/// An embedded file, with its gzipped bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    raw: &'static [u8],
    gzipped: Vec<u8>,
}

/// The assets and the version (a hash of them all) that their paths carry.
struct Assets {
    version: String,
    files: Vec<Asset>,
}

const FILES: [(&str, &str, &[u8]); 3] = [
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../web/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("../web/app.css"),
    ),
    (
        "icon.svg",
        "image/svg+xml",
        include_bytes!("../web/icon.svg"),
    ),
];

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let mut hash = Sha256::new();
        let files = FILES
            .iter()
            .map(|&(name, content_type, raw)| {
                hash.update(raw);
                Asset {
                    name,
                    content_type,
                    raw,
                    gzipped: gzip(raw),
                }
            })
            .collect();
        let digest = hash.finalize();
        let version = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        Assets { version, files }
    })
}

fn gzip(raw: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(raw);
    encoder.finish().unwrap_or_default()
}

/// Registers the pages and `/assets/{version}/{file}`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    for page in PAGES {
        cfg.route(page, web::get().to(shell));
    }
    cfg.route("/assets/{version}/{file}", web::get().to(asset));
}

/// The shell of every page: the language of `Accept-Language` (the script may switch it to the
/// one the visitor chose), the versioned assets, and a `<main>` the script fills.
async fn shell(_: ByAddress) -> HttpResponse {
    let lang = crate::requests::lang();
    let v = &assets().version;
    // The primary language subtag, as the client's texts and `<html lang>` name it.
    let tag = match lang {
        Lang::En => "en",
        Lang::Pt => "pt",
    };
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-content-type-options", "nosniff"))
        .insert_header((
            "content-security-policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
             connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        ))
        .body(format!(
            "<!doctype html>\n<html lang=\"{tag}\" data-server-lang=\"{tag}\"><head>\
             <meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>discs</title><link rel=\"icon\" href=\"/assets/{v}/icon.svg\">\
             <link rel=\"stylesheet\" href=\"/assets/{v}/app.css\">\
             <script type=\"module\" src=\"/assets/{v}/app.js\"></script></head>\
             <body><header id=\"top\"></header><main id=\"main\" aria-live=\"polite\"></main></body></html>\n"
        ))
}

/// An embedded asset: gzipped when the browser takes gzip, cached for a year (its path changes
/// with its content); 404 for another version or an unknown file.
async fn asset(
    _: ByAddress,
    req: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (version, file) = path.into_inner();
    let assets = assets();
    let found = assets
        .files
        .iter()
        .find(|a| a.name == file)
        .filter(|_| version == assets.version)
        .ok_or(Error::NotFound(Missing::Asset))?;
    let gzip = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|c| c.trim().starts_with("gzip")));
    let mut res = HttpResponse::Ok();
    res.content_type(found.content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .insert_header((header::VARY, "Accept-Encoding"))
        .insert_header(("x-content-type-options", "nosniff"));
    Ok(if gzip {
        res.insert_header((header::CONTENT_ENCODING, "gzip"))
            .body(found.gzipped.as_slice())
    } else {
        res.body(found.raw)
    })
}

/// The assets' version, as their paths carry it.
pub fn version() -> &'static str {
    &assets().version
}
