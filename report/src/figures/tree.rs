//! A reasoning tree (the SUVA audit paper §240.7.3, Leng and Yuan's Algorithm 1): the coded paths of the
//! responses to one prompt merged into a tree. Consecutive repeated codes are collapsed, each
//! node counts the responses passing through it and how they end (the action taken), and the
//! probability of a complete path is the chain rule along it, each factor the ratio of a
//! child's count to its parent's (so the product is the path's count over all responses).

use std::collections::BTreeMap;

use plotters::prelude::*;

use super::{Fig, PALETTE};

/// One node: a code, or (at a leaf) the action a path ended with.
pub struct Node {
    /// The code, or the action at a leaf.
    pub label: String,
    /// Whether the node is a path's end (an action).
    pub action: bool,
    /// Responses passing through the node.
    pub n: usize,
    /// How they end: action → count.
    pub ends: BTreeMap<String, usize>,
    /// Children, most frequent first (ties by label).
    pub children: Vec<Node>,
}

/// Children drawn per node; the rest are merged into one "rarer branches" node.
const TOP_K: usize = 3;
/// Code nodes drawn along a path; longer paths are merged below the last one.
const MAX_DEPTH: usize = 6;

impl Node {
    fn new(label: &str, action: bool) -> Node {
        Node { label: label.to_string(), action, n: 0, ends: BTreeMap::new(), children: Vec::new() }
    }

    /// Merges paths (codes in order, action) into a tree rooted at the prompt.
    pub fn from_paths(paths: &[(Vec<String>, String)]) -> Node {
        let mut root = Node::new("prompt", false);
        for (codes, action) in paths {
            let mut collapsed: Vec<&String> = codes.iter().collect();
            collapsed.dedup();
            let mut node = &mut root;
            node.n += 1;
            *node.ends.entry(action.clone()).or_default() += 1;
            let steps = collapsed.into_iter().map(|c| (c, false)).chain(std::iter::once((action, true)));
            for (label, is_action) in steps {
                let i = match node.children.iter().position(|c| c.label == *label && c.action == is_action) {
                    Some(i) => i,
                    None => {
                        node.children.push(Node::new(label, is_action));
                        node.children.len() - 1
                    }
                };
                node = &mut node.children[i];
                node.n += 1;
                *node.ends.entry(action.clone()).or_default() += 1;
            }
        }
        root.sort();
        root
    }

    fn sort(&mut self) {
        self.children.sort_by(|a, b| b.n.cmp(&a.n).then(a.action.cmp(&b.action)).then(a.label.cmp(&b.label)));
        for c in &mut self.children {
            c.sort();
        }
    }

    /// Every complete path (codes, action) with its count, most frequent first.
    pub fn paths(&self) -> Vec<(Vec<String>, String, usize)> {
        fn walk(n: &Node, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String, usize)>) {
            for c in &n.children {
                if c.action {
                    out.push((prefix.clone(), c.label.clone(), c.n));
                } else {
                    prefix.push(c.label.clone());
                    walk(c, prefix, out);
                    prefix.pop();
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)).then_with(|| a.1.cmp(&b.1)));
        out
    }

    /// The actions any path ends with, in order.
    pub fn actions(&self) -> Vec<String> {
        self.ends.keys().cloned().collect()
    }
}

/// A node as drawn: pruned to the top children and a maximum depth.
struct Drawn {
    label: String,
    action: bool,
    merged: bool,
    n: usize,
    ends: BTreeMap<String, usize>,
    children: Vec<Drawn>,
}

fn merge_ends(into: &mut BTreeMap<String, usize>, from: &BTreeMap<String, usize>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

fn prune(n: &Node, depth: usize) -> Drawn {
    let mut d = Drawn {
        label: n.label.clone(),
        action: n.action,
        merged: false,
        n: n.n,
        ends: n.ends.clone(),
        children: Vec::new(),
    };
    if depth >= MAX_DEPTH && n.children.iter().any(|c| !c.action) {
        d.children.push(Drawn {
            label: "… longer paths".into(),
            action: false,
            merged: true,
            n: n.n,
            ends: n.ends.clone(),
            children: Vec::new(),
        });
        return d;
    }
    for c in n.children.iter().take(TOP_K) {
        d.children.push(prune(c, depth + usize::from(!c.action)));
    }
    let rest = &n.children[n.children.len().min(TOP_K)..];
    if !rest.is_empty() {
        let mut ends = BTreeMap::new();
        for c in rest {
            merge_ends(&mut ends, &c.ends);
        }
        d.children.push(Drawn {
            label: format!("… {} rarer branch(es)", rest.len()),
            action: false,
            merged: true,
            n: rest.iter().map(|c| c.n).sum(),
            ends,
            children: Vec::new(),
        });
    }
    d
}

/// Lays the drawn tree out: (depth, row) per node in depth-first order, rows of leaves
/// consecutive and an inner node centred on its children.
fn layout(d: &Drawn, depth: usize, next_row: &mut f64, out: &mut Vec<(usize, f64)>) -> f64 {
    let me = out.len();
    out.push((depth, 0.0));
    let row = if d.children.is_empty() {
        let r = *next_row;
        *next_row += 1.0;
        r
    } else {
        let rows: Vec<f64> = d.children.iter().map(|c| layout(c, depth + 1, next_row, out)).collect();
        (rows[0] + rows[rows.len() - 1]) / 2.0
    };
    out[me].1 = row;
    row
}

fn flatten<'a>(d: &'a Drawn, parent: Option<usize>, out: &mut Vec<(&'a Drawn, Option<usize>)>) {
    let me = out.len();
    out.push((d, parent));
    for c in &d.children {
        flatten(c, Some(me), out);
    }
}

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// Draws the tree: one column per step, boxes for codes (with a bar of how the responses
/// through them end, coloured by action) and for the actions that end the paths; edge width
/// grows with the responses along it.
pub fn reasoning_tree(root: &Node, title: &str) -> Fig {
    let drawn = prune(root, 0);
    let mut pos = Vec::new();
    let mut rows = 0.0;
    layout(&drawn, 0, &mut rows, &mut pos);
    let mut nodes = Vec::new();
    flatten(&drawn, None, &mut nodes);
    let depth = pos.iter().map(|p| p.0).max().unwrap_or(0);
    let actions = root.actions();
    let colour = |a: &str| PALETTE[actions.iter().position(|x| x == a).unwrap_or(0) % 7];
    let (w, row_h, top) = (1100u32, 46i32, 64i32);
    let h = (top as u32 + 50 + row_h as u32 * rows as u32).max(320);
    let col_w = ((w as i32 - 40) / (depth as i32 + 1)).max(120);
    let box_w = (col_w - 26).min(190);
    let total = root.n.max(1) as f64;
    let xy = |i: usize| (20 + pos[i].0 as i32 * col_w, top + (pos[i].1 * f64::from(row_h)) as i32);
    figure!(w, h, |root_area| {
        root_area.draw(&Text::new(title.to_string(), (20, 14), ("sans-serif", 16)))?;
        // Legend: one swatch per action.
        let mut x = 20;
        for a in &actions {
            root_area.draw(&Rectangle::new([(x, 38), (x + 14, 52)], colour(a).filled()))?;
            let label = format!("ends with {}", short(a, 24));
            root_area.draw(&Text::new(label.clone(), (x + 19, 39), ("sans-serif", 12)))?;
            x += 40 + 7 * label.chars().count() as i32;
        }
        for (i, (_, parent)) in nodes.iter().enumerate() {
            if let Some(p) = parent {
                let (px, py) = xy(*p);
                let (cx, cy) = xy(i);
                let width = 1 + (8.0 * nodes[i].0.n as f64 / total).round() as u32;
                root_area.draw(&PathElement::new(
                    vec![(px + box_w, py + 14), (cx, cy + 14)],
                    RGBColor(120, 120, 120).stroke_width(width),
                ))?;
            }
        }
        for (i, (d, _)) in nodes.iter().enumerate() {
            let (x, y) = xy(i);
            let (fill, text) = if d.action {
                (colour(&d.label).mix(0.85), WHITE)
            } else if d.merged {
                (RGBColor(235, 235, 235).mix(1.0), BLACK)
            } else {
                (RGBColor(250, 250, 250).mix(1.0), BLACK)
            };
            root_area.draw(&Rectangle::new([(x, y), (x + box_w, y + 30)], fill.filled()))?;
            root_area.draw(&Rectangle::new([(x, y), (x + box_w, y + 30)], BLACK.stroke_width(1)))?;
            let label = format!("{} (n={})", short(&d.label, 22), d.n);
            root_area.draw(&Text::new(label, (x + 4, y + 3), ("sans-serif", 12).into_font().color(&text)))?;
            if !d.action {
                // How the responses through the node end, as a stacked bar.
                let mut bx = x + 4;
                let bar_w = f64::from(box_w - 8);
                for a in &actions {
                    let k = d.ends.get(a).copied().unwrap_or(0);
                    let seg = (bar_w * k as f64 / d.n.max(1) as f64).round() as i32;
                    if seg > 0 {
                        root_area.draw(&Rectangle::new([(bx, y + 19), (bx + seg, y + 27)], colour(a).filled()))?;
                        bx += seg;
                    }
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::Node;

    fn p(codes: &[&str], action: &str) -> (Vec<String>, String) {
        (codes.iter().map(|c| c.to_string()).collect(), action.to_string())
    }

    #[test]
    fn repeated_codes_collapse_and_nodes_count_how_paths_end() {
        let paths = [
            p(&["understanding", "fairness", "fairness"], "C"),
            p(&["understanding", "fairness"], "C"),
            p(&["understanding", "fairness"], "D"),
            p(&["understanding", "competition", "understanding"], "D"),
            p(&[], "D"),
        ];
        let t = Node::from_paths(&paths);
        assert_eq!(t.n, 5);
        let u = &t.children[0];
        assert_eq!((u.label.as_str(), u.n), ("understanding", 4));
        assert_eq!(u.ends.get("C"), Some(&2));
        assert_eq!(u.ends.get("D"), Some(&2));
        let f = &u.children[0];
        assert_eq!((f.label.as_str(), f.n), ("fairness", 3), "fairness, fairness is one step");
        assert_eq!(f.children.len(), 2);
        assert_eq!((f.children[0].label.as_str(), f.children[0].n, f.children[0].action), ("C", 2, true));
        let paths = t.paths();
        assert_eq!(paths[0], (vec!["understanding".to_string(), "fairness".to_string()], "C".to_string(), 2));
        assert!(paths.iter().any(|x| x.0.is_empty() && x.1 == "D" && x.2 == 1), "a path without reasoning");
        assert!(paths.iter().any(|x| x.0 == ["understanding", "competition", "understanding"]), "not merged across");
        assert_eq!(paths.iter().map(|x| x.2).sum::<usize>(), 5);
    }
}
