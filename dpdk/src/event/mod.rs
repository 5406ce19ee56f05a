//! Event devices (`rte_eventdev`), the eth RX and TX adapters that connect
//! them to ports, and the service cores that run software ones: what C
//! l3fwd's `--mode=eventdev` is built on. See [`device`] for the rules the
//! types carry.

pub(crate) mod adapter;
pub(crate) mod device;
pub(crate) mod service;
pub(crate) mod vector;
