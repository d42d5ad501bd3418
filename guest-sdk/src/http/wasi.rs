//! Requests over `wasi:http`, which the host sends and checks against the
//! user's grants.

use wstd::future::FutureExt as _;
use wstd::http::body::util::BodyExt as _;
use wstd::http::error::ErrorCode;

use super::*;

pub(super) fn send(req: Request, first: Target) -> Result<Response> {
    let overall = req.timeout;
    let (method, url) = (req.method, req.url.clone());
    wstd::runtime::block_on(async move { run(req, first).timeout(wstd::time::Duration::from(overall)).await })
        .unwrap_or_else(|_| Err(Error::Unavailable(format!("{method} {url}: no complete response within {overall:?}"))))
}

async fn run(req: Request, first: Target) -> Result<Response> {
    let mut hop = Hop::first(&req, &first);
    loop {
        let resp = once(&req, &hop, &first).await?;
        if !hop.follow(&req, &resp)? {
            return Ok(resp);
        }
    }
}

/// One hop's request/response exchange.
async fn once(req: &Request, hop: &Hop, first: &Target) -> Result<Response> {
    let (method, target) = (hop.method, &hop.target);
    let what = || {
        if target == first {
            format!("{method} {}", target.url)
        } else {
            format!("{method} {} (redirected from {})", target.url, first.url)
        }
    };
    let mut builder = wstd::http::Request::builder().method(method.as_str()).uri(target.url.as_str());
    for (name, value) in &hop.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let request = builder
        .body(wstd::http::Body::from(hop.body.clone().unwrap_or_default()))
        .map_err(|e| Error::InvalidArgument(format!("{}: {e}", what())))?;
    let mut client = wstd::http::Client::new();
    client.set_connect_timeout(req.connect_timeout);
    client.set_first_byte_timeout(req.first_byte_timeout);
    client.set_between_bytes_timeout(req.between_bytes_timeout);
    let response = client.send(request).await.map_err(|e| failure(e, &what(), target))?;

    let status = response.status().as_u16();
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let too_big = || {
        Error::Failed(format!(
            "{}: the response body is larger than the {} bytes allowed",
            what(),
            req.max_response_bytes
        ))
    };
    let body = response.into_body();
    // A HEAD response's length is the resource's; it carries no body.
    if method != Method::Head && body.content_length().is_some_and(|n| n > req.max_response_bytes as u64) {
        return Err(too_big());
    }
    let mut data = Vec::new();
    if method != Method::Head {
        let mut stream = body.into_boxed_body();
        while let Some(frame) = stream.frame().await {
            let frame = frame.map_err(|e| failure(e, &what(), target))?;
            if let Ok(chunk) = frame.into_data() {
                if data.len() + chunk.len() > req.max_response_bytes {
                    return Err(too_big());
                }
                data.extend_from_slice(&chunk);
            }
        }
    }
    Ok(Response { status, headers, body: data, url: target.url.clone(), method })
}

/// Maps a wasi-http failure to a provider error naming what was attempted.
fn failure(e: wstd::http::Error, what: &str, target: &Target) -> Error {
    let Some(code) = e.downcast_ref::<ErrorCode>() else {
        return Error::Failed(format!("{what}: {e:#}"));
    };
    let origin = target.origin();
    match code {
        ErrorCode::HttpRequestDenied => Error::FailedPrecondition(format!(
            "{what}: the host's sandbox denied outbound HTTP to {origin}; \
             the user must grant it (policy `http = [\"{origin}\"]` or `--allow-http {origin}`)"
        )),
        ErrorCode::DestinationIpProhibited => Error::FailedPrecondition(format!(
            "{what}: the host's sandbox refused to connect to the address {} resolves to \
             (private or loopback targets need a grant naming them exactly)",
            target.authority
        )),
        ErrorCode::HttpRequestUriInvalid | ErrorCode::HttpRequestMethodInvalid => {
            Error::InvalidArgument(format!("{what}: {code:?}"))
        }
        ErrorCode::DnsTimeout
        | ErrorCode::DnsError(_)
        | ErrorCode::DestinationNotFound
        | ErrorCode::DestinationUnavailable
        | ErrorCode::DestinationIpUnroutable
        | ErrorCode::ConnectionRefused
        | ErrorCode::ConnectionTerminated
        | ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::ConnectionLimitReached
        | ErrorCode::HttpResponseIncomplete
        | ErrorCode::HttpResponseTimeout => Error::Unavailable(format!("{what}: {}", describe(code))),
        other => Error::Failed(format!("{what}: {}", describe(other))),
    }
}

fn describe(code: &ErrorCode) -> String {
    match code {
        ErrorCode::DnsTimeout => "DNS lookup timed out".into(),
        ErrorCode::DnsError(p) => format!("DNS lookup failed ({})", p.rcode.as_deref().unwrap_or("error")),
        ErrorCode::ConnectionRefused => "connection refused".into(),
        ErrorCode::ConnectionTimeout => "timed out connecting".into(),
        ErrorCode::ConnectionReadTimeout | ErrorCode::HttpResponseTimeout => {
            "timed out waiting for the response".into()
        }
        ErrorCode::ConnectionTerminated => "the connection was closed".into(),
        ErrorCode::InternalError(Some(m)) => format!("internal error: {m}"),
        other => format!("{other:?}"),
    }
}
