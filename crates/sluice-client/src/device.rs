//! Device sign-in (RFC 8628): ask for a code, show it to the person, poll until they approve
//! or deny it on the server's `/device` page.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use crate::{Client, DeviceCode, Error};

/// The client id the server knows the command line by.
pub const CLIENT_ID: &str = "sluice-cli";

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

impl Client {
    /// Starts a device sign-in: the code to show and where to type it.
    pub async fn start_device_login(&self) -> Result<DeviceCode, Error> {
        let response = self
            .call(false, || self.request(Method::POST, "/oauth/device/code").form(&[("client_id", CLIENT_ID)]))
            .await?;
        crate::decode(response).await
    }

    /// Polls until the sign-in is approved (the session token), denied, or expired, waiting
    /// the interval the server asks (longer after each `slow_down`).
    pub async fn finish_device_login(&self, code: &DeviceCode) -> Result<String, Error> {
        let mut interval = Duration::from_secs(code.interval.max(1));
        loop {
            tokio::time::sleep(interval).await;
            let form =
                [("grant_type", DEVICE_GRANT), ("device_code", code.device_code.as_str()), ("client_id", CLIENT_ID)];
            let sent = self.request(Method::POST, "/oauth/token").form(&form).send().await;
            let response = match sent {
                Ok(response) => response,
                Err(error) if error.is_connect() || error.is_timeout() => continue,
                Err(error) => return Err(Error::Unavailable { status: None, message: error.to_string() }),
            };
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            if status.is_success() {
                return body["access_token"]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Error::Decode("no access_token in the token answer".into()));
            }
            let refused =
                |message: &str| Error::Refused { status: status.as_u16(), message: message.into(), body: body.clone() };
            match body["error"].as_str() {
                Some("authorization_pending") => {}
                Some("slow_down") => interval += Duration::from_secs(5),
                Some("access_denied") => return Err(refused("The sign-in was denied on the server")),
                Some("expired_token") => {
                    return Err(refused("The code expired before it was approved: run `sluice login` again"));
                }
                Some(other) => return Err(refused(&format!("The server refused the sign-in: {other}"))),
                None if status.is_server_error() => {}
                None => return Err(refused("The server refused the sign-in")),
            }
        }
    }
}
