//! Analysis beyond one request: the cap on concurrent searches (`searches`), the shared cache
//! of solved positions (`solved`), background jobs (`queue`, this instance's side of them,
//! and `jobs`, their rows and runner), the fair-play refusal (`fair`) and the move quality of
//! finished ranked matches (`quality`).

pub mod fair;
pub mod jobs;
pub mod quality;
pub mod queue;
pub mod searches;
pub mod solved;
