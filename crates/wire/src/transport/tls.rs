//! TLS settings for our HTTP client, built once and shared. Building them
//! reads and parses every system root certificate (plus the CA file): at
//! 2,000 targets polled every 30 s that was the largest CPU cost of a poll,
//! more than the whole MCP exchange. The settings depend only on the CA
//! file and `insecure_skip_verify`, so one copy per combination serves every
//! target and poll; a changed CA file (size or mtime) or an entry older than
//! [`REFRESH_AFTER`] is rebuilt, so rotated roots are picked up without a
//! restart. Sharing also shares rustls's bounded session cache, so HTTPS
//! polls resume TLS sessions instead of full handshakes.

use super::ExchangeError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How long built settings are reused before the roots are read again.
pub const REFRESH_AFTER: Duration = Duration::from_secs(600);

/// Distinct settings kept (configs name few CA files; bounded anyway).
const MAX_KEPT: usize = 32;

#[derive(Clone, PartialEq, Eq)]
struct Key {
    ca_file: Option<PathBuf>,
    /// The CA file's size and modification time, so a replaced file counts
    /// as other settings.
    ca_stamp: Option<(u64, SystemTime)>,
    insecure: bool,
}

struct Kept {
    key: Key,
    built: Instant,
    config: Arc<rustls::ClientConfig>,
}

static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// The client TLS settings for this CA file and verification mode; built
/// on first use, then shared. Errors (an unreadable CA file) are not kept.
pub fn client_config(
    ca_file: Option<&Path>,
    insecure: bool,
) -> Result<Arc<rustls::ClientConfig>, ExchangeError> {
    let ca_stamp = match ca_file {
        Some(path) => {
            let meta = std::fs::metadata(path).map_err(|e| {
                ExchangeError::transport(format!("reading CA file {}: {e}", path.display()))
            })?;
            Some((
                meta.len(),
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            ))
        }
        None => None,
    };
    let key = Key {
        ca_file: ca_file.map(Path::to_path_buf),
        ca_stamp,
        insecure,
    };
    let now = Instant::now();
    {
        // A poisoned lock only means another thread panicked mid-update of
        // a plain Vec; its entries are still whole.
        let kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = kept
            .iter()
            .find(|k| k.key == key && now.duration_since(k.built) < REFRESH_AFTER)
        {
            return Ok(k.config.clone());
        }
    }
    // Built outside the lock: reading the roots takes milliseconds.
    let config = Arc::new(build(ca_file, insecure)?);
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    kept.retain(|k| k.key != key && now.duration_since(k.built) < REFRESH_AFTER);
    if kept.len() >= MAX_KEPT {
        kept.remove(0);
    }
    kept.push(Kept {
        key,
        built: now,
        config: config.clone(),
    });
    Ok(config)
}

fn build(ca_file: Option<&Path>, insecure: bool) -> Result<rustls::ClientConfig, ExchangeError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ExchangeError::transport(format!("TLS set-up: {e}")))?;
    if insecure {
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth());
    }
    let mut roots = rustls::RootCertStore::empty();
    // Unreadable system certificates are not fatal: a CA file may be all
    // that is needed.
    let native = rustls_native_certs::load_native_certs();
    for cert in native.certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = ca_file {
        let pem = std::fs::read(path).map_err(|e| {
            ExchangeError::transport(format!("reading CA file {}: {e}", path.display()))
        })?;
        use rustls::pki_types::pem::PemObject;
        let mut added = 0;
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| {
                ExchangeError::transport(format!("CA file {}: {e}", path.display()))
            })?;
            roots.add(cert).map_err(|e| {
                ExchangeError::transport(format!("CA file {}: {e}", path.display()))
            })?;
            added += 1;
        }
        if added == 0 {
            return Err(ExchangeError::transport(format!(
                "CA file {} holds no certificate",
                path.display()
            )));
        }
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}

/// `tls.insecure_skip_verify`: accepts any certificate (signatures are
/// still checked so the handshake is well-formed). Loudly warned about at
/// config load.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_settings_are_built_once_and_shared() {
        let a = client_config(None, true).unwrap();
        let b = client_config(None, true).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let verified = client_config(None, false).unwrap();
        assert!(!Arc::ptr_eq(&a, &verified));
    }

    #[test]
    fn a_replaced_ca_file_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        let cert = |name: &str| {
            rcgen::generate_simple_self_signed(vec![name.to_string()])
                .unwrap()
                .cert
                .pem()
        };
        std::fs::write(&path, cert("one.test")).unwrap();
        let first = client_config(Some(&path), false).unwrap();
        assert!(Arc::ptr_eq(
            &first,
            &client_config(Some(&path), false).unwrap()
        ));
        // Two certificates: another size, so other settings.
        std::fs::write(&path, cert("one.test") + &cert("two.test")).unwrap();
        let second = client_config(Some(&path), false).unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        std::fs::remove_file(&path).unwrap();
        assert!(client_config(Some(&path), false).is_err());
    }
}
