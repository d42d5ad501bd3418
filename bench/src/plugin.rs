//! A provider plugin process started exactly as the Pulumi engine starts one:
//! `<exe> <engine-address>`, the port read byte by byte from the first stdout
//! line, then dialled on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use pulumirpc::resource_provider_client::ResourceProviderClient;
use tokio::io::{AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tonic::transport::Channel;

/// How to start one provider.
#[derive(Clone, Debug)]
pub struct Launch {
    pub exe: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Launch {
    pub fn new(exe: impl Into<PathBuf>) -> Self {
        Launch { exe: exe.into(), env: vec![] }
    }

    pub fn env(mut self, k: &str, v: impl AsRef<Path>) -> Self {
        self.env.push((k.to_owned(), v.as_ref().to_string_lossy().into_owned()));
        self
    }
}

pub struct Plugin {
    pub client: ResourceProviderClient<Channel>,
    /// From spawning the process to reading its port line.
    pub startup: Duration,
    /// When the process was spawned.
    pub began: Instant,
    child: Child,
    stderr: Arc<Mutex<String>>,
}

/// Bytes of a plugin's stderr kept for error messages.
const STDERR_TAIL: usize = 16 * 1024;

impl Plugin {
    pub async fn start(launch: &Launch, engine_address: &str) -> anyhow::Result<Plugin> {
        let began = Instant::now();
        // BENCH_PROVIDER_ENV="K=V,K2=V2": extra environment for every provider (experiments).
        let extra: Vec<(String, String)> = std::env::var("BENCH_PROVIDER_ENV")
            .unwrap_or_default()
            .split(',')
            .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
            .collect();
        let mut child = Command::new(&launch.exe)
            .arg(engine_address)
            .envs(launch.env.iter().chain(&extra).map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", launch.exe.display()))?;
        let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
        let line = tokio::time::timeout(Duration::from_secs(120), async {
            let mut line = Vec::new();
            loop {
                match out.read_u8().await? {
                    b'\n' => return Ok::<_, std::io::Error>(line),
                    b => line.push(b),
                }
            }
        })
        .await;
        let startup = began.elapsed();
        // Stderr is drained all along: a provider that logs must never block on a full pipe.
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().expect("piped stderr");
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = err_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut s = sink.lock().unwrap();
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
                if s.len() > 2 * STDERR_TAIL {
                    let cut = s.len() - STDERR_TAIL;
                    let cut = (cut..s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(s.len());
                    s.drain(..cut);
                }
            }
        });
        let line = match line {
            Ok(Ok(l)) => String::from_utf8(l)?,
            _ => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                bail!("{}: no port line; stderr: {}", launch.exe.display(), stderr.lock().unwrap());
            }
        };
        let port: u16 = line.trim().parse().with_context(|| format!("port line {line:?}"))?;
        tokio::spawn(async move {
            let mut rest = Vec::new();
            let _ = out.read_to_end(&mut rest).await;
        });
        let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))?.connect().await?;
        let client = ResourceProviderClient::new(channel)
            .max_decoding_message_size(400 << 20)
            .max_encoding_message_size(400 << 20);
        Ok(Plugin { client, startup, began, child, stderr })
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Peak resident memory so far (`VmHWM`), in bytes.
    pub fn peak_rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line["VmHWM:".len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    }

    /// Stops the process (SIGKILL) and reaps it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
