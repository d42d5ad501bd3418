//! The figures, as Markdown tables with ratios, and the targets.

use std::fmt::Write;
use std::time::Duration;

use crate::workload::{Input, Op, Resource};

/// Percentiles of one series of timed calls (nearest rank).
pub struct Stats {
    pub p50: Duration,
    pub p99: Duration,
}

impl Stats {
    pub fn new(mut samples: Vec<Duration>) -> Stats {
        samples.sort();
        let at = |p: f64| samples[((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
        Stats { p50: at(0.50), p99: at(0.99) }
    }
}

/// The three phases of the lifecycle.
pub struct Lifecycle {
    pub create: Duration,
    pub update: Duration,
    pub delete: Duration,
}

impl Lifecycle {
    pub fn total(&self) -> Duration {
        self.create + self.update + self.delete
    }
}

pub struct Report {
    quick: bool,
    startup: Vec<(&'static str, Vec<Duration>)>,
    /// Spawn to the end of the engine's boot sequence (Configure answered).
    ready: Vec<(&'static str, Vec<Duration>)>,
    latency: Vec<(Input, Op, Vec<Stats>)>,
    /// GetPluginInfo: the gRPC round trip with no provider code in it.
    round_trip: Option<Vec<Stats>>,
    throughput: Vec<(Op, usize, Rates)>,
    lifecycle: Vec<(usize, Vec<Lifecycle>)>,
    rss: Vec<(Resource, [u64; 3])>,
    engine_logs: u64,
    inproc: Vec<(Input, Op, [Stats; 2])>,
    fixed: Option<crate::inproc::Fixed>,
    /// Each runtime's RPC handlers called in-process: (WASM, native, Python).
    handlers: Vec<(Input, Op, [Stats; 3])>,
    /// The value encoding alone, through the `bench/abi` guest.
    abi: Vec<crate::abi::Row>,
}

/// One throughput figure: each runtime's median over the rounds, and the
/// ratios as the median of each round's own ratio (runtimes measured moments
/// apart, Python right after the other two), which a burst of noise during
/// one round cannot move; so a ratio need not equal the medians' quotient.
struct Rates {
    median: [f64; 3],
    wasm_native: f64,
    wasm_python: f64,
}

const W: usize = 0;
const N: usize = 1;
const P: usize = 2;

/// The middle value by `order` (the upper one of an even count).
fn median<T: Copy>(mut v: Vec<T>, order: fn(&T, &T) -> std::cmp::Ordering) -> T {
    v.sort_by(order);
    v[v.len() / 2]
}

fn us(d: Duration) -> String {
    signed_us(d.as_secs_f64() * 1e6)
}

fn signed_us(us: f64) -> String {
    if us.abs() < 100.0 { format!("{us:.1}") } else { format!("{us:.0}") }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn ratio(a: f64, b: f64) -> String {
    let r = a / b;
    if r >= 10.0 { format!("{r:.0}") } else { format!("{r:.2}") }
}

fn dr(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// A Markdown table; columns after the first are right-aligned.
fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    let line = |cells: Vec<&str>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&line(head.to_vec()));
    let align: Vec<&str> = (0..head.len()).map(|i| if i == 0 { "---" } else { "---:" }).collect();
    out.push_str(&line(align));
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out.push('\n');
}

fn verdict(ok: bool) -> String {
    if ok { "met".into() } else { "**missed**".into() }
}

/// One of the targets as one run measured it.
pub struct Target {
    pub name: String,
    /// The figure the verdict reads, e.g. `1.07` or `0.93x`.
    pub figure: String,
    /// The figure with where and how many, for the run's own table.
    pub measured: String,
    pub met: bool,
}

impl Target {
    fn new(name: impl Into<String>, figure: String, measured: String, met: bool) -> Target {
        Target { name: name.into(), figure, measured, met }
    }

    /// One whose figure says it all.
    fn plain(name: impl Into<String>, figure: String, met: bool) -> Target {
        Target::new(name, figure.clone(), figure, met)
    }
}

/// The targets over several runs (`bench --runs N`): each run's figure,
/// and in how many runs each target was met. One run is one draw on a
/// noisy machine; this shows the spread.
pub fn over_runs(reports: &[Report]) -> String {
    let runs: Vec<Vec<Target>> = reports.iter().map(Report::targets).collect();
    let mut head = vec!["target".to_owned()];
    head.extend((1..=runs.len()).map(|i| format!("run {i}")));
    head.push("met in".into());
    let names = runs.first().map(|r| r.iter().map(|t| t.name.clone()).collect::<Vec<_>>()).unwrap_or_default();
    let rows: Vec<Vec<String>> = names
        .into_iter()
        .map(|name| {
            let each: Vec<Option<&Target>> = runs.iter().map(|r| r.iter().find(|t| t.name == name)).collect();
            let met = each.iter().filter(|t| t.is_some_and(|t| t.met)).count();
            let mut row = vec![name];
            row.extend(each.iter().map(|t| match t {
                Some(t) if t.met => t.figure.clone(),
                Some(t) => format!("{} (missed)", t.figure),
                None => "-".into(),
            }));
            row.push(format!("{met} of {}", runs.len()));
            row
        })
        .collect();
    let mut o = format!("## Targets over {} runs\n\n", runs.len());
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table(&mut o, &head, &rows);
    o
}

impl Report {
    pub fn new(quick: bool) -> Report {
        Report {
            quick,
            startup: vec![],
            ready: vec![],
            round_trip: None,
            latency: vec![],
            throughput: vec![],
            lifecycle: vec![],
            rss: vec![],
            engine_logs: 0,
            inproc: vec![],
            handlers: vec![],
            abi: vec![],
            fixed: None,
        }
    }

    pub fn startup(&mut self, label: &'static str, port_line: Duration, ready: Duration) {
        for (all, d) in [(&mut self.startup, port_line), (&mut self.ready, ready)] {
            match all.iter_mut().find(|(l, _)| *l == label) {
                Some((_, v)) => v.push(d),
                None => all.push((label, vec![d])),
            }
        }
    }

    pub fn round_trip(&mut self, stats: Vec<Stats>) {
        self.round_trip = Some(stats);
    }

    pub fn latency(&mut self, input: Input, op: Op, stats: Vec<Stats>) {
        self.latency.push((input, op, stats));
    }

    /// `rounds`: calls/s of each runtime (`Runtime::ALL`'s order), round by round.
    pub fn throughput(&mut self, op: Op, concurrency: usize, rounds: &[[f64; 3]]) {
        let over_rounds = |of: &dyn Fn(&[f64; 3]) -> f64| median(rounds.iter().map(of).collect(), f64::total_cmp);
        let rates = Rates {
            median: [W, N, P].map(|i| over_rounds(&|r| r[i])),
            wasm_native: over_rounds(&|r| r[W] / r[N]),
            wasm_python: over_rounds(&|r| r[W] / r[P]),
        };
        self.throughput.push((op, concurrency, rates));
    }

    pub fn lifecycle(&mut self, n: usize, runs: Vec<Lifecycle>) {
        self.lifecycle.push((n, runs));
    }

    pub fn rss(&mut self, r: Resource, rss: [u64; 3]) {
        self.rss.push((r, rss));
    }

    pub fn inproc(&mut self, (fixed, rows): (crate::inproc::Fixed, Vec<(Input, Op, [Stats; 2])>)) {
        self.inproc = rows;
        self.fixed = Some(fixed);
    }

    pub fn handlers(&mut self, rows: Vec<(Input, Op, [Stats; 3])>) {
        self.handlers = rows;
    }

    pub fn abi(&mut self, rows: Vec<crate::abi::Row>) {
        self.abi = rows;
    }

    pub fn engine_logs(&mut self, n: u64) {
        self.engine_logs = n;
    }

    fn start(&self, label: &str) -> Duration {
        self.startup
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, v)| median(v.clone(), Duration::cmp))
            .unwrap_or_default()
    }

    fn ready(&self, label: &str) -> Duration {
        self.ready.iter().find(|(l, _)| *l == label).map(|(_, v)| median(v.clone(), Duration::cmp)).unwrap_or_default()
    }

    pub fn markdown(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "{}\n", environment());
        if self.quick {
            o.push_str("**Quick run** (a tenth of the iterations): a smoke test, not figures to keep.\n\n");
        }

        if !self.inproc.is_empty() {
            o.push_str("### The backend call alone: in-process, no gRPC (µs)\n\n");
            let fixed = self.fixed.iter().map(|f| ("GetMapping, none (the fixed cost of a call)".to_owned(), &f.0));
            let calls = self.inproc.iter().map(|(input, op, s)| (format!("{} {}", op.label(), input.label()), s));
            let rows: Vec<Vec<String>> = fixed
                .chain(calls)
                .map(|(name, s)| {
                    vec![
                        name,
                        us(s[0].p50),
                        us(s[0].p99),
                        us(s[1].p50),
                        us(s[1].p99),
                        ratio(dr(s[0].p50, s[1].p50), 1.0),
                        // Negative when WASM is the faster (Create's log, see BENCHMARKS.md).
                        signed_us((s[0].p50.as_secs_f64() - s[1].p50.as_secs_f64()) * 1e6),
                    ]
                })
                .collect();
            table(
                &mut o,
                &[
                    "call, input",
                    "WASM p50",
                    "WASM p99",
                    "native p50",
                    "native p99",
                    "WASM/native p50",
                    "WASM - native p50",
                ],
                &rows,
            );
        }
        if !self.handlers.is_empty() {
            o.push_str("### The whole call without the transport: each runtime's RPC handlers, in-process (µs)\n\n");
            let calls =
                self.handlers.iter().map(|(input, op, s)| (format!("{} {}", op.label(), input.label()), &s[..]));
            three_way(&mut o, calls);
        }
        if !self.abi.is_empty() {
            o.push_str("### The value encoding alone: a map through a guest and back, in-process (µs, p50)\n\n");
            let mut rows = Vec::new();
            for r in &self.abi {
                for (name, st) in [(r.candidate.baseline_label(), &r.baseline), (r.candidate.label(), &r.other)] {
                    let total: Duration = st.iter().map(|s| s.p50).sum();
                    let base: Duration = r.baseline.iter().map(|s| s.p50).sum();
                    rows.push(vec![
                        r.input.label().to_owned(),
                        name.to_owned(),
                        us(st[0].p50),
                        us(st[1].p50),
                        us(st[2].p50),
                        us(total),
                        ratio(dr(total, base), 1.0),
                    ]);
                }
            }
            table(
                &mut o,
                &["input", "encoding", "from protobuf", "the call", "back to protobuf", "sum", "sum / the first's"],
                &rows,
            );
        }
        if self.startup.is_empty() {
            return o;
        }

        let runs = self.startup.first().map_or(0, |(_, v)| v.len());
        let _ = writeln!(o, "### Start (median of {runs} starts, ms)\n");
        let labels = ["WASM, empty cache", "WASM, warm cache", "native", "Python"];
        let row = |what: &str, at: &dyn Fn(&str) -> Duration| {
            let [cold, warm, native, python] = labels.map(at);
            vec![
                what.into(),
                ms(cold),
                ms(warm),
                ms(native),
                ms(python),
                ratio(dr(warm, native), 1.0),
                ratio(dr(python, warm), 1.0),
            ]
        };
        table(
            &mut o,
            &["", "WASM, empty cache", "WASM, warm cache", "native", "Python", "WASM warm/native", "Python/WASM warm"],
            &[
                row("spawn to port line", &|l| self.start(l)),
                row("spawn to ready (booted: Configure answered)", &|l| self.ready(l)),
            ],
        );

        let growth = self.growth();
        // A `--starts` run has the start-up table alone.
        if !self.latency.is_empty() {
            self.over_grpc(&mut o, growth.as_ref());
        }

        o.push_str("### Targets\n\n");
        let rows: Vec<Vec<String>> =
            self.targets().into_iter().map(|t| vec![t.name, t.measured, verdict(t.met)]).collect();
        table(&mut o, &["target", "measured", ""], &rows);
        o
    }

    /// The tables measured over gRPC, against the running providers.
    /// `growth`: [`Report::growth`].
    fn over_grpc(&self, o: &mut String, growth: Option<&(usize, usize, [f64; 3])>) {
        o.push_str("### Latency per call over gRPC (µs)\n\n");
        let floor = self.round_trip.iter().map(|s| ("GetPluginInfo (the round trip alone)".to_owned(), &s[..]));
        let calls = self.latency.iter().map(|(input, op, s)| (format!("{} {}", op.label(), input.label()), &s[..]));
        three_way(o, floor.chain(calls));

        o.push_str("### Throughput, small map, calls/s\n\n");
        let rows: Vec<Vec<String>> = self
            .throughput
            .iter()
            .map(|(op, c, r)| {
                vec![
                    format!("{}, {c} concurrent", op.label()),
                    format!("{:.0}", r.median[W]),
                    format!("{:.0}", r.median[N]),
                    format!("{:.0}", r.median[P]),
                    ratio(r.wasm_native, 1.0),
                    ratio(r.wasm_python, 1.0),
                ]
            })
            .collect();
        table(o, &["", "WASM", "native", "Python", "WASM/native", "WASM/Python"], &rows);

        o.push_str("### Peak RSS of each provider process (MiB)\n\n");
        let rows: Vec<Vec<String>> = self
            .rss
            .iter()
            .map(|(r, m)| {
                let mib = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
                let what = match r {
                    Resource::RandomString => "RandomString process (small map, throughput, lifecycle)",
                    Resource::Thing => "Thing process (100 properties, 1 MB asset)",
                };
                vec![what.into(), mib(m[W]), mib(m[N]), mib(m[P]), ratio(m[W] as f64, m[N] as f64)]
            })
            .collect();
        table(o, &["", "WASM", "native", "Python", "WASM/native"], &rows);

        o.push_str("### Lifecycle: create -> update -> delete of N RandomStrings, 16 at a time (s)\n\n");
        let rows: Vec<Vec<String>> = self
            .lifecycle
            .iter()
            .map(|(n, l)| {
                let s = |d: Duration| format!("{:.2}", d.as_secs_f64());
                let per = |d: Duration| us(d / (*n as u32));
                vec![
                    format!("{n}"),
                    s(l[W].total()),
                    s(l[N].total()),
                    s(l[P].total()),
                    per(l[W].total()),
                    per(l[N].total()),
                    per(l[P].total()),
                    ratio(dr(l[W].total(), l[N].total()), 1.0),
                    ratio(dr(l[P].total(), l[W].total()), 1.0),
                ]
            })
            .collect();
        table(
            o,
            &[
                "resources",
                "WASM",
                "native",
                "Python",
                "WASM µs/resource",
                "native µs/resource",
                "Python µs/resource",
                "WASM/native",
                "Python/WASM",
            ],
            &rows,
        );
        if let Some(g) = growth {
            let _ = writeln!(
                o,
                "Growth from {} to {} resources (time ratio; {:.0} is linear): WASM {:.2}, native {:.2}, Python {:.2}.\n",
                g.0,
                g.1,
                g.1 as f64 / g.0 as f64,
                g.2[W],
                g.2[N],
                g.2[P]
            );
        }
        let _ = writeln!(o, "Engine.Log messages received from the providers: {}.\n", self.engine_logs);
    }

    /// (from, to, time ratio per runtime) between the first and last lifecycle sizes.
    fn growth(&self) -> Option<(usize, usize, [f64; 3])> {
        let (a, la) = self.lifecycle.first()?;
        let (b, lb) = self.lifecycle.last()?;
        (a != b).then(|| (*a, *b, [W, N, P].map(|i| dr(lb[i].total(), la[i].total()))))
    }

    /// Each of the targets, as this run measured it.
    pub fn targets(&self) -> Vec<Target> {
        let (warm, native, python) = (self.start("WASM, warm cache"), self.start("native"), self.start("Python"));
        let (warm_ready, native_ready, python_ready) =
            (self.ready("WASM, warm cache"), self.ready("native"), self.ready("Python"));
        let growth = self.growth();
        let mut rows = Vec::new();
        let name = |input: &Input, op: &Op| format!("{} {}", op.label(), input.label());
        let worst = |f: &dyn Fn(&[Stats]) -> f64, max: bool| {
            let mut v: Vec<(f64, String)> = self.latency.iter().map(|(i, o, s)| (f(s), name(i, o))).collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            if max { v.last().cloned() } else { v.first().cloned() }
        };
        let count = |f: &dyn Fn(&[Stats]) -> bool| self.latency.iter().filter(|(_, _, s)| f(s)).count();
        let total = self.latency.len();
        if let Some((r, at)) = worst(&|s| dr(s[W].p50, s[N].p50), true) {
            let within = count(&|s| dr(s[W].p50, s[N].p50) <= 1.10);
            rows.push(Target::new(
                "per-call p50 WASM/native <= 1.10",
                format!("{r:.2}"),
                format!("worst {r:.2} ({at}); {within} of {total} calls within"),
                within == total,
            ));
        }
        if let Some((r, at)) = worst(&|s| dr(s[W].p99, s[N].p99), true) {
            let within = count(&|s| dr(s[W].p99, s[N].p99) <= 1.25);
            rows.push(Target::new(
                "per-call p99 WASM/native <= 1.25",
                format!("{r:.2}"),
                format!("worst {r:.2} ({at}); {within} of {total} calls within"),
                within == total,
            ));
        }
        let most = self.throughput.iter().map(|(_, c, _)| *c).max().unwrap_or(0);
        for (op, c, r) in self.throughput.iter().filter(|(_, c, _)| *c == most) {
            let x = r.wasm_native;
            let name = format!("throughput at {c} concurrent >= 0.9x native ({})", op.label());
            rows.push(Target::plain(name, format!("{x:.2}x"), x >= 0.9));
        }
        // Both readings of "start": to the port line, and to ready (booted).
        let x = dr(warm, native);
        rows.push(Target::plain("warm-cache start <= 1.5x native (port line)", format!("{x:.2}x"), x <= 1.5));
        let x = dr(warm_ready, native_ready);
        rows.push(Target::plain("warm-cache start <= 1.5x native (ready)", format!("{x:.2}x"), x <= 1.5));
        let x = dr(python, warm);
        rows.push(Target::plain("start >= 10x faster than Python (port line)", format!("{x:.1}x"), x >= 10.0));
        let x = dr(python_ready, warm_ready);
        rows.push(Target::plain("start >= 10x faster than Python (ready)", format!("{x:.1}x"), x >= 10.0));
        if let Some((r, at)) = worst(&|s| dr(s[P].p50, s[W].p50), false) {
            let within = count(&|s| dr(s[P].p50, s[W].p50) >= 20.0);
            rows.push(Target::new(
                "per-call latency >= 20x lower than Python (p50)",
                format!("{r:.1}x"),
                format!("least {r:.1}x ({at}); {within} of {total} calls at 20x or more"),
                within == total,
            ));
        }
        // The same target for the handlers alone: what is left once the
        // transport (the round trip that caps the figure above) is taken out.
        let mut least: Vec<(f64, String)> =
            self.handlers.iter().map(|(i, o, s)| (dr(s[P].p50, s[W].p50), name(i, o))).collect();
        least.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((r, at)) = least.first() {
            let within = least.iter().filter(|(r, _)| *r >= 20.0).count();
            rows.push(Target::new(
                "per-call latency >= 20x lower than Python (p50, the handlers without the transport)",
                format!("{r:.1}x"),
                format!("least {r:.1}x ({at}); {within} of {} calls at 20x or more", least.len()),
                within == least.len(),
            ));
        }
        if let Some((a, b, g)) = growth {
            let linear = b as f64 / a as f64;
            let worst = g[W] / linear;
            rows.push(Target::new(
                format!("lifecycle grows linearly ({a} -> {b})"),
                format!("x{:.2}", g[W]),
                format!("WASM time x{:.2} for x{linear:.0} resources (per-resource time x{worst:.2})", g[W]),
                worst <= 1.25,
            ));
        }
        rows
    }
}

/// Latency per call of the three runtimes (WASM, native, Python), with the
/// ratios the targets read.
fn three_way<'a>(o: &mut String, calls: impl Iterator<Item = (String, &'a [Stats])>) {
    let rows: Vec<Vec<String>> = calls
        .map(|(label, s)| {
            vec![
                label,
                us(s[W].p50),
                us(s[W].p99),
                us(s[N].p50),
                us(s[N].p99),
                us(s[P].p50),
                us(s[P].p99),
                ratio(dr(s[W].p50, s[N].p50), 1.0),
                ratio(dr(s[W].p99, s[N].p99), 1.0),
                ratio(dr(s[P].p50, s[W].p50), 1.0),
            ]
        })
        .collect();
    let head = [
        "call, input",
        "WASM p50",
        "WASM p99",
        "native p50",
        "native p99",
        "Python p50",
        "Python p99",
        "WASM/native p50",
        "WASM/native p99",
        "Python/WASM p50",
    ];
    table(o, &head, &rows);
}

/// The machine, for the record.
fn environment() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let rustc = std::process::Command::new("rustc")
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("Machine: {cpu}, {cores} cores, Linux {}, {rustc}.", kernel.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(r: &mut Report) {
        for (label, ms) in [("WASM, empty cache", 300), ("WASM, warm cache", 4), ("native", 3), ("Python", 200)] {
            r.startup(label, Duration::from_millis(ms), Duration::from_millis(ms + 2));
        }
    }

    #[test]
    fn a_starts_only_report_has_the_start_table_and_its_targets_alone() {
        let mut r = Report::new(false);
        starts(&mut r);
        let md = r.markdown();
        assert!(md.contains("### Start (median of 1 starts, ms)"), "{md}");
        assert!(md.contains("| warm-cache start <= 1.5x native (port line) | 1.33x | met |"), "{md}");
        for absent in ["### Latency", "### Throughput", "### Peak RSS", "### Lifecycle", "Engine.Log", "per-call p50"] {
            assert!(!md.contains(absent), "{absent} in {md}");
        }
    }

    #[test]
    fn targets_over_runs_show_each_figure_and_how_often_it_was_met() {
        let run = |check: f64| {
            let mut r = Report::new(false);
            starts(&mut r);
            r.throughput(Op::Check, 64, &[[check, 1000.0, 100.0]]);
            r
        };
        let md = over_runs(&[run(950.0), run(800.0), run(900.0)]);
        assert!(md.starts_with("## Targets over 3 runs\n\n| target | run 1 | run 2 | run 3 | met in |\n"), "{md}");
        let row = "| throughput at 64 concurrent >= 0.9x native (Check) | 0.95x | 0.80x (missed) | 0.90x | 2 of 3 |";
        assert!(md.contains(row), "{md}");
        assert!(
            md.contains("| warm-cache start <= 1.5x native (port line) | 1.33x | 1.33x | 1.33x | 3 of 3 |"),
            "{md}"
        );
    }

    #[test]
    fn a_full_report_has_the_tables_measured_over_grpc() {
        let mut r = Report::new(false);
        starts(&mut r);
        let s = |us: u64| Stats::new(vec![Duration::from_micros(us)]);
        r.round_trip(vec![s(100), s(100), s(300)]);
        r.latency(Input::SmallMap, Op::Check, vec![s(200), s(180), s(600)]);
        r.throughput(Op::Check, 64, &[[900.0, 1000.0, 100.0]]);
        let md = r.markdown();
        for present in
            ["### Latency per call over gRPC", "### Throughput", "### Peak RSS", "### Lifecycle", "Engine.Log"]
        {
            assert!(md.contains(present), "{present} missing from {md}");
        }
        assert!(md.contains("| Check, 64 concurrent | 900 | 1000 | 100 | 0.90 | 9.00 |"), "{md}");
        assert!(
            md.contains(
                "| per-call p50 WASM/native <= 1.10 | worst 1.11 (Check small map); 0 of 1 calls within | **missed** |"
            ),
            "{md}"
        );
    }
}
