//! Device sign-in (RFC 8628, docs/API.md "Device sign-in") with the server's clock in the
//! test's hands: pending, slow_down raising the interval, approval into a session handed out
//! once, denial, expiry, a wrong client id, unknown codes; and the `/device` page's plain forms.

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_model::Role;

use crate::common::{NOW, PASSWORD, TestServer, new_user, session_cookie, start};

const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");

async fn form(server: &TestServer, path: &str, body: &str) -> crate::common::Reply {
    server.request("POST", path, &[FORM], body.as_bytes().to_vec()).await
}

/// A new device sign-in: its device code and user code.
async fn start_sign_in(server: &TestServer) -> (String, String, Value) {
    let reply = form(server, "/oauth/device/code", "client_id=sluice-cli&scope=logs").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let device = reply.body["device_code"].as_str().unwrap_or_default().to_owned();
    let user = reply.body["user_code"].as_str().unwrap_or_default().to_owned();
    (device, user, reply.body)
}

async fn poll(server: &TestServer, device_code: &str) -> crate::common::Reply {
    let body = format!(
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code={device_code}&client_id=sluice-cli"
    );
    form(server, "/oauth/token", &body).await
}

fn oauth_error(reply: &crate::common::Reply) -> (StatusCode, String) {
    (reply.status, reply.body["error"].as_str().unwrap_or_default().to_owned())
}

#[actix_web::test]
async fn a_device_is_signed_in_once_after_approval() {
    let server = start().await;
    server.set_now(NOW);
    new_user(&server.store, "ada@example.com", false, &[(server.workspace.id, Role::Member)]).await;
    let ada = server.sign_in("ada@example.com").await;
    let (device, user_code, started) = start_sign_in(&server).await;
    assert_eq!(started["expires_in"], 600);
    assert_eq!(started["interval"], 5);
    assert!(
        user_code.len() == 9
            && user_code.chars().enumerate().all(|(at, letter)| if at == 4 {
                letter == '-'
            } else {
                "BCDFGHJKLMNPQRSTVWXZ".contains(letter)
            }),
        "{user_code}"
    );
    let uri = started["verification_uri"].as_str().unwrap_or_default();
    assert_eq!(uri, format!("{}/device", server.base));
    assert_eq!(started["verification_uri_complete"], json!(format!("{uri}?code={user_code}")));

    let pending = poll(&server, &device).await;
    assert_eq!(oauth_error(&pending), (StatusCode::BAD_REQUEST, "authorization_pending".into()));
    assert_eq!(pending.headers.get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    // Sooner than 5 s after the last poll: slow down, and the interval grows to 10 s.
    server.set_now(NOW + 4_999);
    assert_eq!(oauth_error(&poll(&server, &device).await).1, "slow_down");
    server.set_now(NOW + 4_999 + 9_000);
    assert_eq!(
        oauth_error(&poll(&server, &device).await).1,
        "slow_down",
        "the interval is 10 s now, from the previous poll"
    );
    server.set_now(NOW + 40_000);
    assert_eq!(oauth_error(&poll(&server, &device).await).1, "authorization_pending");

    // The person types the code in any case, without the dash.
    let typed = user_code.replace('-', "").to_lowercase();
    let approved = server.as_user(&ada, "POST", "/v1/device/approve", Some(json!({"userCode": typed}))).await;
    assert_eq!(approved.status, StatusCode::OK, "{}", approved.body);
    assert_eq!(approved.body, json!({"userCode": user_code, "state": "approved"}));
    let again = server.as_user(&ada, "POST", "/v1/device/approve", Some(json!({"userCode": user_code}))).await;
    assert_eq!((again.status, again.error()), (StatusCode::NOT_FOUND, "Unknown or expired code"));

    server.set_now(NOW + 60_000);
    let granted = poll(&server, &device).await;
    assert_eq!(granted.status, StatusCode::OK, "{}", granted.body);
    assert_eq!(granted.body["token_type"], "Bearer");
    assert_eq!(granted.body["expires_in"], 2_592_000);
    let token = granted.body["access_token"].as_str().unwrap_or_default().to_owned();
    let me = server.as_user(&token, "GET", "/v1/me", None).await;
    assert_eq!(me.body["user"]["email"], "ada@example.com");
    let sessions = server.as_user(&token, "GET", "/v1/sessions", None).await;
    let clients: Vec<&str> =
        sessions.body["sessions"].as_array().into_iter().flatten().filter_map(|s| s["client"].as_str()).collect();
    assert!(clients.contains(&"sluice-cli"), "{clients:?}");
    // Once: a second poll, even a fast one, is invalid_grant.
    assert_eq!(oauth_error(&poll(&server, &device).await).1, "invalid_grant");
    server.set_now(NOW + 120_000);
    assert_eq!(oauth_error(&poll(&server, &device).await).1, "invalid_grant");
    server.stop().await;
}

#[actix_web::test]
async fn denied_expired_unknown_and_foreign_clients_get_their_errors() {
    let server = start().await;
    server.set_now(NOW);
    new_user(&server.store, "ada@example.com", false, &[]).await;
    let ada = server.sign_in("ada@example.com").await;

    let (denied, denied_code, _) = start_sign_in(&server).await;
    let deny = server.as_user(&ada, "POST", "/v1/device/deny", Some(json!({"userCode": denied_code}))).await;
    assert_eq!(deny.body["state"], "denied");
    assert_eq!(oauth_error(&poll(&server, &denied).await).1, "access_denied");
    server.set_now(NOW + 10_000);
    assert_eq!(oauth_error(&poll(&server, &denied).await).1, "invalid_grant");

    let (expiring, expiring_code, _) = start_sign_in(&server).await;
    server.set_now(NOW + 10_000 + 600_000);
    assert_eq!(oauth_error(&poll(&server, &expiring).await).1, "expired_token");
    let late = server.as_user(&ada, "POST", "/v1/device/approve", Some(json!({"userCode": expiring_code}))).await;
    assert_eq!((late.status, late.error()), (StatusCode::NOT_FOUND, "Unknown or expired code"));

    assert_eq!(oauth_error(&poll(&server, "no-such-code").await).1, "invalid_grant");
    let foreign = form(&server, "/oauth/device/code", "client_id=someone-else").await;
    assert_eq!(oauth_error(&foreign), (StatusCode::BAD_REQUEST, "invalid_client".into()));
    let (device, _, _) = start_sign_in(&server).await;
    let body = format!(
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code={device}&client_id=other"
    );
    assert_eq!(oauth_error(&form(&server, "/oauth/token", &body).await).1, "invalid_client");
    let body = format!("grant_type=password&device_code={device}&client_id=sluice-cli");
    assert_eq!(oauth_error(&form(&server, "/oauth/token", &body).await).1, "unsupported_grant_type");
    assert_eq!(oauth_error(&form(&server, "/oauth/token", "").await).1, "invalid_request");
    // Approving takes a signed-in user, not a key.
    let auth = format!("Bearer {}", server.key);
    let by_key = server
        .request(
            "POST",
            "/v1/device/approve",
            &[("Authorization", &auth), ("Content-Type", "application/json")],
            b"{\"userCode\":\"BCDF-GHJK\"}".to_vec(),
        )
        .await;
    assert_eq!(by_key.status, StatusCode::FORBIDDEN);
    server.stop().await;
}

#[actix_web::test]
async fn the_device_page_signs_in_and_approves_with_plain_forms_and_escapes_what_it_echoes() {
    let server = start().await;
    new_user(&server.store, "ada@example.com", false, &[]).await;
    let (device, user_code, _) = start_sign_in(&server).await;
    let origin = ("Origin", server.base.as_str());

    // Signed out: the sign-in form, which keeps the code; hostile text comes back as text.
    let page = server.request_raw("GET", "/device?code=%3Cscript%3Ealert(1)%3C%2Fscript%3E", &[], Vec::new()).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = String::from_utf8_lossy(&page.bytes).into_owned();
    assert!(html.contains("name=\"password\"") && !html.contains("<script>"), "{html}");
    assert!(html.contains("&lt;script&gt;") || html.contains("&#60;script&#62;"), "{html}");
    let policy = page.headers.get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(policy.contains("frame-ancestors 'none'") && !policy.contains("script-src"), "{policy}");
    // With `no-referrer` a browser sends `Origin: null` with the page's forms, which the
    // cross-site rule refuses (found by the browser suite).
    assert_eq!(page.headers.get("referrer-policy").and_then(|v| v.to_str().ok()), Some("same-origin"));

    // A form posted from elsewhere is refused.
    let body = format!("action=login&email=ada%40example.com&password={}&code={user_code}", PASSWORD.replace(' ', "+"));
    let elsewhere = server
        .request_raw("POST", "/device", &[FORM, ("Origin", "https://evil.example")], body.clone().into_bytes())
        .await;
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN);
    let wrong =
        server.request_raw("POST", "/device", &[FORM, origin], body.replace("battery", "staple").into_bytes()).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(String::from_utf8_lossy(&wrong.bytes).contains("Invalid email or password"));
    let signed_in = server.request_raw("POST", "/device", &[FORM, origin], body.into_bytes()).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER);
    let location = signed_in.headers.get("location").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert_eq!(location, format!("/device?code={user_code}"));
    let token = session_cookie(&signed_in.headers).expect("cookie");
    let cookie = format!("sluice_session={token}");

    // Signed in: the request to decide names the client.
    let page = server.request_raw("GET", &location, &[("Cookie", &cookie)], Vec::new()).await;
    let html = String::from_utf8_lossy(&page.bytes).into_owned();
    assert!(html.contains("sluice-cli") && html.contains(&user_code) && html.contains("value=\"approve\""), "{html}");
    let unknown = server.request_raw("GET", "/device?code=BCDF-GHJK", &[("Cookie", &cookie)], Vec::new()).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let approve = format!("action=approve&code={user_code}");
    let approved =
        server.request_raw("POST", "/device", &[FORM, origin, ("Cookie", &cookie)], approve.into_bytes()).await;
    assert_eq!(approved.status, StatusCode::OK);
    assert!(String::from_utf8_lossy(&approved.bytes).contains("Approved"));
    assert_eq!(poll(&server, &device).await.status, StatusCode::OK);
    server.stop().await;
}
