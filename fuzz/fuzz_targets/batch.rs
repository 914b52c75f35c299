//! Fuzz target `batch`: see `strata_fuzz_checks::check_batch` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz_checks::check_batch(data));
