//! The participant pages and the admin page and API.
//!
//! A participant is their session code: `/p/CODE` shows where they are (consent,
//! instructions and questions, the waiting room, their own seat's decision, the end), and
//! each form posts to `/p/CODE/…`. A participant acts only for their own seat and only on the
//! decision open for it (its nonce in the form), with a legal action; anything else is refused
//! with a message and nothing is recorded, and a form submitted twice is recorded once.
//! `/join?pool_id=ID` gives a pool's participant a code of their own (the id kept only as a
//! keyed hash) while a seat is free, rate-limited per client address: the connection's peer,
//! or the address a configured trusted proxy writes into its header, never a header a client
//! chooses. The admin page (`/admin`) and API (`/admin/api/…`) need the admin token
//! (`Authorization: Bearer TOKEN`, or `?token=` for the page).

use std::sync::Arc;
use std::time::{Duration, Instant};

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use minijinja::context;
use serde::Deserialize;

use crate::desk::{Desk, SocietyState, Stage, Submitted};
use crate::{records, secret, App};

/// Largest request body accepted (bytes).
pub const BODY_LIMIT: usize = 16 * 1024;
/// Largest oversized body read (and discarded) before its 413 is sent, so that the client,
/// still sending, reads the refusal instead of a reset connection; a body declared larger
/// than this is refused at once and the connection closed.
pub const DRAIN_LIMIT: usize = 1024 * 1024;
/// Requests one participant (or one client address for `/join`) may make per window.
pub const RATE_LIMIT: u32 = 200;
/// The rate limit's window.
pub const RATE_WINDOW: Duration = Duration::from_secs(10);
/// Codes the admin API creates in one call, at most.
pub const MAX_CODES_PER_CALL: usize = 1000;

/// The server's routes.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(home))
        .route("/join", get(join))
        .route("/p/{code}", get(page))
        .route("/p/{code}/state", get(state))
        .route("/p/{code}/consent", post(consent))
        .route("/p/{code}/comprehension", post(comprehension))
        .route("/p/{code}/act", post(act))
        .route("/admin", get(admin_page))
        .route("/admin/api/status", get(admin_status))
        .route("/admin/api/sessions", post(admin_sessions))
        .route("/admin/api/pause", post(admin_pause))
        .route("/admin/api/export", get(admin_export))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn(refuse_oversized))
        .with_state(app)
}

/// Refuses a request whose declared body exceeds [`BODY_LIMIT`] with 413, after reading the
/// body (up to [`DRAIN_LIMIT`]) so that the client gets the answer: a server that answers and
/// closes while the client is still sending makes the client see a reset connection, not the
/// refusal.
async fn refuse_oversized(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > BODY_LIMIT as u64 => {
            if n <= DRAIN_LIMIT as u64 {
                let _ = axum::body::to_bytes(req.into_body(), DRAIN_LIMIT).await;
            }
            (StatusCode::PAYLOAD_TOO_LARGE, format!("request body of {n} bytes: at most {BODY_LIMIT} are accepted"))
                .into_response()
        }
        _ => next.run(req).await,
    }
}

type Fields = Vec<(String, String)>;

fn html(app: &App, status: StatusCode, name: &str, ctx: minijinja::Value) -> Response {
    (status, Html(app.pages.render(name, ctx))).into_response()
}

fn message(app: &App, status: StatusCode, title: &str, lines: &[&str]) -> Response {
    html(app, status, "message.html", context! { title, page => "message", lines })
}

fn lines(text: &str) -> Vec<String> {
    text.split("\n\n").map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// Whether `key` has made more than [`RATE_LIMIT`] requests in the current window.
fn limited(app: &App, key: &str) -> bool {
    let mut m = app.limiter.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = Instant::now();
    if m.len() > 100_000 {
        m.retain(|_, (start, _)| now.duration_since(*start) < RATE_WINDOW);
    }
    let e = m.entry(key.to_string()).or_insert((now, 0));
    if now.duration_since(e.0) >= RATE_WINDOW {
        *e = (now, 0);
    }
    e.1 += 1;
    e.1 > RATE_LIMIT
}

/// The participant a code names, or the response refusing it (unknown, expired, too many
/// requests).
fn participant(app: &App, code: &str) -> Result<String, Box<Response>> {
    let unknown = || {
        message(
            app,
            StatusCode::NOT_FOUND,
            "Unknown link",
            &["This link is not valid. Please use the link you were given."],
        )
    };
    if !secret::is_code(code) {
        return Err(Box::new(unknown()));
    }
    let hash = secret::code_hash(code);
    if limited(app, &hash) {
        return Err(Box::new(message(
            app,
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests",
            &["Please wait a moment and reload."],
        )));
    }
    let inner = app.desk.lock();
    match inner.participants.get(&hash) {
        None => Err(Box::new(unknown())),
        Some(p) if p.expires < records::now() => {
            Err(Box::new(message(app, StatusCode::GONE, "Link expired", &["This link has expired."])))
        }
        Some(_) => Ok(hash),
    }
}

async fn home(State(app): State<Arc<App>>) -> Response {
    message(&app, StatusCode::OK, "Agora", &["This server runs a study. Please open the personal link you were given."])
}

#[derive(Deserialize)]
struct JoinQuery {
    pool_id: Option<String>,
}

/// The client address `/join` is rate-limited by: the last address in the trusted proxy's
/// header where the operator configured one (the entry that proxy added itself; entries before
/// it are the client's to write), else the connection's peer. A request without a readable
/// address in the configured header is keyed by its peer.
fn client_address(app: &App, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
    let forwarded = app.proxy_header.as_ref().and_then(|name| {
        let last = headers.get_all(name).iter().next_back()?;
        last.to_str().ok()?.rsplit(',').next()?.trim().parse::<IpAddr>().ok()
    });
    forwarded.unwrap_or_else(|| peer.ip())
}

async fn join(
    State(app): State<Arc<App>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Query(q): Query<JoinQuery>,
) -> Response {
    let who = client_address(&app, peer, &headers);
    if limited(&app, &format!("join:{who}")) {
        return message(&app, StatusCode::TOO_MANY_REQUESTS, "Too many requests", &["Please wait a moment."]);
    }
    let Some(pool_id) = q.pool_id.filter(|p| !p.trim().is_empty() && p.len() <= 128) else {
        return message(
            &app,
            StatusCode::BAD_REQUEST,
            "No participant id",
            &["This link needs your participant id (pool_id)."],
        );
    };
    let Some(key) = &app.pool_key else {
        return message(&app, StatusCode::BAD_REQUEST, "Not open", &["This session takes personal links only."]);
    };
    let hash = secret::pool_hash(key, pool_id.trim());
    // A returning participant gets a fresh code for the same record.
    let existing = app
        .desk
        .lock()
        .participants
        .values()
        .find(|p| p.pool_hash.as_deref() == Some(&hash))
        .map(|p| p.code_hash.clone());
    let code = match existing {
        Some(old) => {
            let code = secret::token();
            let new_hash = secret::code_hash(&code);
            let mut inner = app.desk.lock();
            let Some(mut p) = inner.participants.remove(&old) else {
                return message(&app, StatusCode::CONFLICT, "Try again", &["Please reload."]);
            };
            p.code_hash.clone_from(&new_hash);
            if let Err(e) = records::set_code_hash(&app.db(), &p.id, &new_hash) {
                return message(&app, StatusCode::INTERNAL_SERVER_ERROR, "Error", &[&e.to_string()]);
            }
            inner.participants.insert(new_hash, p);
            code
        }
        None => {
            // Only a seat taken closes a place: people who declined, failed the questions or
            // are still reading do not hold one.
            if !app.desk.lock().seat_free() {
                return message(&app, StatusCode::GONE, "Session full", &["Every place in this session is taken."]);
            }
            match app.create_codes(1, Some(hash)) {
                Ok(mut c) => c.remove(0),
                Err(e) => return message(&app, StatusCode::INTERNAL_SERVER_ERROR, "Error", &[&e.to_string()]),
            }
        }
    };
    Redirect::to(&crate::link(&code)).into_response()
}

/// The page of a participant's current stage.
async fn page(State(app): State<Arc<App>>, Path(code): Path<String>) -> Response {
    let hash = match participant(&app, &code) {
        Ok(h) => h,
        Err(r) => return *r,
    };
    // A participant who passed the questions while the session was paused is seated now.
    let start = {
        let mut inner = app.desk.lock();
        let waiting = inner.participants.get(&hash).is_some_and(|p| p.stage == Stage::Waiting);
        if waiting && !inner.paused {
            match seat_and_record(&app, &mut inner, &hash) {
                Ok(start) => start,
                Err(r) => return *r,
            }
        } else {
            None
        }
    };
    if let Some(s) = start {
        app.start(s, false);
    }
    render_stage(&app, &code, &hash, None)
}

fn render_stage(app: &App, code: &str, hash: &str, error: Option<&str>) -> Response {
    let inner = app.desk.lock();
    let Some(p) = inner.participants.get(hash) else {
        return message(app, StatusCode::NOT_FOUND, "Unknown link", &[]);
    };
    let cfg = &app.participants;
    match &p.stage {
        Stage::Consent => html(
            app,
            StatusCode::OK,
            "consent.html",
            context! { title => "Consent", page => "consent", code, consent => lines(&cfg.consent) },
        ),
        Stage::Instructions => {
            let status = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
            let questions: Vec<minijinja::Value> =
                cfg.comprehension.iter().map(|q| context! { text => q.text, options => q.options }).collect();
            html(
                app,
                status,
                "instructions.html",
                context! { title => "Instructions", page => "instructions", code, instructions => lines(&cfg.instructions), questions, error },
            )
        }
        Stage::Waiting => html(
            app,
            StatusCode::OK,
            "message.html",
            context! { title => "Please wait", page => "waiting", lines => vec!["The session is paused for a moment. This page reloads itself."], refresh => 2 },
        ),
        Stage::Playing => {
            let Some((s, seat)) = p.seat else {
                return message(app, StatusCode::OK, "Please wait", &["Finding you a group."]);
            };
            if let Some((nonce, pending)) = inner.pending.get(&(s, seat)) {
                let pg = &pending.page;
                let status = if error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
                return html(
                    app,
                    status,
                    "play.html",
                    context! {
                        title => "Your decision", page => "play", code, nonce, heading => "Your decision",
                        rules => crate::page::blocks(&pg.rules), situation => crate::page::blocks(&pg.situation),
                        form => minijinja::Value::from_serialize(&pg.form), version => pg.version, error,
                    },
                );
            }
            let waiting = match &inner.societies[s].state {
                SocietyState::Filling(_) | SocietyState::Open => {
                    "Waiting for the other participants to join. This page reloads itself."
                }
                _ => "Waiting for the others to decide. This page reloads itself.",
            };
            html(
                app,
                StatusCode::OK,
                "message.html",
                context! { title => "Please wait", page => "waiting", lines => vec![waiting], refresh => 1 },
            )
        }
        Stage::Done => html(
            app,
            StatusCode::OK,
            "done.html",
            context! { title => "Thank you", page => "done", payoff => p.payoff, completion => p.completion },
        ),
        Stage::Released(reason) => html(
            app,
            StatusCode::OK,
            "done.html",
            context! { title => "Thank you", page => "released", note => reason, completion => p.completion },
        ),
    }
}

/// Where a participant is, as JSON (for scripted clients and the load test).
async fn state(State(app): State<Arc<App>>, Path(code): Path<String>) -> Response {
    let hash = match participant(&app, &code) {
        Ok(h) => h,
        Err(r) => return *r,
    };
    let inner = app.desk.lock();
    let Some(p) = inner.participants.get(&hash) else { return StatusCode::NOT_FOUND.into_response() };
    let open = p.seat.and_then(|k| inner.pending.get(&k)).map(|(nonce, pending)| {
        serde_json::json!({ "nonce": nonce, "form": pending.page.form, "page_version": pending.page.version, "slot": pending.slot })
    });
    Json(serde_json::json!({
        "participant": p.id, "stage": p.stage.as_str(), "decision": open, "payoff": p.payoff,
        "completion": p.completion,
    }))
    .into_response()
}

fn field<'a>(f: &'a Fields, name: &str) -> Option<&'a str> {
    f.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

async fn consent(State(app): State<Arc<App>>, Path(code): Path<String>, Form(f): Form<Fields>) -> Response {
    let hash = match participant(&app, &code) {
        Ok(h) => h,
        Err(r) => return *r,
    };
    {
        let mut inner = app.desk.lock();
        let Some(p) = inner.participants.get_mut(&hash) else { return StatusCode::NOT_FOUND.into_response() };
        if p.stage != Stage::Consent {
            drop(inner);
            return Redirect::to(&crate::link(&code)).into_response();
        }
        let db = app.db();
        match field(&f, "agree") {
            Some("yes") => {
                p.stage = Stage::Instructions;
                let r = records::consent(&db, &p.id, &app.consent_sha256).and_then(|()| records::update(&db, p, None));
                if let Err(e) = r {
                    return message(&app, StatusCode::INTERNAL_SERVER_ERROR, "Error", &[&e.to_string()]);
                }
            }
            Some("no") => {
                // No completion code: someone who did not agree took no part, and a code would
                // let them be paid as a participant.
                p.stage = Stage::Released(
                    "You did not agree to take part; nothing you did was recorded. You may close this page.".into(),
                );
                if let Err(e) = records::update(&db, p, None) {
                    return message(&app, StatusCode::INTERNAL_SERVER_ERROR, "Error", &[&e.to_string()]);
                }
            }
            _ => {
                return message(
                    &app,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Please choose",
                    &["Please choose whether you agree."],
                )
            }
        }
    }
    Redirect::to(&crate::link(&code)).into_response()
}

/// Seats a participant who passed the questions ([`Desk::seat`]) and records their stage and
/// seat; the society to start when it is now full.
fn seat_and_record(app: &App, inner: &mut crate::desk::Inner, hash: &str) -> Result<Option<usize>, Box<Response>> {
    let start = Desk::seat(inner, hash);
    let p = &inner.participants[hash];
    let key = p.seat.map(|(s, _)| inner.societies[s].key.clone());
    records::update(&app.db(), p, key.as_deref())
        .map_err(|e| Box::new(message(app, StatusCode::INTERNAL_SERVER_ERROR, "Error", &[&e.to_string()])))?;
    Ok(start)
}

async fn comprehension(State(app): State<Arc<App>>, Path(code): Path<String>, Form(f): Form<Fields>) -> Response {
    let hash = match participant(&app, &code) {
        Ok(h) => h,
        Err(r) => return *r,
    };
    let (error, start) = {
        let mut inner = app.desk.lock();
        let Some(p) = inner.participants.get_mut(&hash) else { return StatusCode::NOT_FOUND.into_response() };
        if p.stage != Stage::Instructions {
            drop(inner);
            return Redirect::to(&crate::link(&code)).into_response();
        }
        let cfg = &app.participants;
        let wrong = cfg
            .comprehension
            .iter()
            .enumerate()
            .filter(|(i, q)| field(&f, &format!("q{i}")).and_then(|v| v.parse::<usize>().ok()) != Some(q.answer))
            .count();
        let mut error = None;
        if wrong == 0 {
            p.stage = Stage::Waiting;
        } else {
            p.tries += 1;
            if p.tries > cfg.retries {
                p.stage = Stage::Released("Thank you for your time: the questions were not all answered correctly, so you do not take part in the game.".into());
                p.completion = Some(secret::completion_code());
            } else {
                error = Some(format!(
                    "{wrong} answer{} not right; please read the instructions again ({} {} left).",
                    if wrong == 1 { " is" } else { "s are" },
                    cfg.retries + 1 - p.tries,
                    if cfg.retries + 1 - p.tries == 1 { "try" } else { "tries" }
                ));
            }
        }
        let waiting = p.stage == Stage::Waiting;
        let start = if waiting {
            seat_and_record(&app, &mut inner, &hash)
        } else {
            records::update(&app.db(), &inner.participants[&hash], None)
                .map(|()| None)
                .map_err(|e| Box::new(message(&app, StatusCode::INTERNAL_SERVER_ERROR, "Error", &[&e.to_string()])))
        };
        match start {
            Ok(start) => (error, start),
            Err(r) => return *r,
        }
    };
    if let Some(s) = start {
        app.start(s, false);
    }
    match error {
        Some(e) => render_stage(&app, &code, &hash, Some(&e)),
        None => Redirect::to(&crate::link(&code)).into_response(),
    }
}

async fn act(State(app): State<Arc<App>>, Path(code): Path<String>, Form(f): Form<Fields>) -> Response {
    let hash = match participant(&app, &code) {
        Ok(h) => h,
        Err(r) => return *r,
    };
    let nonce = field(&f, "nonce").unwrap_or_default().to_string();
    let mut inner = app.desk.lock();
    let Some(p) = inner.participants.get(&hash) else { return StatusCode::NOT_FOUND.into_response() };
    let (Stage::Playing, Some((s, seat))) = (&p.stage, p.seat) else {
        drop(inner);
        return message(&app, StatusCode::CONFLICT, "No decision open", &["You have no decision to make now."]);
    };
    let participant_id = p.id.clone();
    if inner.answered.contains(&nonce) {
        drop(inner);
        return message(
            &app,
            StatusCode::OK,
            "Already recorded",
            &["Your answer to this decision was already recorded; it counts once."],
        );
    }
    let Some((open, pending)) = inner.pending.get(&(s, seat)) else {
        drop(inner);
        return message(
            &app,
            StatusCode::CONFLICT,
            "No decision open",
            &["This decision is closed; the page will show what comes next."],
        );
    };
    if !secret::same(open, &nonce) {
        drop(inner);
        return message(
            &app,
            StatusCode::CONFLICT,
            "Out of date",
            &["This page is out of date (its decision is closed). Please reload."],
        );
    }
    let action = match pending.page.read(&f) {
        Ok(a) => a,
        Err(e) => {
            drop(inner);
            return render_stage(&app, &code, &hash, Some(&e));
        }
    };
    let raw: serde_json::Map<String, serde_json::Value> =
        f.iter().filter(|(k, _)| k != "nonce").map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str()))).collect();
    let answer = Submitted {
        action,
        raw: serde_json::Value::Object(raw).to_string(),
        response_ms: pending.shown.elapsed().as_secs_f64() * 1000.0,
        page_version: pending.page.version.clone(),
    };
    let slot = pending.slot;
    let key = inner.societies[s].key.clone();
    // Stored before the decision leaves the desk and the engine is told, under the desk's
    // lock (so that a timeout cannot take it meanwhile): an answer given is never lost, and one
    // that cannot be stored leaves the decision open.
    match records::answer(
        &app.db(),
        records::PostedDecision { run_key: &key, seat, slot, participant: &participant_id },
        &answer,
    ) {
        Ok(true) => {}
        Ok(false) => {
            drop(inner);
            return message(
                &app,
                StatusCode::CONFLICT,
                "No decision open",
                &["This decision is closed; the page will show what comes next."],
            );
        }
        Err(e) => {
            drop(inner);
            return message(
                &app,
                StatusCode::INTERNAL_SERVER_ERROR,
                "Error",
                &[&format!("your answer could not be stored: {e}")],
            );
        }
    }
    let Some((open, pending)) = inner.pending.remove(&(s, seat)) else {
        return StatusCode::CONFLICT.into_response();
    };
    inner.answered.insert(open);
    let _ = pending.tx.send(answer);
    drop(inner);
    Redirect::to(&crate::link(&code)).into_response()
}

fn authorised(app: &App, headers: &HeaderMap, query_token: Option<&str>) -> bool {
    let bearer =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    bearer.or(query_token).is_some_and(|t| secret::same(t, &app.admin_token))
}

/// A request of the admin API whose bearer token is the admin token: any other is refused
/// before its body is read.
struct Admin;

impl FromRequestParts<Arc<App>> for Admin {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Admin, Response> {
        if authorised(app, &parts.headers, None) {
            Ok(Admin)
        } else {
            Err(refused())
        }
    }
}

fn refused() -> Response {
    (StatusCode::UNAUTHORIZED, Json(serde_json::json!({ "error": "the admin token is missing or wrong" })))
        .into_response()
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

fn status_json(app: &App) -> serde_json::Value {
    let inner = app.desk.lock();
    let societies: Vec<serde_json::Value> = inner
        .societies
        .iter()
        .map(|s| {
            let state = match &s.state {
                SocietyState::Open => "open".to_string(),
                SocietyState::Filling(_) => "filling".into(),
                SocietyState::Playing => "playing".into(),
                SocietyState::Done => "done".into(),
                SocietyState::Failed(e) => format!("failed: {e}"),
            };
            serde_json::json!({ "run_key": s.key, "block": s.block, "human_seats": s.human.len(), "seated": s.seated.len(), "state": state })
        })
        .collect();
    let mut stages = std::collections::BTreeMap::<String, usize>::new();
    for p in inner.participants.values() {
        *stages.entry(p.stage.as_str().to_string()).or_default() += 1;
    }
    serde_json::json!({ "study": app.study, "paused": inner.paused, "societies": societies, "stages": stages })
}

async fn admin_page(State(app): State<Arc<App>>, headers: HeaderMap, Query(q): Query<TokenQuery>) -> Response {
    if !authorised(&app, &headers, q.token.as_deref()) {
        return refused();
    }
    let s = status_json(&app);
    html(
        &app,
        StatusCode::OK,
        "admin.html",
        context! { title => "Admin", page => "admin", study => s["study"], paused => s["paused"], societies => minijinja::Value::from_serialize(&s["societies"]), stages => minijinja::Value::from_serialize(&s["stages"]), refresh => 5 },
    )
}

async fn admin_status(_: Admin, State(app): State<Arc<App>>) -> Response {
    Json(status_json(&app)).into_response()
}

#[derive(Deserialize)]
struct CreateCodes {
    count: usize,
}

async fn admin_sessions(_: Admin, State(app): State<Arc<App>>, Json(body): Json<CreateCodes>) -> Response {
    if body.count == 0 || body.count > MAX_CODES_PER_CALL {
        return (
            StatusCode::BAD_REQUEST,
            Json(serde_json::json!({ "error": format!("count: 1 to {MAX_CODES_PER_CALL}") })),
        )
            .into_response();
    }
    match app.create_codes(body.count, None) {
        Ok(codes) => {
            let links: Vec<String> = codes.iter().map(|c| crate::link(c)).collect();
            Json(serde_json::json!({ "codes": codes, "links": links })).into_response()
        }
        Err(e) => {
            (StatusCode::INTERNAL_SERVER_ERROR, Json(serde_json::json!({ "error": e.to_string() }))).into_response()
        }
    }
}

#[derive(Deserialize)]
struct Pause {
    paused: bool,
}

async fn admin_pause(_: Admin, State(app): State<Arc<App>>, Json(body): Json<Pause>) -> Response {
    app.desk.lock().paused = body.paused;
    Json(status_json(&app)).into_response()
}

async fn admin_export(_: Admin, State(app): State<Arc<App>>) -> Response {
    let rows = records::exported(&app.db(), &app.study).map(|participants| {
        let participants: Vec<serde_json::Value> = participants
            .into_iter()
            .map(|p| {
                serde_json::json!({
                    "participant": p.participant, "stage": p.stage, "consent_at": p.consent_at,
                    "comprehension_tries": p.comprehension_tries, "run_key": p.run_key, "seat": p.seat,
                    "payoff": p.payoff, "completion_code": p.completion_code,
                })
            })
            .collect();
        serde_json::json!({ "study": app.study, "participants": participants })
    });
    match rows {
        Ok(v) => Json(v).into_response(),
        Err(e) => {
            (StatusCode::INTERNAL_SERVER_ERROR, Json(serde_json::json!({ "error": e.to_string() }))).into_response()
        }
    }
}
