#!/bin/sh
# Written by kvplan's tests.
#
# workers: aggregated, 10 worker(s) of tp 4 on h100-sxm (40 GPU(s))
#
# 5 node(s) of 8 GPUs. Run this script on each, with NODE set to the node's index and HOSTS to the
# nodes' addresses in order; node 0 also runs the router on port 8080:
#   NODE=0 HOSTS="10.0.0.1 10.0.0.2 10.0.0.3 ..." sh serve-sglang.sh
set -eu
: "${NODE:?set NODE to the index of this node, 0 to 4}"
: "${HOSTS:=127.0.0.1}"
host() { i=$1; set -- $HOSTS; shift "$i"; echo "$1"; }

case "$NODE" in
0)
  # workers worker 1 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  # workers worker 2 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  ;;
1)
  # workers worker 3 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  # workers worker 4 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  ;;
2)
  # workers worker 5 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  # workers worker 6 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  ;;
3)
  # workers worker 7 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  # workers worker 8 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  ;;
4)
  # workers worker 9 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  # workers worker 10 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp-size 4 --context-length 5120 --chunked-prefill-size 512 --max-running-requests 1024 --mem-fraction-static 0.9 &
  ;;
*)
  echo "NODE=$NODE: this deployment has nodes 0 to 4" >&2
  exit 2
  ;;
esac

if [ "$NODE" = 0 ]; then
  python3 -m sglang_router.launch_router --policy round_robin --worker-urls "http://$(host 0):8000" "http://$(host 0):8001" "http://$(host 1):8000" "http://$(host 1):8001" "http://$(host 2):8000" "http://$(host 2):8001" "http://$(host 3):8000" "http://$(host 3):8001" "http://$(host 4):8000" "http://$(host 4):8001" --host 0.0.0.0 --port 8080 &
fi
wait
