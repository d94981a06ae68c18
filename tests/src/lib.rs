//! Helpers for diskscope's integration tests: the built CLI binary, temporary targets, loop
//! devices (when root), capability probes that skip loudly.
