//! h3load-rs: an HTTP/3 load generator on hyperium's h3 and quinn, for
//! riptide's bench harness (the h3rs workload, bench/internal/harness).
//!
//! It opens C QUIC connections (one quinn endpoint, so one UDP socket,
//! each) to the URL, keeps S requests in flight on each for the duration,
//! and checks every response: status 200 and a body of the expected length
//! (and, with -expect-body, the expected bytes). Requests that complete
//! after the duration are not counted. It prints one line of JSON:
//!
//!   {"client":"h3load-rs","connections":C,"streams":S,"requests":N,
//!    "errors":E,"bad_status":B,"bytes":X,"seconds":T,"rps":R,
//!    "p50_us":..,"p90_us":..,"p99_us":..,"max_us":..,"first_error":".."}
//!
//! errors counts requests that failed (stream or connection errors, a
//! body of the wrong length or content); bad_status counts responses whose
//! status was not 200. The server's certificate is not verified (the
//! bench servers make a self-signed one at start).
//!
//! Usage: h3load-rs [-c C] [-s S] [-d SECONDS] [-t THREADS] [-method M]
//!                  [-expect-len N | -expect-body TEXT] https://127.0.0.1:PORT/PATH

use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes};
use tokio::time::Instant;

/// Command-line options.
struct Opts {
    conns: usize,
    streams: usize,
    duration: Duration,
    threads: usize,
    method: http::Method,
    expect_len: Option<u64>,
    expect_body: Option<Bytes>,
    url: String,
    addr: SocketAddr,
}

fn usage() -> String {
    "usage: h3load-rs [-c C] [-s S] [-d SECONDS] [-t THREADS] [-method M] \
     [-expect-len N | -expect-body TEXT] https://HOST:PORT/PATH"
        .to_string()
}

fn parse_args() -> Result<Opts, String> {
    let mut args = std::env::args().skip(1);
    let mut o = Opts {
        conns: 10,
        streams: 10,
        duration: Duration::from_secs(5),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        method: http::Method::GET,
        expect_len: None,
        expect_body: None,
        url: String::new(),
        addr: SocketAddr::from(([127, 0, 0, 1], 443)),
    };
    while let Some(a) = args.next() {
        if !a.starts_with('-') {
            // The positional argument: the URL.
            if !o.url.is_empty() {
                return Err(format!("more than one URL\n{}", usage()));
            }
            o.url = a;
            continue;
        }
        let a = a.trim_start_matches('-').to_string();
        let mut val = || {
            args.next()
                .ok_or_else(|| format!("-{a} needs a value\n{}", usage()))
        };
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("-{a} {v}: {e}"));
        match a.as_str() {
            "c" => o.conns = num(val()?)? as usize,
            "s" => o.streams = num(val()?)? as usize,
            "t" => o.threads = num(val()?)? as usize,
            "d" => {
                let v = val()?;
                let s: f64 = v.parse().map_err(|e| format!("-d {v}: {e}"))?;
                if !(s > 0.0 && s.is_finite()) {
                    return Err(format!("-d {v}: want a positive number of seconds"));
                }
                o.duration = Duration::from_secs_f64(s);
            }
            "method" => {
                let v = val()?;
                o.method = v.parse().map_err(|e| format!("-method {v}: {e}"))?;
            }
            "expect-len" => o.expect_len = Some(num(val()?)?),
            "expect-body" => o.expect_body = Some(Bytes::from(val()?.into_bytes())),
            "h" | "help" => return Err(usage()),
            _ => return Err(format!("unknown flag -{a}\n{}", usage())),
        }
    }
    if o.conns == 0 || o.streams == 0 || o.threads == 0 {
        return Err("-c, -s and -t must be at least 1".into());
    }
    if o.expect_len.is_some() && o.expect_body.is_some() {
        return Err("-expect-len and -expect-body exclude each other".into());
    }
    if let Some(b) = &o.expect_body {
        o.expect_len = Some(b.len() as u64);
    }
    if o.expect_len.is_none() {
        return Err(format!(
            "one of -expect-len and -expect-body is required\n{}",
            usage()
        ));
    }
    let rest = o
        .url
        .strip_prefix("https://")
        .ok_or_else(|| format!("want an https:// URL, got {:?}\n{}", o.url, usage()))?;
    let authority = rest.split('/').next().unwrap_or_default();
    o.addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("{authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority}: no address"))?;
    Ok(o)
}

/// Accepts any server certificate: the bench servers' certificates are
/// self-signed and made at start.
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn client_config() -> Result<quinn::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let q = quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
    let mut cc = quinn::ClientConfig::new(Arc::new(q));
    let mut tc = quinn::TransportConfig::default();
    tc.max_idle_timeout(Some(
        Duration::from_secs(30)
            .try_into()
            .map_err(|e| format!("{e}"))?,
    ));
    cc.transport_config(Arc::new(tc));
    Ok(cc)
}

type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// One open HTTP/3 connection: its endpoint and request sender.
struct Conn {
    endpoint: quinn::Endpoint,
    quic: quinn::Connection,
    sender: Sender,
}

/// The receive buffer asked for the client's UDP socket: quic-go's (7 MiB),
/// capped by the system (net.core.rmem_max). With the default (~208 KiB) a
/// client descheduled for a moment on a loaded machine drops the server's
/// datagrams during a bulk download, and each loss halves the sender's
/// window: the MB/s then measures the drops, not the server.
const RECV_BUFFER: usize = 7 << 20;

/// A UDP socket bound to local with the larger receive buffer (best
/// effort: a smaller one is kept when the system refuses).
fn udp_socket(local: SocketAddr) -> Result<std::net::UdpSocket, String> {
    let s = socket2::Socket::new(
        socket2::Domain::for_address(local),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )
    .map_err(|e| format!("socket: {e}"))?;
    let _ = s.set_recv_buffer_size(RECV_BUFFER);
    s.bind(&local.into())
        .map_err(|e| format!("bind {local}: {e}"))?;
    Ok(s.into())
}

async fn dial(o: &Opts, cc: quinn::ClientConfig) -> Result<Conn, String> {
    let local: SocketAddr = if o.addr.is_ipv6() {
        "[::]:0".parse().unwrap()
    } else {
        "0.0.0.0:0".parse().unwrap()
    };
    let mut endpoint = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        None,
        udp_socket(local)?,
        Arc::new(quinn::TokioRuntime),
    )
    .map_err(|e| format!("endpoint: {e}"))?;
    endpoint.set_default_client_config(cc);
    let quic = endpoint
        .connect(o.addr, "localhost")
        .map_err(|e| format!("connect {}: {e}", o.addr))?
        .await
        .map_err(|e| format!("handshake with {}: {e}", o.addr))?;
    let (mut driver, sender) = h3::client::new(h3_quinn::Connection::new(quic.clone()))
        .await
        .map_err(|e| format!("h3 setup: {e}"))?;
    tokio::spawn(async move {
        let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
    });
    Ok(Conn {
        endpoint,
        quic,
        sender,
    })
}

/// What one worker counted.
#[derive(Default)]
struct Counts {
    requests: u64,
    errors: u64,
    bad_status: u64,
    bytes: u64,
    lat_us: Vec<u32>,
    first_error: Option<String>,
}

impl Counts {
    fn fail(&mut self, e: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(e);
        }
    }
}

/// The outcome of one request.
enum Outcome {
    /// Status and body length; the body was checked when the status is 200.
    Done(u16, u64),
    /// The request failed; fatal when the connection can take no more.
    Failed(String, bool),
}

async fn one(sender: &mut Sender, req: http::Request<()>, o: &Opts) -> Outcome {
    let mut s = match sender.send_request(req).await {
        Ok(s) => s,
        Err(e) => return Outcome::Failed(format!("send request: {e}"), true),
    };
    if let Err(e) = s.finish().await {
        return Outcome::Failed(format!("finish request: {e}"), false);
    }
    let status = match s.recv_response().await {
        Ok(r) => r.status().as_u16(),
        Err(e) => return Outcome::Failed(format!("response: {e}"), false),
    };
    let want = o.expect_len.unwrap_or(0);
    let mut n: u64 = 0;
    loop {
        match s.recv_data().await {
            Ok(Some(mut chunk)) => {
                while chunk.has_remaining() {
                    let c = chunk.chunk();
                    let k = c.len() as u64;
                    if status == 200 {
                        if let Some(b) = &o.expect_body {
                            if n + k > want || c != &b[n as usize..(n + k) as usize] {
                                // Dropping the stream stops it (h3-quinn 0.0.10's
                                // stop_sending panics on a stream read to its end).
                                return Outcome::Failed(
                                    format!("body differs from the expected {want} bytes"),
                                    false,
                                );
                            }
                        }
                        if n + k > want {
                            return Outcome::Failed(
                                format!("body longer than the expected {want} bytes"),
                                false,
                            );
                        }
                    }
                    n += k;
                    chunk.advance(c.len());
                }
            }
            Ok(None) => break,
            Err(e) => return Outcome::Failed(format!("body after {n} bytes: {e}"), false),
        }
    }
    if status == 200 && n != want {
        return Outcome::Failed(format!("body of {n} bytes, want {want}"), false);
    }
    Outcome::Done(status, n)
}

async fn worker(
    mut sender: Sender,
    o: Arc<Opts>,
    deadline: Instant,
    stop: Arc<AtomicBool>,
) -> Counts {
    let mut c = Counts::default();
    let hard = deadline + Duration::from_secs(10);
    while !stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        if t0 >= deadline {
            break;
        }
        let req = match http::Request::builder()
            .method(o.method.clone())
            .uri(o.url.as_str())
            .header("user-agent", "riptide-bench-h3load-rs")
            .body(())
        {
            Ok(r) => r,
            Err(e) => {
                c.fail(format!("request: {e}"));
                break;
            }
        };
        let out = match tokio::time::timeout_at(hard, one(&mut sender, req, &o)).await {
            Ok(out) => out,
            Err(_) => Outcome::Failed("timed out 10 s after the duration".into(), true),
        };
        let t1 = Instant::now();
        match out {
            Outcome::Failed(e, fatal) => {
                c.fail(e);
                if fatal {
                    break;
                }
            }
            Outcome::Done(status, n) => {
                if t1 > deadline {
                    break; // finished after the window: not counted
                }
                if status != 200 {
                    c.bad_status += 1;
                    continue;
                }
                c.requests += 1;
                c.bytes += n;
                c.lat_us
                    .push((t1 - t0).as_micros().min(u32::MAX as u128) as u32);
            }
        }
    }
    c
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

async fn run(o: Opts) -> Result<String, String> {
    let cc = client_config()?;
    let mut conns = Vec::with_capacity(o.conns);
    for _ in 0..o.conns {
        conns.push(dial(&o, cc.clone()).await?);
    }
    let o = Arc::new(o);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let deadline = start + o.duration;
    let mut tasks = Vec::with_capacity(o.conns * o.streams);
    for c in &conns {
        for _ in 0..o.streams {
            tasks.push(tokio::spawn(worker(
                c.sender.clone(),
                o.clone(),
                deadline,
                stop.clone(),
            )));
        }
    }
    let mut all = Counts::default();
    for t in tasks {
        let c = t.await.map_err(|e| format!("worker: {e}"))?;
        all.requests += c.requests;
        all.errors += c.errors;
        all.bad_status += c.bad_status;
        all.bytes += c.bytes;
        all.lat_us.extend(c.lat_us);
        if all.first_error.is_none() {
            all.first_error = c.first_error;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for c in &conns {
        c.quic.close(quinn::VarInt::from_u32(0x100), b""); // H3_NO_ERROR
    }
    for c in &conns {
        c.endpoint.wait_idle().await;
    }
    all.lat_us.sort_unstable();
    let pct = |p: usize| -> u32 {
        let n = all.lat_us.len();
        if n == 0 {
            0
        } else {
            all.lat_us[(n * p / 100).min(n - 1)]
        }
    };
    Ok(format!(
        "{{\"client\":\"h3load-rs\",\"connections\":{},\"streams\":{},\"requests\":{},\"errors\":{},\"bad_status\":{},\"bytes\":{},\"seconds\":{:.6},\"rps\":{:.1},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"max_us\":{},\"first_error\":{}}}",
        o.conns,
        o.streams,
        all.requests,
        all.errors,
        all.bad_status,
        all.bytes,
        secs,
        all.requests as f64 / secs,
        pct(50),
        pct(90),
        pct(99),
        all.lat_us.last().copied().unwrap_or(0),
        all.first_error.as_deref().map_or("null".to_string(), json_string),
    ))
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("h3load-rs: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(o.threads)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("h3load-rs: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(o)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("h3load-rs: {e}");
            ExitCode::FAILURE
        }
    }
}
