//! Analysis beyond one request: the cap on concurrent searches (`searches`), the shared cache
//! of solved positions (`solved`), background jobs (`queue`, this instance's side of them,
//! and `jobs`, their rows and runner), and the fair-play refusal (`fair`).

pub mod fair;
pub mod jobs;
pub mod queue;
pub mod searches;
pub mod solved;
