#!/bin/sh
# Written by kvplan's tests.
#
# prefill: prefill, 7 worker(s) of tp 4 on h100-sxm (28 GPU(s))
# decode: decode, 2 worker(s) of tp 8 on h100-sxm (16 GPU(s))
#
# 6 node(s) of 8 GPUs. Run this script on each, with NODE set to the node's index and HOSTS to the
# nodes' addresses in order; node 0 also runs the router on port 8080:
#   NODE=0 HOSTS="10.0.0.1 10.0.0.2 10.0.0.3 ..." sh serve-trtllm.sh
set -eu
: "${NODE:?set NODE to the index of this node, 0 to 5}"
: "${HOSTS:=127.0.0.1}"
host() { i=$1; set -- $HOSTS; shift "$i"; echo "$1"; }
cat > kvplan-trtllm-disagg.yaml <<'EOF'
cache_transceiver_config:
  backend: DEFAULT
EOF

case "$NODE" in
0)
  # prefill worker 1 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  # prefill worker 2 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  ;;
1)
  # prefill worker 3 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  # prefill worker 4 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  ;;
2)
  # prefill worker 5 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  # prefill worker 6 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  ;;
3)
  # prefill worker 7 of 7 (prefill, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  ;;
4)
  # decode worker 1 of 2 (decode, tp 8)
  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 8 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 512 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  ;;
5)
  # decode worker 2 of 2 (decode, tp 8)
  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 8 --max_seq_len 5120 --max_num_tokens 8192 --max_batch_size 512 --kv_cache_free_gpu_memory_fraction 0.9 --extra_llm_api_options kvplan-trtllm-disagg.yaml &
  ;;
*)
  echo "NODE=$NODE: this deployment has nodes 0 to 5" >&2
  exit 2
  ;;
esac

if [ "$NODE" = 0 ]; then
  cat > kvplan-trtllm-router.yaml <<EOF
hostname: 0.0.0.0
port: 8080
context_servers:
  num_instances: 7
  urls:
    - "$(host 0):8000"
    - "$(host 0):8001"
    - "$(host 1):8000"
    - "$(host 1):8001"
    - "$(host 2):8000"
    - "$(host 2):8001"
    - "$(host 3):8000"
generation_servers:
  num_instances: 2
  urls:
    - "$(host 4):8000"
    - "$(host 5):8000"
EOF
  trtllm-serve disaggregated -c kvplan-trtllm-router.yaml &
fi
wait
