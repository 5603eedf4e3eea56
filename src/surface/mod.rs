//! The surface model, canonical JSON and digests (to be written).
