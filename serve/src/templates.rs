//! The pages, rendered on the server with minijinja (the templating the prompts use), every
//! value HTML-escaped. No script: the waiting pages reload themselves.

use minijinja::{Environment, Value};

const BASE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{% if refresh %}<meta http-equiv="refresh" content="{{ refresh }}">{% endif %}
<title>{{ title }}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
table { border-collapse: collapse; margin: 0.5rem 0; } td, th { border: 1px solid #999; padding: 0.2rem 0.6rem; text-align: center; }
.rules { background: #f4f4f4; padding: 0.5rem 1rem; } .error { color: #a00; font-weight: bold; }
button { margin: 0.3rem 0.5rem 0.3rem 0; padding: 0.4rem 1rem; font-size: 1rem; }
</style></head>
<body><main id="{{ page }}">
{% block body %}{% endblock %}
</main></body></html>"#;

const MESSAGE: &str = r#"{% extends "base.html" %}{% block body %}
<h1>{{ title }}</h1>
{% for line in lines %}<p>{{ line }}</p>{% endfor %}
{% endblock %}"#;

const CONSENT: &str = r#"{% extends "base.html" %}{% block body %}
<h1>Consent</h1>
{% for line in consent %}<p>{{ line }}</p>{% endfor %}
<form method="post" action="/p/{{ code }}/consent">
<button type="submit" name="agree" value="yes" id="agree">I agree</button>
<button type="submit" name="agree" value="no" id="decline">I do not agree</button>
</form>
{% endblock %}"#;

const INSTRUCTIONS: &str = r#"{% extends "base.html" %}{% block body %}
<h1>Instructions</h1>
{% for line in instructions %}<p>{{ line }}</p>{% endfor %}
{% if error %}<p class="error">{{ error }}</p>{% endif %}
<form method="post" action="/p/{{ code }}/comprehension">
{% for q in questions %}{% set qi = loop.index0 %}
<fieldset><legend>{{ q.text }}</legend>
{% for o in q.options %}<label><input type="radio" name="q{{ qi }}" value="{{ loop.index0 }}" id="q{{ qi }}-{{ loop.index0 }}"> {{ o }}</label><br>{% endfor %}
</fieldset>
{% endfor %}
<button type="submit" id="continue">Continue</button>
</form>
{% endblock %}"#;

const PLAY: &str = r#"{% extends "base.html" %}{% block body %}
<h1>{{ heading }}</h1>
<section class="rules">{% for b in rules %}{% if b.kind == "table" %}<table><tr>{% for h in b.head %}<th>{{ h }}</th>{% endfor %}</tr>{% for r in b.rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</table>{% else %}<p>{{ b.text }}</p>{% endif %}{% endfor %}</section>
<section class="situation">{% for b in situation %}{% if b.kind == "table" %}<table class="history"><tr>{% for h in b.head %}<th>{{ h }}</th>{% endfor %}</tr>{% for r in b.rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</table>{% else %}<p>{{ b.text }}</p>{% endif %}{% endfor %}</section>
{% if error %}<p class="error">{{ error }}</p>{% endif %}
<form method="post" action="/p/{{ code }}/act">
<input type="hidden" name="nonce" value="{{ nonce }}">
{% if form.kind == "choice" %}{% for o in form.options %}<button type="submit" name="choice" value="{{ o[0] }}" id="choice-{{ o[0] }}">{{ o[1] }}</button>{% endfor %}
{% elif form.kind == "amount" %}<label>Your answer ({{ form.min }} to {{ form.max }}): <input type="number" name="amount" id="amount" min="{{ form.min }}" max="{{ form.max }}" step="1" required></label> <button type="submit" id="submit">Submit</button>
{% else %}{% for t in range(form.targets) %}<label>Member {{ t + 1 }} (0 to {{ form.max_each }}): <input type="number" name="t{{ t }}" id="t{{ t }}" min="0" max="{{ form.max_each }}" step="1" required></label><br>{% endfor %}<button type="submit" id="submit">Submit</button>{% endif %}
</form>
<p><small>Page {{ version }}</small></p>
{% endblock %}"#;

const DONE: &str = r#"{% extends "base.html" %}{% block body %}
<h1>Thank you</h1>
{% if payoff is not none %}<p>You earned <strong id="payoff">{{ payoff }}</strong> points.</p>{% endif %}
{% if note %}<p>{{ note }}</p>{% endif %}
{% if completion %}<p>Your completion code is <strong id="completion">{{ completion }}</strong>.</p>{% endif %}
{% endblock %}"#;

const ADMIN: &str = r#"{% extends "base.html" %}{% block body %}
<h1>Session: {{ study }}</h1>
<p>{{ paused and "Paused: nobody new is seated and no society starts." or "Running." }}</p>
<table><tr><th>society</th><th>block</th><th>human seats</th><th>seated</th><th>state</th></tr>
{% for s in societies %}<tr><td>{{ loop.index }}</td><td>{{ s.block }}</td><td>{{ s.human_seats }}</td><td>{{ s.seated }}</td><td>{{ s.state }}</td></tr>{% endfor %}
</table>
<table><tr><th>stage</th><th>participants</th></tr>{% if stages %}{% for k, v in stages|items %}<tr><td>{{ k }}</td><td>{{ v }}</td></tr>{% endfor %}{% endif %}</table>
{% endblock %}"#;

/// The page templates.
pub(crate) struct Pages {
    env: Environment<'static>,
}

impl Pages {
    pub(crate) fn new() -> Pages {
        let mut env = Environment::new();
        for (name, text) in [
            ("base.html", BASE),
            ("message.html", MESSAGE),
            ("consent.html", CONSENT),
            ("instructions.html", INSTRUCTIONS),
            ("play.html", PLAY),
            ("done.html", DONE),
            ("admin.html", ADMIN),
        ] {
            env.add_template(name, text).expect("invariant: the page templates parse (tested)");
        }
        Pages { env }
    }

    /// Renders page `name` with `ctx`.
    pub(crate) fn render(&self, name: &str, ctx: Value) -> String {
        self.env
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .unwrap_or_else(|e| format!("<!doctype html><p>page {name} could not be rendered: {e}</p>"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_renders_and_escapes() {
        let p = Pages::new();
        let html = p.render(
            "message.html",
            minijinja::context! { title => "x", page => "m", lines => vec!["<script>alert(1)</script>"] },
        );
        assert!(html.contains("&lt;script&gt;") && !html.contains("<script>"), "{html}");
        for name in ["consent.html", "instructions.html", "play.html", "done.html", "admin.html"] {
            let html = p.render(name, minijinja::context! { title => "t", code => "c", form => minijinja::context! { kind => "amount", min => 0, max => 10 } });
            assert!(!html.contains("could not be rendered"), "{name}: {html}");
        }
    }
}
