//! A flood of idle and stalled HTTP/2 connections against a real `flotilla up` process with a
//! 1,024 open-file limit: the flooding address gets only its share of connections, another
//! client's requests stay fast, the hub stays under one core, closes the idle and stalled
//! connections itself, and serves the flooding address again once the flood stops.

mod common;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::HubProcess;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// The client preface and an empty SETTINGS frame: an HTTP/2 connection that asks nothing.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";
/// The preface, then a HEADERS frame for stream 1 holding `:method: GET` and no END_HEADERS
/// flag: the server waits for a CONTINUATION frame that never comes.
const STALLED_HEADERS: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00\x01\x82";
/// `--max-connections-per-address`'s default.
const PER_ADDRESS: usize = 512;

/// A TLS client trusting the hub's CA, offering HTTP/2 only.
fn connector(hub: &HubProcess) -> TlsConnector {
    let pem = std::fs::read(hub.dir().join("ca.crt")).expect("the hub's CA");
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    TlsConnector::from(Arc::new(config))
}

/// A TLS connection from `source` to the hub that has sent `first_bytes`; `None` when the hub
/// closed it before or during the handshake.
async fn open(
    connector: &TlsConnector,
    source: IpAddr,
    hub: SocketAddr,
    first_bytes: &[u8],
) -> Option<TlsStream<tokio::net::TcpStream>> {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(source, 0)).unwrap();
    let tcp = socket.connect(hub).await.ok()?;
    let name = ServerName::IpAddress(hub.ip().into());
    let handshake = connector.connect(name, tcp);
    let mut tls = tokio::time::timeout(Duration::from_secs(20), handshake)
        .await
        .ok()?
        .ok()?;
    tls.write_all(first_bytes).await.ok()?;
    tls.flush().await.ok()?;
    Some(tls)
}

/// Opens `count` connections from `source` sending `first_bytes`, 32 at a time; returns those
/// the hub kept.
async fn flood(
    connector: TlsConnector,
    source: IpAddr,
    hub: SocketAddr,
    count: usize,
    first_bytes: &'static [u8],
) -> Vec<TlsStream<tokio::net::TcpStream>> {
    use futures::StreamExt;
    futures::stream::iter(0..count)
        .map(|_| {
            let connector = connector.clone();
            async move { open(&connector, source, hub, first_bytes).await }
        })
        .buffer_unordered(32)
        .filter_map(|c| async move { c })
        .collect()
        .await
}

/// Whether the hub has closed `conn` (reads until end of stream, or gives up at `deadline`).
async fn closed_by_hub(mut conn: TlsStream<tokio::net::TcpStream>, deadline: Instant) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, conn.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// User and system CPU seconds `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// One GET through `client`, timed.
async fn timed_get(client: &kube::Client) -> Duration {
    let started = Instant::now();
    let req = http::Request::get("/api/v1/namespaces/default")
        .body(Vec::new())
        .unwrap();
    client.request_text(req).await.expect("GET namespace");
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_stalled_connection_floods_neither_starve_clients_nor_the_hub() {
    let hub =
        HubProcess::start_limited(&["--members", "0", "--idle-connection-timeout", "5s"], 1024);
    let address: SocketAddr = hub.server().trim_start_matches("https://").parse().unwrap();
    let client = hub.client().await;
    let mut baseline = Vec::new();
    for _ in 0..100 {
        baseline.push(timed_get(&client).await);
    }
    baseline.sort();
    println!(
        "before the flood: GET p50 {:?}, p99 {:?}",
        baseline[50], baseline[98]
    );
    let flooder: IpAddr = [127, 0, 0, 2].into();

    let cpu_before = cpu_seconds(hub.pid());
    let started = Instant::now();
    let connector = connector(&hub);
    // The flood runs on a runtime of its own, so its work does not delay the timed GETs'
    // task; it reports what it holds, then whether the hub closed each of them.
    let (flooded, report) = std::sync::mpsc::channel();
    let flooding = std::thread::spawn({
        let connector = connector.clone();
        move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let mut held =
                    flood(connector.clone(), flooder, address, 500, STALLED_HEADERS).await;
                let stalled = held.len();
                held.extend(flood(connector, flooder, address, 2_000, PREFACE).await);
                flooded.send((stalled, held.len())).unwrap();
                // The hub itself closes idle connections and those stalled inside a header
                // block.
                let deadline = Instant::now() + Duration::from_secs(30);
                let closed =
                    futures::future::join_all(held.into_iter().map(|c| closed_by_hub(c, deadline)))
                        .await;
                closed.iter().filter(|c| !**c).count()
            })
        }
    });
    let mut latencies = Vec::new();
    let mut flood_report = None;
    while flood_report.is_none() || latencies.len() < 200 {
        latencies.push(timed_get(&client).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
        flood_report = flood_report.or_else(|| report.try_recv().ok());
    }
    let (stalled, held) = flood_report.unwrap();
    let cpu = (cpu_seconds(hub.pid()) - cpu_before) / started.elapsed().as_secs_f64();
    latencies.sort();
    let p99 = latencies[latencies.len() * 99 / 100];
    println!(
        "flood: {held} of 2,500 connections kept ({stalled} stalled), {} GETs, p99 {p99:?}, hub CPU {cpu:.2} cores over {:?}",
        latencies.len(),
        started.elapsed()
    );
    assert_eq!(
        stalled, 500,
        "the stalled connections fit in one address's share"
    );
    assert_eq!(held, PER_ADDRESS, "one address holds at most its share");
    assert!(
        p99 < Duration::from_millis(50),
        "p99 of the other client's GETs: {p99:?}"
    );
    assert!(cpu < 1.0, "the hub used {cpu:.2} cores during the flood");
    let still_open = flooding.join().unwrap();
    assert_eq!(
        still_open, 0,
        "{still_open} idle or stalled connections still open after 30s"
    );

    // And serves the flooding address again.
    let again = open(&connector, flooder, address, PREFACE).await;
    assert!(again.is_some(), "the flooding address is served again");
    timed_get(&client).await;
}
