//! Elle (to come).
