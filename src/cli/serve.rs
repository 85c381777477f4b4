//! `mcp-exporter [serve]`: load the config, start pollers and the web server.

use crate::baseline::BaselineStore;
use crate::config;
use crate::poll::unix_now;
use crate::poller::{Service, Shard};
use crate::sinks::{Sinks, StatusStore};
use crate::telemetry::metrics::{ExporterMetrics, TargetMetrics};
use crate::telemetry::tracing::{TraceSettings, TraceSink};
use crate::web::{router, AppState};
use prometheus_client::registry::Registry;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Configuration file.
    #[arg(long = "config.file", default_value = "mcp-exporter.yaml")]
    pub config_file: PathBuf,
    /// Address for /metrics, /probe, the status page and the API.
    #[arg(long = "web.listen-address", default_value = "0.0.0.0:9733")]
    pub listen_address: String,
    /// Poll only the targets in shard i of n (stable hash of the name).
    #[arg(long, value_parser = Shard::parse)]
    pub shard: Option<Shard>,
}

pub async fn main(args: ServeArgs) -> ExitCode {
    let loaded = match config::load_file(&args.config_file) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("mcp-exporter: {e}");
            return ExitCode::from(2);
        }
    };
    for w in &loaded.warnings {
        tracing::warn!("{w}");
    }
    let tc = &loaded.config.tracing;
    let settings = TraceSettings {
        endpoint: tc.endpoint.clone(),
        protocol: tc.protocol.clone(),
        headers: tc
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect(),
        service_name: tc.service_name.clone(),
        sample_ratio: tc.sample_ratio,
    };
    let traces = match TraceSink::from_settings(&settings) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mcp-exporter: tracing: {e}");
            return ExitCode::from(2);
        }
    };
    let (baselines, problems) = BaselineStore::open(loaded.config.defaults.state_dir.as_deref());
    for p in problems {
        tracing::warn!(error = %p, "baseline not loaded");
    }
    let mut registry = Registry::default();
    let metrics = TargetMetrics::new(&mut registry);
    let exporter = ExporterMetrics::new(
        &mut registry,
        env!("CARGO_PKG_VERSION"),
        option_env!("MCP_EXPORTER_REVISION").unwrap_or("unknown"),
    );
    exporter.config_reloaded(true, unix_now());
    let history = loaded.config.web.history;
    let sinks = Sinks {
        baselines: Mutex::new(baselines),
        metrics,
        exporter,
        traces: traces.clone(),
        status: StatusStore::new(history),
    };
    let service = Service::new(loaded, args.config_file.clone(), args.shard, sinks);
    let listener = match tokio::net::TcpListener::bind(&args.listen_address).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "mcp-exporter: cannot listen on {}: {e}",
                args.listen_address
            );
            return ExitCode::from(2);
        }
    };
    let local = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| args.listen_address.clone());
    service.start();
    tracing::info!(address = %local, config = %args.config_file.display(), "mcp-exporter listening");
    // Tests and scripts read this line to find a port chosen by the OS.
    eprintln!("listening on http://{local}");

    tokio::spawn(reload_on_sighup(service.clone()));
    let app = router(AppState {
        service: service.clone(),
        registry: Arc::new(registry),
    });
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await;
    service.stop();
    traces.shutdown().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-exporter: server error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn reload_on_sighup(service: Arc<Service>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hup) = signal(SignalKind::hangup()) else {
            return;
        };
        while hup.recv().await.is_some() {
            match service.reload().await {
                Ok(outcome) => tracing::info!(?outcome, "config reloaded on SIGHUP"),
                Err(e) => {
                    tracing::error!(error = %e, "config reload failed; keeping the running config")
                }
            }
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
