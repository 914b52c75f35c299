//! The parts of `experiment dcompaction` that are more than a group of runs on one
//! stream: VSMT (reads of copies of one load) and devices (other streams and models).

use super::spec::{Config, Spec, Stream, OPS_PER_SCALE};
use super::{measure, Driver};
use crate::error::Result;

/// §4.2.4: one load of the D1 stream with the option on, then a read phase on a copy
/// of it for each VSMT (reads alone ask for merges, so the load is the same for every
/// VSMT); the reference is a load with the option off, read the same way. Every row
/// reads a reopened copy: recovery flushes the load's last memtable into an L0 file
/// that gets then probe, so an in-process read phase (D4's) is not comparable.
pub fn vsmt(d: &mut Driver<'_>, d1: &Stream, vsmts: &[usize]) -> Result<()> {
    let args = d.args;
    let load_dir = args.engine.db.join("vsmt-load");
    let run_dir = args.engine.db.join("run");
    let mut rows = Vec::new();
    for delayed in [false, true] {
        let load_spec = Spec {
            stream: d1.clone(),
            config: Config::strata(delayed, false),
        };
        eprintln!(
            "vsmt: loading {} ({})...",
            d1.dataset,
            load_spec.config.label()
        );
        let loaded = measure::load(args, &load_spec, &load_dir)?;
        let configs: Vec<Config> = if delayed {
            vsmts
                .iter()
                .map(|&v| load_spec.config.clone().with_vsmt(v))
                .collect()
        } else {
            vec![load_spec.config.clone()]
        };
        for config in configs {
            let spec = Spec {
                stream: d1.clone(),
                config,
            };
            let mut row = measure::read_copy(args, &spec, &loaded, &load_dir, &run_dir)?;
            row.part = "vsmt".into();
            rows.push(vec![row]);
        }
    }
    let _ = std::fs::remove_dir_all(&load_dir);
    d.emit("vsmt", d1, rows).map(drop)
}

/// §4.3: Strata only on the `hdd` model (D1–D4), and the compaction-bound D1 on
/// `sata-ssd`, at `--device_scale`.
pub fn devices(d: &mut Driver<'_>) -> Result<()> {
    let args = d.args;
    let ops = (OPS_PER_SCALE * args.device_scale).round() as u64;
    let configs = |device| {
        [
            Config::strata(false, false).on_device(device),
            Config::strata(true, false).on_device(device),
        ]
    };
    for (name, w) in [("D1", 1.0), ("D2", 0.8), ("D3", 0.2)] {
        let s = Stream::new(name, ops, w, args.value_size, args.read_phase);
        d.group("devices", &s, &configs("hdd"))?;
    }
    let s = Stream::new("D1", ops, 1.0, args.value_size, args.read_phase);
    d.group("devices", &s, &configs("sata-ssd")).map(drop)
}
