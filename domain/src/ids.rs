//! Typed ids and seats: parsed at the edge, opaque inside.
