//! What forwards: the one parse and rewrite of a frame ([`packet`]), what a
//! lookup mode answers per packet ([`lookup`]) and the modes' tables
//! ([`mode`]), the per-lcore loop ([`forward`]) and its counters, and the
//! ports, pools and queues it runs on ([`setup`], [`pool_watch`]), and
//! what it records for `l3fwd-ctl trace` ([`trace`]).

pub mod counters;
pub mod forward;
pub mod lookup;
pub mod mode;
pub mod packet;
pub mod pool_watch;
pub mod setup;
pub mod sockets;
pub mod trace;
