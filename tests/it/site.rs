//! The web client as served: every page is the shell in the visitor's language, and the
//! assets are versioned, cached for good, gzipped when asked, and refused under another version.

use std::io::Read;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT_ENCODING, ACCEPT_LANGUAGE, CACHE_CONTROL, CONTENT_ENCODING};

use crate::helpers::spawn_app;

#[tokio::test]
async fn every_page_is_the_shell_in_the_visitors_language() {
    let app = spawn_app().await;
    let pages = [
        "/",
        "/play",
        "/matches/0190b8a4-1111-7000-8000-000000000000",
        "/players/0190b8a4-1111-7000-8000-000000000000",
        "/leaderboards/reversi",
        "/admin",
        "/rooms/ABCD2345",
    ];
    for page in pages {
        let res = app
            .http
            .get(format!("{}{page}", app.base))
            .header(ACCEPT_LANGUAGE, "pt-PT, en;q=0.5")
            .send()
            .await
            .expect("an answer");
        assert_eq!(res.status(), StatusCode::OK, "{page}");
        assert_eq!(res.headers()[CACHE_CONTROL], "no-cache", "{page}");
        assert!(res.headers().contains_key("content-security-policy"));
        let html = res.text().await.expect("html");
        assert!(html.contains("<html lang=\"pt\""), "{page}: {html}");
        assert!(html.contains(&format!("/assets/{}/app.js", api::web::version())));
    }
    let english = app
        .http
        .get(format!("{}/", app.base))
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("html");
    assert!(english.contains("<html lang=\"en\""), "{english}");
}

#[tokio::test]
async fn assets_are_versioned_cached_and_gzipped_when_asked() {
    let app = spawn_app().await;
    let url = format!("{}/assets/{}/app.js", app.base, api::web::version());
    let plain = app.http.get(&url).send().await.expect("an answer");
    assert_eq!(plain.status(), StatusCode::OK);
    assert!(!plain.headers().contains_key(CONTENT_ENCODING));
    assert_eq!(
        plain.headers()[CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );
    assert!(
        plain.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/javascript")
    );
    let source = plain.bytes().await.expect("the script");

    let zipped = app
        .http
        .get(&url)
        .header(ACCEPT_ENCODING, "br, gzip;q=0.8")
        .send()
        .await
        .expect("an answer");
    assert_eq!(zipped.headers()[CONTENT_ENCODING], "gzip");
    let bytes = zipped.bytes().await.expect("gzipped bytes");
    // The entry module is one small module among several (the pages import theirs), and a
    // few kilobytes of code gzip to about 40%: at least halved.
    assert!(
        bytes.len() * 2 < source.len(),
        "{} of {}",
        bytes.len(),
        source.len()
    );
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut unzipped)
        .expect("valid gzip");
    assert_eq!(unzipped, source);

    for wrong in [
        format!("{}/assets/000000000000/app.js", app.base),
        format!("{}/assets/{}/secret.txt", app.base, api::web::version()),
    ] {
        let res = app.http.get(&wrong).send().await.expect("an answer");
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{wrong}");
    }
}
