//! Docs that cannot drift: the README and ARCHITECTURE.md stay short, every relative link of the
//! documents leads to a file and a heading that exist, every path and test ARCHITECTURE.md names
//! exists, and no document cites one outside the repository. No database needed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::ownership::root;

/// The documents whose links and test pointers are checked: the README, ARCHITECTURE.md,
/// BENCHMARKS.md and `docs/*.md`.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut out: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        .iter()
        .map(|name| root.join(name))
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The file's path from the workspace's root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A markdown text with its fenced code blocks blanked out (their lines kept, empty): code holds
/// no links, headings or spans.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The prose split into its inline code spans and the text around them; a span never crosses a
/// blank line.
fn spans_and_text(prose: &str) -> (Vec<String>, String) {
    let mut spans = Vec::new();
    let mut text = String::with_capacity(prose.len());
    for paragraph in prose.split("\n\n") {
        for (i, part) in paragraph.split('`').enumerate() {
            if i % 2 == 1 {
                spans.push(part.replace('\n', " "));
            } else {
                text.push_str(part);
            }
        }
        text.push_str("\n\n");
    }
    (spans, text)
}

/// The targets of the inline links and images (`[text](target)`) of a text without code.
fn link_targets(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            rest.find(')').map(|end| {
                rest[..end]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .to_owned()
            })
        })
        .collect()
}

/// GitHub's anchor for a heading: lowercase, punctuation dropped but '-' and '_', each space a
/// '-'.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown text's headings; a repeated one gets `-1`, `-2`… as on GitHub.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in prose(text).lines() {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim_end_matches('#'));
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// A code span that points to a test: `<file>.rs::<function>`.
fn test_pointer(span: &str) -> Option<(&str, &str)> {
    let (file, function) = span.split_once("::")?;
    (file.ends_with(".rs")
        && file.contains('/')
        && !function.is_empty()
        && function
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some((file, function))
}

/// Whether a code span is a repository path to check: it holds a '/', no space or placeholder,
/// and ends in a source or document extension, ends in '/' (a folder), or starts with a folder
/// of the root.
fn repository_path(span: &str) -> bool {
    const ENDINGS: [&str; 6] = [".rs", ".md", ".sh", ".sql", ".js", ".toml"];
    if !span.contains('/')
        || span.starts_with('/')
        || span.starts_with('~')
        || span.contains(|c: char| c.is_whitespace() || "<>{}*$…|:,()=".contains(c))
    {
        return false;
    }
    let first = span.split('/').next().unwrap_or("");
    ENDINGS.iter().any(|e| span.ends_with(e))
        || span.ends_with('/')
        || (!first.is_empty() && root().join(first).is_dir())
}

#[test]
fn the_readme_is_short_and_opens_with_the_two_commands() {
    let path = root().join("README.md");
    let size = std::fs::metadata(&path).expect("README.md").len();
    assert!(
        size <= 25_000,
        "README.md is {size} bytes: move detail to docs/"
    );
    let text = read(&path);
    let top: Vec<&str> = text.lines().take(40).collect();
    for command in ["cargo run --release", "cargo test"] {
        assert!(
            top.iter().any(|line| line.contains(command)),
            "`{command}` is not in README.md's first 40 lines"
        );
    }
}

#[test]
fn architecture_is_short() {
    let size = std::fs::metadata(root().join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md")
        .len();
    assert!(
        size <= 30_000,
        "ARCHITECTURE.md is {size} bytes: point to the code rather than copy it"
    );
}

#[test]
fn every_relative_link_leads_to_a_file_and_a_heading_that_exist() {
    let mut broken = Vec::new();
    let mut links = 0;
    for document in documents() {
        let (_, text) = spans_and_text(&prose(&read(&document)));
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            links += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if file.is_empty() {
                document.clone()
            } else {
                document.parent().expect("a folder").join(file)
            };
            if !linked.exists() {
                broken.push(format!("{}: {target}: no such file", shown(&document)));
            } else if !anchor.is_empty()
                && linked.extension().is_some_and(|e| e == "md")
                && !anchors(&read(&linked)).contains(anchor)
            {
                broken.push(format!(
                    "{}: {target}: no such heading in {}",
                    shown(&document),
                    shown(&linked)
                ));
            }
        }
    }
    assert!(links > 20, "only {links} links found: the reader is broken");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn every_path_architecture_names_exists() {
    let (spans, _) = spans_and_text(&prose(&read(&root().join("ARCHITECTURE.md"))));
    let paths: Vec<&String> = spans
        .iter()
        .filter(|s| test_pointer(s).is_none() && repository_path(s))
        .collect();
    assert!(
        paths.len() > 20,
        "only {} paths found: the reader is broken",
        paths.len()
    );
    let missing: Vec<&&String> = paths
        .iter()
        .filter(|p| {
            let path = root().join(p.as_str());
            if p.ends_with('/') {
                !path.is_dir()
            } else {
                !path.exists()
            }
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn every_test_the_docs_point_to_exists() {
    let mut pointers = 0;
    let mut missing = Vec::new();
    for document in documents() {
        let (spans, _) = spans_and_text(&prose(&read(&document)));
        for (file, function) in spans.iter().filter_map(|s| test_pointer(s)) {
            pointers += 1;
            let path = root().join(file);
            let found = path.is_file()
                && read(&path)
                    .match_indices(&format!("fn {function}("))
                    .next()
                    .is_some();
            if !found {
                missing.push(format!("{}: {file}::{function}", shown(&document)));
            }
        }
    }
    assert!(
        pointers >= 5,
        "only {pointers} test pointers found: the reader is broken"
    );
    assert!(
        missing.is_empty(),
        "these tests do not exist: {}",
        missing.join("\n")
    );
}

/// Whether `.gitignore` ignores `path` (from the repository's root): what the drills, the
/// tools and the builds leave in the clone. Its patterns are names, `/`-anchored paths and one
/// `*` at either end, which is all this reads.
fn ignored(patterns: &[String], path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    patterns.iter().any(|line| {
        let pattern = line.trim_matches('/');
        let candidate = if line.starts_with('/') { path } else { name };
        match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
            (Some(suffix), _) => candidate.ends_with(suffix),
            (_, Some(prefix)) => candidate.starts_with(prefix),
            _ => candidate == pattern,
        }
    })
}

/// Every file of the repository under `dir` (`rel` from the root), for the search of citations:
/// not `.git/` nor what `.gitignore` ignores, not `oracles/` (verbatim copies, whose README says
/// what their one outside name means) nor `migrations/` (an applied file cannot change: refinery
/// refuses a database whose file did).
fn repository_files(dir: &Path, rel: &str, patterns: &[String], out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if [".git", "oracles", "migrations"].contains(&path.as_str()) || ignored(patterns, &path) {
            continue;
        }
        if entry.path().is_dir() {
            repository_files(&entry.path(), &path, patterns, out);
        } else {
            out.push(entry.path());
        }
    }
}

#[test]
fn no_document_cites_one_outside_the_repository() {
    let patterns: Vec<String> = read(&root().join(".gitignore"))
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(String::from)
        .collect();
    let mut files = Vec::new();
    repository_files(&root(), "", &patterns, &mut files);
    assert!(files.len() >= 200, "{}", files.len());
    // Spelled in two halves, so that this file does not cite them.
    let outside = [
        ["SPEC", " §"],
        ["SPEC", ".md"],
        ["../", "shared"],
        ["shared/", "research/"],
    ]
    .map(|[a, b]| format!("{a}{b}"));
    let mut citations = Vec::new();
    for file in files {
        // What does not read as text (images, binaries) cites nothing.
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for outside in &outside {
            if text.contains(outside.as_str()) {
                citations.push(format!("{} cites `{outside}`", shown(&file)));
            }
        }
    }
    assert!(citations.is_empty(), "{}", citations.join("\n"));
}

#[test]
fn the_readers_follow_githubs_anchors_and_skip_code() {
    assert_eq!(
        slug("Backups and restores (pgBackRest)"),
        "backups-and-restores-pgbackrest"
    );
    assert_eq!(slug("`domain/` — the pure core"), "domain--the-pure-core");
    assert_eq!(slug("Operators' guide"), "operators-guide");
    let text = "# A\n\n## A\n\n```\n# not a heading [x](nowhere.md)\n```\n\
                See [b](b.md#a-1) and `[c](c.md)` and `tests/it/docs.rs::slug`.\n";
    assert_eq!(anchors(text), ["a", "a-1"].map(String::from).into());
    let (spans, rest) = spans_and_text(&prose(text));
    assert_eq!(link_targets(&rest), ["b.md#a-1"]);
    assert_eq!(spans, ["[c](c.md)", "tests/it/docs.rs::slug"]);
    assert_eq!(test_pointer(&spans[1]), Some(("tests/it/docs.rs", "slug")));
    assert!(repository_path("api/web/") && repository_path("routes/matches.rs"));
    assert!(!repository_path("/v1/games") && !repository_path("migrations/V<n>__<name>.sql"));
    let patterns = [
        "/target",
        "/target-*",
        "*.profraw",
        ".schemathesis/",
        "/deploy/local",
    ]
    .map(String::from);
    for path in [
        "target",
        "target-x",
        "a/b.profraw",
        "api/.schemathesis",
        "deploy/local",
    ] {
        assert!(ignored(&patterns, path), "{path}");
    }
    for path in ["tests/target", "deploy/docker", ".ci", "profraw.md"] {
        assert!(!ignored(&patterns, path), "{path}");
    }
}
