#!/bin/sh
# Written by kvplan's tests.
#
# prefill: prefill, 7 worker(s) of tp 4 on h100-sxm (28 GPU(s))
# decode: decode, 2 worker(s) of tp 8 on h100-sxm (16 GPU(s))
#
# 6 node(s) of 8 GPUs. Run this script on each, with NODE set to the node's index and HOSTS to the
# nodes' addresses in order; node 0 also runs the router on port 8080:
#   NODE=0 HOSTS="10.0.0.1 10.0.0.2 10.0.0.3 ..." sh serve-sglang.sh
set -eu
: "${NODE:?set NODE to the index of this node, 0 to 5}"
: "${HOSTS:=127.0.0.1}"
host() { i=$1; set -- $HOSTS; shift "$i"; echo "$1"; }

case "$NODE" in
0)
  # prefill worker 1 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 1024 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8998 &
  # prefill worker 2 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 1024 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8999 &
  ;;
1)
  # prefill worker 3 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 1024 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8998 &
  # prefill worker 4 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 1024 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8999 &
  ;;
2)
  # prefill worker 5 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 1024 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8998 &
  # prefill worker 6 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 1024 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8999 &
  ;;
3)
  # prefill worker 7 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 1024 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 8998 &
  ;;
4)
  # decode worker 1 of 2 (decode, tp 8)
  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 8 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 512 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode decode --disaggregation-transfer-backend nixl &
  ;;
5)
  # decode worker 2 of 2 (decode, tp 8)
  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 8 --context-length 5120 --chunked-prefill-size 8192 --max-running-requests 512 --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --disaggregation-mode decode --disaggregation-transfer-backend nixl &
  ;;
*)
  echo "NODE=$NODE: this deployment has nodes 0 to 5" >&2
  exit 2
  ;;
esac

if [ "$NODE" = 0 ]; then
  python3 -m sglang_router.launch_router --pd-disaggregation --policy cache_aware --prefill "http://$(host 0):8000" 8998 --prefill "http://$(host 0):8001" 8999 --prefill "http://$(host 1):8000" 8998 --prefill "http://$(host 1):8001" 8999 --prefill "http://$(host 2):8000" 8998 --prefill "http://$(host 2):8001" 8999 --prefill "http://$(host 3):8000" 8998 --decode "http://$(host 4):8000" --decode "http://$(host 5):8000" --host 0.0.0.0 --port 8080 &
fi
wait
