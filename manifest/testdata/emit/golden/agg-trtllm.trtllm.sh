#!/bin/sh
# Written by kvplan's tests.
#
# workers: aggregated, 10 worker(s) of tp 4 on h100-sxm (40 GPU(s))
#
# 5 node(s) of 8 GPUs. Run this script on each, with NODE set to the node's index and HOSTS to the
# nodes' addresses in order; node 0 also runs the router on port 8080:
#   NODE=0 HOSTS="10.0.0.1 10.0.0.2 10.0.0.3 ..." sh serve-trtllm.sh
set -eu
: "${NODE:?set NODE to the index of this node, 0 to 4}"
: "${HOSTS:=127.0.0.1}"
host() { i=$1; set -- $HOSTS; shift "$i"; echo "$1"; }

case "$NODE" in
0)
  # workers worker 1 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  # workers worker 2 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  ;;
1)
  # workers worker 3 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  # workers worker 4 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  ;;
2)
  # workers worker 5 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  # workers worker 6 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  ;;
3)
  # workers worker 7 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  # workers worker 8 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  ;;
4)
  # workers worker 9 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8000 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  # workers worker 10 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 trtllm-serve meta-llama/Llama-3.1-70B-Instruct --host 0.0.0.0 --port 8001 --tp_size 4 --max_seq_len 5120 --max_num_tokens 512 --max_batch_size 1024 --kv_cache_free_gpu_memory_fraction 0.9 &
  ;;
*)
  echo "NODE=$NODE: this deployment has nodes 0 to 4" >&2
  exit 2
  ;;
esac

if [ "$NODE" = 0 ]; then
  : # trtllm-serve has no router of its own for aggregated workers: put an HTTP load balancer in front of them
fi
wait
