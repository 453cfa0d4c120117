//! Planar multibody mechanisms (filled by the multibody issue).
