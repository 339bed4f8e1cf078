#!/bin/sh
# Written by kvplan's tests.
#
# prefill: prefill, 7 worker(s) of tp 4 on h100-sxm (28 GPU(s))
# decode: decode, 2 worker(s) of tp 8 on h100-sxm (16 GPU(s))
#
# 6 node(s) of 8 GPUs. Run this script on each, with NODE set to the node's index and HOSTS to the
# nodes' addresses in order; node 0 also runs the router on port 8080:
#   NODE=0 HOSTS="10.0.0.1 10.0.0.2 10.0.0.3 ..." sh serve-vllm.sh
set -eu
: "${NODE:?set NODE to the index of this node, 0 to 5}"
: "${HOSTS:=127.0.0.1}"
host() { i=$1; set -- $HOSTS; shift "$i"; echo "$1"; }

case "$NODE" in
0)
  # prefill worker 1 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 VLLM_NIXL_SIDE_CHANNEL_PORT=5600 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 1024 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}' &
  # prefill worker 2 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 VLLM_NIXL_SIDE_CHANNEL_PORT=5601 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 1024 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}' &
  ;;
1)
  # prefill worker 3 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 VLLM_NIXL_SIDE_CHANNEL_PORT=5600 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 1024 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}' &
  # prefill worker 4 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 VLLM_NIXL_SIDE_CHANNEL_PORT=5601 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 1024 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}' &
  ;;
2)
  # prefill worker 5 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 VLLM_NIXL_SIDE_CHANNEL_PORT=5600 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 1024 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}' &
  # prefill worker 6 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 VLLM_NIXL_SIDE_CHANNEL_PORT=5601 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 1024 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}' &
  ;;
3)
  # prefill worker 7 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 VLLM_NIXL_SIDE_CHANNEL_PORT=5600 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 1024 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cpu"}' &
  ;;
4)
  # decode worker 1 of 2 (decode, tp 8)
  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 VLLM_NIXL_SIDE_CHANNEL_PORT=5600 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 8 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 512 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_consumer"}' &
  ;;
5)
  # decode worker 2 of 2 (decode, tp 8)
  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 VLLM_NIXL_SIDE_CHANNEL_PORT=5600 VLLM_NIXL_SIDE_CHANNEL_HOST="$(host "$NODE")" vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 8 --max-model-len 5120 --max-num-batched-tokens 8192 --max-num-seqs 512 --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_consumer"}' &
  ;;
*)
  echo "NODE=$NODE: this deployment has nodes 0 to 5" >&2
  exit 2
  ;;
esac

if [ "$NODE" = 0 ]; then
  vllm-router --policy cache_aware --vllm-pd-disaggregation --prefill "http://$(host 0):8000" --prefill "http://$(host 0):8001" --prefill "http://$(host 1):8000" --prefill "http://$(host 1):8001" --prefill "http://$(host 2):8000" --prefill "http://$(host 2):8001" --prefill "http://$(host 3):8000" --decode "http://$(host 4):8000" --decode "http://$(host 5):8000" --host 0.0.0.0 --port 8080 &
fi
wait
