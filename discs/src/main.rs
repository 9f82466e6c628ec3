//! The `discs` binary: a shim over [`discs::cli`], with the server's allocator.

/// mimalloc: glibc's malloc and free were about 30 % of the server's CPU per move.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    discs::cli::main()
}
