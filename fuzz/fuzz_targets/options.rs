//! Fuzz target `options`: see `strata_fuzz_checks::check_options` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz_checks::check_options(data));
