//! Unit tests of the strategy kernel.
