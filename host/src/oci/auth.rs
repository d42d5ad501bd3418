//! Which credentials a registry gets: `PULUMI_WASM_OCI_USERNAME`/`_PASSWORD`
//! when set (and `PULUMI_WASM_OCI_REGISTRY`, if set, names it), else what
//! `docker login` stored for that registry (the Docker config's `auths`,
//! `credHelpers` or `credsStore`, read by `docker_credential`, which also
//! runs the helpers), else none. Either way a registry that answers with a
//! bearer-token challenge gets the token flow (`fetch.rs` when pulling,
//! `oci-client` when pushing).

use std::fmt;
use std::path::PathBuf;

use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::secrets::RegistryAuth;

use super::{OciError, Reference};

/// Credentials for one registry, and where they came from (for messages).
pub(super) struct Credentials {
    pub auth: RegistryAuth,
    pub source: Source,
}

pub(super) enum Source {
    Anonymous,
    Environment(String),
    DockerConfig {
        user: String,
        file: PathBuf,
    },
    /// The config held an identity token, which cannot be used: none sent.
    IdentityToken(PathBuf),
    /// The environment's credentials are for another registry (or only for
    /// references the user gives): none sent.
    Withheld,
    /// The Docker config's credentials could not be read (a credential
    /// helper missing, failing or not answering): none sent, so that a
    /// public artifact still pulls; a refusal says why.
    Unreadable(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Anonymous => write!(f, "no credentials"),
            Source::Environment(user) => write!(f, "user '{user}' from PULUMI_WASM_OCI_USERNAME"),
            Source::DockerConfig { user, file } => write!(f, "user '{user}' from {}", file.display()),
            Source::Withheld => write!(f, "no credentials (PULUMI_WASM_OCI_USERNAME's are not for this registry)"),
            Source::IdentityToken(file) => {
                write!(f, "no credentials (the identity token in {} is unusable)", file.display())
            }
            Source::Unreadable(why) => write!(f, "no credentials ({why})"),
        }
    }
}

/// `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json` (on Windows
/// `%USERPROFILE%\.docker`), as Docker looks.
pub(super) fn docker_config_file() -> Option<PathBuf> {
    let dir = std::env::var_os("DOCKER_CONFIG").filter(|v| !v.is_empty()).map(PathBuf::from);
    dir.or_else(|| std::env::home_dir().map(|home| home.join(".docker"))).map(|dir| dir.join("config.json"))
}

/// Whether `a` and `b` name the same registry (Docker Hub goes by several names).
pub(super) fn same_registry(a: &str, b: &str) -> bool {
    docker_key(a) == docker_key(b)
}

/// The key `docker login` files a registry under: Docker Hub keeps its old URL.
fn docker_key(registry: &str) -> &str {
    match registry {
        "docker.io" | "index.docker.io" | "registry-1.docker.io" => "https://index.docker.io/v1/",
        other => other,
    }
}

/// Resolves the credentials for `reference`'s registry. Blocking: a
/// credential helper is a process (call from a blocking thread).
/// `env` goes only to the registry `scope` names, when set (empty: none).
pub(super) fn credentials(
    env: Option<&(String, String)>,
    scope: Option<&str>,
    reference: &Reference,
) -> Result<Credentials, OciError> {
    scoped(env, scope, reference, docker_config_file())
}

fn scoped(
    env: Option<&(String, String)>,
    scope: Option<&str>,
    reference: &Reference,
    docker_config: Option<PathBuf>,
) -> Result<Credentials, OciError> {
    let for_this = |r: &str| same_registry(r, &reference.registry);
    match env {
        Some(_) if !scope.is_none_or(for_this) => {
            let found = resolve(None, reference, docker_config)?;
            Ok(match found.source {
                Source::Anonymous => Credentials { source: Source::Withheld, ..found },
                _ => found,
            })
        }
        _ => resolve(env, reference, docker_config),
    }
}

fn resolve(
    env: Option<&(String, String)>,
    reference: &Reference,
    docker_config: Option<PathBuf>,
) -> Result<Credentials, OciError> {
    if let Some((user, password)) = env {
        let source = Source::Environment(user.clone());
        return Ok(Credentials { auth: RegistryAuth::Basic(user.clone(), password.clone()), source });
    }
    let anonymous = Credentials { auth: RegistryAuth::Anonymous, source: Source::Anonymous };
    let Some(file) = docker_config.filter(|f| f.is_file()) else {
        return Ok(anonymous);
    };
    let failed = |why: String| OciError::Credentials { registry: reference.registry.clone(), file: file.clone(), why };
    let reader = std::fs::File::open(&file).map_err(|e| failed(e.to_string()))?;
    match docker_credential::get_credential_from_reader(
        std::io::BufReader::new(reader),
        docker_key(&reference.registry),
    ) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            let source = Source::DockerConfig { user: user.clone(), file };
            Ok(Credentials { auth: RegistryAuth::Basic(user, password), source })
        }
        // An OAuth refresh token: oci-client has no flow for it; public artifacts still pull.
        Ok(DockerCredential::IdentityToken(_)) => {
            tracing::warn!(
                "{} holds an identity token for {}, which pulumi-wasm cannot use; going without credentials \
                 (set PULUMI_WASM_OCI_USERNAME and PULUMI_WASM_OCI_PASSWORD instead)",
                file.display(),
                reference.registry
            );
            Ok(Credentials { auth: RegistryAuth::Anonymous, source: Source::IdentityToken(file) })
        }
        Err(CredentialRetrievalError::NoCredentialConfigured) => Ok(anonymous),
        // A credential store (`"credsStore": "desktop"`, ...) asked about a registry
        // nobody logged in to says so, in the helper protocol's words.
        Err(CredentialRetrievalError::HelperFailure { stdout, stderr, .. })
            if format!("{stdout}{stderr}").contains("credentials not found") =>
        {
            Ok(anonymous)
        }
        Err(CredentialRetrievalError::HelperCommunicationError) => {
            Err(failed("its credential helper (a `docker-credential-<name>` on the PATH) could not be run".into()))
        }
        Err(e) => Err(failed(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_for(registry: &str, config: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.json");
        std::fs::write(&file, config).unwrap();
        let reference: Reference = format!("{registry}/acme/x:1").parse().unwrap();
        match resolve(None, &reference, Some(file)).unwrap().auth {
            RegistryAuth::Basic(user, _) => user,
            RegistryAuth::Anonymous => "anonymous".into(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn docker_hub_credentials_are_under_its_old_url() {
        // "alice:pw" and "bob:pw", as `docker login` writes them.
        let config = r#"{"auths": {"https://index.docker.io/v1/": {"auth": "YWxpY2U6cHc="},
                                   "ghcr.io": {"auth": "Ym9iOnB3"}}}"#;
        assert_eq!(user_for("docker.io", config), "alice");
        assert_eq!(user_for("registry-1.docker.io", config), "alice");
        assert_eq!(user_for("ghcr.io", config), "bob");
        assert_eq!(user_for("quay.io", config), "anonymous");
    }

    #[test]
    fn an_identity_token_is_not_sent_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.json");
        std::fs::write(&file, r#"{"auths": {"ghcr.io": {"identitytoken": "refresh-me"}}}"#).unwrap();
        let reference: Reference = "ghcr.io/acme/x:1".parse().unwrap();
        let c = resolve(None, &reference, Some(file)).unwrap();
        assert!(matches!(c.auth, RegistryAuth::Anonymous));
        assert!(c.source.to_string().contains("identity token"), "{}", c.source);
    }

    #[test]
    fn the_environment_wins_and_a_missing_config_is_anonymous() {
        let reference: Reference = "ghcr.io/acme/x:1".parse().unwrap();
        let env = ("carol".to_owned(), "pw".to_owned());
        let c = resolve(Some(&env), &reference, Some("/nonexistent/config.json".into())).unwrap();
        assert!(matches!(c.auth, RegistryAuth::Basic(u, _) if u == "carol"));
        let c = resolve(None, &reference, Some("/nonexistent/config.json".into())).unwrap();
        assert!(matches!(c.source, Source::Anonymous));
    }

    #[test]
    fn the_environments_credentials_go_only_to_the_registry_they_are_for() {
        let env = ("carol".to_owned(), "pw".to_owned());
        let none = Some(PathBuf::from("/nonexistent/config.json"));
        let user = |registry: &str, scope: Option<&str>| {
            let reference: Reference = format!("{registry}/acme/x:1").parse().unwrap();
            let c = scoped(Some(&env), scope, &reference, none.clone()).unwrap();
            match c.auth {
                RegistryAuth::Basic(u, _) => u,
                _ => c.source.to_string(),
            }
        };
        assert_eq!(user("ghcr.io", None), "carol");
        assert_eq!(user("ghcr.io", Some("ghcr.io")), "carol");
        assert_eq!(user("docker.io", Some("index.docker.io")), "carol");
        assert!(user("evil.example", Some("ghcr.io")).contains("not for this registry"));
        // OciOptions::scoped with no PULUMI_WASM_OCI_REGISTRY: for no registry.
        assert!(user("ghcr.io", Some("")).contains("not for this registry"));
        // A registry the user logged in to still gets its own login.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.json");
        std::fs::write(&file, r#"{"auths": {"evil.example": {"auth": "Ym9iOnB3"}}}"#).unwrap();
        let reference: Reference = "evil.example/acme/x:1".parse().unwrap();
        let c = scoped(Some(&env), Some("ghcr.io"), &reference, Some(file)).unwrap();
        assert!(matches!(c.auth, RegistryAuth::Basic(u, _) if u == "bob"));
    }
}
