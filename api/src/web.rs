//! The web client's pages and assets: every page is the same small HTML shell (its language
//! from `Accept-Language`) that loads the entry module `app.js` and one stylesheet. The client's
//! ES modules (no build step: the browser resolves their relative imports), the stylesheet, the
//! icon and the client's texts (`texts.<lang>.json`, from the `client` part of each language's
//! data file) are embedded in the binary, gzipped once and served under one content-hashed
//! path, `/assets/<version>/`, so browsers may cache them for good. The modules build each page
//! from the public REST API and the event stream only.

use std::borrow::Cow;
use std::collections::BTreeMap;
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

/// The pages; each answers the shell, and the entry module renders the page its address names.
pub const PAGES: [&str; 11] = [
    "/",
    "/play",
    "/matches/{id}",
    "/players/{id}",
    "/leaderboards/{game}",
    "/admin",
    "/rooms/{code}",
    "/explorer/{game}",
    "/tournaments",
    "/tournaments/{id}",
    "/inbox",
];

/// An embedded file, with its gzipped bytes.
struct Asset {
    name: Cow<'static, str>,
    content_type: &'static str,
    raw: Cow<'static, [u8]>,
    gzipped: Vec<u8>,
}

/// The assets and the version (a hash of them all) that their paths carry.
struct Assets {
    version: String,
    files: Vec<Asset>,
}

const JS: &str = "text/javascript; charset=utf-8";

/// `(name, content type, bytes)` of a file of `api/web/`.
macro_rules! embed {
    ($name:literal, $type:expr) => {
        (
            $name,
            $type,
            include_bytes!(concat!("../web/", $name)) as &[u8],
        )
    };
}

/// The files of `api/web/`: the entry module first, then the modules it imports (one per page,
/// and what the pages share), the stylesheet and the icon.
const FILES: [(&str, &str, &[u8]); 23] = [
    embed!("app.js", JS),
    embed!("api.js", JS),
    embed!("texts.js", JS),
    embed!("view.js", JS),
    embed!("dom.js", JS),
    embed!("board.js", JS),
    embed!("stream.js", JS),
    embed!("chart.js", JS),
    embed!("settings.js", JS),
    embed!("home.js", JS),
    embed!("play.js", JS),
    embed!("match.js", JS),
    embed!("player.js", JS),
    embed!("leaderboards.js", JS),
    embed!("explorer.js", JS),
    embed!("admin.js", JS),
    embed!("room.js", JS),
    embed!("tournaments.js", JS),
    embed!("tournament.js", JS),
    embed!("inbox.js", JS),
    embed!("notfound.js", JS),
    embed!("app.css", "text/css; charset=utf-8"),
    embed!("icon.svg", "image/svg+xml"),
];

/// The languages of the client, as `<html lang>` and the texts' file names name them (the
/// primary language subtag).
const LANGUAGES: [(Lang, &str); 2] = [(Lang::En, "en"), (Lang::Pt, "pt")];

/// The client's texts in `lang` as the browser reads them: a JSON object of templates, sorted
/// by key so that every instance serves (and hashes) the same bytes.
fn client_texts(lang: Lang) -> Option<Vec<u8>> {
    match crate::texts::of(lang) {
        Ok(texts) => {
            let sorted: BTreeMap<&str, &str> = texts
                .client
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            serde_json::to_vec(&sorted).ok()
        }
        Err(e) => {
            // Start-up refuses texts that do not parse (`texts::check`); without them the page
            // says that its texts did not load.
            tracing::error!(error = %e, "the client's texts are missing");
            None
        }
    }
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let embedded = FILES.iter().map(|&(name, content_type, raw)| {
            (Cow::Borrowed(name), content_type, Cow::Borrowed(raw))
        });
        let texts = LANGUAGES.iter().filter_map(|&(lang, tag)| {
            let raw = client_texts(lang)?;
            Some((
                Cow::Owned(format!("texts.{tag}.json")),
                "application/json",
                Cow::Owned(raw),
            ))
        });
        let mut hash = Sha256::new();
        let files = embedded
            .chain(texts)
            .map(|(name, content_type, raw)| {
                hash.update(name.as_bytes());
                hash.update(&raw);
                let gzipped = gzip(&raw);
                Asset {
                    name,
                    content_type,
                    raw,
                    gzipped,
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

/// The shell of every page: the language of `Accept-Language` (the client may switch it to the
/// one the visitor chose, among `data-languages`), the versioned assets (the modules preloaded,
/// so that the browser fetches them with the entry rather than one import level at a time), and
/// a `<main>` the client fills.
async fn shell(_: ByAddress) -> HttpResponse {
    let lang = crate::requests::lang();
    let assets = assets();
    let v = &assets.version;
    let tag = LANGUAGES
        .iter()
        .find(|(l, _)| *l == lang)
        .map_or("en", |(_, tag)| tag);
    let languages: Vec<&str> = LANGUAGES.iter().map(|(_, tag)| *tag).collect();
    let languages = languages.join(" ");
    let preloads: String = assets
        .files
        .iter()
        .filter(|a| a.name.ends_with(".js") && a.name != "app.js")
        .map(|a| {
            format!(
                "<link rel=\"modulepreload\" href=\"/assets/{v}/{}\">",
                a.name
            )
        })
        .collect();
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
            "<!doctype html>\n<html lang=\"{tag}\" data-server-lang=\"{tag}\" data-languages=\"{languages}\"><head>\
             <meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>discs</title><link rel=\"icon\" href=\"/assets/{v}/icon.svg\">\
             <link rel=\"stylesheet\" href=\"/assets/{v}/app.css\">\
             <script type=\"module\" src=\"/assets/{v}/app.js\"></script>{preloads}</head>\
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
        res.body(&found.raw[..])
    })
}

/// The assets' version, as their paths carry it.
pub fn version() -> &'static str {
    &assets().version
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JavaScript modules, by name.
    fn modules() -> impl Iterator<Item = (&'static str, &'static str)> {
        FILES
            .iter()
            .filter(|(name, _, _)| name.ends_with(".js"))
            .map(|&(name, _, raw)| (name, std::str::from_utf8(raw).expect("UTF-8")))
    }

    /// The quoted strings that follow `prefix` in `source` where it starts a word (`t('` → the
    /// keys asked for, not `split('`).
    fn quoted_after<'a>(source: &'a str, prefix: &str) -> Vec<&'a str> {
        source
            .match_indices(prefix)
            .filter(|&(at, _)| {
                !source[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || "_$.".contains(c))
            })
            .filter_map(|(at, _)| {
                source[at + prefix.len()..]
                    .split_once('\'')
                    .map(|(quoted, _)| quoted)
            })
            .collect()
    }

    #[test]
    fn every_module_opens_with_a_line_saying_what_lives_there() {
        for (name, source) in modules() {
            assert!(
                source.starts_with("// "),
                "{name} opens with a comment line"
            );
        }
    }

    #[test]
    fn every_module_imported_is_served() {
        for (name, source) in modules() {
            for import in quoted_after(source, "from './") {
                assert!(
                    FILES.iter().any(|(file, _, _)| *file == import),
                    "{name} imports ./{import}, which is not embedded"
                );
            }
        }
    }

    #[test]
    fn every_text_the_client_asks_for_is_in_the_texts() {
        let english = &crate::texts::of(Lang::En).expect("the texts").client;
        for (name, source) in modules() {
            for key in quoted_after(source, "t('") {
                assert!(
                    english.contains_key(key),
                    "{name} asks for the text `{key}`, which api/texts/en.json lacks"
                );
            }
        }
    }

    #[test]
    fn the_texts_of_every_language_are_served_beside_the_modules() {
        let assets = assets();
        for (lang, tag) in LANGUAGES {
            let file = format!("texts.{tag}.json");
            let asset = assets
                .files
                .iter()
                .find(|a| a.name == file)
                .expect("served");
            let served: BTreeMap<String, String> =
                serde_json::from_slice(&asset.raw).expect("a JSON object of texts");
            let texts = &crate::texts::of(lang).expect("the texts").client;
            assert_eq!(served.len(), texts.len(), "{file}");
            assert!(
                served.iter().all(|(k, v)| texts.get(k) == Some(v)),
                "{file}"
            );
        }
    }
}
