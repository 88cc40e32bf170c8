#!/usr/bin/env bash
# Seeds each fuzz target's corpus with the real inputs in ../shared/corpus (not committed:
# fuzz/corpus is ignored). Run from the repository root: bash fuzz/seed.sh
set -euo pipefail
shared="$(dirname "$0")/../../shared/corpus"
corpus="$(dirname "$0")/corpus"
mkdir -p "$corpus"/{json,jsonl,syslog,text,csv,obl,search,params,otlp_protobuf,otlp_json,block}
cp "$shared"/syslog/*.txt "$corpus/syslog/"
for f in "$shared"/loghub/*_2k.log; do head -c 20000 "$f" > "$corpus/text/$(basename "$f")"; done
for f in "$shared"/loghub/csv/*.csv; do head -c 20000 "$f" > "$corpus/csv/$(basename "$f")"; done
cp "$shared"/obl/*.obl* "$corpus/obl/"
echo '{"logs":[{"level":"info","message":"m","source":"s","environment":"staging","tags":["a"],"data":{"k":1}}]}' > "$corpus/json/wrapped.json"
echo '[{"level":"warn","message":"m","timestamp":"2024-03-01T12:00:00Z","stepIndex":3}]' > "$corpus/json/bare.json"
printf '%s\n%s\n' '{"level":"info","message":"a"}' '{"level":"error","message":"b","errorStack":"at x"}' > "$corpus/jsonl/two.jsonl"
printf '%s' 'payment "card declined" -test' > "$corpus/search/phrase"
printf '%s' 'ORD-4821937 OR 8f3a2b1c9d0e4f57 -"dry run"' > "$corpus/search/or"
printf '%s' 'level=error&source=billing&limit=50&offset=0&from=1700000000000&to=1700086400000' > "$corpus/params/list"
printf '%s' 'q=payment&fields=message,data&limit=500&environment=production' > "$corpus/params/search"
printf '%s' 'from=2026-11-01&to=2026-11-22&groupBy=source&dataset=audit' > "$corpus/params/stats"
# The OpenTelemetry SDKs' captured requests: each body is a Python bytes literal.
body_of() { python3 -c 'import ast,sys; l=open(sys.argv[1]).read().split("repr:\n")[1].splitlines()[0]; sys.stdout.buffer.write(ast.literal_eval(l))' "$1"; }
body_of "$shared/client-captures/otel-python_otlp-http.txt" > "$corpus/otlp_protobuf/python-sdk.bin"
body_of "$shared/client-captures/otel-js_otlp-http-json.txt" > "$corpus/otlp_json/js-sdk.json"
cp -f "$shared/client-captures/otel-python_otlp-http.decoded.json" "$corpus/otlp_json/python-sdk.json"
# A block: its head's and index's lengths (two bytes each, little-endian), then the golden
# block's head, index and body, its index cut to what two bytes can say.
golden="$(dirname "$0")/../crates/sluice-blocks/tests/golden"
python3 - "$golden" "$corpus/block/v1.bin" <<'PY'
import struct, sys
folder, out = sys.argv[1], sys.argv[2]
head, index, body = (open(f"{folder}/v1.{part}", "rb").read() for part in ("head", "index", "body"))
index = index[:65535]
open(out, "wb").write(struct.pack("<HH", len(head), len(index)) + head + index + body)
PY
