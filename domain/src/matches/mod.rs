//! The match aggregate: commands, events, `decide` and `evolve`.
