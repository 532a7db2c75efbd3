//! The behavioural profile (the profile methods): per measure, each model's centre (dot), inner range
//! (thick bar) and outer range (thin bar), models side by side in their own colours. The 0–100
//! measures and the −100..100 measures (B1–B3, C4) have a panel each, with their own axis. An
//! unavailable value is not drawn (the report's table says why).

use agora_profile::score::rows::ProfileLine;
use plotters::prelude::*;

use super::{Fig, PALETTE};
use crate::profile::{measure_name, order, signed, StoredProfile};

/// The caption of the figure, as the report and its file name show it.
pub const CAPTION: &str = "Behavioural profile: centre (dot), inner range (thick bar), outer range (thin bar)";

/// The measures drawn (combined A1–A5 and B1–D3; a Category A task's own line is left to the
/// table), in table order.
pub fn drawn_measures(profiles: &[StoredProfile]) -> Vec<String> {
    let mut ids: Vec<String> = profiles
        .iter()
        .flat_map(|(_, _, lines)| lines.iter().map(|l| l.measure.clone()))
        .filter(|m| !m.starts_with("a:"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    ids.sort_by_key(|m| (order(m), m.clone()));
    ids
}

/// The colour of the `i`-th model (black, the palette's last, is kept for text and axes).
fn colour(i: usize) -> RGBColor {
    PALETTE[i % 7]
}

/// The model's label in the legend.
fn label(model: &str, served: &str) -> String {
    if model == served {
        model.to_string()
    } else {
        format!("{model} ({served})")
    }
}

const WIDTH: u32 = 1000;

/// The figure; `profiles` must have at least one drawn measure.
pub fn profile(profiles: &[StoredProfile]) -> Fig {
    let measures = drawn_measures(profiles);
    let panels: Vec<(Vec<String>, bool)> = [false, true]
        .into_iter()
        .map(|s| (measures.iter().filter(|m| signed(m) == s).cloned().collect::<Vec<_>>(), s))
        .filter(|(m, _)| !m.is_empty())
        .collect();
    // The legend wraps into lines of models.
    let mut legend: Vec<Vec<(usize, String, i32)>> = vec![Vec::new()];
    let mut x = 20i32;
    for (i, (model, served, _)) in profiles.iter().enumerate() {
        let text = label(model, served);
        let w = 60 + 8 * text.chars().count() as i32;
        if x + w > WIDTH as i32 - 20 && x > 20 {
            legend.push(Vec::new());
            x = 20;
        }
        legend.last_mut().expect("a line").push((i, text, x));
        x += w + 20;
    }
    let legend_h = 26 * legend.len() as u32 + 8;
    let k = profiles.len();
    // A row is taller the more models share it; the models sit side by side, the first on top.
    let row_h = (16 + 16 * k as u32).max(40);
    let panel_h = |n: usize| 100 + row_h * n as u32;
    let height = 40 + legend_h + panels.iter().map(|(m, _)| panel_h(m.len())).sum::<u32>();
    let step = (0.8 / k as f64).min(0.3);
    let offset = |j: usize| ((k as f64 - 1.0) / 2.0 - j as f64) * step;
    figure!(WIDTH, height, |root| {
        let area = root.titled(CAPTION, ("sans-serif", 18))?;
        let (legend_area, mut rest) = area.split_vertically(legend_h);
        let font = ("sans-serif", 14).into_font().color(&BLACK);
        for (row, line) in legend.iter().enumerate() {
            let y = 14 + 26 * row as i32;
            for (i, text, x) in line {
                let c = colour(*i);
                legend_area.draw(&PathElement::new(vec![(x + 2, y), (x + 40, y)], c.stroke_width(2)))?;
                legend_area.draw(&PathElement::new(vec![(x + 10, y), (x + 32, y)], c.stroke_width(8)))?;
                legend_area.draw(&Circle::new((x + 21, y), 6, c.filled()))?;
                legend_area.draw(&Circle::new((x + 21, y), 6, BLACK.stroke_width(1)))?;
                legend_area.draw(&Text::new(text.as_str(), (x + 48, y - 8), font.clone()))?;
            }
        }
        for (ids, is_signed) in &panels {
            let (panel, below) = rest.split_vertically(panel_h(ids.len()));
            rest = below;
            let n = ids.len();
            let labels: Vec<String> =
                (0..n).map(|y| ids[n - 1 - y].clone()).map(|m| format!("{m} {}", measure_name(&m))).collect();
            let (range, desc) =
                if *is_signed { (-100.0..100.0, "score (−100 to 100)") } else { (0.0..100.0, "score (0 to 100)") };
            let (lo_x, hi_x) = (range.start, range.end);
            let mut chart = ChartBuilder::on(&panel)
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(280)
                .build_cartesian_2d(range, -0.5f64..n as f64 - 0.5)?;
            chart
                .configure_mesh()
                .x_desc(desc)
                .x_labels(11)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_labels(n)
                .y_label_formatter(&|y| {
                    let r = y.round();
                    if (y - r).abs() < 1e-6 && r >= 0.0 {
                        labels.get(r as usize).cloned().unwrap_or_default()
                    } else {
                        String::new()
                    }
                })
                .draw()?;
            if *is_signed {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(0.0, -0.5), (0.0, n as f64 - 0.5)],
                    BLACK.mix(0.5).stroke_width(1),
                )))?;
            }
            let clamp = |v: f64| v.clamp(lo_x, hi_x);
            for (r, id) in ids.iter().enumerate() {
                let y0 = (n - 1 - r) as f64;
                for (j, (_, _, lines)) in profiles.iter().enumerate() {
                    let Some(l): Option<&ProfileLine> = lines.iter().find(|l| &l.measure == id) else { continue };
                    let (y, c) = (y0 + offset(j), colour(j));
                    if let Some([a, b]) = l.outer {
                        chart.draw_series(std::iter::once(PathElement::new(
                            vec![(clamp(a), y), (clamp(b), y)],
                            c.stroke_width(2),
                        )))?;
                    }
                    if let Some([a, b]) = l.inner {
                        chart.draw_series(std::iter::once(PathElement::new(
                            vec![(clamp(a), y), (clamp(b), y)],
                            c.stroke_width(7),
                        )))?;
                    }
                    if let Some(m) = l.centre {
                        chart.draw_series(std::iter::once(Circle::new((clamp(m), y), 6, c.filled())))?;
                        chart.draw_series(std::iter::once(Circle::new((clamp(m), y), 6, BLACK.stroke_width(1))))?;
                    }
                }
            }
        }
        Ok(())
    })
}
