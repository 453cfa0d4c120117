//! Co-simulation master: filled by the master issue.
