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
// Explicit: `pulumirpc::*` brings a message type named `Result` (resource.proto).
use std::result::Result;
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
    _policy: Option<tempfile::TempDir>,
}

/// Where a test puts the sandbox policy, each a way the host accepts one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyAt {
    /// `pulumi-wasm pack --policy FILE`: beside the packed plugin.
    Beside,
    /// The `PULUMI_WASM_POLICY` environment variable.
    EnvVar,
    /// `--policy FILE` on the plugin's command line.
    Flag,
}

/// How to start a packed plugin beyond what the engine does.
#[derive(Clone, Debug, Default)]
pub struct Launch {
    /// Extra environment variables of the plugin process.
    pub env: Vec<(String, String)>,
    /// Extra flags, before the engine address (e.g. `--allow-http URL`).
    pub args: Vec<String>,
    /// A policy file's TOML text, and where it goes.
    pub policy: Option<(String, PolicyAt)>,
    /// Extra arguments to `pulumi-wasm pack` (e.g. `--allow-http URL`).
    pub pack_args: Vec<String>,
}

impl Launch {
    pub fn new() -> Launch {
        Launch::default()
    }

    pub fn pack_arg(mut self, arg: &str) -> Self {
        self.pack_args.push(arg.to_owned());
        self
    }

    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_owned());
        self
    }

    pub fn policy(mut self, toml: &str, at: PolicyAt) -> Self {
        self.policy = Some((toml.to_owned(), at));
        self
    }
}

/// Runs `pulumi-wasm pack` into a fresh folder; returns it and the plugin executable.
pub fn pack(component: &Path) -> anyhow::Result<(tempfile::TempDir, PathBuf)> {
    pack_with(component, &[])
}

/// `pulumi-wasm pack` with extra arguments (e.g. `--policy FILE`).
pub fn pack_with(component: &Path, extra: &[String]) -> anyhow::Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir()?;
    let out = std::process::Command::new(host_bin())
        .arg("pack")
        .arg(component)
        .arg("--out")
        .arg(dir.path())
        .args(extra)
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

    /// Packs `component` and starts it as the engine would, with `launch`'s
    /// policy, flags and environment.
    pub async fn launch(component: &Path, engine_address: Option<&str>, launch: &Launch) -> anyhow::Result<Plugin> {
        let mut env = launch.env.clone();
        let mut args = launch.args.clone();
        let mut pack_args = launch.pack_args.clone();
        let mut policy_dir = None;
        if let Some((toml, at)) = &launch.policy {
            let dir = tempfile::tempdir()?;
            let file = dir.path().join("policy.toml");
            std::fs::write(&file, toml)?;
            let file = file.to_string_lossy().into_owned();
            match at {
                PolicyAt::Beside => pack_args.extend(["--policy".to_owned(), file]),
                PolicyAt::EnvVar => env.push(("PULUMI_WASM_POLICY".to_owned(), file)),
                PolicyAt::Flag => args.extend(["--policy".to_owned(), file]),
            }
            policy_dir = Some(dir);
        }
        let (dir, exe) = pack_with(component, &pack_args)?;
        args.extend(engine_address.map(str::to_owned));
        let mut p = Plugin::spawn_with(&exe, &args, &env).await?;
        p._folder = Some(dir);
        p._policy = policy_dir;
        Ok(p)
    }

    /// Starts `exe args...` and completes the port handshake.
    pub async fn spawn(exe: &Path, args: &[String]) -> anyhow::Result<Plugin> {
        Plugin::spawn_with(exe, args, &[]).await
    }

    /// [`Plugin::spawn`] with extra environment variables.
    pub async fn spawn_with(exe: &Path, args: &[String], env: &[(String, String)]) -> anyhow::Result<Plugin> {
        Plugin::spawn_in(exe, args, env, None).await
    }

    /// [`Plugin::spawn_with`] in the directory `cwd` (the engine starts a
    /// plugin in the user's project).
    pub async fn spawn_in(
        exe: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&Path>,
    ) -> anyhow::Result<Plugin> {
        let mut command = Command::new(exe);
        if let Some(dir) = cwd {
            command.current_dir(dir);
        }
        let mut child = command
            .args(args)
            .env("PULUMI_WASM_CACHE_DIR", cache_dir())
            // Nothing from the developer's own setup: registry logins, credentials, tokens.
            .env("DOCKER_CONFIG", "/nonexistent/docker-config")
            .env_remove("PULUMI_WASM_OCI_USERNAME")
            .env_remove("PULUMI_WASM_OCI_PASSWORD")
            .env_remove("PULUMI_WASM_OCI_INSECURE")
            .env_remove("PULUMI_WASM_OCI_REGISTRY")
            .env_remove("PULUMI_WASM_APPROVED")
            .env_remove("KV_TOKEN")
            .envs(env.iter().map(|(k, v)| (k, v)))
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
        Ok(Plugin { client, port, child, stderr, _folder: None, _policy: None })
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Stderr once it holds `needle`, or as it is after `within`: it is
    /// read as it comes, so a line just written may not be there yet.
    pub async fn stderr_with(&self, needle: &str, within: Duration) -> String {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let text = self.stderr();
            if text.contains(needle) || tokio::time::Instant::now() >= deadline {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The process's resident memory (`VmRSS`), in bytes.
    pub fn rss(&self) -> Option<u64> {
        self.proc_status("VmRSS:")
    }

    /// The process's peak resident memory so far (`VmHWM`), in bytes.
    pub fn peak_rss(&self) -> Option<u64> {
        self.proc_status("VmHWM:")
    }

    /// A `kB` line of `/proc/<pid>/status`, in bytes.
    fn proc_status(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        let kib: u64 = line[field.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    }

    /// True while the process has not exited.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
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
