# Sourced by the demo steps that run a registry (50, 52, 55): one way to start it.
# serve_registry WORK DATA URL [registry serve options...]: `affidavit registry serve` on URL's
# port with DATA, in the background (its log in WORK/server.log, contracts from WORK/contracts),
# stopped by a trap when the step exits whatever happens; returns once `registry probe` answers.

free_url() {
  local port
  port="$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  echo "http://127.0.0.1:$port"
}

serve_registry() {
  local work="$1" data="$2" url="$3"
  shift 3
  AFFIDAVIT_ADAPTER_CONTRACTS_DIR="$work/contracts" affidavit registry serve \
    --port "${url##*:}" --data-dir "$data" --no-access-log "$@" 2>"$work/server.log" &
  server=$!
  trap 'kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do
    affidavit registry probe --registry "$url" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
}
