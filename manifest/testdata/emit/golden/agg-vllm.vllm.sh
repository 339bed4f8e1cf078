#!/bin/sh
# Written by kvplan's tests.
#
# workers: aggregated, 10 worker(s) of tp 4 on h100-sxm (40 GPU(s))
#
# 5 node(s) of 8 GPUs. Run this script on each, with NODE set to the node's index and HOSTS to the
# nodes' addresses in order; node 0 also runs the router on port 8080:
#   NODE=0 HOSTS="10.0.0.1 10.0.0.2 10.0.0.3 ..." sh serve-vllm.sh
set -eu
: "${NODE:?set NODE to the index of this node, 0 to 4}"
: "${HOSTS:=127.0.0.1}"
host() { i=$1; set -- $HOSTS; shift "$i"; echo "$1"; }

case "$NODE" in
0)
  # workers worker 1 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  # workers worker 2 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  ;;
1)
  # workers worker 3 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  # workers worker 4 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  ;;
2)
  # workers worker 5 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  # workers worker 6 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  ;;
3)
  # workers worker 7 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  # workers worker 8 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  ;;
4)
  # workers worker 9 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8000 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  # workers worker 10 of 10 (aggregated, tp 4)
  CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve meta-llama/Llama-3.1-70B-Instruct --port 8001 --tensor-parallel-size 4 --max-model-len 5120 --max-num-batched-tokens 512 --max-num-seqs 1024 --gpu-memory-utilization 0.9 &
  ;;
*)
  echo "NODE=$NODE: this deployment has nodes 0 to 4" >&2
  exit 2
  ;;
esac

if [ "$NODE" = 0 ]; then
  vllm-router --policy round_robin --worker-urls "http://$(host 0):8000" "http://$(host 0):8001" "http://$(host 1):8000" "http://$(host 1):8001" "http://$(host 2):8000" "http://$(host 2):8001" "http://$(host 3):8000" "http://$(host 3):8001" "http://$(host 4):8000" "http://$(host 4):8001" --host 0.0.0.0 --port 8080 &
fi
wait
