//! `strata plot`: a grouped bar chart (benchmarks × engines) of one metric from a
//! results file, drawn as SVG with `plotters`.
//!
//! SVG only: the SVG backend writes text as `<text>` elements and needs no font files,
//! whereas PNG output would need a font rasterizer and font files on the machine
//! (convert the SVG instead, e.g. `rsvg-convert plot.svg > plot.png`). Repeated runs of
//! the same benchmark and engine are reduced to their median.

use crate::compare::median;
use crate::error::{CliError, Result};
use crate::results::{metric, read_records, text};
use clap::Args;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;
use std::path::PathBuf;

/// `strata plot`.
#[derive(Args, Clone, Debug)]
pub struct PlotArgs {
    /// JSON-lines results file.
    #[arg(long = "input", default_value = "results/bench.jsonl")]
    pub input: PathBuf,
    /// Output file (.svg).
    #[arg(long = "output", default_value = "plot.svg")]
    pub output: PathBuf,
    /// Numeric field to plot (`ops_per_sec`, `p99`, `write_amplification`, or a path
    /// such as `ops/read/p99_us`).
    #[arg(long = "metric", default_value = "ops_per_sec")]
    pub metric: String,
    /// Chart title (default: the metric and input file).
    #[arg(long = "title")]
    pub title: Option<String>,
    /// Width in pixels.
    #[arg(long = "width", default_value_t = 1200)]
    pub width: u32,
    /// Height in pixels.
    #[arg(long = "height", default_value_t = 600)]
    pub height: u32,
}

/// The chart's data: benchmark names, engine names, and `values[bench][engine]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Benchmarks in order of first appearance.
    pub benchmarks: Vec<String>,
    /// Engines in order of first appearance.
    pub engines: Vec<String>,
    /// Median of the metric per benchmark and engine (`None` if never measured).
    pub values: Vec<Vec<Option<f64>>>,
}

/// Collects the median of `metric_name` per benchmark and engine.
pub fn series(records: &[Value], metric_name: &str) -> Series {
    let mut benchmarks: Vec<String> = Vec::new();
    let mut engines: Vec<String> = Vec::new();
    for r in records {
        if metric(r, metric_name).is_none() {
            continue;
        }
        let (Some(b), e) = (text(r, "name"), text(r, "engine").unwrap_or("unknown")) else {
            continue;
        };
        if !benchmarks.iter().any(|x| x == b) {
            benchmarks.push(b.to_string());
        }
        if !engines.iter().any(|x| x == e) {
            engines.push(e.to_string());
        }
    }
    let values = benchmarks
        .iter()
        .map(|b| {
            engines
                .iter()
                .map(|e| {
                    let mut v: Vec<f64> = records
                        .iter()
                        .filter(|r| {
                            text(r, "name") == Some(b.as_str())
                                && text(r, "engine").unwrap_or("unknown") == e.as_str()
                        })
                        .filter_map(|r| metric(r, metric_name))
                        .collect();
                    median(&mut v)
                })
                .collect()
        })
        .collect();
    Series {
        benchmarks,
        engines,
        values,
    }
}

fn plot_err(e: impl std::fmt::Display) -> CliError {
    CliError::Plot(e.to_string())
}

/// Draws `s` as a grouped bar chart into an SVG file.
///
/// # Errors
/// [`CliError::Plot`] if drawing or writing fails.
pub fn draw(s: &Series, args: &PlotArgs) -> Result<()> {
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{} ({})", args.metric, args.input.display()));
    let ymax = s
        .values
        .iter()
        .flatten()
        .flatten()
        .fold(0.0f64, |a, &b| a.max(b));
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
    let n = s.benchmarks.len().max(1) as f64;
    let groups = s.engines.len().max(1) as f64;
    let root = SVGBackend::new(&args.output, (args.width, args.height)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..n, 0f64..ymax)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .disable_x_axis()
        .light_line_style(WHITE)
        .y_label_formatter(&|v| format_value(*v))
        .y_desc(args.metric.as_str())
        .draw()
        .map_err(plot_err)?;
    let width = 0.8 / groups;
    for (ei, engine) in s.engines.iter().enumerate() {
        let color = Palette99::pick(ei).to_rgba();
        let bars = s.values.iter().enumerate().filter_map(|(bi, row)| {
            let v = row.get(ei).copied().flatten()?;
            let x0 = bi as f64 + 0.1 + ei as f64 * width;
            Some(Rectangle::new([(x0, 0.0), (x0 + width, v)], color.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(plot_err)?
            .label(engine.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
        let above = ("sans-serif", 11)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        let labels = s.values.iter().enumerate().filter_map(|(bi, row)| {
            let v = row.get(ei).copied().flatten()?;
            let x = bi as f64 + 0.1 + (ei as f64 + 0.5) * width;
            Some(Text::new(format_value(v), (x, v), above.clone()))
        });
        chart.draw_series(labels).map_err(plot_err)?;
    }
    // Benchmark names under each group, in pixel coordinates of the root area.
    for (bi, b) in s.benchmarks.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(bi as f64 + 0.5, 0.0));
        let style = ("sans-serif", 14).into_font().color(&BLACK).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ),
        );
        root.draw(&Text::new(b.as_str(), (px, py + 8), style))
            .map_err(plot_err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(plot_err)?;
    root.present().map_err(plot_err)?;
    Ok(())
}

/// Short human form of a value: `1234567` → `1.23M`.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Runs `strata plot`.
///
/// # Errors
/// Unreadable input, no plottable records, a non-SVG output, or a drawing failure.
pub fn run(args: &PlotArgs) -> Result<()> {
    let is_svg = args
        .output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !is_svg {
        return Err(CliError::Usage(format!(
            "invalid value for '--output': `{}`: only .svg is supported \
             (convert it, e.g. rsvg-convert plot.svg > plot.png)",
            args.output.display()
        )));
    }
    let records = read_records(&args.input)?;
    let s = series(&records, &args.metric);
    if s.benchmarks.is_empty() {
        return Err(CliError::BadInput(format!(
            "no record in `{}` has a numeric `{}`",
            args.input.display(),
            args.metric
        )));
    }
    if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| CliError::io("create_dir_all", dir, e))?;
    }
    draw(&s, args)?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::parse_records;
    use std::path::Path;

    const LINES: &str = r#"
{"name":"fillrandom","engine":"strata","ops_per_sec":100.0}
{"name":"fillrandom","engine":"rocksdb","ops_per_sec":80.0}
{"name":"fillrandom","engine":"strata","ops_per_sec":300.0}
{"name":"readrandom","engine":"rocksdb","ops_per_sec":1000.0}
{"name":"stats","engine":"rocksdb"}
"#;

    #[test]
    fn series_takes_medians_and_skips_missing() {
        let recs = parse_records(LINES.as_bytes(), Path::new("x")).expect("parse");
        let s = series(&recs, "ops_per_sec");
        assert_eq!(s.benchmarks, vec!["fillrandom", "readrandom"]);
        assert_eq!(s.engines, vec!["strata", "rocksdb"]);
        assert_eq!(s.values[0], vec![Some(200.0), Some(80.0)]);
        assert_eq!(s.values[1], vec![None, Some(1000.0)]);
    }

    #[test]
    fn draws_an_svg_without_fonts() {
        let recs = parse_records(LINES.as_bytes(), Path::new("x")).expect("parse");
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("p.svg");
        let args = PlotArgs {
            input: PathBuf::from("x"),
            output: out.clone(),
            metric: "ops_per_sec".into(),
            title: None,
            width: 800,
            height: 400,
        };
        draw(&series(&recs, "ops_per_sec"), &args).expect("draw");
        let svg = std::fs::read_to_string(&out).expect("read");
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        assert!(svg.contains("fillrandom") && svg.contains("readrandom"));
        assert!(svg.contains("strata") && svg.contains("rocksdb"));
        assert!(svg.contains("<rect"));
    }

    #[test]
    fn png_is_refused() {
        let args = PlotArgs {
            input: PathBuf::from("x"),
            output: PathBuf::from("p.png"),
            metric: "ops_per_sec".into(),
            title: None,
            width: 800,
            height: 400,
        };
        assert!(matches!(run(&args), Err(CliError::Usage(m)) if m.contains("--output")));
        assert_eq!(format_value(1_234_567.0), "1.23M");
        assert_eq!(format_value(12_345.0), "12.3k");
        assert_eq!(format_value(1.23456), "1.23");
    }
}
