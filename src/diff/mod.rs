//! The change engine (to be written).
