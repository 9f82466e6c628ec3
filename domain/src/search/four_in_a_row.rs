//! Four in a Row solver: exact scores by negamax with alpha-beta on bitboards (to be written).
