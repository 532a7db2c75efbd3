//! Charts with one labelled row per item: the forest plot, the punishment effect, time to
//! convention, and the audit grid (one row per model and metric, one column per cell).

use agora_analysis::analyze::{ContrastRow, ConvergenceRow, EquivalenceRow, PunishmentEffectRow};
use plotters::prelude::*;

use super::{Fig, PALETTE};

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
pub fn forest(equivalence: &[EquivalenceRow]) -> Fig {
    let rows: Vec<_> = equivalence.iter().filter(|r| r.estimate.is_some()).collect();
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
pub fn punishment_effect(rows: &[PunishmentEffectRow], human: (f64, f64)) -> Fig {
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
    let (human_low, human_high) = human;
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

/// Time to convention: per roster, block and variant, the quartiles of the interactions runs
/// took to form a convention (box: first to third quartile; tick: median), with how many of
/// the runs formed one.
pub fn convergence_times(convergence: &[ConvergenceRow]) -> Fig {
    let rows: Vec<&ConvergenceRow> = convergence.iter().filter(|r| r.time_median.is_some()).collect();
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
pub fn audit_grid(contrasts: &[ContrastRow]) -> Fig {
    let rows: Vec<String> = contrasts
        .iter()
        .map(|c| format!("{} · {}", c.model, c.metric))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut cols: Vec<(String, String)> = contrasts
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
        for c in contrasts {
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
