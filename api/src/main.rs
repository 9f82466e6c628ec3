//! The `discs` binary: a shim over [`api::cli`].

fn main() -> std::process::ExitCode {
    api::cli::main()
}
