//! Rebuilds the crate when a migration is added or changed: `embed_migrations!` reads the folder
//! at compile time, and cargo would not otherwise notice a new file in it.

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
