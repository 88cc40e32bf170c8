"""Runs schemathesis against a live sluice: every operation of /openapi.json, with generated
inputs (examples, coverage of each parameter's edges, fuzzing), once with an API key and once
with a signed-in session, checking that no answer is a 5xx and that every answer's status,
content type and body match the document.

Usage: api_check.py BASE_URL API_KEY ADMIN_PASSWORD
"""

import json
import os
import subprocess
import sys
import time
import urllib.request

base, key, password = sys.argv[1:4]
# The server prints its first-start secrets before it listens: wait for it.
deadline = time.monotonic() + 60
while True:
    try:
        urllib.request.urlopen(f"{base}/healthz").close()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit(f"{base} did not answer within 60 s")
        time.sleep(0.2)
request = urllib.request.Request(
    f"{base}/v1/auth/login",
    data=json.dumps({"email": "admin@localhost", "password": password}).encode(),
    headers={"Content-Type": "application/json"},
)
with urllib.request.urlopen(request) as answer:
    cookie = answer.headers.get("Set-Cookie", "")
session = cookie.split("sluice_session=", 1)[1].split(";", 1)[0]

schemathesis = os.path.join(os.path.dirname(sys.executable), "schemathesis")
common = [
    schemathesis, "run", f"{base}/openapi.json",
    "--checks", "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance",
    "--phases", "examples,coverage,fuzzing", "--max-examples", "25", "--seed", "1",
    "--request-timeout", "10", "--no-color",
    # A tail is a stream that never ends (its answers are tested in tail.rs).
    "--exclude-path", "/v1/logs/tail",
]
failed = False
for name, token, extra in [
    ("API key", key, []),
    # Signing out would end the session the run uses.
    ("session", session, ["--exclude-path", "/v1/auth/logout"]),
]:
    print(f"\n=== schemathesis with a {name}", flush=True)
    # In the prepared folder, where schemathesis keeps its example database.
    run = subprocess.run(common + ["--header", f"Authorization: Bearer {token}"] + extra, cwd=os.path.dirname(os.path.abspath(__file__)))
    failed = failed or run.returncode != 0
sys.exit(1 if failed else 0)
