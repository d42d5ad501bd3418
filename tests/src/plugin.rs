//! A provider plugin process, started exactly as the engine starts one:
//! `pulumi-resource-<name> [flags] <engine-address>`, port read from the
//! first stdout line, then dialled on 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use pulumirpc::resource_provider_client::ResourceProviderClient;
use pulumirpc::*;
use tokio::io::{AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tonic::transport::Channel;

use crate::{cache_dir, host_bin, to_struct};

pub struct Plugin {
    pub client: ResourceProviderClient<Channel>,
    pub port: u16,
    child: Child,
    stderr: Arc<Mutex<String>>,
    _folder: Option<tempfile::TempDir>,
}

/// Runs `pulumi-wasm pack` into a fresh folder; returns it and the plugin executable.
pub fn pack(component: &Path) -> anyhow::Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir()?;
    let out = std::process::Command::new(host_bin())
        .arg("pack")
        .arg(component)
        .arg("--out")
        .arg(dir.path())
        .env("PULUMI_WASM_CACHE_DIR", cache_dir())
        .output()?;
    if !out.status.success() {
        bail!("pack failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let exe = std::fs::read_dir(dir.path())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.extension().is_none()
                && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("pulumi-resource-"))
        })
        .context("pack wrote no pulumi-resource-* executable")?;
    Ok((dir, exe))
}

impl Plugin {
    /// Packs `component` and starts the plugin with the engine's arguments.
    pub async fn packed(component: &Path, engine_address: Option<&str>) -> anyhow::Result<Plugin> {
        let (dir, exe) = pack(component)?;
        let args: Vec<String> = engine_address.into_iter().map(str::to_owned).collect();
        let mut p = Plugin::spawn(&exe, &args).await?;
        p._folder = Some(dir);
        Ok(p)
    }

    /// Starts `exe args...` and completes the port handshake.
    pub async fn spawn(exe: &Path, args: &[String]) -> anyhow::Result<Plugin> {
        let mut child = Command::new(exe)
            .args(args)
            .env("PULUMI_WASM_CACHE_DIR", cache_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", exe.display()))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().expect("piped stderr");
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
        // The engine reads one byte at a time up to the newline; so do we.
        let line = tokio::time::timeout(Duration::from_secs(120), async {
            let mut line = Vec::new();
            loop {
                match out.read_u8().await {
                    Ok(b'\n') => return Ok(line),
                    Ok(b) => line.push(b),
                    Err(e) => return Err(e),
                }
            }
        })
        .await;
        let line = match line {
            Ok(Ok(l)) => String::from_utf8(l)?,
            Ok(Err(_)) | Err(_) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                bail!("no port line; stderr: {}", stderr.lock().unwrap());
            }
        };
        let port: u16 = line.trim().parse().with_context(|| format!("port line {line:?}"))?;
        // Anything else on stdout is drained, as the engine does.
        tokio::spawn(async move {
            let mut rest = Vec::new();
            let _ = out.read_to_end(&mut rest).await;
        });
        let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))?.connect().await?;
        let client = ResourceProviderClient::new(channel)
            .max_decoding_message_size(400 << 20)
            .max_encoding_message_size(400 << 20);
        Ok(Plugin { client, port, child, stderr, _folder: None })
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The engine's boot sequence: Handshake, GetPluginInfo, CheckConfig,
    /// DiffConfig (first run: no olds), Configure.
    pub async fn boot(&mut self, engine_address: &str, config: serde_json::Value) -> anyhow::Result<String> {
        self.client
            .handshake(ProviderHandshakeRequest {
                engine_address: engine_address.to_owned(),
                configure_with_urn: true,
                supports_views: true,
                invoke_with_preview: true,
                accepts_byte_string: true,
                ..Default::default()
            })
            .await?;
        let version = self.client.get_plugin_info(()).await?.into_inner().version;
        let urn = "urn:pulumi:dev::proj::pulumi:providers:random::default".to_string();
        let checked = self
            .client
            .check_config(CheckRequest {
                urn: urn.clone(),
                name: "default".into(),
                r#type: "pulumi:providers:random".into(),
                olds: Some(to_struct(serde_json::json!({}))),
                news: Some(to_struct(config)),
                ..Default::default()
            })
            .await?
            .into_inner();
        self.client
            .configure(ConfigureRequest {
                args: checked.inputs,
                accept_secrets: true,
                accept_resources: true,
                sends_old_inputs: true,
                sends_old_inputs_to_delete: true,
                urn: Some(urn),
                name: Some("default".into()),
                r#type: Some("pulumi:providers:random".into()),
                ..Default::default()
            })
            .await?;
        Ok(version)
    }

    /// Sends SIGINT, as the engine does when it kills a plugin.
    pub fn interrupt(&self) -> anyhow::Result<()> {
        let pid = self.child.id().context("already exited")?;
        let status = std::process::Command::new("kill").arg("-INT").arg(pid.to_string()).status()?;
        anyhow::ensure!(status.success(), "kill -INT failed");
        Ok(())
    }

    /// Waits up to `limit` for the process to exit.
    pub async fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(limit, self.child.wait()).await.ok().and_then(Result::ok)
    }
}
