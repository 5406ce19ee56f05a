//! l3fwd exact-match mode.
