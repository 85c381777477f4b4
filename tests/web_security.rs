//! Our own endpoints: TLS (with certificate reload and client
//! certificates), basic auth, the lifecycle gate, and idle connections
//! under a low fd limit. Real processes, real TLS, a real client.

use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{http_get, http_post, wait_for, ClosedPort, Exporter, Proc};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A certificate authority made for one test.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// (certificate PEM, key PEM) for `127.0.0.1` / `localhost`.
    fn leaf(&self, usage: ExtendedKeyUsagePurpose) -> (String, String) {
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// An exporter with `flags` whose one target is down (its port refuses).
fn exporter(closed: &ClosedPort, flags: &[&str]) -> Exporter {
    Exporter::start_with(
        &format!(
            "targets:\n  - name: down\n    http:\n      url: {}\n    schedule: {{every: 1h}}\n",
            closed.url("/mcp")
        ),
        flags,
        &[],
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// GET `url` with `client`; the status, or None when no HTTP answer came
/// (refused handshake, closed connection).
fn get(client: &reqwest::Client, url: &str, auth: Option<(&str, &str)>) -> Option<u16> {
    runtime().block_on(async {
        let mut req = client.get(url).timeout(LIMIT);
        if let Some((user, password)) = auth {
            req = req.basic_auth(user, Some(password));
        }
        req.send().await.ok().map(|r| r.status().as_u16())
    })
}

fn client_trusting(ca: &Ca, identity: Option<(&str, &str)>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.pem.as_bytes()).unwrap()]);
    if let Some((cert, key)) = identity {
        builder = builder
            .identity(reqwest::Identity::from_pem(format!("{cert}{key}").as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

#[test]
fn tls_with_client_certificates_and_basic_auth() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test server CA");
    let client_ca = Ca::new("test client CA");
    let (cert, key) = ca.leaf(ExtendedKeyUsagePurpose::ServerAuth);
    std::fs::write(dir.path().join("server.crt"), &cert).unwrap();
    std::fs::write(dir.path().join("server.key"), &key).unwrap();
    std::fs::write(dir.path().join("clients.crt"), &client_ca.pem).unwrap();
    let hash = bcrypt::hash("right-password", 4).unwrap();
    let web = dir.path().join("web.yml");
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: clients.crt\n  min_version: TLS12\nbasic_auth_users:\n  prometheus: {hash}\n"
        ),
    )
    .unwrap();
    let closed = ClosedPort::new();
    let exp = exporter(&closed, &["--web.config.file", web.to_str().unwrap()]);
    assert!(exp.url().starts_with("https://"), "{}", exp.url());
    let metrics = exp.at("/metrics");

    let (ccert, ckey) = client_ca.leaf(ExtendedKeyUsagePurpose::ClientAuth);
    let with_cert = client_trusting(&ca, Some((&ccert, &ckey)));
    assert_eq!(
        get(&with_cert, &metrics, Some(("prometheus", "right-password"))),
        Some(200)
    );
    assert_eq!(
        get(&with_cert, &metrics, Some(("prometheus", "wrong"))),
        Some(401)
    );
    assert_eq!(
        get(&with_cert, &metrics, Some(("nobody", "right-password"))),
        Some(401)
    );
    assert_eq!(get(&with_cert, &metrics, None), Some(401));
    assert_eq!(get(&with_cert, &exp.at("/-/healthy"), None), Some(401));

    // No client certificate, or one from another CA: no HTTP at all.
    let without_cert = client_trusting(&ca, None);
    assert_eq!(
        get(
            &without_cert,
            &metrics,
            Some(("prometheus", "right-password"))
        ),
        None
    );
    let stranger = Ca::new("stranger");
    let (scert, skey) = stranger.leaf(ExtendedKeyUsagePurpose::ClientAuth);
    let wrong_ca = client_trusting(&ca, Some((&scert, &skey)));
    assert_eq!(
        get(&wrong_ca, &metrics, Some(("prometheus", "right-password"))),
        None
    );
    // Plain HTTP to the TLS port: no HTTP answer.
    let plain = reqwest::Client::new();
    let http_url = metrics.replacen("https://", "http://", 1);
    assert_ne!(
        get(&plain, &http_url, Some(("prometheus", "right-password"))),
        Some(200)
    );
    assert!(!exp.stderr().contains(&hash), "the hash reached the log");
}

#[test]
fn renewed_certificates_are_picked_up_without_restart() {
    let dir = tempfile::tempdir().unwrap();
    let old_ca = Ca::new("old CA");
    let new_ca = Ca::new("new CA");
    let (cert, key) = old_ca.leaf(ExtendedKeyUsagePurpose::ServerAuth);
    std::fs::write(dir.path().join("server.crt"), &cert).unwrap();
    std::fs::write(dir.path().join("server.key"), &key).unwrap();
    let web = dir.path().join("web.yml");
    std::fs::write(
        &web,
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n",
    )
    .unwrap();
    let closed = ClosedPort::new();
    let exp = exporter(&closed, &["--web.config.file", web.to_str().unwrap()]);
    let healthy = exp.at("/-/healthy");
    assert_eq!(
        get(&client_trusting(&old_ca, None), &healthy, None),
        Some(200)
    );
    assert_eq!(get(&client_trusting(&new_ca, None), &healthy, None), None);

    let (cert, key) = new_ca.leaf(ExtendedKeyUsagePurpose::ServerAuth);
    std::fs::write(dir.path().join("server.key"), &key).unwrap();
    std::fs::write(dir.path().join("server.crt"), &cert).unwrap();
    wait_for(LIMIT, "the renewed certificate", || {
        (get(&client_trusting(&new_ca, None), &healthy, None) == Some(200)).then_some(())
    });
    assert_eq!(get(&client_trusting(&old_ca, None), &healthy, None), None);
}

#[test]
fn reload_over_http_needs_the_lifecycle_flag() {
    let closed = ClosedPort::new();
    let exp = exporter(&closed, &[]);
    let (status, body) = http_post(&exp.at("/-/reload"));
    assert_eq!(status, 403, "{body}");
    let exp = exporter(&closed, &["--web.enable-lifecycle"]);
    let (status, body) = http_post(&exp.at("/-/reload"));
    assert_eq!(status, 200, "{body}");
}

/// Item 3: ~1,100 idle and half-sent connections under `ulimit -n 1024`
/// take nothing down: `/-/healthy` answers and polls go on.
#[test]
fn idle_connections_do_not_exhaust_fds() {
    let sim = http_scenario("healthy", &["--kinds", "tools"]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\ntargets:\n  - name: healthy\n    http:\n      url: {}/mcp\n    kinds: [tools]\n",
            sim.url
        ),
    )
    .unwrap();
    let exp = low_fd_exporter(&cfg);
    let polls = |exp: &Proc| -> u64 {
        let (_, body) = http_get(&exp.at("/api/targets/healthy"));
        serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["polls"].as_u64())
            .unwrap_or(0)
    };
    wait_for(LIMIT, "a first poll", || (polls(&exp) >= 1).then_some(()));

    let addr = exp.url.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for i in 0..1100 {
        let Ok(mut s) = std::net::TcpStream::connect(&addr) else {
            continue;
        };
        if i % 2 == 0 {
            // Half-sent: a request line and no end of headers.
            use std::io::Write;
            let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n");
        }
        held.push(s);
    }
    assert!(held.len() >= 1000, "only {} connections opened", held.len());
    let before = polls(&exp);
    let (status, body) = http_get(&exp.at("/-/healthy"));
    assert_eq!(status, 200, "{body}");
    wait_for(LIMIT, "3 more polls while the connections are held", || {
        (polls(&exp) >= before + 3).then_some(())
    });
    let (_, body) = http_get(&exp.at("/api/targets/healthy"));
    assert!(!body.contains("Too many open files"), "{body}");
    drop(held);
}

/// The exporter under `ulimit -n 1024`, killed on drop.
fn low_fd_exporter(cfg: &Path) -> Proc {
    let mut command = std::process::Command::new("sh");
    command.args([
        "-c",
        "ulimit -n 1024 && exec \"$0\" \"$@\"",
        mcp_testkit::exporter_bin().to_str().unwrap(),
        "--config.file",
        cfg.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    Proc::spawn("mcp-exporter under ulimit -n 1024", command)
}
