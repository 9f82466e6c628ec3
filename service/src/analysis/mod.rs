//! Analysis beyond one request: the cap on concurrent searches (`searches`), the shared cache
//! of solved positions (`solved`), and background jobs (`queue`, this instance's side of them,
//! and `jobs`, their rows and runner).

pub mod jobs;
pub mod queue;
pub mod searches;
pub mod solved;
