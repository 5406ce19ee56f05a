//! What forwards: the one parse and rewrite of a frame ([`packet`]), what a
//! lookup mode answers per packet ([`lookup`]) and the modes' tables
//! ([`mode`]), the per-lcore loop ([`forward`]) and its counters, and the
//! ports, pools and queues it runs on ([`setup`], [`pool_watch`]).

pub mod counters;
pub mod forward;
pub mod lookup;
pub mod mode;
pub mod packet;
pub mod pool_watch;
pub mod setup;
pub mod sockets;
