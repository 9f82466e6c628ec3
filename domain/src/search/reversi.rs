//! Reversi engine and exact endgame solver (to be written).
