//! The live path: a command on a match from its cached state to its commit (`play`, `commit`,
//! `cache`, `loaded`), the answers stored with it (`answers`), and the instance's one reader of
//! the log feeding the projections and every open stream (`fanout`).

pub mod answers;
pub mod cache;
pub mod commit;
pub mod fanout;
pub mod loaded;
pub mod play;
