//! Fuzz target `catalog`: see `strata_fuzz_checks::check_catalog` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz_checks::check_catalog(data));
