//! The two ways to run the dataplane, C's `--mode`: [`poll`] (each lcore
//! polls its RX queues) and [`event`] (an event device schedules packets to
//! the lcores), and the [`runner`] both start, run and stop their lcores with.

pub mod event;
pub mod poll;
pub mod runner;
