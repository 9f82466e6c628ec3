//! Analysis beyond one request: the cap on concurrent searches (`searches`), the shared cache
//! of solved positions (`solved`), background jobs (`queue`, this instance's side of them,
//! and `jobs`, their rows and runner), the fair-play boundary every answer about a position
//! goes through (`boundary`), the move quality of finished ranked matches (`quality`) and the
//! engine-assistance evidence read from it (`fair`).

pub mod asked;
pub mod boundary;
pub mod fair;
pub mod jobs;
pub mod quality;
pub mod queue;
pub mod searches;
pub mod solved;
