//! `strata table`: tables by hand (issue 31; docs/ARCHITECTURE.md §19).
//!
//! ```text
//! strata table --db=DIR create --name=T --schema=id:u64,a1:i32,...[--layout=row;row;15,15]
//!                               [--strict_layout]
//!                     | load --name=T [--file=F]      (CSV: key,v1,...,vc per line)
//!                     | get --name=T --key=K --columns=a16..a30 | a1,a5
//!                     | update --name=T --key=K --set=a28=7[,a3=1]
//!                     | delete --name=T --key=K
//!                     | scan --name=T [--from=K] [--to=K] --columns=... [--reverse]
//!                     | compact --name=T
//!                     | show --name=T
//! strata table advise --workload=FILE | --columns=N --levels=L --size_ratio=T
//!                     [--rows=R] [--inserts=I] [--block_bytes=B] [--dump_workload] [--json]
//! ```
//! The first schema item is the key (`u64` or `bytes`); columns are `i32`, `i64`,
//! `f64`, `bytes` or `fixedN`, nullable with a `?` (`--schema=@FILE` reads it from a
//! file). A layout gives each level `row` or group widths over the columns in schema
//! order; the last level given extends downward. A layout breaking containment is
//! refined (`Layout::refine`: each group cut along the groups above it) and the
//! effective layout printed, or refused with `--strict_layout`. Values on the command
//! line and in CSV are typed by their column: numbers in decimal, bytes as text,
//! `NULL` for null. `get` prints the values asked for, in that order, separated by
//! `, `, or `(no row)`; `scan` prints one such line per row, the key first.
//! `show` prints the schema, the layout and, per level, each run's group, files and
//! bytes. `advise` runs the design advisor (`table/advise.rs`) and needs no database.
//! Planned (issue 31): `query`, `set-layout`, and `advise --name` (a table's profile
//! lives in the process that made it, `Table::workload`, so this command cannot read
//! it yet).

mod advise;

use crate::error::{CliError, Result};
use clap::{Args, Subcommand};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use strata::table::{Layout, Schema, Table, Value};
use strata::{Db, Options, ReadOptions, WriteOptions};

/// `strata table`.
#[derive(Args, Clone, Debug)]
pub struct TableArgs {
    /// The database directory (every command but `advise`).
    #[arg(long = "db")]
    pub db: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: TableCommand,
}

/// The `table` commands.
#[derive(Subcommand, Clone, Debug)]
pub enum TableCommand {
    /// Create a table (and the database, if there is none).
    Create {
        /// The table.
        #[arg(long)]
        name: String,
        /// `key:type,column:type[?],...`, or `@FILE`.
        #[arg(long)]
        schema: String,
        /// Per level `row` or group widths, `;` between levels.
        #[arg(long, default_value = "row")]
        layout: String,
        /// Refuse a layout that breaks containment instead of refining it.
        #[arg(long = "strict_layout", default_value_t = false)]
        strict_layout: bool,
    },
    /// Insert rows from CSV (`key,v1,...,vc` per line) on stdin or `--file`.
    Load {
        /// The table.
        #[arg(long)]
        name: String,
        /// Read this file instead of stdin.
        #[arg(long)]
        file: Option<PathBuf>,
        /// The input format (only `csv`).
        #[arg(long, default_value = "csv")]
        format: String,
    },
    /// Print the columns asked for of one row.
    Get {
        /// The table.
        #[arg(long)]
        name: String,
        /// The row's key.
        #[arg(long)]
        key: String,
        /// `a..b` (schema order) or `a,b,...`; default every column.
        #[arg(long)]
        columns: Option<String>,
    },
    /// Set some columns of one row (a row that does not exist stays absent).
    Update {
        /// The table.
        #[arg(long)]
        name: String,
        /// The row's key.
        #[arg(long)]
        key: String,
        /// `column=value,...`.
        #[arg(long)]
        set: String,
    },
    /// Delete one row.
    Delete {
        /// The table.
        #[arg(long)]
        name: String,
        /// The row's key.
        #[arg(long)]
        key: String,
    },
    /// Print rows in key order.
    Scan {
        /// The table.
        #[arg(long)]
        name: String,
        /// The first key (inclusive).
        #[arg(long)]
        from: Option<String>,
        /// The last key (inclusive).
        #[arg(long)]
        to: Option<String>,
        /// `a..b` or `a,b,...`; default every column.
        #[arg(long)]
        columns: Option<String>,
        /// Largest key first.
        #[arg(long, default_value_t = false)]
        reverse: bool,
    },
    /// Compact the whole table and wait.
    Compact {
        /// The table.
        #[arg(long)]
        name: String,
    },
    /// Print the schema, the layout and the runs of each level.
    Show {
        /// The table.
        #[arg(long)]
        name: String,
    },
    /// The design advisor's layout and predicted costs for a workload.
    Advise {
        /// A workload description (JSON, `table/advise.rs`).
        #[arg(long)]
        workload: Option<PathBuf>,
        /// The synthetic workload HW (the paper's Table 3) over this many columns.
        #[arg(long)]
        columns: Option<usize>,
        /// With `--columns`: the deepest level.
        #[arg(long, default_value_t = 7)]
        levels: usize,
        /// With `--columns`: the size ratio T.
        #[arg(long = "size_ratio", default_value_t = 2.0)]
        size_ratio: f64,
        /// With `--columns`: rows in the table (the paper's 400 M).
        #[arg(long, default_value_t = 400e6)]
        rows: f64,
        /// With `--columns`: inserts during the run (the paper's 20 M).
        #[arg(long, default_value_t = 20e6)]
        inserts: f64,
        /// With `--columns`: bytes of a data block.
        #[arg(long = "block_bytes", default_value_t = 4096.0)]
        block_bytes: f64,
        /// Print the workload (JSON) instead of advising.
        #[arg(long = "dump_workload", default_value_t = false)]
        dump_workload: bool,
        /// One JSON line instead of a table.
        #[arg(long, default_value_t = false)]
        json: bool,
    },
}

/// Runs `strata table`.
///
/// # Errors
/// Bad arguments or input (`Usage`, `BadInput`), the engine's errors.
pub fn run(args: &TableArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if let TableCommand::Advise {
        workload,
        columns,
        levels,
        size_ratio,
        rows,
        inserts,
        block_bytes,
        dump_workload,
        json,
    } = &args.command
    {
        let source = match (workload, columns) {
            (Some(path), None) => advise::Source::File(path),
            (None, Some(columns)) => advise::Source::Hw(advise::Hw {
                columns: *columns,
                levels: *levels,
                size_ratio: *size_ratio,
                rows: *rows,
                inserts: *inserts,
                block_bytes: *block_bytes,
            }),
            _ => {
                return Err(CliError::Usage(
                    "advise: give --workload=FILE or --columns=N (advice from a table's \
                     counters is planned)"
                        .into(),
                ))
            }
        };
        for line in advise::advise(source, *dump_workload, *json)? {
            writeln!(out, "{line}").map_err(|e| CliError::Stdio("stdout", e))?;
        }
        return Ok(());
    }
    let path = args
        .db
        .as_ref()
        .ok_or_else(|| CliError::Usage("--db=DIR is required".into()))?;
    let create = matches!(args.command, TableCommand::Create { .. });
    let db = Db::open(path, Options::default().with_create_if_missing(create))?;
    let wo = WriteOptions::default();
    let ro = ReadOptions::default();
    let print = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}").map_err(|e| CliError::Stdio("stdout", e))
    };
    match &args.command {
        TableCommand::Create {
            name,
            schema,
            layout,
            strict_layout,
        } => {
            let text = match schema.strip_prefix('@') {
                Some(path) => std::fs::read_to_string(path)
                    .map_err(|e| CliError::io("read schema", path, e))?,
                None => schema.clone(),
            };
            let schema = Schema::parse(text.trim())?;
            let columns = schema.columns().len();
            let layout = match Layout::parse(layout, columns) {
                Ok(l) => l,
                Err(e) if *strict_layout => return Err(e.into()),
                Err(_) => {
                    let refined = Layout::parse_refined(layout, columns)?;
                    print(&mut out, format!("layout refined to {}", refined.to_text()))?;
                    refined
                }
            };
            Table::create(&db, name, schema, layout)?;
        }
        TableCommand::Load { name, file, format } => {
            if format != "csv" {
                return Err(CliError::Usage(format!(
                    "--format={format}: only csv is read"
                )));
            }
            let t = Table::open(&db, name)?;
            let input: Box<dyn BufRead> = match file {
                Some(path) => Box::new(std::io::BufReader::new(
                    std::fs::File::open(path).map_err(|e| CliError::io("open", path, e))?,
                )),
                None => Box::new(std::io::stdin().lock()),
            };
            let mut rows = 0u64;
            for (n, line) in input.lines().enumerate() {
                let line = line.map_err(|e| CliError::Stdio("stdin", e))?;
                if line.trim().is_empty() {
                    continue;
                }
                let bad = |e: strata::Error| CliError::BadInput(format!("line {}: {e}", n + 1));
                let mut fields = line.split(',');
                let key = t
                    .schema()
                    .parse_key(fields.next().unwrap_or_default())
                    .map_err(bad)?;
                let row: Vec<Value> = fields
                    .enumerate()
                    .map(|(c, f)| t.schema().parse_value(c, f))
                    .collect::<strata::Result<_>>()
                    .map_err(bad)?;
                t.insert(&wo, &key, &row).map_err(bad)?;
                rows += 1;
            }
            print(&mut out, format!("loaded {rows} rows"))?;
        }
        TableCommand::Get { name, key, columns } => {
            let t = Table::open(&db, name)?;
            let projection = projection(&t, columns.as_deref())?;
            let key = t.schema().parse_key(key)?;
            let line = match t.get(&ro, &key, &projection)? {
                Some(values) => join(&values),
                None => "(no row)".to_owned(),
            };
            print(&mut out, line)?;
        }
        TableCommand::Update { name, key, set } => {
            let t = Table::open(&db, name)?;
            let key = t.schema().parse_key(key)?;
            let mut cells = Vec::new();
            for item in set.split(',') {
                let (column, value) = item.split_once('=').ok_or_else(|| {
                    CliError::Usage(format!("--set item `{item}`: not column=value"))
                })?;
                let c = t.schema().column(column.trim())?;
                cells.push((c, t.schema().parse_value(c, value)?));
            }
            t.update(&wo, &key, &cells)?;
        }
        TableCommand::Delete { name, key } => {
            let t = Table::open(&db, name)?;
            let key = t.schema().parse_key(key)?;
            t.delete(&wo, &key)?;
        }
        TableCommand::Scan {
            name,
            from,
            to,
            columns,
            reverse,
        } => {
            let t = Table::open(&db, name)?;
            let projection = projection(&t, columns.as_deref())?;
            let parse =
                |k: &Option<String>| k.as_deref().map(|k| t.schema().parse_key(k)).transpose();
            let (from, to) = (parse(from)?, parse(to)?);
            for row in t.scan(&ro, (from.as_ref(), to.as_ref()), &projection, *reverse)? {
                let (key, values) = row?;
                print(&mut out, join(&[vec![key], values].concat()))?;
            }
        }
        TableCommand::Compact { name } => {
            let t = Table::open(&db, name)?;
            t.compact()?;
        }
        TableCommand::Show { name } => {
            let t = Table::open(&db, name)?;
            for line in t.describe() {
                print(&mut out, line)?;
            }
        }
        TableCommand::Advise { .. } => {}
    }
    drop(out);
    db.close()?;
    Ok(())
}

/// The column numbers `spec` names (`a..b` in schema order, or `a,b,...`); every
/// column without one.
fn projection(t: &Table<'_>, spec: Option<&str>) -> Result<Vec<usize>> {
    Ok(match spec {
        None => (0..t.schema().columns().len()).collect(),
        Some(spec) => t.schema().projection(spec)?,
    })
}

/// Values as the commands print them: `, ` between them.
fn join(values: &[Value]) -> String {
    values
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
