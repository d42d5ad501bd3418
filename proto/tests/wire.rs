//! Wire identity: our compiled descriptors must match pulumi 3.272.0's published ones.
//!
//! The comparison itself is `check_wire.py` (it reads pulumi's descriptors from the
//! `pulumi` Python package: `pip install pulumi==3.272.0`, or set `PULUMI_WHEEL_DIR`).

use pulumirpc::prost::Message;
use pulumirpc::prost_types::FileDescriptorSet;
use std::path::Path;
use std::process::Command;

#[test]
fn wire_identical_to_published_pulumi_descriptors() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let fds_path = tmp.join(format!("pulumirpc-{}.binpb", std::process::id()));
    std::fs::write(&fds_path, pulumirpc::FILE_DESCRIPTOR_SET).expect("write descriptor set");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("check_wire.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(&fds_path)
        // Not the crate dir: its `pulumi/` folder would shadow the Python package.
        .current_dir(tmp)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", script.display()));
    let _ = std::fs::remove_file(&fds_path);

    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(output.status.success(), "check_wire.py failed ({}):\n{stdout}\n{stderr}", output.status);
}

#[test]
fn descriptor_set_has_our_files_and_stream_invoke() {
    let fds = FileDescriptorSet::decode(pulumirpc::FILE_DESCRIPTOR_SET).expect("decode");
    let names: Vec<&str> = fds.file.iter().map(|f| f.name()).collect();
    for want in [
        "pulumi/alias.proto",
        "pulumi/plugin.proto",
        "pulumi/engine.proto",
        "pulumi/provider.proto",
        "pulumi/source.proto",
        "pulumi/callback.proto",
        "pulumi/resource.proto",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let provider = fds.file.iter().find(|f| f.name() == "pulumi/provider.proto").unwrap();
    let svc = &provider.service[0];
    assert_eq!(svc.name(), "ResourceProvider");
    let m = svc.method.iter().find(|m| m.name() == "StreamInvoke").expect("StreamInvoke kept");
    assert_eq!(m.input_type(), ".pulumirpc.InvokeRequest");
    assert_eq!(m.output_type(), ".pulumirpc.InvokeResponse");
    assert!(m.server_streaming() && !m.client_streaming());
}
