//! Lumped-fluid hydraulic circuits (filled by the hydraulics issue).
