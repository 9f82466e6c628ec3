//! The service's own documents: health, readiness, the OpenAPI document and its docs page.

use reqwest::StatusCode;

use crate::helpers::spawn_app;

#[tokio::test]
async fn health_readiness_and_the_api_documents_answer_without_a_token() {
    let app = spawn_app().await;
    let get = |path: &str| app.send(app.http.get(format!("{}{path}", app.base)));
    assert_eq!(get("/healthz").await.status, StatusCode::OK);
    let ready = get("/readyz").await;
    assert_eq!(
        (ready.status, ready.body["status"].as_str()),
        (StatusCode::OK, Some("ready"))
    );

    let doc = get("/openapi.json").await;
    assert_eq!(doc.status, StatusCode::OK);
    assert!(
        doc.body["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3."))
    );
    let paths = doc.body["paths"].as_object().expect("paths");
    for route in api::routes::table() {
        let op = &paths[route.path][route.method];
        assert!(
            op.is_object(),
            "{} {} is documented",
            route.method,
            route.path
        );
        assert_eq!(
            op["security"].is_array(),
            route.auth,
            "{} {}",
            route.method,
            route.path
        );
    }
    assert!(paths["/v1/matches/{id}/moves"]["post"]["requestBody"].is_object());

    let docs = app.send(app.http.get(format!("{}/docs", app.base))).await;
    assert_eq!(docs.status, StatusCode::OK);
    let page = app
        .http
        .get(format!("{}/docs", app.base))
        .send()
        .await
        .expect("docs")
        .text()
        .await
        .expect("html");
    assert!(page.contains("/v1/matches/{id}/moves"));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing loads from elsewhere"
    );
}
