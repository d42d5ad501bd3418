//! Compiles `pulumi/*.proto` with protox (pure Rust, no protoc needed) and generates
//! prost messages plus tonic clients and servers. The encoded descriptor set is also
//! written to OUT_DIR so the crate can expose it (see `FILE_DESCRIPTOR_SET`).

use prost::Message;
use std::{env, fs, path::PathBuf};

/// Our proto files; `alias.proto` and `plugin.proto` come in as imports of `provider.proto`,
/// `source.proto` and `callback.proto` as imports of `resource.proto`.
const PROTOS: &[&str] = &[
    "pulumi/alias.proto",
    "pulumi/plugin.proto",
    "pulumi/engine.proto",
    "pulumi/provider.proto",
    "pulumi/source.proto",
    "pulumi/callback.proto",
    "pulumi/resource.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=pulumi");
    for p in PROTOS {
        println!("cargo:rerun-if-changed={p}");
    }

    let fds = protox::compile(PROTOS, ["."])?;
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(out_dir.join("pulumirpc_descriptor.bin"), fds.encode_to_vec())?;

    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .codec_path("crate::codec::Codec")
        .compile_fds(fds)?;
    Ok(())
}
