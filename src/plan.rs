//! Port/queue/lcore plan (filled in by the CLI work).
