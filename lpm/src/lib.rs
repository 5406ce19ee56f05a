//! l3fwd's LPM route tables.

pub mod rules;
