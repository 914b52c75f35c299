//! Fuzz target `backup_meta`: see `strata_fuzz_checks::check_backup_meta` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz_checks::check_backup_meta(data));
