//! `ffo-jobs`: FFO endgame positions solved as background analysis jobs on a running server,
//! for BENCHMARKS.md (issue 14: FFO #51–#59 "attempted as jobs").
//!
//! `cargo run --release -p bench --bin ffo-jobs -- [--url http://127.0.0.1:8080] [--from 51]
//! [--to 59]`. Registers a player, queues one `POST /v1/analysis/jobs` per position (all at
//! once: the server runs them one after the other within its search slots, each until exact
//! or until its `DISCS_ANALYSIS_JOB_SECONDS` cap), polls `GET /v1/analysis/jobs/{id}` every
//! second until each is `done` or `failed`, and prints one Markdown row per position: the job's
//! own search time and nodes, and whether its score and best moves are the `.obf` file's.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use serde_json::{Value, json};

use domain::games::Side;
use domain::oracles::{FfoLine, ffo_lines};

#[derive(Parser)]
struct Args {
    /// The server to queue the jobs on.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// The first FFO position (40 to 79).
    #[arg(long, default_value_t = 51)]
    from: usize,
    /// The last FFO position.
    #[arg(long, default_value_t = 59)]
    to: usize,
}

fn positions(from: usize, to: usize) -> anyhow::Result<Vec<(usize, FfoLine)>> {
    let mut all = Vec::new();
    for (file, first) in [("fforum-40-59.obf", 40), ("fforum-60-79.obf", 60)] {
        let path = format!("{}/../oracles/reversi/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).with_context(|| path.clone())?;
        let lines = ffo_lines(&text).map_err(anyhow::Error::msg)?;
        all.extend(lines.into_iter().enumerate().map(|(i, l)| (first + i, l)));
    }
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|(n, _)| (from..=to).contains(n))
        .collect();
    if chosen.is_empty() {
        bail!("no FFO position between #{from} and #{to} (40 to 79 are known)");
    }
    Ok(chosen)
}

/// Sends a request and reads its JSON answer; an error status is an error.
async fn call(request: reqwest::RequestBuilder) -> anyhow::Result<Value> {
    Ok(request.send().await?.error_for_status()?.json().await?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let lines = positions(args.from, args.to)?;
    let http = reqwest::Client::new();
    let player = call(
        http.post(format!("{}/v1/players", args.url))
            .json(&json!({"name": "ffo-jobs"})),
    )
    .await?;
    let token = player["token"].as_str().context("a token")?.to_owned();

    let mut jobs = BTreeMap::new();
    for (n, line) in &lines {
        let side = match line.to_move {
            Side::First => "B",
            Side::Second => "W",
        };
        let body = json!({"game": "reversi", "board": line.rows, "side": side});
        let queued = call(
            http.post(format!("{}/v1/analysis/jobs", args.url))
                .bearer_auth(&token)
                .json(&body),
        )
        .await?;
        let id = queued["job_id"].as_str().context("a job id")?.to_owned();
        eprintln!("FFO #{n}: job {id}");
        jobs.insert(*n, id);
    }

    let mut answers: BTreeMap<usize, Value> = BTreeMap::new();
    while answers.len() < jobs.len() {
        tokio::time::sleep(Duration::from_secs(1)).await;
        for (n, id) in &jobs {
            if answers.contains_key(n) {
                continue;
            }
            let job = call(
                http.get(format!("{}/v1/analysis/jobs/{id}", args.url))
                    .bearer_auth(&token),
            )
            .await?;
            if job["status"] == "done" || job["status"] == "failed" {
                eprintln!("FFO #{n}: {} after {} ms", job["status"], job["elapsed_ms"]);
                answers.insert(*n, job);
            }
        }
    }

    println!(
        "| FFO # | empties | expected | job | exact | best moves (all) | search time | nodes | nodes/s | match |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (n, line) in &lines {
        let job = &answers[n];
        let empties: usize = line
            .rows
            .iter()
            .map(|r| r.chars().filter(|&c| c == '.').count())
            .sum();
        let expected = line.best_score().context("a listed move")?;
        let mut expected_moves: Vec<String> =
            line.best_moves().iter().map(|m| m.to_string()).collect();
        expected_moves.sort();
        let result = &job["result"];
        let mut moves: Vec<String> = result["best_moves"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m.as_str().map(str::to_lowercase))
                    .collect()
            })
            .unwrap_or_default();
        moves.sort();
        let exact = result["exact"] == true;
        let ms = job["elapsed_ms"].as_u64().unwrap_or(0);
        let nodes = job["nodes"].as_u64().unwrap_or(0);
        let verdict = if job["status"] == "failed" {
            format!("failed: {}", job["error"])
        } else if !exact {
            "not exact (cap)".to_owned()
        } else if result["score"] == json!(expected) && moves == expected_moves {
            "yes".to_owned()
        } else {
            "NO".to_owned()
        };
        println!(
            "| {n} | {empties} | {expected:+} | {} | {exact} | {} | {:.1} s | {nodes} | {:.1} M | {verdict} |",
            result["score"],
            moves.join(" "),
            ms as f64 / 1000.0,
            nodes as f64 / (ms.max(1) as f64 / 1000.0) / 1e6,
        );
    }
    Ok(())
}
