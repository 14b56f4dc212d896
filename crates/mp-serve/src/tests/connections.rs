//! `Service::serve` over real TCP on loopback: idle connections beyond the cap make room
//! for a signed delivery and `/healthz`, connections all in a request refuse a new one, a
//! body declared over the limit is refused unread, and the header, body and idle timeouts
//! close what they should, on tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use super::{SECRET, demo, labeled, runtime};
use crate::{Limits, Service, WebhookSecret};

/// A server on a free loopback port, stopped when the returned sender drops.
async fn serving(service: &Service, limits: Limits) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address").to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let service = service.clone();
    tokio::spawn(async move {
        service
            .serve(listener, limits, async {
                let _ = stopped.await;
            })
            .await;
    });
    (addr, stop)
}

/// Everything the server writes until it closes the connection.
async fn read_all(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

fn status(answer: &str) -> u16 {
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn body(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or(Value::Null)
}

/// A signed `pull_request` delivery, sent whole on a new connection that asks to be closed.
async fn deliver(addr: &str, id: &str, payload: &Value) -> String {
    let bytes = serde_json::to_vec(payload).expect("JSON");
    let signature = WebhookSecret::new(SECRET).expect("a secret").sign(&bytes);
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let head = format!(
        "POST /webhook HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nX-GitHub-Event: pull_request\r\nX-GitHub-Delivery: {id}\r\nX-Hub-Signature-256: {signature}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        bytes.len()
    );
    stream.write_all(head.as_bytes()).await.expect("writes");
    stream.write_all(&bytes).await.expect("writes");
    read_all(&mut stream).await
}

async fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("writes");
    read_all(&mut stream).await
}

/// Whether the server closed `stream` (end of file, or reset) without answering.
async fn closed_unanswered(stream: &mut TcpStream) -> bool {
    let mut byte = [0_u8; 1];
    matches!(
        tokio::time::timeout(Duration::from_secs(5), stream.read(&mut byte)).await,
        Ok(Ok(0) | Err(_))
    )
}

#[test]
fn idle_connections_beyond_the_cap_make_room_for_a_signed_delivery_and_healthz() {
    // The real clock, and timeouts far longer than the test: only the cap can close the
    // idle connections.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (service, _) = demo(Arc::default());
        let limits = Limits {
            header_timeout: Duration::from_secs(600),
            body_timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(600),
            max_connections: 32,
        };
        let (addr, _stop) = serving(&service, limits).await;
        let mut idle = Vec::new();
        for _ in 0..300 {
            idle.push(TcpStream::connect(&addr).await.expect("connects"));
        }
        let answer = deliver(&addr, "d-cap", &labeled("acme/webapp", 1)).await;
        assert_eq!(status(&answer), 202, "{answer}");
        assert_eq!(body(&answer)["verdict"], "queued", "{answer}");
        let answer = get(&addr, "/healthz").await;
        assert_eq!(status(&answer), 200, "{answer}");
        // The first idle connections made room: closed without an answer.
        assert!(closed_unanswered(&mut idle[0]).await);
        assert!(closed_unanswered(&mut idle[1]).await);
    });
}

#[test]
fn when_every_open_connection_is_in_a_request_a_new_one_is_refused() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (service, _) = demo(Arc::default());
        let limits = Limits {
            max_connections: 2,
            body_timeout: Duration::from_secs(600),
            ..Limits::default()
        };
        let (addr, _stop) = serving(&service, limits).await;
        // Two requests whose bodies are still on their way: both connections are working.
        let mut working = Vec::new();
        for _ in 0..2 {
            let mut stream = TcpStream::connect(&addr).await.expect("connects");
            stream
                .write_all(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\"")
                .await
                .expect("writes");
            working.push(stream);
        }
        // A moment for the server to read both headers (it then holds both in their
        // handlers, waiting for the bodies); until then a third connection would close a
        // connection still sending its header. /healthz on a third connection is refused
        // (closed unanswered) once both are in their handlers, so ask until it is.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut refused = false;
        for _ in 0..50 {
            let mut stream = TcpStream::connect(&addr).await.expect("connects");
            let _ = stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .await;
            let answer = read_all(&mut stream).await;
            if answer.is_empty() {
                refused = true;
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(refused, "a third connection is refused while two are working");
        drop(working);
    });
}

#[test]
fn a_two_gigabyte_declared_body_is_refused_at_once_unread() {
    runtime().block_on(async {
        let (service, _) = demo(Arc::default());
        let (addr, _stop) = serving(&service, Limits::default()).await;
        let started = Instant::now();
        let mut stream = TcpStream::connect(&addr).await.expect("connects");
        stream
            .write_all(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-GitHub-Event: pull_request\r\nContent-Length: 2147483648\r\n\r\n0123456789")
            .await
            .expect("writes");
        let answer = read_all(&mut stream).await;
        assert_eq!(status(&answer), 413, "{answer}");
        assert_eq!(body(&answer)["verdict"], "rejected");
        assert!(
            body(&answer)["reason"]
                .as_str()
                .is_some_and(|r| r.contains("2147483648 bytes declared")),
            "{answer}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "answered and closed at once, not after a timeout: {:?}",
            started.elapsed()
        );
    });
}

#[test]
fn a_body_slower_than_the_body_timeout_is_answered_408_and_closed() {
    runtime().block_on(async {
        let (service, _) = demo(Arc::default());
        let limits = Limits::default();
        let (addr, _stop) = serving(&service, limits).await;
        let started = Instant::now();
        let mut stream = TcpStream::connect(&addr).await.expect("connects");
        stream
            .write_all(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-GitHub-Event: pull_request\r\nContent-Length: 100\r\n\r\n0123456789")
            .await
            .expect("writes");
        let answer = read_all(&mut stream).await;
        let waited = started.elapsed();
        assert_eq!(status(&answer), 408, "{answer}");
        assert!(
            waited >= limits.body_timeout && waited < limits.body_timeout + Duration::from_secs(1),
            "{waited:?}"
        );
    });
}

#[test]
fn a_header_not_finished_within_the_header_timeout_is_closed() {
    runtime().block_on(async {
        let (service, _) = demo(Arc::default());
        let limits = Limits::default();
        let (addr, _stop) = serving(&service, limits).await;
        let started = Instant::now();
        let mut stream = TcpStream::connect(&addr).await.expect("connects");
        stream
            .write_all(b"POST /webhook HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("writes");
        let answer = read_all(&mut stream).await;
        let waited = started.elapsed();
        assert_eq!(answer, "", "closed without an answer");
        assert!(
            waited >= limits.header_timeout
                && waited < limits.header_timeout + Duration::from_secs(1),
            "{waited:?}"
        );
    });
}

#[test]
fn a_kept_alive_connection_is_closed_after_the_idle_timeout_not_the_header_timeout() {
    runtime().block_on(async {
        let (service, _) = demo(Arc::default());
        let limits = Limits::default();
        let (addr, _stop) = serving(&service, limits).await;
        let mut stream = TcpStream::connect(&addr).await.expect("connects");
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("writes");
        let mut buffer = vec![0_u8; 4096];
        let read = stream.read(&mut buffer).await.expect("an answer");
        let answered = Instant::now();
        let answer = String::from_utf8_lossy(&buffer[..read]).into_owned();
        assert_eq!(status(&answer), 200, "{answer}");
        let rest = read_all(&mut stream).await;
        let waited = answered.elapsed();
        assert_eq!(rest, "", "closed without another answer");
        assert!(
            waited >= limits.idle_timeout && waited < limits.idle_timeout + Duration::from_secs(1),
            "{waited:?}"
        );
    });
}
