//! Finding a PostgreSQL server, or starting a private one where none answers.
//!
//! `cargo run` and `cargo test` must work on a machine where PostgreSQL is installed but not
//! running. [`ensure_server`] checks whether the configured server accepts TCP connections; if it
//! does not, and the URL points at this machine, it finds `initdb`/`pg_ctl` (PATH, Debian's
//! `/usr/lib/postgresql/<v>/bin`, Homebrew), creates a cluster in a data folder it owns and starts
//! it on a private port. As root it runs them as the `postgres` user (or `nobody`), because
//! PostgreSQL refuses to run as root. A file lock makes concurrent callers (several test binaries,
//! two servers) share one cluster instead of racing.
//!
//! The private cluster never trusts a connection: every one, over TCP or its unix socket, needs
//! the password generated at its creation and kept in `<data_dir>/password` (mode 0600, in a
//! 0700 folder), which [`ensure_server`] puts in the URL it returns. A cluster created by an
//! earlier version with `trust` gets a password and loses `trust` at its next start.

use std::fs::{self, File};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The port of a private cluster; far from 5432 so that it never collides with a system server
/// that starts later.
pub const PRIVATE_PORT: u16 = 54329;

/// Why no server could be found or started.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Nothing answers at the URL, and it names another machine.
    #[error("no PostgreSQL server answers at {0}, and it is not on this machine")]
    Remote(String),
    #[error(
        "no PostgreSQL server answers at {0}, and no PostgreSQL installation (initdb, pg_ctl) was found; install PostgreSQL or set DATABASE_URL"
    )]
    /// Nothing answers, and no `initdb`/`pg_ctl` was found to start a cluster.
    NotInstalled(String),
    /// The URL is not a `postgres://` URL.
    #[error("malformed database URL `{0}`")]
    BadUrl(String),
    /// A PostgreSQL tool failed (`initdb`, `pg_ctl`, ...).
    #[error("{action} failed: {detail}")]
    Command {
        /// What was run.
        action: String,
        /// What it printed.
        detail: String,
    },
    /// The data folder or its lock file could not be used.
    #[error("I/O on {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
}

/// What [`ensure_server`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// A server answered at the configured URL.
    Running {
        /// The configured URL.
        url: String,
    },
    /// None answered; a private cluster in `data_dir` serves at `url`.
    Private {
        /// The configured URL on the private cluster's port.
        url: String,
        /// The cluster's folder (data, log, lock file).
        data_dir: PathBuf,
    },
}

impl Server {
    /// The URL to connect to.
    pub fn url(&self) -> &str {
        match self {
            Server::Running { url } | Server::Private { url, .. } => url,
        }
    }
}

/// Returns a URL of a PostgreSQL server that answers: the configured one, or a private cluster in
/// `data_dir` started for the purpose (see the module docs). Blocking: call it at start-up.
pub fn ensure_server(url: &str, data_dir: &Path) -> Result<Server, ClusterError> {
    ensure_server_on(url, data_dir, PRIVATE_PORT)
}

/// [`ensure_server`] with the private cluster on `private_port`.
pub fn ensure_server_on(
    url: &str,
    data_dir: &Path,
    private_port: u16,
) -> Result<Server, ClusterError> {
    // Several hosts name a cluster someone runs (a primary and its standbys, the one to use
    // chosen by `target_session_attrs` at each connection): never a private one, and a node
    // down now is a failover under way, not a missing server.
    if several_hosts(url) {
        return Ok(Server::Running {
            url: url.to_owned(),
        });
    }
    let (host, port) = host_port(url)?;
    if answers(&host, port) {
        return Ok(Server::Running {
            url: url.to_owned(),
        });
    }
    if !matches!(host.as_str(), "127.0.0.1" | "localhost" | "::1" | "[::1]") {
        return Err(ClusterError::Remote(url.to_owned()));
    }
    let private_url = with_port(url, &host, port, private_port);
    fs::create_dir_all(data_dir).map_err(|source| io(data_dir, source))?;
    restrict(data_dir, 0o700)?;
    let lock_path = data_dir.join("discs-cluster.lock");
    let lock = File::create(&lock_path).map_err(|source| io(&lock_path, source))?;
    lock.lock().map_err(|source| io(&lock_path, source))?;
    // Someone else may have started it while we waited for the lock.
    if !answers("127.0.0.1", private_port) {
        start(data_dir, private_port).inspect_err(|_| {
            let _ = lock.unlock();
        })?;
    }
    let _ = lock.unlock();
    let password_file = data_dir.join(PASSWORD_FILE);
    let url = match fs::read_to_string(&password_file) {
        Ok(password) => with_password(&private_url, password.trim()),
        // A cluster of an earlier version, started by it and still running: it trusts, for now.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => private_url,
        Err(source) => return Err(io(&password_file, source)),
    };
    Ok(Server::Private {
        url,
        data_dir: data_dir.to_owned(),
    })
}

/// The default data folder of a private cluster: `$XDG_DATA_HOME/discs/postgres` or
/// `~/.local/share/discs/postgres`, else `./.pgdata`.
pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(dir).join("discs/postgres");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".local/share/discs/postgres");
    }
    PathBuf::from(".pgdata")
}

/// Stops the private cluster in `root` (fast shutdown); nothing to do when it is not running.
pub fn stop(root: &Path) -> Result<(), ClusterError> {
    let bin =
        find_bin_dir().ok_or_else(|| ClusterError::NotInstalled(root.display().to_string()))?;
    let data = root.join("data");
    if !data.join("postmaster.pid").exists() {
        return Ok(());
    }
    run(
        "pg_ctl stop",
        as_user(&unprivileged_user(), &bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .args(["-m", "fast", "-w", "stop"]),
    )
}

/// The file (in the cluster's folder) holding the password of its `postgres` role.
const PASSWORD_FILE: &str = "password";

fn start(root: &Path, port: u16) -> Result<(), ClusterError> {
    let bin =
        find_bin_dir().ok_or_else(|| ClusterError::NotInstalled(root.display().to_string()))?;
    let run_as = unprivileged_user();
    let data = root.join("data");
    let password_file = root.join(PASSWORD_FILE);
    let fresh = !data.join("PG_VERSION").exists();
    let password = match fs::read_to_string(&password_file) {
        Ok(p) => p.trim().to_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let p = format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                uuid::Uuid::new_v4().simple()
            );
            fs::write(&password_file, &p).map_err(|source| io(&password_file, source))?;
            p
        }
        Err(source) => return Err(io(&password_file, source)),
    };
    restrict(&password_file, 0o600)?;
    if let Some(user) = &run_as {
        chown(root, user)?;
    }
    if fresh {
        run(
            "initdb",
            as_user(&run_as, &bin.join("initdb"))
                .arg("-D")
                .arg(&data)
                .args([
                    "-U",
                    "postgres",
                    "--auth=scram-sha-256",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                    "--no-sync",
                ])
                .arg(format!("--pwfile={}", password_file.display())),
        )?;
    }
    let log = root.join("server.log");
    run(
        "pg_ctl start",
        as_user(&run_as, &bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "-o"])
            .arg(format!(
                "-p {port} -c listen_addresses=127.0.0.1 -k {} -c unix_socket_permissions=0700 \
                 -c max_connections=300",
                root.display()
            ))
            .arg("start"),
    )
    .map_err(|e| with_log_tail(e, &log))?;
    let hba = data.join("pg_hba.conf");
    let rules = fs::read_to_string(&hba).map_err(|source| io(&hba, source))?;
    if rules
        .lines()
        .any(|l| !l.trim_start().starts_with('#') && l.contains("trust"))
    {
        // A cluster of an earlier version: give its role the password, then stop trusting.
        let psql = Some(bin.join("psql"))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("psql"));
        run(
            "psql (set the password)",
            as_user(&run_as, &psql)
                .arg("-h")
                .arg(root)
                .args([
                    "-p",
                    &port.to_string(),
                    "-U",
                    "postgres",
                    "-d",
                    "postgres",
                    "-c",
                ])
                .arg(format!("ALTER ROLE postgres PASSWORD '{password}'")),
        )?;
        let scram: String = rules
            .lines()
            .map(|l| {
                if l.trim_start().starts_with('#') {
                    l.to_owned()
                } else {
                    l.replace("trust", "scram-sha-256")
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        fs::write(&hba, scram + "\n").map_err(|source| io(&hba, source))?;
        run(
            "pg_ctl reload",
            as_user(&run_as, &bin.join("pg_ctl"))
                .arg("-D")
                .arg(&data)
                .arg("reload"),
        )?;
    }
    tracing_line(&format!(
        "started a private PostgreSQL cluster in {} on 127.0.0.1:{port} (password in {})",
        data.display(),
        password_file.display()
    ));
    Ok(())
}

/// Sets a file's or folder's mode (Unix).
fn restrict(path: &Path, mode: u32) -> Result<(), ClusterError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|source| io(path, source))
}

/// `url` with `password` for its user (`postgres` when it names none).
fn with_password(url: &str, password: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (user, host) = match authority.rsplit_once('@') {
        Some((userinfo, host)) => (userinfo.split(':').next().unwrap_or("postgres"), host),
        None => ("postgres", authority),
    };
    format!("{scheme}://{user}:{password}@{host}{tail}")
}

fn tracing_line(msg: &str) {
    eprintln!("discs: {msg}");
}

fn run(action: &str, cmd: &mut Command) -> Result<(), ClusterError> {
    let out = cmd.output().map_err(|e| ClusterError::Command {
        action: action.to_owned(),
        detail: e.to_string(),
    })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(ClusterError::Command {
            action: action.to_owned(),
            detail: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        })
    }
}

/// A failed command's error with the last lines of the server's log, which say why it failed.
fn with_log_tail(error: ClusterError, log: &Path) -> ClusterError {
    let ClusterError::Command { action, detail } = error else {
        return error;
    };
    let text = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(10)..].join("\n");
    ClusterError::Command {
        action,
        detail: format!("{detail}\n{}:\n{tail}", log.display()),
    }
}

fn as_user(user: &Option<String>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// The user to run PostgreSQL as when we are root (it refuses root); `None` when not root.
fn unprivileged_user() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return None;
    }
    for user in ["postgres", "nobody"] {
        let known = Command::new("id")
            .arg(user)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if known {
            return Some(user.to_owned());
        }
    }
    None
}

fn chown(dir: &Path, user: &str) -> Result<(), ClusterError> {
    run("chown", Command::new("chown").arg("-R").arg(user).arg(dir))?;
    // Every ancestor must be traversable by that user.
    let mut parent = dir.parent();
    while let Some(p) = parent {
        if p.as_os_str().is_empty() {
            break;
        }
        let _ = Command::new("chmod").arg("o+x").arg(p).output();
        parent = p.parent();
    }
    Ok(())
}

/// Where `initdb` and `pg_ctl` live: the PATH, then the usual Debian and Homebrew places.
pub fn find_bin_dir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = fs::read_dir("/usr/lib/postgresql")
        .map(|dir| dir.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    // Newest major version first.
    debian.sort_by_key(|p| {
        std::cmp::Reverse(
            p.parent()
                .and_then(|v| v.file_name())
                .and_then(|v| v.to_str())
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(0),
        )
    });
    candidates.extend(debian);
    candidates.extend(
        [
            "/opt/homebrew/bin",
            "/usr/local/bin",
            "/usr/local/pgsql/bin",
        ]
        .iter()
        .map(PathBuf::from),
    );
    candidates
        .into_iter()
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
}

fn answers(host: &str, port: u16) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let Ok(addrs) = (host, port).to_socket_addrs() else {
        return false;
    };
    addrs
        .into_iter()
        .any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok())
}

/// Whether a `postgres://` URL lists several hosts (`h1:5432,h2:5433`).
fn several_hosts(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .contains(',')
}

/// The host and port of a `postgres://user@host:port/db?...` URL (port 5432 when absent).
fn host_port(url: &str) -> Result<(String, u16), ClusterError> {
    let bad = || ClusterError::BadUrl(url.to_owned());
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or_else(bad)?;
    let authority = rest.split(['/', '?']).next().ok_or_else(bad)?;
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if hostport.is_empty() {
        return Ok(("localhost".to_owned(), 5432));
    }
    match hostport.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') && !port.contains(']') => {
            Ok((host.to_owned(), port.parse().map_err(|_| bad())?))
        }
        _ => Ok((hostport.to_owned(), 5432)),
    }
}

fn with_port(url: &str, host: &str, old: u16, new: u16) -> String {
    let explicit = format!("{host}:{old}");
    if url.contains(&explicit) {
        url.replacen(&explicit, &format!("127.0.0.1:{new}"), 1)
    } else {
        url.replacen(host, &format!("127.0.0.1:{new}"), 1)
    }
}

fn io(path: &Path, source: std::io::Error) -> ClusterError {
    ClusterError::Io {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_of_several_hosts_is_a_cluster_someone_runs() {
        let url =
            "postgres://postgres@127.0.0.1:1,127.0.0.1:2/discs?target_session_attrs=read-write";
        assert!(several_hosts(url));
        assert!(!several_hosts("postgres://u:p,w@127.0.0.1:5432/discs"));
        // Nothing answers on either port, and yet no private cluster is started.
        let dir = std::env::temp_dir().join(format!("discs-several-{}", std::process::id()));
        match ensure_server(url, &dir) {
            Ok(Server::Running { url: found }) => assert_eq!(found, url),
            other => panic!("{other:?}"),
        }
        assert!(!dir.exists());
    }

    #[test]
    fn urls_give_their_host_and_port() {
        let hp = |u: &str| host_port(u).ok();
        assert_eq!(
            hp("postgres://postgres@127.0.0.1:5432/discs"),
            Some(("127.0.0.1".into(), 5432))
        );
        assert_eq!(
            hp("postgresql://u:p@localhost/db?sslmode=disable"),
            Some(("localhost".into(), 5432))
        );
        assert_eq!(
            hp("postgres://db.example.com:6000"),
            Some(("db.example.com".into(), 6000))
        );
        assert_eq!(hp("mysql://x"), None);
        assert_eq!(
            with_port(
                "postgres://postgres@127.0.0.1:5432/discs",
                "127.0.0.1",
                5432,
                PRIVATE_PORT
            ),
            "postgres://postgres@127.0.0.1:54329/discs"
        );
        assert_eq!(
            with_port(
                "postgres://postgres@localhost/discs",
                "localhost",
                5432,
                PRIVATE_PORT
            ),
            "postgres://postgres@127.0.0.1:54329/discs"
        );
        assert_eq!(
            with_password("postgres://postgres@127.0.0.1:54329/discs?x=1", "pw"),
            "postgres://postgres:pw@127.0.0.1:54329/discs?x=1"
        );
        assert_eq!(
            with_password("postgres://u:old@127.0.0.1:1/db", "pw"),
            "postgres://u:pw@127.0.0.1:1/db"
        );
        assert_eq!(
            with_password("postgres://127.0.0.1:1", "pw"),
            "postgres://postgres:pw@127.0.0.1:1"
        );
    }
}
