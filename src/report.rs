//! `agora report`: one self-contained HTML file with the analysis tables and figures (SVG,
//! drawn with plotters and inlined). Model replies are untrusted text: everything taken from
//! the store is escaped.

use std::fmt::Write as _;
use std::path::Path;

use agora_analysis::analyze::{Analysis, Table};
use anyhow::Context as _;
use plotters::prelude::*;

/// Colour-blind-safe palette (Okabe & Ito 2008).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A figure drawn twice from the same code: SVG for the report, PNG for papers and slides.
pub struct Figure {
    pub svg: String,
    pub png: Vec<u8>,
}

type Fig = anyhow::Result<Figure>;

/// The font the PNG figures are drawn with (DejaVu Sans; licence in `assets/fonts/`). SVG
/// figures name the `sans-serif` family and leave the font to the browser.
static FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

fn register_font() -> anyhow::Result<()> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *ONCE.get_or_init(|| {
        ["sans-serif", "serif", "monospace"]
            .iter()
            .all(|family| plotters::style::register_font(family, FontStyle::Normal, FONT).is_ok())
    });
    anyhow::ensure!(ok, "the bundled font could not be read");
    Ok(())
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgb)?;
    }
    Ok(out)
}

/// Draws the body once on an SVG backend and once on a bitmap backend (the body is expanded
/// for each, so it is generic over the backend without naming it).
macro_rules! figure {
    ($w:expr, $h:expr, |$root:ident| $body:block) => {{
        let (w, h): (u32, u32) = ($w, $h);
        // Both backends measure text with the registered font when laying out a chart.
        register_font()?;
        let mut svg = String::new();
        {
            let $root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
            $root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
            let drawn: Result<(), Box<dyn std::error::Error>> = (|| $body)();
            drawn.map_err(|e| anyhow::anyhow!("{e}"))?;
            $root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let mut rgb = vec![255u8; (w * h * 3) as usize];
        {
            let $root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            $root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
            let drawn: Result<(), Box<dyn std::error::Error>> = (|| $body)();
            drawn.map_err(|e| anyhow::anyhow!("{e}"))?;
            $root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok(Figure { svg, png: encode_png(&rgb, w, h)? })
    }};
}

/// A shaded reference band on a line chart: a range of y (an anchor) or of x (a bracket).
enum Band<'a> {
    Rows(f64, f64, &'a str),
    Columns(f64, f64, &'a str),
}

/// A human anchor as a band (low, high) from the shipped anchor table: a range as given, a
/// point with its equivalence margin.
fn anchor_band(id: &str) -> anyhow::Result<(f64, f64)> {
    use agora_analysis::anchors::{AnchorTable, AnchorValue};
    let a = AnchorTable::shipped().get(id).with_context(|| format!("anchor {id} is not in the anchor table"))?;
    match (&a.value, a.margin) {
        (AnchorValue::Range { low, high }, _) => Ok((*low, *high)),
        (AnchorValue::Point(x), Some(m)) => Ok((x - m, x + m)),
        _ => anyhow::bail!("anchor {id} is neither a range nor a point with a margin"),
    }
}

/// The label of the row at `y` on a chart with one labelled row per integer (none between).
fn row_label(labels: &[String], y: f64) -> String {
    if (y - y.round()).abs() < 1e-6 && y >= 0.0 {
        labels.get(y.round() as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

type Coord = plotters::coord::types::RangedCoordf64;

/// A chart with one labelled row per item (y = 0, 1, …) against a continuous x axis: the
/// layout shared by the forest plot, time to convention and the punishment effect.
fn row_chart<'a, DB>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    caption: Option<&str>,
    x: std::ops::Range<f64>,
    x_desc: &str,
    labels: &[String],
    label_width: u32,
) -> Result<ChartContext<'a, DB, Cartesian2d<Coord, Coord>>, Box<dyn std::error::Error>>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
{
    let n = labels.len().max(1);
    let mut builder = ChartBuilder::on(area);
    builder.margin(12).x_label_area_size(40).y_label_area_size(label_width);
    if let Some(caption) = caption {
        builder.caption(caption, ("sans-serif", 18));
    }
    let mut chart = builder.build_cartesian_2d(x, -0.5f64..n as f64 - 0.5)?;
    chart.configure_mesh().x_desc(x_desc).y_labels(n).y_label_formatter(&|y| row_label(labels, *y)).draw()?;
    Ok(chart)
}

/// Equivalence forest plot: estimate and 90 % interval against the anchor and its margin band.
fn forest(a: &Analysis) -> Fig {
    let rows: Vec<_> = a.equivalence.iter().filter(|r| r.estimate.is_some()).collect();
    let n = rows.len().max(1);
    figure!(760, 80 + 28 * n as u32, |root| {
        let labels: Vec<String> = rows.iter().map(|r| format!("{} · {}", r.model, r.metric)).collect();
        let mut chart = row_chart(
            &root,
            Some("Equivalence with human anchors (90 % CI; band = margin)"),
            0.0..1.0,
            "share (of endowment, pie or amount available)",
            &labels,
            250,
        )?;
        for (i, r) in rows.iter().enumerate() {
            let y = i as f64;
            let band = Rectangle::new(
                [(r.anchor - r.margin, y - 0.4), (r.anchor + r.margin, y + 0.4)],
                PALETTE[4].mix(0.25).filled(),
            );
            chart.draw_series(std::iter::once(band))?;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(r.anchor, y - 0.45), (r.anchor, y + 0.45)],
                BLACK,
            )))?;
            if let (Some(lo), Some(hi)) = (r.ci_low, r.ci_high) {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(lo, y), (hi, y)],
                    PALETTE[0].stroke_width(2),
                )))?;
            }
            let colour = if r.verdict == "equivalent" { PALETTE[2] } else { PALETTE[5] };
            chart.draw_series(std::iter::once(Circle::new((r.estimate.unwrap_or(0.0), y), 5, colour.filled())))?;
        }
        Ok(())
    })
}

/// The punishment effect on final-round contributions: per model, the baseline arm and the
/// punishment arm (mean, 95 % t interval) joined by a line, against the human range with
/// punishment, with the arm contrast's Cliff's δ and Holm-adjusted p in the row label.
fn punishment_effect(a: &Analysis) -> Fig {
    let rows = &a.punishment_effect;
    let n = rows.len().max(1);
    let labels: Vec<String> = rows
        .iter()
        .map(|r| {
            let delta = r.cliffs_delta.map(|d| format!("δ {d:+.2}")).unwrap_or_else(|| "δ -".into());
            let test = match (r.p_holm, &r.excluded) {
                (Some(p), _) => format!("p Holm {p:.3}{}", if r.significant { " *" } else { "" }),
                (None, Some(why)) => format!("no test: {why}"),
                (None, None) => "no test".into(),
            };
            format!("{} ({}/{} runs; {delta}, {test})", r.model, r.runs_without, r.runs_with)
        })
        .collect();
    let (without_c, with_c, band_c) = (PALETTE[0], PALETTE[5], PALETTE[4]);
    let (human_low, human_high) = anchor_band("pgg-punishment")?;
    let human = format!("human, with punishment: {human_low:.2}–{human_high:.2} (Fehr & Gächter 2000; one experiment)");
    figure!(1000, 150 + 34 * n as u32, |root| {
        let area =
            root.titled("Punishment effect on final-round contributions (95 % t intervals)", ("sans-serif", 18))?;
        // The legend has a row of its own above the chart, so it never covers a model's row.
        let (legend, plot) = area.split_vertically(34);
        let font = ("sans-serif", 14).into_font().color(&BLACK);
        let mut x = 20;
        for (label, c) in [("without punishment", without_c), ("with punishment", with_c)] {
            legend.draw(&Circle::new((x + 8, 16), 6, c.filled()))?;
            legend.draw(&Text::new(label, (x + 20, 9), font.clone()))?;
            x += 170;
        }
        legend.draw(&Rectangle::new([(x, 10), (x + 18, 22)], band_c.mix(0.35).filled()))?;
        legend.draw(&Text::new(human.as_str(), (x + 24, 9), font.clone()))?;
        let mut chart =
            row_chart(&plot, None, 0.0..1.0, "final-round contribution (share of endowment)", &labels, 420)?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(human_low, -0.5), (human_high, n as f64 - 0.5)],
            band_c.mix(0.25).filled(),
        )))?;
        for (i, r) in rows.iter().enumerate() {
            let y = i as f64;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(r.without.mean, y + 0.15), (r.with.mean, y - 0.15)],
                BLACK.mix(0.6).stroke_width(2),
            )))?;
            for (m, dy, c) in [(&r.without, 0.15, without_c), (&r.with, -0.15, with_c)] {
                if let (Some(lo), Some(hi)) = (m.low, m.high) {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(lo.max(0.0), y + dy), (hi.min(1.0), y + dy)],
                        c.stroke_width(2),
                    )))?;
                }
                chart.draw_series(std::iter::once(Circle::new((m.mean, y + dy), 6, c.filled())))?;
            }
        }
        Ok(())
    })
}

/// A line chart of several named series.
fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    y_max: f64,
    band: Option<Band>,
    thresholds: &[Option<f64>],
) -> Fig {
    let xs = || series.iter().flat_map(|s| s.1.iter().map(|p| p.0));
    let x_min = xs().fold(f64::INFINITY, f64::min);
    let x_min = if x_min.is_finite() { x_min } else { 0.0 };
    let x_max = xs().fold(x_min, f64::max);
    let x_max = if x_max > x_min { x_max } else { x_min + 1.0 };
    // Put the legend where the data leave room: the top right if the right part of the chart
    // stays low, else the bottom right if it stays high, else the middle right.
    let right: Vec<f64> =
        series.iter().flat_map(|s| s.1.iter()).filter(|p| p.0 >= x_min + 0.5 * (x_max - x_min)).map(|p| p.1).collect();
    let legend_at = if right.iter().all(|y| *y < 0.75 * y_max) {
        SeriesLabelPosition::UpperRight
    } else if right.iter().all(|y| *y > 0.4 * y_max) {
        SeriesLabelPosition::LowerRight
    } else {
        SeriesLabelPosition::MiddleRight
    };
    figure!(760, 420, |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(x_min..x_max, 0f64..y_max)?;
        chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?;
        if let Some(band) = &band {
            let (corners, label) = match band {
                Band::Rows(lo, hi, label) => ([(x_min, *lo), (x_max, *hi)], label),
                Band::Columns(lo, hi, label) => ([(*lo, 0.0), (*hi, y_max)], label),
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(corners, PALETTE[4].mix(0.25).filled())))?
                .label(label.to_string())
                .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], PALETTE[4].mix(0.35).filled()));
        }
        for (i, (name, pts)) in series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))?;
            // A series' threshold: a vertical line from the axis to the one-half line.
            if let Some(Some(x)) = thresholds.get(i) {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(*x, 0.0), (*x, y_max * 0.5)],
                    c.stroke_width(3),
                )))?;
            }
        }
        if thresholds.iter().any(Option::is_some) {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x_min, y_max * 0.5), (x_max, y_max * 0.5)],
                    BLACK.mix(0.5).stroke_width(1),
                )))?
                .label("one half; thick tick: threshold")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.mix(0.5)));
        }
        chart
            .configure_series_labels()
            .position(legend_at.clone())
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    })
}

/// Time to convention: per roster, block and variant, the quartiles of the interactions runs
/// took to form a convention (box: first to third quartile; tick: median), with how many of
/// the runs formed one.
fn convergence_times(a: &Analysis) -> Fig {
    let rows: Vec<&agora_analysis::analyze::ConvergenceRow> =
        a.convergence.iter().filter(|r| r.time_median.is_some()).collect();
    let n = rows.len().max(1);
    let x_max = rows.iter().filter_map(|r| r.time_q3).fold(1.0f64, f64::max) * 1.1;
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{} · {} · {} ({}/{} formed)", r.model, r.block, r.variant, r.formed, r.runs))
        .collect();
    figure!(900, 90 + 26 * n as u32, |root| {
        let mut chart = row_chart(
            &root,
            Some("Time to convention (box: quartiles; tick: median)"),
            0.0..x_max,
            "interactions until the convention rule held",
            &labels,
            360,
        )?;
        for (i, r) in rows.iter().enumerate() {
            let y = i as f64;
            let c = PALETTE[i % 7];
            let (q1, q3) = (r.time_q1.unwrap_or(0.0), r.time_q3.unwrap_or(0.0));
            chart.draw_series(std::iter::once(Rectangle::new([(q1, y - 0.3), (q3, y + 0.3)], c.mix(0.5).filled())))?;
            if let Some(m) = r.time_median {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(m, y - 0.4), (m, y + 0.4)],
                    BLACK.stroke_width(2),
                )))?;
            }
        }
        Ok(())
    })
}

/// The audit grid: model × cell, coloured by Cliff's δ, significant cells (after Holm) starred.
fn audit_grid(a: &Analysis) -> Fig {
    let rows: Vec<String> = a
        .contrasts
        .iter()
        .map(|c| format!("{} · {}", c.model, c.metric))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut cols: Vec<(String, String)> = a
        .contrasts
        .iter()
        .map(|c| (c.level.clone(), c.cell.clone()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    cols.sort_by(|x, y| (x.0 != "representation", &x.0, &x.1).cmp(&(y.0 != "representation", &y.0, &y.1)));
    let (nr, nc) = (rows.len().max(1), cols.len().max(1));
    figure!(160 + 90 * nc as u32 + 260, 120 + 30 * nr as u32, |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Audit grid: Cliff's δ of each cell against its baseline (* significant after Holm)",
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(260)
            .build_cartesian_2d(-0.5f64..nc as f64 - 0.5, -0.5f64..nr as f64 - 0.5)?;
        let cl = cols.clone();
        let rl = rows.clone();
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(nc)
            .y_labels(nr)
            .x_label_formatter(&move |x| {
                if (x - x.round()).abs() < 1e-6 && *x >= 0.0 {
                    cl.get(x.round() as usize).map(|(l, c)| format!("{c} ({})", &l[..1])).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&move |y| {
                if (y - y.round()).abs() < 1e-6 && *y >= 0.0 {
                    rl.get(y.round() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("cell (r = representation level, d = design level, c = contamination)")
            .draw()?;
        for c in &a.contrasts {
            let (Some(r), Some(k)) = (
                rows.iter().position(|x| *x == format!("{} · {}", c.model, c.metric)),
                cols.iter().position(|x| x.1 == c.cell && x.0 == c.level),
            ) else {
                continue;
            };
            let d = c.cliffs_delta.unwrap_or(0.0).clamp(-1.0, 1.0);
            // Diverging blue (negative) to orange (positive), grey when excluded.
            let fill = if c.excluded.is_some() {
                RGBColor(200, 200, 200).filled()
            } else if d < 0.0 {
                PALETTE[0].mix(0.15 + 0.85 * d.abs()).filled()
            } else {
                PALETTE[1].mix(0.15 + 0.85 * d).filled()
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(k as f64 - 0.45, r as f64 - 0.45), (k as f64 + 0.45, r as f64 + 0.45)],
                fill,
            )))?;
            let label = format!("{:+.2}{}", d, if c.significant { "*" } else { "" });
            chart.draw_series(std::iter::once(Text::new(
                label,
                (k as f64 - 0.2, r as f64 + 0.1),
                ("sans-serif", 13),
            )))?;
        }
        Ok(())
    })
}

/// Bars of the 11–20 distributions against the published one.
fn money_request(a: &Analysis, observed: &[(String, Vec<f64>)], human: &[f64]) -> Fig {
    let _ = a;
    let k = observed.len() + 1;
    figure!(760, 420, |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption("11–20 game: choice distribution against the published one", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(10.5f64..20.5f64, 0f64..0.6f64)?;
        chart.configure_mesh().x_desc("request (11..20)").y_desc("share of choices").draw()?;
        let w = 0.8 / k as f64;
        let mut all: Vec<(String, Vec<f64>)> = vec![("humans (Arad & Rubinstein 2012)".into(), human.to_vec())];
        all.extend(observed.iter().cloned());
        for (i, (name, shares)) in all.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(shares.iter().enumerate().map(|(j, s)| {
                    let x = 11.0 + j as f64 - 0.4 + i as f64 * w;
                    Rectangle::new([(x, 0.0), (x + w, *s)], c.filled())
                }))?
                .label(name.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], c.filled()));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
        Ok(())
    })
}

/// One tipping run read as a social process: what each agent proposed at each interaction
/// (rows: agents, committed ones first; colour: established or alternative name).
fn social_process(run: &TippingRun) -> Fig {
    let n = run.agents;
    let t_max = run.meetings.last().map(|m| m.0).unwrap_or(1) as f64;
    figure!(900, 140 + 16 * n as u32, |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "One tipping run: {} committed of {} agents; proposals by interaction (orange: alternative name)",
                    run.committed, n
                ),
                ("sans-serif", 15),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(110)
            .build_cartesian_2d(0f64..t_max + 1.0, 0f64..n as f64)?;
        let committed = run.committed;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("interaction")
            .y_labels(n.min(30))
            .y_label_formatter(&move |y| {
                let a = y.floor() as usize;
                if a < committed {
                    format!("agent {a} (committed)")
                } else {
                    format!("agent {a}")
                }
            })
            .draw()?;
        let proposals = run.meetings.iter().flat_map(|&(t, a, b, na, nb, m)| [(t, a, na, m), (t, b, nb, m)]);
        for (t, agent, name, matched) in proposals {
            let c = if name == run.alternative { PALETTE[1] } else { PALETTE[0] };
            let style = if matched { c.filled() } else { c.mix(0.45).filled() };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(t as f64 - 0.5, agent as f64 + 0.1), (t as f64 + 0.5, agent as f64 + 0.9)],
                style,
            )))?;
        }
        if let Some(t) = run.tipped_at {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(t as f64, 0.0), (t as f64, n as f64)],
                BLACK.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("alternative carried at interaction {t}"),
                (t as f64 + 2.0, n as f64 - 0.8),
                ("sans-serif", 13),
            )))?;
        }
        Ok(())
    })
}

/// A tipping run's meetings: (interaction, agent a, agent b, a's name, b's name, matched).
pub struct TippingRun {
    pub agents: usize,
    pub committed: usize,
    pub alternative: u32,
    pub meetings: Vec<(u32, usize, usize, u32, u32, bool)>,
    pub tipped_at: Option<u32>,
}

/// One time window of a tipping run as a network: who met whom (edge weight: meetings) and
/// which mismatches were followed by a switch (the agent's next proposal was the partner's
/// name), with each agent's last proposal by the window's end.
struct Window {
    from: u32,
    to: u32,
    graph: petgraph::graphmap::UnGraphMap<usize, (u32, u32)>,
    state: Vec<Option<u32>>,
    carried: bool,
}

const PANELS: usize = 6;

fn windows(run: &TippingRun) -> Vec<Window> {
    let t_max = run.meetings.last().map(|m| m.0).unwrap_or(0);
    if t_max == 0 {
        return Vec::new();
    }
    // For every meeting, whether each side's next proposal adopted the partner's name.
    let mut next: Vec<Option<u32>> = vec![None; run.agents];
    let mut switched = vec![(false, false); run.meetings.len()];
    for (i, &(_, a, b, na, nb, matched)) in run.meetings.iter().enumerate().rev() {
        if !matched {
            switched[i] = (next[a] == Some(nb) && na != nb, next[b] == Some(na) && na != nb);
        }
        next[a] = Some(na);
        next[b] = Some(nb);
    }
    let width = t_max.div_ceil(PANELS as u32).max(1);
    let mut state: Vec<Option<u32>> = vec![None; run.agents];
    let mut out = Vec::new();
    let mut i = 0;
    for w in 0..PANELS as u32 {
        let (from, to) = (w * width + 1, ((w + 1) * width).min(t_max));
        if from > t_max {
            break;
        }
        let mut graph = petgraph::graphmap::UnGraphMap::new();
        while i < run.meetings.len() && run.meetings[i].0 <= to {
            let (_, a, b, na, nb, _) = run.meetings[i];
            let e = graph.edge_weight(a, b).copied().unwrap_or((0, 0));
            let s = u32::from(switched[i].0) + u32::from(switched[i].1);
            graph.add_edge(a, b, (e.0 + 1, e.1 + s));
            state[a] = Some(na);
            state[b] = Some(nb);
            i += 1;
        }
        let carried = run.tipped_at.is_some_and(|t| (from..=to).contains(&t));
        out.push(Window { from, to, graph, state: state.clone(), carried });
    }
    out
}

/// One tipping run as a social process: small multiples of the interaction network over time
/// windows (agents on a circle, committed agents ringed, colour = last name proposed,
/// vermillion edges = mismatches that led to a switch), the window where the convention is
/// carried marked.
fn social_network(run: &TippingRun) -> Fig {
    let panels = windows(run);
    let n = run.agents.max(1);
    let pos: Vec<(f64, f64)> = (0..n)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / n as f64 - std::f64::consts::FRAC_PI_2;
            (a.cos(), a.sin())
        })
        .collect();
    let alternative = run.alternative;
    let title = format!(
        "One tipping run as a network over time: {} committed of {} agents (ringed)",
        run.committed, run.agents
    );
    figure!(960, 760, |root| {
        let root = root.titled(&title, ("sans-serif", 18))?;
        let (grid, legend) = root.split_vertically(680);
        let cells = grid.split_evenly((2, 3));
        for (w, area) in panels.iter().zip(cells.iter()) {
            let alt = w.state.iter().filter(|s| **s == Some(alternative)).count();
            let switches: u32 = w.graph.all_edges().map(|e| e.2 .1).sum();
            let caption = format!(
                "t {}–{}: {} switches, {}/{} alternative{}",
                w.from,
                w.to,
                switches,
                alt,
                run.agents,
                if w.carried { " (carried)" } else { "" }
            );
            let mut chart = ChartBuilder::on(area)
                .caption(caption, ("sans-serif", 12))
                .margin(6)
                .build_cartesian_2d(-1.25f64..1.25f64, -1.25f64..1.25f64)?;
            if w.carried {
                chart.plotting_area().fill(&PALETTE[6].mix(0.15))?;
            }
            for (a, b, &(meetings, switched)) in w.graph.all_edges() {
                let style = if switched > 0 {
                    PALETTE[5].stroke_width(2)
                } else {
                    RGBColor(150, 150, 150).mix((0.25 + 0.15 * meetings as f64).min(0.9)).stroke_width(1)
                };
                chart.draw_series(std::iter::once(PathElement::new(vec![pos[a], pos[b]], style)))?;
            }
            for (k, p) in pos.iter().enumerate() {
                let c = match w.state[k] {
                    Some(name) if name == alternative => PALETTE[1],
                    Some(_) => PALETTE[0],
                    None => RGBColor(200, 200, 200),
                };
                chart.draw_series(std::iter::once(Circle::new(*p, 5, c.filled())))?;
                if k < run.committed {
                    chart.draw_series(std::iter::once(Circle::new(*p, 8, BLACK.stroke_width(2))))?;
                }
            }
        }
        let items: [(RGBAColor, &str); 5] = [
            (PALETTE[0].to_rgba(), "proposed the established name"),
            (PALETTE[1].to_rgba(), "proposed the alternative name"),
            (RGBColor(150, 150, 150).to_rgba(), "met (darker: more often)"),
            (PALETTE[5].to_rgba(), "mismatch, then a switch"),
            (PALETTE[6].mix(0.3), "alternative carried"),
        ];
        for (i, (c, label)) in items.iter().enumerate() {
            let x = 12 + 190 * i as i32;
            legend.draw(&Rectangle::new([(x, 30), (x + 14, 44)], c.filled()))?;
            legend.draw(&Text::new(label.to_string(), (x + 19, 31), ("sans-serif", 12)))?;
        }
        Ok(())
    })
}

fn html_table(t: &Table, id: &str) -> String {
    let mut s = format!("<table id=\"{}\"><thead><tr>", escape(id));
    for c in &t.columns {
        let _ = write!(s, "<th>{}</th>", escape(c));
    }
    s.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{}</td>", escape(c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

fn query_series(conn: &rusqlite::Connection, sql: &str) -> anyhow::Result<Vec<(String, Vec<(f64, f64)>)>> {
    let mut st = conn.prepare(sql)?;
    let rows: Vec<(String, f64, f64)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for (name, x, y) in rows {
        match out.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push((x, y)),
            None => out.push((name, vec![(x, y)])),
        }
    }
    Ok(out)
}

fn tipping_run(conn: &rusqlite::Connection) -> anyhow::Result<Option<TippingRun>> {
    // The run whose committed fraction is closest to the top of the human critical-mass
    // bracket (the smallest fraction that succeeded with people), of the memory-window agent
    // where there is one.
    let (_, smallest_success) = anchor_band("naming-critical-mass")?;
    let pick: Option<(i64, i64, i64, String)> = conn
        .query_row(
            "SELECT run_id, population, committed, spec_json FROM runs WHERE arm LIKE 'tipping%'
             ORDER BY roster <> 'memory-coordination', ABS(sweep_value - ?1), run_index LIMIT 1",
            [smallest_success],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .ok();
    let Some((run_id, population, committed, spec)) = pick else { return Ok(None) };
    let v: serde_json::Value = serde_json::from_str(&spec)?;
    let alternative = v["environment"]["NamingGame"]["tipping"]["alternative"].as_u64().unwrap_or(1) as u32;
    let window = v["environment"]["NamingGame"]["window"].as_u64().unwrap_or(50) as usize;
    let threshold = v["environment"]["NamingGame"]["threshold"].as_f64().unwrap_or(0.95);
    let mut st =
        conn.prepare("SELECT t, a, b, name_a, name_b, matched FROM interactions WHERE run_id = ?1 ORDER BY t")?;
    let rows: Vec<(u32, usize, usize, u32, u32, bool)> = st
        .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?
        .collect::<Result<_, _>>()?;
    let tipped_at = agora_analysis::convention::first_convention(
        rows.iter().map(|r| (r.0, r.5.then_some(r.3))),
        window,
        threshold,
        |n| n == alternative,
    )
    .map(|e| e.t);
    Ok(Some(TippingRun {
        agents: population as usize,
        committed: committed as usize,
        alternative,
        meetings: rows,
        tipped_at,
    }))
}

/// Writes `report.html` into `out` and returns its path.
pub fn write(store: &Path, out: &Path) -> anyhow::Result<std::path::PathBuf> {
    let analysis = agora_analysis::analyze::analyze(store, None)?;
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut figures: Vec<(&str, Figure)> = Vec::new();
    if !analysis.equivalence.is_empty() {
        figures.push(("Equivalence forest plot", forest(&analysis)?));
    }
    let pg = query_series(
        &conn,
        "SELECT r.roster || ' · ' || r.arm, d.round, AVG(d.value / d.scale) FROM decisions d JOIN runs r USING (run_id)
         WHERE d.role = 'contributor' AND r.variant = 'C0' AND r.cell = 'baseline' GROUP BY 1, 2 ORDER BY 1, 2",
    )?;
    if !pg.is_empty() {
        let (low, high) = anchor_band("pgg-round1")?;
        let band = format!("human round 1, {:.1} ± {:.2}", (low + high) / 2.0, (high - low) / 2.0);
        figures.push((
            "Public-goods trajectories, with and without punishment",
            lines(
                "Public goods: contribution by round (band: human first-round anchor ± margin)",
                "round",
                "contribution (share of endowment)",
                &pg,
                1.0,
                Some(Band::Rows(low, high, &band)),
                &[],
            )?,
        ));
    }
    if !analysis.punishment_effect.is_empty() {
        figures.push(("Punishment effect on final-round contributions", punishment_effect(&analysis)?));
    }
    if !analysis.contrasts.is_empty() {
        figures.push(("Audit grid", audit_grid(&analysis)?));
    }
    let acc: Vec<(String, Vec<(f64, f64)>)> =
        analysis.acceptance.iter().map(|r| (format!("{} · {}", r.model, r.variant), r.acceptance.clone())).collect();
    let acc_thresholds: Vec<Option<f64>> = analysis.acceptance.iter().map(|r| r.threshold).collect();
    if !acc.is_empty() {
        figures.push((
            "Acceptance functions (fixed-offer arm)",
            lines(
                "Acceptance by offer, canonical (C0) and divergent (C3) payoffs",
                "offer (points of 100)",
                "share accepted",
                &acc,
                1.0,
                None,
                &acc_thresholds,
            )?,
        ));
    }
    let conv = query_series(
        &conn,
        "SELECT r.roster, ((i.t - 1) / 50) * 50 + 25, AVG(i.matched) FROM interactions i JOIN runs r USING (run_id)
         WHERE r.arm IN ('baseline', 'shuffled-pool') AND r.variant = 'C0' AND r.cell = 'baseline' AND i.t <= 3000 GROUP BY 1, 2 ORDER BY 1, 2",
    )?;
    if !conv.is_empty() {
        figures.push((
            "Convention formation",
            lines(
                "Naming game: share of matching interactions over time (bins of 50)",
                "interaction",
                "share matching",
                &conv,
                1.0,
                None,
                &[],
            )?,
        ));
    }
    if analysis.convergence.iter().any(|r| r.time_median.is_some()) {
        figures.push(("Time to convention", convergence_times(&analysis)?));
    }
    let tip: Vec<(String, Vec<(f64, f64)>)> =
        analysis.tipping.iter().map(|c| (c.roster.clone(), c.points.iter().map(|p| (p.0, p.4)).collect())).collect();
    if !tip.is_empty() {
        let (low, high) = anchor_band("naming-critical-mass")?;
        let band = format!("human critical mass {low:.2}–{high:.2} (Centola et al. 2018)");
        figures.push((
            "Tipping curves",
            lines(
                "Share of runs in which the committed minority overturned the convention",
                "committed fraction",
                "share of runs overturned",
                &tip,
                1.0,
                Some(Band::Columns(low, high, &band)),
                &[],
            )?,
        ));
    }
    if let Some(run) = tipping_run(&conn)? {
        figures.push(("One tipping run as a social process", social_process(&run)?));
        figures.push(("The same tipping run as an interaction network over time", social_network(&run)?));
    }
    let mr: Vec<(String, Vec<f64>)> = {
        let mut st = conn.prepare(
            "SELECT r.roster, CAST(d.value - d.context AS INTEGER), COUNT(*) FROM decisions d JOIN runs r USING (run_id)
             WHERE d.role = 'requester' AND r.variant = 'C0' AND r.cell = 'baseline' GROUP BY 1, 2",
        )?;
        let rows: Vec<(String, i64, f64)> =
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? as f64)))?.collect::<Result<_, _>>()?;
        let mut m: Vec<(String, Vec<f64>)> = Vec::new();
        for (name, k, n) in rows {
            if !(0..10).contains(&k) {
                continue;
            }
            if !m.iter().any(|x| x.0 == name) {
                m.push((name.clone(), vec![0.0; 10]));
            }
            if let Some(x) = m.iter_mut().find(|x| x.0 == name) {
                x.1[k as usize] += n;
            }
        }
        for x in m.iter_mut() {
            let total: f64 = x.1.iter().sum();
            x.1.iter_mut().for_each(|v| *v /= total.max(1.0));
        }
        m
    };
    if let (false, Some(agora_analysis::anchors::AnchorValue::Distribution { shares, .. })) = (
        mr.is_empty(),
        agora_analysis::anchors::AnchorTable::shipped().get("money-request-distribution").map(|a| a.value.clone()),
    ) {
        figures.push(("11–20 distributions", money_request(&analysis, &mr, &shares)?));
    }

    let studies: Vec<(String, String, String, i64)> = {
        let mut st = conn.prepare("SELECT study, plan_hash, master_seed, runs FROM studies ORDER BY study")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<Result<_, _>>()?;
        rows
    };
    let excerpts: Vec<(String, String, String, String)> = {
        let mut st = conn.prepare(
            "SELECT t.model, t.role, t.parse_status, t.raw_reply FROM transcripts t ORDER BY t.run_id, t.seat, t.slot, t.attempt LIMIT 30",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<Result<_, _>>()?;
        rows
    };

    let mut h = String::new();
    h.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Agora report</title><style>");
    h.push_str("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #bbb;padding:3px 6px;text-align:left}th{background:#eee}figure{margin:1.5em 0}figcaption{font-weight:bold;margin-bottom:.4em}pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em}");
    h.push_str("</style></head><body><h1>Agora report</h1>");
    h.push_str("<h2>Studies and plans</h2><table id=\"studies\"><tr><th>study</th><th>plan hash</th><th>master seed</th><th>runs</th></tr>");
    for (s, hash, seed, runs) in &studies {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{runs}</td></tr>",
            escape(s),
            escape(hash),
            escape(seed)
        );
    }
    h.push_str("</table>");
    let _ = write!(h, "<p>{} runs analysed.</p><h2>Figures</h2>", analysis.runs);
    let fig_dir = out.join("figures");
    std::fs::create_dir_all(&fig_dir).with_context(|| format!("creating {}", fig_dir.display()))?;
    for (i, (caption, fig)) in figures.iter().enumerate() {
        let slug: String = caption
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
            .collect::<String>()
            .split('-')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let stem = format!("{:02}-{slug}", i + 1);
        for (ext, bytes) in [("svg", fig.svg.as_bytes()), ("png", fig.png.as_slice())] {
            let path = fig_dir.join(format!("{stem}.{ext}"));
            std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        }
        let _ = write!(
            h,
            "<figure id=\"figure-{i}\" class=\"figure\"><figcaption>{} <a href=\"figures/{stem}.png\">PNG</a> \
             <a href=\"figures/{stem}.svg\">SVG</a></figcaption>{}</figure>",
            escape(caption),
            fig.svg
        );
    }
    for t in analysis.tables() {
        let _ = write!(h, "<h2>{}</h2>", escape(t.title));
        if t.rows.is_empty() {
            h.push_str("<p>No data in this store.</p>");
        } else {
            h.push_str(&html_table(&t, t.name));
        }
    }
    // Models with their serving facts, as the study declared them, and the calls each made.
    {
        let mut st = conn.prepare(
            "SELECT m.name, m.family, m.served_id, m.endpoints, m.quantisation, m.notes, m.structured, m.temperature,
                    m.max_tokens, (SELECT COUNT(*) FROM transcripts t WHERE t.model = m.name)
             FROM models m ORDER BY m.name, m.served_id",
        )?;
        #[allow(clippy::type_complexity)]
        let rows: Vec<(String, String, String, String, String, String, String, f64, i64, i64)> = st
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        h.push_str("<h2>Models and serving notes</h2>");
        if rows.is_empty() {
            h.push_str("<p>No language model is declared in this store's studies: every roster is classical.</p>");
        } else {
            h.push_str(
                "<table id=\"models\"><tr><th>model</th><th>family</th><th>served id</th><th>endpoints</th>\
                 <th>quantisation</th><th>serving notes</th><th>structured output</th><th>temperature</th>\
                 <th>max tokens</th><th>calls recorded</th></tr>",
            );
            for (name, family, sid, ep, quant, notes, structured, temp, max_tokens, calls) in &rows {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{temp}</td>\
                     <td>{max_tokens}</td><td>{calls}</td></tr>",
                    escape(name),
                    escape(family),
                    escape(sid),
                    escape(ep),
                    escape(quant),
                    escape(notes),
                    escape(structured),
                );
            }
            h.push_str("</table>");
        }
    }
    // Contamination: priming and probe contrasts, and how often the paradigm was recognised.
    {
        h.push_str("<h2>Contamination</h2>");
        let rows: Vec<&agora_analysis::analyze::ContrastRow> = analysis
            .contrasts
            .iter()
            .filter(|c| c.family_of_tests == "priming" || c.family_of_tests == "contamination")
            .collect();
        let mut st = conn.prepare(
            "SELECT model, SUM(parse_status = 'recognised'), COUNT(*) FROM transcripts WHERE kind = 'probe' GROUP BY model ORDER BY model",
        )?;
        let probes: Vec<(String, i64, i64)> =
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
        if rows.is_empty() && probes.is_empty() {
            h.push_str("<p>No priming or recognition-probe cells in this store.</p>");
        }
        for c in rows {
            let _ = write!(
                h,
                "<p>{} · {} · {}: Δ = {}, Cliff's δ = {}, Holm p = {}{}</p>",
                escape(&c.model),
                escape(&c.cell),
                escape(&c.metric),
                c.delta.map_or("-".into(), |d| format!("{d:.3}")),
                c.cliffs_delta.map_or("-".into(), |d| format!("{d:.2}")),
                c.p_holm.map_or("-".into(), |p| format!("{p:.3}")),
                c.excluded.as_ref().map(|e| format!(" (excluded: {})", escape(e))).unwrap_or_default()
            );
        }
        for (m, k, n) in probes {
            let _ = write!(h, "<p>{}: the recognition probe named the paradigm in {k} of {n} probes.</p>", escape(&m));
        }
    }
    // Per-run drill-down for the naming game.
    {
        let mut st = conn.prepare(
            "SELECT run_id, roster, variant, cell, arm, COALESCE(sweep_value, -1), run_index, steps FROM runs
             WHERE environment = 'naming-game' ORDER BY roster, arm, variant, cell, sweep_value, run_index LIMIT 40",
        )?;
        let runs: Vec<(i64, String, String, String, String, f64, i64, i64)> = st
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
            })?
            .collect::<Result<_, _>>()?;
        if !runs.is_empty() {
            h.push_str("<h2>Naming game: runs</h2><p>The first 40 runs; open one to read who met whom.</p>");
            let mut it = conn.prepare(
                "SELECT t, a, b, name_a, name_b, matched FROM interactions WHERE run_id = ?1 ORDER BY t LIMIT 200",
            )?;
            for (id, roster, variant, cell, arm, sweep, idx, steps) in runs {
                let frac = if sweep >= 0.0 { format!(", committed fraction {sweep:.3}") } else { String::new() };
                let _ = write!(
                    h,
                    "<details class=\"run\"><summary>{} · {} · {} · {}{} · run {idx}: {steps} interactions</summary><table><tr><th>t</th><th>agents</th><th>names</th><th>matched</th></tr>",
                    escape(&roster), escape(&arm), escape(&variant), escape(&cell), frac
                );
                let rows: Vec<(u32, u32, u32, u32, u32, bool)> = it
                    .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?
                    .collect::<Result<_, _>>()?;
                for (t, a, b, na, nb, m) in rows {
                    let _ = write!(
                        h,
                        "<tr><td>{t}</td><td>{a} – {b}</td><td>{na} / {nb}</td><td>{}</td></tr>",
                        if m { "yes" } else { "no" }
                    );
                }
                h.push_str("</table></details>");
            }
        }
    }
    if !excerpts.is_empty() {
        h.push_str("<h2>Transcript excerpts (model replies, escaped)</h2>");
        for (model, role, status, reply) in &excerpts {
            let _ = write!(
                h,
                "<p>{} · {} · {}</p><pre class=\"reply\">{}</pre>",
                escape(model),
                escape(role),
                escape(status),
                escape(reply)
            );
        }
    }
    h.push_str("</body></html>");
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join("report.html");
    std::fs::write(&path, h)?;
    Ok(path)
}

/// The human critical-mass bracket drawn as a note on the tipping figure.
#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escaping_neutralises_markup() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }
}
