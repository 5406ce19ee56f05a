//! LPM rule files.
