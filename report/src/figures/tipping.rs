//! One tipping run as a social process: proposals by interaction, and the interaction
//! network over time windows.

use plotters::prelude::*;

use super::{Fig, PALETTE};
use crate::queries::{Meeting, TippingRun};

/// One tipping run read as a social process: what each agent proposed at each interaction
/// (rows: agents, committed ones first; colour: established or alternative name).
pub fn social_process(run: &TippingRun) -> Fig {
    let n = run.agents;
    let t_max = run.meetings.last().map(|m| m.t).unwrap_or(1) as f64;
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
        let proposals =
            run.meetings.iter().flat_map(|m| [(m.t, m.a, m.name_a, m.matched), (m.t, m.b, m.name_b, m.matched)]);
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
    let t_max = run.meetings.last().map(|m| m.t).unwrap_or(0);
    if t_max == 0 {
        return Vec::new();
    }
    // For every meeting, whether each side's next proposal adopted the partner's name.
    let mut next: Vec<Option<u32>> = vec![None; run.agents];
    let mut switched = vec![(false, false); run.meetings.len()];
    for (i, &Meeting { a, b, name_a: na, name_b: nb, matched, .. }) in run.meetings.iter().enumerate().rev() {
        let (a, b) = (a as usize, b as usize);
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
        while i < run.meetings.len() && run.meetings[i].t <= to {
            let Meeting { a, b, name_a: na, name_b: nb, .. } = run.meetings[i];
            let (a, b) = (a as usize, b as usize);
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
pub fn social_network(run: &TippingRun) -> Fig {
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
